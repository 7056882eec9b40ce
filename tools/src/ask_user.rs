//! `ask_user`: the one way a run asks its operator something.
//!
//! Registered only when the run has a [`QuestionPort`], i.e. a way to put a question in
//! front of a human who can answer it (an MCP client that declared elicitation, a terminal,
//! a host's own UI). A skip is a success telling the agent to proceed on a stated assumption;
//! a timeout is an error carrying the same instruction; a port with nobody attached fails at
//! once instead of blocking.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorKind, ToolError};
use crate::report::files::AskUserReport;
use crate::tier::Tier;
use crate::tool::report_output;
use crate::tool::{parse_args, schema_for, CallContext, Tool, ToolOutput};

/// How long a question waits for an answer by default.
pub const DEFAULT_QUESTION_TIMEOUT: Duration = Duration::from_secs(600);

/// What the agent should do when nobody answered.
const PROCEED_ON_ASSUMPTION: &str = "Proceed on a reasonable assumption, state that assumption \
     in your reply, and do not ask this question again.";

/// One choice offered to the human.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionOption {
    /// Short label, shown and returned as the answer.
    pub label: String,
    /// What choosing it means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A question, as the agent asked it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// The question to ask.
    pub question: String,
    /// Why you ask and what depends on the answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The choices, each {label, description?}.
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    /// Whether a written answer is accepted.
    #[serde(default)]
    pub allow_free_text: bool,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
}

/// What came back from the human.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Options chosen (labels) and/or a written answer.
    Answered {
        /// Labels of the chosen options.
        selected: Vec<String>,
        /// The written answer, when free text was allowed and given.
        text: Option<String>,
    },
    /// The human chose not to answer.
    Skipped,
    /// Nobody is there to answer (no terminal, client gone): fail at once.
    NobodyAttached {
        /// Why.
        reason: String,
    },
}

/// Puts a question in front of a human and waits for the answer.
#[async_trait]
pub trait QuestionPort: Send + Sync {
    /// Asks `question`. May take as long as the human does; the tool applies the timeout.
    async fn ask(&self, question: &Question) -> Answer;
}

/// The `ask_user` tool.
pub struct AskUserTool {
    port: Arc<dyn QuestionPort>,
    timeout: Duration,
}

impl std::fmt::Debug for AskUserTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskUserTool")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl AskUserTool {
    /// Asks through `port`, giving up after `timeout`.
    pub fn new(port: Arc<dyn QuestionPort>, timeout: Duration) -> Self {
        AskUserTool { port, timeout }
    }
}

fn validate(question: &Question) -> Result<(), ToolError> {
    if question.question.trim().is_empty() {
        return Err(ToolError::invalid_arguments("`question` is empty"));
    }
    if question.options.is_empty() && !question.allow_free_text {
        return Err(ToolError::invalid_arguments(
            "give `options` or set `allow_free_text`: otherwise nothing can be answered",
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for option in &question.options {
        if option.label.trim().is_empty() {
            return Err(ToolError::invalid_arguments("an option has an empty label"));
        }
        if !seen.insert(option.label.as_str()) {
            return Err(ToolError::invalid_arguments(format!(
                "option label `{}` appears twice; labels must be unique",
                option.label
            )));
        }
    }
    Ok(())
}

/// Checks the port's answer against the question, so a confused port cannot hand the
/// agent a label it never offered.
fn check_answer(
    question: &Question,
    selected: &[String],
    text: &Option<String>,
) -> Result<(), String> {
    for label in selected {
        if !question.options.iter().any(|option| &option.label == label) {
            return Err(format!("answer `{label}` is not one of the options"));
        }
    }
    if !question.multi_select && selected.len() > 1 {
        return Err("several options chosen for a single-choice question".into());
    }
    if text.is_some() && !question.allow_free_text {
        return Err("a written answer for a question that did not allow one".into());
    }
    Ok(())
}

#[async_trait]
impl Tool for AskUserTool {
    fn name(&self) -> &str {
        "ask_user"
    }

    fn tier(&self) -> Tier {
        Tier::Read
    }

    fn description(&self) -> &str {
        "Ask the operator a question and wait for the answer (the only way to ask a human \
         anything; never write the question as a chat message). Give `options` ({label, \
         description?}) and/or `allow_free_text`; `multi_select` allows several options. A \
         skip means: proceed on a stated assumption and do not ask again."
    }

    fn input_schema(&self) -> Value {
        schema_for::<Question>()
    }

    fn output_schema(&self) -> Option<Value> {
        Some(crate::tool::output_schema_for::<AskUserReport>())
    }

    fn parallel_safe(&self) -> bool {
        // One question at a time: two cards at once confuse the human.
        false
    }

    async fn call(&self, _ctx: &CallContext, args: Value) -> Result<ToolOutput, ToolError> {
        let question: Question = parse_args(args)?;
        validate(&question)?;
        let answer = tokio::time::timeout(self.timeout, self.port.ask(&question)).await;
        match answer {
            Err(_elapsed) => Err(ToolError::new(
                ErrorKind::Timeout,
                format!(
                    "nobody answered within {} s. {PROCEED_ON_ASSUMPTION}",
                    self.timeout.as_secs_f64()
                ),
            )),
            Ok(Answer::NobodyAttached { reason }) => Err(ToolError::new(
                ErrorKind::NoHuman,
                format!("nobody can answer right now ({reason}). {PROCEED_ON_ASSUMPTION}"),
            )),
            Ok(Answer::Skipped) => report_output(&AskUserReport::Skipped {
                instruction: format!("The user skipped this question. {PROCEED_ON_ASSUMPTION}"),
            }),
            Ok(Answer::Answered { selected, text }) => {
                check_answer(&question, &selected, &text).map_err(|problem| {
                    ToolError::internal(format!("the question port {problem}"))
                })?;
                report_output(&AskUserReport::Answered { selected, text })
            }
        }
    }
}
