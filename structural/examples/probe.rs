//! Tries a pattern on a snippet: the context of the ladder that accepted the pattern, the
//! literals of the pre-filter, and each match with its captures (or why the pattern does not
//! parse).
//!
//! ```text
//! cargo run -p cc-structural --example probe -- python 'print($$$A)' 'print(1, 2)'
//! cargo run -p cc-structural --example probe -- java 'int $X = $V;' 'class A { int x = 1; }' class_member
//! ```
//!
//! `\n` and `\t` stand for a newline and a tab; the optional fourth argument forces a context
//! (`statement`, `expression`, `class_member`, `top_level`).

use cc_structural::{Captured, ContextKind, Languages, Pattern, SourceParser};

fn unescape(text: &str) -> String {
    text.replace("\\n", "\n").replace("\\t", "\t")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let languages = Languages::builtin();
    let (language, pattern, code, context) = match args.as_slice() {
        [l, p, c] => (l, p, c, None),
        [l, p, c, context] => (l, p, c, Some(context)),
        _ => {
            eprintln!("usage: probe LANGUAGE 'pattern' 'code' [CONTEXT]");
            std::process::exit(2);
        }
    };
    let language = languages.lookup(language).unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2)
    });
    let context = match context.map(|c| c.parse::<ContextKind>()).transpose() {
        Ok(context) => context,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(2);
        }
    };
    let pattern = match Pattern::new(language, &unescape(pattern), context) {
        Ok(pattern) => pattern,
        Err(error) => {
            println!("{error}");
            std::process::exit(1);
        }
    };
    let literals: Vec<_> = pattern
        .literals()
        .iter()
        .map(|l| String::from_utf8_lossy(l).into_owned())
        .collect();
    println!("context {} literals {literals:?}", pattern.context());
    let code = unescape(code);
    let found = pattern
        .find_all(&mut SourceParser::new(), code.as_bytes())
        .expect("a built-in grammar parses any text");
    for m in &found.matches {
        let captures: Vec<String> = m
            .captures
            .iter()
            .map(|(name, captured)| match captured {
                Captured::Node(r) | Captured::Text(r) => format!("{name}={:?}", &code[r.clone()]),
                Captured::Nodes { items, .. } => format!(
                    "{name}={:?}",
                    items.iter().map(|r| &code[r.clone()]).collect::<Vec<_>>()
                ),
            })
            .collect();
        println!(
            "  {}:{} {:?} {}",
            m.start.line,
            m.start.column,
            &code[m.range.clone()],
            captures.join(" ")
        );
    }
    println!("  ({} matches)", found.matches.len());
}
