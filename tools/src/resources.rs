//! What a run has wired, and the registry that follows from it.
//!
//! A tool is registered only when the resource behind it is present: no parser set, no
//! `ast_grep`; no kernel factory, no `eval`. Whether a wired resource can really answer for
//! this checkout (is a language server installed?) is a later check the tools themselves
//! report (`lsp status`, `debug adapters`), so those tools stay visible.

use std::sync::Arc;
use std::time::Duration;

use crate::ask_user::{AskUserTool, QuestionPort, DEFAULT_QUESTION_TIMEOUT};
use crate::fs::{EditTool, ReadTool, WriteTool};
use crate::registry::{AfterWrite, Registry, RegistryBuilder, Run};
use crate::tool::Tool;
use crate::vibe::{Roster, WorkerBackend};

/// The resources wired for one run.
#[derive(Default)]
pub struct Resources {
    /// Register the host file tools `read`, `write` and `edit`, confined to the root.
    pub host_files: bool,
    /// Checks files after every write (language servers); attached to write results.
    pub after_write: Option<Arc<dyn AfterWrite>>,
    /// Tools the host brings (its own `write`, say); registered last, so they replace
    /// built-ins of the same name.
    pub host_tools: Vec<Arc<dyn Tool>>,
    /// A way to put a question in front of a human: registers `ask_user`.
    pub questions: Option<Arc<dyn QuestionPort>>,
    /// How long `ask_user` waits (default 10 minutes).
    pub question_timeout: Option<Duration>,
    /// Runs background workers: registers the five `vibe_*` tools.
    pub workers: Option<Arc<dyn WorkerBackend>>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources")
            .field("host_files", &self.host_files)
            .field("after_write", &self.after_write.is_some())
            .field("host_tools", &self.host_tools.len())
            .field("questions", &self.questions.is_some())
            .field("workers", &self.workers.is_some())
            .finish()
    }
}

impl Resources {
    /// The registry for `run`, with a tool for each wired resource.
    pub fn build(self, run: Run) -> Registry {
        let mut builder = RegistryBuilder::new(run);
        let root = builder.run().root.clone();
        if self.host_files {
            builder.add_tool(Arc::new(ReadTool::new(root.clone())));
            builder.add_tool(Arc::new(WriteTool::new(root.clone())));
            builder.add_tool(Arc::new(EditTool::new(root)));
        }
        if let Some(port) = self.questions {
            let timeout = self.question_timeout.unwrap_or(DEFAULT_QUESTION_TIMEOUT);
            builder.add_tool(Arc::new(AskUserTool::new(port, timeout)));
        }
        if let Some(backend) = self.workers {
            crate::vibe::register(&mut builder, Roster::new(backend));
        }
        for tool in self.host_tools {
            builder.add_tool(tool);
        }
        if let Some(hook) = self.after_write {
            builder = builder.after_write(hook);
        }
        builder.build()
    }
}
