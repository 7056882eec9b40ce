//! Starting an adapter process (or reaching a listening one) and connecting to it.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use cc_process::GroupChild;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::{describe_status, Endpoint, StartParams};
use crate::adapters::Transport;
use crate::client::Client;
use crate::detect::ResolvedAdapter;
use crate::error::DebugError;
use crate::protocol::Event;
use crate::state::State;

/// The adapter process (none when we connected to one that is not ours), the connection,
/// its events, and the tasks copying the process's pipes.
pub(super) struct Spawned {
    pub child: Option<GroupChild>,
    /// The adapter process when it is not ours (a listening debugpy's), if found.
    pub remote_adapter: Option<u32>,
    pub client: Client,
    pub events: mpsc::UnboundedReceiver<Event>,
    pub tasks: Vec<JoinHandle<()>>,
}

/// Starts or reaches the adapter and connects to it.
pub(super) async fn spawn_adapter(
    params: &StartParams<'_>,
    state: &Arc<watch::Sender<State>>,
) -> Result<Spawned, DebugError> {
    match &params.endpoint {
        Endpoint::Connect { host, port } => connect(params, host, *port).await,
        Endpoint::Spawn(adapter) => match adapter.kind.transport() {
            Transport::Stdio => spawn_stdio(params, adapter, state),
            Transport::DialIn => spawn_dial_in(params, adapter, state).await,
        },
    }
}

async fn connect(params: &StartParams<'_>, host: &str, port: u16) -> Result<Spawned, DebugError> {
    let timeout = params.settings.request_timeout;
    let stream =
        match tokio::time::timeout(timeout, tokio::net::TcpStream::connect((host, port))).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) => {
                return Err(DebugError::LaunchFailed {
                    adapter: params.kind.name().into(),
                    message: format!(
                    "nothing accepts connections on {host}:{port} ({error}); start the program \
                     with `python -m debugpy --listen {port} program.py` (or call \
                     `debugpy.listen({port})` in it) and attach again"
                ),
                    output_tail: String::new(),
                })
            }
            Err(_) => {
                return Err(DebugError::LaunchFailed {
                    adapter: params.kind.name().into(),
                    message: format!(
                        "connecting to {host}:{port} took over {}s",
                        timeout.as_secs()
                    ),
                    output_tail: String::new(),
                })
            }
        };
    let _ = stream.set_nodelay(true);
    let remote_adapter = crate::proctree::listener_owner(port);
    let (read, write) = stream.into_split();
    let (client, events) = Client::start(read, write);
    Ok(Spawned {
        child: None,
        remote_adapter,
        client,
        events,
        tasks: Vec::new(),
    })
}

fn command_for(params: &StartParams<'_>, adapter: &ResolvedAdapter) -> tokio::process::Command {
    let program = adapter.command.first().cloned().unwrap_or_default();
    let mut command = tokio::process::Command::new(program);
    command
        .args(adapter.command.iter().skip(1))
        .current_dir(&params.env.root)
        .env("PATH", &params.env.search_path)
        .envs(params.extra_env.iter().map(|(k, v)| (k, v)))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

fn unavailable(adapter: &ResolvedAdapter, error: std::io::Error) -> DebugError {
    DebugError::AdapterUnavailable {
        adapter: adapter.kind.name().into(),
        reason: format!(
            "`{}` could not be started: {error}",
            adapter
                .command
                .first()
                .map(String::as_str)
                .unwrap_or_default()
        ),
    }
}

fn spawn_stdio(
    params: &StartParams<'_>,
    adapter: &ResolvedAdapter,
    state: &Arc<watch::Sender<State>>,
) -> Result<Spawned, DebugError> {
    let mut command = command_for(params, adapter);
    command.stdin(Stdio::piped());
    let mut child =
        cc_process::spawn_group(command).map_err(|error| unavailable(adapter, error))?;
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.take_stdin(), child.take_stdout(), child.take_stderr())
    else {
        return Err(DebugError::Io("the adapter's pipes were not set up".into()));
    };
    let (client, events) = Client::start(stdout, stdin);
    let log = tokio::spawn(pump_pipe(stderr, state.clone(), false));
    Ok(Spawned {
        child: Some(child),
        remote_adapter: None,
        client,
        events,
        tasks: vec![log],
    })
}

/// delve: it dials a port we listen on (an ephemeral one, never a fixed port).
async fn spawn_dial_in(
    params: &StartParams<'_>,
    adapter: &ResolvedAdapter,
    state: &Arc<watch::Sender<State>>,
) -> Result<Spawned, DebugError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|error| DebugError::Io(format!("could not listen for the adapter: {error}")))?;
    let address = listener
        .local_addr()
        .map_err(|error| DebugError::Io(error.to_string()))?;
    let mut command = command_for(params, adapter);
    command
        .arg("--client-addr")
        .arg(address.to_string())
        .stdin(Stdio::null());
    let mut child =
        cc_process::spawn_group(command).map_err(|error| unavailable(adapter, error))?;
    let mut tasks = Vec::new();
    // The debuggee inherits the adapter's stdout and stderr: they are its output.
    if let Some(stdout) = child.take_stdout() {
        state.send_modify(|s| s.open_output_pipes += 1);
        tasks.push(tokio::spawn(pump_pipe(stdout, state.clone(), true)));
    }
    if let Some(stderr) = child.take_stderr() {
        state.send_modify(|s| s.open_output_pipes += 1);
        tasks.push(tokio::spawn(pump_pipe(stderr, state.clone(), true)));
    }
    let timeout = params.settings.request_timeout;
    let program = adapter.command.first().cloned().unwrap_or_default();
    let accepted = tokio::select! {
        accepted = tokio::time::timeout(timeout, listener.accept()) => accepted,
        status = child.wait() => {
            // Give the pipe readers a moment to collect what it said.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let said = state.borrow().output.tail(1000);
            for task in &tasks {
                task.abort();
            }
            let status = status.map(describe_status).unwrap_or_else(|e| e.to_string());
            let said = if said.trim().is_empty() {
                String::new()
            } else {
                format!(": {}", said.trim())
            };
            return Err(DebugError::AdapterUnavailable {
                adapter: adapter.kind.name().into(),
                reason: format!("`{program}` exited ({status}) before connecting{said}"),
            });
        }
    };
    let stream = match accepted {
        Ok(Ok((stream, _))) => stream,
        Ok(Err(error)) => {
            return Err(DebugError::Io(format!(
                "accepting the adapter's connection failed: {error}"
            )))
        }
        Err(_) => {
            return Err(DebugError::AdapterUnavailable {
                adapter: adapter.kind.name().into(),
                reason: format!("`{program}` did not connect within {}s", timeout.as_secs()),
            })
        }
    };
    let _ = stream.set_nodelay(true);
    let (read, write) = stream.into_split();
    let (client, events) = Client::start(read, write);
    Ok(Spawned {
        child: Some(child),
        remote_adapter: None,
        client,
        events,
        tasks,
    })
}

/// Copies a pipe into the program's output (`to_output`) or the adapter's log.
async fn pump_pipe<R: AsyncRead + Unpin>(
    mut pipe: R,
    state: Arc<watch::Sender<State>>,
    to_output: bool,
) {
    let record = |text: &str| {
        state.send_modify(|s| {
            if to_output {
                s.record_output(text);
            } else {
                s.adapter_log.push(text);
            }
        });
    };
    let mut buf = vec![0u8; 8192];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        carry.extend_from_slice(&buf[..n]);
        // Keep an incomplete UTF-8 sequence at the end for the next read.
        let valid = match std::str::from_utf8(&carry) {
            Ok(_) => carry.len(),
            Err(error) if error.error_len().is_none() => error.valid_up_to(),
            Err(_) => carry.len(),
        };
        record(&String::from_utf8_lossy(&carry[..valid]));
        carry.drain(..valid);
    }
    if !carry.is_empty() {
        record(&String::from_utf8_lossy(&carry));
    }
    if to_output {
        state.send_modify(|s| s.open_output_pipes = s.open_output_pipes.saturating_sub(1));
    }
}
