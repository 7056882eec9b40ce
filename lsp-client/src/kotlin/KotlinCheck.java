// Kept warm by cc-lsp-client (src/kotlin/mod.rs): JetBrains' Kotlin compiler in one JVM, so a
// check after a write pays for the compile, not for starting the compiler. Run by the Java
// source launcher with kotlin-compiler.jar on the class path; the compiler is reached by
// reflection, so this file compiles without it.
//
// Protocol (UTF-8 lines): a request is the compiler's arguments, one per line, ended by an
// empty line. The answer is the compiler's messages (full paths), then a line "\u0001done
// EXIT_CODE", or "\u0001failed REASON" when the compiler threw.

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

public class KotlinCheck {
    public static void main(String[] ignored) throws Exception {
        PrintStream answers =
                new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        // Anything the compiler prints by itself goes to stderr, never into an answer.
        System.setOut(System.err);
        Class<?> compiler = Class.forName("org.jetbrains.kotlin.cli.jvm.K2JVMCompiler");
        Method exec = compiler.getMethod("execFullPathsInMessages", PrintStream.class, String[].class);
        BufferedReader requests =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        List<String> arguments = new ArrayList<>();
        String line;
        while ((line = requests.readLine()) != null) {
            if (!line.isEmpty()) {
                arguments.add(line);
                continue;
            }
            ByteArrayOutputStream messages = new ByteArrayOutputStream();
            String end;
            try (PrintStream into = new PrintStream(messages, true, StandardCharsets.UTF_8)) {
                Object code = exec.invoke(
                        compiler.getDeclaredConstructor().newInstance(),
                        into,
                        (Object) arguments.toArray(new String[0]));
                end = "\u0001done " + code;
            } catch (InvocationTargetException thrown) {
                end = "\u0001failed " + oneLine(thrown.getCause());
            } catch (Throwable thrown) {
                end = "\u0001failed " + oneLine(thrown);
            }
            answers.print(messages.toString(StandardCharsets.UTF_8));
            answers.println(end);
            answers.flush();
            arguments.clear();
        }
    }

    private static String oneLine(Throwable thrown) {
        String text = String.valueOf(thrown);
        return text.replace('\n', ' ').replace('\r', ' ');
    }
}
