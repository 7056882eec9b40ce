//! The client, as the run's tools see it: what it declared, and requests to it
//! (elicitation), sent through rmcp's peer (which owns the ids and the pending map).

use std::time::Duration;

use rmcp::model::ServerRequest;
use rmcp::service::{PeerRequestOptions, RoleServer};
use rmcp::ServiceError;
use serde_json::{json, Value};

use super::transport::{codes, RpcError};

/// Why a request to the client got no answer.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The client answered with an error.
    #[error(transparent)]
    Rpc(#[from] RpcError),
    /// The client did not answer in time.
    #[error("the client did not answer `{method}` within {seconds} s")]
    Timeout {
        /// The request's method.
        method: String,
        /// The budget.
        seconds: u64,
    },
    /// The connection closed before the answer came.
    #[error("the connection to the client closed")]
    Closed,
}

/// Our side of the connection, once the client has said who it is.
#[derive(Debug)]
pub struct Peer {
    inner: rmcp::Peer<RoleServer>,
    capabilities: Value,
}

impl Peer {
    /// A peer over rmcp's, for a client that declared `capabilities` in `initialize`.
    pub fn new(inner: rmcp::Peer<RoleServer>, capabilities: Value) -> Self {
        Peer {
            inner,
            capabilities,
        }
    }

    /// Whether the client declared `capability` (e.g. `elicitation`).
    pub fn client_supports(&self, capability: &str) -> bool {
        self.capabilities
            .get(capability)
            .is_some_and(|value| !value.is_null())
    }

    /// Sends a request to the client and waits up to `timeout` for its answer.
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, PeerError> {
        let request = server_request(method, params)?;
        let outcome = match self
            .inner
            .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
            .await
        {
            Ok(handle) => handle.await_response().await,
            Err(error) => Err(error),
        };
        match outcome {
            Ok(result) => serde_json::to_value(result).map_err(|error| {
                PeerError::Rpc(RpcError::new(
                    codes::INTERNAL_ERROR,
                    format!("the answer could not be read: {error}"),
                ))
            }),
            Err(ServiceError::McpError(error)) => Err(PeerError::Rpc(RpcError::new(
                i64::from(error.code.0),
                error.message,
            ))),
            Err(ServiceError::Timeout { timeout }) => Err(PeerError::Timeout {
                method: method.to_owned(),
                seconds: timeout.as_secs(),
            }),
            Err(other) => {
                tracing::debug!(error = %other, "a request to the client failed");
                Err(PeerError::Closed)
            }
        }
    }
}

/// rmcp's typed request for a method it knows (`elicitation/create`), a custom one otherwise.
fn server_request(method: &str, params: Value) -> Result<ServerRequest, RpcError> {
    serde_json::from_value(json!({"method": method, "params": params})).map_err(|error| {
        RpcError::new(
            codes::INVALID_PARAMS,
            format!("the `{method}` request could not be built: {error}"),
        )
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // Tests unwrap freely: a panic is a failure.

    use super::*;
    use cc_tools::ask_user::Question;
    use cc_tools::{ApprovalRequest, Origin, Tier};

    /// Every form we elicit is rmcp's typed `elicitation/create`, and goes out unchanged.
    #[test]
    fn our_forms_are_rmcps_typed_elicitation_and_go_out_unchanged() {
        let single: Question = serde_json::from_value(json!({
            "question": "Which db?", "context": "The schema depends on it.",
            "options": [{"label": "pg"}, {"label": "sqlite", "description": "a file"}],
        }))
        .unwrap();
        let multi: Question = serde_json::from_value(json!({
            "question": "Which platforms?", "multi_select": true, "allow_free_text": true,
            "options": [{"label": "linux"}, {"label": "mac", "description": "13+"}],
        }))
        .unwrap();
        let args = json!({"path": "x.py", "content": "print(1)"});
        let approval = crate::mcp::approval::approval_params(&ApprovalRequest {
            conversation_id: "c",
            tool: "write",
            tier: Tier::Write,
            args: &args,
            origin: &Origin::Bridge { via: "eval".into() },
        });
        for params in [
            crate::questions::elicitation_params(&single),
            crate::questions::elicitation_params(&multi),
            approval,
        ] {
            let request = server_request("elicitation/create", params.clone()).unwrap();
            assert!(
                matches!(request, ServerRequest::ElicitRequest(_)),
                "{request:?}"
            );
            let sent = serde_json::to_value(&request).unwrap();
            assert_eq!(sent["method"], "elicitation/create");
            assert_eq!(sent["params"]["message"], params["message"]);
            assert_eq!(
                sent["params"]["requestedSchema"], params["requestedSchema"],
                "{sent}"
            );
        }
    }
}
