//! Who an action is for: the agent's MCP request it belongs to ([`Caller`]),
//! handed from the server's handler to the calls, TickManage and the wait
//! for a person, each of which may hear of a hold and ask in the host.

use rmcp::model::ProgressToken;
use rmcp::{Peer, RoleServer};
use tickloop_proto::wire::HeldCall;
use tokio_util::sync::CancellationToken;

/// The agent request an action belongs to: the client that asked (the
/// agent host, which may be asked too), and the progress token it gave.
#[derive(Clone)]
pub struct Caller {
    pub peer: Peer<RoleServer>,
    pub progress: Option<ProgressToken>,
    /// In 2026-07-28, where each word of a hold goes for the host's
    /// question: the input-required round trip ([`crate::held`]) or a
    /// task's ([`crate::tasks`]). (The 2025 revisions ask with a request
    /// of their own, [`crate::consent`].)
    pub ask: Option<tokio::sync::mpsc::UnboundedSender<HeldCall>>,
    /// Cancelled when the client cancels the request
    /// (`notifications/cancelled`: its own timeout, or the person stopped
    /// it): an action tickhost holds for it is then withdrawn, so it never
    /// runs, whatever the person answers later.
    pub cancelled: CancellationToken,
    /// Why the agent host is not asked about what tickhost holds
    /// ([`crate::host_asks`]); `None`: it is, when it can be.
    pub not_asked: Option<String>,
    /// Who asks, as the question names it
    /// ([`crate::host_asks::HostFacts::asker`]).
    pub asker: String,
    /// The agent session the request came from, for TickManage `subscribe`
    /// ([`crate::manage::loop_session`]), or why there is none.
    pub loop_session: Result<(tickloop_loop::agent::Agent, String), String>,
    /// The connection's request id 0, spent before its first question
    /// ([`crate::consent::IdZero`]).
    pub id_zero: crate::consent::IdZero,
}
