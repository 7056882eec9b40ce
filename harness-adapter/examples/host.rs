//! A minimal Rust host embedding the tools.
//!
//! It brings its own `note` tool (write tier), an approver that prints every write/exec call
//! it allows, and wires structural search and kernels. It lists what a plan-mode agent
//! would see, runs a structural search, then an `eval` cell that calls the host's own tool
//! through the kernel bridge, and finally checks its own write through the diagnostics hook.
//!
//! ```sh
//! cargo run -p cc-harness-adapter --example host -- /path/to/a/project
//! ```

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use cc_harness_adapter::embed::{embed, HostRun, Wire};
use cc_tools::{
    parse_args, schema_for, Approval, ApprovalRequest, Approver, CallContext, Surface, Tier, Tool,
    ToolError, ToolOutput,
};
use serde::Deserialize;
use serde_json::{json, Value};

/// The host's approver: allows everything and says so.
struct LoggingApprover;

#[async_trait]
impl Approver for LoggingApprover {
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval {
        println!(
            "approver: allowing {}-tier `{}` from {:?}",
            request.tier, request.tool, request.origin
        );
        Approval::Allow
    }
}

/// A host tool: keeps notes in memory.
#[derive(Default)]
struct NoteTool {
    notes: Mutex<Vec<String>>,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// The note to keep.
    text: String,
}

#[async_trait]
impl Tool for NoteTool {
    fn name(&self) -> &str {
        "note"
    }
    fn tier(&self) -> Tier {
        Tier::Write
    }
    fn description(&self) -> &str {
        "Keep a note for the operator."
    }
    fn input_schema(&self) -> Value {
        schema_for::<NoteArgs>()
    }
    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let args: NoteArgs = parse_args(args)?;
        let mut notes = self
            .notes
            .lock()
            .map_err(|_| ToolError::internal("notes lock poisoned"))?;
        notes.push(args.text);
        Ok(ToolOutput::new(json!({ "notes": notes.len() })))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let embedded = embed(HostRun {
        wire: Wire {
            structural: true,
            kernels: true,
            language_servers: true,
            ..Wire::none()
        },
        host_tools: vec![Arc::new(NoteTool::default())],
        ..HostRun::new("example", &root, Surface::Full, Arc::new(LoggingApprover))
    })?;
    let registry = &embedded.registry;

    let plan: Vec<String> = registry
        .schemas(Surface::Plan)
        .into_iter()
        .map(|schema| schema.name)
        .collect();
    println!("a plan-mode agent sees: {}", plan.join(", "));

    match registry
        .call(
            "ast_grep",
            json!({"pattern": "def $F($$$P): $$$B", "language": "python"}),
        )
        .await
    {
        Ok(found) => println!("python functions: {}", found.value["total"]),
        Err(error) => println!("ast_grep: {error}"),
    }

    let cell = json!({
        "code": "tool('note', {'text': 'hello from a kernel'})",
        "description": "call the host's note tool from python",
    });
    match registry.call("eval", cell).await {
        Ok(output) => println!("eval: {}", output.render_text()),
        Err(error) => println!("eval: {error}"),
    }

    if let Some(hook) = &embedded.after_write {
        let written = root.join("example_written.py");
        std::fs::write(&written, "x: int = 'not an int'\n")?;
        // A typed report: the host reads its fields, or its text as the agent would.
        let report = hook.after_write(std::slice::from_ref(&written)).await;
        let new = report.checks.as_ref().map_or(0, |checks| checks.new.len());
        println!(
            "diagnostics of the host's own write ({new} new):\n{}",
            cc_tools::report::Render::render(&report)
        );
        std::fs::remove_file(&written)?;
    }

    registry.shutdown(Duration::from_secs(3)).await;
    Ok(())
}
