//! `tickloop web`'s control socket (`RUNTIME/web.sock`): after the usual
//! [`super::Hello`] (role `client`, its kind saying who asks), one
//! [`WebControl`] line, answered by one [`WebControlReply`] line. `tickloop
//! web --revoke` and `tickloop web --login` speak it to the running server,
//! which refuses an agent (a hello of kind `mcp`, `loop` or `agent_cli`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What is asked of a running `tickloop web`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum WebControl {
    /// End every session and every unused login token.
    Revoke,
    /// A new one-time login URL.
    Login,
    /// The page's URL (no login minted): where the person answers, for
    /// the places that name it (a second `tickloop web`, the approval
    /// wait's message). Anyone of this user may ask.
    Where,
}

/// The running server's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WebControlReply {
    /// Sessions ended (pages logged out) by a revocation.
    Revoked { sessions: usize },
    /// A one-time login URL, and where the server listens.
    Login { url: String, listen: String },
    /// The page's URL, and where the server listens.
    Serving { url: String, listen: String },
    /// Nothing was done, and why.
    Error { message: String },
    /// Nothing was done: only the person may ask this, and an agent asked.
    Refused { message: String },
}
