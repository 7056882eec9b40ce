//! Searches a folder: `cargo run --release --example search -- LANG 'pattern' PATH`.
use cc_structural::{search, Languages, Pattern, SearchOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let lang = Languages::builtin().by_name(&args[1]).expect("language");
    let pattern = Pattern::new(lang, &args[2], None).expect("pattern");
    let started = std::time::Instant::now();
    let options = SearchOptions {
        max_results: if args.len() > 4 { usize::MAX } else { 50 },
        ..SearchOptions::default()
    };
    let result = search(&pattern, std::path::Path::new(&args[3]), &options).expect("search");
    println!(
        "total {} files {} parsed {} exhausted {} in {:?}",
        result.total,
        result.files_searched,
        result.files_parsed,
        result.exhausted,
        started.elapsed()
    );
    if args.len() > 4 {
        for m in &result.matches {
            println!("{}:{}:{}", m.path.display(), m.start.line, m.start.column);
        }
    }
}
