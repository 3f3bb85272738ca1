//! Admission: the one place the request table ([`super::table`]) is read.
//! Every request's consent class decides here, before anything is done,
//! whether it goes on, is refused (what only the person may do, asked by
//! an agent: exit 3, nothing changes, and the refusal says where the
//! person does it), or goes through the consent gate, which may hold it
//! for the person ([`crate::daemon::consent::through_gate`]). A request
//! kind the table does not name is refused (fail closed).
//!
//! Who is an agent: a client that said at hello it is `mcp`, `loop` or
//! `agent_cli` (a `tickloop` run by an agent host's shell tool).

use super::table::{class_of, ConsentClass};
use crate::daemon::approval::{Asked, Gate};
use crate::daemon::connection::Caller;
use crate::daemon::consent;
use crate::daemon::registry::{Instance, Shared};
use serde_json::json;
use std::sync::Arc;
use tickloop_client::paths::InstanceKind;
use tickloop_proto::core::codes::APPROVAL_REFUSED;
use tickloop_proto::wire::{
    CallOutcome, ClientError, ClientKind, ClientReply, ClientRequest, ErrorKind, HeldAction, Owner,
};

/// What an admitted request may do beyond what its class says, for the
/// code that looks at its instance last (an instance may end between
/// admission and action).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Licence {
    /// Whether it may forget the person's ended instances: only the
    /// person's own requests may.
    pub forget_persons: bool,
}

/// Whether a request goes on.
pub enum Admission {
    /// Go on, under this licence.
    Go(Licence),
    /// Not done: answer this.
    Answer(ClientReply),
}

/// Admits `request` from `caller` by its consent class; an action the
/// gate holds is decided before this returns.
pub async fn admit(
    shared: &Arc<Shared>,
    request: &ClientRequest,
    caller: &mut Caller<'_>,
) -> Admission {
    let op = request.op();
    let Some(class) = class_of(op) else {
        return Admission::Answer(refused(format!(
            "tickhost's request table gives `{op}` no consent class, so it is refused; this build is broken (tickhost/src/daemon/requests/table.rs)"
        )));
    };
    let client = caller.client();
    let agent = caller.is_agent();
    let licence = Licence {
        forget_persons: !agent,
    };
    let refusal = match class {
        ConsentClass::Read | ConsentClass::Own => None,
        ConsentClass::Held(action) => {
            return held(shared, request, action, caller, licence).await;
        }
        ConsentClass::CloseOrForget => {
            let ended = request
                .instance()
                .and_then(|name| shared.resolve(name).ok())
                .filter(|i| i.ended().is_some());
            match ended {
                Some(instance) if agent && !instance.agents_may_forget() => {
                    Some(forget_refusal(client, &instance.id))
                }
                Some(_) => None,
                None => return held(shared, request, HeldAction::Close, caller, licence).await,
            }
        }
        // The person's own requests of the classes below go on.
        _ if !agent => None,
        ConsentClass::Persons => persons_only(request, client),
        ConsentClass::PersonsOnTheirs => persons_on_theirs(shared, request, client),
        ConsentClass::OpenOwn => over_persons_ended(shared, request, client),
    };
    match refusal {
        Some(reply) => Admission::Answer(reply),
        None => Admission::Go(licence),
    }
}

/// Runs a request of class held `action` through the gate: it goes on when
/// the gate lets it (nobody needed to ask, or the person approved), or
/// when there is no such running instance (the request itself says so).
async fn held(
    shared: &Arc<Shared>,
    request: &ClientRequest,
    action: HeldAction,
    caller: &mut Caller<'_>,
    licence: Licence,
) -> Admission {
    let Some(instance) = request.instance().and_then(|n| shared.resolve(n).ok()) else {
        return Admission::Go(licence);
    };
    if instance.ended().is_some() || (action == HeldAction::Call && !instance.kind.is_tick()) {
        return Admission::Go(licence);
    }
    let Some(asked) = asked(request).filter(|a| a.action() == action) else {
        return Admission::Answer(refused(format!(
            "tickhost's request table holds `{}` as {}, which it cannot ask about; this build is broken (tickhost/src/daemon/requests/table.rs)",
            request.op(),
            action.as_str()
        )));
    };
    match consent::through_gate(shared, &instance, asked, caller).await {
        Gate::Refused(outcome) if action == HeldAction::Call => {
            Admission::Answer(ClientReply::Call(outcome))
        }
        Gate::Refused(outcome) => Admission::Answer(refusal_error(outcome)),
        Gate::Proceed | Gate::Approved(_) => Admission::Go(licence),
    }
}

/// What `request` asks the gate for.
fn asked(request: &ClientRequest) -> Option<Asked<'_>> {
    Some(match request {
        ClientRequest::Call { call, .. } => Asked::Call(call),
        ClientRequest::Input { text, .. } => Asked::Input(text),
        ClientRequest::Keys { text, keys, .. } => Asked::Keys(text.as_deref(), keys),
        ClientRequest::Run { run, .. } => Asked::Run(&run.command),
        ClientRequest::Close { .. } => Asked::Close,
        ClientRequest::Reload { .. } => Asked::Reload,
        ClientRequest::Record { .. } => Asked::Record,
        _ => return None,
    })
}

/// Who an agent is, in a refusal: `Claude Code (its shell tool)`, `an
/// agent (mcp)`.
fn who(client: Option<ClientKind>) -> String {
    match client {
        Some(ClientKind::AgentCli(host)) => format!("{} (its shell tool)", host.title()),
        Some(kind) => kind.actor(),
        None => "an agent".to_string(),
    }
}

/// An agent's request of class [`ConsentClass::Persons`], refused; the
/// MCP bridge's `decide` carrying the person's answer in the agent host
/// (`by: "mcp-host"`) passes.
fn persons_only(request: &ClientRequest, client: Option<ClientKind>) -> Option<ClientReply> {
    let who = who(client);
    match request {
        ClientRequest::Decide { by, .. }
            if client == Some(ClientKind::Mcp) && by == "mcp-host" =>
        {
            None
        }
        ClientRequest::Decide { instance, call, .. } => Some(refused(format!(
            "{who} may not answer for the person: {call} of {instance} waits for the person, who answers in the Monitor, the Tick's view, Herdr or with `tickloop approve` in their own terminal"
        ))),
        other => Some(refused(format!(
            "{who} may not `{}`: only the person may",
            other.op()
        ))),
    }
}

/// An agent's request of class [`ConsentClass::PersonsOnTheirs`], refused
/// when it touches the person's instances.
fn persons_on_theirs(
    shared: &Shared,
    request: &ClientRequest,
    client: Option<ClientKind>,
) -> Option<ClientReply> {
    let who = who(client);
    match request {
        ClientRequest::SetApproval { instance, .. } => {
            let theirs = shared.resolve(instance).ok()?;
            (theirs.owner() == Owner::Person).then(|| refused(format!(
                "{who} may not change what the person allows on {}; ask the person (they run `tickloop approve-policy` in their own terminal)",
                theirs.id
            )))
        }
        ClientRequest::Shutdown => {
            // The person's running instances, and their ended ones no
            // agent may forget.
            let theirs: Vec<Arc<Instance>> = shared
                .all()
                .into_iter()
                .filter(|i| {
                    i.owner() == Owner::Person && (i.ended().is_none() || !i.agents_may_forget())
                })
                .collect();
            if theirs.is_empty() {
                return None;
            }
            let ids = |running: bool| -> Vec<String> {
                theirs
                    .iter()
                    .filter(|i| i.ended().is_none() == running)
                    .map(|i| i.id.clone())
                    .collect()
            };
            let mut what = Vec::new();
            if !ids(true).is_empty() {
                what.push(format!("close the person's {}", ids(true).join(", ")));
            }
            if !ids(false).is_empty() {
                what.push(format!(
                    "forget the person's ended {} with their record",
                    ids(false).join(", ")
                ));
            }
            Some(refused(format!(
                "{who} may not shut tickhost down: it would {}; close your own instances with `tickloop close ID`",
                what.join(" and ")
            )))
        }
        other => Some(refused(format!(
            "{who} may not `{}` the person's instances",
            other.op()
        ))),
    }
}

/// An agent's `open` over the person's ended instance of the same id,
/// refused: it would forget it.
fn over_persons_ended(
    shared: &Shared,
    request: &ClientRequest,
    client: Option<ClientKind>,
) -> Option<ClientReply> {
    let ClientRequest::Open(open) = request else {
        return None;
    };
    let name = open.name.as_deref()?;
    let kind = InstanceKind::of_open(open.program.shell, open.program.artifact.is_some());
    let id = kind.id(name);
    let known = shared.resolve(&id).ok()?;
    (known.ended().is_some() && !known.agents_may_forget()).then(|| open_over_refusal(client, &id))
}

/// The refusal of an agent's forgetting of the person's ended instance
/// `id` (`close` of it), unless the person lets agents close it.
pub fn forget_refusal(client: Option<ClientKind>, id: &str) -> ClientReply {
    refused(format!(
        "{} may not forget {id}: it has ended, and its last screen, activity and approval log are the person's record of it. It stays listed; the person forgets it with `tickloop close {id}` (`tickloop approvals --log {id}` and `tickloop activity {id}` read it meanwhile), or lets agents close it with `tickloop approve-policy {id} --close auto`",
        who(client)
    ))
}

/// The refusal of an agent's `open` of id `id` over the person's ended
/// instance of that id.
pub fn open_over_refusal(client: Option<ClientKind>, id: &str) -> ClientReply {
    refused(format!(
        "{} may not open {id}: the person's ended {id} has that id, and opening over it would forget their record of it; choose another --id (or none), or ask the person to `tickloop close {id}`",
        who(client)
    ))
}

/// A refusal: not executed (-32010), by tickhost.
fn refused(why: String) -> ClientReply {
    ClientReply::Error(ClientError {
        kind: ErrorKind::Refused,
        message: format!("not executed: {why}"),
        data: Some(json!({
            "code": APPROVAL_REFUSED,
            "executed": false,
            "data": {"approval": "denied", "by": "tickhost"},
        })),
    })
}

/// An action the gate refused, as the error the client reads: the
/// not-executed error's message, code and data kept.
fn refusal_error(outcome: CallOutcome) -> ClientReply {
    let (message, data) = match outcome {
        CallOutcome::NotExecuted { error } => (
            error.message,
            Some(json!({"code": error.code, "data": error.data, "executed": false})),
        ),
        other => (format!("{other:?}"), None),
    };
    ClientReply::Error(ClientError {
        kind: ErrorKind::Refused,
        message,
        data,
    })
}
