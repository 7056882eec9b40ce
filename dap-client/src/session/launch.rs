//! The launch sequence, and breakpoints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{display_path, Session, StartKind};
use crate::error::{ClientError, DebugError};
use crate::protocol::{
    ConfigurationDone, Initialize, InitializeArguments, SetBreakpoints, SetBreakpointsArguments,
    SetExceptionBreakpoints, SetExceptionBreakpointsArguments, Source, SourceBreakpoint,
};
use crate::report::{BreakpointView, FileBreakpoints};
use crate::state::store_launch_response;

impl Session {
    pub(super) async fn launch_sequence(
        &mut self,
        start: StartKind,
        arguments: Value,
        breakpoints: &BTreeMap<PathBuf, Vec<i64>>,
    ) -> Result<Vec<FileBreakpoints>, DebugError> {
        let deadline = tokio::time::Instant::now() + self.settings.launch_timeout;
        let request_timeout = self
            .settings
            .request_timeout
            .min(self.settings.launch_timeout);
        let init = InitializeArguments::new(self.kind.adapter_id());
        self.caps = self
            .client
            .request::<Initialize>(&init, request_timeout)
            .await
            .map_err(|error| self.launch_failed(format!("`initialize` failed: {error}")))?;

        let pending = self
            .client
            .send(start.command(), Some(arguments))
            .await
            .map_err(|error| self.launch_failed(error.to_string()))?;
        self.tasks.push(tokio::spawn(store_launch_response(
            pending,
            self.state.clone(),
        )));

        let ready = self
            .wait_until(deadline, |s| {
                s.initialized
                    || s.launch_response.as_ref().is_some_and(|r| !r.success)
                    || s.program_ended()
                    || s.connection_closed.is_some()
            })
            .await;
        if !ready {
            return Err(self.timeout(format!(
                "the adapter's `initialized` event after `{}`",
                start.command()
            )));
        }
        self.check_launch_response(start)?;
        let (initialized, ended) = {
            let s = self.state.borrow();
            (s.initialized, s.program_ended())
        };
        if !initialized {
            if ended {
                // The program ended before configuration: the session lives on with its
                // output and exit code.
                return Ok(Vec::new());
            }
            return Err(
                self.launch_failed(format!("the adapter exited during `{}`", start.command()))
            );
        }

        let mut placed = Vec::new();
        for (file, lines) in breakpoints {
            placed.push(self.send_breakpoints(file, lines, request_timeout).await);
        }
        let filters: Vec<String> = self
            .caps
            .exception_breakpoint_filters
            .iter()
            .filter(|f| f.default)
            .map(|f| f.filter.clone())
            .collect();
        if let Err(error) = self
            .client
            .request::<SetExceptionBreakpoints>(
                &SetExceptionBreakpointsArguments { filters },
                request_timeout,
            )
            .await
        {
            tracing::debug!(%error, "setExceptionBreakpoints failed; continuing without");
        }
        if self.caps.supports_configuration_done_request {
            let done = self
                .client
                .request::<ConfigurationDone>(&Value::Null, request_timeout)
                .await;
            if let Err(error) = done {
                // debugpy may drop this answer when the program exits at once (debugpy#314).
                let over = {
                    let s = self.state.borrow();
                    s.program_ended() || s.connection_closed.is_some()
                };
                if !over && !matches!(error, ClientError::Closed { .. }) {
                    return Err(self.launch_failed(format!("`configurationDone` failed: {error}")));
                }
            }
        }

        let answered = self
            .wait_until(deadline, |s| {
                s.launch_response.is_some() || s.program_ended() || s.connection_closed.is_some()
            })
            .await;
        if !answered {
            return Err(self.timeout(format!("the response to `{}`", start.command())));
        }
        self.check_launch_response(start)?;
        if self.state.borrow().adapter_lost() {
            return Err(
                self.launch_failed(format!("the adapter exited during `{}`", start.command()))
            );
        }
        Ok(placed)
    }

    pub(super) fn check_launch_response(&self, start: StartKind) -> Result<(), DebugError> {
        let failure = {
            let s = self.state.borrow();
            s.launch_response
                .as_ref()
                .filter(|r| !r.success)
                .map(|r| r.error_text())
        };
        match failure {
            Some(message) => {
                Err(self.launch_failed(format!("`{}` failed: {message}", start.command())))
            }
            None => Ok(()),
        }
    }

    async fn send_breakpoints(
        &self,
        file: &Path,
        lines: &[i64],
        timeout: Duration,
    ) -> FileBreakpoints {
        let args = SetBreakpointsArguments {
            source: Source {
                name: file.file_name().map(|n| n.to_string_lossy().into_owned()),
                path: Some(file.display().to_string()),
            },
            breakpoints: lines
                .iter()
                .map(|&line| SourceBreakpoint { line })
                .collect(),
        };
        let shown = display_path(&self.root, &file.display().to_string());
        let breakpoints = match self.client.request::<SetBreakpoints>(&args, timeout).await {
            Ok(response) => lines
                .iter()
                .enumerate()
                .map(|(i, &line)| {
                    let placed = response.breakpoints.get(i);
                    BreakpointView {
                        line,
                        verified: Some(placed.is_some_and(|b| b.verified)),
                        actual_line: placed.and_then(|b| b.line).filter(|l| *l != line),
                        message: placed.and_then(|b| b.message.clone()),
                    }
                })
                .collect(),
            Err(error) => lines
                .iter()
                .map(|&line| BreakpointView {
                    line,
                    verified: Some(false),
                    actual_line: None,
                    message: Some(error.to_string()),
                })
                .collect(),
        };
        FileBreakpoints {
            file: shown,
            breakpoints,
        }
    }

    /// Sends the breakpoints of one file (an empty list clears it).
    pub(crate) async fn set_breakpoints(
        &self,
        file: &Path,
        lines: &[i64],
    ) -> Result<FileBreakpoints, DebugError> {
        self.check_usable()?;
        Ok(self
            .send_breakpoints(file, lines, self.settings.request_timeout)
            .await)
    }
}
