//! `debug`: drives one debug session per run through [`cc_dap_client::Supervisor`].
//!
//! Exec tier (it starts and controls processes) and not parallel-safe (the session is
//! per-run state). Paths are confined to the workspace root; every result that concerns a
//! session says where the program is (`stopped` or `exited`).

mod args;
mod render;

use std::sync::Arc;

use async_trait::async_trait;
use cc_dap_client::{Action, DebugError, Supervisor};
use serde::Serialize;
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
    supervisor: Arc<Supervisor>,
    root: WorkspaceRoot,
}

impl DebugTool {
    /// A `debug` tool over `supervisor`, with paths confined to `root`.
    pub fn new(supervisor: Arc<Supervisor>, root: WorkspaceRoot) -> Self {
        DebugTool { supervisor, root }
    }
}

/// Kills the run's debug session when the run ends.
#[derive(Debug, Clone)]
pub struct DebugShutdown(pub Arc<Supervisor>);

#[async_trait]
impl Shutdown for DebugShutdown {
    async fn shutdown(&self) {
        self.0.shutdown().await;
    }
}

/// Registers `debug` and its shutdown hook.
pub fn register(builder: &mut RegistryBuilder, supervisor: Arc<Supervisor>) {
    let root = builder.run().root.clone();
    builder.add_tool(Arc::new(DebugTool::new(supervisor.clone(), root)));
    builder.add_shutdown(Arc::new(DebugShutdown(supervisor)));
}

fn tool_error(op: Op, error: DebugError) -> ToolError {
    ToolError::new(error.kind(), error.to_string()).with_detail("op", op.name())
}

fn to_json(report: &impl Serialize) -> Result<Value, ToolError> {
    serde_json::to_value(report)
        .map_err(|error| ToolError::internal(format!("could not serialize the result: {error}")))
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
        "Debug a program with a real debugger (debugpy for Python, lldb for native executables, \
         delve for Go, dart): one `op` per call, one session per conversation. Typical flow: \
         `breakpoints` {file, lines} (allowed before launch), `launch` {program, args?} which \
         runs until the first stop or exit, then `stack`, `scopes` {frame_id}, `variables` \
         {reference}, `evaluate` {expression, frame_id?}, `step_over`/`step_in`/`step_out`, \
         `continue`, `pause`, `threads`, `output`, and `terminate` when done. `attach` {port} \
         connects to a Python process listening with debugpy (`terminate` ends it too). \
         `adapters` says which debuggers work here and why not; `status` where the session \
         is. launch, continue and the steps \
         block until the program stops or exits, up to a wait limit the result reports. Every \
         result carries `stopped` {reason, file, line, thread_id} or `exited` {code}. A second \
         launch while a session lives is refused; sessions are killed after 30 minutes."
    }

    fn input_schema(&self) -> Value {
        schema_for::<DebugArgs>()
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: DebugArgs = parse_args(args)?;
        args.validate()?;
        let op = args.op;
        let sup = &self.supervisor;
        let fail = |error: DebugError| tool_error(op, error);
        let value = match op {
            Op::Adapters => to_json(&sup.adapters().await)?,
            Op::Status => to_json(&sup.status().await)?,
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
                to_json(&sup.set_breakpoints(&file, &lines).await.map_err(fail)?)?
            }
            Op::Launch => {
                let program = self
                    .root
                    .resolve_existing(args.program.as_deref().unwrap_or_default())?;
                let program_args = args.args.unwrap_or_default();
                to_json(
                    &sup.launch(&program, &program_args, args.adapter.as_deref())
                        .await
                        .map_err(fail)?,
                )?
            }
            Op::Attach => {
                let port = args.port.unwrap_or_default();
                to_json(
                    &sup.attach(port, args.adapter.as_deref())
                        .await
                        .map_err(fail)?,
                )?
            }
            Op::Continue | Op::Pause | Op::StepOver | Op::StepIn | Op::StepOut => {
                let action = match op {
                    Op::Continue => Action::Continue,
                    Op::Pause => Action::Pause,
                    Op::StepOver => Action::StepOver,
                    Op::StepIn => Action::StepIn,
                    _ => Action::StepOut,
                };
                to_json(&sup.act(action, args.thread_id).await.map_err(fail)?)?
            }
            Op::Threads => to_json(&sup.threads().await.map_err(fail)?)?,
            Op::Stack => to_json(&sup.stack(args.thread_id).await.map_err(fail)?)?,
            Op::Scopes => to_json(
                &sup.scopes(args.frame_id.unwrap_or_default())
                    .await
                    .map_err(fail)?,
            )?,
            Op::Variables => to_json(
                &sup.variables(args.reference.unwrap_or_default())
                    .await
                    .map_err(fail)?,
            )?,
            Op::Evaluate => to_json(
                &sup.evaluate(
                    args.expression.as_deref().unwrap_or_default(),
                    args.frame_id,
                )
                .await
                .map_err(fail)?,
            )?,
            Op::Output => to_json(&sup.output().await.map_err(fail)?)?,
            Op::Terminate => to_json(&sup.terminate().await)?,
        };
        let text = render::render(op, &value);
        Ok(ToolOutput::new(value).with_text(text))
    }
}
