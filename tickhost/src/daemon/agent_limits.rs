//! What an agent's own `tickloop` commands (client kind `agent_cli`: a
//! `tickloop` run by an agent host's shell tool) may not do, because only
//! the person may: answer a held action (`approve`, `refuse`), change what
//! the person allows on their instances (`approve-policy`), or shut tickhost
//! down while the person's instances run. Refused, nothing changes, and the
//! refusal says where the person does it.
//!
//! The agent's typing, closing and calls themselves go through the consent
//! gate ([`super::approval`]) like an MCP agent's.

use super::registry::Shared;
use serde_json::json;
use tickloop_proto::core::codes::APPROVAL_REFUSED;
use tickloop_proto::wire::{ClientError, ClientKind, ClientReply, ClientRequest, ErrorKind, Owner};

/// The refusal of `request` from `client`, when it is one only the person
/// may make; `None` lets it through.
pub fn refused(
    shared: &Shared,
    request: &ClientRequest,
    client: ClientKind,
) -> Option<ClientReply> {
    let ClientKind::AgentCli(host) = client else {
        return None;
    };
    let who = format!("{} (its shell tool)", host.title());
    let why = match request {
        ClientRequest::Decide { instance, call, .. } => format!(
            "{who} may not answer for the person: {call} of {instance} waits for the person, who answers in the Monitor, the Tick's view, Herdr or with `tickloop approve` in their own terminal"
        ),
        ClientRequest::SetApproval { instance, .. } if persons(shared, instance) => format!(
            "{who} may not change what the person allows on {instance}; ask the person (they run `tickloop approve-policy` in their own terminal)"
        ),
        ClientRequest::Shutdown => {
            let theirs: Vec<String> = shared
                .all()
                .iter()
                .filter(|i| i.ended().is_none() && i.owner() == Owner::Person)
                .map(|i| i.id.clone())
                .collect();
            if theirs.is_empty() {
                return None;
            }
            format!(
                "{who} may not shut tickhost down: it would close the person's {}; close your own instances with `tickloop close ID`",
                theirs.join(", ")
            )
        }
        _ => return None,
    };
    Some(ClientReply::Error(ClientError {
        kind: ErrorKind::Refused,
        message: format!("not executed: {why}"),
        data: Some(json!({
            "code": APPROVAL_REFUSED,
            "executed": false,
            "data": {"approval": "denied", "by": "tickhost"},
        })),
    }))
}

/// Whether `instance` is a running instance of the person's.
fn persons(shared: &Shared, instance: &str) -> bool {
    shared
        .resolve(instance)
        .is_ok_and(|i| i.owner() == Owner::Person)
}
