//! Prints the tree-sitter parse of a snippet: `cargo run --example dump -- LANG 'code'`.
use tree_sitter::{Language, Node, Parser};

fn lang(name: &str) -> Language {
    match name {
        "python" => tree_sitter_python::LANGUAGE.into(),
        "rust" => tree_sitter_rust::LANGUAGE.into(),
        "javascript" => tree_sitter_javascript::LANGUAGE.into(),
        "typescript" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "c" => tree_sitter_c::LANGUAGE.into(),
        "cpp" => tree_sitter_cpp::LANGUAGE.into(),
        "java" => tree_sitter_java::LANGUAGE.into(),
        "dart" => tree_sitter_dart::LANGUAGE.into(),
        "bash" => tree_sitter_bash::LANGUAGE.into(),
        "json" => tree_sitter_json::LANGUAGE.into(),
        "ruby" => tree_sitter_ruby::LANGUAGE.into(),
        "c_sharp" => tree_sitter_c_sharp::LANGUAGE.into(),
        "kotlin" => tree_sitter_kotlin_ng::LANGUAGE.into(),
        other => panic!("unknown {other}"),
    }
}

fn dump(node: Node, src: &str, depth: usize, field: Option<&str>) {
    let text = &src[node.byte_range()];
    let short: String = text.chars().take(40).collect::<String>().replace('\n', "⏎");
    println!(
        "{}{}{}{}{}{} [{}..{}] {:?}",
        "  ".repeat(depth),
        field.map(|f| format!("{f}: ")).unwrap_or_default(),
        if node.is_named() { "" } else { "'" },
        node.kind(),
        if node.is_extra() { " (extra)" } else { "" },
        if node.is_missing() {
            " (MISSING)"
        } else if node.is_error() {
            " (ERROR)"
        } else {
            ""
        },
        node.start_byte(),
        node.end_byte(),
        short
    );
    let mut cursor = node.walk();
    if cursor.goto_first_child() {
        loop {
            dump(cursor.node(), src, depth + 1, cursor.field_name());
            if !cursor.goto_next_sibling() {
                break;
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut parser = Parser::new();
    parser.set_language(&lang(&args[1])).expect("version");
    let src = args[2].replace("\\n", "\n");
    let tree = parser.parse(&src, None).expect("parse");
    dump(tree.root_node(), &src, 0, None);
}
