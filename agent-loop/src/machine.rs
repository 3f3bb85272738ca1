//! The Loop's run state machine, sans I/O: one agent session's transcript
//! observations, its (at most one) run and (at most one) timer.
//!
//! The caller feeds [`Input`]s — transcript messages, turn ends, control
//! commands, subscription deliveries, "timer T fired", disposal — and carries
//! out the [`Effect`]s returned: enqueue a time-step message, reply to a
//! control command, arm or cancel the timer, append an audit record, watch
//! instances. Time never enters except as "timer T fired".
//!
//! ```text
//! inactive --/tick, admitted--> armed --latest turn open--> waiting
//!                                 | latest terminal completed    | terminal completed
//!                                 v                              v
//!                             scheduled --timer T fired, state identical, predicate holds--> enqueued
//!                                 | state changed / stop / disposed                              | terminal observed
//!                                 v                                                              v
//!                             cancelled              completed, remaining > 0 -> scheduled; remaining = 0 -> complete;
//!                                                    anything else (interrupted, error, unknown, inconsistent) -> stopped
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::audit::{AuditKind, AuditRecord};
use super::command::{self, Command};
use super::envelope::{time_step_message, Inbox, PLUGIN_NAME};
use super::policy::{CompiledPolicy, PolicySet};
use tickloop_proto::wire::{Delivery, EndInfo};

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TurnStatus {
    Completed,
    Interrupted,
    Error,
    /// Any other status a harness reported; treated like an error.
    Unknown(String),
}

impl TurnStatus {
    pub fn parse(s: &str) -> TurnStatus {
        match s {
            "completed" => TurnStatus::Completed,
            "interrupted" => TurnStatus::Interrupted,
            "error" => TurnStatus::Error,
            other => TurnStatus::Unknown(other.to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            TurnStatus::Completed => "completed",
            TurnStatus::Interrupted => "interrupted",
            TurnStatus::Error => "error",
            TurnStatus::Unknown(s) => s,
        }
    }
}

/// The `source` of a transcript message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// `user`, `plugin`, `assistant`, ...
    pub kind: String,
    /// For `kind: "plugin"`: the plugin's name.
    pub plugin: Option<String>,
}

impl Source {
    pub fn user() -> Source {
        Source {
            kind: "user".into(),
            plugin: None,
        }
    }

    /// This Loop's time-step source.
    pub fn loop_plugin() -> Source {
        Source {
            kind: "plugin".into(),
            plugin: Some(PLUGIN_NAME.into()),
        }
    }

    fn is_user(&self) -> bool {
        self.kind == "user"
    }

    fn is_loop_plugin(&self) -> bool {
        self.kind == "plugin" && self.plugin.as_deref() == Some(PLUGIN_NAME)
    }
}

/// A message that entered the agent session's transcript. Its text does not
/// matter to the Loop: only `role` and `source` do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptMessage {
    pub role: String,
    pub source: Source,
}

/// Everything the state machine is told.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A message entered the transcript (a `user`-role message starts a turn).
    Message(TranscriptMessage),
    /// The latest turn ended with this terminal.
    TurnEnd(TurnStatus),
    /// The person's control command line (`/tick ...`), as the session's
    /// command plane passed it ([`LoopSettings::command_plane`]). Never
    /// model input.
    Command(String),
    /// An agent's control command line, where a harness takes them (`loop
    /// run`'s `"by": "agent"`): it may ask `status` and `policies`,
    /// subscribe and stop, but never arm a run (only the person does).
    AgentCommand(String),
    /// Subscribe the session to these Tick instances.
    Subscribe(Vec<String>),
    /// A `watch` delivery for a subscribed instance.
    Delivery(Delivery),
    /// A subscribed instance ended.
    Ended { instance: String, ended: EndInfo },
    /// The timer armed with this token expired.
    TimerFired(u64),
    /// The session is going away (end of input): cancel everything.
    Dispose,
}

/// What the caller must do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Put this time-step message into the agent session as its next user message.
    Enqueue {
        run_id: String,
        step: u32,
        message: Value,
    },
    /// The answer to a control command (or to a subscription).
    Reply { ok: bool, text: String },
    /// Arm the session's timer: report [`Input::TimerFired`] with `token`
    /// after `delay_ms`. At most one timer is armed at a time.
    ArmTimer { token: u64, delay_ms: u64 },
    /// Disarm the timer with this token (it must not fire).
    CancelTimer { token: u64 },
    /// Append this record to the session's audit ledger.
    Audit(AuditRecord),
    /// Start delivering `watch` events of these instances.
    Watch { instances: Vec<String> },
}

/// What the state machine knows of the transcript.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Transcript {
    /// User-role messages whose source is `user`.
    natural_user_messages: u64,
    /// Messages whose source is this Loop's plugin (time steps), counted by
    /// source, never by text.
    plugin_steps: u64,
    /// A user message started a turn that has no terminal yet.
    turn_open: bool,
    /// Terminals observed so far; the latest one's index is this number.
    terminals: u64,
    last_terminal: Option<TurnStatus>,
    /// Bumped by every transcript event: "the state is still identical".
    revision: u64,
}

/// Where a live run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RunPhase {
    /// Armed while a turn was open: waiting for its terminal.
    Waiting,
    /// The timer is armed; the next step is enqueued when it fires and the
    /// state is unchanged.
    Scheduled { token: u64 },
    /// A time step was enqueued; waiting for its turn's terminal.
    Enqueued,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Run {
    id: String,
    policy: Arc<CompiledPolicy>,
    count: u32,
    /// Plugin time steps observed when the run was armed.
    start: u64,
    target: u64,
    enqueued: u32,
    phase: RunPhase,
    /// Transcript revision when the timer was armed.
    scheduled_revision: u64,
    /// The interrupted terminal `--resume` authorizes (its index), until the
    /// first new message is enqueued.
    resume_boundary: Option<u64>,
}

/// A snapshot of the live run, for status and tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunView {
    pub id: String,
    pub policy_id: String,
    pub count: u32,
    pub enqueued: u32,
    pub phase: RunPhase,
}

/// Fixed parameters of one agent session's Loop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoopSettings {
    pub session_id: String,
    /// Delay between a completed terminal and the enqueue.
    pub delay_ms: u64,
    /// Run ids are `{run_id_prefix}-{n}`; the driver makes it unique per
    /// process so a restarted Loop never reuses an old run id.
    pub run_id_prefix: String,
    /// The agent starts no turn after a consumed control command (Codex,
    /// Gemini CLI): a run armed between turns waits for the session's next
    /// turn to end, and its first step follows that terminal (the seed's
    /// `waiting` state) instead of a timer no turn would carry.
    #[serde(default)]
    pub first_step_after_next_turn: bool,
    /// Where the person's control commands come from, which the ledger's
    /// `loop_armed` names (`armedVia`): `claude-code prompt hook`, `loop
    /// run`, ...
    #[serde(default = "unnamed_plane")]
    pub command_plane: String,
}

/// The command plane of a state saved before it was named.
fn unnamed_plane() -> String {
    "prompt hook".into()
}

/// One agent session's Loop.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoopCore {
    settings: LoopSettings,
    policies: PolicySet,
    transcript: Transcript,
    run: Option<Run>,
    runs_started: u64,
    next_token: u64,
    /// The interrupted boundary (terminal index) a `--resume` run already used.
    resumed_boundary: Option<u64>,
    subscriptions: Vec<String>,
    inbox: Inbox,
}

impl LoopCore {
    pub fn new(settings: LoopSettings, policies: PolicySet) -> LoopCore {
        LoopCore {
            settings,
            policies,
            transcript: Transcript::default(),
            run: None,
            runs_started: 0,
            next_token: 1,
            resumed_boundary: None,
            subscriptions: Vec::new(),
            inbox: Inbox::default(),
        }
    }

    pub fn settings(&self) -> &LoopSettings {
        &self.settings
    }

    pub fn policies(&self) -> &PolicySet {
        &self.policies
    }

    /// The live run, if any.
    pub fn run(&self) -> Option<RunView> {
        self.run.as_ref().map(|r| RunView {
            id: r.id.clone(),
            policy_id: r.policy.id.clone(),
            count: r.count,
            enqueued: r.enqueued,
            phase: r.phase,
        })
    }

    /// The armed timer's token, if any.
    pub fn timer(&self) -> Option<u64> {
        match self.run.as_ref().map(|r| r.phase) {
            Some(RunPhase::Scheduled { token }) => Some(token),
            _ => None,
        }
    }

    /// Whether a turn is in progress (a user message without a terminal yet).
    pub fn turn_active(&self) -> bool {
        self.transcript.turn_open
    }

    pub fn subscriptions(&self) -> &[String] {
        &self.subscriptions
    }

    /// Handles one input and returns what to do, in order.
    pub fn handle(&mut self, input: Input) -> Vec<Effect> {
        let mut out = Vec::new();
        match input {
            Input::Message(m) => self.on_message(m),
            Input::TurnEnd(status) => self.on_turn_end(status, &mut out),
            Input::Command(text) => self.on_command(&text, true, &mut out),
            Input::AgentCommand(text) => self.on_command(&text, false, &mut out),
            Input::Subscribe(instances) => self.on_subscribe(instances, &mut out),
            Input::Delivery(d) => {
                if self.subscriptions.contains(&d.instance) {
                    self.inbox.push_delivery(d);
                }
            }
            Input::Ended { instance, ended } => {
                if self.subscriptions.contains(&instance) {
                    self.inbox.push_ended(&instance, ended);
                }
            }
            Input::TimerFired(token) => self.on_timer(token, &mut out),
            Input::Dispose => self.end_run("disposed", &mut out),
        }
        out
    }

    fn on_message(&mut self, m: TranscriptMessage) {
        let t = &mut self.transcript;
        t.revision += 1;
        if m.source.is_loop_plugin() {
            t.plugin_steps += 1;
        } else if m.role == "user" && m.source.is_user() {
            t.natural_user_messages += 1;
        }
        if m.role == "user" {
            t.turn_open = true;
        }
        // A scheduled step notices the change when its timer fires (the
        // whole predicate is rechecked then); nothing else reacts to messages.
    }

    fn on_turn_end(&mut self, status: TurnStatus, out: &mut Vec<Effect>) {
        let t = &mut self.transcript;
        t.revision += 1;
        t.turn_open = false;
        t.terminals += 1;
        t.last_terminal = Some(status.clone());
        let Some(run) = &self.run else { return };
        match run.phase {
            RunPhase::Waiting => {
                if status == TurnStatus::Completed {
                    self.after_completed_terminal(out);
                } else {
                    let reason = format!("the turn ended {}", status.as_str());
                    self.finish(AuditKind::LoopStopped, &reason, out);
                }
            }
            RunPhase::Enqueued => {
                let step = run.enqueued;
                let expected = run.start + u64::from(run.enqueued);
                let observed = self.transcript.plugin_steps;
                self.audit(
                    AuditKind::TickTerminal,
                    details(json!({"step": step, "status": status.as_str()})),
                    out,
                );
                if observed != expected {
                    let reason = format!(
                        "inconsistent transcript: {} time-step messages observed for {} enqueued",
                        observed.saturating_sub(self.run_start()),
                        step
                    );
                    self.finish(AuditKind::LoopStopped, &reason, out);
                } else if status != TurnStatus::Completed {
                    let reason = format!("time step {step} ended {}", status.as_str());
                    self.finish(AuditKind::LoopStopped, &reason, out);
                } else {
                    self.after_completed_terminal(out);
                }
            }
            // The timer rechecks the state when it fires.
            RunPhase::Scheduled { .. } => {}
        }
    }

    fn run_start(&self) -> u64 {
        self.run.as_ref().map_or(0, |r| r.start)
    }

    /// A completed terminal: complete when every step was observed, else
    /// schedule the next one if the scheduling predicate holds, else stop.
    fn after_completed_terminal(&mut self, out: &mut Vec<Effect>) {
        let Some(run) = &self.run else { return };
        let observed = self.transcript.plugin_steps.saturating_sub(run.start);
        if observed >= u64::from(run.count) {
            self.finish(AuditKind::LoopComplete, "all time steps completed", out);
            return;
        }
        match self.scheduling_predicate() {
            Ok(()) => self.schedule(out),
            Err(reason) => self.finish(AuditKind::LoopStopped, &reason, out),
        }
    }

    fn schedule(&mut self, out: &mut Vec<Effect>) {
        let token = self.next_token;
        self.next_token += 1;
        let revision = self.transcript.revision;
        let delay_ms = self.settings.delay_ms;
        let Some(run) = &mut self.run else { return };
        run.phase = RunPhase::Scheduled { token };
        run.scheduled_revision = revision;
        let step = run.enqueued + 1;
        self.audit(
            AuditKind::TickScheduled,
            details(json!({"step": step, "delayMs": delay_ms})),
            out,
        );
        out.push(Effect::ArmTimer { token, delay_ms });
    }

    /// The seed's scheduling predicate, all four clauses.
    fn scheduling_predicate(&self) -> Result<(), String> {
        let Some(run) = &self.run else {
            return Err("no run is active".into());
        };
        let t = &self.transcript;
        let observed = t.plugin_steps;
        // 1. the observed count is between the frozen start and target.
        if observed < run.start || observed > run.target {
            return Err(format!(
                "inconsistent transcript: {observed} time steps observed, outside the run's [{}, {}]",
                run.start, run.target
            ));
        }
        // 2. the latest turn has a durable terminal.
        let Some(last) = t.last_terminal.as_ref().filter(|_| !t.turn_open) else {
            return Err("the latest turn has no terminal".into());
        };
        // 3. completed, or the single interrupted boundary --resume authorized.
        let resumable = *last == TurnStatus::Interrupted
            && run.resume_boundary == Some(t.terminals)
            && observed == run.start;
        if *last != TurnStatus::Completed && !resumable {
            return Err(format!("the latest terminal is {}", last.as_str()));
        }
        // 4. fewer additional messages than requested.
        if observed - run.start >= u64::from(run.count) {
            return Err(format!("all {} time steps were observed", run.count));
        }
        Ok(())
    }

    fn on_timer(&mut self, token: u64, out: &mut Vec<Effect>) {
        let Some(run) = &self.run else { return };
        if run.phase != (RunPhase::Scheduled { token }) {
            return; // a stale or unknown timer: nothing is armed under it
        }
        let step = run.enqueued + 1;
        let changed = run.scheduled_revision != self.transcript.revision;
        let verdict = if changed {
            Err("the session changed during the delay".to_string())
        } else {
            self.scheduling_predicate()
        };
        if let Err(reason) = verdict {
            self.audit(
                AuditKind::TickCancelledBeforeEnqueue,
                details(json!({"step": step, "reason": reason})),
                out,
            );
            self.run = None;
            return;
        }
        let parts = self.inbox.drain_parts();
        let Some(run) = &mut self.run else { return };
        run.enqueued = step;
        run.phase = RunPhase::Enqueued;
        run.resume_boundary = None;
        let message = time_step_message(&run.policy, parts);
        let run_id = run.id.clone();
        self.audit(AuditKind::TickEnqueued, details(json!({"step": step})), out);
        out.push(Effect::Enqueue {
            run_id,
            step,
            message,
        });
    }

    /// A control command, the person's (`by_person`) or an agent's.
    fn on_command(&mut self, text: &str, by_person: bool, out: &mut Vec<Effect>) {
        let reply = match command::parse(text) {
            Ok(Command::Start { .. }) if !by_person => Err(
                "an agent's command cannot arm a run: only the person arms one, typing /tick"
                    .to_string(),
            ),
            Ok(Command::Subscribe(instances)) => return self.on_subscribe(instances, out),
            Err(e) => Err(e.to_string()),
            Ok(Command::Policies) => Ok(self.policies_text()),
            Ok(Command::Status) => Ok(self.status_text()),
            Ok(Command::Stop) => Ok(match self.run.as_ref().map(|r| r.id.clone()) {
                Some(id) => {
                    self.end_run("/tick stop", out);
                    format!("stopped run {id}")
                }
                None => "no run is active".to_string(),
            }),
            Ok(Command::Start {
                count,
                policy,
                resume,
            }) => self.start(count, policy.as_deref(), resume, out),
        };
        out.push(match reply {
            Ok(text) => Effect::Reply { ok: true, text },
            Err(text) => Effect::Reply {
                ok: false,
                text: format!("refused: {text}"),
            },
        });
    }

    /// Admission: the seed's five predicates, then arming.
    fn start(
        &mut self,
        count: Option<u32>,
        policy: Option<&str>,
        resume: bool,
        out: &mut Vec<Effect>,
    ) -> Result<String, String> {
        // 5. the selected policy exists and is valid (compiled at start).
        let policy = match policy {
            Some(id) => self
                .policies
                .get(id)
                .cloned()
                .ok_or_else(|| format!("unknown policy `{id}` (see /tick policies)"))?,
            None => self.policies.default_policy().clone(),
        };
        let count = count.unwrap_or(self.policies.default_ticks());
        // 4. no other run is active.
        if let Some(run) = &self.run {
            return Err(format!(
                "run {} is already active (/tick stop ends it)",
                run.id
            ));
        }
        let t = &self.transcript;
        // 1. a natural user message exists.
        if t.natural_user_messages == 0 {
            return Err("no user message yet: a run needs natural context".into());
        }
        // 2. a latest closed turn exists.
        let Some(last) = &t.last_terminal else {
            return Err("no turn has ended yet: a run needs a completed terminal".into());
        };
        // 3. the latest terminal is completed, or exactly interrupted with --resume.
        let resume_boundary = match last {
            TurnStatus::Completed => None,
            TurnStatus::Interrupted if resume => {
                if self.resumed_boundary == Some(t.terminals) {
                    return Err(
                        "this interrupted turn was already resumed once; --resume allows it once"
                            .into(),
                    );
                }
                Some(t.terminals)
            }
            TurnStatus::Interrupted => {
                return Err(
                    "the latest turn was interrupted; `/tick --resume` continues after it once"
                        .into(),
                )
            }
            other => {
                return Err(format!(
                    "the latest turn ended {}; only a completed turn (or, with --resume, an interrupted one) admits a run",
                    other.as_str()
                ))
            }
        };
        if resume_boundary.is_some() {
            self.resumed_boundary = resume_boundary;
        }
        self.runs_started += 1;
        let id = format!("{}-{}", self.settings.run_id_prefix, self.runs_started);
        let start = t.plugin_steps;
        let turn_open = t.turn_open;
        let waiting = turn_open || self.settings.first_step_after_next_turn;
        self.run = Some(Run {
            id: id.clone(),
            policy: policy.clone(),
            count,
            start,
            target: start + u64::from(count),
            enqueued: 0,
            phase: RunPhase::Waiting,
            scheduled_revision: 0,
            resume_boundary,
        });
        self.audit(
            AuditKind::LoopArmed,
            details(json!({
                "count": count,
                "startCount": start,
                "targetCount": start + u64::from(count),
                "resume": resume_boundary.is_some(),
                "waiting": waiting,
                "armedBy": "person",
                "armedVia": self.settings.command_plane,
            })),
            out,
        );
        let mut text = format!(
            "armed run {id}: {count} time step{} with policy {} (sha256 {})",
            if count == 1 { "" } else { "s" },
            policy.id,
            policy.time_step_sha256
        );
        if resume_boundary.is_some() {
            text.push_str(", resuming after the interrupted turn");
        }
        if turn_open {
            text.push_str("; waiting for the current turn to end");
        } else if waiting {
            text.push_str(
                "; the first time step follows the end of this session's next turn (this agent starts no turn for a command: send a message to begin)",
            );
        } else {
            match self.scheduling_predicate() {
                Ok(()) => self.schedule(out),
                Err(reason) => {
                    self.finish(AuditKind::LoopStopped, &reason, out);
                    return Err(reason);
                }
            }
        }
        Ok(text)
    }

    fn on_subscribe(&mut self, instances: Vec<String>, out: &mut Vec<Effect>) {
        if instances.is_empty() {
            out.push(Effect::Reply {
                ok: false,
                text: "refused: subscribe needs at least one instance".into(),
            });
            return;
        }
        // One bad id refuses them all: nothing is subscribed.
        if let Some(why) = instances
            .iter()
            .find_map(|i| crate::ids::check_instance_id(i).err())
        {
            out.push(Effect::Reply {
                ok: false,
                text: format!("refused: {why}"),
            });
            return;
        }
        let mut new = Vec::new();
        for i in instances {
            if !self.subscriptions.contains(&i) && !new.contains(&i) {
                new.push(i);
            }
        }
        self.subscriptions.extend(new.iter().cloned());
        if !new.is_empty() {
            out.push(Effect::Watch {
                instances: new.clone(),
            });
        }
        out.push(Effect::Reply {
            ok: true,
            text: format!("subscribed: {}", self.subscriptions.join(", ")),
        });
    }

    /// Ends the live run (stop command or disposal): a scheduled step is
    /// cancelled before enqueue, then the run is stopped.
    fn end_run(&mut self, reason: &str, out: &mut Vec<Effect>) {
        let Some(run) = &self.run else { return };
        if let RunPhase::Scheduled { token } = run.phase {
            let step = run.enqueued + 1;
            out.push(Effect::CancelTimer { token });
            self.audit(
                AuditKind::TickCancelledBeforeEnqueue,
                details(json!({"step": step, "reason": reason})),
                out,
            );
        }
        self.finish(AuditKind::LoopStopped, reason, out);
    }

    /// Records the run's end (`loop_stopped` or `loop_complete`) and drops it.
    fn finish(&mut self, kind: AuditKind, reason: &str, out: &mut Vec<Effect>) {
        let Some(run) = &self.run else { return };
        let enqueued = run.enqueued;
        let count = run.count;
        self.audit(
            kind,
            details(json!({"reason": reason, "enqueued": enqueued, "count": count})),
            out,
        );
        self.run = None;
    }

    fn audit(&self, kind: AuditKind, details: Map<String, Value>, out: &mut Vec<Effect>) {
        let Some(run) = &self.run else { return };
        out.push(Effect::Audit(AuditRecord {
            kind,
            session_id: self.settings.session_id.clone(),
            run_id: run.id.clone(),
            policy: run.policy.clone(),
            details,
        }));
    }

    fn policies_text(&self) -> String {
        let default = &self.policies.default_policy().id;
        let lines: Vec<String> = self
            .policies
            .iter()
            .map(|p| {
                format!(
                    "{}{}: {} bytes, sha256 {}",
                    p.id,
                    if &p.id == default { " (default)" } else { "" },
                    p.time_step_bytes,
                    p.time_step_sha256
                )
            })
            .collect();
        format!(
            "{}\ndefault count: {}",
            lines.join("\n"),
            self.policies.default_ticks()
        )
    }

    fn status_text(&self) -> String {
        let mut text = match &self.run {
            None => "inactive".to_string(),
            Some(r) => {
                let phase = match r.phase {
                    RunPhase::Waiting => "waiting for the next turn to end".to_string(),
                    RunPhase::Scheduled { .. } => {
                        format!("step {} scheduled", r.enqueued + 1)
                    }
                    RunPhase::Enqueued => format!("step {} enqueued", r.enqueued),
                };
                format!(
                    "run {}: policy {}, {} of {} time steps enqueued, {phase}",
                    r.id, r.policy.id, r.enqueued, r.count
                )
            }
        };
        if !self.subscriptions.is_empty() {
            let subs: Vec<String> = self
                .subscriptions
                .iter()
                .map(|i| (crate::ids::shown(i), self.inbox.pending(i)))
                .map(|(i, pending)| match pending {
                    None => format!("{i} (nothing pending)"),
                    Some((n, ended)) => format!(
                        "{i} ({n} update{} pending{})",
                        if n == 1 { "" } else { "s" },
                        if ended { ", ended" } else { "" }
                    ),
                })
                .collect();
            text.push_str(&format!("; subscribed: {}", subs.join(", ")));
        }
        text
    }
}

fn details(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests;
