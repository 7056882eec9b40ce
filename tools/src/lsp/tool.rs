//! The `lsp` tool: status, reload, the file's diagnostics, and navigation at a line and a
//! symbol.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use cc_lsp_client::uri::path_to_uri;
use cc_lsp_client::{CheckOutcome, Diagnostic, Located, ServerPool};
use cc_workspace::BrokenSection;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use super::diagnostics::diagnostic_json;
use super::nav;
use super::open::{self, lsp_error, unavailable, unsupported, Opened};
use super::requests::{self, AtPosition};
use super::{LspConfigSource, REQUEST_TIMEOUT};
use crate::error::{kinds, ToolError};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

const REFERENCES_CAP: usize = 50;
const WORKSPACE_SYMBOLS_CAP: usize = 100;
const FILE_SYMBOLS_CAP: usize = 200;

/// `lsp`: ask the language servers.
pub struct LspTool {
    pool: Arc<ServerPool>,
    root: WorkspaceRoot,
    config: Option<LspConfigSource>,
}

impl std::fmt::Debug for LspTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspTool")
            .field("pool", &self.pool)
            .field("root", &self.root)
            .field("config", &self.config.is_some())
            .finish()
    }
}

impl LspTool {
    /// An `lsp` tool over `pool`.
    pub fn new(pool: Arc<ServerPool>, root: WorkspaceRoot) -> Self {
        LspTool {
            pool,
            root,
            config: None,
        }
    }

    /// Where `reload` reads the `[lsp]` section again (without one, `reload` restarts the
    /// servers with the configuration in use).
    #[must_use]
    pub fn with_config_source(mut self, config: Option<LspConfigSource>) -> Self {
        self.config = config;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Action {
    /// Each language: root, server, state (running/idle/not_available/off) and why.
    Status,
    /// Restart the server of `file`'s language (or `language`) for that root only.
    Reload,
    /// The file's current errors and warnings (all of them, not only new ones); with
    /// `file: "*"`, the whole project's, from its command-line checker (basedpyright, tsc,
    /// cargo check, go vet, clang-tidy, php -l, javac and kotlinc), first 200.
    Diagnostics,
    /// Where the symbol at `line` is defined.
    Definition,
    /// Where the type of the symbol at `line` is defined.
    TypeDefinition,
    /// Implementations of the interface or method at `line`.
    Implementation,
    /// Every use of the symbol at `line` (first 50).
    References,
    /// The signature and documentation of the symbol at `line`.
    Hover,
    /// With `query`: workspace symbols matching it (first 100); with `file`: the file's
    /// symbols (first 200).
    Symbols,
    /// The code actions the server offers at `line`/`symbol`: titles, kinds, whether each
    /// carries an edit. The diagnostics on that line are handed to the server (and listed),
    /// so its quick fixes for them show.
    CodeActions,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LspArgs {
    /// What to do.
    action: Action,
    /// File path, relative to the workspace root.
    #[serde(default)]
    file: Option<String>,
    /// 1-based line of the symbol (navigation actions).
    #[serde(default)]
    line: Option<usize>,
    /// The symbol as it appears on that line (a substring; its first whole-identifier
    /// occurrence is used). Required by navigation actions: positions are never guessed.
    #[serde(default)]
    symbol: Option<String>,
    /// Workspace symbol search text (`symbols`).
    #[serde(default)]
    query: Option<String>,
    /// The language for `reload` without a file, or to check only that language's projects
    /// with `diagnostics` and `file: "*"` (`python`, `typescript`, `rust`, `go`, `c`, …).
    #[serde(default)]
    language: Option<String>,
}

impl LspTool {
    /// The code occurrences of `symbol` in files of another project than the server's (a
    /// sibling project with its own root): the server cannot search them.
    fn outside_project(
        &self,
        mentions: &super::rename_scope::Mentions,
        symbol: &str,
    ) -> Vec<Value> {
        let mut places = Vec::new();
        for (path, _) in &mentions.elsewhere {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            for occurrence in super::scan::occurrences(path, &bytes, symbol) {
                if occurrence.place == super::scan::Place::Code {
                    places.push(json!({
                        "path": self.root.relative(path),
                        "line": occurrence.line,
                        "text": occurrence.text,
                    }));
                }
            }
        }
        places
    }

    async fn open(&self, ctx: &CallContext, file: Option<&str>) -> Result<Opened, ToolError> {
        open::open(ctx, &self.pool, &self.root, file).await
    }

    fn locate(&self, args: &LspArgs, opened: &Opened) -> Result<Located, ToolError> {
        open::position(opened, args.line, args.symbol.as_deref())
    }

    async fn navigate(
        &self,
        ctx: &CallContext,
        args: &LspArgs,
        action: Action,
    ) -> Result<ToolOutput, ToolError> {
        let (name, provider, method) = match action {
            Action::Definition => (
                "definition",
                "definitionProvider",
                "textDocument/definition",
            ),
            Action::TypeDefinition => (
                "type_definition",
                "typeDefinitionProvider",
                "textDocument/typeDefinition",
            ),
            Action::Implementation => (
                "implementation",
                "implementationProvider",
                "textDocument/implementation",
            ),
            Action::References => (
                "references",
                "referencesProvider",
                "textDocument/references",
            ),
            Action::Hover => ("hover", "hoverProvider", "textDocument/hover"),
            _ => (
                "code_actions",
                "codeActionProvider",
                "textDocument/codeAction",
            ),
        };
        let opened = self.open(ctx, args.file.as_deref()).await?;
        let at = self.locate(args, &opened)?;
        if !opened.server.supports(provider, method) {
            return Ok(unsupported(&opened.server, name));
        }
        let position = requests::position(&opened.path, at.line, at.character);
        let mut value = json!({
            "action": name,
            "file": opened.shown,
            "line": at.line + 1,
            "symbol": args.symbol,
            "column": at.column,
        });
        if at.occurrences > 1 {
            value["note"] = json!(format!(
                "`{}` occurs {} times on that line; column {} was used",
                args.symbol.as_deref().unwrap_or(""),
                at.occurrences,
                at.column
            ));
        }
        if action == Action::CodeActions {
            let symbol = args.symbol.as_deref().unwrap_or_default();
            let (found, text) = super::actions::code_actions(&opened, &at, symbol).await?;
            value["actions"] = found["actions"].clone();
            value["diagnostics"] = found["diagnostics"].clone();
            return Ok(ToolOutput::new(value).with_text(text));
        }
        // Uses outside the server's configured project (tests a tsconfig.json or pyright
        // `include` leaves out) are found only in files it has open: open every file that
        // mentions the name first (as `lsp_rename` does); the rest is listed apart.
        let symbol = args.symbol.as_deref().unwrap_or_default();
        let cross_file = matches!(action, Action::References | Action::Implementation);
        let mentions = if cross_file && super::rename::is_identifier(symbol) {
            let mentions = super::rename_scope::make_visible(
                &self.pool,
                &opened.server,
                &self.root,
                &opened.path,
                symbol,
            )
            .await;
            super::open::wait_ready(ctx, &opened.server).await;
            Some(mentions)
        } else {
            None
        };
        let what = match action {
            Action::Definition => AtPosition::Definition,
            Action::TypeDefinition => AtPosition::TypeDefinition,
            Action::Implementation => AtPosition::Implementation,
            Action::References => AtPosition::References,
            _ => AtPosition::Hover,
        };
        let answer = requests::at_position(&opened.server, what, position, REQUEST_TIMEOUT)
            .await
            .map_err(lsp_error)?;
        let place = format!(
            "`{}` at {}:{}",
            args.symbol.as_deref().unwrap_or(""),
            opened.shown,
            at.line + 1
        );
        let mut text;
        let mut text_notes: Vec<String> = Vec::new();
        let empty;
        match action {
            Action::Hover => {
                let hover = nav::hover_text(&answer);
                empty = hover.is_none();
                text = hover
                    .clone()
                    .unwrap_or_else(|| format!("no hover information for {place}"));
                value["hover"] = json!(hover);
            }
            _ => {
                let cap = if action == Action::References {
                    REFERENCES_CAP
                } else {
                    usize::MAX
                };
                let mut all = nav::locations(&self.root, &answer);
                let mut outside = Vec::new();
                if let (Some(mentions), Action::References) = (&mentions, action) {
                    // Uses the server's answer missed (files it had not loaded, another
                    // project's): confirmed by the server's own `definition`, added; the
                    // rest listed apart, with why.
                    let target = super::rename_scope::Target::of(
                        &opened.server,
                        (
                            opened.path.clone(),
                            u64::from(at.line),
                            u64::from(at.character),
                        ),
                    )
                    .await;
                    let covered = super::rename_scope::location_starts(&answer);
                    let found = super::rename_scope::classify(
                        &opened.server,
                        &self.root,
                        mentions,
                        symbol,
                        &target,
                        &covered,
                        "search",
                    )
                    .await;
                    for place in found.confirmed {
                        all.push(json!({
                            "path": self.root.relative(&place.path),
                            "line": place.line0 + 1,
                            "text": place.text,
                            "confirmed_by": "definition",
                        }));
                    }
                    outside = found.code.iter().map(|l| l.to_json(&self.root)).collect();
                } else if let Some(mentions) = &mentions {
                    outside = self.outside_project(mentions, symbol);
                }
                if cross_file {
                    // Grouped by file in the text, so in file and line order.
                    all.sort_by(|a, b| {
                        (a["path"].as_str(), a["line"].as_u64())
                            .cmp(&(b["path"].as_str(), b["line"].as_u64()))
                    });
                    // Who uses it: each place with the definition it lies in.
                    let mut enclosing = super::enclosing::Enclosings::default();
                    for location in &mut all {
                        let path = self
                            .root
                            .path()
                            .join(location["path"].as_str().unwrap_or(""));
                        let line = location["line"].as_u64().unwrap_or(0) as usize;
                        location["in"] = enclosing.at(&path, line).unwrap_or(Value::Null);
                    }
                }
                let by_name: BTreeSet<String> = all
                    .iter()
                    .filter_map(|l| l["path"].as_str())
                    .filter(|p| !opened.server.spec().diagnoses(Path::new(p)))
                    .filter_map(|p| Path::new(p).extension()?.to_str().map(str::to_owned))
                    .collect();
                let diagnosed = &opened.server.spec().diagnosed_extensions;
                if !diagnosed.is_empty() {
                    // What the server does not compile: its answers there are by name, and
                    // a use there it did not list is not evidence of none.
                    if let Ok((family, _)) = self.pool.route(&opened.path) {
                        let not_compiled: Vec<&String> = family
                            .extensions
                            .iter()
                            .filter(|e| !diagnosed.contains(e))
                            .collect();
                        value["not_compiled"] = json!(not_compiled);
                    }
                }
                if !by_name.is_empty() {
                    // JDT LS's Kotlin search matches by name: a place there may be another
                    // symbol of the same name.
                    value["by_name"] = json!(by_name);
                    text_notes.push(format!(
                        "places in .{} files come from {}'s search by name, not its compiler: \
                         some may be other symbols of the same name",
                        by_name.iter().cloned().collect::<Vec<_>>().join(", ."),
                        opened.server.name()
                    ));
                }
                let (locations, total, truncated) = nav::capped(all, cap);
                empty = locations.is_empty() && outside.is_empty();
                let what = name.replace('_', " ");
                text = if locations.is_empty() {
                    format!("no {what} found for {place} ({})", opened.server.name())
                } else if cross_file {
                    format!(
                        "{} of {place}:\n{}",
                        nav::count_heading(locations.len(), total, &what),
                        nav::grouped(&locations)
                    )
                } else {
                    let mut lines = vec![format!(
                        "{} of {place}:",
                        nav::count_heading(locations.len(), total, &what)
                    )];
                    lines.extend(locations.iter().map(|l| {
                        format!(
                            "{}:{}: {}",
                            l["path"].as_str().unwrap_or(""),
                            l["line"],
                            l["text"].as_str().unwrap_or("")
                        )
                    }));
                    lines.join("\n")
                };
                value["locations"] = json!(locations);
                value["total"] = json!(total);
                value["truncated"] = json!(truncated);
                if mentions.is_some() {
                    let (listed, outside_total, _) = nav::capped(outside, REFERENCES_CAP);
                    if !listed.is_empty() {
                        text.push_str(&format!(
                            "\n{} of the same name in code that {} did not include (outside \
                             its project, or not confirmed):",
                            nav::count_heading(listed.len(), outside_total, "occurrences"),
                            opened.server.name()
                        ));
                        for place in &listed {
                            let why = place["why"]
                                .as_str()
                                .map(|why| format!(" ({why})"))
                                .unwrap_or_default();
                            text.push_str(&format!(
                                "\n  {}:{}: {}{why}",
                                place["path"].as_str().unwrap_or(""),
                                place["line"],
                                place["text"].as_str().unwrap_or("")
                            ));
                        }
                    }
                    value["outside_project"] = json!(listed);
                    value["outside_project_total"] = json!(outside_total);
                }
            }
        }
        for note in text_notes {
            text.push_str(&format!("\nnote: {note}"));
        }
        // The text carries every fact the JSON has: which occurrence on the line was used.
        if let Some(note) = value.get("note").and_then(Value::as_str) {
            text.push_str(&format!("\nnote: {note}"));
        }
        if let Some(incomplete) = &opened.incomplete {
            text.push_str(&format!("\nINCOMPLETE: {incomplete}"));
            value["incomplete"] = json!(incomplete);
        }
        if let Some(limits) = &opened.limits {
            text.push_str(&format!("\nnote: {limits}"));
            value["limits"] = json!(limits);
        }
        if empty {
            if let Some(inactive) =
                super::inactive::reason(&opened.server, &opened.path, u64::from(at.line)).await
            {
                text.push_str(&format!("; the code there is {inactive}"));
                value["inactive"] = json!(inactive);
            }
        }
        Ok(ToolOutput::new(value).with_text(text))
    }

    async fn symbols(&self, ctx: &CallContext, args: &LspArgs) -> Result<ToolOutput, ToolError> {
        if let Some(query) = args.query.as_deref() {
            // Any running or startable server answers; the file (if given) picks which.
            let probe = match args.file.as_deref() {
                Some(file) => self.open(ctx, Some(file)).await?.server,
                None => self.pool.running().into_iter().next().ok_or_else(|| {
                    ToolError::invalid_arguments(
                        "no language server is running yet; give `file` so the right one starts",
                    )
                })?,
            };
            if !probe.supports("workspaceSymbolProvider", "workspace/symbol") {
                return Ok(unsupported(&probe, "symbols"));
            }
            let answer = requests::workspace_symbols(&probe, query, REQUEST_TIMEOUT)
                .await
                .map_err(lsp_error)?;
            // Symbols of system headers and installed packages are not the workspace's: they
            // are counted, not listed (which of them a server has indexed yet varies).
            let (inside, outside): (Vec<Value>, Vec<Value>) =
                nav::symbols(&self.root, None, &answer)
                    .into_iter()
                    .partition(|s| {
                        s["path"]
                            .as_str()
                            .is_some_and(|p| !std::path::Path::new(p).is_absolute())
                    });
            let (items, total, truncated) = nav::capped(inside, WORKSPACE_SYMBOLS_CAP);
            let mut output = symbol_output(
                json!({"action": "symbols", "query": query}),
                items,
                total,
                truncated,
            );
            output.value["outside_workspace"] = json!(outside.len());
            if !outside.is_empty() {
                if let Some(text) = &mut output.text {
                    text.push_str(&format!(
                        "\n({} more outside the workspace, not listed)",
                        outside.len()
                    ));
                }
            }
            return Ok(output);
        }
        let opened = self
            .open(ctx, args.file.as_deref())
            .await
            .map_err(|error| {
                if error.kind() == kinds::INVALID_ARGUMENTS {
                    ToolError::invalid_arguments(
                        "`symbols` needs `query` (workspace search) or `file` (its symbols)",
                    )
                } else {
                    error
                }
            })?;
        if !opened
            .server
            .supports("documentSymbolProvider", "textDocument/documentSymbol")
        {
            return Ok(unsupported(&opened.server, "symbols"));
        }
        let uri = path_to_uri(&opened.path);
        let answer = requests::document_symbols(&opened.server, &opened.path, REQUEST_TIMEOUT)
            .await
            .map_err(lsp_error)?;
        let (items, total, truncated) = nav::capped(
            nav::symbols(&self.root, Some(&uri), &answer),
            FILE_SYMBOLS_CAP,
        );
        Ok(symbol_output(
            json!({"action": "symbols", "file": opened.shown}),
            items,
            total,
            truncated,
        ))
    }

    async fn diagnostics(
        &self,
        ctx: &CallContext,
        args: &LspArgs,
    ) -> Result<ToolOutput, ToolError> {
        if args.file.as_deref() == Some("*") {
            return super::project::check(ctx, &self.pool, &self.root, args.language.as_deref())
                .await;
        }
        let file = args
            .file
            .as_deref()
            .ok_or_else(|| ToolError::invalid_arguments("`diagnostics` needs `file`"))?;
        let path = self.root.resolve_existing(file)?;
        let shown = self.root.relative(&path);
        let checks = self.pool.check_written(std::slice::from_ref(&path)).await;
        let outcome = checks
            .into_iter()
            .next()
            .map(|check| check.outcome)
            .ok_or_else(|| ToolError::internal("no outcome for the file"))?;
        match outcome {
            CheckOutcome::Checked {
                server,
                diagnostics,
                ..
            } => {
                let problems = diagnostics
                    .into_iter()
                    .filter(Diagnostic::is_problem)
                    .collect();
                let (problems, missing) = super::diagnostics::without_missing(
                    &self.pool,
                    &path,
                    problems,
                    &mut Default::default(),
                );
                let list: Vec<Value> = problems
                    .iter()
                    .map(|d| diagnostic_json(&shown, d))
                    .collect();
                let mut text = list
                    .iter()
                    .map(|d| {
                        format!(
                            "{}:{}: {}: {}",
                            shown,
                            d["line"],
                            d["severity"].as_str().unwrap_or(""),
                            d["message"].as_str().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                if text.is_empty() {
                    text = format!("{shown}: no other errors or warnings ({server})");
                    if missing.diagnostics == 0 {
                        text = format!("{shown}: no errors or warnings ({server})");
                    }
                }
                let mut value = json!({"action": "diagnostics", "file": shown, "server": server, "diagnostics": list});
                if let Some(note) = missing.sentence(&server) {
                    text.push_str(&format!("\nnote: {note}"));
                    value["missing_dependencies"] = json!({
                        "packages": missing.packages,
                        "diagnostics": missing.diagnostics,
                        "note": note,
                    });
                }
                Ok(ToolOutput::new(value).with_text(text))
            }
            CheckOutcome::Pending { server, reason } => Err(ToolError::new(
                kinds::TIMEOUT,
                format!("{server} has not answered for `{shown}`: {reason}; ask again shortly"),
            )),
            CheckOutcome::Unchecked { reason } => Err(unavailable(reason)),
            CheckOutcome::Removed => Err(ToolError::new(
                kinds::NOT_FOUND,
                format!("`{shown}` does not exist"),
            )),
        }
    }

    async fn reload(&self, args: &LspArgs) -> Result<ToolOutput, ToolError> {
        // The configuration as it is now: a server restarted with the old one would not be
        // what the agent asked for after editing `.cc/tools.toml`.
        let refused = |broken: BrokenSection| {
            ToolError::new(
                kinds::INVALID_CONFIG,
                format!("{broken} (the servers keep running with the previous configuration)"),
            )
        };
        if let Some(source) = &self.config {
            let config = source().map_err(refused)?;
            self.pool.replace_config(&config).map_err(|error| {
                refused(BrokenSection::new("lsp", error).then("call `lsp reload` again"))
            })?;
        }
        let (family, root) = match (args.file.as_deref(), args.language.as_deref()) {
            (Some(file), _) => {
                let path = self.root.resolve(file)?;
                let (family, root) = self.pool.route(&path).map_err(|u| unavailable(u.reason))?;
                (family.name.clone(), Some(root))
            }
            (None, Some(language)) => (language.to_owned(), None),
            (None, None) => {
                return Err(ToolError::invalid_arguments(
                    "`reload` needs `file` or `language`",
                ))
            }
        };
        let stopped = self.pool.reload(&family, root.as_deref()).await;
        Ok(
            ToolOutput::new(json!({"action": "reload", "language": family, "stopped": stopped}))
                .with_text(format!(
                    "{family}: {}stopped {stopped} server(s); the next request starts it afresh",
                    if self.config.is_some() {
                        "re-read .cc/tools.toml and "
                    } else {
                        ""
                    }
                )),
        )
    }
}

fn symbol_output(mut value: Value, items: Vec<Value>, total: usize, truncated: bool) -> ToolOutput {
    let scope = match (value["query"].as_str(), value["file"].as_str()) {
        (Some(query), _) => format!("matching `{query}` in the workspace"),
        (None, Some(file)) => format!("in {file}"),
        _ => String::new(),
    };
    let heading = if items.is_empty() {
        format!("no symbols {scope}")
    } else {
        format!(
            "{} {scope}:",
            nav::count_heading(items.len(), total, "symbols")
        )
    };
    let listed = items
        .iter()
        .map(|s| {
            format!(
                "{} {} {}:{}",
                s["kind"].as_str().unwrap_or(""),
                s["name"].as_str().unwrap_or(""),
                s["path"].as_str().unwrap_or(""),
                s["line"]
            )
        })
        .collect::<Vec<_>>();
    let text = std::iter::once(heading)
        .chain(listed)
        .collect::<Vec<_>>()
        .join("\n");
    value["symbols"] = json!(items);
    value["total"] = json!(total);
    value["truncated"] = json!(truncated);
    ToolOutput::new(value).with_text(text)
}

#[async_trait]
impl Tool for LspTool {
    fn name(&self) -> &str {
        "lsp"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        "Ask the workspace's language servers. Positions are `line` (1-based) plus `symbol` \
         (the identifier as written on that line), never a column. Actions: `definition`, \
         `type_definition`, `implementation`, `references` (first 50), `hover`, \
         `code_actions` (with the quick fixes for that line's diagnostics) need file, line \
         and symbol; `symbols` (`query` for a workspace search, or `file` for its outline); \
         `diagnostics` (a file's current errors and warnings; with `file: \"*\"` the whole \
         project's, from basedpyright, tsc, cargo check, go vet or clang-tidy, optionally \
         for one `language`); `status` (each language's server, state and why — ask it \
         when diagnostics are missing); `reload` (restart the server of `file` or \
         `language`). Locations come back as root-relative path, line and that line's text; \
         capped lists give the total."
    }

    fn input_schema(&self) -> Value {
        schema_for::<LspArgs>()
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: LspArgs = parse_args(args)?;
        match args.action {
            Action::Status => {
                let rows = self.pool.status().await;
                let text = rows
                    .iter()
                    .map(|row| {
                        format!(
                            "{} [{}] {}: {}{}",
                            row.language,
                            row.root.as_deref().unwrap_or("-"),
                            row.server.as_deref().unwrap_or("-"),
                            serde_json::to_value(row.state)
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_owned))
                                .unwrap_or_default(),
                            row.reason
                                .as_deref()
                                .map(|r| format!(" ({r})"))
                                .unwrap_or_default()
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let read_only = self.pool.trust() == cc_lsp_client::Trust::ReadOnly;
                let text = if read_only {
                    format!(
                        "read-only surface: servers run no workspace code (no build scripts or \
                         proc macros, no project interpreter or TypeScript, no cargo check)\n{text}"
                    )
                } else {
                    text
                };
                Ok(ToolOutput::new(json!({
                    "languages": rows,
                    "trust": self.pool.trust(),
                }))
                .with_text(text))
            }
            Action::Reload => self.reload(&args).await,
            // `status` shows a broken section and `reload` may fix it; the rest refuse.
            Action::Diagnostics => {
                open::refuse_broken(&self.pool)?;
                self.diagnostics(ctx, &args).await
            }
            Action::Symbols => {
                open::refuse_broken(&self.pool)?;
                self.symbols(ctx, &args).await
            }
            action => {
                open::refuse_broken(&self.pool)?;
                self.navigate(ctx, &args, action).await
            }
        }
    }
}
