//! Shared fixtures of the structural tools' tests: a registry over a temporary root, calls
//! that return the JSON (an error as its envelope), and file helpers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_structural::Languages;
use serde_json::Value;

use crate::{AfterWrite, AllowAll, Approver, Registry, Resources, Run};

/// Records the paths the diagnostics-on-write hook is given.
#[derive(Default)]
pub(super) struct Recorder {
    pub(super) paths: Mutex<Vec<PathBuf>>,
}

#[async_trait]
impl AfterWrite for Recorder {
    async fn after_write(&self, paths: &[PathBuf]) -> crate::report::WriteReport {
        self.paths.lock().unwrap().extend_from_slice(paths);
        crate::report::WriteReport::checked(Default::default())
    }
}

/// A full-surface registry over `dir` with the parser set wired.
pub(super) fn registry_with(
    dir: &Path,
    approver: Arc<dyn Approver>,
    hook: Option<Arc<Recorder>>,
) -> Registry {
    Resources {
        parsers: Some(Arc::new(Languages::builtin())),
        after_write: hook.map(|h| h as Arc<dyn AfterWrite>),
        ..Default::default()
    }
    .build(
        Run::builder(dir)
            .conversation("structural")
            .approver(approver)
            .build(),
    )
}

/// [`registry_with`] approving everything, without a hook.
pub(super) fn registry(dir: &Path) -> Registry {
    registry_with(dir, Arc::new(AllowAll), None)
}

/// The call's JSON result, or its error envelope; a result is checked to be its tool's typed
/// report ([`crate::testing::assert_typed_result`]).
pub(super) async fn call(registry: &Registry, tool: &str, args: Value) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => {
            crate::testing::assert_typed_result(tool, &output.value, &output.render_text());
            output.value
        }
        Err(error) => error.to_envelope(),
    }
}

/// Writes `content` at `path` under `root`, creating folders.
pub(super) fn write(root: &Path, path: &str, content: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// The text of `path` under `root`.
pub(super) fn read(root: &Path, path: &str) -> String {
    std::fs::read_to_string(root.join(path)).unwrap()
}
