//! `eval` through a real registry and real interpreters: the result shape, the bridge and
//! its guards (approver, wrappers), images, progress, argument errors, and the run's shutdown.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cc_kernel_bridge::{KernelConfig, KernelFactory};
use serde_json::{json, Value};

use super::{EvalTool, KernelShutdown};
use crate::approve::{AllowAll, Approval, ApprovalRequest, Approver};
use crate::registry::{AfterWrite, CallOptions, Registry, RegistryBuilder, Run};
use crate::resources::Resources;
use crate::tier::{Surface, Tier};
use crate::tool::{Origin, ProgressSink, ToolOutput};
use crate::ToolError;

const TAG_VAR: &str = "CC_EVAL_TEST_TAG";

/// A run with kernels whose processes carry a unique tag, so the test can find them.
struct Fixture {
    registry: Registry,
    dir: tempfile::TempDir,
    tag: String,
}

fn python() -> Option<PathBuf> {
    cc_test_support::require_peer("python3")
}

/// Kernel settings with the peers' python, or None after a loud skip.
fn with_python() -> Option<KernelConfig> {
    Some(KernelConfig {
        python: Some(python()?),
        ..Default::default()
    })
}

fn run_in(dir: &Path, approver: Arc<dyn Approver>) -> Run {
    Run::builder(dir)
        .conversation("eval-test")
        .approver(approver)
        .build()
}

/// A registry built from `resources` in a fresh root (for runs that start no kernel).
fn registry_of(resources: Resources) -> (Registry, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    (resources.build(run_in(dir.path(), Arc::new(AllowAll))), dir)
}

impl Fixture {
    /// The host file tools and `eval`.
    fn new(approver: Arc<dyn Approver>, config: KernelConfig) -> Self {
        Self::wired(approver, config, |_| {})
    }

    /// Like [`Fixture::new`], with more resources wired by `wire`.
    fn wired(
        approver: Arc<dyn Approver>,
        config: KernelConfig,
        wire: impl FnOnce(&mut Resources),
    ) -> Self {
        Self::build(config, |mut run, factory| {
            let mut resources = Resources {
                host_files: true,
                kernels: Some(Arc::new(factory)),
                ..Default::default()
            };
            wire(&mut resources);
            run.approver = approver;
            resources.build(run)
        })
    }

    fn build(config: KernelConfig, registry: impl FnOnce(Run, KernelFactory) -> Registry) -> Self {
        let tag = cc_test_support::unique_tag("eval");
        let dir = tempfile::tempdir().unwrap();
        let factory = KernelFactory::new(config).with_env(TAG_VAR, tag.clone());
        let registry = registry(run_in(dir.path(), Arc::new(AllowAll)), factory);
        Fixture { registry, dir, tag }
    }

    async fn eval(&self, args: Value) -> Result<ToolOutput, ToolError> {
        self.eval_with(args, CallOptions::default()).await
    }

    async fn eval_with(&self, args: Value, options: CallOptions) -> Result<ToolOutput, ToolError> {
        let result = tokio::time::timeout(
            Duration::from_secs(120),
            self.registry.call_with("eval", args, options),
        )
        .await
        .expect("eval finished within 2 minutes");
        if let Ok(output) = &result {
            crate::testing::assert_typed_result("eval", &output.value, &output.render_text());
        }
        result
    }

    async fn py(&self, code: &str) -> Value {
        let output = self
            .eval(json!({"code": code, "description": "run a test cell in python"}))
            .await
            .unwrap();
        eprintln!("{code}\n=> {:#}", output.value);
        output.value
    }

    /// Polls (up to `GONE_WITHIN`) until `enough` holds for the command lines of this run's
    /// live kernel processes and their children; returns the last look.
    async fn wait_for_processes(&self, enough: impl Fn(&[String]) -> bool) -> Vec<String> {
        let cmdlines = |seen: &[(u32, String)]| -> Vec<String> {
            seen.iter().map(|(_, cmdline)| cmdline.clone()).collect()
        };
        let seen =
            cc_test_support::wait_for_tagged(TAG_VAR, &self.tag, |seen| enough(&cmdlines(seen)))
                .await;
        cmdlines(&seen)
    }

    /// Shuts the run down and asserts that no process of its kernels is left.
    async fn finish(self) {
        self.registry.shutdown(Duration::from_secs(10)).await;
        let left = self.wait_for_processes(<[String]>::is_empty).await;
        assert!(
            left.is_empty(),
            "kernel processes outlived the run: {left:?}"
        );
    }
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
    let fixture = Fixture::new(Arc::new(AllowAll), KernelConfig::default());
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

    let (unwired, _dir) = registry_of(Resources {
        host_files: true,
        ..Default::default()
    });
    assert!(!unwired.tool_names().contains(&"eval".to_owned()));
    fixture.finish().await;
}

#[tokio::test]
async fn cells_keep_state_and_read_files_through_the_registry() {
    let Some(config) = with_python() else { return };
    let fixture = Fixture::new(Arc::new(AllowAll), config);
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
    let Some(config) = with_python() else { return };
    let approver = Arc::new(NoWritesFromKernels::default());
    let fixture = Fixture::new(approver.clone(), config);
    let denied = fixture
        .py("try:\n    tool('write', {'path': 'x.txt', 'content': 'no'})\nexcept ToolError as e:\n    caught = (e.kind, e.message)\ncaught")
        .await;
    let result = denied["result"].as_str().unwrap();
    assert!(result.starts_with("('denied', "), "{result}");
    assert!(result.contains("kernels may not write files"), "{result}");
    assert!(!fixture.dir.path().join("x.txt").exists());

    // Uncaught, each refusal ends the cell with a ToolError of its kind: a tool this run
    // does not have (not wired, like `lsp` here), a serialized tool called from inside
    // itself, and bad arguments.
    for (cell, kind) in [
        ("tool('lsp', {'op': 'status'})", "unknown_tool"),
        (
            "tool('eval', {'code': '1', 'description': 'nested cell that must be refused'})",
            "reentrant",
        ),
        ("tool('read', {'nope': 1})", "invalid_arguments"),
    ] {
        let refused = fixture.py(cell).await;
        assert_eq!(refused["error"]["ename"], "ToolError", "{refused}");
        let evalue = refused["error"]["evalue"].as_str().unwrap();
        assert!(evalue.starts_with(&format!("{kind}: ")), "{cell}: {evalue}");
    }

    let seen = approver.seen.lock().unwrap().clone();
    assert!(seen.contains(&("write".to_owned(), Origin::Bridge { via: "eval".into() })));
    assert!(seen.contains(&("eval".to_owned(), Origin::Model)));
    fixture.finish().await;
}

/// Records the paths it is given and answers like a language server with nothing new.
#[derive(Default)]
struct RecordWrites(Mutex<Vec<PathBuf>>);

#[async_trait]
impl AfterWrite for RecordWrites {
    async fn after_write(&self, paths: &[PathBuf]) -> crate::report::WriteReport {
        self.0.lock().unwrap().extend_from_slice(paths);
        crate::report::WriteReport::checked(crate::report::WriteDiagnostics {
            pending: vec!["test-server".into()],
            ..Default::default()
        })
    }
}

#[tokio::test]
async fn an_allowed_bridge_write_passes_the_same_wrappers_as_a_model_write() {
    let Some(config) = with_python() else { return };
    let hook = Arc::new(RecordWrites::default());
    let fixture = Fixture::wired(Arc::new(AllowAll), config, |resources| {
        resources.after_write = Some(hook.clone());
    });
    let written = fixture
        .py("r = tool('write', {'path': 'b.txt', 'content': 'from a kernel'})\n(open('b.txt').read(), r['diagnostics'])")
        .await;
    assert_eq!(
        written["result"],
        "('from a kernel', {'new': [], 'pending': ['test-server'], 'unchecked': []})"
    );
    let root = fixture.dir.path().canonicalize().unwrap();
    assert_eq!(*hook.0.lock().unwrap(), [root.join("b.txt")]);
    fixture.finish().await;
}

#[tokio::test]
async fn figures_become_images_and_javascript_awaits_tools() {
    let Some(config) = with_python() else { return };
    let python = config.python.clone().unwrap();
    let has_matplotlib = std::process::Command::new(&python)
        .args(["-c", "import matplotlib"])
        .status()
        .is_ok_and(|status| status.success());
    let node = cc_test_support::require_peer("node");
    let fixture = Fixture::new(
        Arc::new(AllowAll),
        KernelConfig {
            node: node.clone(),
            ..config
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
        // Issue 28, item 9: the image once, as image content; the JSON names it.
        assert_eq!(output.value["display"][0]["attached"], "image");
        assert!(output.value["display"][0].get("data").is_none());
        assert!(!output
            .value
            .to_string()
            .contains(&output.images[0].data_base64));
        let text = output.text.unwrap();
        assert!(
            text.contains("[image/png image, ")
                && text.contains("attached to this result as an image"),
            "{text}"
        );
    } else {
        cc_test_support::missing_peer("matplotlib", "python3 cannot import it");
    }

    if node.is_some() {
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

/// Collects progress reports.
#[derive(Default)]
struct Progress(Mutex<Vec<(f64, Option<String>)>>);

impl ProgressSink for Progress {
    fn report(&self, progress: f64, _total: Option<f64>, message: Option<&str>) {
        self.0
            .lock()
            .unwrap()
            .push((progress, message.map(str::to_owned)));
    }
}

#[tokio::test]
async fn a_long_cell_reports_progress_to_a_caller_that_listens() {
    let Some(config) = with_python() else { return };
    let fixture = Fixture::build(config, |run, factory| {
        let session = factory.session(run.root.path());
        let eval = EvalTool::new(session.clone()).with_progress_every(Duration::from_millis(200));
        RegistryBuilder::new(run)
            .tool(Arc::new(eval))
            .on_shutdown(Arc::new(KernelShutdown(session)))
            .build()
    });
    let progress = Arc::new(Progress::default());
    let output = fixture
        .eval_with(
            json!({"code": "import time\ntime.sleep(1.5)\n'done'", "description": "wait a second and a half"}),
            CallOptions {
                progress: Some(progress.clone()),
                ..CallOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(output.value["result"], "'done'");
    let reports = progress.0.lock().unwrap().clone();
    assert!(!reports.is_empty(), "no progress during a 1.5 s cell");
    assert!(
        reports.windows(2).all(|pair| pair[0].0 <= pair[1].0),
        "{reports:?}"
    );
    let message = reports[0].1.as_deref().unwrap_or_default();
    assert!(
        message.starts_with("the python cell has run for"),
        "{message}"
    );
    fixture.finish().await;
}

#[tokio::test]
async fn bad_arguments_and_configuration_get_clear_errors() {
    let fixture = Fixture::new(Arc::new(AllowAll), KernelConfig::default());
    let long = "word ".repeat(60);
    for (args, expected) in [
        (json!({"code": "1"}), "description"),
        (json!({"code": "1", "description": "  "}), "5–10 words"),
        (
            json!({"code": "1", "description": long}),
            "not an explanation",
        ),
        (
            json!({"code": "1", "description": "try ruby", "language": "ruby"}),
            "javascript",
        ),
        (
            json!({"code": "1", "description": "a b", "timeout": 3}),
            "timeout",
        ),
    ] {
        let error = fixture.eval(args.clone()).await.unwrap_err();
        assert_eq!(error.kind(), "invalid_arguments", "{args}");
        assert!(error.message().contains(expected), "{args}: {error}");
    }
    fixture.finish().await;

    let broken = KernelFactory::broken(cc_workspace::BrokenSection::new(
        "kernel",
        "`inactivity_budget_secs` must be a positive number of seconds, got -1",
    ));
    let missing = KernelFactory::new(KernelConfig {
        python: Some(PathBuf::from("/nonexistent/no-python-here")),
        ..Default::default()
    });
    for (factory, kind, expected) in [
        (broken, "misconfigured", "inactivity_budget_secs"),
        (missing, "interpreter_not_found", "python = "),
    ] {
        let (registry, _dir) = registry_of(Resources {
            kernels: Some(Arc::new(factory)),
            ..Default::default()
        });
        let error = registry
            .call(
                "eval",
                json!({"code": "1", "description": "run with a broken kernel setup"}),
            )
            .await
            .unwrap_err();
        assert_eq!(error.kind(), kind, "{error}");
        assert!(error.message().contains(expected), "{error}");
        assert_eq!(error.details()["language"], "python");
    }
}

#[tokio::test]
async fn shutdown_kills_a_running_cell_and_its_children() {
    let Some(config) = with_python() else { return };
    let fixture = Fixture::new(Arc::new(AllowAll), config);
    let registry = fixture.registry.clone();
    let running = tokio::spawn(async move {
        registry
            .call(
                "eval",
                json!({"code": "print('started', flush=True)\n!sleep 200 &\nimport time\ntime.sleep(200)", "description": "sleep for a long time"}),
            )
            .await
    });
    // The cell runs (and has printed) once `sleep` is there: the kernel alone could still be
    // starting, and a run that ends then only stops the start.
    let sleeping = |seen: &[String]| seen.iter().any(|cmd| cmd.starts_with("sleep 200"));
    let seen = fixture.wait_for_processes(sleeping).await;
    assert!(sleeping(&seen), "{seen:?}");
    tokio::time::timeout(
        Duration::from_secs(10),
        fixture.registry.shutdown(Duration::from_secs(5)),
    )
    .await
    .expect("shutdown finished in time");
    let interrupted = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the running cell ended")
        .unwrap()
        .unwrap();
    assert_eq!(interrupted.value["state"], "lost");
    assert_eq!(interrupted.value["stdout"], "started\n");
    let notices = interrupted.value["notices"].to_string();
    assert!(notices.contains("the run ended"), "{notices}");
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
        cancelled: false,
        notices: vec!["The cell produced no output for 300 s (the inactivity budget) and was interrupted; the kernel and earlier state are kept.".into()],
    };
    let report = crate::report::eval::EvalReport::from(&outcome);
    insta::assert_snapshot!("eval_text", crate::report::Render::render(&report));
    let json = serde_json::to_value(&report).unwrap();
    insta::assert_json_snapshot!("eval_json_with_everything", json);
    // The JSON reads back as the same report.
    assert_eq!(
        serde_json::from_value::<crate::report::eval::EvalReport>(json).unwrap(),
        report
    );
}

#[tokio::test]
async fn a_cancelled_call_interrupts_its_cell_and_the_next_eval_works() {
    let Some(config) = with_python() else { return };
    let fixture = Fixture::new(Arc::new(AllowAll), config);
    fixture.py("kept = 1").await;
    let cancel = crate::Cancellation::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let output = fixture
        .eval_with(
            json!({"code": "while True:\n    pass", "description": "spin until cancelled"}),
            CallOptions {
                cancel: Some(cancel),
                ..CallOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(output.value["cancelled"], true, "{}", output.value);
    assert_eq!(output.value["state"], "kept");
    assert_eq!(fixture.py("kept + 1").await["result"], "2");
    fixture.finish().await;
}

#[tokio::test]
async fn the_language_enum_lists_what_is_accepted() {
    let (registry, _dir) = registry_of(Resources {
        kernels: Some(Arc::new(KernelFactory::new(KernelConfig::default()))),
        ..Default::default()
    });
    let schema = registry
        .schemas(Surface::Full)
        .into_iter()
        .find(|s| s.name == "eval")
        .unwrap()
        .input_schema;
    let text = schema.to_string();
    assert!(
        text.contains("\"python\"") && text.contains("\"javascript\""),
        "{text}"
    );
    // An alias the schema does not list is refused, naming what is accepted.
    let error = registry
        .call(
            "eval",
            json!({"code": "1", "description": "try the js alias", "language": "js"}),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind(), "invalid_arguments");
    assert!(
        error.message().contains("javascript"),
        "{}",
        error.message()
    );
}
