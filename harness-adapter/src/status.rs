//! `cc-harness status`: every tool and resource for a root, available or not, and why.
//!
//! The facts come from the tools themselves (`lsp status`, `debug adapters`) and from the
//! same resolution the kernels and workers use, so status never disagrees with a call.
//! `recovery` says what the run's setup found of interrupted multi-file commits (and did
//! with them), and what the last recovery on this root did, by whichever process.

use std::sync::Arc;
use std::time::Duration;

use cc_kernel_bridge::Language;
use cc_tools::{AllowAll, Registry, Surface};
use serde_json::{json, Value};

use crate::run::{RunOptions, RunSetup};

/// Gathers the status of every tool family for `setup`'s root. `terminal` says whether a
/// person is at a terminal (then `ask_user` can ask there).
pub async fn gather(setup: &RunSetup, terminal: bool) -> Value {
    let registry = setup.registry(RunOptions {
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
        conversation_id: format!("status-{}", std::process::id()),
        questions: None,
    });
    let languages = call_field(&registry, "lsp", json!({"action": "status"}), "languages").await;
    let adapters = call_field(&registry, "debug", json!({"op": "adapters"}), "adapters").await;
    registry.shutdown(Duration::from_secs(2)).await;

    let factory = crate::wiring::kernel_factory(setup.root(), setup.config(), None);
    let kernel = |language: Language| match factory.interpreter(language, setup.root().path()) {
        Ok(path) => json!({"language": language.as_str(), "available": true, "interpreter": path}),
        Err(reason) => json!({"language": language.as_str(), "available": false, "reason": reason}),
    };
    let kernels = vec![kernel(Language::Python), kernel(Language::Javascript)];
    let grammars = cc_structural::Languages::builtin()
        .names()
        .into_iter()
        .map(str::to_owned)
        .collect::<Vec<_>>();
    let workers = setup.workers_configured();
    let mut graph = graph_status(setup);
    graph["precise"] = precise_status(setup).await;
    let watcher = watcher_status(setup);

    let tools = tool_rows(&registry);
    let available_languages: Vec<&str> = usable(
        &languages,
        "state",
        |state| state != "not_available" && state != "off",
        "language",
    );
    let available_adapters: Vec<&str> = usable(&adapters, "available", |_| true, "name");
    let config = setup.config();
    json!({
        "root": setup.root().path(),
        "watcher": watcher,
        "recovery": recovery_status(setup),
        "tools": tools,
        "families": {
            "host files": {"available": true, "tools": ["read", "write", "edit", "apply_patch"]},
            "structural": {
                "available": config.structural.is_ok(),
                "tools": ["ast_grep", "ast_edit", "resolve"],
                "languages": grammars,
                "broken": broken(&config.structural),
            },
            "code graph": graph,
            "language servers": {
                "available": !available_languages.is_empty(),
                "tools": ["lsp", "lsp_rename"],
                "usable_for": available_languages,
                "languages": languages,
                "broken": broken(&config.lsp),
            },
            "debugger": {
                "available": !available_adapters.is_empty() && config.debug.is_ok(),
                "tools": ["debug"],
                "usable_adapters": available_adapters,
                "adapters": adapters,
                "broken": broken(&config.debug),
            },
            "kernels": {
                "available": kernels.iter().any(|kernel| kernel["available"] == true),
                "tools": ["eval"],
                "kernels": kernels,
                "broken": broken(&config.kernel),
            },
            "questions": {
                "available": terminal,
                "tools": ["ask_user"],
                "reason": if terminal {
                    "a terminal is attached: questions are asked there"
                } else {
                    "no terminal here; over MCP, ask_user is offered when the client declares elicitation"
                },
            },
            "workers": {
                "available": !workers.is_empty(),
                "tools": ["vibe_spawn", "vibe_send", "vibe_wait", "vibe_kill", "vibe_list"],
                "tiers": workers,
                "reason": if workers.is_empty() {
                    "no worker command configured; add [workers.fast] command = [...] (and/or [workers.good]) to .cc/tools.toml"
                } else {
                    "configured in .cc/tools.toml"
                },
            },
        },
    })
}

/// Each tool with its tier and the surfaces that list it.
fn tool_rows(registry: &cc_tools::Registry) -> Vec<Value> {
    registry
        .schemas(Surface::Full)
        .into_iter()
        .map(|schema| {
            let visible: Vec<&str> = Surface::ALL
                .into_iter()
                .filter(|surface| surface.allows(schema.tier))
                .map(Surface::as_str)
                .collect();
            json!({"name": schema.name, "tier": schema.tier, "surfaces": visible})
        })
        .collect()
}

/// The commit journal: what this setup recovered, what the last recovery did.
fn recovery_status(setup: &RunSetup) -> Value {
    let root = setup.root();
    let report = setup.recovery();
    let entry = |recovery: &cc_workspace::Recovery| {
        let mut value = cc_tools::notices::recovery_json(root, recovery);
        value["message"] = Value::String(cc_tools::notices::recovery_message(root, recovery));
        value
    };
    let last: Vec<Value> = root
        .workspace()
        .last_recoveries()
        .iter()
        .map(entry)
        .collect();
    json!({
        "journal_dir": report.journal_dir,
        "recovered_now": report.recovered.iter().map(entry).collect::<Vec<_>>(),
        "in_progress": report.in_progress,
        "problems": report.problems,
        "last": last,
    })
}

/// The code graph without opening it: its configuration, where its index is and whether one
/// was built already (the first `graph` call builds or updates it), the languages it indexes.
fn graph_status(setup: &RunSetup) -> Value {
    let languages: Vec<&str> = cc_languages::names()
        .into_iter()
        .filter(|name| {
            cc_languages::by_name(name)
                .is_some_and(|l| cc_graph::extract::query_source(l).is_some())
        })
        .collect();
    match &setup.config().graph {
        Ok(config) => {
            let index = config.index_path(setup.root().path());
            let size = std::fs::metadata(&index).map(|m| m.len()).ok();
            json!({
                "available": true,
                "tools": ["graph"],
                "languages": languages,
                "index_path": index,
                "index_exists": size.is_some(),
                "index_bytes": size,
                "reason": if size.is_some() {
                    "an index exists; the first graph call brings it up to date with the disk"
                } else {
                    "no index yet; the first graph call builds it"
                },
            })
        }
        Err(error) => json!({
            "available": false,
            "tools": ["graph"],
            "languages": languages,
            "reason": error.to_string(),
            "broken": error.to_string(),
        }),
    }
}

/// The code graph's precise tier: each compiler-grade indexer found (and runnable) or not,
/// with how to install it; `off` when `[graph] precise = false`.
async fn precise_status(setup: &RunSetup) -> Value {
    if setup.config().graph.as_ref().is_ok_and(|c| !c.precise) {
        return json!("off ([graph] precise = false)");
    }
    let mut out = serde_json::Map::new();
    for indexer in cc_graph::Indexer::ALL {
        let value = match cc_graph::precise::locate(indexer).await {
            Ok(path) => json!({
                "available": true,
                "path": path,
                "languages": indexer.languages(),
                "reason": "runs in the background once the index is open and after changes; \
                           answers never wait for it",
            }),
            Err(error) => json!({
                "available": false,
                "languages": indexer.languages(),
                "reason": error.to_string(),
            }),
        };
        out.insert(indexer.name().to_owned(), value);
    }
    Value::Object(out)
}

/// The run's watcher of the tree as a run would start it: how many folders it watches, or why
/// it cannot (then every mechanism checks what it holds on every call).
fn watcher_status(setup: &RunSetup) -> Value {
    let limit = cc_workspace::watch::max_user_watches();
    match cc_workspace::watch::TreeWatcher::start(
        setup.root().path(),
        cc_workspace::watch::WatchOptions::default(),
    ) {
        Ok(watcher) => {
            let status = watcher.status();
            watcher.stop();
            json!({
                "watching": status.degraded.is_none(),
                "dirs": status.dirs,
                "max_user_watches": limit,
                "reason": status.degraded.unwrap_or_else(|| {
                    "changes made behind the run (shell, git, formatters) are seen as they happen".into()
                }),
            })
        }
        Err(error) => json!({
            "watching": false,
            "dirs": 0,
            "max_user_watches": limit,
            "reason": format!("{error}; every call checks the files itself"),
        }),
    }
}

/// A family's broken section, said the same way for every family (`null` when it is fine).
fn broken<T>(section: &Result<T, cc_workspace::BrokenSection>) -> Value {
    section
        .as_ref()
        .err()
        .map_or(Value::Null, |broken| Value::String(broken.to_string()))
}

/// Names of the entries of `list` whose `key` passes `keep` (a string or a `true` flag).
fn usable<'a>(list: &'a Value, key: &str, keep: impl Fn(&str) -> bool, name: &str) -> Vec<&'a str> {
    list.as_array()
        .map(|entries| {
            entries
                .iter()
                .filter(|entry| match &entry[key] {
                    Value::String(state) => keep(state),
                    Value::Bool(flag) => *flag,
                    _ => false,
                })
                .filter_map(|entry| entry[name].as_str())
                .collect()
        })
        .unwrap_or_default()
}

async fn call_field(registry: &Registry, tool: &str, args: Value, field: &str) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => output.value.get(field).cloned().unwrap_or(Value::Null),
        Err(error) => json!({"error": error.to_json()}),
    }
}

/// A readable rendering of [`gather`]'s result.
pub fn render(status: &Value) -> String {
    let mut out = format!(
        "cc-harness status for {}\n",
        status["root"].as_str().unwrap_or("?")
    );
    let watcher = &status["watcher"];
    if watcher.is_object() {
        out.push_str(&if watcher["watching"] == Value::Bool(true) {
            format!(
                "\nfile watcher: watching {} folder(s) (fs.inotify.max_user_watches = {}): {}\n",
                watcher["dirs"],
                watcher["max_user_watches"],
                watcher["reason"].as_str().unwrap_or("")
            )
        } else {
            format!(
                "\nfile watcher: NOT watching: {}\n",
                watcher["reason"].as_str().unwrap_or("")
            )
        });
    }
    let families = &status["families"];
    render_recovery(&mut out, &status["recovery"]);
    let structural = &families["structural"];
    out.push_str(&format!(
        "\nhost files (read, write, edit, apply_patch): available\n\nstructural search (ast_grep, ast_edit, resolve): {} for {}\n",
        mark(&structural["available"]),
        names(&structural["languages"])
    ));
    push_broken(&mut out, structural);
    render_graph(&mut out, &families["code graph"]);
    render_servers(&mut out, &families["language servers"]);
    render_debugger(&mut out, &families["debugger"]);
    render_kernels(&mut out, &families["kernels"]);
    for (title, family) in [
        ("questions (ask_user)", "questions"),
        ("workers (vibe_*)", "workers"),
    ] {
        let entry = &families[family];
        out.push_str(&format!(
            "\n{title}: {}: {}\n",
            mark(&entry["available"]),
            entry["reason"].as_str().unwrap_or("")
        ));
    }
    out
}

/// `available` or `not available`.
fn mark(available: &Value) -> &'static str {
    if available == &Value::Bool(true) {
        "available"
    } else {
        "not available"
    }
}

/// An array of names, comma-separated.
fn names(list: &Value) -> String {
    list.as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default()
}

/// The code graph's lines: availability, index, languages, the precise tier.
fn render_graph(out: &mut String, graph: &Value) {
    out.push_str(&format!(
        "\ncode graph (graph): {}: {}\n",
        mark(&graph["available"]),
        graph["reason"].as_str().unwrap_or("")
    ));
    if let Some(index) = graph["index_path"].as_str() {
        out.push_str(&format!("  index: {index}\n"));
    }
    out.push_str(&format!("  languages: {}\n", names(&graph["languages"])));
    match &graph["precise"] {
        Value::Object(indexers) => {
            out.push_str("  precise tier (compiler-grade indexers, in the background):\n");
            for (name, indexer) in indexers {
                out.push_str(&format!(
                    "    {:<20} {}: {}\n",
                    name,
                    mark(&indexer["available"]),
                    indexer["path"]
                        .as_str()
                        .or(indexer["reason"].as_str())
                        .unwrap_or("")
                ));
            }
        }
        Value::String(off) => out.push_str(&format!("  precise tier: {off}\n")),
        _ => {}
    }
}

/// The language servers' lines: one per language and project root.
fn render_servers(out: &mut String, servers: &Value) {
    out.push_str(&format!(
        "\nlanguage servers (lsp, lsp_rename): {}\n",
        mark(&servers["available"])
    ));
    push_broken(out, servers);
    for language in servers["languages"].as_array().into_iter().flatten() {
        // One row per project root: say which.
        let root = language["root"]
            .as_str()
            .map(|root| format!(" at {root}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {:<11} {:<14} {:<28} {}\n",
            language["language"].as_str().unwrap_or("?"),
            language["state"].as_str().unwrap_or("?"),
            format!("{}{root}", language["server"].as_str().unwrap_or("-")),
            language["reason"].as_str().unwrap_or(""),
        ));
        for skipped in language["skipped"].as_array().into_iter().flatten() {
            out.push_str(&format!("  {:<11} skipped {skipped}\n", ""));
        }
    }
}

/// The debugger's lines: one per adapter.
fn render_debugger(out: &mut String, debugger: &Value) {
    out.push_str(&format!(
        "\ndebugger (debug): {}\n",
        mark(&debugger["available"])
    ));
    push_broken(out, debugger);
    for adapter in debugger["adapters"].as_array().into_iter().flatten() {
        let (state, detail) = if adapter["available"] == true {
            let command: Vec<&str> = adapter["command"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            ("available", command.join(" "))
        } else {
            (
                "not available",
                adapter["reason"].as_str().unwrap_or("").to_owned(),
            )
        };
        out.push_str(&format!(
            "  {:<11} {:<14} {detail}\n",
            adapter["name"].as_str().unwrap_or("?"),
            state,
        ));
    }
}

/// The kernels' lines: one per language.
fn render_kernels(out: &mut String, kernels: &Value) {
    out.push_str(&format!(
        "\nkernels (eval): {}\n",
        mark(&kernels["available"])
    ));
    push_broken(out, kernels);
    for kernel in kernels["kernels"].as_array().into_iter().flatten() {
        let detail = kernel["interpreter"]
            .as_str()
            .or_else(|| kernel["reason"].as_str())
            .unwrap_or("");
        out.push_str(&format!(
            "  {:<11} {:<14} {detail}\n",
            kernel["language"].as_str().unwrap_or("?"),
            mark(&kernel["available"])
        ));
    }
}

/// The commit journal's lines: what was recovered now, or the last recovery.
fn render_recovery(out: &mut String, recovery: &Value) {
    let messages = |key: &str| -> Vec<String> {
        recovery[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| entry["message"].as_str().map(str::to_owned))
            .collect()
    };
    out.push_str(&format!(
        "\ncommit journal: {}\n",
        recovery["journal_dir"]
            .as_str()
            .unwrap_or("none (no state folder: set XDG_STATE_HOME or HOME)")
    ));
    let now = messages("recovered_now");
    for message in &now {
        out.push_str(&format!("  recovered now: {message}\n"));
    }
    if now.is_empty() {
        out.push_str("  no interrupted commit to recover\n");
        let when = recovery["last"][0]["recovered_at"].as_str().unwrap_or("?");
        for message in messages("last") {
            out.push_str(&format!("  last recovery ({when}): {message}\n"));
        }
    }
    if let Some(busy) = recovery["in_progress"].as_u64().filter(|n| *n > 0) {
        out.push_str(&format!(
            "  {busy} commit(s) in progress in other processes (left alone)\n"
        ));
    }
    for problem in recovery["problems"].as_array().into_iter().flatten() {
        out.push_str(&format!("  problem: {}\n", problem.as_str().unwrap_or("?")));
    }
}

/// The line that says a family's section is broken (the same words as its calls' errors).
fn push_broken(out: &mut String, family: &Value) {
    if let Some(broken) = family["broken"].as_str() {
        out.push_str(&format!("  broken: {broken}\n"));
    }
}
