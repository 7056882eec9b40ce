//! The MCP run's approver.
//!
//! A model's call reaches us only after the MCP client decided to make it (clients ask their
//! user there), so it is allowed. A call that code inside a tool makes through the kernel
//! bridge never passed the client: a write- or exec-tier one asks the client through
//! elicitation when it declared that capability, and otherwise follows `--bridge-approval`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use cc_tools::{Approval, ApprovalRequest, Approver, Origin};
use serde_json::{json, Value};

use super::peer::Peer;

/// What to do with a bridge call of a write- or exec-tier tool when the client cannot be
/// asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum BridgeApproval {
    /// Allow it.
    Allow,
    /// Refuse it, saying how to allow it.
    #[default]
    Deny,
}

impl BridgeApproval {
    /// The answer when no client can be asked.
    pub fn decide(self, request: &ApprovalRequest<'_>) -> Approval {
        match self {
            BridgeApproval::Allow => Approval::Allow,
            BridgeApproval::Deny => Approval::Deny {
                reason: format!(
                    "a {}-tier call made from inside `{}` needs approval, and nobody can be \
                     asked (start cc-harness with --bridge-approval allow to permit such calls)",
                    request.tier,
                    via(request.origin)
                ),
            },
        }
    }
}

fn via(origin: &Origin) -> &str {
    match origin {
        Origin::Model => "the model",
        Origin::Bridge { via } => via,
    }
}

/// Approves model calls; asks the client (or follows the fallback) for bridge calls.
#[derive(Debug)]
pub struct McpApprover {
    peer: Arc<Peer>,
    fallback: BridgeApproval,
    timeout: Duration,
}

impl McpApprover {
    /// An approver that asks through `peer` and otherwise answers `fallback`.
    pub fn new(peer: Arc<Peer>, fallback: BridgeApproval) -> Self {
        McpApprover {
            peer,
            fallback,
            timeout: Duration::from_secs(600),
        }
    }
}

/// The elicitation form asking whether a bridge call may run.
pub fn approval_params(request: &ApprovalRequest<'_>) -> Value {
    let args = serde_json::to_string(request.args).unwrap_or_default();
    let shown_args: String = args.chars().take(400).collect();
    json!({
        "message": format!(
            "Code running in `{}` wants to call the {}-tier tool `{}` with {}. Allow it?",
            via(request.origin), request.tier, request.tool, shown_args
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "allow": {"type": "boolean", "title": "Allow this call", "default": false}
            },
            "required": ["allow"]
        }
    })
}

#[async_trait]
impl Approver for McpApprover {
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval {
        if request.origin == &Origin::Model {
            return Approval::Allow;
        }
        if !self.peer.client_supports("elicitation") {
            return self.fallback.decide(&request);
        }
        let params = approval_params(&request);
        match self
            .peer
            .request("elicitation/create", params, self.timeout)
            .await
        {
            Ok(answer) => {
                let accepted = answer.get("action").and_then(Value::as_str) == Some("accept");
                let allowed = answer
                    .get("content")
                    .and_then(|content| content.get("allow"))
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                if accepted && allowed {
                    Approval::Allow
                } else {
                    Approval::Deny {
                        reason: "the user declined it".into(),
                    }
                }
            }
            Err(error) => Approval::Deny {
                reason: format!("asking the user failed: {error}"),
            },
        }
    }
}
