//! Searches a file or folder the way the `ast_grep` tool does, and says how much of it the
//! literal pre-filter spared from parsing.
//!
//! ```text
//! cargo run --release -p cc-structural --example search -- python 'warnings.warn($$$A)' /usr/lib/python3.12
//! ```
//!
//! Prints the totals and the time taken, then the first 50 matches as `path:line:column`
//! (every match with `CC_SEARCH_ALL=1`).

use std::path::Path;

use cc_structural::{search, Languages, Pattern, SearchOptions};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let languages = Languages::builtin();
    let [language, pattern, path] = args.as_slice() else {
        eprintln!("usage: search LANGUAGE 'pattern' PATH");
        std::process::exit(2);
    };
    let language = languages.lookup(language).unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2)
    });
    let pattern = match Pattern::new(language, pattern, None) {
        Ok(pattern) => pattern,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    let started = std::time::Instant::now();
    // `CC_SEARCH_ALL=1` lists every match instead of the first 50.
    let options = SearchOptions {
        max_results: if std::env::var_os("CC_SEARCH_ALL").is_some() {
            usize::MAX
        } else {
            50
        },
        ..SearchOptions::default()
    };
    let result = match search(&pattern, Path::new(path), &options) {
        Ok(result) => result,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    println!(
        "{} matches; {} files searched, {} parsed, {} skipped, {} undecided, in {:?}",
        result.total,
        result.files_searched,
        result.files_parsed,
        result.skipped.len(),
        result.exhausted,
        started.elapsed()
    );
    for m in &result.matches {
        println!("{}:{}:{}", m.path.display(), m.start.line, m.start.column);
    }
}
