//! Times parsing alone and parsing with extraction over every file of a folder (one thread):
//! `cargo run --release -p cc-graph --example extract_time -- DIR`.

use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args().nth(1).ok_or("usage: extract_time DIR")?;
    let mut files = Vec::new();
    for entry in ignore::WalkBuilder::new(&dir).build().flatten() {
        let path = entry.into_path();
        if let Some(language) = cc_languages::for_path(&path) {
            if cc_graph::extract::query_source(language).is_some() {
                files.push((language, std::fs::read(&path)?));
            }
        }
    }
    let mut parser = cc_languages::Parser::new();
    let mut parse = Duration::ZERO;
    let mut extract = Duration::ZERO;
    for (language, source) in &files {
        let t = Instant::now();
        parser.parse(language, source)?;
        parse += t.elapsed();
        let t = Instant::now();
        cc_graph::extract::extract(&mut parser, language, source)?;
        extract += t.elapsed();
    }
    println!(
        "{} files: parse {parse:.2?}, parse + extract {extract:.2?}",
        files.len()
    );
    Ok(())
}
