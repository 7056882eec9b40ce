//! Shared fixtures of the structural tools' tests: a registry over a temporary root, calls
//! that return the JSON (an error as its envelope), and file helpers.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cc_structural::Languages;
use serde_json::Value;

use crate::report::structural::{AstEditReport, GrepResult, ResolveReport};
use crate::report::Render;
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

/// The call's JSON result, or its error envelope. A result is its tool's typed report: read
/// back as that type, it serializes to the same JSON and renders the same text.
pub(super) async fn call(registry: &Registry, tool: &str, args: Value) -> Value {
    match registry.call(tool, args).await {
        Ok(output) => {
            let text = output.render_text();
            match tool {
                "ast_grep" => reads_back::<GrepResult>(&output.value, &text),
                "ast_edit" => reads_back::<AstEditReport>(&output.value, &text),
                "resolve" => reads_back::<ResolveReport>(&output.value, &text),
                _ => {}
            }
            output.value
        }
        Err(error) => error.to_envelope(),
    }
}

/// `value` reads back as `R`, which serializes to `value` and renders `text`.
pub(super) fn reads_back<R>(value: &Value, text: &str)
where
    R: serde::de::DeserializeOwned + serde::Serialize + Render,
{
    let report: R = serde_json::from_value(value.clone())
        .unwrap_or_else(|error| panic!("not the typed report ({error}): {value:#}"));
    assert_eq!(&serde_json::to_value(&report).unwrap(), value);
    assert_eq!(report.render(), text);
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
