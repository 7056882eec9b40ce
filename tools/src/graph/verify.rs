//! `verify: true`: each edge of a `callers` or `impact` answer confirmed or refuted by the
//! language server's references (the run's `lsp` tool, called through the registry like any
//! other call, after the graph is released), or marked unverifiable with why.

use std::collections::{HashMap, HashSet};

use serde_json::json;

use crate::report::graph::{CallersReport, ImpactReport, Verdict, Verification, Verified};
use crate::report::lsp::{LspReport, NavAnswer};

use crate::tool::CallContext;

/// At most this many `references` requests per answer; later edges are unverifiable.
const MAX_REQUESTS: usize = 16;

/// What the server said the uses of one definition are.
struct Refs {
    /// `(path, line)` of every use.
    places: HashSet<(String, u64)>,
    /// Whether the list is all of them (not cut, the server's project loaded).
    complete: bool,
    /// Uses of the same name the server left out, with why (in a file outside its project,
    /// resolved elsewhere by it): neither confirmed nor refuted.
    outside: HashMap<(String, u64), String>,
    /// How many such uses there are in all (the list is cut at 50).
    outside_total: usize,
    /// Why there is no list.
    error: Option<String>,
    /// Extensions of files the server does not compile, whose uses it finds by name if at
    /// all (JDT LS and Kotlin): a use there neither confirms nor refutes.
    by_name: Vec<String>,
}

impl Refs {
    fn hits(&self, path: &str, from: u64, to: u64) -> bool {
        self.places
            .iter()
            .any(|(p, l)| p == path && (from..=to).contains(l))
    }

    /// Whether the server's answer about `path` is by name only ([`Refs::by_name`]).
    fn found_by_name(&self, path: &str) -> bool {
        std::path::Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| self.by_name.iter().any(|b| b == ext))
    }

    /// Why the server could not say, for a use at `path:line` it did not list.
    fn left_out(&self, path: &str, line: u64) -> Option<String> {
        if let Some(why) = self.outside.get(&(path.to_owned(), line)) {
            return Some(format!("the server could not place it: {why}"));
        }
        (self.outside_total > self.outside.len()).then(|| {
            format!(
                "the server left out {} uses of the name it could not place; this may be one",
                self.outside_total
            )
        })
    }

    fn failed(error: String) -> Refs {
        Refs {
            places: HashSet::new(),
            complete: false,
            outside: HashMap::new(),
            outside_total: 0,
            error: Some(error),
            by_name: Vec::new(),
        }
    }
}

async fn references(ctx: &CallContext, path: &str, line: u64, name: &str) -> Refs {
    let args = json!({"action": "references", "file": path, "line": line, "symbol": name});
    let output = match ctx.call_tool("lsp", args).await {
        Ok(output) => output,
        Err(error) => {
            return Refs::failed(format!("no language server answered: {}", error.message()))
        }
    };
    let report = match serde_json::from_value::<LspReport>(output.value) {
        Ok(LspReport::Unsupported(unsupported)) => return Refs::failed(unsupported.message),
        Ok(LspReport::Navigation(report)) => report,
        Ok(_) | Err(_) => {
            return Refs::failed("the references answer could not be read".to_owned());
        }
    };
    let NavAnswer::Locations {
        locations,
        truncated,
        outside_project,
        outside_project_total,
        by_name,
        not_compiled,
        ..
    } = report.answer
    else {
        return Refs::failed("the references answer holds no locations".to_owned());
    };
    let outside: HashMap<(String, u64), String> = outside_project
        .into_iter()
        .flatten()
        .map(|place| {
            let why = place
                .why
                .unwrap_or_else(|| "outside its project".to_owned());
            ((place.path, place.line), why)
        })
        .collect();
    Refs {
        places: locations.into_iter().map(|l| (l.path, l.line)).collect(),
        complete: !truncated && report.incomplete.is_none(),
        outside_total: outside_project_total.unwrap_or(outside.len()),
        outside,
        error: None,
        by_name: by_name
            .into_iter()
            .flatten()
            .chain(not_compiled.into_iter().flatten())
            .collect(),
    }
}

/// One verdict.
fn verdict(refs: Option<&Refs>, path: &str, from: u64, to: u64) -> (Verdict, String) {
    match refs {
        None => (
            Verdict::Unverifiable,
            format!("not checked: at most {MAX_REQUESTS} reference requests per answer"),
        ),
        Some(r) if r.error.is_some() => {
            (Verdict::Unverifiable, r.error.clone().unwrap_or_default())
        }
        Some(r) if r.found_by_name(path) => (
            Verdict::Unverifiable,
            "the server finds uses in this kind of file by name only (it does not compile it)"
                .to_owned(),
        ),
        Some(r) if r.hits(path, from, to) => (Verdict::Confirmed, String::new()),
        Some(r) if r.left_out(path, from).is_some() => (
            Verdict::Unverifiable,
            r.left_out(path, from).unwrap_or_default(),
        ),
        Some(r) if r.complete => (
            Verdict::Refuted,
            "the server's references do not include it".to_owned(),
        ),
        Some(_) => (
            Verdict::Unverifiable,
            "not in the server's references, which were cut or incomplete".to_owned(),
        ),
    }
}

#[derive(Default)]
struct Tally {
    confirmed: usize,
    refuted: usize,
    unverifiable: usize,
}

impl Tally {
    fn add(&mut self, item: &mut Verified, verdict: (Verdict, String)) {
        let (what, why) = verdict;
        match what {
            Verdict::Confirmed => self.confirmed += 1,
            Verdict::Refuted => self.refuted += 1,
            Verdict::Unverifiable => self.unverifiable += 1,
        }
        item.verified = Some(what);
        item.verify_note = (!why.is_empty()).then_some(why);
    }

    fn finish(self, requests: usize) -> Verification {
        Verification {
            confirmed: self.confirmed,
            refuted: self.refuted,
            unverifiable: self.unverifiable,
            requests,
            by: "the language server's references (lsp references)".into(),
        }
    }
}

/// Marks every caller of a `callers` answer.
pub(crate) async fn callers(ctx: &CallContext, report: &mut CallersReport) -> Verification {
    let target = &report.target.symbol;
    let refs = references(ctx, &target.path, target.line.into(), &target.name).await;
    let mut tally = Tally::default();
    for site in &mut report.callers {
        let line = u64::from(site.line);
        let verdict = verdict(Some(&refs), &site.path, line, line);
        tally.add(&mut site.verified, verdict);
    }
    tally.finish(1)
}

/// Marks every dependent of an `impact` answer: one at depth d is confirmed when the
/// references of a definition at depth d-1 (the target for d = 1) fall inside its span.
pub(crate) async fn impact(ctx: &CallContext, report: &mut ImpactReport) -> Verification {
    let target = &report.target;
    let mut requests = 1;
    // The definitions of the previous depth, with their references when fetched.
    let mut previous: Vec<Option<Refs>> = vec![Some(
        references(ctx, &target.path, target.line.into(), &target.name).await,
    )];
    let mut tally = Tally::default();
    let deepest = report.levels.last().map_or(0, |level| level.depth);
    for level in &mut report.levels {
        let mut current: Vec<Option<Refs>> = Vec::new();
        for item in &mut level.dependents {
            let p = item.symbol.path.clone();
            let (start, end) = (u64::from(item.start_line), u64::from(item.end_line));
            tally.add(
                &mut item.verified,
                impact_verdict(&previous, &p, start, end),
            );
            // Its own references, for the next level (none after the deepest).
            if level.depth == deepest {
                continue;
            }
            if requests < MAX_REQUESTS {
                requests += 1;
                let line = item.symbol.line.into();
                current.push(Some(references(ctx, &p, line, &item.symbol.name).await));
            } else {
                current.push(None);
            }
        }
        previous = current;
    }
    tally.finish(requests)
}

/// The verdict on a dependent spanning `start..=end` of `path`, from the references of the
/// level before.
fn impact_verdict(
    previous: &[Option<Refs>],
    path: &str,
    start: u64,
    end: u64,
) -> (Verdict, String) {
    let confirmed = previous
        .iter()
        .flatten()
        .any(|r| r.error.is_none() && r.hits(path, start, end));
    let all_known = previous.iter().all(|r| {
        r.as_ref()
            .is_some_and(|r| r.error.is_none() && r.complete && r.outside_total == 0)
    });
    if previous.iter().flatten().any(|r| r.found_by_name(path)) {
        (
            Verdict::Unverifiable,
            "the server finds uses in this kind of file by name only (it does not compile it)"
                .to_owned(),
        )
    } else if confirmed {
        (Verdict::Confirmed, String::new())
    } else if all_known {
        (
            Verdict::Refuted,
            "no use of it is in the server's references of the level before".to_owned(),
        )
    } else {
        let why = previous
            .iter()
            .flatten()
            .find_map(|r| r.error.clone())
            .unwrap_or_else(|| {
                format!(
                    "the references of the level before were cut, incomplete, or not fetched (at most {MAX_REQUESTS} requests)"
                )
            });
        (Verdict::Unverifiable, why)
    }
}
