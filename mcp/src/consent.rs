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
//! answered (its `clientInfo`).
//!
//! [`question`] is the question's text and form, the one place they are
//! made (the 2026-07-28 input-required round trip asks the same).

use crate::hosts::{error_kind, HostError, Hosts};
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    InputRequest, ProtocolVersion, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestHandle};
use rmcp::{Peer, RoleServer};
use std::collections::BTreeMap;
use tickloop_proto::wire::{ClientReply, ClientRequest, HeldCall};
use tokio::sync::oneshot;

/// Who decides, in the approval log and in a refusal's `data.by`, when the
/// person answered in the agent host.
pub const BY_HOST: &str = "mcp-host";

/// Arguments longer than this are cut in the question (the Monitor and
/// `tickloop approvals` show them whole).
const ARGS_SHOWN: usize = 600;

/// What an agent asked for that waits: a call of a tool, or typing into or
/// closing the instance (tickhost names those with an empty revision and
/// `tool` `input` or `close`).
fn action(held: &HeldCall) -> &str {
    held.action.as_str()
}

/// The question put to the person about `held`, in form mode: a message
/// naming the instance, the action or tool, the arguments, the catalog
/// revision and that it changes things, and an empty form, so Accept and
/// Decline are all the person needs.
pub fn question(held: &HeldCall) -> ElicitRequestParams {
    let mut args = held.args.to_string();
    if args.len() > ARGS_SHOWN {
        let cut = args.floor_char_boundary(ARGS_SHOWN);
        args.truncate(cut);
        args.push_str(" …");
    }
    let what = match action(held) {
        "input" if held.tool == "run" => format!(
            "an agent wants to run a command at the prompt of {}\nThe command: {args}",
            held.instance
        ),
        "input" => format!(
            "an agent wants to type into {}\nThe text: {args}",
            held.instance
        ),
        "close" => format!("an agent wants to close {}", held.instance),
        _ => format!(
            "an agent wants to call `{}` on {}\nArguments: {args}\nCatalog revision {} · mutates: true",
            held.tool, held.instance, held.revision
        ),
    };
    let message = format!(
        "Tickloop: {what}\nAccept runs it once; Decline refuses it (not executed).\n\
         Or answer in the Monitor, or: tickloop approve|refuse {} {}",
        held.instance, held.call
    );
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    }
}

/// The question as one of a 2026-07-28 input-required result's
/// `inputRequests` ([`crate::held`], [`crate::tasks`]).
pub fn input_request(held: &HeldCall) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(question(held)))
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

/// The agent host that may be asked about one agent request's held
/// actions.
pub struct HostQuestion {
    peer: Peer<RoleServer>,
    hosts: Hosts,
    /// The instance as this bridge names it (with several machines, its
    /// `HOST:` prefix): where the answer goes.
    instance: String,
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
    pub fn of(peer: &Peer<RoleServer>, hosts: &Hosts, instance: &str) -> Option<HostQuestion> {
        (asks_forms(peer) && allowed_by_config()).then(|| HostQuestion {
            peer: peer.clone(),
            hosts: hosts.clone(),
            instance: instance.to_string(),
        })
    }

    /// The host's name, for progress messages.
    pub fn name(&self) -> String {
        host_name(&self.peer).unwrap_or_else(|| "the agent host".into())
    }

    /// Puts the question about `held` to the host; `None` when it cannot be
    /// sent (said on stderr: the person still answers elsewhere).
    pub async fn ask(&self, held: &HeldCall) -> Option<Asked> {
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(question(held)));
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
                return None;
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
        Some(Asked { withdraw, task })
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
            revision: revision.into(),
            client: None,
            since: String::new(),
            waited_ms: 0,
            timeout_ms: 600_000,
        }
    }

    #[test]
    fn the_question_names_what_waits_and_asks_for_nothing_but_yes_or_no() {
        let params = question(&held("increment", "3", json!({"amount": 2})));
        let wire = serde_json::to_value(&params).expect("encodes");
        assert_eq!(wire["mode"], "form");
        assert_eq!(
            wire["requestedSchema"],
            json!({"type": "object", "properties": {}})
        );
        let message = wire["message"].as_str().unwrap_or_default();
        for part in [
            "`increment`",
            "hosted:counter",
            r#"{"amount":2}"#,
            "revision 3 · mutates: true",
            "tickloop approve|refuse hosted:counter %7",
        ] {
            assert!(message.contains(part), "{part} missing from {message}");
        }
        let typing = question(&held("input", "", json!({"text": "ls\r"})));
        let wire = serde_json::to_value(&typing).expect("encodes");
        let message = wire["message"].as_str().unwrap_or_default();
        assert!(message.contains("type into hosted:counter"), "{message}");
        let long = question(&held("set", "1", json!({"text": "x".repeat(5000)})));
        let wire = serde_json::to_value(&long).expect("encodes");
        assert!(wire["message"].as_str().unwrap_or_default().len() < 1000);
    }
}
