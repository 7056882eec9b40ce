//! `framing`: decode throughput of `cc-framing` vs rust-analyzer's `lsp-server`
//! (`Message::read`) on the same byte stream, both including the JSON parse into a generic
//! message, for small (~200-byte) and large (64 KiB) bodies.
//!
//! Runs the criterion bench `cargo bench -p cc-framing --bench decode`, whose groups are
//! `decode/small` and `decode/large`, each with the functions `cc-framing` and `lsp-server`
//! and `Throughput::Elements` (messages per iteration).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::SystemTime;

use super::criterion::{read_results, Estimate};
use super::Context;
use crate::util::{self, Result};

const BENCH_CMD: &str = "cargo bench -p cc-framing --bench decode";

/// (case, label, goal: minimum ratio ours / lsp-server).
const CASES: &[(&str, &str, f64)] = &[
    ("small", "small (~200 B)", 1.5),
    ("large", "large (64 KiB)", 1.0),
];

pub fn run(ctx: &Context) -> Result<String> {
    let started = SystemTime::now();
    let mut cmd = ctx.cargo();
    cmd.args(["bench", "-p", "cc-framing", "--bench", "decode"]);
    util::run_status(&mut cmd).map_err(|e| {
        format!(
            "{e}. The framing family needs the criterion bench framing/benches/decode.rs \
             (groups decode/small and decode/large, functions cc-framing and lsp-server)."
        )
    })?;
    let dir = ctx.target_dir.join("criterion");
    let results = read_results(&dir, started)?;
    if results.is_empty() {
        return Err(format!(
            "`{BENCH_CMD}` ran but wrote no criterion result under {}: is \
             framing/benches/decode.rs still a placeholder? It must define the groups \
             decode/small and decode/large with functions cc-framing and lsp-server.",
            dir.display()
        ));
    }
    let (md, summary) = render(&results)?;
    eprintln!("framing: {summary}");
    Ok(md)
}

/// The section for `results` (keyed by criterion full id), and a one-line summary.
fn render(results: &BTreeMap<String, Estimate>) -> Result<(String, String)> {
    let get = |id: &str| -> Result<(&Estimate, f64)> {
        let est = results.get(id).ok_or_else(|| {
            let found: Vec<&str> = results.keys().map(String::as_str).collect();
            format!(
                "`{BENCH_CMD}` produced no result for `{id}`; it produced: [{}]",
                found.join(", ")
            )
        })?;
        let rate = est.elements_per_sec().ok_or_else(|| {
            format!("`{id}` declares no Throughput::Elements, so messages/s is unknown")
        })?;
        Ok((est, rate))
    };

    let mut md = String::from(
        "## framing — Content-Length decode throughput\n\n\
         `cc-framing` vs rust-analyzer's `lsp-server` (`Message::read`) decoding the same byte \
         stream, both including the JSON parse into a generic message \
         (`cargo bench -p cc-framing --bench decode`, criterion mean).\n\n\
         | bodies | cc-framing | lsp-server | ours / lsp-server | goal | result |\n\
         |---|---|---|---|---|---|\n",
    );
    let mut summary = Vec::new();
    for (case, label, goal) in CASES {
        let (ours, ours_rate) = get(&format!("decode/{case}/cc-framing"))?;
        let (theirs, theirs_rate) = get(&format!("decode/{case}/lsp-server"))?;
        let ratio = ours_rate / theirs_rate;
        let verdict = if ratio >= *goal { "PASS" } else { "MISS" };
        let _ = writeln!(
            md,
            "| {label} | {} | {} | **{ratio:.2}×** | ≥ {goal:.1}× | {verdict} |",
            rate_cell(ours, ours_rate),
            rate_cell(theirs, theirs_rate),
        );
        summary.push(format!("{case}: {ratio:.2}× (goal ≥ {goal:.1}×) {verdict}"));
    }
    Ok((md, summary.join("; ")))
}

/// "1.23 M msg/s (813 ns/msg)".
fn rate_cell(est: &Estimate, rate: f64) -> String {
    let per_msg_ns = est
        .elements
        .map_or(est.mean_ns, |n| est.mean_ns / n.max(1) as f64);
    format!("{} msg/s ({})", si(rate), duration(per_msg_ns))
}

fn si(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2} M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1} k", x / 1e3)
    } else {
        format!("{x:.0}")
    }
}

fn duration(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{:.2} ms/msg", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2} µs/msg", ns / 1e3)
    } else {
        format!("{ns:.0} ns/msg")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        let est = Estimate {
            mean_ns: 8130.0,
            elements: Some(10),
            bytes: None,
        };
        let rate = est.elements_per_sec().unwrap();
        assert_eq!(rate_cell(&est, rate), "1.23 M msg/s (813 ns/msg)");
        assert_eq!(si(45_300.0), "45.3 k");
        assert_eq!(duration(22_100.0), "22.10 µs/msg");
    }

    #[test]
    fn table_with_ratios_and_verdicts() {
        let est = |mean_ns: f64| Estimate {
            mean_ns,
            elements: Some(100),
            bytes: None,
        };
        let mut r = BTreeMap::new();
        r.insert("decode/small/cc-framing".to_string(), est(10_000.0));
        r.insert("decode/small/lsp-server".to_string(), est(20_000.0));
        r.insert("decode/large/cc-framing".to_string(), est(1_100_000.0));
        r.insert("decode/large/lsp-server".to_string(), est(1_000_000.0));
        let (md, summary) = render(&r).unwrap();
        assert!(md.contains("| small (~200 B) | 10.00 M msg/s (100 ns/msg) | 5.00 M msg/s (200 ns/msg) | **2.00×** | ≥ 1.5× | PASS |"), "{md}");
        assert!(md.contains("| **0.91×** | ≥ 1.0× | MISS |"), "{md}");
        assert_eq!(
            summary,
            "small: 2.00× (goal ≥ 1.5×) PASS; large: 0.91× (goal ≥ 1.0×) MISS"
        );

        r.remove("decode/large/lsp-server");
        let err = render(&r).unwrap_err();
        assert!(
            err.contains("no result for `decode/large/lsp-server`"),
            "{err}"
        );
    }
}
