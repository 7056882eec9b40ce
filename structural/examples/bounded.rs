//! Searches one file with `max_file_bytes` at its ceiling (64 MiB), optionally cancelling the
//! search after some milliseconds, and prints the time taken, the time from the cancel to the
//! return, what was skipped and the peak RSS (`VmHWM`): how the README's numbers of one huge
//! file were measured.
//!
//! ```text
//! cargo run --release -p cc-structural --example bounded -- javascript 'g($$$A)' min.js [CANCEL_MS]
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cc_structural::{search, Languages, Pattern, SearchOptions, MAX_FILE_BYTES_CEILING};

/// Peak resident memory of this process, in MiB (Linux).
fn peak_rss_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
            line.split_whitespace().nth(1)?.parse::<u64>().ok()
        })
        .map_or(0, |kib| kib / 1024)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (language, pattern, path, cancel_ms) = match args.as_slice() {
        [l, p, f] => (l, p, f, None),
        [l, p, f, ms] => (l, p, f, ms.parse::<u64>().ok()),
        _ => {
            eprintln!("usage: bounded LANGUAGE 'pattern' FILE [CANCEL_MS]");
            std::process::exit(2);
        }
    };
    let language = Languages::builtin()
        .lookup(language)
        .unwrap_or_else(|error| {
            eprintln!("{error}");
            std::process::exit(2)
        });
    let pattern = Pattern::new(language, pattern, None).unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(1)
    });
    let cancel = Arc::new(AtomicBool::new(false));
    let options = SearchOptions {
        max_file_bytes: MAX_FILE_BYTES_CEILING,
        cancel: Some(cancel.clone()),
        ..SearchOptions::default()
    };
    let canceller = cancel_ms.map(|ms| {
        let flag = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(ms));
            flag.store(true, Ordering::SeqCst);
            Instant::now()
        })
    });
    let started = Instant::now();
    let result = match search(&pattern, std::path::Path::new(path), &options) {
        Ok(result) => result,
        Err(error) => {
            eprintln!("{error}");
            std::process::exit(1);
        }
    };
    let returned = Instant::now();
    let after_cancel = canceller
        .and_then(|c| c.join().ok())
        .map(|at| returned.saturating_duration_since(at));
    println!(
        "{} matches in {:?}; cancelled {} ({:?} after the cancel); peak RSS {} MiB",
        result.total,
        started.elapsed(),
        result.cancelled,
        after_cancel,
        peak_rss_mib()
    );
    for skipped in &result.skipped {
        println!("skipped {}: {}", skipped.path.display(), skipped.reason);
    }
}
