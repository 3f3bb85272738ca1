//! An agent's typing into the program's terminal: text (`input`) and keys
//! by name (`keys`), noted in the activity record as typed, or, when the
//! terminal does not echo what is typed (a password prompt: ECHO off in
//! canonical mode, read as the typing is written), as how much was typed,
//! never what ([`EchoOffTyping`]): nothing typed at such a prompt is kept,
//! written to disk (the activity is kept beside the last screen) or
//! answered to anyone.

use super::agent_terminal;
use super::requests::{answer, Asked};
use crate::activity::ActivityLog;
use crate::socket::{error, Peer};
use crate::terminal::TerminalHandle;
use serde_json::json;
use tickloop_proto::wire::{ClientKind, ClientReply, EchoOffTyping, ErrorKind, TerminalOutcome};

/// `input`: `text` typed on the terminal, as a person would.
pub(super) fn input(
    term: &TerminalHandle,
    activity: &mut ActivityLog,
    (id, peer, client): (u64, &Peer, Option<ClientKind>),
    text: String,
) {
    let echo_off = term.echo_off();
    let asked = Asked::new(client, "input");
    let asked = if echo_off {
        asked.with_echo_off(EchoOffTyping::of::<&str>(Some(&text), &[]))
    } else {
        asked.with_args(&json!(text))
    };
    let bytes = text.into_bytes();
    let n = bytes.len();
    let reply = match term.input(bytes) {
        Ok(()) => ClientReply::Ok(with_echo_off(json!({"ok": true, "bytes": n}), echo_off)),
        Err(e) => error(ErrorKind::Internal, &e.to_string()),
    };
    answer(activity, typed_if_ok(asked, &reply), id, peer, reply);
}

/// `keys`: named keys after `text`, encoded for the program's modes.
pub(super) fn keys(
    term: &TerminalHandle,
    activity: &mut ActivityLog,
    (id, peer, client): (u64, &Peer, Option<ClientKind>),
    text: Option<String>,
    keys: Vec<String>,
) {
    let echo_off = term.echo_off();
    let asked = Asked::new(client, "keys");
    let asked = if echo_off {
        asked.with_echo_off(EchoOffTyping::of(text.as_deref(), &keys))
    } else {
        asked.with_args(&match &text {
            Some(text) => json!({"text": text, "keys": keys}),
            None => json!(keys),
        })
    };
    let reply = match agent_terminal::keys(term, text, &keys) {
        ClientReply::Ok(value) => ClientReply::Ok(with_echo_off(value, echo_off)),
        // An unknown key's name is not repeated from a prompt with echo
        // off (tickhost checks every name before it forwards any).
        ClientReply::Error(_) if echo_off => error(
            ErrorKind::BadRequest,
            "a key name is unknown; nothing was typed (at a prompt with echo off, the names are not repeated)",
        ),
        other => other,
    };
    answer(activity, typed_if_ok(asked, &reply), id, peer, reply);
}

/// `asked`, noted as typed when `reply` says it was.
fn typed_if_ok(asked: Asked, reply: &ClientReply) -> Asked {
    match reply {
        ClientReply::Ok(_) => asked.came_to(Some(TerminalOutcome::Typed)),
        _ => asked,
    }
}

/// An answer to typing, saying when it went to a prompt with echo off (so
/// the agent knows it was not kept).
fn with_echo_off(mut value: serde_json::Value, echo_off: bool) -> serde_json::Value {
    if echo_off {
        value["echo_off"] = json!(true);
    }
    value
}
