//! `cc-harness`: code-intelligence tools for coding agents, over MCP or one call at a time.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use cc_harness_adapter::mcp::approval::{BridgeApproval, McpApprover};
use cc_harness_adapter::mcp::{serve, ServeOptions};
use cc_harness_adapter::questions::{ElicitationPort, TerminalPort};
use cc_harness_adapter::{build_registry, RunOptions, RunSetup};
use cc_tools::ask_user::QuestionPort;
use cc_tools::{Approval, ApprovalRequest, Approver, JsonLayout, Origin, Surface, ToolOutput};
use clap::{Parser, Subcommand};

/// Exit status of a usage error (bad flags, bad JSON, unusable root).
const USAGE_ERROR: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "cc-harness",
    version,
    about = "Live code intelligence for coding agents: language servers, structural search and rewrite, debuggers, persistent interpreters."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Args)]
struct RunArgs {
    /// Workspace root: every path argument must stay inside it.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// Which tools the agent sees: full, plan or readonly_subagent.
    #[arg(long, default_value = "full")]
    surface: Surface,
    /// Bridge calls (tool() inside an eval cell) of write/exec tools when nobody can be asked.
    #[arg(long, value_enum, default_value_t = BridgeApproval::Deny)]
    bridge_approval: BridgeApproval,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the tools visible on a surface, with tier and input schema.
    List {
        #[command(flatten)]
        run: RunArgs,
        /// Print the listing as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool call and print its JSON result (exit 1 when the tool returns an error).
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(default_value = "{}")]
        args: String,
        #[command(flatten)]
        run: RunArgs,
    },
    /// A scripted session through every tool family on an embedded sample project.
    Tour,
    /// Every tool and resource for a root: available or not, and why.
    Status {
        /// Workspace root.
        #[arg(long, default_value = ".")]
        root: PathBuf,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Serve the tools over MCP on stdin/stdout (newline-delimited JSON-RPC).
    Mcp {
        #[command(flatten)]
        run: RunArgs,
    },
}

/// `call` and `list`: the person at the command line made the call, so model calls proceed;
/// bridge calls follow `--bridge-approval`.
#[derive(Debug)]
struct CommandLineApprover(BridgeApproval);

#[async_trait::async_trait]
impl Approver for CommandLineApprover {
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval {
        match request.origin {
            Origin::Model => Approval::Allow,
            Origin::Bridge { .. } => self.0.decide(&request),
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            // rmcp warns on every error response it sends; the client already has those.
            tracing_subscriber::EnvFilter::try_from_env("CC_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=error")),
        )
        .init();
    let cli = Cli::parse();
    if matches!(cli.command, Command::Tour) {
        use_checkout_peers();
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cc-harness: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(cli));
    // Anything still running (a stuck reader, say) must not keep the process alive.
    runtime.shutdown_timeout(Duration::from_millis(500));
    code
}

async fn run(cli: Cli) -> ExitCode {
    match cli.command {
        Command::List { run, json } => list(run, json),
        Command::Call { tool, args, run } => call(&tool, &args, run).await,
        Command::Mcp { run } => mcp(run).await,
        Command::Status { root, json } => status(&root, json).await,
        Command::Tour => tour().await,
    }
}

fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("cc-harness: {message}");
    ExitCode::from(USAGE_ERROR)
}

fn list(run: RunArgs, as_json: bool) -> ExitCode {
    let registry = match build_registry(&run.root, command_line_options(&run, "list")) {
        Ok(registry) => registry,
        Err(error) => return usage_error(error),
    };
    let schemas = registry.schemas(run.surface);
    let mut out = std::io::stdout().lock();
    let written = if as_json {
        serde_json::to_string_pretty(&schemas)
            .map_err(std::io::Error::other)
            .and_then(|text| writeln!(out, "{text}"))
    } else {
        schemas.iter().try_for_each(|schema| {
            writeln!(
                out,
                "{} [{}]{}\n  {}\n  schema: {}\n",
                schema.name,
                schema.tier,
                if schema.parallel_safe {
                    ""
                } else {
                    " (calls serialized)"
                },
                schema.description,
                schema.input_schema
            )
        })
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => usage_error(format!("cannot write the listing: {error}")),
    }
}

async fn call(tool: &str, args: &str, run: RunArgs) -> ExitCode {
    let args: serde_json::Value = match serde_json::from_str(args) {
        Ok(args) => args,
        Err(error) => return usage_error(format!("the arguments are not valid JSON: {error}")),
    };
    let registry = match RunSetup::new(&run.root) {
        Ok(setup) => setup.single_call_registry(command_line_options(&run, "call")),
        Err(error) => return usage_error(error),
    };
    // Spooled: a huge result (every match of a search) is copied to stdout from its spool,
    // never held as a `Value` or as one string.
    let result = registry
        .call_spooled(tool, args, cc_tools::CallOptions::default())
        .await;
    registry.shutdown(Duration::from_secs(3)).await;
    let (output, code) = match result {
        Ok(output) => (output, ExitCode::SUCCESS),
        Err(error) => (ToolOutput::new(error.to_envelope()), ExitCode::from(1)),
    };
    let mut stdout = std::io::BufWriter::with_capacity(256 << 10, std::io::stdout().lock());
    let written = output
        .write_json(&mut stdout, JsonLayout::Pretty)
        .and_then(|()| writeln!(stdout))
        .and_then(|()| stdout.flush());
    if let Err(error) = written {
        eprintln!("cc-harness: the result could not be written out: {error}");
        return ExitCode::FAILURE;
    }
    code
}

async fn mcp(run: RunArgs) -> ExitCode {
    // Check the root and configuration before the client connects, so a bad setup is a
    // usage error rather than a broken session.
    let setup = match RunSetup::new(&run.root) {
        Ok(setup) => setup,
        Err(error) => return usage_error(error),
    };
    let (surface, bridge_approval) = (run.surface, run.bridge_approval);
    let factory = Box::new(move |peer| {
        let questions = ElicitationPort::for_client(Arc::clone(&peer))
            .map(|port| Arc::new(port) as Arc<dyn QuestionPort>);
        setup.registry(RunOptions {
            surface,
            approver: Arc::new(McpApprover::new(peer, bridge_approval)),
            conversation_id: conversation("mcp"),
            questions,
        })
    });
    match serve(
        tokio::io::stdin(),
        tokio::io::stdout(),
        ServeOptions::default(),
        factory,
    )
    .await
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cc-harness mcp: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Puts the peers `cargo xtask peers` installed in this checkout on PATH, so the tour finds
/// them without any set-up. Runs before any thread exists (changing the environment later
/// would race with readers).
fn use_checkout_peers() {
    let checkout = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let peers = std::fs::canonicalize(&checkout)
        .unwrap_or(checkout)
        .join(".peers");
    let extra = [peers.join("venv/bin"), peers.join("npm/node_modules/.bin")];
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut paths: Vec<PathBuf> = extra.into_iter().filter(|dir| dir.is_dir()).collect();
    if paths.is_empty() {
        return;
    }
    paths.extend(std::env::split_paths(&current));
    if let Ok(joined) = std::env::join_paths(paths) {
        std::env::set_var("PATH", joined);
    }
}

async fn tour() -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match cc_harness_adapter::tour::run(&mut stdout).await {
        Ok(summary) if summary.success() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(1),
        Err(error) => {
            eprintln!("cc-harness tour: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn status(root: &std::path::Path, as_json: bool) -> ExitCode {
    let setup = match RunSetup::new(root) {
        Ok(setup) => setup,
        Err(error) => return usage_error(error),
    };
    let report =
        cc_harness_adapter::status::gather(&setup, TerminalPort::if_interactive().is_some()).await;
    let text = if as_json {
        serde_json::to_string_pretty(&report).unwrap_or_else(|_| report.to_string())
    } else {
        cc_harness_adapter::status::render(&report)
    };
    match writeln!(std::io::stdout().lock(), "{text}") {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

/// A command-line run: questions go to the terminal when a person is at one.
fn command_line_options(run: &RunArgs, kind: &str) -> RunOptions {
    RunOptions {
        surface: run.surface,
        approver: Arc::new(CommandLineApprover(run.bridge_approval)),
        conversation_id: conversation(kind),
        questions: TerminalPort::if_interactive()
            .map(|port| Arc::new(port) as Arc<dyn QuestionPort>),
    }
}

fn conversation(kind: &str) -> String {
    format!("{kind}-{}", std::process::id())
}
