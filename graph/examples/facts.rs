//! Prints what extraction finds in one file: `cargo run -p cc-graph --example facts -- FILE`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: facts FILE")?;
    let language = cc_languages::for_path(path.as_ref()).ok_or("unknown language")?;
    let source = std::fs::read(&path)?;
    let facts = cc_graph::extract::extract(&mut cc_languages::Parser::new(), language, &source)?;
    println!("{}", serde_json::to_string_pretty(&facts)?);
    Ok(())
}
