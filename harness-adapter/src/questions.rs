//! Question ports for `ask_user`: the MCP client's elicitation, and a terminal.

use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_tools::ask_user::{Answer, Question, QuestionPort};
use serde_json::{json, Map, Value};

use crate::mcp::peer::{Peer, PeerError};

/// Asks through the MCP client's `elicitation/create`. Wired only when the client declared
/// the elicitation capability.
#[derive(Debug)]
pub struct ElicitationPort {
    peer: Arc<Peer>,
}

impl ElicitationPort {
    /// A port over `peer`, or None when the client cannot be asked.
    pub fn for_client(peer: Arc<Peer>) -> Option<Self> {
        peer.client_supports("elicitation")
            .then_some(ElicitationPort { peer })
    }
}

/// Field names in the elicitation form.
const CHOICE: &str = "choice";
const ANSWER: &str = "answer";

fn option_field(index: usize) -> String {
    format!("option_{}", index + 1)
}

/// The form for `question`: an enum for one choice, a boolean per option for several, a
/// string for free text.
pub fn elicitation_params(question: &Question) -> Value {
    let mut properties = Map::new();
    if !question.options.is_empty() {
        if question.multi_select {
            for (index, option) in question.options.iter().enumerate() {
                let mut field = json!({"type": "boolean", "title": option.label, "default": false});
                if let Some(description) = &option.description {
                    field["description"] = json!(description);
                }
                properties.insert(option_field(index), field);
            }
        } else {
            let labels: Vec<&str> = question.options.iter().map(|o| o.label.as_str()).collect();
            let described: Vec<String> = question
                .options
                .iter()
                .map(|option| match &option.description {
                    Some(description) => format!("{}: {description}", option.label),
                    None => option.label.clone(),
                })
                .collect();
            properties.insert(
                CHOICE.into(),
                json!({
                    "type": "string",
                    "title": "Choose one",
                    "enum": labels,
                    "description": described.join("\n"),
                }),
            );
        }
    }
    if question.allow_free_text {
        properties.insert(
            ANSWER.into(),
            json!({"type": "string", "title": "Your answer"}),
        );
    }
    let required: Vec<&str> =
        if !question.multi_select && !question.options.is_empty() && !question.allow_free_text {
            vec![CHOICE]
        } else {
            Vec::new()
        };
    let message = match &question.context {
        Some(context) => format!("{}\n\n{context}", question.question),
        None => question.question.clone(),
    };
    json!({
        "message": message,
        "requestedSchema": {"type": "object", "properties": properties, "required": required},
    })
}

/// Reads the client's answer to the form of [`elicitation_params`].
pub fn answer_from_elicitation(question: &Question, result: &Value) -> Answer {
    if result.get("action").and_then(Value::as_str) != Some("accept") {
        return Answer::Skipped;
    }
    let empty = Map::new();
    let content = result
        .get("content")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut selected = Vec::new();
    if question.multi_select {
        for (index, option) in question.options.iter().enumerate() {
            if content.get(&option_field(index)).and_then(Value::as_bool) == Some(true) {
                selected.push(option.label.clone());
            }
        }
    } else if let Some(choice) = content.get(CHOICE).and_then(Value::as_str) {
        selected.push(choice.to_owned());
    }
    let text = content
        .get(ANSWER)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    if selected.is_empty() && text.is_none() {
        return Answer::Skipped;
    }
    Answer::Answered { selected, text }
}

#[async_trait]
impl QuestionPort for ElicitationPort {
    async fn ask(&self, question: &Question) -> Answer {
        // The tool applies the real timeout; this one only bounds a forgotten request.
        let params = elicitation_params(question);
        match self
            .peer
            .request("elicitation/create", params, Duration::from_secs(24 * 3600))
            .await
        {
            Ok(result) => answer_from_elicitation(question, &result),
            Err(PeerError::Closed) => Answer::NobodyAttached {
                reason: "the MCP client disconnected".into(),
            },
            Err(error) => Answer::NobodyAttached {
                reason: format!("the MCP client could not ask: {error}"),
            },
        }
    }
}

/// Asks on the terminal: the question and numbered options on stderr, the answer from stdin.
/// Wired only when both are a terminal (a person is there).
#[derive(Debug, Default)]
pub struct TerminalPort;

impl TerminalPort {
    /// A port when stdin and stderr are a terminal.
    pub fn if_interactive() -> Option<Self> {
        (std::io::stdin().is_terminal() && std::io::stderr().is_terminal()).then_some(TerminalPort)
    }
}

/// Parses one line typed at the prompt. None means: say what is expected and ask again.
pub fn parse_terminal_answer(question: &Question, line: &str) -> Option<Answer> {
    let line = line.trim();
    if line.is_empty() {
        return Some(Answer::Skipped);
    }
    let numbers: Option<Vec<usize>> = line
        .split([',', ' '])
        .filter(|part| !part.is_empty())
        .map(|part| part.parse::<usize>().ok())
        .collect();
    match numbers {
        Some(numbers) if !question.options.is_empty() => {
            if numbers.is_empty() || (!question.multi_select && numbers.len() > 1) {
                return None;
            }
            let mut selected = Vec::new();
            for number in numbers {
                let option = question.options.get(number.checked_sub(1)?)?;
                if !selected.contains(&option.label) {
                    selected.push(option.label.clone());
                }
            }
            Some(Answer::Answered {
                selected,
                text: None,
            })
        }
        _ if question.allow_free_text => Some(Answer::Answered {
            selected: Vec::new(),
            text: Some(line.to_owned()),
        }),
        _ => None,
    }
}

fn prompt_text(question: &Question) -> String {
    let mut text = format!("\n? {}\n", question.question);
    if let Some(context) = &question.context {
        text.push_str(&format!("  {context}\n"));
    }
    for (index, option) in question.options.iter().enumerate() {
        match &option.description {
            Some(description) => text.push_str(&format!(
                "  {}) {} - {description}\n",
                index + 1,
                option.label
            )),
            None => text.push_str(&format!("  {}) {}\n", index + 1, option.label)),
        }
    }
    let mut hints = Vec::new();
    if !question.options.is_empty() {
        hints.push(if question.multi_select {
            "numbers separated by commas"
        } else {
            "a number"
        });
    }
    if question.allow_free_text {
        hints.push("or a written answer");
    }
    hints.push("empty line to skip");
    text.push_str(&format!("  ({})\n> ", hints.join(", ")));
    text
}

#[async_trait]
impl QuestionPort for TerminalPort {
    async fn ask(&self, question: &Question) -> Answer {
        let question = question.clone();
        let asked = tokio::task::spawn_blocking(move || {
            let stdin = std::io::stdin();
            let mut stderr = std::io::stderr();
            let _ = write!(stderr, "{}", prompt_text(&question));
            let _ = stderr.flush();
            loop {
                let mut line = String::new();
                match stdin.lock().read_line(&mut line) {
                    Ok(0) => return Answer::Skipped,
                    Ok(_) => {}
                    Err(error) => {
                        return Answer::NobodyAttached {
                            reason: format!("the terminal could not be read: {error}"),
                        }
                    }
                }
                if let Some(answer) = parse_terminal_answer(&question, &line) {
                    return answer;
                }
                let _ = write!(stderr, "  not understood; try again\n> ");
                let _ = stderr.flush();
            }
        })
        .await;
        asked.unwrap_or_else(|error| Answer::NobodyAttached {
            reason: format!("the terminal prompt failed: {error}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cc_tools::ask_user::QuestionOption;

    fn question(multi_select: bool, allow_free_text: bool) -> Question {
        Question {
            question: "Which database?".into(),
            context: Some("The schema depends on it.".into()),
            options: vec![
                QuestionOption {
                    label: "postgres".into(),
                    description: Some("server".into()),
                },
                QuestionOption {
                    label: "sqlite".into(),
                    description: None,
                },
            ],
            allow_free_text,
            multi_select,
        }
    }

    #[test]
    fn one_choice_is_an_enum_and_several_are_booleans() {
        let single = elicitation_params(&question(false, false));
        assert_eq!(
            single["requestedSchema"]["properties"]["choice"]["enum"],
            json!(["postgres", "sqlite"])
        );
        assert_eq!(single["requestedSchema"]["required"], json!(["choice"]));
        assert_eq!(
            single["message"],
            "Which database?\n\nThe schema depends on it."
        );
        let multi = elicitation_params(&question(true, true));
        assert_eq!(
            multi["requestedSchema"]["properties"]["option_1"]["type"],
            "boolean"
        );
        assert_eq!(
            multi["requestedSchema"]["properties"]["option_2"]["title"],
            "sqlite"
        );
        assert_eq!(
            multi["requestedSchema"]["properties"]["answer"]["type"],
            "string"
        );
    }

    #[test]
    fn elicitation_answers_map_back() {
        let q = question(true, true);
        let accepted =
            json!({"action": "accept", "content": {"option_2": true, "answer": " both "}});
        assert_eq!(
            answer_from_elicitation(&q, &accepted),
            Answer::Answered {
                selected: vec!["sqlite".into()],
                text: Some("both".into())
            }
        );
        assert_eq!(
            answer_from_elicitation(&q, &json!({"action": "decline"})),
            Answer::Skipped
        );
        assert_eq!(
            answer_from_elicitation(&q, &json!({"action": "cancel"})),
            Answer::Skipped
        );
    }

    #[test]
    fn terminal_lines_parse_as_numbers_or_text() {
        let single = question(false, false);
        assert_eq!(
            parse_terminal_answer(&single, "2\n"),
            Some(Answer::Answered {
                selected: vec!["sqlite".into()],
                text: None
            })
        );
        assert_eq!(parse_terminal_answer(&single, "1,2"), None);
        assert_eq!(parse_terminal_answer(&single, "7"), None);
        assert_eq!(parse_terminal_answer(&single, "maybe"), None);
        assert_eq!(parse_terminal_answer(&single, ""), Some(Answer::Skipped));
        let multi = question(true, true);
        assert_eq!(
            parse_terminal_answer(&multi, "1, 2"),
            Some(Answer::Answered {
                selected: vec!["postgres".into(), "sqlite".into()],
                text: None
            })
        );
        assert_eq!(
            parse_terminal_answer(&multi, "whatever works"),
            Some(Answer::Answered {
                selected: vec![],
                text: Some("whatever works".into())
            })
        );
    }
}
