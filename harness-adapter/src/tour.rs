//! `cc-harness tour`: a scripted session through every tool family on an embedded sample
//! project (Python, plus a C file and a TypeScript file), printed step by step.
//!
//! A step whose peer is missing says why and how to install it, and is skipped; the tour
//! succeeds when every step that could run succeeded.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use cc_tools::{AllowAll, Registry, Surface};
use serde_json::{json, Value};

use crate::run::{RunOptions, RunSetup};

/// The sample project, embedded in the binary: (path, content).
pub const SAMPLE: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        include_str!("../tour/sample/pyproject.toml"),
    ),
    ("inventory.py", include_str!("../tour/sample/inventory.py")),
    ("checksum.c", include_str!("../tour/sample/checksum.c")),
    (
        "web/package.json",
        include_str!("../tour/sample/web/package.json"),
    ),
    (
        "web/tsconfig.json",
        include_str!("../tour/sample/web/tsconfig.json"),
    ),
    (
        "web/format.ts",
        include_str!("../tour/sample/web/format.ts"),
    ),
];

/// The line of `inventory.py` inside `total_value`'s loop, where the debugger stops.
const LOOP_LINE: u64 = 9;

/// The file the tour writes, with one type error on line 6.
const REPORT_PY: &str = "from inventory import total_value\n\n\ndef report(stock: dict[str, tuple[int, float]]) -> str:\n    value: float = total_value(stock)\n    return \"total: \" + value\n";

const INSTALL_HINT: &str = "install the peers with `cargo xtask peers` (from a checkout of cc)";

/// How the tour went.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TourSummary {
    /// Steps that ran and did what they should.
    pub passed: usize,
    /// Steps that ran and did not.
    pub failed: usize,
    /// Steps skipped because a peer is missing.
    pub skipped: usize,
}

impl TourSummary {
    /// Whether every step that could run succeeded.
    pub fn success(&self) -> bool {
        self.failed == 0
    }
}

/// Writes the sample project into `dir`.
pub fn write_sample(dir: &Path) -> std::io::Result<()> {
    for (path, content) in SAMPLE {
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, content)?;
    }
    Ok(())
}

/// What one step needs from the machine, looked up in `cc-harness status`'s report.
enum Need {
    Nothing,
    LanguageServer(&'static str),
    Adapter(&'static str),
    Kernel(&'static str),
}

impl Need {
    /// None when available, else why not.
    fn missing(&self, status: &Value) -> Option<String> {
        let families = &status["families"];
        let find = |list: &Value, key: &str, name: &str| -> Option<Value> {
            list.as_array()?
                .iter()
                .find(|entry| entry[key] == name)
                .cloned()
        };
        match self {
            Need::Nothing => None,
            Need::LanguageServer(language) => {
                let entry = find(
                    &families["language servers"]["languages"],
                    "language",
                    language,
                );
                match entry {
                    Some(entry) if entry["state"] != "not_available" && entry["state"] != "off" => {
                        None
                    }
                    Some(entry) => Some(format!(
                        "no {language} language server: {}",
                        entry["reason"].as_str().unwrap_or("not available")
                    )),
                    None => Some(format!("no {language} language server is configured")),
                }
            }
            Need::Adapter(name) => {
                let entry = find(&families["debugger"]["adapters"], "name", name);
                match entry {
                    Some(entry) if entry["available"] == true => None,
                    Some(entry) => Some(format!(
                        "debug adapter {name} not available: {}",
                        entry["reason"].as_str().unwrap_or("unknown reason")
                    )),
                    None => Some(format!("no debug adapter named {name}")),
                }
            }
            Need::Kernel(language) => {
                let entry = find(&families["kernels"]["kernels"], "language", language);
                match entry {
                    Some(entry) if entry["available"] == true => None,
                    Some(entry) => Some(format!(
                        "no {language} kernel: {}",
                        entry["reason"].as_str().unwrap_or("unknown reason")
                    )),
                    None => Some(format!("no {language} kernel")),
                }
            }
        }
    }
}

struct Tour<'a, W: Write> {
    registry: Registry,
    status: Value,
    out: &'a mut W,
    summary: TourSummary,
    number: usize,
    total: usize,
}

/// Shortens long argument values so each call fits a few lines.
fn show_args(args: &Value) -> String {
    let text = args.to_string();
    if text.chars().count() > 400 {
        format!("{}…", text.chars().take(400).collect::<String>())
    } else {
        text
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("     {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl<W: Write> Tour<'_, W> {
    fn say(&mut self, text: &str) {
        // The tour's output is its product; a closed stdout leaves nothing to report to.
        let _ = writeln!(self.out, "{text}");
    }

    /// Starts a step; returns false (after saying why) when its peer is missing.
    fn begin(&mut self, title: &str, need: Need) -> bool {
        self.number += 1;
        self.say(&format!(
            "\n━━ step {}/{}: {title}",
            self.number, self.total
        ));
        if let Some(why) = need.missing(&self.status) {
            self.say(&format!("   – skipped: {why}; {INSTALL_HINT}"));
            self.summary.skipped += 1;
            return false;
        }
        true
    }

    /// Calls a tool, printing the call and its rendering. A tool error is printed too.
    async fn call(&mut self, tool: &str, args: Value) -> Result<Value, String> {
        self.say(&format!("   → {tool} {}", show_args(&args)));
        match self.registry.call(tool, args).await {
            Ok(output) => {
                self.say(&indent(&output.render_text()));
                Ok(output.value)
            }
            Err(error) => {
                self.say(&indent(&error.to_string()));
                Err(error.to_string())
            }
        }
    }

    fn finish(&mut self, outcome: Result<String, String>) {
        match outcome {
            Ok(summary) => {
                self.say(&format!("   ✓ {summary}"));
                self.summary.passed += 1;
            }
            Err(problem) => {
                self.say(&format!("   ✗ {problem}"));
                self.summary.failed += 1;
            }
        }
    }
}

fn expect(condition: bool, problem: impl Into<String>) -> Result<(), String> {
    if condition {
        Ok(())
    } else {
        Err(problem.into())
    }
}

/// Runs the tour in a fresh copy of the sample project, writing to `out`.
pub async fn run<W: Write>(out: &mut W) -> std::io::Result<TourSummary> {
    let dir = tempfile::Builder::new().prefix("cc-tour-").tempdir()?;
    write_sample(dir.path())?;
    // The code graph's index stays with the tour's copy, not in the user's cache.
    std::fs::create_dir_all(dir.path().join(".cc"))?;
    std::fs::write(
        dir.path().join(".cc").join("tools.toml"),
        format!(
            "[graph]\ncache_dir = {:?}\n",
            dir.path().join(".cc").join("graph").display().to_string()
        ),
    )?;
    writeln!(
        out,
        "cc-harness tour: a scripted session on a sample project copied to {}",
        dir.path().display()
    )?;
    let setup = RunSetup::new(dir.path()).map_err(std::io::Error::other)?;
    let status = crate::status::gather(&setup, false).await;
    let registry = setup.registry(RunOptions {
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
        conversation_id: format!("tour-{}", std::process::id()),
        questions: None,
    });
    let mut tour = Tour {
        registry: registry.clone(),
        status,
        out,
        summary: TourSummary::default(),
        number: 0,
        total: 10,
    };
    steps(&mut tour).await;
    registry.shutdown(Duration::from_secs(3)).await;
    let summary = tour.summary.clone();
    writeln!(
        out,
        "\ntour finished: {} passed, {} failed, {} skipped",
        summary.passed, summary.failed, summary.skipped
    )?;
    Ok(summary)
}

async fn steps<W: Write>(tour: &mut Tour<'_, W>) {
    if tour.begin(
        "structural search: every warnings.warn(...) call in the Python file",
        Need::Nothing,
    ) {
        let outcome = warnings_search(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "structural search in C: strcpy calls and what they copy",
        Need::Nothing,
    ) {
        let outcome = strcpy_search(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "staged rewrite: warnings become exceptions, shown as a diff, then accepted",
        Need::Nothing,
    ) {
        let outcome = staged_rewrite(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "write a file with a type error: the diagnostic comes back with the write",
        Need::LanguageServer("python"),
    ) {
        let outcome = write_with_type_error(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "language server: where is total_value defined?",
        Need::LanguageServer("python"),
    ) {
        let outcome = definition_of_total_value(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "code graph: what depends on total_value (the impact of changing it)",
        Need::Nothing,
    ) {
        let outcome = impact_of_total_value(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "an edit that breaks a caller in another file: reported in the write's result",
        Need::LanguageServer("python"),
    ) {
        let outcome = breaking_edit(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "persistent interpreter: a Python cell calls ast_grep through the bridge",
        Need::Kernel("python"),
    ) {
        let outcome = cell_calls_ast_grep(tour).await;
        tour.finish(outcome);
    }
    if tour.begin(
        "debugger: stop inside total_value's loop and look at a variable",
        Need::Adapter("debugpy"),
    ) {
        let outcome = debug_session(tour).await;
        // Whatever happened, leave no debuggee behind.
        let _ = tour
            .registry
            .call("debug", json!({"op": "terminate"}))
            .await;
        tour.finish(outcome);
    }
    if tour.begin("status: what is available here, and why not", Need::Nothing) {
        tour.say("   → cc-harness status");
        tour.say(&indent(&crate::status::render(&tour.status)));
        tour.finish(Ok("every family reported".to_owned()));
    }
}

/// Both `warnings.warn` calls of inventory.py, each message captured.
async fn warnings_search<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let found = tour
        .call(
            "ast_grep",
            json!({"pattern": "warnings.warn($MSG)", "path": "inventory.py"}),
        )
        .await?;
    expect(
        found["total"] == 2,
        format!("expected 2 matches, got {}", found["total"]),
    )
    .map(|()| "2 calls found, each with its message captured as $MSG".to_owned())
}

/// The one `strcpy` of checksum.c, and what it copies into.
async fn strcpy_search<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let found = tour
        .call(
            "ast_grep",
            json!({"pattern": "strcpy($DST, $SRC)", "path": "checksum.c"}),
        )
        .await?;
    expect(
        found["total"] == 1,
        format!("expected 1 match, got {}", found["total"]),
    )
    .map(|()| {
        format!(
            "found strcpy into `{}`",
            found["matches"][0]["captures"]["DST"]
                .as_str()
                .unwrap_or("?")
        )
    })
}

/// A new file with one type error: the write's result holds exactly that diagnostic.
async fn write_with_type_error<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let written = tour
        .call("write", json!({"path": "report.py", "content": REPORT_PY}))
        .await?;
    let new = written["diagnostics"]["new"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let pending = written["diagnostics"]["pending"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !pending.is_empty() {
        return Err(format!(
            "the language server did not answer in time (pending: {pending:?})"
        ));
    }
    expect(
        new.len() == 1 && new[0]["line"] == 6,
        format!("expected exactly one new diagnostic, on line 6; got {new:?}"),
    )
    .map(|()| "exactly the type error on line 6, nothing else".to_owned())
}

/// The language server's definition of `total_value`, used in report.py.
async fn definition_of_total_value<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let found = tour
        .call(
            "lsp",
            json!({"action": "definition", "file": "report.py", "line": 1, "symbol": "total_value"}),
        )
        .await?;
    let text = found.to_string();
    expect(
        text.contains("inventory.py") && text.contains("def total_value"),
        "expected the definition in inventory.py",
    )
    .map(|()| "defined in inventory.py, line 6".to_owned())
}

/// The code graph's impact of changing `total_value`: report() in report.py (when the
/// language-server step wrote it) and inventory.py's main block.
async fn impact_of_total_value<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let impact = tour
        .call(
            "graph",
            json!({"action": "impact", "file": "inventory.py", "line": 6, "symbol": "total_value"}),
        )
        .await?;
    let users: Vec<String> = impact["levels"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|level| level["dependents"].as_array().cloned().unwrap_or_default())
        .filter_map(|d| {
            Some(format!(
                "{} ({})",
                d["qualified_name"].as_str()?,
                d["path"].as_str()?
            ))
        })
        .collect();
    let main_uses = impact["top_level_uses"].as_array().map_or(0, Vec::len);
    // report.py exists when the language-server step wrote it.
    let with_report = tour.registry.run().root.path().join("report.py").exists();
    expect(
        main_uses > 0 && (!with_report || users.iter().any(|u| u == "report (report.py)")),
        format!("expected report() in report.py and inventory.py's main block, got {users:?}"),
    )
    .map(|()| {
        format!(
            "used by {} and by inventory.py's top-level code",
            if users.is_empty() {
                "no function".to_owned()
            } else {
                users.join(", ")
            }
        )
    })
}

/// A Python cell that lists inventory.py's functions through `ast_grep` on the bridge.
async fn cell_calls_ast_grep<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let code = "found = tool(\"ast_grep\", {\"pattern\": \"def $F($$$P): $$$B\", \"path\": \"inventory.py\"})\n[m[\"captures\"][\"F\"] for m in found[\"matches\"]]";
    let cell = tour
        .call(
            "eval",
            json!({"code": code, "description": "list the functions of inventory.py structurally"}),
        )
        .await?;
    expect(
        cell["result"] == "['total_value', 'restock', 'cheapest']",
        format!("unexpected cell result {}", cell["result"]),
    )
    .map(|()| "the cell got the three function names from the registry".to_owned())
}

/// `total_value` gains a parameter: the write reports what it broke in report.py (a
/// dependent found through the code graph), then the edit is undone.
async fn breaking_edit<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let (old, new) = (
        "def total_value(stock):",
        "def total_value(stock, currency):",
    );
    let broken = tour
        .call(
            "edit",
            json!({"path": "inventory.py", "old_text": old, "new_text": new}),
        )
        .await?;
    let diagnostics = &broken["diagnostics"];
    let in_report: Vec<String> = diagnostics["new"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["path"] == "report.py")
        .filter_map(|d| Some((d["line"].clone(), d["message"].as_str()?.lines().next()?)))
        .filter(|(_, message)| message.contains("currency"))
        .map(|(line, message)| format!("report.py:{line}: {message}"))
        .collect();
    let from_graph = diagnostics["scope"]["dependents_from"]
        .as_array()
        .is_some_and(|from| from.iter().any(|f| f == "graph"));
    let undone = tour
        .call(
            "edit",
            json!({"path": "inventory.py", "old_text": new, "new_text": old}),
        )
        .await;
    expect(
        !in_report.is_empty() && from_graph,
        format!("expected a new diagnostic in report.py with dependents from the graph, got {diagnostics}"),
    )?;
    undone?;
    Ok(format!(
        "the write reported {} (report.py found as a dependent through the code graph); undone",
        in_report.join("; ")
    ))
}

async fn staged_rewrite<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    let staged = tour
        .call(
            "ast_edit",
            json!({"pattern": "warnings.warn($MSG)", "rewrite": "raise ValueError($MSG)", "path": "inventory.py"}),
        )
        .await?;
    expect(
        staged["replacements"] == 2,
        format!("expected 2 replacements, got {}", staged["replacements"]),
    )?;
    let edit_id = staged["edit_id"]
        .as_str()
        .ok_or("ast_edit returned no edit_id")?
        .to_owned();
    let accepted = tour
        .call("resolve", json!({"edit_id": edit_id, "action": "accept"}))
        .await?;
    let text = accepted.to_string();
    expect(
        text.contains("inventory.py"),
        "resolve did not report inventory.py",
    )?;
    let check = tour
        .call(
            "ast_grep",
            json!({"pattern": "raise ValueError($MSG)", "path": "inventory.py"}),
        )
        .await?;
    expect(check["total"] == 2, "the rewrite did not land")?;
    Ok("2 replacements staged, reviewed as a diff, and written all at once".to_owned())
}

async fn debug_session<W: Write>(tour: &mut Tour<'_, W>) -> Result<String, String> {
    tour.call(
        "debug",
        json!({"op": "breakpoints", "file": "inventory.py", "lines": [LOOP_LINE]}),
    )
    .await?;
    let launched = tour
        .call("debug", json!({"op": "launch", "program": "inventory.py"}))
        .await?;
    expect(
        launched["stopped"]["line"] == LOOP_LINE,
        format!(
            "expected a stop on line {LOOP_LINE}, got {}",
            launched["stopped"]
        ),
    )?;
    let evaluated = tour
        .call(
            "debug",
            json!({"op": "evaluate", "expression": "(name, count, price, total)"}),
        )
        .await?;
    let text = evaluated.to_string();
    expect(text.contains("apple"), format!("unexpected value {text}"))?;
    tour.call("debug", json!({"op": "terminate"})).await?;
    Ok(format!(
        "stopped at inventory.py:{LOOP_LINE} and read the loop's variables"
    ))
}
