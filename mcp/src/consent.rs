//! Asking the person in the agent host. While tickhost holds an agent's
//! action for a person (a call of a `mutates: true` tool on an `ask`
//! instance, or an agent typing into or closing a person's instance), the
//! bridge also puts the question to the MCP client itself with
//! `elicitation/create` (form mode, MCP 2025-06-18 to 2025-11-25), when the
//! client declared it can and `[approval] ask_in_host` is not `false` in
//! the config file.
//!
//! The first answer wins, wherever it comes from: the host's Accept approves
//! (`Decide{by: "mcp-host"}`), Decline or a dismissed dialog refuses (the
//! agent is told not executed, -32010), and an answer given elsewhere first
//! (the Monitor, `tickloop approve`, Herdr) withdraws the host's question
//! (`notifications/cancelled`). The approval log names the host that
//! answered (its `clientInfo`). Claude Code ignores the withdrawal of a
//! request whose id is 0 (the first rmcp sends on a connection), so a
//! `ping` takes that id before the first question ([`IdZero`]).
//!
//! [`question`] is the question's text and form, the one place they are
//! made (the 2026-07-28 input-required round trip asks the same).

use crate::caller::Caller;
use crate::hosts::{error_kind, HostError, Hosts};
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    InputRequest, PingRequest, ProtocolVersion, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestHandle};
use rmcp::{Peer, RoleServer};
use std::collections::BTreeMap;
use std::sync::Arc;
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{ClientReply, ClientRequest, HeldAction, HeldCall};
use tokio::sync::oneshot;

/// Who decides, in the approval log and in a refusal's `data.by`, when the
/// person answered in the agent host.
pub const BY_HOST: &str = "mcp-host";

/// The widest line of the question: an 80-column host's dialog, less its
/// margins (Claude Code indents it by two on each side).
const WIDTH: usize = 76;

/// The most lines a question may take: what an 80x24 host's dialog shows
/// with its title and buttons. A question that needs more is not asked in
/// the host (its dialog could hide the end of a command) but only where
/// it shows whole.
pub const MAX_LINES: usize = 12;

/// Escaped text in lines of at most [`WIDTH`] characters, whole (the
/// lines put together are the text), folded after a space when one is in
/// the second half of the line, never inside an escape; `None` past `max`
/// lines.
fn wrapped(shown: &str, max: usize) -> Option<Vec<String>> {
    if shown.chars().count() > WIDTH * max {
        return None;
    }
    let mut lines = Vec::new();
    let mut rest = shown;
    while !rest.is_empty() {
        let mut line = match tickloop_proto::escape::prefix(rest, WIDTH) {
            // An escape is shorter than a line: this is never taken.
            "" => rest,
            line => line,
        };
        if line.len() < rest.len() {
            if let Some(space) = line.rfind(' ').filter(|&at| at >= line.len() / 2) {
                line = &line[..=space];
            }
        }
        lines.push(line.to_string());
        rest = &rest[line.len()..];
    }
    (lines.len() <= max).then_some(lines)
}

/// The question put to the person about `held`, asked by `asker` (the
/// agent of this host and session), in form mode with an empty form, so
/// Accept and Decline are all the person needs. Lines of at most 76
/// characters (an 80-column host shows them unfolded), everything from
/// the agent or the Tick escaped ([`tickloop_proto::escape`]) and nothing
/// cut: what will happen, in plain words and whole; who asks; the deadline
/// and what the buttons do; and last the details (the command that
/// answers elsewhere, and for a call the tool, its arguments whole and its
/// catalog revision). A question longer than [`MAX_LINES`] is not asked in
/// the host: the error says why, for the agent.
pub fn question(held: &HeldCall, asker: &str) -> Result<ElicitRequestParams, String> {
    let what = match held.action {
        // A tool's description rarely names the instance.
        HeldAction::Call => format!("{} · {}", held.plainly(), escaped(&held.instance)),
        _ => held.plainly(),
    };
    let mut details = format!(
        "tickloop approve|refuse {} {}",
        escaped(&held.instance),
        escaped(&held.call)
    );
    if held.action == HeldAction::Call {
        details.push_str(&format!(
            " · {} {} rev {}",
            escaped(&held.tool),
            tickloop_proto::escape::json(&held.args),
            escaped(&held.revision)
        ));
    }
    let parts = [
        what,
        format!("Asked by {}.", escaped(asker)),
        format!(
            "Answer by {}. Accept runs it once; Decline refuses it.",
            held.deadline_text()
        ),
        details,
    ];
    let too_long = || {
        let length: usize = parts.iter().map(|p| p.chars().count()).sum();
        format!(
            "the question is {length} characters long, more than an agent host's dialog shows whole ({MAX_LINES} lines of {WIDTH}), so it is asked only where it shows whole"
        )
    };
    let mut lines = Vec::new();
    for part in &parts {
        let room = MAX_LINES.saturating_sub(lines.len());
        lines.extend(wrapped(part, room).ok_or_else(too_long)?);
    }
    Ok(ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: lines.join("\n"),
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    })
}

/// The question as one of a 2026-07-28 input-required result's
/// `inputRequests` ([`crate::held`], [`crate::tasks`]); an error, for the
/// agent, when it is too long to ask in the host ([`question`]).
pub fn input_request(held: &HeldCall, asker: &str) -> Result<InputRequest, String> {
    question(held, asker).map(|q| InputRequest::Elicitation(ElicitRequest::new(q)))
}

/// The agent host, as the approval log names it: `NAME VERSION` from its
/// `clientInfo`.
fn host_name(peer: &Peer<RoleServer>) -> Option<String> {
    peer.peer_info().map(|info| {
        let client = &info.client_info;
        format!("{} {}", client.name, client.version)
    })
}

/// Whether the client declared it can show a form (`elicitation` with
/// `form`, or with neither mode, which means form), in a revision where the
/// server may send it a request (before 2026-07-28, whose input-required
/// round trip asks instead).
fn asks_forms(peer: &Peer<RoleServer>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.protocol_version < ProtocolVersion::V_2026_07_28
            && info
                .capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.form.is_some() || e.url.is_none())
    })
}

/// Whether the person lets the bridge ask in the agent host
/// (`[approval] ask_in_host`, default true). An unreadable config file
/// asks nowhere but tickloop's own places: the person may have turned it
/// off there.
fn allowed_by_config() -> bool {
    match tickloop_client::config::load() {
        Ok(config) => config.ask_in_host(),
        Err(e) => {
            eprintln!("tickloop mcp: not asking in the agent host: {e}");
            false
        }
    }
}

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
    async fn spend(&self, peer: &Peer<RoleServer>) {
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

/// The agent host that may be asked about one agent request's held
/// actions.
pub struct HostQuestion {
    peer: Peer<RoleServer>,
    id_zero: IdZero,
    hosts: Hosts,
    /// The instance as this bridge names it (with several machines, its
    /// `HOST:` prefix): where the answer goes.
    instance: String,
    /// Who asks, as the question names it.
    asker: String,
}

/// A question put to the host, until it is answered or withdrawn.
pub struct Asked {
    withdraw: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<()>,
}

impl Asked {
    /// The action was answered (anywhere): if the host's question is still
    /// open, it is withdrawn.
    pub async fn finish(self) {
        let _ = self.withdraw.send(());
        let _ = self.task.await;
    }
}

impl HostQuestion {
    /// The host of `peer`, when it can be asked (it declared form
    /// elicitation, and the config allows it); `instance` as the agent named
    /// it.
    pub fn of(caller: &Caller, hosts: &Hosts, instance: &str) -> Option<HostQuestion> {
        let peer = &caller.peer;
        (caller.not_asked.is_none() && asks_forms(peer) && allowed_by_config()).then(|| {
            HostQuestion {
                peer: peer.clone(),
                id_zero: caller.id_zero.clone(),
                hosts: hosts.clone(),
                instance: instance.to_string(),
                asker: caller.asker.clone(),
            }
        })
    }

    /// The host's name, for progress messages.
    pub fn name(&self) -> String {
        host_name(&self.peer).unwrap_or_else(|| "the agent host".into())
    }

    /// Puts the question about `held` to the host; `Ok(None)` when it
    /// cannot be sent (said on stderr: the person still answers
    /// elsewhere); an error, for the agent, when the question is too long
    /// for the host's dialog ([`question`]).
    pub async fn ask(&self, held: &HeldCall) -> Result<Option<Asked>, String> {
        let request =
            ServerRequest::ElicitRequest(ElicitRequest::new(question(held, &self.asker)?));
        self.id_zero.spend(&self.peer).await;
        let handle = match self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => {
                eprintln!(
                    "tickloop mcp: cannot ask the agent host about {}: {e}",
                    held.call
                );
                return Ok(None);
            }
        };
        let (withdraw, withdrawn) = oneshot::channel();
        let answer = Answer {
            hosts: self.hosts.clone(),
            instance: self.instance.clone(),
            call: held.call.clone(),
            host: host_name(&self.peer),
        };
        let task = tokio::spawn(wait_for_answer(handle, withdrawn, answer));
        Ok(Some(Asked { withdraw, task }))
    }
}

/// Where the host's answer goes, and what it names.
struct Answer {
    hosts: Hosts,
    instance: String,
    call: String,
    host: Option<String>,
}

/// Waits for the host's answer and hands it to tickhost, or withdraws the
/// question when the action was answered elsewhere first.
async fn wait_for_answer(
    mut handle: RequestHandle<RoleServer>,
    withdrawn: oneshot::Receiver<()>,
    answer: Answer,
) {
    let response = tokio::select! {
        response = &mut handle.rx => Some(response),
        _ = withdrawn => None,
    };
    let result = match response {
        None => {
            let reason = "answered elsewhere (the Monitor, the CLI or Herdr)".to_string();
            let _ = handle.cancel(Some(reason)).await;
            return;
        }
        Some(Ok(Ok(ClientResult::ElicitResult(result)))) => result,
        Some(other) => {
            // An error or a strange answer is no answer: the person still
            // decides elsewhere.
            eprintln!(
                "tickloop mcp: the agent host did not answer the question about {}: {other:?}",
                answer.call
            );
            return;
        }
    };
    let host = answer.host.as_deref().unwrap_or("the agent host");
    let (approve, reason) = match result.action {
        ElicitationAction::Accept => (true, None),
        ElicitationAction::Decline => (false, Some(format!("declined in {host}"))),
        // Cancel, and anything a later revision adds: not a yes.
        _ => (false, Some(format!("dismissed in {host}"))),
    };
    let request = ClientRequest::Decide {
        instance: answer.instance,
        call: answer.call.clone(),
        approve,
        reason,
        by: BY_HOST.into(),
        host: answer.host,
    };
    match answer.hosts.request(request).await {
        Ok(ClientReply::Ok(_)) => {}
        // Decided elsewhere a moment before: that answer stands.
        Ok(ClientReply::Error(e)) => eprintln!(
            "tickloop mcp: the host's answer to {} came too late ({}: {})",
            answer.call,
            error_kind(e.kind),
            e.message
        ),
        Ok(other) => eprintln!("tickloop mcp: tickhost answered a decision with {other:?}"),
        Err(HostError::Connect(m) | HostError::Lost(m)) => {
            eprintln!("tickloop mcp: cannot hand the host's answer to tickhost: {m}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn held(tool: &str, revision: &str, args: Value) -> HeldCall {
        let action = match (tool, revision.is_empty()) {
            ("input", true) => tickloop_proto::wire::HeldAction::Input,
            ("close", true) => tickloop_proto::wire::HeldAction::Close,
            _ => tickloop_proto::wire::HeldAction::Call,
        };
        HeldCall {
            action,
            call: "%7".into(),
            instance: "hosted:counter".into(),
            tool: tool.into(),
            description: "adds".into(),
            args,
            echo_off: None,
            revision: revision.into(),
            client: None,
            since: String::new(),
            waited_ms: 0,
            timeout_ms: 600_000,
        }
    }

    #[test]
    fn the_question_says_what_happens_whole_then_who_asks_and_by_when_in_short_lines() {
        let mut call = held("increment", "3", json!({"amount": 2}));
        call.description = "Add `amount` (default 1) to the counter.".into();
        call.since = "2026-12-03T08:42:05.000Z".into();
        let asker = "this session's agent (Claude Code, session 9ec968c8)";
        let params = question(&call, asker).expect("short enough");
        let wire = serde_json::to_value(&params).expect("encodes");
        assert_eq!(wire["mode"], "form");
        assert_eq!(
            wire["requestedSchema"],
            json!({"type": "object", "properties": {}})
        );
        let message = wire["message"].as_str().unwrap_or_default();
        let lines: Vec<&str> = message.lines().collect();
        assert_eq!(
            lines,
            [
                "Add 2 (default 1) to the counter? · hosted:counter",
                "Asked by this session's agent (Claude Code, session 9ec968c8).",
                "Answer by 08:52:05 UTC (10 min). Accept runs it once; Decline refuses it.",
                "tickloop approve|refuse hosted:counter %7 · increment {\"amount\":2} rev 3",
            ]
        );
        let message_of = |held: &HeldCall| {
            let params = question(held, asker).expect("short enough");
            let wire = serde_json::to_value(&params).expect("encodes");
            wire["message"].as_str().unwrap_or_default().to_string()
        };
        let typing = message_of(&held("input", "", json!({"text": "ls\r"})));
        assert!(
            typing.starts_with("Type `ls` ⏎ into hosted:counter?"),
            "{typing}"
        );
        // A command with a gap of 150 spaces: its tail is in the question,
        // the lines folded at 76 characters, never cut.
        let command = format!("ls{};touch FILE", " ".repeat(150));
        let run = message_of(&held("input", "", json!({"text": command})));
        assert!(run.lines().all(|l| l.chars().count() <= WIDTH), "{run}");
        assert_eq!(
            run.lines().take(3).collect::<String>(),
            format!("Type `{command}` into hosted:counter?")
        );
        // Bidi and zero-width characters escaped, in the question and the
        // details.
        let mut trojan = held("note", "2", json!({"text": "a\u{202e}b\u{200b}"}));
        trojan.description = "Write `text`.".into();
        let message = message_of(&trojan);
        assert!(
            message.starts_with("Write \"a\\u{202E}b\\u{200B}\"? · hosted:counter"),
            "{message}"
        );
        assert!(
            message
                .replace('\n', "")
                .contains(r#"note {"text":"a\u{202E}b\u{200B}"} rev 2"#),
            "{message}"
        );
        assert!(
            !message.contains('\u{202e}') && !message.contains('\u{200b}'),
            "{message}"
        );
        // Too long for the host's dialog: not asked there, and why.
        let long = question(&held("set", "1", json!({"text": "x".repeat(5000)})), asker);
        let why = long.expect_err("too long for a dialog");
        assert!(why.contains("only where it shows whole"), "{why}");
        let input = question(&held("input", "", json!({"text": "y".repeat(900)})), asker);
        assert!(input.is_err());
    }
}
