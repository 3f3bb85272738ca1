//! The person's answers and policies: `decide` (approve or refuse a held
//! action) and `set_approval` (who approves what agents do to an
//! instance). Only the person's own requests, or an agent's on its own
//! instance, get here ([`super::admit`]).

use super::forward::{forward, refresh_status};
use crate::daemon::consent;
use crate::daemon::registry::Shared;
use std::sync::Arc;
use tickloop_proto::wire::{ClientKind, ClientReply, ConsentChange, LauncherRequest};

/// `set_approval`: the launcher keeps the change (so it outlives
/// tickhost), and tickhost takes its new status at once.
pub async fn set_approval(
    shared: &Arc<Shared>,
    instance: &str,
    change: ConsentChange,
    client: Option<ClientKind>,
) -> ClientReply {
    // Calls' approval is for Ticks; typing and closing for every instance.
    let needs_tick = change.policy.is_some();
    let request = LauncherRequest::SetApproval(change);
    let reply = forward(shared, instance, request, needs_tick, client).await;
    if let (ClientReply::Ok(_), Ok(found)) = (&reply, shared.resolve(instance)) {
        if let Some(conn) = found.conn() {
            refresh_status(shared, &found, &conn).await;
        }
    }
    reply
}

/// `decide`: the one decision of a held action (see [`consent::decide`]).
pub async fn decide(
    shared: &Shared,
    (instance, call): (&str, &str),
    approve: bool,
    reason: Option<String>,
    (by, host): (String, Option<String>),
) -> ClientReply {
    consent::decide(shared, instance, call, approve, reason, by, host).await
}
