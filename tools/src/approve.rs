//! The run's approver: whether one particular write- or exec-tier call may proceed.

use async_trait::async_trait;
use serde_json::Value;

use crate::tier::Tier;
use crate::tool::Origin;

/// One call awaiting approval.
#[derive(Debug, Clone, Copy)]
pub struct ApprovalRequest<'a> {
    /// The run's conversation.
    pub conversation_id: &'a str,
    /// The tool to run.
    pub tool: &'a str,
    /// Its tier (never `read`: read-tier calls are not submitted).
    pub tier: Tier,
    /// Its arguments.
    pub args: &'a Value,
    /// Whether the model or a kernel's bridge made the call.
    pub origin: &'a Origin,
}

/// The approver's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Go ahead.
    Allow,
    /// Refuse, saying why (shown to the agent).
    Deny {
        /// Why the call was refused and what the agent can do instead.
        reason: String,
    },
}

/// Decides whether a write- or exec-tier call may proceed. The host supplies it; the tier
/// decides visibility, the approver decides each call. Consulted on every such dispatch,
/// including calls a kernel makes through its bridge.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Decides one call.
    async fn approve(&self, request: ApprovalRequest<'_>) -> Approval;
}

/// Approves everything (a host whose client already asked the human).
#[derive(Debug, Default, Clone, Copy)]
pub struct AllowAll;

#[async_trait]
impl Approver for AllowAll {
    async fn approve(&self, _request: ApprovalRequest<'_>) -> Approval {
        Approval::Allow
    }
}

/// Refuses everything with a fixed reason.
#[derive(Debug, Clone)]
pub struct DenyAll {
    /// The reason given for every refusal.
    pub reason: String,
}

#[async_trait]
impl Approver for DenyAll {
    async fn approve(&self, _request: ApprovalRequest<'_>) -> Approval {
        Approval::Deny {
            reason: self.reason.clone(),
        }
    }
}
