//! Queries a workspace's graph the way an agent would, printing text:
//!
//! ```text
//! cargo run --release -p cc-graph --example query -- ROOT stats
//! cargo run --release -p cc-graph --example query -- ROOT symbols QUERY
//! cargo run --release -p cc-graph --example query -- ROOT outline PATH
//! cargo run --release -p cc-graph --example query -- ROOT callers NAME [--all]
//! cargo run --release -p cc-graph --example query -- ROOT callees NAME
//! cargo run --release -p cc-graph --example query -- ROOT impact NAME [DEPTH]
//! cargo run --release -p cc-graph --example query -- ROOT rank [FOCUS_PATH...]
//! cargo run --release -p cc-graph --example query -- ROOT map [FOCUS_PATH...]
//! ```
//!
//! NAME is a name or qualified name (`Session.request`); several matches are all answered.

use std::time::Instant;

use cc_graph::{Graph, Symbol, DEFAULT_MIN_CONFIDENCE};

fn show(s: &Symbol) -> String {
    format!(
        "{} {} ({}:{})",
        s.kind.as_str(),
        s.qualified_name,
        s.path,
        s.line
    )
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (root, command, rest) = match args.as_slice() {
        [root, command, rest @ ..] => (root, command.as_str(), rest),
        _ => return Err("usage: query ROOT COMMAND [ARGS]".into()),
    };
    let started = Instant::now();
    let (graph, stats) = Graph::open(root.as_ref())?;
    eprintln!(
        "opened in {:.2?}: {} files seen, {} extracted, {} re-resolved",
        started.elapsed(),
        stats.files_seen,
        stats.extracted,
        stats.re_resolved
    );
    let floor = if rest.iter().any(|a| a == "--all") {
        0.0
    } else {
        DEFAULT_MIN_CONFIDENCE
    };
    match command {
        "stats" => println!("{}", serde_json::to_string_pretty(&graph.stats()?)?),
        "symbols" => symbols(&graph, rest)?,
        "outline" => outline(&graph, rest)?,
        "callers" => callers(&graph, rest, floor)?,
        "callees" => callees(&graph, rest, floor)?,
        "impact" => impact(&graph, rest, floor)?,
        "rank" => rank(&graph, rest, floor)?,
        "map" => map(&graph, rest)?,
        other => return Err(format!("unknown command {other}").into()),
    }
    Ok(())
}

/// `symbols QUERY`: the best matches, scored, with their signatures.
fn symbols(graph: &Graph, rest: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let q = rest.first().ok_or("symbols QUERY")?;
    let answer = graph.symbols(q, 20)?;
    for r in &answer.value {
        println!(
            "{:>7.1} {}  {}",
            r.score,
            show(&r.symbol),
            r.symbol.signature
        );
    }
    println!("[{}]", answer.freshness.describe());
    Ok(())
}

/// `outline PATH`: the file's definitions, indented by nesting.
fn outline(graph: &Graph, rest: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let path = rest.first().ok_or("outline PATH")?;
    let answer = graph.outline(path)?;
    for s in &answer.value {
        let depth = s.qualified_name.matches('.').count();
        println!("{}{}  {}", "  ".repeat(depth), show(s), s.signature);
    }
    println!("[{}]", answer.freshness.describe());
    Ok(())
}

/// `callers NAME`: each match's call sites at or above `floor`.
fn callers(graph: &Graph, rest: &[String], floor: f64) -> Result<(), Box<dyn std::error::Error>> {
    for target in graph.find(rest.first().ok_or("callers NAME")?, None)? {
        // Signed as the graph tool signs: the first fifty listed.
        let started = Instant::now();
        let answer = graph.callers_signing(target.id, floor, 50)?;
        eprintln!(
            "callers answered in {:.2?}: {} sites",
            started.elapsed(),
            answer.value.sites.len()
        );
        println!("callers of {}: {}", show(&target), answer.value.sites.len());
        for s in &answer.value.sites {
            println!(
                "  {}:{}:{} in {} [{} {:.1}]{}",
                s.path,
                s.line,
                s.column,
                match (&s.caller, s.caller_id) {
                    (Some(c), _) => c.qualified_name.clone(),
                    (None, Some(id)) => format!("definition {id:?} (not read)"),
                    (None, None) => "<top level>".into(),
                },
                s.rung.as_str(),
                s.confidence,
                s.receiver
                    .as_ref()
                    .map_or(String::new(), |r| format!(" receiver `{r}`"))
            );
        }
        if answer.value.below_floor > 0 {
            println!(
                "  ({} more below the confidence floor: name-only guesses)",
                answer.value.below_floor
            );
        }
        println!("[{}]", answer.freshness.describe());
    }
    Ok(())
}

/// `callees NAME`: the calls each match makes, resolved or why not.
fn callees(graph: &Graph, rest: &[String], floor: f64) -> Result<(), Box<dyn std::error::Error>> {
    for target in graph.find(rest.first().ok_or("callees NAME")?, None)? {
        let answer = graph.callees(target.id, floor)?;
        println!("calls made by {}:", show(&target));
        for c in &answer.value {
            let what = match (&c.target, &c.unresolved) {
                (Some(t), _) => {
                    format!("{} [{}]", show(t), c.rung.map_or("", |r| r.as_str()))
                }
                (None, Some(why)) => format!("unresolved: {why}"),
                _ => String::new(),
            };
            println!(
                "  {}:{} {}{} -> {what}",
                c.line,
                c.column,
                c.receiver
                    .as_ref()
                    .map_or(String::new(), |r| format!("{r}.")),
                c.name
            );
        }
        println!("[{}]", answer.freshness.describe());
    }
    Ok(())
}

/// `impact NAME [DEPTH]`: each match's dependents to DEPTH (default 3) and top-level uses.
fn impact(graph: &Graph, rest: &[String], floor: f64) -> Result<(), Box<dyn std::error::Error>> {
    let depth = rest.get(1).and_then(|d| d.parse().ok()).unwrap_or(3);
    for target in graph.find(rest.first().ok_or("impact NAME")?, None)? {
        // Signed as the graph tool signs: the first hundred listed.
        let started = Instant::now();
        let answer = graph.impact_signing(target.id, depth, floor, 100)?;
        eprintln!(
            "impact answered in {:.2?}: {} dependents",
            started.elapsed(),
            answer.value.dependents.len()
        );
        println!(
            "impact of {} (depth {depth}): {} dependents{}",
            show(&target),
            answer.value.dependents.len(),
            if answer.value.truncated {
                ", more beyond"
            } else {
                ""
            }
        );
        for d in &answer.value.dependents {
            println!("  {} {} [{:.1}]", d.depth, show(&d.symbol), d.confidence);
        }
        for (path, line) in &answer.value.top_level_uses {
            println!("  top-level use at {path}:{line}");
        }
        println!("[{}]", answer.freshness.describe());
    }
    Ok(())
}

/// `rank [FOCUS_PATH...]`: the 25 best-ranked definitions, around the focus paths if any.
fn rank(graph: &Graph, rest: &[String], floor: f64) -> Result<(), Box<dyn std::error::Error>> {
    let focus: Vec<&str> = rest.iter().map(String::as_str).collect();
    let answer = graph.rank(&focus, 25, floor)?;
    for r in &answer.value {
        println!("{:.5} {}", r.score, show(&r.symbol));
    }
    println!("[{}]", answer.freshness.describe());
    Ok(())
}

/// `map [FOCUS_PATH...]`: the repository map at the default budget, timed twice (the
/// second call finds the files it signs read), then its files and definitions with their
/// ranks.
fn map(graph: &Graph, rest: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let mut last = None;
    for _ in 0..2 {
        let started = Instant::now();
        let map = graph.repo_map(rest.to_vec(), 1024)?;
        eprintln!(
            "map answered in {:.2?}: {} files, {} tokens",
            started.elapsed(),
            map.files.len(),
            map.tokens
        );
        last = Some(map);
    }
    for file in last.map(|map| map.files).unwrap_or_default() {
        println!("{}", file.path);
        for ranked in &file.definitions {
            println!("  {} {:.6}", ranked.symbol.qualified_name, ranked.score);
        }
    }
    Ok(())
}
