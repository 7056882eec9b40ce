//! The launch sequence, and breakpoints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::{display_path, Session, StartKind, Waited};
use crate::error::{ClientError, DebugError};
use crate::interrupt::Interrupt;
use crate::protocol::{
    ConfigurationDone, FunctionBreakpoint, Initialize, InitializeArguments, SetBreakpoints,
    SetBreakpointsArguments, SetExceptionBreakpoints, SetExceptionBreakpointsArguments,
    SetFunctionBreakpoints, SetFunctionBreakpointsArguments, Source, SourceBreakpoint,
};
use crate::report::{BreakpointView, ExceptionStops, FileBreakpoints};
use crate::state::store_launch_response;

impl Session {
    pub(super) async fn launch_sequence(
        &mut self,
        start: StartKind,
        arguments: Value,
        breakpoints: &BTreeMap<PathBuf, Vec<i64>>,
        interrupt: &mut Interrupt,
    ) -> Result<Vec<FileBreakpoints>, DebugError> {
        let deadline = tokio::time::Instant::now() + self.settings.launch_timeout;
        let request_timeout = self
            .settings
            .request_timeout
            .min(self.settings.launch_timeout);
        self.initialize_and_start(start, arguments, deadline, request_timeout, interrupt)
            .await?;
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
        self.send_function_breakpoints(request_timeout).await;
        self.send_exception_breakpoints(request_timeout).await;
        self.configuration_done(request_timeout).await?;
        self.wait_for_launch_response(start, deadline).await?;
        Ok(placed)
    }

    /// `initialize`, then the launch or attach request, then the wait for the adapter's
    /// `initialized` event (or for the launch to fail or the program to end first).
    async fn initialize_and_start(
        &mut self,
        start: StartKind,
        arguments: Value,
        deadline: tokio::time::Instant,
        request_timeout: Duration,
        interrupt: &mut Interrupt,
    ) -> Result<(), DebugError> {
        let init = InitializeArguments::new(self.kind.adapter_id());
        self.caps = interrupt
            .guard(self.client.request::<Initialize>(&init, request_timeout))
            .await
            .ok_or_else(|| cancelled(start))?
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
            .wait_until_or(deadline, interrupt, |s| {
                s.initialized
                    || s.launch_response.as_ref().is_some_and(|r| !r.success)
                    || s.program_ended()
                    || s.connection_closed.is_some()
            })
            .await;
        match ready {
            Waited::Reached => {}
            Waited::Interrupted => return Err(cancelled(start)),
            Waited::TimedOut => {
                return Err(self.timeout(format!(
                    "the adapter's `initialized` event after `{}`",
                    start.command()
                )))
            }
        }
        self.check_launch_response(start).await
    }

    /// The function breakpoints, when there are some and the adapter takes them; a failure
    /// only loses them.
    async fn send_function_breakpoints(&self, request_timeout: Duration) {
        if !self.function_breakpoints.is_empty() && self.caps.supports_function_breakpoints {
            let args = SetFunctionBreakpointsArguments {
                breakpoints: self
                    .function_breakpoints
                    .iter()
                    .map(|name| FunctionBreakpoint { name: name.clone() })
                    .collect(),
            };
            if let Err(error) = self
                .client
                .request::<SetFunctionBreakpoints>(&args, request_timeout)
                .await
            {
                tracing::debug!(%error, "setFunctionBreakpoints failed; continuing without");
            }
        }
    }

    /// The exception filters, kept for the report as [`ExceptionStops`] and sent; a failure
    /// only loses them.
    async fn send_exception_breakpoints(&mut self, request_timeout: Duration) {
        let offered: Vec<String> = self
            .caps
            .exception_breakpoint_filters
            .iter()
            .map(|f| f.filter.clone())
            .collect();
        let filters = self.exception_filters(&offered);
        self.exception_stops = ExceptionStops {
            filters: filters.clone(),
            offered,
            functions: if self.caps.supports_function_breakpoints {
                self.function_breakpoints.clone()
            } else {
                Vec::new()
            },
        };
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
    }

    /// The exception filters to set, of those the adapter `offered`: the caller's choice
    /// (with a note on what is not offered), else the adapter's defaults and the extras.
    fn exception_filters(&mut self, offered: &[String]) -> Vec<String> {
        match &self.chosen_filters {
            // The caller's choice, exactly (what the adapter does not offer is said).
            Some(chosen) => {
                let unknown: Vec<&str> = chosen
                    .iter()
                    .filter(|c| !offered.contains(c))
                    .map(String::as_str)
                    .collect();
                if !unknown.is_empty() {
                    self.filter_note = Some(format!(
                        "`exceptions`: {} does not offer {}; it offers: {}",
                        self.kind.name(),
                        unknown.join(", "),
                        if offered.is_empty() {
                            "none".to_owned()
                        } else {
                            offered.join(", ")
                        }
                    ));
                }
                chosen
                    .iter()
                    .filter(|c| offered.contains(c))
                    .cloned()
                    .collect()
            }
            None => {
                let mut filters: Vec<String> = self
                    .caps
                    .exception_breakpoint_filters
                    .iter()
                    .filter(|f| f.default)
                    .map(|f| f.filter.clone())
                    .collect();
                // Extra filters only when the adapter offers them.
                for extra in &self.extra_filters {
                    if offered.contains(extra) && !filters.contains(extra) {
                        filters.push(extra.clone());
                    }
                }
                filters
            }
        }
    }

    /// `configurationDone`, when the adapter wants it; its failure fails the launch unless
    /// the program or the adapter is already gone.
    async fn configuration_done(&self, request_timeout: Duration) -> Result<(), DebugError> {
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
        Ok(())
    }

    /// Waits for the answer to the launch or attach request, which some adapters give only
    /// after configuration, and fails the launch on a failed answer or a lost adapter.
    async fn wait_for_launch_response(
        &self,
        start: StartKind,
        deadline: tokio::time::Instant,
    ) -> Result<(), DebugError> {
        // The program runs from `configurationDone` on: a cancel from here is seen by the
        // wait for its first stop, which keeps the session.
        let answered = self
            .wait_until_or(deadline, &mut Interrupt::never(), |s| {
                s.launch_response.is_some() || s.program_ended() || s.connection_closed.is_some()
            })
            .await;
        match answered {
            Waited::Reached => {}
            Waited::Interrupted => return Err(cancelled(start)),
            Waited::TimedOut => {
                return Err(self.timeout(format!("the response to `{}`", start.command())))
            }
        }
        self.check_launch_response(start).await?;
        if self.state.borrow().adapter_lost() {
            return Err(
                self.launch_failed(format!("the adapter exited during `{}`", start.command()))
            );
        }
        Ok(())
    }

    pub(super) async fn check_launch_response(&self, start: StartKind) -> Result<(), DebugError> {
        let failure = {
            let s = self.state.borrow();
            s.launch_response
                .as_ref()
                .filter(|r| !r.success)
                .map(|r| r.error_text())
        };
        let Some(message) = failure else {
            return Ok(());
        };
        // delve answers a failed build with "Build error: Check the debug console for
        // details."; the compiler's text came as output, which may be applied a moment after
        // the response: wait for it, then return it.
        if message.to_lowercase().contains("build error") {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(2);
            self.wait_until(deadline, |s| s.output.text().contains("Build Error"))
                .await;
            if let Some(error) = build_failure(&self.state.borrow().output.text()) {
                return Err(error);
            }
        }
        Err(self.launch_failed(format!("`{}` failed: {message}", start.command())))
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

fn cancelled(start: StartKind) -> DebugError {
    DebugError::Cancelled(format!(
        "the {} was cancelled before the program started; its processes were stopped and \
         nothing is left running",
        start.command()
    ))
}

/// delve's "Build Error: go test -c -o … ./pkg\n# pkg\n./x.go:5:2: undefined: y (exit
/// status 2)" as a build failure: the command and what the compiler said.
fn build_failure(output: &str) -> Option<DebugError> {
    let start = output.find("Build Error: ")?;
    let text = &output[start + "Build Error: ".len()..];
    let (command, rest) = text.split_once('\n').unwrap_or((text, ""));
    let rest = rest.trim_end();
    let rest = rest
        .strip_suffix("(exit status 2)")
        .unwrap_or(rest)
        .trim_end();
    Some(DebugError::BuildFailed {
        command: command.trim().to_owned(),
        output: rest.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delves_build_error_becomes_the_compilers_text() {
        let output = "Build Error: go test -c -o /tmp/b -gcflags all=-N -l /w/pkg\n# example/pkg\n\
                      ./x.go:5:2: undefined: y (exit status 2)\n";
        let error = build_failure(output).unwrap();
        assert_eq!(error.kind(), "build_failed");
        let text = error.to_string();
        assert!(
            text.starts_with(
                "the build failed (`go test -c -o /tmp/b -gcflags all=-N -l /w/pkg`):\n# \
                 example/pkg\n./x.go:5:2: undefined: y\nfix it"
            ),
            "{text}"
        );
        assert!(build_failure("nothing").is_none());
    }
}
