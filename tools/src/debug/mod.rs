//! `debug`: drives one debug session per run through [`cc_dap_client::DebugSession`].
//!
//! Exec tier (it starts and controls processes) and not parallel-safe (the session is
//! per-run state). Paths are confined to the workspace root; every result that concerns a
//! session says where the program is (`stopped` or `exited`).

mod args;
mod render;

pub use render::{DebugReport, Options as RenderOptions};

use std::sync::Arc;

use async_trait::async_trait;
use cc_dap_client::report::{OutputReport, ProgramState};
use cc_dap_client::{Action, DebugError, DebugSession, Interrupt, LaunchRequest};
use serde_json::Value;

use crate::error::ToolError;
use crate::registry::{RegistryBuilder, Shutdown};
use crate::root::WorkspaceRoot;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

pub use args::{DebugArgs, Op};

/// The `debug` tool of one run.
#[derive(Debug, Clone)]
pub struct DebugTool {
    debugger: Arc<DebugSession>,
    root: WorkspaceRoot,
}

impl DebugTool {
    /// A `debug` tool over `debugger`, with paths confined to `root`.
    pub fn new(debugger: Arc<DebugSession>, root: WorkspaceRoot) -> Self {
        DebugTool { debugger, root }
    }

    /// What `launch` asks for: a program (confined to the workspace), a module or a test.
    fn launch_request(&self, args: &DebugArgs) -> Result<LaunchRequest, ToolError> {
        let program_args = args.args.clone().unwrap_or_default();
        let mut request = match (args.program.clone(), args.module.clone(), args.test.clone()) {
            (Some(program), _, _) => {
                let program = self.root.resolve_existing(&program)?;
                LaunchRequest::program(program, &program_args)
            }
            (None, Some(module), _) => LaunchRequest::module(module, &program_args),
            (None, None, test) => {
                LaunchRequest::test(test.unwrap_or_default()).with_args(&program_args)
            }
        };
        request.adapter = args.adapter.clone();
        request.wait = args.wait();
        request.exceptions = args.exceptions.clone();
        Ok(request)
    }
}

/// Kills the run's debug session when the run ends.
#[derive(Debug, Clone)]
pub struct DebugShutdown(pub Arc<DebugSession>);

#[async_trait]
impl Shutdown for DebugShutdown {
    async fn shutdown(&self) {
        self.0.shutdown().await;
    }
}

/// Registers `debug` and its shutdown hook.
pub fn register(builder: &mut RegistryBuilder, debugger: Arc<DebugSession>) {
    let root = builder.run().root.clone();
    builder.add_tool(Arc::new(DebugTool::new(debugger.clone(), root)));
    builder.add_shutdown(Arc::new(DebugShutdown(debugger)));
}

fn tool_error(op: Op, error: DebugError) -> ToolError {
    let message = match &error {
        // The run's scope, which the debugger does not know of.
        DebugError::SessionActive { describe } => format!(
            "a debug session is already live ({describe}); only one session per conversation: \
             call `terminate` first, then launch again"
        ),
        _ => error.to_string(),
    };
    ToolError::new(error.kind(), message).with_detail("op", op.name())
}

/// `output` before any program ran, its note in the run's words.
fn run_worded(mut report: OutputReport) -> OutputReport {
    if report.position.state == ProgramState::None {
        report.note = Some("no program has run in this conversation yet".into());
    }
    report
}

/// Fires when the call is cancelled, so a blocking wait returns at once.
fn interrupt(ctx: &CallContext) -> Interrupt {
    let cancel = ctx.cancellation().clone();
    Interrupt::new(async move { cancel.cancelled().await })
}

#[async_trait]
impl Tool for DebugTool {
    fn name(&self) -> &str {
        "debug"
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn description(&self) -> &str {
        "Debug a program or a failing test with a real debugger (debugpy for Python, lldb for \
         native executables and Rust tests, delve for Go, dart): one `op` per call, one session \
         per conversation. Typical flow: `breakpoints` {file, lines} (allowed before launch), \
         `launch` with one of {program} (script, package, executable), {module} (python -m) \
         or {test} (`tests/test_x.py::test_y` or `-k expr` for pytest, `./pkg -run TestName` \
         for go test, a cargo test name), plus `args?`; it runs until the first stop or exit. \
         Every stop result shows the source around the line and the frame's locals with their \
         references. Then `locals` {frame_id?, scope?}, `stack`, `scopes` {frame_id}, \
         `variables` {reference}, `evaluate` {expression, frame_id?}, \
         `step_over`/`step_in`/`step_out`, `continue`, `pause`, `threads`, `output` (in every \
         state, also after a failed launch), and `terminate` when done. Frame ids and \
         references are valid until the program next runs (older ones are refused as \
         `stale_reference`). `attach` {port} connects to a Python process listening with \
         debugpy. `adapters` says which debuggers work here and why not; `status` where the \
         session is. launch, continue and the steps block until the program stops or exits, \
         up to `wait_s` seconds (default 30), and a cancelled call returns at once. A launch \
         after the program exited ends that session itself; while it runs or is stopped, a \
         second launch is refused; sessions are killed after 30 minutes."
    }

    fn input_schema(&self) -> Value {
        schema_for::<DebugArgs>()
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<DebugReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: DebugArgs = parse_args(args)?;
        args.validate()?;
        let op = args.op;
        let debugger = &self.debugger;
        let fail = |error: DebugError| tool_error(op, error);
        let report = match op {
            Op::Adapters => DebugReport::Adapters(debugger.adapters().await),
            Op::Status => DebugReport::Status(debugger.status().await),
            Op::Breakpoints => {
                let file = self
                    .root
                    .resolve_existing(args.file.as_deref().unwrap_or_default())?;
                if file.is_dir() {
                    return Err(ToolError::invalid_arguments(format!(
                        "`{}` is a directory; breakpoints go in a source file",
                        self.root.relative(&file)
                    )));
                }
                let lines = args.lines.unwrap_or_default();
                DebugReport::Breakpoints(
                    debugger
                        .set_breakpoints(&file, &lines)
                        .await
                        .map_err(fail)?,
                )
            }
            Op::Launch => {
                let request = self.launch_request(&args)?;
                DebugReport::Start(
                    debugger
                        .launch_with(&request, interrupt(ctx))
                        .await
                        .map_err(fail)?,
                )
            }
            Op::Attach => {
                let port = args.port.unwrap_or_default();
                DebugReport::Start(
                    debugger
                        .attach(port, args.adapter.as_deref())
                        .await
                        .map_err(fail)?,
                )
            }
            Op::Continue | Op::Pause | Op::StepOver | Op::StepIn | Op::StepOut => {
                let action = match op {
                    Op::Continue => Action::Continue,
                    Op::Pause => Action::Pause,
                    Op::StepOver => Action::StepOver,
                    Op::StepIn => Action::StepIn,
                    _ => Action::StepOut,
                };
                DebugReport::Step(
                    debugger
                        .act_waiting(action, args.thread_id, args.wait(), interrupt(ctx))
                        .await
                        .map_err(fail)?,
                )
            }
            Op::Threads => DebugReport::Threads(debugger.threads().await.map_err(fail)?),
            Op::Stack => DebugReport::Stack(debugger.stack(args.thread_id).await.map_err(fail)?),
            Op::Scopes => DebugReport::Scopes(
                debugger
                    .scopes(args.frame_id.unwrap_or_default())
                    .await
                    .map_err(fail)?,
            ),
            Op::Variables => DebugReport::Variables(
                debugger
                    .variables(args.reference.unwrap_or_default())
                    .await
                    .map_err(fail)?,
            ),
            Op::Locals => DebugReport::Locals(
                debugger
                    .locals(args.frame_id, args.scope.as_deref())
                    .await
                    .map_err(fail)?,
            ),
            Op::Evaluate => DebugReport::Evaluate(
                debugger
                    .evaluate(
                        args.expression.as_deref().unwrap_or_default(),
                        args.frame_id,
                    )
                    .await
                    .map_err(fail)?,
            ),
            Op::Output => DebugReport::Output(run_worded(debugger.output().await.map_err(fail)?)),
            Op::Terminate => DebugReport::Terminate(debugger.terminate().await),
        };
        let options = render::Options {
            all_frames: args.all_frames.unwrap_or(false),
        };
        let text = report.render_with(options);
        let value = crate::tool::report_json(&report)?;
        Ok(ToolOutput::new(value).with_text(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::readme::{properties, row, top_level_keys};

    /// The README's `debug` row names the fields of a stop and an exit as the reports have
    /// them, and every report but `adapters` carries the `state` it promises.
    #[test]
    fn the_readme_names_what_every_debug_result_carries() {
        use cc_dap_client::report::{Exited, Stopped};
        let row = row("| `debug` |");
        let after = |key: &str| {
            let at = row.find(key).unwrap_or_else(|| panic!("no {key} in {row}"));
            top_level_keys(&row[at + key.len()..])
        };
        assert_eq!(after("`stopped: "), properties::<Stopped>());
        assert_eq!(after("`exited: "), properties::<Exited>());
        let schema = crate::tool::output_schema_for::<DebugReport>();
        let reports = schema["anyOf"][0]["anyOf"]
            .as_array()
            .or_else(|| schema["anyOf"][0]["oneOf"].as_array())
            .expect("the debug reports are alternatives");
        for report in reports {
            let target = report["$ref"].as_str().unwrap_or_default();
            let name = target.rsplit('/').next().unwrap_or_default();
            let properties = &schema["$defs"][name]["properties"];
            // `adapters` describes the machine, not a session.
            let carries = properties.get("state").is_some();
            assert_eq!(carries, name != "AdaptersReport", "{name}: `state`");
        }
    }

    #[test]
    fn the_run_words_the_debuggers_one_session_rule() {
        let error = tool_error(
            Op::Launch,
            DebugError::SessionActive {
                describe: "debugpy, app.py, stopped".into(),
            },
        );
        assert_eq!(error.kind(), "session_active");
        assert!(
            error
                .to_string()
                .contains("only one session per conversation: call `terminate` first"),
            "{error}"
        );
        let before_any = OutputReport {
            output: String::new(),
            total_bytes: 0,
            dropped_bytes: 0,
            truncated: false,
            position: cc_dap_client::report::Position::bare(ProgramState::None),
            note: Some("no program has run yet".into()),
        };
        assert_eq!(
            run_worded(before_any).note.as_deref(),
            Some("no program has run in this conversation yet")
        );
    }
}
