//! The errors of this crate.

use std::time::Duration;

/// Why a request to a language server produced no result.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LspError {
    /// The server process ended (crashed, was killed, or closed its output).
    #[error("{server} exited while handling `{method}`{}{}", status_suffix(.status), stderr_suffix(.stderr_tail))]
    ServerExited {
        /// The server's name (`basedpyright`, `clangd`, …).
        server: String,
        /// The request that was lost.
        method: String,
        /// How it ended, when known (`exit status 1`, `killed by signal 9`).
        status: Option<String>,
        /// The last lines it printed on stderr.
        stderr_tail: String,
    },
    /// The server did not answer in time; the request was cancelled with `$/cancelRequest`.
    #[error("{server} did not answer `{method}` within {}", fmt_duration(*.timeout))]
    Timeout {
        /// The server's name.
        server: String,
        /// The request.
        method: String,
        /// The budget that ran out.
        timeout: Duration,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{server} answered `{method}` with error {code}: {message}")]
    Server {
        /// The server's name.
        server: String,
        /// The request.
        method: String,
        /// The JSON-RPC error code (-32801 content modified, -32802 server cancelled, …).
        code: i64,
        /// The server's message.
        message: String,
    },
    /// The server does not offer this feature.
    #[error("not supported by {server}: it does not offer `{method}`")]
    NotSupported {
        /// The server's name.
        server: String,
        /// The request that has no provider.
        method: String,
    },
    /// The server's answer did not have the expected shape.
    #[error("{server} sent an unexpected answer to `{method}`: {detail}")]
    BadResponse {
        /// The server's name.
        server: String,
        /// The request.
        method: String,
        /// What was wrong.
        detail: String,
    },
    /// The server could not be started.
    #[error("could not start {server}: {detail}")]
    Spawn {
        /// The server's name.
        server: String,
        /// Why.
        detail: String,
    },
}

impl LspError {
    /// True for errors after which a retry of the same request may succeed (content modified,
    /// server cancelled).
    pub fn is_retryable(&self) -> bool {
        matches!(self, LspError::Server { code, .. } if *code == -32801 || *code == -32802)
    }
}

fn status_suffix(status: &Option<String>) -> String {
    match status {
        Some(status) => format!(" ({status})"),
        None => String::new(),
    }
}

fn stderr_suffix(tail: &str) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last stderr output: {tail}")
    }
}

/// `1.5 s`, `250 ms`.
pub(crate) fn fmt_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis >= 1000 && millis.is_multiple_of(1000) {
        format!("{} s", millis / 1000)
    } else if millis >= 1000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        format!("{millis} ms")
    }
}

/// Why an `[lsp]` configuration could not be used (what deserializing cannot check).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ConfigError {
    /// What is wrong, and what to write instead.
    pub message: String,
}
