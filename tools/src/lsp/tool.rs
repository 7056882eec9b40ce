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
use serde_json::Value;

use super::nav;
use super::open::{self, lsp_error, unavailable, unsupported, Opened};
use super::requests::{self, AtPosition};
use super::{LspConfigSource, REQUEST_TIMEOUT};
use crate::error::{ErrorKind, ToolError};
use crate::report::lsp::{
    AskedAt, CodeActionsReport, FileDiagnosticsReport, LspReport, LspStatusReport, MissingPackages,
    NavAnswer, NavigationReport, Place, ReloadReport, SymbolEntry, SymbolsReport,
};
use crate::report::NewDiagnostic;
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, report_output, schema_for, CallContext, Tool, ToolOutput};

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

/// What a navigation action asks the server, and how it says it.
struct NavRequest {
    name: &'static str,
    provider: &'static str,
    method: &'static str,
}

impl NavRequest {
    /// The request of a navigation action (`None` for the others).
    fn of(action: Action) -> Option<NavRequest> {
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
            Action::CodeActions => (
                "code_actions",
                "codeActionProvider",
                "textDocument/codeAction",
            ),
            Action::Status | Action::Reload | Action::Diagnostics | Action::Symbols => return None,
        };
        Some(NavRequest {
            name,
            provider,
            method,
        })
    }
}

impl LspTool {
    /// The code occurrences of `symbol` in files of another project than the server's (a
    /// sibling project with its own root): the server cannot search them.
    fn outside_project(
        &self,
        mentions: &super::rename_scope::Mentions,
        symbol: &str,
    ) -> Vec<Place> {
        let mut places = Vec::new();
        for (path, _) in &mentions.elsewhere {
            let Ok(bytes) = std::fs::read(path) else {
                continue;
            };
            for occurrence in super::scan::occurrences(path, &bytes, symbol) {
                if occurrence.place == super::scan::Place::Code {
                    places.push(Place {
                        path: self.root.relative(path),
                        line: occurrence.line as u64,
                        text: occurrence.text,
                        within: None,
                        confirmed_by: None,
                        why: None,
                    });
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

    /// `definition`, `type_definition`, `implementation`, `references`, `hover` and
    /// `code_actions`: open the file, find the symbol on the line, ask, describe.
    async fn navigate(
        &self,
        ctx: &CallContext,
        args: &LspArgs,
        action: Action,
    ) -> Result<LspReport, ToolError> {
        let request = NavRequest::of(action)
            .ok_or_else(|| ToolError::internal(format!("{action:?} is not a navigation action")))?;
        let opened = self.open(ctx, args.file.as_deref()).await?;
        let at = self.locate(args, &opened)?;
        if !opened.server.supports(request.provider, request.method) {
            return Ok(unsupported(&opened.server, request.name));
        }
        let symbol = args.symbol.as_deref().unwrap_or_default();
        let asked = AskedAt {
            action: request.name.to_owned(),
            file: opened.shown.clone(),
            line: at.line + 1,
            symbol: args.symbol.clone(),
            column: at.column,
            note: (at.occurrences > 1).then(|| {
                format!(
                    "`{symbol}` occurs {} times on that line; column {} was used",
                    at.occurrences, at.column
                )
            }),
        };
        if action == Action::CodeActions {
            let (actions, diagnostics) = super::actions::code_actions(&opened, &at, symbol).await?;
            return Ok(LspReport::CodeActions(CodeActionsReport {
                at: asked,
                actions,
                diagnostics,
            }));
        }
        // Uses outside the server's configured project (tests a tsconfig.json or pyright
        // `include` leaves out) are found only in files it has open: open every file that
        // mentions the name first (as `lsp_rename` does); the rest is listed apart.
        let cross_file = matches!(action, Action::References | Action::Implementation);
        let mentions = if cross_file && cc_analysis::rename::is_identifier(symbol) {
            let mentions = super::rename_scope::make_visible(
                &self.pool,
                &opened.server,
                self.root.path(),
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
        let position = requests::position(&opened.path, at.line, at.character);
        let answer = requests::at_position(&opened.server, what, position, REQUEST_TIMEOUT)
            .await
            .map_err(lsp_error)?;
        let answer = if action == Action::Hover {
            NavAnswer::Hover {
                hover: nav::hover_text(&answer),
            }
        } else {
            self.places(&opened, &at, action, symbol, mentions.as_ref(), &answer)
                .await
        };
        let empty = match &answer {
            NavAnswer::Hover { hover } => hover.is_none(),
            NavAnswer::Locations {
                locations,
                outside_project,
                ..
            } => locations.is_empty() && outside_project.as_ref().is_none_or(Vec::is_empty),
        };
        let inactive = if empty {
            super::inactive::reason(&opened.server, &opened.path, u64::from(at.line)).await
        } else {
            None
        };
        Ok(LspReport::Navigation(NavigationReport {
            at: asked,
            server: opened.server.name().to_owned(),
            answer,
            incomplete: opened.incomplete.clone(),
            limits: opened.limits.clone(),
            inactive,
        }))
    }

    /// The places a definition, implementation or references answer names, with the uses
    /// the server missed (confirmed, added) and those it could not include (apart).
    async fn places(
        &self,
        opened: &Opened,
        at: &Located,
        action: Action,
        symbol: &str,
        mentions: Option<&super::rename_scope::Mentions>,
        answer: &Value,
    ) -> NavAnswer {
        let cross_file = matches!(action, Action::References | Action::Implementation);
        let mut all = nav::locations(&self.root, answer);
        let mut outside = Vec::new();
        if let (Some(mentions), Action::References) = (mentions, action) {
            // Uses the server's answer missed (files it had not loaded, another project's):
            // confirmed by the server's own `definition`, added; the rest listed apart, with
            // why.
            let target = super::rename_scope::Target::of(
                &opened.server,
                (
                    opened.path.clone(),
                    u64::from(at.line),
                    u64::from(at.character),
                ),
            )
            .await;
            let covered = super::rename_scope::location_starts(answer);
            let found = super::rename_scope::classify(
                &opened.server,
                self.root.path(),
                mentions,
                symbol,
                &target,
                &covered,
                "search",
            )
            .await;
            for place in found.confirmed {
                all.push(Place {
                    path: self.root.relative(&place.path),
                    line: place.line0 + 1,
                    text: place.text,
                    within: None,
                    confirmed_by: Some("definition".into()),
                    why: None,
                });
            }
            outside = found
                .code
                .iter()
                .map(|l| super::leftover_place(l, &self.root))
                .collect();
        } else if let Some(mentions) = mentions {
            outside = self.outside_project(mentions, symbol);
        }
        if cross_file {
            // Grouped by file in the text, so in file and line order; each place with the
            // definition it lies in ("who uses it").
            all.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
            let mut enclosing = super::enclosing::Enclosings::default();
            for location in &mut all {
                let path = self.root.path().join(&location.path);
                location.within = enclosing.at(&path, location.line as usize);
            }
        }
        let (by_name, not_compiled) = self.found_by_name(opened, &all);
        let cap = if action == Action::References {
            REFERENCES_CAP
        } else {
            usize::MAX
        };
        let (locations, total, truncated) = nav::capped(all, cap);
        let (outside_project, outside_project_total) = match mentions {
            Some(_) => {
                let (listed, outside_total, _) = nav::capped(outside, REFERENCES_CAP);
                (Some(listed), Some(outside_total))
            }
            None => (None, None),
        };
        NavAnswer::Locations {
            locations,
            total,
            truncated,
            outside_project,
            outside_project_total,
            by_name,
            not_compiled,
        }
    }

    /// The extensions of `places` the server found by name, not by its compiler (JDT LS's
    /// Kotlin search: a place there may be another symbol of the same name), and those of
    /// its language it does not compile (a use there it did not list is not evidence of
    /// none).
    fn found_by_name(
        &self,
        opened: &Opened,
        places: &[Place],
    ) -> (Option<Vec<String>>, Option<Vec<String>>) {
        let by_name: BTreeSet<String> = places
            .iter()
            .map(|l| Path::new(&l.path))
            .filter(|p| !opened.server.spec().diagnoses(p))
            .filter_map(|p| p.extension()?.to_str().map(str::to_owned))
            .collect();
        let diagnosed = &opened.server.spec().diagnosed_extensions;
        let not_compiled = if diagnosed.is_empty() {
            None
        } else {
            self.pool.route(&opened.path).ok().map(|(family, _)| {
                family
                    .extensions
                    .iter()
                    .filter(|e| !diagnosed.contains(e))
                    .cloned()
                    .collect()
            })
        };
        (
            (!by_name.is_empty()).then(|| by_name.into_iter().collect()),
            not_compiled,
        )
    }

    async fn symbols(&self, ctx: &CallContext, args: &LspArgs) -> Result<LspReport, ToolError> {
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
            let (inside, outside): (Vec<SymbolEntry>, Vec<SymbolEntry>) =
                nav::symbols(&self.root, None, &answer)
                    .into_iter()
                    .partition(|s| {
                        s.path
                            .as_deref()
                            .is_some_and(|p| !Path::new(p).is_absolute())
                    });
            let (symbols, total, truncated) = nav::capped(inside, WORKSPACE_SYMBOLS_CAP);
            return Ok(LspReport::Symbols(SymbolsReport {
                action: "symbols".into(),
                query: Some(query.to_owned()),
                file: None,
                symbols,
                total,
                truncated,
                outside_workspace: Some(outside.len()),
            }));
        }
        let opened = self
            .open(ctx, args.file.as_deref())
            .await
            .map_err(|error| {
                if error.kind() == ErrorKind::InvalidArguments {
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
        let (symbols, total, truncated) = nav::capped(
            nav::symbols(&self.root, Some(&uri), &answer),
            FILE_SYMBOLS_CAP,
        );
        Ok(LspReport::Symbols(SymbolsReport {
            action: "symbols".into(),
            query: None,
            file: Some(opened.shown),
            symbols,
            total,
            truncated,
            outside_workspace: None,
        }))
    }

    async fn diagnostics(&self, ctx: &CallContext, args: &LspArgs) -> Result<LspReport, ToolError> {
        if args.file.as_deref() == Some("*") {
            return super::project::check(ctx, &self.pool, &self.root, args.language.as_deref())
                .await
                .map(LspReport::ProjectCheck);
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
                let (problems, missing) = cc_analysis::write_check::without_missing(
                    &self.pool,
                    &path,
                    problems,
                    &mut Default::default(),
                );
                let missing_dependencies = missing.sentence(&server).map(|note| MissingPackages {
                    packages: missing.packages.iter().cloned().collect(),
                    diagnostics: missing.diagnostics,
                    note: Some(note),
                });
                Ok(LspReport::FileDiagnostics(FileDiagnosticsReport {
                    action: "diagnostics".into(),
                    diagnostics: problems
                        .iter()
                        .map(|d| NewDiagnostic::new(&shown, d))
                        .collect(),
                    file: shown,
                    server,
                    missing_dependencies,
                }))
            }
            CheckOutcome::Pending { server, reason } => Err(ToolError::new(
                ErrorKind::Timeout,
                format!("{server} has not answered for `{shown}`: {reason}; ask again shortly"),
            )),
            CheckOutcome::Unchecked { reason } => Err(unavailable(reason)),
            CheckOutcome::Removed => Err(ToolError::new(
                ErrorKind::NotFound,
                format!("`{shown}` does not exist"),
            )),
        }
    }

    async fn reload(&self, args: &LspArgs) -> Result<LspReport, ToolError> {
        // The configuration as it is now: a server restarted with the old one would not be
        // what the agent asked for after editing `.cc/tools.toml`.
        let refused = |broken: BrokenSection| {
            ToolError::new(
                ErrorKind::InvalidConfig,
                format!("{broken} (the servers keep running with the previous configuration)"),
            )
        };
        if let Some(source) = &self.config {
            let config = source().map_err(refused)?;
            self.pool.replace_config(&config).map_err(|error| {
                refused(
                    BrokenSection::new(crate::settings_place("lsp"), error)
                        .then(format!("{} again", crate::LSP_RELOAD)),
                )
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
        Ok(LspReport::Reload(ReloadReport {
            action: "reload".into(),
            language: family,
            stopped,
            config_reread: self.config.is_some(),
        }))
    }
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

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<LspReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: LspArgs = parse_args(args)?;
        let report = match args.action {
            Action::Status => LspReport::Status(LspStatusReport {
                languages: self.pool.status().await,
                trust: self.pool.trust(),
            }),
            Action::Reload => self.reload(&args).await?,
            // `status` shows a broken section and `reload` may fix it; the rest refuse.
            Action::Diagnostics => {
                open::refuse_broken(&self.pool)?;
                self.diagnostics(ctx, &args).await?
            }
            Action::Symbols => {
                open::refuse_broken(&self.pool)?;
                self.symbols(ctx, &args).await?
            }
            action @ (Action::Definition
            | Action::TypeDefinition
            | Action::Implementation
            | Action::References
            | Action::Hover
            | Action::CodeActions) => {
                open::refuse_broken(&self.pool)?;
                self.navigate(ctx, &args, action).await?
            }
        };
        report_output(&report)
    }
}
