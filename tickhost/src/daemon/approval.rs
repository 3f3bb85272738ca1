//! Approval: with an instance's policy at `ask`, each call to a
//! `mutates: true` tool waits here, in tickhost, before anything is written
//! to the Tick, until a person approves or refuses it (the Monitor's prompt,
//! `tickloop approve|refuse`, a view's activity overlay). Refused, timed out,
//! made for a catalog revision that changed while it waited, or waiting when
//! the Tick ended: not executed, and the Tick never saw it. With `deny`,
//! mutating calls are refused at once. Calls to tools that do not mutate are
//! never held.
//!
//! Every decision is appended to the instance's approval log
//! (`paths::InstanceFiles::approvals`, one JSON line each), with who
//! decided.

use super::log::log;
use super::registry::{Instance, Shared};
use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_client::framing::write_line;
use tickloop_proto::wire::{
    ApprovalLogEntry, ApprovalPolicy, CallOutcome, ClientKind, HeldCall, RpcError, ServerMessage,
};
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::oneshot;

/// The JSON-RPC code of a call a person (or the policy, or the wait) did
/// not let through: host-made, so "not executed" whatever its number.
pub const REFUSED_CODE: i64 = -32010;
/// How long a call waits for a person by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How often the caller hears that its call still waits.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);
/// How often a waiting call looks at its instance (ended? catalog changed?).
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// A person's answer.
#[derive(Debug)]
pub enum Decision {
    Approved { by: String },
    Refused { by: String, reason: Option<String> },
}

struct Waiting {
    held: HeldCall,
    since: Instant,
    answer: oneshot::Sender<Decision>,
}

/// The calls waiting now, and the settings.
pub struct Approvals {
    next: AtomicU64,
    waiting: Mutex<Vec<Waiting>>,
    pub timeout: Duration,
    /// Run `notify-send` when a call starts waiting.
    pub notify: bool,
}

impl Approvals {
    pub fn new(timeout: Duration, notify: bool) -> Self {
        Approvals {
            next: AtomicU64::new(1),
            waiting: Mutex::new(Vec::new()),
            timeout,
            notify,
        }
    }

    fn waiting(&self) -> MutexGuard<'_, Vec<Waiting>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The waiting calls, oldest first, with how long each has waited.
    pub fn list(&self) -> Vec<HeldCall> {
        self.waiting()
            .iter()
            .map(|w| {
                let mut held = w.held.clone();
                held.waited_ms = u64::try_from(w.since.elapsed().as_millis()).unwrap_or(u64::MAX);
                held
            })
            .collect()
    }

    /// The tools of the calls of `instance` that wait, oldest first.
    pub fn tools_for(&self, instance: &str) -> Vec<String> {
        self.waiting()
            .iter()
            .filter(|w| w.held.instance == instance)
            .map(|w| w.held.tool.clone())
            .collect()
    }

    /// Hands `decision` to call `call` of `instance`; `false` when no such
    /// call waits (decided already, or never held).
    pub fn decide(&self, instance: &str, call: &str, decision: Decision) -> bool {
        let found = {
            let mut waiting = self.waiting();
            let at = waiting
                .iter()
                .position(|w| w.held.call == call && w.held.instance == instance);
            at.map(|i| waiting.remove(i))
        };
        match found {
            Some(w) => w.answer.send(decision).is_ok(),
            None => false,
        }
    }

    fn remove(&self, call: &str) {
        self.waiting().retain(|w| w.held.call != call);
    }
}

/// What the gate let through.
pub enum Gate {
    /// Send it to the Tick.
    Proceed,
    /// Not executed, and why.
    Refused(CallOutcome),
}

/// The instance's tool `tool`: whether it mutates and its description;
/// `None` when the catalog has no such tool (the launcher refuses it).
fn tool_of(instance: &Instance, tool: &str) -> Option<(bool, String)> {
    instance.catalog().tool(tool)
}

fn current_revision(instance: &Instance) -> Option<String> {
    instance.catalog().revision.clone()
}

fn refused(code: i64, message: String, decision: &str, by: &str) -> Gate {
    Gate::Refused(CallOutcome::NotExecuted {
        error: RpcError {
            code,
            message,
            data: Some(json!({"approval": decision, "by": by})),
        },
    })
}

/// The request a held call came in: what the gate needs of it.
pub struct CallRequest<'a> {
    pub tool: &'a str,
    pub args: &'a Value,
    pub revision: &'a str,
    pub client: Option<ClientKind>,
}

/// Lets a call through, refuses it, or holds it until a person decides.
/// The caller hears on `writer` (a [`ServerMessage::Progress`] for request
/// `id`) when, and every 30 s while, the call waits; a caller that has gone
/// gets its call refused.
pub async fn gate(
    shared: &Shared,
    instance: &Arc<Instance>,
    call: CallRequest<'_>,
    id: u64,
    writer: &mut OwnedWriteHalf,
) -> Gate {
    let policy = instance.status().approve.unwrap_or_default();
    if policy == ApprovalPolicy::Auto {
        return Gate::Proceed;
    }
    let Some((true, description)) = tool_of(instance, call.tool) else {
        return Gate::Proceed;
    };
    // A stale revision is the launcher's to refuse, before anyone is asked.
    if current_revision(instance).as_deref() != Some(call.revision) {
        return Gate::Proceed;
    }
    let approvals = &shared.approvals;
    let call_id = format!("c{}", approvals.next.fetch_add(1, Ordering::Relaxed));
    let held = HeldCall {
        call: call_id,
        instance: instance.id.clone(),
        tool: call.tool.to_string(),
        description,
        args: call.args.clone(),
        revision: call.revision.to_string(),
        client: call.client,
        since: now_rfc3339_millis(),
        waited_ms: 0,
        timeout_ms: u64::try_from(approvals.timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let record = |decision: &str, by: &str, reason: Option<String>| {
        append_log(
            instance,
            &ApprovalLogEntry {
                at: now_rfc3339_millis(),
                call: held.call.clone(),
                instance: held.instance.clone(),
                tool: held.tool.clone(),
                args: held.args.clone(),
                revision: held.revision.clone(),
                decision: decision.to_string(),
                by: by.to_string(),
                reason,
            },
        )
    };
    if policy == ApprovalPolicy::Deny {
        record("denied", "tickhost", None);
        return refused(
            REFUSED_CODE,
            format!(
                "{} refuses mutating calls (approval policy deny); `tickloop approve-policy {} ask` lets a person approve them",
                instance.id, instance.id
            ),
            "denied",
            "tickhost",
        );
    }

    let (answer, mut decided) = oneshot::channel();
    approvals.waiting().push(Waiting {
        held: held.clone(),
        since: Instant::now(),
        answer,
    });
    record("held", "tickhost", None);
    log(&format!(
        "approval: {} {} {} waits for a person",
        held.instance, held.call, held.tool
    ));
    if approvals.notify {
        notify(&held);
    }
    let deadline = tokio::time::Instant::now() + approvals.timeout;
    let mut next_progress = tokio::time::Instant::now();
    let outcome = loop {
        if tokio::time::Instant::now() >= next_progress {
            let mut now_held = held.clone();
            now_held.waited_ms = u64::try_from(
                (approvals
                    .timeout
                    .saturating_sub(deadline - tokio::time::Instant::now()))
                .as_millis(),
            )
            .unwrap_or(0);
            let line = ServerMessage::Progress { id, held: now_held };
            if write_line(writer, &line).await.is_err() {
                approvals.remove(&held.call);
                record("refused", "tickhost", Some("the caller went away".into()));
                break refused(
                    REFUSED_CODE,
                    "the caller went away while the call waited for approval".into(),
                    "refused",
                    "tickhost",
                );
            }
            next_progress += PROGRESS_EVERY;
        }
        tokio::select! {
            decision = &mut decided => {
                break match decision {
                    Ok(Decision::Approved { by }) => {
                        record("approved", &by, None);
                        // Approval is bound to the revision it was given for.
                        if current_revision(instance).as_deref() != Some(held.revision.as_str()) {
                            record("revision_changed", "tickhost", None);
                            stale(&held)
                        } else {
                            Gate::Proceed
                        }
                    }
                    Ok(Decision::Refused { by, reason }) => {
                        record("refused", &by, reason.clone());
                        let message = match &reason {
                            Some(reason) => format!("refused by a person ({by}): {reason}"),
                            None => format!("refused by a person ({by})"),
                        };
                        refused(REFUSED_CODE, message, "refused", &by)
                    }
                    Err(_) => refused(REFUSED_CODE, "the approval was dropped".into(), "refused", "tickhost"),
                };
            }
            _ = tokio::time::sleep_until(deadline) => {
                approvals.remove(&held.call);
                record("timed_out", "tickhost", None);
                break refused(
                    REFUSED_CODE,
                    format!(
                        "nobody approved the call within {} s (TICKLOOP_APPROVAL_TIMEOUT_MS sets the wait)",
                        approvals.timeout.as_secs()
                    ),
                    "timed_out",
                    "tickhost",
                );
            }
            _ = tokio::time::sleep(LOOK_EVERY) => {
                if let Some(end) = instance.ended() {
                    approvals.remove(&held.call);
                    record("ended", "tickhost", Some(end.reason.clone()));
                    break refused(
                        REFUSED_CODE,
                        format!("{} ended while the call waited for approval: {}", instance.id, end.reason),
                        "ended",
                        "tickhost",
                    );
                }
                if current_revision(instance).as_deref() != Some(held.revision.as_str()) {
                    approvals.remove(&held.call);
                    record("revision_changed", "tickhost", None);
                    break stale(&held);
                }
                if instance.status().approve.unwrap_or_default() == ApprovalPolicy::Auto {
                    // The policy was turned off: nobody needs to ask.
                    approvals.remove(&held.call);
                    record("approved", "policy", None);
                    break Gate::Proceed;
                }
            }
        }
    };
    outcome
}

fn stale(held: &HeldCall) -> Gate {
    refused(
        -32004,
        format!(
            "the catalog changed while the call waited for approval (it was made for revision {:?}); describe the Tick and prepare the call again",
            held.revision
        ),
        "revision_changed",
        "tickhost",
    )
}

/// Appends `entry` to the instance's approval log (a failure is logged, not
/// fatal: the decision stands).
fn append_log(instance: &Instance, entry: &ApprovalLogEntry) {
    let path = &instance.files.approvals;
    let written = serde_json::to_string(entry)
        .map_err(std::io::Error::other)
        .and_then(|line| {
            let mut file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?;
            writeln!(file, "{line}")
        });
    if let Err(e) = written {
        log(&format!(
            "approval: cannot append to {}: {e}",
            path.display()
        ));
    }
}

/// The instance's approval log, oldest first (empty when none).
pub fn read_log(instance: &Instance) -> Vec<ApprovalLogEntry> {
    std::fs::read_to_string(&instance.files.approvals)
        .map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// A desktop notification, when `notify-send` is there.
fn notify(held: &HeldCall) {
    let body = format!(
        "{} wants to call {} {} — `tickloop approve {} {}` or the Monitor",
        held.client.map_or("an agent", |c| c.label()),
        held.tool,
        held.args,
        held.instance,
        held.call
    );
    let spawned = std::process::Command::new("notify-send")
        .args(["--app-name=Tickloop", "Tickloop: approve a call?", &body])
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
