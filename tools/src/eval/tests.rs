//! `eval` through a real registry and real interpreters: the result shape, the bridge and
//! its guards, images, argument errors, and the run's shutdown.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cc_kernel_bridge::{KernelConfig, KernelFactory};
use serde_json::{json, Value};

use crate::approve::{AllowAll, Approval, ApprovalRequest, Approver};
use crate::registry::{Registry, Run};
use crate::resources::Resources;
use crate::root::WorkspaceRoot;
use crate::tier::{Surface, Tier};
use crate::tool::{Origin, ToolOutput};
use crate::ToolError;

const TAG_VAR: &str = "CC_EVAL_TEST_TAG";

struct Fixture {
    registry: Registry,
    dir: tempfile::TempDir,
    tag: String,
}

fn python() -> Option<std::path::PathBuf> {
    cc_process::testing::require_peer("python3")
}

fn fixture(approver: Arc<dyn Approver>, config: KernelConfig) -> Fixture {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let tag = format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let dir = tempfile::tempdir().unwrap();
    let run = Run {
        conversation_id: "eval-test".into(),
        root: WorkspaceRoot::new(dir.path()).unwrap(),
        surface: Surface::Full,
        approver,
    };
    let factory = KernelFactory::new(config).with_env(TAG_VAR, tag.clone());
    let registry = Resources {
        host_files: true,
        kernels: Some(Arc::new(factory)),
        ..Default::default()
    }
    .build(run);
    Fixture { registry, dir, tag }
}

impl Fixture {
    async fn eval(&self, args: Value) -> Result<ToolOutput, ToolError> {
        tokio::time::timeout(Duration::from_secs(120), self.registry.call("eval", args))
            .await
            .expect("eval finished within 2 minutes")
    }

    async fn py(&self, code: &str) -> Value {
        let output = self
            .eval(json!({"code": code, "description": "run a test cell in python"}))
            .await
            .unwrap();
        eprintln!("{code}\n=> {:#}", output.value);
        output.value
    }

    /// Shuts the run down and asserts that no process of its kernels is left.
    async fn finish(self) {
        self.registry.shutdown(Duration::from_secs(10)).await;
        let needle = format!("{TAG_VAR}={}", self.tag);
        let mut left = Vec::new();
        for _ in 0..50 {
            left = live_processes_with(&needle);
            if left.is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("kernel processes outlived the run: {left:?}");
    }
}

fn live_processes_with(needle: &str) -> Vec<u32> {
    let needle = needle.as_bytes();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == needle))
        })
        .collect()
}

/// Allows model calls and read-tier bridge calls; refuses write-tier calls from a kernel.
#[derive(Default)]
struct NoWritesFromKernels {
    seen: Mutex<Vec<(String, Origin)>>,
}

#[async_trait]
impl Approver for NoWritesFromKernels {
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval {
        self.seen
            .lock()
            .unwrap()
            .push((request.tool.to_owned(), request.origin.clone()));
        match request.origin {
            Origin::Bridge { .. } if request.tier == Tier::Write => Approval::Deny {
                reason: "kernels may not write files in this test".into(),
            },
            _ => Approval::Allow,
        }
    }
}

#[tokio::test]
async fn eval_is_an_exec_tool_that_runs_serially_and_only_when_wired() {
    let fixture = fixture(Arc::new(AllowAll), KernelConfig::default());
    let schemas = fixture.registry.schemas(Surface::Full);
    let eval = schemas.iter().find(|schema| schema.name == "eval").unwrap();
    assert_eq!(eval.tier, Tier::Exec);
    assert!(!eval.parallel_safe);
    insta::assert_json_snapshot!("eval_input_schema", eval.input_schema);
    assert!(fixture
        .registry
        .schemas(Surface::Plan)
        .iter()
        .all(|schema| schema.name != "eval"));

    let dir = tempfile::tempdir().unwrap();
    let unwired = Resources {
        host_files: true,
        ..Default::default()
    }
    .build(Run {
        conversation_id: "none".into(),
        root: WorkspaceRoot::new(dir.path()).unwrap(),
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    });
    assert!(!unwired.tool_names().contains(&"eval".to_owned()));
    fixture.finish().await;
}

#[tokio::test]
async fn cells_keep_state_and_read_files_through_the_registry() {
    let Some(python) = python() else { return };
    let fixture = fixture(
        Arc::new(AllowAll),
        KernelConfig {
            python: Some(python),
            ..Default::default()
        },
    );
    std::fs::write(fixture.dir.path().join("notes.md"), "alpha\nbeta\n").unwrap();
    fixture.py("count = 41").await;
    let value = fixture
        .py("r = tool('read', {'path': 'notes.md'})\nprint(type(r).__name__, 'content' in r)\ncount += 1\ncount")
        .await;
    insta::assert_json_snapshot!("eval_reads_through_the_bridge", value);
    let content = fixture.py("r['content']").await;
    assert!(
        content["result"].as_str().unwrap().contains("alpha"),
        "{content}"
    );

    let mut failed = fixture.py("1/0").await;
    let traceback = failed["error"]["traceback"].take();
    assert!(
        traceback.as_str().unwrap().contains("File \"<cell-"),
        "{traceback}"
    );
    insta::assert_json_snapshot!("eval_error", failed);
    fixture.finish().await;
}

#[tokio::test]
async fn bridge_calls_pass_the_approver_and_refusals_raise_tool_error() {
    let Some(python) = python() else { return };
    let approver = Arc::new(NoWritesFromKernels::default());
    let fixture = fixture(
        approver.clone(),
        KernelConfig {
            python: Some(python),
            ..Default::default()
        },
    );
    let denied = fixture
        .py("try:\n    tool('write', {'path': 'x.txt', 'content': 'no'})\nexcept ToolError as e:\n    caught = (e.kind, e.message)\ncaught")
        .await;
    let result = denied["result"].as_str().unwrap();
    assert!(result.starts_with("('denied', "), "{result}");
    assert!(result.contains("kernels may not write files"), "{result}");
    assert!(!fixture.dir.path().join("x.txt").exists());

    let unknown = fixture.py("tool('no_such_tool', {})").await;
    assert_eq!(unknown["error"]["ename"], "ToolError");
    assert!(unknown["error"]["evalue"]
        .as_str()
        .unwrap()
        .starts_with("unknown_tool: "));

    // eval is serialized: a cell cannot call eval.
    let nested = fixture
        .py("tool('eval', {'code': '1', 'description': 'nested cell that must be refused'})")
        .await;
    assert!(
        nested["error"]["evalue"]
            .as_str()
            .unwrap()
            .starts_with("reentrant: "),
        "{nested}"
    );

    let bad_args = fixture.py("tool('read', {'nope': 1})").await;
    assert!(bad_args["error"]["evalue"]
        .as_str()
        .unwrap()
        .starts_with("invalid_arguments: "));

    let seen = approver.seen.lock().unwrap().clone();
    assert!(seen.contains(&("write".to_owned(), Origin::Bridge { via: "eval".into() })));
    assert!(seen.contains(&("eval".to_owned(), Origin::Model)));
    fixture.finish().await;
}

#[tokio::test]
async fn an_allowed_bridge_write_goes_through_the_host_write_tool() {
    let Some(python) = python() else { return };
    let fixture = fixture(
        Arc::new(AllowAll),
        KernelConfig {
            python: Some(python),
            ..Default::default()
        },
    );
    let written = fixture
        .py("tool('write', {'path': 'b.txt', 'content': 'from a kernel'})\nopen('b.txt').read()")
        .await;
    assert_eq!(written["result"], "'from a kernel'");
    fixture.finish().await;
}

#[tokio::test]
async fn figures_become_images_and_javascript_awaits_tools() {
    let Some(python) = python() else { return };
    let has_matplotlib = std::process::Command::new(&python)
        .args(["-c", "import matplotlib"])
        .status()
        .is_ok_and(|status| status.success());
    let fixture = fixture(
        Arc::new(AllowAll),
        KernelConfig {
            python: Some(python),
            node: cc_process::testing::require_peer("node"),
            ..Default::default()
        },
    );
    if has_matplotlib {
        let output = fixture
            .eval(json!({
                "code": "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
                "description": "plot three points as a line",
            }))
            .await
            .unwrap();
        assert_eq!(output.images.len(), 1);
        assert_eq!(output.images[0].mime, "image/png");
        assert_eq!(output.value["display"][0]["mime"], "image/png");
        assert_eq!(
            output.value["display"][0]["data"],
            output.images[0].data_base64
        );
        assert!(output.text.unwrap().contains("[image/png image"));
    } else {
        cc_process::testing::missing_peer("matplotlib", "python3 cannot import it");
    }

    if cc_process::find_on_path("node").is_some() {
        std::fs::write(fixture.dir.path().join("n.txt"), "node reads").unwrap();
        let output = fixture
            .eval(json!({
                "code": "const r = await tool('read', { path: 'n.txt' }); r.content",
                "description": "read a file from javascript",
                "language": "javascript",
            }))
            .await
            .unwrap();
        assert_eq!(output.value["result"], "'node reads'");
        assert_eq!(output.value["state"], "kept");
    }
    fixture.finish().await;
}

#[tokio::test]
async fn bad_arguments_and_configuration_get_clear_errors() {
    let fixture = fixture(Arc::new(AllowAll), KernelConfig::default());
    let missing = fixture.eval(json!({"code": "1"})).await.unwrap_err();
    assert_eq!(missing.kind(), "invalid_arguments");
    assert!(missing.message().contains("description"), "{missing}");
    let blank = fixture
        .eval(json!({"code": "1", "description": "  "}))
        .await
        .unwrap_err();
    assert!(blank.message().contains("5–10 words"), "{blank}");
    let language = fixture
        .eval(json!({"code": "1", "description": "try ruby", "language": "ruby"}))
        .await
        .unwrap_err();
    assert_eq!(language.kind(), "invalid_arguments");
    assert!(language.message().contains("javascript"), "{language}");
    fixture.finish().await;

    let dir = tempfile::tempdir().unwrap();
    let broken = Resources {
        kernels: Some(Arc::new(KernelFactory::misconfigured(
            "`inactivity_budget_secs` must be a positive number of seconds, got -1",
        ))),
        ..Default::default()
    }
    .build(Run {
        conversation_id: "broken".into(),
        root: WorkspaceRoot::new(dir.path()).unwrap(),
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    });
    let error = broken
        .call(
            "eval",
            json!({"code": "1", "description": "check the broken configuration"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "misconfigured");
    assert!(
        error.message().contains("inactivity_budget_secs"),
        "{error}"
    );

    let no_python = fixture_with_missing_python();
    let error = no_python
        .call(
            "eval",
            json!({"code": "1", "description": "run with a missing interpreter"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "interpreter_not_found");
    assert!(error.message().contains("python = "), "{error}");
}

fn fixture_with_missing_python() -> Registry {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-python-here");
    Resources {
        kernels: Some(Arc::new(KernelFactory::new(KernelConfig {
            python: Some(missing),
            ..Default::default()
        }))),
        ..Default::default()
    }
    .build(Run {
        conversation_id: "missing".into(),
        root: WorkspaceRoot::new(dir.path()).unwrap(),
        surface: Surface::Full,
        approver: Arc::new(AllowAll),
    })
}

#[tokio::test]
async fn shutdown_kills_a_running_cell_and_its_children() {
    let Some(python) = python() else { return };
    let fixture = fixture(
        Arc::new(AllowAll),
        KernelConfig {
            python: Some(python),
            ..Default::default()
        },
    );
    let registry = fixture.registry.clone();
    let running = tokio::spawn(async move {
        registry
            .call(
                "eval",
                json!({"code": "!sleep 200 &\nprint('started', flush=True)\nimport time\ntime.sleep(200)", "description": "sleep for a long time"}),
            )
            .await
    });
    let needle = format!("{TAG_VAR}={}", fixture.tag);
    for _ in 0..100 {
        if live_processes_with(&needle).len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(live_processes_with(&needle).len() >= 2);
    let registry = fixture.registry.clone();
    tokio::time::timeout(
        Duration::from_secs(10),
        registry.shutdown(Duration::from_secs(5)),
    )
    .await
    .expect("shutdown finished in time");
    let interrupted = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the running cell ended")
        .unwrap()
        .unwrap();
    assert_eq!(interrupted.value["state"], "lost");
    let after = fixture
        .eval(json!({"code": "1", "description": "run after the run ended"}))
        .await
        .unwrap_err();
    assert_eq!(after.kind(), "shut_down");
    fixture.finish().await;
}

#[test]
fn the_text_rendering_shows_output_values_errors_and_what_happened() {
    use cc_kernel_bridge::{CellError, CellOutcome, DisplayItem, Language, StateStatus, Truncated};
    let outcome = CellOutcome {
        language: Language::Python,
        stdout: "step 1\nstep 2\n".into(),
        stderr: "warning: slow\n".into(),
        result: None,
        display: vec![
            DisplayItem {
                mime: "text/html".into(),
                data: "<table></table>".into(),
            },
            DisplayItem {
                mime: "text/plain".into(),
                data: "   a\n0  1".into(),
            },
            DisplayItem {
                mime: "image/png".into(),
                data: "iVBORw0KGgoAAAA=".into(),
            },
        ],
        error: Some(CellError {
            ename: "KeyboardInterrupt".into(),
            evalue: String::new(),
            traceback: "Traceback (most recent call last):\n  File \"<cell-3>\", line 2, in <module>\nKeyboardInterrupt\n".into(),
        }),
        truncated: Some(Truncated {
            stdout: 1200,
            stderr: 0,
        }),
        state: StateStatus::Kept,
        timed_out: true,
        notices: vec!["The cell produced no output for 300 s (the inactivity budget) and was interrupted; the kernel and earlier state are kept.".into()],
    };
    insta::assert_snapshot!("eval_text", super::render::text(&outcome));
    insta::assert_json_snapshot!("eval_json_with_everything", super::render::json(&outcome));
}
