//! Helpers shared by the `lsp_*` tests: a fixture project with a registry over real
//! language servers (whose processes are checked gone at the end), comparing trees byte for
//! byte, and making a file impossible to replace (to fail a commit midway).
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cc_lsp_client::{LspConfig, ServerPool, ServerPoolOptions};
pub use cc_test_support::assert_group_gone;
use cc_test_support::missing_peer;
use cc_tools::{Registry, Resources, Surface, WorkspaceRoot};
use serde_json::Value;

/// Caps for every family that tolerate a loaded machine (clangd re-checks a whole project's
/// sources after a header rename: on CI it once needed more than 60 s for the last one).
pub const LENIENT: &str =
    "[lsp.python]\ntimeout_ms = 60000\n[lsp.typescript]\ntimeout_ms = 60000\n\
                           [lsp.c]\ntimeout_ms = 150000\n[lsp.go]\ntimeout_ms = 60000\n\
                           [lsp.rust]\ntimeout_ms = 60000\n[lsp.bash]\ntimeout_ms = 60000\n\
                           [lsp.java]\ntimeout_ms = 120000\n";

/// How a [`Project`] is set up.
pub struct Setup<'a> {
    /// `.cc/tools.toml` text (its `[lsp]` section is used).
    pub config: &'a str,
    pub surface: Surface,
    pub options: ServerPoolOptions,
    /// What else is wired (`host_files` is on by default); `language_servers` is set.
    pub resources: Resources,
    /// How the run's watcher watches (default: as a run does).
    pub watch: Option<cc_workspace::watch::WatchOptions>,
}

impl Default for Setup<'_> {
    fn default() -> Self {
        Setup {
            config: LENIENT,
            surface: Surface::Full,
            options: ServerPoolOptions::default(),
            resources: Resources {
                host_files: true,
                ..Default::default()
            },
            watch: None,
        }
    }
}

impl Setup<'_> {
    /// On `surface`, with the parser set and a code graph whose index lives in `cache`.
    pub fn with_graph(cache: &Path, surface: Surface) -> Self {
        Setup {
            resources: Resources {
                host_files: true,
                parsers: Some(Arc::new(cc_structural::Languages::builtin())),
                graph: Some(Ok(cc_graph::GraphConfig {
                    cache_dir: cache.to_path_buf(),
                    // The precise tier has its own tests (tools/tests/graph_precise.rs).
                    precise: false,
                    ..cc_graph::GraphConfig::default()
                })),
                ..Default::default()
            },
            surface,
            ..Setup::default()
        }
    }
}

/// A workspace of files, and a registry whose language servers work on it.
pub struct Project {
    /// What keeps the workspace alive (a temporary folder, a project copy).
    _keep: Box<dyn std::any::Any + Send + Sync>,
    /// The workspace root (canonical).
    pub ws: PathBuf,
    pub pool: Arc<ServerPool>,
    pub registry: Registry,
}

/// Writes `files` (creating folders) under `dir`.
pub fn write_files(dir: &Path, files: &[(&str, &str)]) {
    for (name, content) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
}

impl Setup<'_> {
    pub fn build(self, files: &[(&str, &str)]) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        write_files(&ws, files);
        self.build_at(ws, Box::new(dir))
    }

    /// A project over a private copy of the real project `name` (installed by `cargo xtask
    /// peers`), with `files` written over it; `None` when it is not installed (outside CI).
    pub fn real(self, name: &str, files: &[(&str, &str)]) -> Option<Project> {
        let copy = cc_test_support::copy_project(name)?;
        let ws = copy.path().to_path_buf();
        write_files(&ws, files);
        Some(self.build_at(ws, Box::new(copy)))
    }

    /// A second run on the workspace of `other` (which keeps it alive).
    pub fn beside(self, other: &Project) -> Project {
        self.build_at(other.ws.clone(), Box::new(()))
    }

    fn build_at(self, ws: PathBuf, keep: Box<dyn std::any::Any + Send + Sync>) -> Project {
        // `RUST_LOG=cc_lsp_client=debug` shows the client's view of a real server's traffic.
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_test_writer()
            .try_init();
        let root = WorkspaceRoot::new(&ws).unwrap();
        if let Some(options) = self.watch {
            root.set_watch_options(options);
        }
        let table: toml::Table = self.config.parse().unwrap();
        let mut config = table
            .get("lsp")
            .map(|section| <LspConfig as serde::Deserialize>::deserialize(section.clone()).unwrap())
            .unwrap_or_default();
        config.place = cc_tools::settings_place("lsp");
        let pool = ServerPool::new(root.path(), config.table().unwrap(), self.options);
        // The registry of a read-only surface uses the pool's read-only twin: hold
        // that one, so that the tests see the servers the tools use.
        let pool = if self.surface.allows(cc_tools::Tier::Write) {
            pool
        } else {
            pool.read_only()
        };
        let registry = Resources {
            language_servers: Some(pool.clone()),
            lsp_config: Some(reread_lsp_section(ws.clone())),
            ..self.resources
        }
        .build(
            cc_tools::testing::RunBuilder::new(root)
                .conversation("lsp-test")
                .surface(self.surface)
                .build(),
        );
        Project {
            _keep: keep,
            ws,
            pool,
            registry,
        }
    }
}

/// What `lsp reload` reads: the `[lsp]` section of `<ws>/.cc/tools.toml` (as the harness
/// reads it; an absent file is the default configuration).
fn reread_lsp_section(ws: PathBuf) -> cc_tools::resources::LspConfigSource {
    use cc_workspace::BrokenSection;
    Arc::new(move || {
        let broken = |error: &dyn std::fmt::Display| {
            BrokenSection::new(cc_tools::settings_place("lsp"), error)
                .then("call `lsp reload` again")
        };
        let text = match std::fs::read_to_string(ws.join(".cc/tools.toml")) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(broken(&error)),
        };
        let table: toml::Table = text.parse().map_err(|error| broken(&error))?;
        let mut config = match table.get("lsp") {
            Some(section) => <LspConfig as serde::Deserialize>::deserialize(section.clone())
                .map_err(|error| broken(&error))?,
            None => LspConfig::default(),
        };
        config.validate().map_err(|error| broken(&error))?;
        config.place = cc_tools::settings_place("lsp");
        Ok(config)
    })
}

/// A write's `"diagnostics"` is the typed report, field for field: read back as
/// [`cc_tools::report::WriteReport`] it serializes to the same JSON (a key the type does not
/// know, or a value of another shape, fails here). The `lsp diagnostics` action's own list
/// is not a write's report.
pub fn assert_typed_diagnostics(result: &Value) {
    let Some(diagnostics) = result.get("diagnostics").filter(|d| d.is_object()) else {
        return;
    };
    let report: cc_tools::report::WriteReport = serde_json::from_value(diagnostics.clone())
        .unwrap_or_else(|error| {
            panic!("diagnostics are not a WriteReport ({error}): {diagnostics:#}")
        });
    assert_eq!(
        &serde_json::to_value(&report).unwrap(),
        diagnostics,
        "diagnostics carry what WriteReport does not"
    );
}

/// A `graph` result is the typed report (see [`cc_tools::testing::assert_typed_result`]).
pub fn assert_graph_report(value: &Value, text: &str) {
    cc_tools::testing::assert_typed_result("graph", value, text);
}

/// A project with the default [`Setup`].
pub fn project(files: &[(&str, &str)]) -> Project {
    Setup::default().build(files)
}

impl Project {
    /// Calls `tool`; a tool error comes back as its `{"error": …}` envelope.
    pub async fn call(&self, tool: &str, args: Value) -> Value {
        match self.registry.call(tool, args).await {
            Ok(output) => {
                assert_typed_diagnostics(&output.value);
                cc_tools::testing::assert_typed_result(tool, &output.value, &output.render_text());
                output.value
            }
            Err(error) => error.to_envelope(),
        }
    }

    /// Calls `lsp`.
    pub async fn lsp(&self, args: Value) -> Value {
        self.call("lsp", args).await
    }

    /// The text of a workspace file.
    pub fn read(&self, file: &str) -> String {
        std::fs::read_to_string(self.ws.join(file)).unwrap()
    }

    /// Pids (process groups) of the servers running now.
    pub fn server_pids(&self) -> Vec<u32> {
        let mut pids: Vec<u32> = self
            .pool
            .running()
            .iter()
            .filter_map(|server| server.pid())
            .collect();
        pids.sort_unstable();
        pids
    }

    /// Pids (process groups) of the Kotlin compilers kept warm now.
    #[allow(dead_code)] // Not every test binary compiles Kotlin.
    pub fn kotlin_compiler_pids(&self) -> Vec<u32> {
        self.pool.kotlin_compiler_pids()
    }

    /// Ends the run and checks the process table: no process of any server (or Kotlin
    /// compiler) it ran is left.
    pub async fn shutdown(self) {
        let mut pids = self.server_pids();
        pids.extend(self.pool.kotlin_compiler_pids());
        self.registry.shutdown(Duration::from_secs(5)).await;
        for pid in pids {
            assert_group_gone(pid).await;
        }
    }
}

/// Every entry under `dir` with its bytes, to compare trees byte for byte.
#[allow(unused_imports)] // Not every test binary compares trees.
pub use cc_test_support::tree_snapshot as tree;

/// Makes `file` impossible to replace: a read-only folder for an ordinary user; for root,
/// whom permissions do not stop, the immutable attribute. Undone on drop.
pub struct Locked {
    file: PathBuf,
    immutable: bool,
}

impl Locked {
    pub fn new(file: &Path) -> Option<Locked> {
        use std::os::unix::fs::PermissionsExt;
        let folder = file.parent().unwrap();
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o555)).unwrap();
        let probe = folder.join(".probe");
        if std::fs::write(&probe, "").is_err() {
            return Some(Locked {
                file: file.to_path_buf(),
                immutable: false,
            });
        }
        // Permissions do not bind us (root).
        let _ = std::fs::remove_file(&probe);
        std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        let chattr = std::process::Command::new("chattr")
            .arg("+i")
            .arg(file)
            .status();
        if !chattr.is_ok_and(|s| s.success()) {
            missing_peer(
                "chattr",
                "running as root, a file can only be made unwritable with `chattr +i`",
            );
            return None;
        }
        Some(Locked {
            file: file.to_path_buf(),
            immutable: true,
        })
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        if self.immutable {
            let _ = std::process::Command::new("chattr")
                .arg("-i")
                .arg(&self.file)
                .status();
        }
        let folder = self.file.parent().unwrap();
        let _ = std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755));
    }
}

/// A compilation database for cmark's sources, as `cmake -DCMAKE_EXPORT_COMPILE_COMMANDS=ON`
/// would write it.
pub fn cmark_compile_commands(root: &std::path::Path) -> String {
    let mut entries = Vec::new();
    for dir in ["third_party/cmark/src", "third_party/cmark/extensions"] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "c"))
            .collect();
        files.sort();
        for file in files {
            entries.push(serde_json::json!({
                "directory": root,
                "file": file,
                "arguments": ["cc", "-std=c99", "-c", "-Ithird_party/cmark/src",
                    "-Ithird_party/cmark/extensions", "-Igenerated/unix", file],
            }));
        }
    }
    serde_json::to_string_pretty(&entries).unwrap()
}
