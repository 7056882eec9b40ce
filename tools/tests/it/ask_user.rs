//! `ask_user`'s own rules (validation, skip, timeout, nobody attached), with a scripted port.
//! The real ports (MCP elicitation, terminal) are tested in cc-harness-adapter.

#![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_tools::ask_user::{Answer, Question, QuestionPort};
use cc_tools::{Registry, Resources, Run, Surface};
use serde_json::{json, Value};

struct Scripted(Answer, Duration);

#[async_trait]
impl QuestionPort for Scripted {
    async fn ask(&self, _question: &Question) -> Answer {
        tokio::time::sleep(self.1).await;
        self.0.clone()
    }
}

fn registry_with(dir: &std::path::Path, answer: Answer, delay: Duration) -> Registry {
    Resources {
        questions: Some(Arc::new(Scripted(answer, delay))),
        question_timeout: Some(Duration::from_millis(300)),
        ..Default::default()
    }
    .build(
        Run::builder(dir)
            .conversation("q")
            .surface(Surface::Plan)
            .build(),
    )
}

async fn ask(registry: &Registry, args: Value) -> Value {
    match registry.call("ask_user", args).await {
        Ok(output) => {
            // The published schema, the typed report and its text agree.
            cc_tools::testing::assert_typed_result(
                "ask_user",
                &output.value,
                &output.render_text(),
            );
            output.value
        }
        Err(error) => error.to_envelope(),
    }
}

fn question() -> Value {
    json!({"question": "Tabs or spaces?", "options": [{"label": "tabs"}, {"label": "spaces"}]})
}

#[tokio::test]
async fn answers_skips_timeouts_and_absence() {
    let dir = tempfile::tempdir().unwrap();
    let answered = Answer::Answered {
        selected: vec!["spaces".into()],
        text: None,
    };
    let registry = registry_with(dir.path(), answered, Duration::ZERO);
    assert_eq!(registry.schemas(Surface::Plan)[0].name, "ask_user");
    insta::assert_json_snapshot!(ask(&registry, question()).await);

    let skipped = registry_with(dir.path(), Answer::Skipped, Duration::ZERO);
    insta::assert_json_snapshot!(ask(&skipped, question()).await);

    let slow = registry_with(dir.path(), Answer::Skipped, Duration::from_secs(30));
    insta::assert_json_snapshot!(ask(&slow, question()).await);

    let nobody = registry_with(
        dir.path(),
        Answer::NobodyAttached {
            reason: "no terminal".into(),
        },
        Duration::ZERO,
    );
    insta::assert_json_snapshot!(ask(&nobody, question()).await);
}

#[tokio::test]
async fn bad_questions_and_impossible_answers_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let registry = registry_with(
        dir.path(),
        Answer::Answered {
            selected: vec!["tabs".into(), "spaces".into()],
            text: None,
        },
        Duration::ZERO,
    );
    let nothing_to_answer = ask(&registry, json!({"question": "Why?"})).await;
    assert_eq!(nothing_to_answer["error"]["kind"], "invalid_arguments");
    let duplicate = ask(
        &registry,
        json!({"question": "x", "options": [{"label": "a"}, {"label": "a"}]}),
    )
    .await;
    assert!(duplicate["error"]["message"]
        .as_str()
        .unwrap()
        .contains("appears twice"));
    // Two labels for a single-choice question: the port is wrong, not the agent.
    let impossible = ask(&registry, question()).await;
    assert_eq!(impossible["error"]["kind"], "internal");
}

#[tokio::test]
async fn no_port_means_no_tool() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Resources::default().build(Run::builder(dir.path()).conversation("q").build());
    assert!(registry.schemas(Surface::Full).is_empty());
}
