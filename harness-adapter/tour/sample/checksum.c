/* Part of the cc-harness tour sample: a C file for structural search. */
#include <stdlib.h>
#include <string.h>

unsigned checksum(const char *text) {
    unsigned sum = 0;
    for (size_t i = 0; i < strlen(text); i++) {
        sum = sum * 31 + (unsigned char)text[i];
    }
    return sum;
}

char *copy(const char *text) {
    char *out = malloc(strlen(text) + 1);
    if (out != NULL) {
        strcpy(out, text);
    }
    return out;
}
