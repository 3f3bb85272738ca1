//! A call of a Tick's tool, the one type of it on every hop ([`CallRequest`]),
//! and its outcome as spec-gaps 3.4 sorts it ([`CallOutcome`]).

#[cfg(doc)]
use super::{ClientRequest, LauncherRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A call of a Tick's tool, as every hop carries it: a client's
/// [`ClientRequest::Call`] (with the instance), tickhost's
/// [`LauncherRequest::Call`], the session core's
/// [`crate::core::SessionRequest::Call`], which writes it to the Tick as
/// `tick/call`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallRequest {
    pub tool: String,
    pub args: Value,
    /// The catalog revision the call was prepared against: a call for
    /// another revision is refused, not executed.
    pub revision: String,
}

/// The outcome of a `tick/call`, sorted as spec-gaps 3.4 says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The Tick answered with a result. Exit 0.
    Result { result: Value },
    /// Not executed: refused by the host before sending, or a "not executed"
    /// error code from the Tick. Exit 3.
    NotExecuted { error: RpcError },
    /// The Tick answered with an error that may have had effects. Exit 4.
    Executed { error: RpcError },
    /// Written to the Tick, no valid answer: timeout, exit, violation. Exit 5.
    /// Never retried.
    Unknown { reason: String },
}

impl CallOutcome {
    /// The CLI's exit code for this outcome.
    pub fn exit_code(&self) -> i32 {
        match self {
            CallOutcome::Result { .. } => 0,
            CallOutcome::NotExecuted { .. } => 3,
            CallOutcome::Executed { .. } => 4,
            CallOutcome::Unknown { .. } => 5,
        }
    }
}

/// A JSON-RPC error object, as the Tick sent it or as the host made it for a
/// refusal before sending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}
