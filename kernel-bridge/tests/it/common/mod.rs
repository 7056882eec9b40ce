//! Helpers shared by the kernel integration tests: sessions tagged so their processes can be
//! found in /proc, a small in-memory bridge, and peers.

#![allow(dead_code)] // Each test binary uses a different subset.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_kernel_bridge::{
    Bridge, BridgeError, CellOutcome, CellRequest, KernelConfig, KernelError, KernelFactory,
    KernelSession, Language,
};
use serde_json::{json, Value};

/// The variable that tags every kernel process a test starts.
pub const TAG_VAR: &str = "CC_KERNEL_TEST_TAG";

/// A test's kernels, tagged with a unique value.
pub struct Kernels {
    pub session: KernelSession,
    pub tag: String,
    pub root: tempfile::TempDir,
    pub bridge: Arc<TestBridge>,
}

impl Kernels {
    pub fn new(config: KernelConfig) -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        Self::in_root(config, root)
    }

    pub fn in_root(config: KernelConfig, root: tempfile::TempDir) -> Self {
        let tag = cc_test_support::unique_tag("kernel");
        let session = KernelFactory::new(config)
            .with_env(TAG_VAR, tag.clone())
            .session(root.path());
        let bridge = Arc::new(TestBridge {
            root: root.path().to_path_buf(),
        });
        Kernels {
            session,
            tag,
            root,
            bridge,
        }
    }

    pub fn path(&self) -> &Path {
        self.root.path()
    }

    /// Runs a cell; panics if the kernel could not run it at all, or after two minutes.
    pub async fn run(&self, language: Language, code: &str) -> CellOutcome {
        self.run_request(CellRequest {
            language,
            code,
            reset: false,
        })
        .await
    }

    pub async fn py(&self, code: &str) -> CellOutcome {
        self.run(Language::Python, code).await
    }

    pub async fn js(&self, code: &str) -> CellOutcome {
        self.run(Language::Javascript, code).await
    }

    /// Runs a cell that may fail to run at all; panics after two minutes.
    pub async fn try_run(
        &self,
        language: Language,
        code: &str,
    ) -> Result<CellOutcome, KernelError> {
        self.try_request(CellRequest {
            language,
            code,
            reset: false,
        })
        .await
    }

    async fn try_request(&self, request: CellRequest<'_>) -> Result<CellOutcome, KernelError> {
        let bridge: Arc<dyn Bridge> = self.bridge.clone();
        tokio::time::timeout(Duration::from_secs(120), self.session.run(request, bridge))
            .await
            .unwrap_or_else(|_| panic!("cell did not finish within 2 minutes: {}", request.code))
    }

    pub async fn run_request(&self, request: CellRequest<'_>) -> CellOutcome {
        let outcome = self
            .try_request(request)
            .await
            .unwrap_or_else(|error| panic!("kernel error: {error}"));
        // Shown when the test fails; big outputs are cut to keep that readable.
        let shown = format!("{outcome:#?}");
        let shown: String = shown.chars().take(4000).collect();
        eprintln!("--- cell ---\n{}\n--- outcome ---\n{shown}", request.code);
        outcome
    }

    /// Shuts the session down and asserts that no process carrying the tag is left.
    pub async fn finish(self) {
        self.session.shutdown().await;
        assert_no_tagged_processes(&self.tag).await;
    }
}

/// Live processes whose environment carries `TAG_VAR=tag`.
pub fn tagged_processes(tag: &str) -> Vec<(u32, String)> {
    cc_test_support::tagged(TAG_VAR, tag)
}

/// How many of `processes` run `command` (their command line starts with it).
pub fn running(processes: &[(u32, String)], command: &str) -> usize {
    processes
        .iter()
        .filter(|(_, cmdline)| cmdline.starts_with(command))
        .count()
}

/// Polls the tagged processes until `enough` holds; returns the last look either way.
pub async fn wait_for_processes(
    tag: &str,
    enough: impl Fn(&[(u32, String)]) -> bool,
) -> Vec<(u32, String)> {
    cc_test_support::wait_for_tagged(TAG_VAR, tag, enough).await
}

/// An executable shell script standing in for an interpreter.
pub fn fake_interpreter(dir: &Path, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-interpreter");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).expect("write the script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Waits for killed processes to disappear, then asserts none is left.
pub async fn assert_no_tagged_processes(tag: &str) {
    cc_test_support::assert_no_tagged(TAG_VAR, tag).await;
}

/// Answers bridge calls: `read` (a file under the root), `slow` (sleeps `secs`), `echo`.
pub struct TestBridge {
    pub root: PathBuf,
}

#[async_trait]
impl Bridge for TestBridge {
    async fn call(&self, name: &str, args: Value) -> Result<Value, BridgeError> {
        match name {
            "read" => {
                let path = args["path"].as_str().unwrap_or_default();
                std::fs::read_to_string(self.root.join(path))
                    .map(|content| json!({ "content": content }))
                    .map_err(|error| BridgeError::new("not_found", error.to_string()))
            }
            "slow" => {
                let secs = args["secs"].as_f64().unwrap_or(1.0);
                let slept = args["secs"].clone();
                tokio::time::sleep(Duration::from_secs_f64(secs)).await;
                Ok(json!({ "slept": slept }))
            }
            "echo" => Ok(args),
            other => Err(BridgeError::new(
                "unknown_tool",
                format!("no tool named `{other}`"),
            )),
        }
    }
}

/// `python3` from PATH (the peers venv first when PATH has it), or None after a loud skip.
pub fn python() -> Option<PathBuf> {
    cc_test_support::require_peer("python3")
}

pub fn node() -> Option<PathBuf> {
    cc_test_support::require_peer("node")
}

#[allow(unused_imports)] // Not every test binary needs it.
pub use cc_test_support::python_with;

/// Asserts that one of the outcome's notices contains `needle`.
pub fn assert_notice(outcome: &CellOutcome, needle: &str) {
    assert!(
        outcome.notices.iter().any(|notice| notice.contains(needle)),
        "no notice says {needle:?}: {:?}",
        outcome.notices
    );
}

/// Asserts that the cell ended with an uncaught `ToolError` of `kind`.
pub fn assert_tool_error(outcome: &CellOutcome, kind: &str) {
    let error = outcome.error.as_ref().expect("the cell raised");
    assert_eq!(error.ename, "ToolError");
    assert!(
        error.evalue.starts_with(&format!("{kind}: ")),
        "{}",
        error.evalue
    );
}

/// Checks the outcome of a cell that displayed 20 items of `size` characters while a child
/// printed `line1` to `line2000`, and returned `'ok'`: nothing lost, nothing mixed.
pub fn assert_intact(outcome: &CellOutcome, size: usize) {
    assert_eq!(outcome.result.as_deref(), Some("'ok'"));
    assert!(outcome.error.is_none(), "{:?}", outcome.error);
    let sizes: Vec<usize> = outcome.display.iter().map(|item| item.data.len()).collect();
    assert_eq!(sizes, vec![size; 20]);
    let expected: String = (1..=2000).map(|i| format!("line{i}\n")).collect();
    assert_eq!(outcome.stdout, expected);
}

/// A configuration using `python` and quick limits for tests.
pub fn config(python: Option<PathBuf>) -> KernelConfig {
    KernelConfig {
        python,
        inactivity_budget: Duration::from_secs(60),
        ..KernelConfig::default()
    }
}
