//! A client's request through the consent gate, on the client's own
//! connection, and the person's answers to held actions.
//!
//! While the gate holds a request, the caller hears that it waits
//! (progress lines) and its connection is read: a hang-up (EOF, an error)
//! withdraws the action at once, a `withdraw` naming it withdraws it and is
//! answered, and any other request is refused until the held one is
//! answered. `approve` / `refuse` ([`decide`]) are answered with the one
//! decision the action got: approved, or what it became instead.

use super::approval::{self, Approvals, Asked, Decision, Gate, Settled, Undecided};
use super::connection::Caller;
use super::registry::{Consent, Instance, Shared};
use super::request_line::parse_request;
use serde_json::json;
use std::future::Future;
use std::pin::Pin;
use tickloop_proto::wire::{
    ClientError, ClientKind, ClientReply, ClientRequest, ErrorKind, HeldCall, ServerMessage,
};
use tokio::sync::mpsc;

fn error(kind: ErrorKind, message: String, data: Option<serde_json::Value>) -> ClientReply {
    ClientReply::Error(ClientError {
        kind,
        message,
        data,
    })
}

/// Runs `asked` on `instance` through the gate for `caller`, watching the
/// caller's connection while it is held.
pub async fn through_gate(
    shared: &Shared,
    instance: &Instance,
    asked: Asked<'_>,
    caller: &mut Caller<'_>,
) -> Gate {
    let (progress, waiting) = mpsc::channel(1);
    let target = Consent { shared, instance };
    let connected = caller.conn.probe();
    let gate = approval::gate_for(
        &shared.approvals,
        &target,
        asked,
        caller.client(),
        progress,
        &connected,
    );
    watch_caller(&shared.approvals, gate, waiting, caller).await
}

/// A withdrawal on its way: the `withdraw` request's id and its answer.
type Withdrawing<'a> = Pin<Box<dyn Future<Output = (u64, ClientReply)> + Send + 'a>>;

/// Runs `gate` to its end. Each progress it sends on `waiting` goes to the
/// caller (before the reply); the caller's connection is read meanwhile.
async fn watch_caller<'a>(
    approvals: &'a Approvals,
    gate: impl Future<Output = Gate>,
    mut waiting: mpsc::Receiver<HeldCall>,
    caller: &mut Caller<'_>,
) -> Gate {
    tokio::pin!(gate);
    let mut held: Option<HeldCall> = None;
    let mut here = true;
    // A `withdraw` that came before the action was held.
    let mut wanted: Option<(u64, Option<String>)> = None;
    let mut withdrawing: Option<Withdrawing<'a>> = None;
    let verdict = loop {
        tokio::select! {
            biased;
            Some(now) = waiting.recv(), if here => {
                caller.conn.out.offer(&ServerMessage::Progress { id: caller.id, held: now.clone() });
                if held.is_none() {
                    if let Some((request, reason)) = wanted.take() {
                        withdrawing = Some(Box::pin(withdraw(approvals, now.clone(), caller, request, reason)));
                    }
                }
                held = Some(now);
            }
            verdict = &mut gate => break verdict,
            answered = async { match withdrawing.as_mut() { Some(w) => w.await, None => std::future::pending().await } }, if withdrawing.is_some() => {
                withdrawing = None;
                let (request, reply) = answered;
                if caller.conn.out.send(&ServerMessage::Reply { id: request, reply }).await.is_err() {
                    here = false;
                    waiting.close();
                }
            }
            // Its lines cannot be written any more: gone too.
            () = caller.conn.out.closed(), if here => {
                here = false;
                waiting.close();
            }
            line = caller.conn.reader.next(), if here => {
                let envelope = match line {
                    Ok(Some(line)) => parse_request(line),
                    // The caller hung up: its action is withdrawn at once
                    // (the gate sees its channel closed).
                    Ok(None) | Err(_) => {
                        here = false;
                        waiting.close();
                        continue;
                    }
                };
                let refusal = match envelope {
                    Err((id, message)) => Some((id, error(ErrorKind::BadRequest, message, None))),
                    Ok(envelope) => match envelope.request {
                        ClientRequest::Withdraw { request, .. }
                            if request == caller.id && (withdrawing.is_some() || wanted.is_some()) =>
                        {
                            Some((envelope.id, error(
                                ErrorKind::BadRequest,
                                format!("request {request} is being withdrawn already"),
                                None,
                            )))
                        }
                        ClientRequest::Withdraw { request, reason } if request == caller.id => {
                            match &held {
                                Some(now) => withdrawing = Some(Box::pin(withdraw(approvals, now.clone(), caller, envelope.id, reason))),
                                None => wanted = Some((envelope.id, reason)),
                            }
                            None
                        }
                        ClientRequest::Withdraw { request, .. } => Some((envelope.id, not_held(request))),
                        _ => Some((envelope.id, error(
                            ErrorKind::BadRequest,
                            format!(
                                "request {} waits for approval on this connection, which takes only its `withdraw` until it is answered; send other requests on another connection",
                                caller.id
                            ),
                            None,
                        ))),
                    },
                };
                if let Some((id, reply)) = refusal {
                    if caller.conn.out.send(&ServerMessage::Reply { id, reply }).await.is_err() {
                        here = false;
                        waiting.close();
                    }
                }
            }
        }
    };
    // What the gate said just before it ended still goes out first.
    while let Ok(now) = waiting.try_recv() {
        caller.conn.out.offer(&ServerMessage::Progress {
            id: caller.id,
            held: now,
        });
    }
    if let Some(withdrawing) = withdrawing {
        let (request, reply) = withdrawing.await;
        let _ = caller
            .conn
            .out
            .send(&ServerMessage::Reply { id: request, reply })
            .await;
    }
    if let Some((request, _)) = wanted {
        let reply = error(
            ErrorKind::BadRequest,
            format!(
                "request {} was never held for approval (it went on, or was refused at once): nothing to withdraw",
                caller.id
            ),
            None,
        );
        let _ = caller
            .conn
            .out
            .send(&ServerMessage::Reply { id: request, reply })
            .await;
    }
    verdict
}

/// The answer to a `withdraw` of request `request` of a connection, when
/// that request is not held there now.
pub fn not_held(request: u64) -> ClientReply {
    error(
        ErrorKind::BadRequest,
        format!(
            "request {request} of this connection is not waiting for approval (answered already, or never held): nothing to withdraw"
        ),
        None,
    )
}

/// Withdraws `held` for `caller`; the answer to its `withdraw` request
/// `request`.
fn withdraw<'a>(
    approvals: &'a Approvals,
    held: HeldCall,
    caller: &Caller<'_>,
    request: u64,
    reason: Option<String>,
) -> impl Future<Output = (u64, ClientReply)> + Send + 'a {
    let (client, held_request) = (caller.client(), caller.id);
    async move { withdrawn(approvals, held, client, held_request, request, reason).await }
}

async fn withdrawn(
    approvals: &Approvals,
    held: HeldCall,
    client: Option<ClientKind>,
    held_request: u64,
    request: u64,
    reason: Option<String>,
) -> (u64, ClientReply) {
    let mut why = approval::stopped_waiting(client);
    if let Some(reason) = reason.filter(|r| !r.trim().is_empty()) {
        why = format!("{why}: {reason}");
    }
    let decided = approvals
        .decide(
            &held.instance,
            &held.call,
            Decision::Withdrawn { reason: why },
        )
        .await;
    let reply = match decided {
        Ok(settled) => ClientReply::Ok(json!({
            "withdrawn": true,
            "request": held_request,
            "instance": settled.instance,
            "call": settled.call,
        })),
        Err(Undecided::Already(settled)) => error(
            ErrorKind::BadRequest,
            format!(
                "{} {} was decided before it could be withdrawn: {}",
                settled.instance,
                settled.call,
                verdict(&settled)
            ),
            Some(settled_json(&settled)),
        ),
        Err(_) => not_held(request),
    };
    (request, reply)
}

/// A decision as JSON (`data` of an answer about it).
fn settled_json(settled: &Settled) -> serde_json::Value {
    json!({
        "instance": settled.instance,
        "call": settled.call,
        "decision": settled.decision,
        "by": settled.by,
        "reason": settled.reason,
        "host": settled.host,
    })
}

/// A decision, for people: `withdrawn: the agent stopped waiting`,
/// `refused by monitor`.
fn verdict(settled: &Settled) -> String {
    let mut text = match settled.decision.as_str() {
        "approved" | "refused" => format!("{} by {}", settled.decision, settled.by),
        other => other.replace('_', " "),
    };
    if let Some(reason) = settled.reason.as_deref().filter(|r| !r.is_empty()) {
        text.push_str(": ");
        text.push_str(reason);
    }
    text
}

/// `approve` / `refuse`: decides the waiting action, answering with what
/// was decided (an approved call whose catalog changed meanwhile is not
/// approved: the answer says so). An action that no longer waits is
/// answered with how it was decided: `withdrawn` when its caller withdrew
/// it.
pub async fn decide(
    shared: &Shared,
    name: &str,
    call: &str,
    approve: bool,
    reason: Option<String>,
    by: String,
    host: Option<String>,
) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let decision = if approve {
        Decision::Approved { by, host }
    } else {
        Decision::Refused { by, reason, host }
    };
    let call = approval::call_id(call);
    let wanted = if approve { "approved" } else { "refused" };
    match shared.approvals.decide(&instance.id, &call, decision).await {
        Ok(settled) if settled.decision == wanted => {
            ClientReply::Ok(json!({"instance": instance.id, "call": call, "approved": approve}))
        }
        Ok(settled) => error(
            ErrorKind::BadRequest,
            format!(
                "{} {call} was not approved: {}; nothing was sent to it",
                instance.id,
                verdict(&settled)
            ),
            Some(settled_json(&settled)),
        ),
        Err(Undecided::Already(settled)) if settled.decision == "withdrawn" => error(
            ErrorKind::Withdrawn,
            format!(
                "{} {call} was withdrawn ({}); nothing was done, and nothing will be",
                instance.id,
                verdict(&settled)
            ),
            Some(settled_json(&settled)),
        ),
        Err(Undecided::Already(settled)) => error(
            ErrorKind::BadRequest,
            format!(
                "{} {call} no longer waits for approval: {}",
                instance.id,
                verdict(&settled)
            ),
            Some(settled_json(&settled)),
        ),
        Err(Undecided::NotHeld) => error(
            ErrorKind::BadRequest,
            format!(
                "no action {call} of {} waits for approval (decided long ago, or never held); `tickloop approvals` lists the waiting ones",
                instance.id
            ),
            None,
        ),
        Err(Undecided::Dropped) => error(
            ErrorKind::Internal,
            format!("{} {call}: tickhost is stopping; it was not decided", instance.id),
            None,
        ),
    }
}
