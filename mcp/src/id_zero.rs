//! A connection's request id 0, spent on a `ping` before the first
//! question put to the agent host (see [`crate::consent`]).

use rmcp::model::{PingRequest, ServerRequest};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleServer};
use std::sync::Arc;

/// Request id 0 of a connection, spent on a `ping` before its first
/// question. rmcp numbers the requests a server sends from 0, and Claude
/// Code 2.1.332 (its MCP SDK's `_oncancel` tests `!requestId`) ignores a
/// `notifications/cancelled` for id 0: the first question answered
/// elsewhere stayed drawn in its dialog, while later ones went (measured
/// in `tests/claude_code_consent.rs`). One per connection, shared by its
/// requests.
#[derive(Clone, Default)]
pub struct IdZero(Arc<tokio::sync::OnceCell<()>>);

impl IdZero {
    /// Sends the connection's first request, a `ping`, unless it was sent
    /// (or anything else was: then id 0 is taken already). The question
    /// does not wait for its answer: the id is taken once it is sent.
    pub async fn spend(&self, peer: &Peer<RoleServer>) {
        self.0
            .get_or_init(|| async {
                let ping = ServerRequest::PingRequest(PingRequest::default());
                match peer
                    .send_cancellable_request(ping, PeerRequestOptions::no_options())
                    .await
                {
                    Ok(handle) => {
                        tokio::spawn(handle.await_response());
                    }
                    Err(e) => eprintln!("tickloop mcp: cannot ping the agent host: {e}"),
                }
            })
            .await;
    }
}
