//! Requests on their way to the Tick and back: each waits under a token
//! for the protocol session's reply, and what the activity record notes of
//! every request (who asked what, how it ended, how long it took).

use crate::activity::{kept, ActivityLog};
use crate::socket::Peer;
use std::collections::HashMap;
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::core::{ClientToken, SessionRequest};
use tickloop_proto::wire::{
    ActivityOutcome, CallOutcome, ClientKind, ClientReply, EchoOffTyping, TerminalOutcome,
};
use tokio::time::Instant;

/// The requests waiting for the Tick's answer, by the token the session
/// knows them by.
pub(super) struct Waiting {
    pending: HashMap<ClientToken, Pending>,
    next_token: ClientToken,
}

impl Waiting {
    pub(super) fn new() -> Waiting {
        Waiting {
            pending: HashMap::new(),
            next_token: 1,
        }
    }

    /// Request `id` from `peer` waits; returns the token to ask the
    /// session with.
    pub(super) fn add(&mut self, id: u64, peer: Peer, asked: Asked) -> ClientToken {
        let token = self.next_token;
        self.next_token += 1;
        self.pending.insert(token, Pending { id, peer, asked });
        token
    }

    /// The request the session answered under `token`, if it still waits.
    pub(super) fn take(&mut self, token: ClientToken) -> Option<Pending> {
        self.pending.remove(&token)
    }

    /// Every request still waiting.
    pub(super) fn drain(&mut self) -> Vec<Pending> {
        self.pending.drain().map(|(_, p)| p).collect()
    }
}

/// A request waiting for the Tick's answer.
pub(super) struct Pending {
    id: u64,
    peer: Peer,
    asked: Asked,
}

impl Pending {
    /// Answers it with `reply`, noted in the activity.
    pub(super) fn answer(self, activity: &mut ActivityLog, reply: ClientReply) {
        answer(activity, self.asked, self.id, &self.peer, reply);
    }
}

/// Answers request `id` from `peer` with `reply`, noted in the activity.
pub(super) fn answer(
    activity: &mut ActivityLog,
    asked: Asked,
    id: u64,
    peer: &Peer,
    reply: ClientReply,
) {
    record_request(activity, asked, &reply);
    peer.reply(id, reply);
}

/// Notes how request `asked` ended in the activity (answered elsewhere).
pub(super) fn record(activity: &mut ActivityLog, asked: Asked, reply: &ClientReply) {
    record_request(activity, asked, reply);
}

/// What the activity record needs of a request, noted when it came in.
pub(super) struct Asked {
    client: Option<ClientKind>,
    method: &'static str,
    tool: Option<String>,
    args: Option<serde_json::Value>,
    /// Typing at a prompt with echo off, kept as how much in place of
    /// `args`.
    echo_off: Option<EchoOffTyping>,
    revision: Option<String>,
    /// Typing and `run`: what it came to on the terminal.
    terminal: Option<TerminalOutcome>,
    at: String,
    since: Instant,
}

impl Asked {
    pub(super) fn new(client: Option<ClientKind>, method: &'static str) -> Asked {
        Asked {
            client,
            method,
            tool: None,
            args: None,
            echo_off: None,
            revision: None,
            terminal: None,
            at: now_rfc3339_millis(),
            since: Instant::now(),
        }
    }

    /// The same, with its arguments (as the activity keeps them).
    pub(super) fn with_args(self, args: &serde_json::Value) -> Asked {
        Asked {
            args: Some(kept(args)),
            ..self
        }
    }

    /// The same, typed at a prompt with echo off: how much, never what.
    pub(super) fn with_echo_off(self, typing: EchoOffTyping) -> Asked {
        Asked {
            args: None,
            echo_off: Some(typing),
            ..self
        }
    }

    /// The same, having come to `terminal` (typing, a `run`).
    pub(super) fn came_to(self, terminal: Option<TerminalOutcome>) -> Asked {
        Asked { terminal, ..self }
    }

    pub(super) fn of(client: Option<ClientKind>, request: &SessionRequest) -> Asked {
        match request {
            SessionRequest::Describe => Asked::new(client, "tick/describe"),
            SessionRequest::Read => Asked::new(client, "tick/read"),
            SessionRequest::Call(call) => Asked {
                tool: Some(call.tool.clone()),
                args: Some(kept(&call.args)),
                revision: Some(call.revision.clone()),
                ..Asked::new(client, "tick/call")
            },
        }
    }
}

/// Records how a request ended in the activity.
fn record_request(activity: &mut ActivityLog, asked: Asked, reply: &ClientReply) {
    if asked.client.is_none() && asked.method == "tick/describe" {
        // tickhost's own look at the catalog (after a mutating call, before
        // an approved one goes on): no agent asked.
        return;
    }
    let duration_ms = u64::try_from(asked.since.elapsed().as_millis()).unwrap_or(u64::MAX);
    let (outcome, error_code, message, result) = match reply {
        ClientReply::Ok(value) => (ActivityOutcome::Ok, None, None, Some(kept(value))),
        ClientReply::Error(e) => (ActivityOutcome::Failed, None, Some(e.message.clone()), None),
        ClientReply::Call(CallOutcome::Result { result }) => {
            (ActivityOutcome::Executed, None, None, Some(kept(result)))
        }
        ClientReply::Call(CallOutcome::Executed { error }) => (
            ActivityOutcome::Executed,
            Some(error.code),
            Some(error.message.clone()),
            None,
        ),
        ClientReply::Call(CallOutcome::NotExecuted { error }) => (
            ActivityOutcome::NotExecuted,
            Some(error.code),
            Some(error.message.clone()),
            None,
        ),
        ClientReply::Call(CallOutcome::Unknown { reason }) => {
            (ActivityOutcome::Unknown, None, Some(reason.clone()), None)
        }
    };
    // A describe's result is the whole descriptor: its tools are in the
    // overlay's catalog already.
    let result = result.filter(|_| asked.method != "tick/describe");
    activity.request(
        asked.at,
        tickloop_proto::wire::RequestActivity {
            client: asked.client,
            method: asked.method.to_string(),
            tool: asked.tool,
            args: asked.args,
            echo_off: asked.echo_off,
            revision: asked.revision,
            outcome,
            error_code,
            error: message,
            result,
            duration_ms,
            terminal: asked.terminal,
        },
    );
}
