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
//!   and `close` never wait).
//!
//! Refused, timed out, a call made for a catalog revision that changed
//! while it waited, or waiting when the instance ended: not executed, and
//! the instance never saw it. With `deny`, the action is refused at once.
//!
//! Every decision is appended to the instance's approval log
//! (`paths::InstanceFiles::approvals`, one JSON line each) and to its
//! activity record, with who acted and who decided.
//!
//! This module owns only the queue of waiting actions and the log: the
//! instance is seen through [`ConsentTarget`], and the caller hears that its
//! action waits on a channel it reads (it owns its connection).

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
    ApprovalLogEntry, ApprovalPolicy, CallOutcome, CallRequest, ClientKind, ConsentDecision,
    EndInfo, HeldAction, HeldCall, RpcError,
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

    /// Hands `decision` to call `call` of `instance` (`%3`, or `3`);
    /// `false` when no such call waits (decided already, or never held).
    pub fn decide(&self, instance: &str, call: &str, decision: Decision) -> bool {
        let call = format!("%{}", call.trim_start_matches('%'));
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

/// The instance an action is for, as the gate sees it: looked at again
/// while the action waits, since its policies, catalog and life may change
/// meanwhile.
pub trait ConsentTarget {
    /// Its full id.
    fn id(&self) -> &str;
    /// Who approves `action` by an agent now (for calls: every caller's
    /// mutating calls).
    fn policy(&self, action: HeldAction) -> ApprovalPolicy;
    /// The revision of its current catalog.
    fn revision(&self) -> Option<String>;
    /// Tool `name` of its catalog: whether it mutates, and its description;
    /// `None` when there is no such tool (the launcher refuses it).
    fn tool(&self, name: &str) -> Option<(bool, String)>;
    /// How it ended, if it did.
    fn ended(&self) -> Option<EndInfo>;
    /// Its approval log (one JSON line per decision).
    fn approval_log(&self) -> &Path;
    /// Keeps `decision` in its activity record too.
    fn note(&self, decision: ConsentDecision);
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
}

impl Asked<'_> {
    fn action(&self) -> HeldAction {
        match self {
            Asked::Call(_) => HeldAction::Call,
            Asked::Input(_) | Asked::Keys(..) | Asked::Run(_) => HeldAction::Input,
            Asked::Close => HeldAction::Close,
        }
    }
}

/// What the gate let through.
pub enum Gate {
    /// Go on: nobody needed to ask.
    Proceed,
    /// Go on: a person approved it (a call: once its instance's revision is
    /// confirmed to be still the one approved).
    Approved(HeldCall),
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

/// Writes one held action's decisions into its instance's approval log
/// and activity record.
pub struct Recorder<'a, T: ConsentTarget> {
    pub target: &'a T,
    pub held: &'a HeldCall,
}

impl<T: ConsentTarget> Recorder<'_, T> {
    pub fn record(&self, decision: &str, by: &str, reason: Option<String>) {
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
            revision: held.revision.clone(),
            decision: decision.to_string(),
            by: by.to_string(),
            reason,
            host,
        };
        append_log(
            self.target.approval_log(),
            &ApprovalLogEntry {
                at: now_rfc3339_millis(),
                decision: decision.clone(),
            },
        );
        self.target.note(decision);
    }
}

/// The held item for `asked` on `target`, and the policy that holds it;
/// `None` when nobody needs to be asked.
fn to_hold(
    approvals: &Approvals,
    target: &impl ConsentTarget,
    asked: Asked<'_>,
    client: Option<ClientKind>,
) -> Option<(HeldCall, ApprovalPolicy)> {
    let action = asked.action();
    if action != HeldAction::Call && !client.is_some_and(ClientKind::is_agent) {
        // The person's own typing and closing never wait.
        return None;
    }
    let policy = target.policy(action);
    if policy == ApprovalPolicy::Auto {
        return None;
    }
    let (tool, description, args, revision) = match asked {
        Asked::Call(call) => {
            let Some((true, description)) = target.tool(&call.tool) else {
                return None;
            };
            // A stale revision is the launcher's to refuse, before anyone is
            // asked.
            if target.revision().as_deref() != Some(call.revision.as_str()) {
                return None;
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
    };
    let held = HeldCall {
        action,
        call: format!("%{}", approvals.next.fetch_add(1, Ordering::Relaxed)),
        instance: target.id().to_string(),
        tool,
        description,
        args,
        revision,
        client,
        since: now_rfc3339_millis(),
        waited_ms: 0,
        timeout_ms: u64::try_from(approvals.timeout.as_millis()).unwrap_or(u64::MAX),
    };
    Some((held, policy))
}

/// Lets `asked` through, refuses it, or holds it until a person decides.
/// While it is held, the caller hears on `progress` (at once, then every
/// 30 s) that it waits; a caller that drops the receiving end has gone away,
/// and its action is refused.
pub async fn gate(
    approvals: &Approvals,
    target: &impl ConsentTarget,
    asked: Asked<'_>,
    client: Option<ClientKind>,
    progress: mpsc::Sender<HeldCall>,
) -> Gate {
    let Some((held, policy)) = to_hold(approvals, target, asked, client) else {
        return Gate::Proceed;
    };
    let recorder = Recorder {
        target,
        held: &held,
    };
    if policy == ApprovalPolicy::Deny {
        recorder.record("denied", "tickhost", None);
        return refused(
            APPROVAL_REFUSED,
            denied_message(target, held.action),
            "denied",
            "tickhost",
        );
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
    }
}

/// Holds `recorder`'s action in the queue until a person decides, the wait
/// runs out, the instance ends or changes its catalog, or the policy is
/// turned off.
async fn hold<T: ConsentTarget>(
    approvals: &Approvals,
    recorder: &Recorder<'_, T>,
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
            decision = &mut decided => return decided_gate(recorder, decision.ok()),
            _ = progress.closed() => return went_away(approvals, recorder),
            _ = tokio::time::sleep_until(deadline) => {
                approvals.remove(&held.call);
                recorder.record("timed_out", "tickhost", None);
                return refused(
                    APPROVAL_REFUSED,
                    format!(
                        "nobody approved the {} within {} s (TICKLOOP_APPROVAL_TIMEOUT_MS sets the wait)",
                        noun(held.action),
                        approvals.timeout.as_secs()
                    ),
                    "timed_out",
                    "tickhost",
                );
            }
            _ = tokio::time::sleep(LOOK_EVERY) => {
                if let Some(gate) = look(approvals, recorder) {
                    return gate;
                }
            }
        }
    }
}

/// What `action` is called in messages.
fn noun(action: HeldAction) -> &'static str {
    match action {
        HeldAction::Call => "call",
        HeldAction::Input => "typing",
        HeldAction::Close => "close",
    }
}

/// The caller hung up while its action waited: the action is refused.
fn went_away<T: ConsentTarget>(approvals: &Approvals, recorder: &Recorder<'_, T>) -> Gate {
    approvals.remove(&recorder.held.call);
    recorder.record("refused", "tickhost", Some("the caller went away".into()));
    refused(
        APPROVAL_REFUSED,
        format!(
            "the caller went away while the {} waited for approval",
            noun(recorder.held.action)
        ),
        "refused",
        "tickhost",
    )
}

/// What a person's `decision` (`None`: the answer was dropped) lets
/// through.
fn decided_gate<T: ConsentTarget>(recorder: &Recorder<'_, T>, decision: Option<Decision>) -> Gate {
    match decision {
        Some(Decision::Approved { by, host }) => {
            recorder.record_from("approved", &by, None, host);
            let held = recorder.held;
            // Approval is bound to the revision it was given for.
            if held.action == HeldAction::Call
                && recorder.target.revision().as_deref() != Some(held.revision.as_str())
            {
                recorder.record("revision_changed", "tickhost", None);
                stale(held)
            } else {
                Gate::Approved(held.clone())
            }
        }
        Some(Decision::Refused { by, reason, host }) => {
            recorder.record_from("refused", &by, reason.clone(), host);
            let message = match &reason {
                Some(reason) => format!("refused by the person ({by}): {reason}"),
                None => format!("refused by the person ({by})"),
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

/// A look at the instance while the action waits: `Some` when it ended, its
/// catalog changed (a call), or its policy was turned off (the action stops
/// waiting).
fn look<T: ConsentTarget>(approvals: &Approvals, recorder: &Recorder<'_, T>) -> Option<Gate> {
    let held = recorder.held;
    let target = recorder.target;
    if let Some(end) = target.ended() {
        approvals.remove(&held.call);
        recorder.record("ended", "tickhost", Some(end.reason.clone()));
        return Some(refused(
            APPROVAL_REFUSED,
            format!(
                "{} ended while the {} waited for approval: {}",
                held.instance,
                noun(held.action),
                end.reason
            ),
            "ended",
            "tickhost",
        ));
    }
    if held.action == HeldAction::Call
        && target.revision().as_deref() != Some(held.revision.as_str())
    {
        approvals.remove(&held.call);
        recorder.record("revision_changed", "tickhost", None);
        return Some(stale(held));
    }
    if target.policy(held.action) == ApprovalPolicy::Auto {
        // The policy was turned off: nobody needs to ask.
        approvals.remove(&held.call);
        recorder.record("approved", "policy", None);
        return Some(Gate::Approved(held.clone()));
    }
    None
}

/// The refusal of held call `held` whose catalog changed.
pub fn stale(held: &HeldCall) -> Gate {
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
    let who = held.client.map_or("an agent", |c| c.label());
    let what = match held.action {
        HeldAction::Call => format!("call {} {}", held.tool, held.args),
        HeldAction::Input if held.tool == "run" => {
            format!("run {} in {}", held.args["command"], held.instance)
        }
        HeldAction::Input if held.tool == "keys" => {
            format!("press {} in {}", held.args["keys"], held.instance)
        }
        HeldAction::Input => format!("type {} into {}", held.args["text"], held.instance),
        HeldAction::Close => format!("close {}", held.instance),
    };
    let body = format!(
        "{who} wants to {what} — `tickloop approve {} {}` or the Monitor",
        held.instance, held.call
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
        noted: std::sync::Mutex<Vec<String>>,
    }

    impl Fake {
        fn new(policy: ApprovalPolicy, log: std::path::PathBuf) -> Fake {
            Fake {
                policy,
                log,
                noted: std::sync::Mutex::default(),
            }
        }
    }

    impl ConsentTarget for Fake {
        fn id(&self) -> &str {
            "hosted:fake"
        }
        fn policy(&self, _action: HeldAction) -> ApprovalPolicy {
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
        fn note(&self, decision: ConsentDecision) {
            if let Ok(mut noted) = self.noted.lock() {
                noted.push(decision.decision);
            }
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
        let target = Fake::new(ApprovalPolicy::Ask, dir.join("approvals.jsonl"));
        let approvals = Approvals::new(Duration::from_secs(600), false);
        let (progress, mut waiting) = mpsc::channel(1);
        let set = call();
        let waits = gate(&approvals, &target, Asked::Call(&set), None, progress);
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
            .map(|e| e.decision.decision)
            .collect();
        assert_eq!(decisions, ["held", "refused"]);
        // The activity record hears the same decisions.
        assert_eq!(
            target.noted.lock().map(|n| n.clone()).unwrap_or_default(),
            ["held", "refused"]
        );

        let deny = Fake::new(ApprovalPolicy::Deny, dir.join("denied.jsonl"));
        let (progress, _waiting) = mpsc::channel(1);
        let set = call();
        let error = refusal(gate(&approvals, &deny, Asked::Call(&set), None, progress).await);
        assert_eq!(error.map(|e| e.code), Some(APPROVAL_REFUSED));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn the_persons_own_typing_and_closing_never_wait_an_agents_do() {
        let dir = std::env::temp_dir().join(format!("tickhost-consent-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let target = Fake::new(ApprovalPolicy::Ask, dir.join("approvals.jsonl"));
        let approvals = Approvals::new(Duration::from_secs(600), false);
        for person in [None, Some(ClientKind::Cli), Some(ClientKind::Monitor)] {
            for asked in [Asked::Input("ls\r"), Asked::Close] {
                let (progress, _waiting) = mpsc::channel(1);
                let gate = gate(&approvals, &target, asked, person, progress).await;
                assert!(matches!(gate, Gate::Proceed), "{person:?} {asked:?}");
            }
        }
        for agent in [ClientKind::Mcp, ClientKind::Loop] {
            let (progress, mut waiting) = mpsc::channel(1);
            let waits = gate(
                &approvals,
                &target,
                Asked::Input("ls\r"),
                Some(agent),
                progress,
            );
            tokio::pin!(waits);
            let held = tokio::select! {
                _ = &mut waits => None,
                held = waiting.recv() => held,
            };
            let held = held.expect("an agent's typing waits");
            assert_eq!(held.action, HeldAction::Input);
            assert_eq!(held.args["text"], "ls\r");
            assert!(held.call.starts_with('%'), "{}", held.call);
            // `3` finds `%3` too.
            let bare = held.call.trim_start_matches('%').to_string();
            assert!(approvals.decide(
                "hosted:fake",
                &bare,
                Decision::Refused {
                    by: "monitor".into(),
                    reason: None,
                    host: None
                }
            ));
            let error = refusal(waits.await).expect("refused");
            assert_eq!(error.code, APPROVAL_REFUSED);
            assert!(error.message.contains("refused by the person (monitor)"));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
