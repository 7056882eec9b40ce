//! `eval`: runs a cell in a persistent Python or JavaScript kernel of the run, through
//! [`cc_kernel_bridge::KernelSession`].
//!
//! Exec tier (it runs code) and not parallel-safe (the kernels are per-run state). Inside a
//! cell, `tool(name, args)` re-enters the registry through [`CallContext::bridge`], so every
//! bridge call passes the same surface check, approver and wrappers as a model call. A
//! caller that listens for progress hears every 10 s that a long cell is still running
//! (MCP clients give up on a silent request long before the inactivity budget ends).

mod bridge;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_kernel_bridge::{
    CellOutcome, CellRequest, KernelError, KernelFactory, KernelSession, Language,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ToolError;
use crate::registry::{RegistryBuilder, Shutdown};
use crate::report::eval::EvalReport;
use crate::tier::Tier;
use crate::tool::{parse_args, schema_for, CallContext, Image, Tool, ToolOutput};

/// How often a caller that listens for progress hears that a cell is still running.
const PROGRESS_EVERY: Duration = Duration::from_secs(10);

/// The `eval` tool of one run.
#[derive(Debug, Clone)]
pub struct EvalTool {
    session: KernelSession,
    progress_every: Duration,
}

impl EvalTool {
    /// An `eval` tool running cells in `session`'s kernels.
    pub fn new(session: KernelSession) -> Self {
        EvalTool {
            session,
            progress_every: PROGRESS_EVERY,
        }
    }

    /// Reports progress every `interval` while a cell runs (default 10 s), to callers that
    /// listen for it.
    pub fn with_progress_every(mut self, interval: Duration) -> Self {
        self.progress_every = interval;
        self
    }

    /// Runs the cell, reporting the seconds it has run so far while it runs.
    async fn run_reporting(
        &self,
        ctx: &CallContext,
        request: CellRequest<'_>,
        bridge: Arc<bridge::RegistryBridge>,
    ) -> Result<CellOutcome, KernelError> {
        // A cancelled call interrupts the cell (then the kernel's escalation applies), so the
        // kernel is free for the next call.
        let cancel = ctx.cancellation().clone();
        let run = self
            .session
            .run_until(request, bridge, async move { cancel.cancelled().await });
        if !ctx.wants_progress() {
            return run.await;
        }
        tokio::pin!(run);
        let started = tokio::time::Instant::now();
        let mut ticks =
            tokio::time::interval_at(started + self.progress_every, self.progress_every);
        loop {
            tokio::select! {
                outcome = &mut run => return outcome,
                _ = ticks.tick() => {
                    let seconds = started.elapsed().as_secs_f64().floor();
                    let message = format!("the {} cell has run for {seconds} s", request.language);
                    ctx.report_progress(seconds, None, Some(&message));
                }
            }
        }
    }
}

/// Stops the run's kernels (and everything they started) when the run ends.
#[derive(Debug, Clone)]
pub struct KernelShutdown(pub KernelSession);

#[async_trait]
impl Shutdown for KernelShutdown {
    async fn shutdown(&self) {
        self.0.shutdown().await;
    }
}

/// Registers `eval` with kernels from `factory` (cells start in the workspace root) and the
/// shutdown hook that stops them.
pub fn register(builder: &mut RegistryBuilder, factory: Arc<KernelFactory>) {
    let session = factory.session(builder.run().root.path());
    builder.add_tool(Arc::new(EvalTool::new(session.clone())));
    builder.add_shutdown(Arc::new(KernelShutdown(session)));
}

/// The language of a cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EvalLanguage {
    /// Python (the checkout's `.venv`/`venv` interpreter when there is one, else `python3`).
    #[default]
    Python,
    /// JavaScript on Node.js; `tool()` must be awaited.
    Javascript,
}

/// Arguments of `eval`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    /// The cell's code. Variables, imports and data persist between calls; the last
    /// expression is echoed (end it with `;` in Python to suppress that).
    pub code: String,
    /// What the cell does, in 5–10 words; shown as this call's label in the transcript.
    #[schemars(length(min = 1, max = 200))]
    pub description: String,
    /// `python` (default) or `javascript`.
    #[serde(default)]
    pub language: EvalLanguage,
    /// Discard this language's interpreter and start a clean one before running `code`
    /// (`code` may then be empty).
    #[serde(default)]
    pub reset: bool,
}

/// The longest description accepted: it is a label, not a paragraph. The 5–10 words of the
/// schema are guidance, not a rule: refusing a working cell because its label has four or
/// twelve words would cost the agent a round trip and gain the reader nothing.
const MAX_DESCRIPTION_CHARS: usize = 200;

#[async_trait]
impl Tool for EvalTool {
    fn name(&self) -> &str {
        "eval"
    }

    fn tier(&self) -> Tier {
        Tier::Exec
    }

    fn description(&self) -> &str {
        "Run code in a persistent Python (default) or JavaScript kernel: variables, imports \
         and data survive between calls, the last expression is echoed, `display(obj)` shows \
         rich output, pandas DataFrames come back as tables and matplotlib figures as images, \
         and top-level `await` works. Python also accepts `%pip install X`, `%cd DIR`, `!cmd`, \
         `%%bash` and `%%timeit`; JavaScript has `require(name)` and `await \
         importModule(name)`, and `let`/`const` may be declared again. Inside a cell, `tool(name, args)` (JavaScript: `await \
         tool(name, args)`) calls another tool of this run and returns its JSON result as a \
         dict/object; a failure raises `ToolError` (`kind`, `message`). The cell runs in the \
         workspace root; stdin is closed. A cell that produces no output for the inactivity \
         budget (5 minutes by default; a running tool() call does not count) is interrupted, \
         and killed if it does not stop; a cancelled call interrupts its cell the same way. \
         Output has one budget per cell, 16 KB for stdout and stderr together (head and tail \
         kept; `truncated` counts the bytes cut); `%pip` shows no progress bars. `state` says whether earlier variables are still \
         there (`kept`) or the interpreter was replaced (`lost`). `reset: true` starts a \
         clean interpreter."
    }

    fn input_schema(&self) -> Value {
        schema_for::<EvalArgs>()
    }

    fn parallel_safe(&self) -> bool {
        false
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<EvalReport>())
    }

    async fn call(&self, ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: EvalArgs = parse_args(args)?;
        let description = args.description.trim();
        if description.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`description` is empty: say what the cell does in 5–10 words (it labels the \
                 call in the transcript)",
            ));
        }
        if description.chars().count() > MAX_DESCRIPTION_CHARS {
            return Err(ToolError::invalid_arguments(format!(
                "`description` is {} characters long: it is a label of 5–10 words, not an \
                 explanation (at most {MAX_DESCRIPTION_CHARS} characters)",
                description.chars().count()
            )));
        }
        let language = match args.language {
            EvalLanguage::Python => Language::Python,
            EvalLanguage::Javascript => Language::Javascript,
        };
        let request = CellRequest {
            language,
            code: &args.code,
            reset: args.reset,
        };
        let bridge = Arc::new(bridge::RegistryBridge::new(ctx.bridge()));
        let outcome = self
            .run_reporting(ctx, request, bridge)
            .await
            .map_err(|error| kernel_error(language, error))?;

        let images: Vec<Image> = outcome
            .display
            .iter()
            .filter(|item| crate::report::eval::is_attached_image(item))
            .map(|item| Image {
                mime: item.mime.clone(),
                data_base64: item.data.clone(),
            })
            .collect();
        let mut output = crate::tool::report_output(&EvalReport::from(&outcome))?;
        for image in images {
            output = output.with_image(image);
        }
        Ok(output)
    }
}

fn kernel_error(language: Language, error: KernelError) -> ToolError {
    ToolError::new(error.kind(), error.to_string()).with_detail("language", language.as_str())
}
