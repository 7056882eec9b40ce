//! The five `vibe_*` tools over one [`Roster`].

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::roster::{Roster, RosterError, WorkerSnapshot, WorkerTier};
use crate::error::{ErrorKind, ToolError};
use crate::registry::RegistryBuilder;
use crate::report::Render;
use crate::tier::Tier;
use crate::tool::{
    output_schema_for, parse_args, report_output, schema_for, CallContext, Tool, ToolOutput,
};

/// How long `vibe_wait` waits when the agent gives no timeout.
const DEFAULT_WAIT: Duration = Duration::from_secs(300);
/// Characters of a worker's result shown in `vibe_list` (the full text comes from `vibe_wait`).
const LIST_RESULT_CHARS: usize = 2000;

/// Registers the five tools over `roster`, and its shutdown with the run.
pub fn register(builder: &mut RegistryBuilder, roster: Arc<Roster>) {
    builder.add_tool(Arc::new(VibeTool::new(Op::Spawn, roster.clone())));
    builder.add_tool(Arc::new(VibeTool::new(Op::Send, roster.clone())));
    builder.add_tool(Arc::new(VibeTool::new(Op::Wait, roster.clone())));
    builder.add_tool(Arc::new(VibeTool::new(Op::Kill, roster.clone())));
    builder.add_tool(Arc::new(VibeTool::new(Op::List, roster.clone())));
    builder.add_shutdown(roster);
}

#[derive(Debug, Clone, Copy)]
enum Op {
    Spawn,
    Send,
    Wait,
    Kill,
    List,
}

struct VibeTool {
    op: Op,
    roster: Arc<Roster>,
}

impl VibeTool {
    fn new(op: Op, roster: Arc<Roster>) -> Self {
        VibeTool { op, roster }
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SpawnArgs {
    /// What the worker should do, self-contained: it sees nothing else.
    brief: String,
    /// A short label for listings.
    label: String,
    /// `fast` (mechanical work with a clear description, default) or `good` (design,
    /// judgement, reviewing a fast worker's output).
    #[serde(default)]
    tier: WorkerTier,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SendArgs {
    /// The worker, from vibe_spawn.
    worker_id: String,
    /// Appended to the brief; the worker runs again with the whole brief.
    message: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WaitArgs {
    /// The worker, from vibe_spawn.
    worker_id: String,
    /// How long to wait (default 300). On timeout the current state comes back, not an error.
    #[serde(default)]
    timeout_seconds: Option<f64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct KillArgs {
    /// The worker, from vibe_spawn.
    worker_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListArgs {}

fn roster_error(error: RosterError) -> ToolError {
    let kind = match error {
        RosterError::UnknownWorker(_) => ErrorKind::UnknownWorker,
        RosterError::TierUnavailable(_) => ErrorKind::NotAvailable,
    };
    ToolError::new(kind, error.to_string())
}

impl Render for WorkerSnapshot {
    fn render(&self) -> String {
        let mut line = format!(
            "{} [{}] {} ({:?}, {:.1}s, run {})",
            self.worker_id,
            self.tier.as_str(),
            self.label,
            self.state,
            self.elapsed_seconds,
            self.runs
        );
        if let Some(error) = &self.last_error {
            line.push_str(&format!("\nerror: {error}"));
        }
        if let Some(result) = &self.last_result {
            line.push_str(&format!("\nresult: {result}"));
        }
        line
    }
}

/// `vibe_list`: the run's workers, each result cut to [`LIST_RESULT_CHARS`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VibeListReport {
    /// The workers, in the order they were started.
    pub workers: Vec<WorkerSnapshot>,
}

impl Render for VibeListReport {
    fn render(&self) -> String {
        if self.workers.is_empty() {
            return "no workers".to_owned();
        }
        self.workers
            .iter()
            .map(Render::render)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

#[async_trait]
impl Tool for VibeTool {
    fn name(&self) -> &str {
        match self.op {
            Op::Spawn => "vibe_spawn",
            Op::Send => "vibe_send",
            Op::Wait => "vibe_wait",
            Op::Kill => "vibe_kill",
            Op::List => "vibe_list",
        }
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        match self.op {
            Op::Spawn => {
                "Start a background worker on a self-contained `brief`; returns its worker_id \
                 at once while it runs. `tier`: fast (mechanical, clearly described work) or \
                 good (design, judgement, review)."
            }
            Op::Send => "Append `message` to a worker's brief and run it again.",
            Op::Wait => {
                "Wait until a worker settles (done, failed or killed) or `timeout_seconds` \
                 pass; returns its state and last result either way."
            }
            Op::Kill => "Stop a worker and everything it started.",
            Op::List => "List the run's workers: tier, state, elapsed time and last result.",
        }
    }

    fn input_schema(&self) -> Value {
        match self.op {
            Op::Spawn => schema_for::<SpawnArgs>(),
            Op::Send => schema_for::<SendArgs>(),
            Op::Wait => schema_for::<WaitArgs>(),
            Op::Kill => schema_for::<KillArgs>(),
            Op::List => schema_for::<ListArgs>(),
        }
    }

    fn output_schema(&self) -> Option<Value> {
        Some(match self.op {
            Op::List => output_schema_for::<VibeListReport>(),
            _ => output_schema_for::<WorkerSnapshot>(),
        })
    }

    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let snapshot = match self.op {
            Op::Spawn => {
                let args: SpawnArgs = parse_args(args)?;
                if args.brief.trim().is_empty() {
                    return Err(ToolError::invalid_arguments("`brief` is empty"));
                }
                self.roster
                    .spawn(args.brief, args.label, args.tier)
                    .map_err(roster_error)?
            }
            Op::Send => {
                let args: SendArgs = parse_args(args)?;
                self.roster
                    .send(&args.worker_id, &args.message)
                    .map_err(roster_error)?
            }
            Op::Wait => {
                let args: WaitArgs = parse_args(args)?;
                let timeout = match args.timeout_seconds {
                    Some(seconds) if seconds.is_finite() && seconds >= 0.0 => {
                        Duration::from_secs_f64(seconds.min(86_400.0))
                    }
                    Some(_) => {
                        return Err(ToolError::invalid_arguments(
                            "timeout_seconds must be a non-negative number",
                        ))
                    }
                    None => DEFAULT_WAIT,
                };
                self.roster
                    .wait(&args.worker_id, timeout)
                    .await
                    .map_err(roster_error)?
            }
            Op::Kill => {
                let args: KillArgs = parse_args(args)?;
                self.roster.kill(&args.worker_id).map_err(roster_error)?
            }
            Op::List => {
                let _: ListArgs = parse_args(args)?;
                let mut workers = self.roster.list();
                for worker in &mut workers {
                    if let Some(result) = &mut worker.last_result {
                        if result.chars().count() > LIST_RESULT_CHARS {
                            let cut: String = result.chars().take(LIST_RESULT_CHARS).collect();
                            *result = format!("{cut}… (vibe_wait shows all)");
                        }
                    }
                }
                return report_output(&VibeListReport { workers });
            }
        };
        report_output(&snapshot)
    }
}
