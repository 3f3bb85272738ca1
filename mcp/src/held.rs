//! Approval in the 2026-07-28 round trip. A server cannot send the client a
//! request in that revision, so when tickhost holds a Tick call for a
//! person's approval, the `tools/call` is answered with an input-required
//! result: an `elicitation/create` form ([`crate::consent::question`]) and an opaque
//! `requestState`. The call itself stays in flight here, under that state.
//! When the client calls again with the person's answer and the state,
//! the answer goes to tickhost as a decision `by: "mcp-host"` (accept:
//! approve; decline or cancel: refuse), and the retried request gets the
//! held call's real outcome. If the person answered elsewhere first (the
//! CLI, the Monitor), the retried request just gets the outcome.
//!
//! Only for a request whose client declared form elicitation, and unless
//! the config says `[approval] ask_in_host = false`; otherwise the call
//! waits as in the older revisions (progress notifications).

use crate::caller::Caller;
use crate::host_asks::{AskInHost, HostFacts};
use crate::hosts::Hosts;
use crate::launch::Launch;
use crate::revisions;
use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitResult, ElicitationAction, InputRequests,
    InputRequiredResult, InputResponses,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::json;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tickloop_proto::wire::{ClientReply, ClientRequest, HeldCall};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The key of the question in `inputRequests` / `inputResponses`.
const KEY: &str = "approval";

/// Who a decision made through the host is recorded as.
pub const BY: &str = "mcp-host";

/// A call whose outcome nobody came back for is forgotten this long after
/// it was asked about (tickhost's own time-out has answered it by then).
const FORGET_AFTER: Duration = Duration::from_secs(3600);

/// A Tick call as it runs: its outcome when it has one.
pub type Running = JoinHandle<Result<CallToolResult, ErrorData>>;

/// A held call the client was asked about.
struct Asked {
    /// The MCP tool the client called (its retry names it again).
    tool: String,
    held: HeldCall,
    call: Running,
    since: Instant,
    /// Who asks, as the question names it.
    asker: String,
}

/// The held calls asked about in the host, by `requestState`.
pub struct HostApproval {
    hosts: Hosts,
    /// Which hosts are asked (`--ask-in-host`; `never` when the config says
    /// `[approval] ask_in_host = false`).
    mode: AskInHost,
    /// Who started the bridge: only the host's own asks in it.
    launch: Launch,
    asked: Mutex<HashMap<String, Asked>>,
    minted: AtomicU64,
}

impl HostApproval {
    pub fn new(hosts: Hosts, mode: AskInHost, launch: Launch) -> HostApproval {
        HostApproval {
            hosts,
            mode,
            launch,
            asked: Mutex::new(HashMap::new()),
            minted: AtomicU64::new(0),
        }
    }

    fn asked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Asked>> {
        // A panic while holding the lock leaves plain data behind; go on with it.
        self.asked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether this request's held call is asked about in the host: a
    /// 2026-07-28 request whose client declared form elicitation, with
    /// asking in the host allowed.
    pub fn wanted(&self, context: &RequestContext<RoleServer>) -> bool {
        revisions::stateless_request(context) && self.can_ask(context)
    }

    /// Whether the request's client can be asked (it declared form
    /// elicitation, and shows the question to the person as far as it
    /// tells, [`crate::host_asks`]): a task's `input_required`
    /// ([`crate::tasks`]) asks then, whatever the revision.
    pub fn can_ask(&self, context: &RequestContext<RoleServer>) -> bool {
        self.not_asked(context).is_none()
    }

    /// Why the request's host is not asked about a held action (for the
    /// agent's progress and result); `None`: it is.
    pub fn not_asked(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        if let Some(why) = self.launch.not_asked() {
            return Some(why);
        }
        let declared = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        if !declared && self.mode != AskInHost::Never {
            return Some(
                "the agent host declared no MCP elicitation (it cannot show the question)".into(),
            );
        }
        crate::host_asks::not_asked(self.mode, &HostFacts::of(context))
    }

    /// A [`Caller`] that reports holds to the receiver [`Self::first`]
    /// waits on. Its call outlives the request that started it (answered
    /// with the question or a task, which cancels the request's token), so
    /// it is not withdrawn with that request: the person's answer, the
    /// host's, a task's cancel or tickhost's time-out ends it.
    pub fn on_hold(caller: Caller) -> (Caller, mpsc::UnboundedReceiver<HeldCall>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Caller {
                ask: Some(tx),
                cancelled: tokio_util::sync::CancellationToken::new(),
                ..caller
            },
            rx,
        )
    }

    /// The first answer to a call started with [`Self::on_hold`]: its
    /// outcome, or, once tickhost holds it, the question (the call goes on
    /// under a new `requestState`).
    pub async fn first(
        &self,
        tool: &str,
        mut call: Running,
        mut holds: mpsc::UnboundedReceiver<HeldCall>,
        asker: String,
    ) -> Result<CallToolResponse, ErrorData> {
        tokio::select! {
            done = &mut call => finished(done),
            Some(held) = holds.recv() => {
                // Later words of the same hold (every 30 s) need nobody.
                tokio::spawn(async move { while holds.recv().await.is_some() {} });
                match crate::consent::input_request(&held, &asker) {
                    Ok(input) => Ok(self.ask(tool.to_string(), held, call, asker, input)),
                    // Too long for the host's dialog: the person answers
                    // where it shows whole, and the call's outcome (its
                    // note says where it waited) is the answer.
                    Err(_) => finished(call.await),
                }
            }
        }
    }

    /// Keeps `call` under a new `requestState` and asks `input` (the
    /// question about `held`).
    fn ask(
        &self,
        tool: String,
        held: HeldCall,
        call: Running,
        asker: String,
        input: rmcp::model::InputRequest,
    ) -> CallToolResponse {
        let state = self.mint();
        {
            let mut asked = self.asked();
            asked.retain(|_, a| !a.call.is_finished() || a.since.elapsed() < FORGET_AFTER);
            asked.insert(
                state.clone(),
                Asked {
                    tool,
                    held,
                    call,
                    since: Instant::now(),
                    asker,
                },
            );
        }
        let mut requests = InputRequests::new();
        requests.insert(KEY.to_string(), input);
        CallToolResponse::InputRequired(InputRequiredResult::new(Some(requests), Some(state)))
    }

    /// An opaque, unguessable handle.
    fn mint(&self) -> String {
        let n = self.minted.fetch_add(1, Ordering::SeqCst);
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(n);
        format!("held-{n}-{:016x}", hasher.finish())
    }

    /// The client came back with `request_state` and (it should) the
    /// person's answer: the decision goes to tickhost, then the held
    /// call's outcome is the answer. Without an answer the question is
    /// asked again.
    pub async fn answer(
        &self,
        tool: &str,
        request_state: &str,
        responses: Option<&InputResponses>,
        host: Option<String>,
    ) -> Result<CallToolResponse, ErrorData> {
        let asked = {
            let mut all = self.asked();
            match all.remove(request_state) {
                Some(a) if a.tool == tool => a,
                Some(a) => {
                    let problem = format!(
                        "this requestState belongs to a call of {:?}, not {tool:?}: send the same tools/call again with inputResponses and requestState",
                        a.tool
                    );
                    all.insert(request_state.to_string(), a);
                    return Err(ErrorData::invalid_params(problem, None));
                }
                None => {
                    return Err(ErrorData::invalid_params(
                        "requestState is not one this server handed out, or its call was answered already (or the server restarted): call the tool again without inputResponses and requestState",
                        Some(json!({"requestState": request_state})),
                    ))
                }
            }
        };
        let Some(response) = responses.and_then(|r| r.get(KEY)) else {
            return match crate::consent::input_request(&asked.held, &asked.asker) {
                Ok(input) => Ok(self.ask(asked.tool, asked.held, asked.call, asked.asker, input)),
                // It was asked once, so it is short enough; were it not, the
                // person answers elsewhere.
                Err(_) => finished(asked.call.await),
            };
        };
        let answer: ElicitResult = match serde_json::from_value(response.clone()) {
            Ok(a) => a,
            Err(e) => {
                let problem = format!(
                    "inputResponses.{KEY} is not an elicitation result ({e}); send {{\"action\": \"accept\"|\"decline\"|\"cancel\"}} with the requestState"
                );
                self.asked().insert(request_state.to_string(), asked);
                return Err(ErrorData::invalid_params(problem, None));
            }
        };
        self.decide(&asked.held, &answer.action, host).await;
        finished(asked.call.await)
    }

    /// Sends the person's answer to tickhost. A call decided elsewhere first
    /// (or timed out) is no longer waiting; its outcome stands.
    /// `host` names the agent host that answered (`NAME VERSION`), when it
    /// said.
    pub async fn decide(&self, held: &HeldCall, action: &ElicitationAction, host: Option<String>) {
        match action {
            ElicitationAction::Accept => self.send_decision(held, true, None, host).await,
            ElicitationAction::Decline => {
                self.send_decision(held, false, Some("declined in the agent's host"), host)
                    .await
            }
            _ => {
                self.send_decision(
                    held,
                    false,
                    Some("the question was dismissed in the agent's host"),
                    host,
                )
                .await
            }
        }
    }

    /// Sends a decision on `held` to tickhost, `by: "mcp-host"`.
    pub async fn send_decision(
        &self,
        held: &HeldCall,
        approve: bool,
        reason: Option<&str>,
        host: Option<String>,
    ) {
        if let Some(why) = self.launch.not_asked() {
            // Never reached through a question (none is asked), but no
            // answer of an agent's own client is the person's.
            eprintln!(
                "tickloop mcp: not deciding {} {} as the agent host: {why}",
                held.instance, held.call
            );
            return;
        }
        let reason = reason.map(str::to_string);
        let request = ClientRequest::Decide {
            instance: held.instance.clone(),
            call: held.call.clone(),
            approve,
            reason,
            by: BY.to_string(),
            host,
        };
        let hosts = self.hosts.clone();
        let reply =
            tokio::task::spawn_blocking(move || hosts.request_blocking(request, |_| {})).await;
        if let Ok(Ok(ClientReply::Error(e))) = &reply {
            eprintln!(
                "tickloop mcp: the host's answer on {} {} was not taken ({}); the call's outcome stands",
                held.instance, held.call, e.message
            );
        }
    }
}

/// A finished call's result as the response.
pub fn finished(
    done: Result<Result<CallToolResult, ErrorData>, tokio::task::JoinError>,
) -> Result<CallToolResponse, ErrorData> {
    match done {
        Ok(result) => result.map(CallToolResponse::Complete),
        Err(e) => Err(ErrorData::internal_error(
            format!("the call's task failed: {e}"),
            None,
        )),
    }
}
