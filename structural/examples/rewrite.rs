//! Stages a rewrite of a snippet and prints the new code, the warnings and what was skipped.
//!
//! ```text
//! cargo run -p cc-structural --example rewrite -- python 'def $F(self): $$$B' 'def $F(self):\n    """cc"""\n    $$$B' 'def f(self):  # c\n    pass\n'
//! ```
//!
//! `\n` and `\t` stand for a newline and a tab; the file is named after the language's first
//! extension.

use cc_structural::{stage_rewrite, FileOp, Languages, Pattern};

fn unescape(text: &str) -> String {
    text.replace("\\n", "\n").replace("\\t", "\t")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [language, pattern, template, code] = args.as_slice() else {
        eprintln!("usage: rewrite LANGUAGE 'pattern' 'template' 'code'");
        std::process::exit(2);
    };
    let language = Languages::builtin()
        .lookup(language)
        .unwrap_or_else(|error| {
            eprintln!("{error}");
            std::process::exit(2)
        });
    let extension = language.extensions().first().copied().unwrap_or("txt");
    let pattern = Pattern::new(language.clone(), &unescape(pattern), None).unwrap_or_else(|e| {
        println!("{e}");
        std::process::exit(1)
    });
    let dir = std::env::temp_dir().join(format!("cc-rewrite-example-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("snippet.{extension}"));
    if let Err(error) = std::fs::write(&path, unescape(code)) {
        eprintln!("{error}");
        std::process::exit(2);
    }
    let staged = stage_rewrite(&pattern, &unescape(template), &path, &|_| "snippet".into());
    let _ = std::fs::remove_dir_all(&dir);
    let staged = match staged {
        Ok(staged) => staged,
        Err(error) => {
            println!("{error}");
            std::process::exit(1)
        }
    };
    println!(
        "context {} replacements {}",
        pattern.context(),
        staged.replacements
    );
    for op in staged.transaction.ops() {
        if let FileOp::Replace { new, .. } = op {
            println!("----\n{}----", String::from_utf8_lossy(new));
        }
    }
    for w in &staged.warnings {
        println!("warning {} line {}: {}", w.kind.name(), w.line, w.text);
    }
    for s in &staged.skipped_matches {
        println!("skipped line {}: {} ({})", s.line, s.reason, s.part);
    }
    for u in &staged.unparsable {
        println!(
            "not staged: line {} of the rewritten file: {} `{}` (from the match on line {})",
            u.rewritten_line, u.error, u.text, u.line
        );
    }
    for s in &staged.skipped {
        println!("skipped file: {}", s.reason);
    }
}
