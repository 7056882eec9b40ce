//! Tries a pattern on a snippet: `cargo run --example probe -- LANG 'pattern' 'code'`.
use cc_structural::{Languages, Pattern, SourceParser};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let set = Languages::builtin();
    let lang = set.by_name(&args[1]).expect("language");
    let pattern = args[2].replace("\\n", "\n").replace("\\t", "\t");
    let code = args[3].replace("\\n", "\n").replace("\\t", "\t");
    match Pattern::new(lang, &pattern, None) {
        Err(e) => println!("ERR {e}"),
        Ok(p) => {
            println!(
                "context {} literals {:?}",
                p.context(),
                p.literals()
                    .iter()
                    .map(|l| String::from_utf8_lossy(l).into_owned())
                    .collect::<Vec<_>>()
            );
            let found = p
                .find_all(&mut SourceParser::new(), code.as_bytes())
                .expect("parse");
            for m in &found.matches {
                let caps: Vec<String> = m
                    .captures
                    .iter()
                    .map(|(n, c)| match c {
                        cc_structural::Captured::Node(r) | cc_structural::Captured::Text(r) => {
                            format!("{n}={:?}", &code[r.clone()])
                        }
                        cc_structural::Captured::Nodes { items, .. } => format!(
                            "{n}={:?}",
                            items.iter().map(|r| &code[r.clone()]).collect::<Vec<_>>()
                        ),
                    })
                    .collect();
                println!(
                    "  {}:{} {:?} {}",
                    m.start.line,
                    m.start.column,
                    &code[m.range.clone()],
                    caps.join(" ")
                );
            }
            println!("  ({} matches)", found.matches.len());
        }
    }
}
