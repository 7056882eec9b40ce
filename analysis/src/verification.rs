//! Edges of the code graph confirmed or refuted by a language server's references.
//!
//! The graph resolves a use to a definition by its own rules (scope, imports, receiver
//! types, names); a language server that compiles the project knows. Each edge of a
//! `callers` or `impact` answer gets a [`Verdict`] from the server's references of the
//! definition it points at: confirmed when the references include the use, refuted when the
//! references are complete and leave it out, unverifiable (with why) otherwise — a cut or
//! failed answer, a use the server could not place, a file the server reads by name only.
//!
//! The references are fetched by the caller (`fetch`), so a host decides how a server is
//! asked (the tool layer goes through its own `lsp` tool, whose project rules apply); at most
//! [`MAX_REQUESTS`] are made per answer.
//!
//! ```
//! use cc_analysis::verification::{self, Definition, References, Use, Verdict};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let target = Definition { path: "shapes.py", line: 1, name: "area" };
//! let uses = [
//!     Use { path: "report.py", first_line: 4, last_line: 4 },
//!     Use { path: "other.py", first_line: 9, last_line: 9 },
//! ];
//! // The server lists one use, and its list is complete.
//! let fetch = |_: Definition<'_>| async {
//!     References::listed([("report.py".to_owned(), 4)], true)
//! };
//! let (judged, tally) = verification::callers(target, &uses, fetch).await;
//! assert_eq!(judged[0].verdict, Verdict::Confirmed);
//! assert_eq!(judged[1].verdict, Verdict::Refuted);
//! assert_eq!((tally.confirmed, tally.refuted, tally.requests), (1, 1, 1));
//! # });
//! ```

use std::collections::{HashMap, HashSet};
use std::future::Future;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// At most this many `references` requests per answer; later edges are unverifiable.
pub const MAX_REQUESTS: usize = 16;

/// What the language server said of one edge (`verify: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Its references include the use.
    Confirmed,
    /// Its complete references do not include it.
    Refuted,
    /// It could not say (why is in `verify_note`).
    Unverifiable,
}

impl Verdict {
    /// `confirmed`, `refuted` or `unverifiable`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Refuted => "refuted",
            Verdict::Unverifiable => "unverifiable",
        }
    }
}

/// One edge's verdict, and why when it is not plainly confirmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The verdict.
    pub verdict: Verdict,
    /// Why (empty for a confirmation).
    pub why: Option<String>,
}

impl Judged {
    fn new(verdict: Verdict, why: impl Into<String>) -> Judged {
        let why = why.into();
        Judged {
            verdict,
            why: (!why.is_empty()).then_some(why),
        }
    }
}

/// The verdicts of one answer, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Edges the server's references include.
    pub confirmed: usize,
    /// Edges its complete references leave out.
    pub refuted: usize,
    /// Edges it could not say about.
    pub unverifiable: usize,
    /// `references` requests made.
    pub requests: usize,
}

impl Tally {
    fn add(&mut self, judged: &Judged) {
        match judged.verdict {
            Verdict::Confirmed => self.confirmed += 1,
            Verdict::Refuted => self.refuted += 1,
            Verdict::Unverifiable => self.unverifiable += 1,
        }
    }
}

/// A definition whose references are asked for: where its name is, and the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Definition<'a> {
    /// Relative to the root, `/`-separated.
    pub path: &'a str,
    /// 1-based line of its name.
    pub line: u64,
    /// The name as written there.
    pub name: &'a str,
}

/// Where an edge's use is: a call site (one line), or a dependent definition's span (any
/// use of the definition before it inside the span confirms it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Use<'a> {
    /// Relative to the root, `/`-separated.
    pub path: &'a str,
    /// First line (1-based).
    pub first_line: u64,
    /// Last line (inclusive).
    pub last_line: u64,
}

/// What the server said the uses of one definition are.
#[derive(Debug, Clone, Default)]
pub struct References {
    /// `(path, line)` of every use.
    places: HashSet<(String, u64)>,
    /// Whether the list is all of them (not cut, the server's project loaded).
    complete: bool,
    /// Uses of the same name the server left out, with why (in a file outside its project,
    /// resolved elsewhere by it): neither confirmed nor refuted.
    outside: HashMap<(String, u64), String>,
    /// How many such uses there are in all (a list of them may be cut).
    outside_total: usize,
    /// Why there is no list.
    error: Option<String>,
    /// Extensions of files the server does not compile, whose uses it finds by name if at
    /// all (JDT LS and Kotlin): a use there neither confirms nor refutes.
    by_name: Vec<String>,
}

impl References {
    /// The server's list of uses, `(path, line)`; `complete` when it is not cut and the
    /// server's project was loaded.
    pub fn listed(places: impl IntoIterator<Item = (String, u64)>, complete: bool) -> References {
        References {
            places: places.into_iter().collect(),
            complete,
            ..References::default()
        }
    }

    /// No list, and why.
    pub fn failed(why: impl Into<String>) -> References {
        References {
            error: Some(why.into()),
            ..References::default()
        }
    }

    /// Uses of the name the server could not place, with why (`total`: how many in all, the
    /// list may be cut).
    #[must_use]
    pub fn with_outside(
        mut self,
        places: impl IntoIterator<Item = ((String, u64), String)>,
        total: Option<usize>,
    ) -> References {
        self.outside = places.into_iter().collect();
        self.outside_total = total.unwrap_or(self.outside.len());
        self
    }

    /// Extensions of files the server finds uses in by name only.
    #[must_use]
    pub fn with_by_name(mut self, extensions: impl IntoIterator<Item = String>) -> References {
        self.by_name = extensions.into_iter().collect();
        self
    }

    fn hits(&self, at: Use<'_>) -> bool {
        self.places
            .iter()
            .any(|(p, l)| p == at.path && (at.first_line..=at.last_line).contains(l))
    }

    /// Whether the server's answer about `path` is by name only.
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
}

const BY_NAME_ONLY: &str =
    "the server finds uses in this kind of file by name only (it does not compile it)";

/// The verdict on a call site from the references of the definition it calls.
fn caller_verdict(refs: &References, at: Use<'_>) -> Judged {
    if let Some(error) = &refs.error {
        return Judged::new(Verdict::Unverifiable, error.clone());
    }
    if refs.found_by_name(at.path) {
        return Judged::new(Verdict::Unverifiable, BY_NAME_ONLY);
    }
    if refs.hits(at) {
        return Judged::new(Verdict::Confirmed, "");
    }
    if let Some(why) = refs.left_out(at.path, at.first_line) {
        return Judged::new(Verdict::Unverifiable, why);
    }
    if refs.complete {
        Judged::new(
            Verdict::Refuted,
            "the server's references do not include it",
        )
    } else {
        Judged::new(
            Verdict::Unverifiable,
            "not in the server's references, which were cut or incomplete",
        )
    }
}

/// Judges every call site of a `callers` answer from one `references` request for `target`.
pub async fn callers<'a, F, Fut>(
    target: Definition<'a>,
    sites: &[Use<'_>],
    mut fetch: F,
) -> (Vec<Judged>, Tally)
where
    F: FnMut(Definition<'a>) -> Fut,
    Fut: Future<Output = References>,
{
    let refs = fetch(target).await;
    let mut tally = Tally {
        requests: 1,
        ..Tally::default()
    };
    let judged = sites
        .iter()
        .map(|site| {
            let judged = caller_verdict(&refs, *site);
            tally.add(&judged);
            judged
        })
        .collect();
    (judged, tally)
}

/// Judges every dependent of an `impact` answer, level by level (`levels[0]` at depth 1):
/// one at depth d is confirmed when the references of a definition at depth d-1 (the
/// target for d = 1) fall inside its span. Each dependent is its definition (whose
/// references the next level is judged by) and its span.
pub async fn impact<'a, F, Fut>(
    target: Definition<'a>,
    levels: &[Vec<(Definition<'a>, Use<'a>)>],
    mut fetch: F,
) -> (Vec<Vec<Judged>>, Tally)
where
    F: FnMut(Definition<'a>) -> Fut,
    Fut: Future<Output = References>,
{
    let mut tally = Tally {
        requests: 1,
        ..Tally::default()
    };
    // The definitions of the previous level, with their references when fetched.
    let mut previous: Vec<Option<References>> = vec![Some(fetch(target).await)];
    let mut judged_levels = Vec::with_capacity(levels.len());
    for (index, level) in levels.iter().enumerate() {
        let deepest = index + 1 == levels.len();
        let mut current: Vec<Option<References>> = Vec::new();
        let mut judged_level = Vec::with_capacity(level.len());
        for (definition, span) in level {
            let judged = impact_verdict(&previous, *span);
            tally.add(&judged);
            judged_level.push(judged);
            // Its own references, for the next level (none after the deepest).
            if deepest {
                continue;
            }
            if tally.requests < MAX_REQUESTS {
                tally.requests += 1;
                current.push(Some(fetch(*definition).await));
            } else {
                current.push(None);
            }
        }
        judged_levels.push(judged_level);
        previous = current;
    }
    (judged_levels, tally)
}

/// The verdict on a dependent from the references of the level before.
fn impact_verdict(previous: &[Option<References>], at: Use<'_>) -> Judged {
    let fetched = || previous.iter().flatten();
    if fetched().any(|r| r.found_by_name(at.path)) {
        return Judged::new(Verdict::Unverifiable, BY_NAME_ONLY);
    }
    if fetched().any(|r| r.error.is_none() && r.hits(at)) {
        return Judged::new(Verdict::Confirmed, "");
    }
    let all_known = previous.iter().all(|r| {
        r.as_ref()
            .is_some_and(|r| r.error.is_none() && r.complete && r.outside_total == 0)
    });
    if all_known {
        return Judged::new(
            Verdict::Refuted,
            "no use of it is in the server's references of the level before",
        );
    }
    let why = fetched().find_map(|r| r.error.clone()).unwrap_or_else(|| {
        format!(
            "the references of the level before were cut, incomplete, or not fetched (at most \
             {MAX_REQUESTS} requests)"
        )
    });
    Judged::new(Verdict::Unverifiable, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(path: &str, line: u64) -> Use<'_> {
        Use {
            path,
            first_line: line,
            last_line: line,
        }
    }

    #[test]
    fn a_call_site_is_judged_by_what_the_server_could_say() {
        let complete = References::listed([("a.py".to_owned(), 3)], true);
        assert_eq!(
            caller_verdict(&complete, at("a.py", 3)).verdict,
            Verdict::Confirmed
        );
        assert_eq!(
            caller_verdict(&complete, at("a.py", 4)).verdict,
            Verdict::Refuted
        );
        let cut = References::listed([("a.py".to_owned(), 3)], false);
        assert_eq!(
            caller_verdict(&cut, at("a.py", 4)).verdict,
            Verdict::Unverifiable
        );
        let failed = References::failed("no server");
        let judged = caller_verdict(&failed, at("a.py", 3));
        assert_eq!(
            (judged.verdict, judged.why.as_deref()),
            (Verdict::Unverifiable, Some("no server"))
        );
        let by_name = References::listed([], true).with_by_name(["kt".to_owned()]);
        assert_eq!(
            caller_verdict(&by_name, at("b.kt", 1)).verdict,
            Verdict::Unverifiable
        );
        let outside = References::listed([], true).with_outside(
            [(("c.py".to_owned(), 7), "another project".to_owned())],
            None,
        );
        let judged = caller_verdict(&outside, at("c.py", 7));
        assert_eq!(judged.verdict, Verdict::Unverifiable);
        assert!(judged.why.unwrap().contains("another project"));
        // A list of unplaced uses that was cut leaves every unlisted use open.
        let cut_outside = References::listed([], true).with_outside([], Some(60));
        assert_eq!(
            caller_verdict(&cut_outside, at("d.py", 1)).verdict,
            Verdict::Unverifiable
        );
    }

    #[tokio::test]
    async fn impact_judges_each_level_by_the_references_of_the_one_before() {
        let target = Definition {
            path: "lib.py",
            line: 1,
            name: "base",
        };
        let middle = Definition {
            path: "mid.py",
            line: 2,
            name: "middle",
        };
        let top = Definition {
            path: "top.py",
            line: 5,
            name: "top",
        };
        let span = |path, first_line, last_line| Use {
            path,
            first_line,
            last_line,
        };
        let levels = vec![
            vec![(middle, span("mid.py", 2, 6))],
            vec![(top, span("top.py", 5, 9)), (top, span("top.py", 20, 25))],
        ];
        let mut asked = Vec::new();
        let (judged, tally) = impact(target, &levels, |definition| {
            asked.push(definition.name);
            async move {
                match definition.name {
                    "base" => References::listed([("mid.py".to_owned(), 4)], true),
                    _ => References::listed([("top.py".to_owned(), 7)], true),
                }
            }
        })
        .await;
        assert_eq!(
            asked,
            ["base", "middle"],
            "the deepest level fetches nothing"
        );
        assert_eq!(judged[0][0].verdict, Verdict::Confirmed);
        assert_eq!(judged[1][0].verdict, Verdict::Confirmed);
        assert_eq!(judged[1][1].verdict, Verdict::Refuted);
        assert_eq!(
            tally,
            Tally {
                confirmed: 2,
                refuted: 1,
                unverifiable: 0,
                requests: 2
            }
        );
    }

    #[tokio::test]
    async fn past_the_request_budget_a_level_is_unverifiable() {
        let target = Definition {
            path: "lib.py",
            line: 1,
            name: "base",
        };
        let one = |line| {
            (
                Definition {
                    path: "many.py",
                    line,
                    name: "f",
                },
                Use {
                    path: "many.py",
                    first_line: line,
                    last_line: line + 1,
                },
            )
        };
        let first: Vec<_> = (0..MAX_REQUESTS as u64 + 4)
            .map(|i| one(10 * i + 1))
            .collect();
        let second = vec![one(1000)];
        let (judged, tally) = impact(target, &[first, second], |_| async {
            References::listed([], true)
        })
        .await;
        assert_eq!(tally.requests, MAX_REQUESTS);
        assert_eq!(judged[1][0].verdict, Verdict::Unverifiable);
        assert!(judged[1][0].why.as_deref().unwrap().contains("not fetched"));
    }
}
