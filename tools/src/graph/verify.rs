//! `verify: true`: each edge of a `callers` or `impact` answer confirmed or refuted by the
//! language server's references (the run's `lsp` tool, called through the registry like any
//! other call, after the graph is released), or marked unverifiable with why.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Value};

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
    match ctx.call_tool("lsp", args).await {
        Ok(output) => {
            let v = output.value;
            if v["supported"] == false {
                return Refs::failed(
                    v["message"]
                        .as_str()
                        .unwrap_or("references are not supported by the server")
                        .to_owned(),
                );
            }
            let places = v["locations"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| Some((l["path"].as_str()?.to_owned(), l["line"].as_u64()?)))
                .collect();
            let outside: HashMap<(String, u64), String> = v["outside_project"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| {
                    Some((
                        (o["path"].as_str()?.to_owned(), o["line"].as_u64()?),
                        o["why"]
                            .as_str()
                            .unwrap_or("outside its project")
                            .to_owned(),
                    ))
                })
                .collect();
            let outside_total = v["outside_project_total"]
                .as_u64()
                .map_or(outside.len(), |n| usize::try_from(n).unwrap_or(usize::MAX));
            Refs {
                places,
                complete: v["truncated"] != true && v.get("incomplete").is_none(),
                outside,
                outside_total,
                error: None,
                by_name: ["by_name", "not_compiled"]
                    .iter()
                    .flat_map(|key| v[*key].as_array().into_iter().flatten())
                    .filter_map(|e| e.as_str().map(str::to_owned))
                    .collect(),
            }
        }
        Err(error) => Refs::failed(format!("no language server answered: {}", error.message())),
    }
}

/// One verdict.
fn verdict(refs: Option<&Refs>, path: &str, from: u64, to: u64) -> (&'static str, String) {
    match refs {
        None => (
            "unverifiable",
            format!("not checked: at most {MAX_REQUESTS} reference requests per answer"),
        ),
        Some(r) if r.error.is_some() => ("unverifiable", r.error.clone().unwrap_or_default()),
        Some(r) if r.found_by_name(path) => (
            "unverifiable",
            "the server finds uses in this kind of file by name only (it does not compile it)"
                .to_owned(),
        ),
        Some(r) if r.hits(path, from, to) => ("confirmed", String::new()),
        Some(r) if r.left_out(path, from).is_some() => {
            ("unverifiable", r.left_out(path, from).unwrap_or_default())
        }
        Some(r) if r.complete => (
            "refuted",
            "the server's references do not include it".to_owned(),
        ),
        Some(_) => (
            "unverifiable",
            "not in the server's references, which were cut or incomplete".to_owned(),
        ),
    }
}

#[derive(Default)]
struct Tally {
    confirmed: usize,
    refuted: usize,
    unverifiable: usize,
    notes: Vec<String>,
}

impl Tally {
    fn add(&mut self, item: &mut Value, place: String, verdict: (&'static str, String)) {
        let (what, why) = verdict;
        match what {
            "confirmed" => self.confirmed += 1,
            "refuted" => self.refuted += 1,
            _ => self.unverifiable += 1,
        }
        item["verified"] = json!(what);
        if !why.is_empty() {
            item["verify_note"] = json!(why);
        }
        if what != "confirmed" {
            self.notes.push(format!(
                "  {what}: {place}{}",
                if why.is_empty() {
                    String::new()
                } else {
                    format!(" ({why})")
                }
            ));
        }
    }

    fn finish(self, value: &mut Value, text: &mut String, requests: usize) {
        value["verification"] = json!({
            "confirmed": self.confirmed,
            "refuted": self.refuted,
            "unverifiable": self.unverifiable,
            "requests": requests,
            "by": "the language server's references (lsp references)",
        });
        text.push_str(&format!(
            "\nverified through the language server's references: {} confirmed, {} refuted, {} unverifiable",
            self.confirmed, self.refuted, self.unverifiable
        ));
        for note in self.notes {
            text.push('\n');
            text.push_str(&note);
        }
    }
}

fn place_of(v: &Value) -> (String, u64) {
    (
        v["path"].as_str().unwrap_or("").to_owned(),
        v["line"].as_u64().unwrap_or(0),
    )
}

/// Marks every caller of a `callers` answer.
pub(crate) async fn callers(ctx: &CallContext, value: &mut Value, text: &mut String) {
    let target = value["target"].clone();
    let (path, line) = place_of(&target);
    let name = target["name"].as_str().unwrap_or("").to_owned();
    let refs = references(ctx, &path, line, &name).await;
    let mut tally = Tally::default();
    if let Some(items) = value["callers"].as_array_mut() {
        for item in items {
            let (p, l) = place_of(item);
            tally.add(item, format!("{p}:{l}"), verdict(Some(&refs), &p, l, l));
        }
    }
    tally.finish(value, text, 1);
}

/// Marks every dependent of an `impact` answer: one at depth d is confirmed when the
/// references of a definition at depth d-1 (the target for d = 1) fall inside its span.
pub(crate) async fn impact(ctx: &CallContext, value: &mut Value, text: &mut String) {
    let target = value["target"].clone();
    let mut requests = 0;
    // The definitions of the previous depth, with their references when fetched.
    let mut previous: Vec<Option<Refs>> = {
        let (path, line) = place_of(&target);
        requests += 1;
        vec![Some(
            references(ctx, &path, line, target["name"].as_str().unwrap_or("")).await,
        )]
    };
    let mut tally = Tally::default();
    if let Some(levels) = value["levels"].as_array_mut() {
        let deepest = levels.last().and_then(|l| l["depth"].as_u64()).unwrap_or(0);
        for level in levels.iter_mut() {
            let depth = level["depth"].as_u64().unwrap_or(0);
            let mut current: Vec<Option<Refs>> = Vec::new();
            let dependents = level["dependents"].as_array_mut();
            for item in dependents.into_iter().flatten() {
                let (p, l) = place_of(item);
                let end = item["end_line"].as_u64().unwrap_or(l);
                let start = item["start_line"].as_u64().unwrap_or(l);
                let confirmed = previous
                    .iter()
                    .flatten()
                    .any(|r| r.error.is_none() && r.hits(&p, start, end));
                let all_known = previous.iter().all(|r| {
                    r.as_ref()
                        .is_some_and(|r| r.error.is_none() && r.complete && r.outside_total == 0)
                });
                let by_name = previous.iter().flatten().any(|r| r.found_by_name(&p));
                let verdict = if by_name {
                    (
                        "unverifiable",
                        "the server finds uses in this kind of file by name only (it does not \
                         compile it)"
                            .to_owned(),
                    )
                } else if confirmed {
                    ("confirmed", String::new())
                } else if all_known {
                    (
                        "refuted",
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
                    ("unverifiable", why)
                };
                tally.add(
                    item,
                    format!(
                        "depth {depth} {} ({p}:{l})",
                        item["qualified_name"].as_str().unwrap_or("")
                    ),
                    verdict,
                );
                // Its own references, for the next level (none after the deepest).
                if depth == deepest {
                    continue;
                }
                if requests < MAX_REQUESTS {
                    requests += 1;
                    let name = item["name"].as_str().unwrap_or("").to_owned();
                    current.push(Some(references(ctx, &p, l, &name).await));
                } else {
                    current.push(None);
                }
            }
            previous = current;
        }
    }
    tally.finish(value, text, requests);
}
