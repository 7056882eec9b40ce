//! Prints the syntax tree a grammar gives a snippet: kinds, fields, byte ranges, and which
//! nodes are unnamed tokens (`'`), extras, `ERROR` or missing. The tool for seeing why a
//! pattern does not parse as expected, or what a scaffold turns it into.
//!
//! ```text
//! cargo run -p cc-structural --example dump -- kotlin 'class C { $$$B }'
//! ```
//!
//! `\n` and `\t` in the snippet stand for a newline and a tab. A pattern's metavariables are
//! parsed as written here; where the language substitutes `$` (see `Language::meta_char`),
//! write the substitute (`µ`) to see what the pattern parser sees.

use cc_structural::Languages;
use tree_sitter::{Node, Parser};

fn dump(node: Node<'_>, source: &str, depth: usize, field: Option<&str>) {
    let short: String = source[node.byte_range()]
        .chars()
        .take(40)
        .collect::<String>()
        .replace('\n', "⏎");
    let flags = match (node.is_extra(), node.is_missing(), node.is_error()) {
        (_, true, _) => " (MISSING)",
        (_, _, true) => " (ERROR)",
        (true, _, _) => " (extra)",
        _ => "",
    };
    println!(
        "{}{}{}{}{flags} [{}..{}] {short:?}",
        "  ".repeat(depth),
        field.map(|f| format!("{f}: ")).unwrap_or_default(),
        if node.is_named() { "" } else { "'" },
        node.kind(),
        node.start_byte(),
        node.end_byte(),
    );
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            dump(cursor.node(), source, depth + 1, cursor.field_name());
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let languages = Languages::builtin();
    let [language, snippet] = args.as_slice() else {
        eprintln!(
            "usage: dump LANGUAGE 'code'  (languages: {})",
            languages.names().join(", ")
        );
        std::process::exit(2);
    };
    let language = languages.lookup(language).unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2)
    });
    let mut parser = Parser::new();
    parser
        .set_language(&language.grammar())
        .expect("every built-in grammar loads in this tree-sitter");
    let source = snippet.replace("\\n", "\n").replace("\\t", "\t");
    let tree = parser
        .parse(&source, None)
        .expect("a parser with a language answers");
    dump(tree.root_node(), &source, 0, None);
}
