//! `cargo xtask`: see the library's documentation (`xtask/src/lib.rs`).

use std::process::ExitCode;

use xtask::{bench, ci, graph_keys, peers, util};

fn usage() -> String {
    let mut s = String::from(
        "usage: cargo xtask <command>\n\
         \n\
         commands:\n  \
         peers           install the real peers (pinned) and print where each landed\n  \
         peers --path    print only the PATH entries holding the project-local peers\n  \
         tour            peers, then `cc-harness tour` (release build): the main job\n  \
         ci              peers, fmt, clippy, tests with the peers on PATH, leak check\n  \
         bench [NAME...] run benchmark families and update BENCHMARKS.md\n  \
         graph-keys [P…] build the code graph's answer keys from real language servers\n\
         \n\
         benchmark families:\n",
    );
    for f in bench::FAMILIES {
        s.push_str(&format!("  {:<15} {}\n", f.name, f.about));
    }
    s
}

/// The main job on a fresh machine: install the peers, then run the tour with them on PATH.
fn tour(root: &std::path::Path) -> util::Result<()> {
    let layout = peers::Layout::new(root);
    peers::install(&layout)?;
    let path = util::prepend_path(&layout.path_entries())?;
    util::run_status(
        util::cargo(root)
            .args(["run", "--release", "-p", "cc-harness-adapter", "--", "tour"])
            .env("PATH", path),
    )
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = util::repo_root();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["peers"] => peers::install(&peers::Layout::new(&root)),
        ["peers", "--path"] => {
            peers::print_path(&peers::Layout::new(&root));
            Ok(())
        }
        ["ci"] => ci::run(&root),
        ["tour"] => tour(&root),
        ["bench", names @ ..] if !names.iter().any(|n| n.starts_with('-')) => {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            bench::run(&root, &names)
        }
        ["graph-keys", names @ ..] => {
            let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            graph_keys::run(&root, &names)
        }
        ["help" | "-h" | "--help"] => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        _ => {
            eprint!("{}", usage());
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("\nerror: {e}");
            ExitCode::FAILURE
        }
    }
}
