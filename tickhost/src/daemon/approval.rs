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
//!
//! This module owns only the queue of waiting calls and the log: the
//! instance a call is for is seen through [`CallTarget`], and the caller
//! hears that its call waits on a channel it reads (it owns its connection).

use super::log::log;
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::core::codes::{APPROVAL_REFUSED, STALE_REVISION};
use tickloop_proto::wire::{
    ApprovalLogEntry, ApprovalPolicy, CallOutcome, CallRequest, ClientKind, EndInfo, HeldCall,
    RpcError,
};
use tokio::sync::{mpsc, oneshot};

/// How long a call waits for a person by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// How often the caller hears that its call still waits.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);
/// How often a waiting call looks at its instance (ended? catalog changed?).
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// A person's answer.
#[derive(Debug)]
pub enum Decision {
    Approved {
        by: String,
        host: Option<String>,
    },
    Refused {
        by: String,
        reason: Option<String>,
        host: Option<String>,
    },
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

    /// The settings this user chose (see [`configured_timeout`] and
    /// [`notify_configured`]).
    pub fn configured() -> Self {
        Approvals::new(configured_timeout(), notify_configured())
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

/// How long a call waits for approval: `TICKLOOP_APPROVAL_TIMEOUT_MS`, else
/// `approval_timeout_secs` in the config file, else [`DEFAULT_TIMEOUT`].
pub fn configured_timeout() -> Duration {
    std::env::var("TICKLOOP_APPROVAL_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .or_else(|| {
            tickloop_client::config::load()
                .ok()
                .and_then(|c| c.approval_timeout_secs)
                .map(Duration::from_secs)
        })
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// Whether a held call pops a desktop notification: `TICKLOOP_NOTIFY`
/// (`1`/`0`), else `notify` in the config file, else no.
pub fn notify_configured() -> bool {
    match std::env::var("TICKLOOP_NOTIFY").as_deref() {
        Ok("1" | "true" | "on" | "yes") => true,
        Ok(_) => false,
        Err(_) => tickloop_client::config::load()
            .ok()
            .and_then(|c| c.notify)
            .unwrap_or(false),
    }
}

/// The instance a call is for, as the gate sees it: looked at again while
/// the call waits, since its policy, catalog and life may change meanwhile.
pub trait CallTarget {
    /// Its full id.
    fn id(&self) -> &str;
    /// Who approves its mutating calls now.
    fn policy(&self) -> ApprovalPolicy;
    /// The revision of its current catalog.
    fn revision(&self) -> Option<String>;
    /// Tool `name` of its catalog: whether it mutates, and its description;
    /// `None` when there is no such tool (the launcher refuses it).
    fn tool(&self, name: &str) -> Option<(bool, String)>;
    /// How it ended, if it did.
    fn ended(&self) -> Option<EndInfo>;
    /// Its approval log (one JSON line per decision).
    fn approval_log(&self) -> &Path;
}

/// What the gate let through.
pub enum Gate {
    /// Send it to the Tick.
    Proceed,
    /// Not executed, and why.
    Refused(CallOutcome),
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

/// Writes one held call's decisions into its instance's approval log.
struct Recorder<'a> {
    log: &'a Path,
    held: &'a HeldCall,
}

impl Recorder<'_> {
    fn record(&self, decision: &str, by: &str, reason: Option<String>) {
        self.record_from(decision, by, reason, None);
    }

    /// A decision, with the agent host that answered (`by: "mcp-host"`).
    fn record_from(&self, decision: &str, by: &str, reason: Option<String>, host: Option<String>) {
        let held = self.held;
        append_log(
            self.log,
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
                host,
            },
        )
    }
}

/// Lets `call` through, refuses it, or holds it until a person decides.
/// While it is held, the caller hears on `progress` (at once, then every
/// 30 s) that it waits; a caller that drops the receiving end has gone away,
/// and its call is refused.
pub async fn gate(
    approvals: &Approvals,
    target: &impl CallTarget,
    call: &CallRequest,
    client: Option<ClientKind>,
    progress: mpsc::Sender<HeldCall>,
) -> Gate {
    let policy = target.policy();
    if policy == ApprovalPolicy::Auto {
        return Gate::Proceed;
    }
    let Some((true, description)) = target.tool(&call.tool) else {
        return Gate::Proceed;
    };
    // A stale revision is the launcher's to refuse, before anyone is asked.
    if target.revision().as_deref() != Some(call.revision.as_str()) {
        return Gate::Proceed;
    }
    let held = HeldCall {
        call: format!("c{}", approvals.next.fetch_add(1, Ordering::Relaxed)),
        instance: target.id().to_string(),
        tool: call.tool.clone(),
        description,
        args: call.args.clone(),
        revision: call.revision.clone(),
        client,
        since: now_rfc3339_millis(),
        waited_ms: 0,
        timeout_ms: u64::try_from(approvals.timeout.as_millis()).unwrap_or(u64::MAX),
    };
    let recorder = Recorder {
        log: target.approval_log(),
        held: &held,
    };
    if policy == ApprovalPolicy::Deny {
        recorder.record("denied", "tickhost", None);
        let id = target.id();
        return refused(
            APPROVAL_REFUSED,
            format!(
                "{id} refuses mutating calls (approval policy deny); `tickloop approve-policy {id} ask` lets a person approve them"
            ),
            "denied",
            "tickhost",
        );
    }
    hold(approvals, target, &recorder, progress).await
}

/// Holds `recorder`'s call in the queue until a person decides, the wait
/// runs out, the instance ends or changes its catalog, or the policy is
/// turned off.
async fn hold(
    approvals: &Approvals,
    target: &impl CallTarget,
    recorder: &Recorder<'_>,
    progress: mpsc::Sender<HeldCall>,
) -> Gate {
    let held = recorder.held;
    let (answer, mut decided) = oneshot::channel();
    approvals.waiting().push(Waiting {
        held: held.clone(),
        since: Instant::now(),
        answer,
    });
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
    loop {
        if tokio::time::Instant::now() >= next_progress {
            let mut now_held = held.clone();
            now_held.waited_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(0);
            if progress.send(now_held).await.is_err() {
                return went_away(approvals, recorder);
            }
            next_progress += PROGRESS_EVERY;
        }
        tokio::select! {
            decision = &mut decided => return decided_gate(target, recorder, decision.ok()),
            _ = progress.closed() => return went_away(approvals, recorder),
            _ = tokio::time::sleep_until(deadline) => {
                approvals.remove(&held.call);
                recorder.record("timed_out", "tickhost", None);
                return refused(
                    APPROVAL_REFUSED,
                    format!(
                        "nobody approved the call within {} s (TICKLOOP_APPROVAL_TIMEOUT_MS sets the wait)",
                        approvals.timeout.as_secs()
                    ),
                    "timed_out",
                    "tickhost",
                );
            }
            _ = tokio::time::sleep(LOOK_EVERY) => {
                if let Some(gate) = look(approvals, target, recorder) {
                    return gate;
                }
            }
        }
    }
}

/// The caller hung up while its call waited: the call is refused.
fn went_away(approvals: &Approvals, recorder: &Recorder<'_>) -> Gate {
    approvals.remove(&recorder.held.call);
    recorder.record("refused", "tickhost", Some("the caller went away".into()));
    refused(
        APPROVAL_REFUSED,
        "the caller went away while the call waited for approval".into(),
        "refused",
        "tickhost",
    )
}

/// What a person's `decision` (`None`: the answer was dropped) lets
/// through.
fn decided_gate(
    target: &impl CallTarget,
    recorder: &Recorder<'_>,
    decision: Option<Decision>,
) -> Gate {
    match decision {
        Some(Decision::Approved { by, host }) => {
            recorder.record_from("approved", &by, None, host);
            // Approval is bound to the revision it was given for.
            if target.revision().as_deref() != Some(recorder.held.revision.as_str()) {
                recorder.record("revision_changed", "tickhost", None);
                stale(recorder.held)
            } else {
                Gate::Proceed
            }
        }
        Some(Decision::Refused { by, reason, host }) => {
            recorder.record_from("refused", &by, reason.clone(), host);
            let message = match &reason {
                Some(reason) => format!("refused by a person ({by}): {reason}"),
                None => format!("refused by a person ({by})"),
            };
            refused(APPROVAL_REFUSED, message, "refused", &by)
        }
        None => refused(
            APPROVAL_REFUSED,
            "the approval was dropped".into(),
            "refused",
            "tickhost",
        ),
    }
}

/// A look at the instance while the call waits: `Some` when it ended, its
/// catalog changed, or its policy was turned off (the call stops waiting).
fn look(approvals: &Approvals, target: &impl CallTarget, recorder: &Recorder<'_>) -> Option<Gate> {
    let held = recorder.held;
    if let Some(end) = target.ended() {
        approvals.remove(&held.call);
        recorder.record("ended", "tickhost", Some(end.reason.clone()));
        return Some(refused(
            APPROVAL_REFUSED,
            format!(
                "{} ended while the call waited for approval: {}",
                held.instance, end.reason
            ),
            "ended",
            "tickhost",
        ));
    }
    if target.revision().as_deref() != Some(held.revision.as_str()) {
        approvals.remove(&held.call);
        recorder.record("revision_changed", "tickhost", None);
        return Some(stale(held));
    }
    if target.policy() == ApprovalPolicy::Auto {
        // The policy was turned off: nobody needs to ask.
        approvals.remove(&held.call);
        recorder.record("approved", "policy", None);
        return Some(Gate::Proceed);
    }
    None
}

fn stale(held: &HeldCall) -> Gate {
    refused(
        STALE_REVISION,
        format!(
            "the catalog changed while the call waited for approval (it was made for revision {:?}); describe the Tick and prepare the call again",
            held.revision
        ),
        "revision_changed",
        "tickhost",
    )
}

/// Appends `entry` to the approval log at `path` (a failure is logged, not
/// fatal: the decision stands).
fn append_log(path: &Path, entry: &ApprovalLogEntry) {
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

/// The approval log at `path`, oldest first (empty when none).
pub fn read_log(path: &Path) -> Vec<ApprovalLogEntry> {
    std::fs::read_to_string(path)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    /// An instance as the gate sees it, with one mutating tool `set`.
    struct Fake {
        policy: ApprovalPolicy,
        log: std::path::PathBuf,
    }

    impl CallTarget for Fake {
        fn id(&self) -> &str {
            "hosted:fake"
        }
        fn policy(&self) -> ApprovalPolicy {
            self.policy
        }
        fn revision(&self) -> Option<String> {
            Some("1".into())
        }
        fn tool(&self, name: &str) -> Option<(bool, String)> {
            (name == "set").then(|| (true, "sets".to_string()))
        }
        fn ended(&self) -> Option<EndInfo> {
            None
        }
        fn approval_log(&self) -> &Path {
            &self.log
        }
    }

    fn call() -> CallRequest {
        CallRequest {
            tool: "set".into(),
            args: Value::Null,
            revision: "1".into(),
        }
    }

    fn refusal(gate: Gate) -> Option<RpcError> {
        match gate {
            Gate::Refused(CallOutcome::NotExecuted { error }) => Some(error),
            _ => None,
        }
    }

    #[tokio::test]
    async fn held_calls_tell_the_caller_and_a_caller_gone_refuses_them() {
        let dir = std::env::temp_dir().join(format!("tickhost-approval-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let target = Fake {
            policy: ApprovalPolicy::Ask,
            log: dir.join("approvals.jsonl"),
        };
        let approvals = Approvals::new(Duration::from_secs(600), false);
        let (progress, mut waiting) = mpsc::channel(1);
        let set = call();
        let waits = gate(&approvals, &target, &set, None, progress);
        tokio::pin!(waits);
        let held = tokio::select! {
            _ = &mut waits => None,
            held = waiting.recv() => held,
        };
        assert_eq!(held.map(|h| h.tool), Some("set".to_string()));
        assert_eq!(approvals.tools_for("hosted:fake"), vec!["set".to_string()]);
        drop(waiting);
        let error = refusal(waits.await);
        assert_eq!(error.as_ref().map(|e| e.code), Some(APPROVAL_REFUSED));
        assert!(error.is_some_and(|e| e.message.contains("went away")));
        assert!(approvals.list().is_empty());
        let decisions: Vec<String> = read_log(&target.log)
            .into_iter()
            .map(|e| e.decision)
            .collect();
        assert_eq!(decisions, ["held", "refused"]);

        let deny = Fake {
            policy: ApprovalPolicy::Deny,
            log: dir.join("denied.jsonl"),
        };
        let (progress, _waiting) = mpsc::channel(1);
        let error = refusal(gate(&approvals, &deny, &call(), None, progress).await);
        assert_eq!(error.map(|e| e.code), Some(APPROVAL_REFUSED));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
