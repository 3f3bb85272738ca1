//! Consent: what an agent does to an instance that the instance's policy
//! says a person must allow waits here, in tickhost, before anything reaches
//! the instance, until a person approves or refuses it (the Monitor's
//! prompt, `tickloop approve|refuse`, a view's activity overlay, Herdr, the
//! agent host's own question). Three actions can wait:
//!
//! * a call to a `mutates: true` tool, when the instance's `approve` policy
//!   is `ask` (any caller: the person's own `tickloop call` too);
//! * an agent (MCP, the Loop) typing into the instance, and
//! * an agent closing it, when its `agent_input` / `agent_close` policy is
//!   `ask` (the default on a person's instance; the person's own `input`
//!   and `close` never wait); an agent's `reload` waits as its close does
//!   (under `agent_close`), its `record` as its typing (under
//!   `agent_input`).
//!
//! The gate fails closed: a call whose tool or revision tickhost's copy of
//! the catalog does not know is described again before it is judged, and
//! refused when it still does not match; nothing passes unasked for want
//! of a catalog.
//!
//! A held action gets exactly one decision ([`queue`]): approved (a call
//! only once its Tick, described again, still has the revision approved),
//! refused, withdrawn (its caller stopped waiting, or withdrew it), timed
//! out, ended with its instance, or dropped for a catalog change. With
//! `deny`, the action is refused at once. Only an approved action reaches
//! the instance.
//!
//! Every decision is appended to the instance's approval log ([`log`]) and
//! to its activity record, with who acted and who decided.
//!
//! This module owns the gate and the hold: the instance is seen through
//! [`ConsentTarget`], and the caller hears that its action waits on a
//! channel it reads (it owns its connection); closing that channel is the
//! caller going away.

pub mod log;
pub mod queue;

use super::log::log;
use serde_json::{json, Value};
use std::time::Duration;
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::core::codes::{APPROVAL_REFUSED, INVALID_PARAMS, STALE_REVISION};
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{
    ApprovalLogEntry, ApprovalPolicy, CallOutcome, CallRequest, Catalog, ClientKind,
    ConsentDecision, EchoOffTyping, EndInfo, HeldAction, HeldCall, RpcError,
};
use tokio::sync::mpsc;

pub use queue::{call_id, Approvals, Decision, Settled, Undecided};

/// How often the caller hears that its action still waits.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(30);
/// How often a waiting action looks at its instance (ended? catalog
/// changed? policy turned off?).
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// The instance an action is for, as the gate sees it: looked at again
/// while the action waits, since its policies, catalog and life may change
/// meanwhile.
pub trait ConsentTarget: Sync {
    /// Its full id.
    fn id(&self) -> &str;
    /// Who approves `action` by an agent now (for calls: every caller's
    /// mutating calls).
    fn policy(&self, action: HeldAction) -> ApprovalPolicy;
    /// The revision of tickhost's copy of its catalog.
    fn revision(&self) -> Option<String>;
    /// Tool `name` of that copy: whether it mutates, and its description.
    fn tool(&self, name: &str) -> Option<(bool, String)>;
    /// Its catalog as the Tick describes it now (kept as tickhost's copy
    /// unless a newer one arrived meanwhile); `None` when it could not be
    /// described.
    fn describe(&self) -> impl std::future::Future<Output = Option<Catalog>> + Send;
    /// Whether its terminal does not echo typing now (a prompt for a
    /// password, [`EchoOffTyping`]), asked of it at this moment.
    fn echo_off(&self) -> impl std::future::Future<Output = bool> + Send;
    /// How it ended, if it did.
    fn ended(&self) -> Option<EndInfo>;
    /// Its approval log (one JSON line per decision).
    fn approval_log(&self) -> &std::path::Path;
    /// Keeps `decision` in its activity record too.
    fn note(&self, decision: ConsentDecision);
}

/// Tool `name` of `descriptor`: whether it mutates (absent: it does), and
/// its description.
pub fn tool_in(descriptor: &Value, name: &str) -> Option<(bool, String)> {
    let tools = descriptor.get("tools")?.as_array()?;
    tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .map(|t| {
            (
                t.get("mutates").and_then(Value::as_bool).unwrap_or(true),
                t.get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            )
        })
}

/// What an agent asks the gate for.
#[derive(Debug, Clone, Copy)]
pub enum Asked<'a> {
    Call(&'a CallRequest),
    Input(&'a str),
    /// Keys by name (after some text): typing, held as `input` is.
    Keys(Option<&'a str>, &'a [String]),
    /// A command typed at a shell's prompt (`run`): typing, held as
    /// `input` is, the question showing the command line.
    Run(&'a str),
    Close,
    /// An `artifact:` instance's newest version started now.
    Reload,
    /// A recording of the instance (`tickloop record`).
    Record,
}

impl Asked<'_> {
    /// The kind of action it is.
    pub fn action(&self) -> HeldAction {
        match self {
            Asked::Call(_) => HeldAction::Call,
            Asked::Input(_) | Asked::Keys(..) | Asked::Run(_) => HeldAction::Input,
            Asked::Close => HeldAction::Close,
            Asked::Reload => HeldAction::Reload,
            Asked::Record => HeldAction::Record,
        }
    }
}

/// What the gate let through.
pub enum Gate {
    /// Go on: nobody needed to ask.
    Proceed,
    /// Go on: a person (or the policy, turned to `auto`) approved it, and a
    /// call's Tick, described again, still has the revision approved.
    Approved(HeldCall),
    /// Not executed, and why.
    Refused(CallOutcome),
}

fn refused(code: i64, message: String, data: Value) -> Gate {
    Gate::Refused(CallOutcome::NotExecuted {
        error: RpcError {
            code,
            message,
            data: Some(data),
        },
    })
}

fn consent_refused(message: String, decision: &str, by: &str) -> Gate {
    refused(
        APPROVAL_REFUSED,
        message,
        json!({"approval": decision, "by": by}),
    )
}

/// Writes one held action's decisions into its instance's approval log
/// and activity record.
struct Recorder<'a, T: ConsentTarget> {
    target: &'a T,
    held: &'a HeldCall,
    /// Whether its caller is still connected (see [`gate_for`]).
    connected: &'a (dyn Fn() -> bool + Sync),
}

impl<T: ConsentTarget> Recorder<'_, T> {
    fn record(&self, decision: &str, by: &str, reason: Option<String>) {
        self.record_from(decision, by, reason, None);
    }

    /// A decision, with the agent host that answered (`by: "mcp-host"`).
    fn record_from(&self, decision: &str, by: &str, reason: Option<String>, host: Option<String>) {
        let held = self.held;
        let decision = ConsentDecision {
            action: held.action,
            client: held.client,
            call: held.call.clone(),
            instance: held.instance.clone(),
            tool: held.tool.clone(),
            args: held.args.clone(),
            echo_off: held.echo_off,
            revision: held.revision.clone(),
            decision: decision.to_string(),
            by: by.to_string(),
            reason,
            host,
        };
        let path = self.target.approval_log();
        let entry = ApprovalLogEntry {
            at: now_rfc3339_millis(),
            decision: decision.clone(),
        };
        if let Err(e) = log::append(path, &entry) {
            log(&format!(
                "approval: cannot append to {}: {e}",
                path.display()
            ));
        }
        self.target.note(decision);
    }
}

/// What the gate does with an action before anyone is asked.
enum Plan {
    Proceed,
    Refuse(Gate),
    Hold(HeldCall, ApprovalPolicy),
}

/// Whether `asked` on `target` goes on, is refused at once, or is held
/// (with the policy that holds it).
async fn plan(
    approvals: &Approvals,
    target: &impl ConsentTarget,
    asked: Asked<'_>,
    client: Option<ClientKind>,
) -> Plan {
    let action = asked.action();
    if action != HeldAction::Call && !client.is_some_and(ClientKind::is_agent) {
        // The person's own typing and closing never wait.
        return Plan::Proceed;
    }
    let policy = target.policy(action);
    if policy == ApprovalPolicy::Auto {
        return Plan::Proceed;
    }
    let (tool, description, mut args, revision) = match asked {
        Asked::Call(call) => {
            let (mutates, description) = match tool_of(target, call).await {
                Ok(tool) => tool,
                Err(refusal) => return Plan::Refuse(refusal),
            };
            if !mutates {
                return Plan::Proceed;
            }
            (
                call.tool.clone(),
                description,
                call.args.clone(),
                call.revision.clone(),
            )
        }
        Asked::Input(text) => (
            "input".to_string(),
            "types into its terminal, as if at its keyboard".to_string(),
            json!({ "text": text }),
            String::new(),
        ),
        Asked::Keys(text, keys) => (
            "keys".to_string(),
            "presses keys in its terminal, as if at its keyboard".to_string(),
            match text {
                Some(text) => json!({ "text": text, "keys": keys }),
                None => json!({ "keys": keys }),
            },
            String::new(),
        ),
        Asked::Run(command) => (
            "run".to_string(),
            "types this command at its shell's prompt and runs it".to_string(),
            json!({ "command": command }),
            String::new(),
        ),
        Asked::Close => (
            "close".to_string(),
            "ends its program (and every view of it)".to_string(),
            json!({}),
            String::new(),
        ),
        Asked::Reload => (
            "reload".to_string(),
            "ends its running program and starts its file's newest version (what it holds now is lost)".to_string(),
            json!({}),
            String::new(),
        ),
        Asked::Record => (
            "record".to_string(),
            "records its screen, what is typed into it and its protocol into a file, until it ends or the recorder stops".to_string(),
            json!({}),
            String::new(),
        ),
    };
    // Typing at a prompt with echo off (a password) is asked and kept as
    // how much, never what.
    let echo_off = match asked {
        Asked::Input(text) => Some(EchoOffTyping::of::<&str>(Some(text), &[])),
        Asked::Keys(text, keys) => Some(EchoOffTyping::of(text, keys)),
        _ => None,
    };
    let echo_off = match echo_off {
        Some(typing) if target.echo_off().await => {
            args = json!({});
            Some(typing)
        }
        _ => None,
    };
    let held = HeldCall {
        action,
        call: approvals.next_call(),
        instance: target.id().to_string(),
        tool,
        description,
        args,
        echo_off,
        revision,
        client,
        since: now_rfc3339_millis(),
        waited_ms: 0,
        timeout_ms: u64::try_from(approvals.timeout.as_millis()).unwrap_or(u64::MAX),
    };
    Plan::Hold(held, policy)
}

/// The tool `call` names, as the catalog it was made for has it: from
/// tickhost's copy when that is the revision called, else from the Tick
/// described again (fail closed: a stale copy never lets a call through
/// unasked). A call for another revision, or of a tool the Tick does not
/// have, is refused here as the Tick's host would refuse it.
async fn tool_of(target: &impl ConsentTarget, call: &CallRequest) -> Result<(bool, String), Gate> {
    if target.revision().as_deref() == Some(call.revision.as_str()) {
        if let Some(tool) = target.tool(&call.tool) {
            return Ok(tool);
        }
    }
    let Some(now) = target.describe().await else {
        return Err(consent_refused(
            format!(
                "{} could not be described to confirm the catalog this call was made for, so nobody can be asked to approve it; try again",
                target.id()
            ),
            "unconfirmed",
            "tickhost",
        ));
    };
    if now.revision.as_deref() != Some(call.revision.as_str()) {
        return Err(refused(
            STALE_REVISION,
            format!(
                "the call was prepared against revision {:?}, but the Tick's catalog is now revision {:?}; describe the Tick and prepare the call again",
                call.revision,
                now.revision.as_deref().unwrap_or("")
            ),
            json!({ "revision": now.revision }),
        ));
    }
    now.descriptor
        .as_ref()
        .and_then(|d| tool_in(d, &call.tool))
        .ok_or_else(|| {
            refused(
                INVALID_PARAMS,
                format!("the Tick has no tool named {:?}", call.tool),
                Value::Null,
            )
        })
}

/// Lets `asked` through, refuses it, or holds it until it is decided.
/// While it is held, the caller hears on `progress` (at once, then every
/// 30 s) that it waits; a caller that closes the receiving end has stopped
/// waiting, and its action is withdrawn.
pub async fn gate(
    approvals: &Approvals,
    target: &impl ConsentTarget,
    asked: Asked<'_>,
    client: Option<ClientKind>,
    progress: mpsc::Sender<HeldCall>,
) -> Gate {
    gate_for(
        approvals,
        target,
        asked,
        client,
        progress,
        &always_connected,
    )
    .await
}

fn always_connected() -> bool {
    true
}

/// [`gate`] for a caller whose connection `connected` looks at (without
/// waiting): an approval concluded once the caller's connection has
/// closed withdraws the action instead, even before the hang-up has been
/// read, so no action runs after its caller went away.
pub async fn gate_for(
    approvals: &Approvals,
    target: &impl ConsentTarget,
    asked: Asked<'_>,
    client: Option<ClientKind>,
    progress: mpsc::Sender<HeldCall>,
    connected: &(dyn Fn() -> bool + Sync),
) -> Gate {
    let (held, policy) = match plan(approvals, target, asked, client).await {
        Plan::Proceed => return Gate::Proceed,
        Plan::Refuse(refusal) => return refusal,
        Plan::Hold(held, policy) => (held, policy),
    };
    let recorder = Recorder {
        target,
        held: &held,
        connected,
    };
    if policy == ApprovalPolicy::Deny {
        recorder.record("denied", "tickhost", None);
        return consent_refused(denied_message(target, held.action), "denied", "tickhost");
    }
    hold(approvals, &recorder, progress).await
}

/// Why `deny` refused `action` on `target`, and how to let it through.
fn denied_message(target: &impl ConsentTarget, action: HeldAction) -> String {
    let id = target.id();
    match action {
        HeldAction::Call => format!(
            "{id} refuses mutating calls (approval policy deny); `tickloop approve-policy {id} ask` lets a person approve them"
        ),
        HeldAction::Input => format!(
            "{id} refuses agents' typing (agent_input deny); the person can allow it with `tickloop approve-policy {id} --input ask`"
        ),
        HeldAction::Close => format!(
            "{id} refuses to be closed by agents (agent_close deny); the person can allow it with `tickloop approve-policy {id} --close ask`"
        ),
        HeldAction::Reload => format!(
            "{id} refuses to be reloaded by agents (agent_close deny: a reload ends its program as a close does); the person can allow it with `tickloop approve-policy {id} --close ask`"
        ),
        HeldAction::Record => format!(
            "{id} refuses to be recorded by agents (agent_input deny: a recording keeps what is typed into it); the person can allow it with `tickloop approve-policy {id} --input ask`"
        ),
    }
}

/// The one decision on a held action, once made.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Final {
    Approved {
        by: String,
        host: Option<String>,
    },
    Refused {
        by: String,
        reason: Option<String>,
        host: Option<String>,
    },
    Withdrawn {
        reason: String,
    },
    TimedOut,
    Ended {
        reason: String,
    },
    RevisionChanged {
        reason: Option<String>,
    },
}

impl Final {
    fn from_decision(decision: Decision) -> Final {
        match decision {
            Decision::Approved { by, host } => Final::Approved { by, host },
            Decision::Refused { by, reason, host } => Final::Refused { by, reason, host },
            Decision::Withdrawn { reason } => Final::Withdrawn { reason },
        }
    }

    /// It as the approval log and every party hear it.
    fn settled(&self, held: &HeldCall) -> Settled {
        let (word, by, reason, host) = match self {
            Final::Approved { by, host } => ("approved", by.as_str(), None, host.clone()),
            Final::Refused { by, reason, host } => {
                ("refused", by.as_str(), reason.clone(), host.clone())
            }
            Final::Withdrawn { reason } => ("withdrawn", "caller", Some(reason.clone()), None),
            Final::TimedOut => ("timed_out", "tickhost", None, None),
            Final::Ended { reason } => ("ended", "tickhost", Some(reason.clone()), None),
            Final::RevisionChanged { reason } => {
                ("revision_changed", "tickhost", reason.clone(), None)
            }
        };
        Settled {
            reason,
            host,
            ..Settled::new(held, word, by)
        }
    }
}

/// Why a caller's action is withdrawn when it stops waiting.
pub fn stopped_waiting(client: Option<ClientKind>) -> String {
    if client.is_some_and(ClientKind::is_agent) {
        "the agent stopped waiting".to_string()
    } else {
        "the caller stopped waiting".to_string()
    }
}

/// Takes a held action off the waiting list if its hold ends without a
/// decision (the hold's future dropped: tickhost is stopping).
struct Listed<'a> {
    approvals: &'a Approvals,
    call: &'a str,
}

impl Drop for Listed<'_> {
    fn drop(&mut self) {
        self.approvals.unlist(self.call);
    }
}

/// Holds `recorder`'s action until it is decided: by a person or its
/// caller (a claim through [`Approvals::decide`]), or by the hold itself —
/// the caller gone, the deadline, the instance ended or its catalog
/// changed, the policy turned off. Whichever claims it first decides.
async fn hold<T: ConsentTarget>(
    approvals: &Approvals,
    recorder: &Recorder<'_, T>,
    progress: mpsc::Sender<HeldCall>,
) -> Gate {
    let held = recorder.held;
    let mut claimed = approvals.push(held.clone());
    let _listed = Listed {
        approvals,
        call: &held.call,
    };
    recorder.record("held", "tickhost", None);
    log(&format!(
        "approval: {} {} {} waits for a person",
        held.instance, held.call, held.tool
    ));
    if approvals.notify {
        notify(held);
    }
    let started = tokio::time::Instant::now();
    let deadline = started + approvals.timeout;
    let mut next_progress = started;
    let mut next_look = started + LOOK_EVERY;
    loop {
        if tokio::time::Instant::now() >= next_progress {
            let mut now_held = held.clone();
            now_held.waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(0);
            // Only news: a caller that does not read misses it, and one
            // that has gone is seen below.
            let _ = progress.try_send(now_held);
            next_progress += PROGRESS_EVERY;
        }
        let own = tokio::select! {
            biased;
            claim = &mut claimed => {
                return match claim {
                    Ok(claim) => {
                        let decided = Final::from_decision(claim.decision);
                        conclude(approvals, recorder, decided, Some(claim.told)).await
                    }
                    // The queue dropped it without a claim: it never does.
                    Err(_) => consent_refused("the approval was dropped".into(), "refused", "tickhost"),
                };
            }
            () = progress.closed() => Some(Final::Withdrawn { reason: stopped_waiting(held.client) }),
            () = tokio::time::sleep_until(deadline) => Some(Final::TimedOut),
            () = tokio::time::sleep_until(next_progress) => None,
            () = tokio::time::sleep_until(next_look) => {
                next_look = tokio::time::Instant::now() + LOOK_EVERY;
                look(recorder)
            }
        };
        if let Some(own) = own {
            if approvals.claim(own.settled(held)) {
                return conclude(approvals, recorder, own, None).await;
            }
            // Someone claimed it first: their claim is waiting in
            // `claimed`, taken on the next turn.
        }
    }
}

/// Works out the final decision of a claimed action (an approval of a call
/// holds only if its Tick, described again, still has the revision
/// approved), records it, tells `told` and the caller.
async fn conclude<T: ConsentTarget>(
    approvals: &Approvals,
    recorder: &Recorder<'_, T>,
    decided: Final,
    told: Option<tokio::sync::oneshot::Sender<Settled>>,
) -> Gate {
    let held = recorder.held;
    let gone = || Final::Withdrawn {
        reason: stopped_waiting(held.client),
    };
    let decided = match decided {
        // Its caller's connection closed, its hang-up not read yet (looked
        // at again once the approval is confirmed, which takes a describe).
        Final::Approved { .. } if !(recorder.connected)() => gone(),
        Final::Approved { by, host } => match confirm(recorder.target, held, by, host).await {
            Final::Approved { .. } if !(recorder.connected)() => gone(),
            confirmed => confirmed,
        },
        other => other,
    };
    let settled = decided.settled(held);
    recorder.record_from(
        &settled.decision,
        &settled.by,
        settled.reason.clone(),
        settled.host.clone(),
    );
    approvals.settle(settled.clone());
    if let Some(told) = told {
        let _ = told.send(settled);
    }
    gate_of(held, decided)
}

/// An approval by `by`, confirmed: the instance still runs and, for a
/// call, its Tick described again has the revision approved.
async fn confirm(
    target: &impl ConsentTarget,
    held: &HeldCall,
    by: String,
    host: Option<String>,
) -> Final {
    if let Some(end) = target.ended() {
        return Final::Ended { reason: end.reason };
    }
    if held.action != HeldAction::Call {
        return Final::Approved { by, host };
    }
    let now = target.describe().await.and_then(|c| c.revision);
    if now.as_deref() == Some(held.revision.as_str()) {
        return Final::Approved { by, host };
    }
    let who = if by == "policy" {
        "let through by its policy".to_string()
    } else {
        format!("approved by {by}")
    };
    Final::RevisionChanged {
        reason: Some(match now {
            Some(now) => format!("{who}, but described again the Tick is at revision {now}"),
            None => {
                format!("{who}, but the Tick could not be described again to confirm its revision")
            }
        }),
    }
}

/// What the caller is answered for `decided`.
fn gate_of(held: &HeldCall, decided: Final) -> Gate {
    let what = noun(held.action);
    match decided {
        Final::Approved { .. } => Gate::Approved(held.clone()),
        Final::Refused { by, reason, .. } => {
            let message = match &reason {
                Some(reason) => format!("refused by the person ({by}): {reason}"),
                None => format!("refused by the person ({by})"),
            };
            consent_refused(message, "refused", &by)
        }
        Final::Withdrawn { reason } => consent_refused(
            format!("the {what} was withdrawn while it waited for approval: {reason}"),
            "withdrawn",
            "caller",
        ),
        Final::TimedOut => consent_refused(
            format!(
                "nobody approved the {what} within {} s (TICKLOOP_APPROVAL_TIMEOUT_MS sets the wait)",
                held.timeout_ms / 1000
            ),
            "timed_out",
            "tickhost",
        ),
        Final::Ended { reason } => consent_refused(
            format!(
                "{} ended while the {what} waited for approval: {reason}",
                held.instance
            ),
            "ended",
            "tickhost",
        ),
        Final::RevisionChanged { .. } => stale(held),
    }
}

/// What `action` is called in messages.
fn noun(action: HeldAction) -> &'static str {
    match action {
        HeldAction::Call => "call",
        HeldAction::Input => "typing",
        HeldAction::Close => "close",
        HeldAction::Reload => "reload",
        HeldAction::Record => "recording",
    }
}

/// A look at the instance while the action waits: the decision when it
/// ended, its catalog changed (a call), or its policy was turned off.
fn look<T: ConsentTarget>(recorder: &Recorder<'_, T>) -> Option<Final> {
    let held = recorder.held;
    let target = recorder.target;
    if let Some(end) = target.ended() {
        return Some(Final::Ended { reason: end.reason });
    }
    if held.action == HeldAction::Call
        && target.revision().as_deref() != Some(held.revision.as_str())
    {
        return Some(Final::RevisionChanged { reason: None });
    }
    if target.policy(held.action) == ApprovalPolicy::Auto {
        // The policy was turned off: nobody needs to ask.
        return Some(Final::Approved {
            by: "policy".into(),
            host: None,
        });
    }
    None
}

/// The refusal of held call `held` whose catalog changed.
fn stale(held: &HeldCall) -> Gate {
    consent_refused_with(
        STALE_REVISION,
        format!(
            "the catalog changed while the call waited for approval (it was made for revision {:?}); describe the Tick and prepare the call again",
            held.revision
        ),
        "revision_changed",
    )
}

fn consent_refused_with(code: i64, message: String, decision: &str) -> Gate {
    refused(
        code,
        message,
        json!({"approval": decision, "by": "tickhost"}),
    )
}

/// The most of the question a desktop notification shows (notification
/// daemons fold a body into a few lines and cut the rest unsaid).
const NOTIFICATION_CHARS: usize = 240;

/// A desktop notification, when `notify-send` is there.
fn notify(held: &HeldCall) {
    let who = held
        .client
        .map_or_else(|| "an agent".to_string(), |c| c.actor());
    // A notification shows a few lines: a long question says how much it
    // hides and where it shows whole.
    let what = held.plainly_with_call();
    let what = tickloop_proto::escape::within(&what, NOTIFICATION_CHARS, |hidden| {
        format!("… {hidden} more characters: `tickloop approvals` shows all")
    });
    let body = format!(
        "{what} Asked by {who}; answer by {} — `tickloop approve {} {}` or the Monitor",
        held.deadline_text(),
        escaped(&held.instance),
        escaped(&held.call)
    );
    let spawned = std::process::Command::new("notify-send")
        .args(["--app-name=Tickloop", "Tickloop: approve?", &body])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match spawned {
        // Reaped in the background: it exits at once.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => log(&format!("approval: notify-send: {e}")),
    }
}

#[cfg(test)]
mod tests;
