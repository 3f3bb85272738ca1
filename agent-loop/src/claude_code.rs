//! The Loop inside Claude Code: its hooks, as short `tickloop` processes, on
//! the same sans-I/O core as `tickloop loop run` (issue 21). The same engine
//! serves Codex CLI's and Gemini CLI's hooks and opencode's plugin (issue
//! 29): [`crate::agent::Agent`] says what differs (the decision word, the
//! state directory, whether a run's first step must follow the next turn
//! because a consumed prompt starts none, whether a step passes the prompt
//! hook as the next prompt).
//!
//! Claude Code runs a hook command per event, with the event as JSON on stdin
//! and a decision as JSON on stdout. Each call here loads the session's
//! [`LoopCore`] from disk (one state file per Claude Code `session_id`, under
//! an exclusive lock), feeds it what the event means, carries out the effects
//! (audit records, the delay, subscription deliveries) and saves it again:
//!
//! * `UserPromptSubmit` — a `/tick ...` prompt is a control command: it is fed
//!   to the core and answered to the person with `{"decision":"block"}`, so it
//!   never reaches the model. Any other prompt is a transcript message (a
//!   natural one from the person, or the harness's `<task-notification>`).
//! * `UserPromptSubmit`, `asyncRewake` — the carrier of a run's first time
//!   step. A blocked prompt starts no turn, so nothing would ever follow it;
//!   this background hook waits the delay, rechecks the predicates (the
//!   core's timer) and, when a step is enqueued, exits 2 with its text, which
//!   wakes the model.
//! * `Stop` — a turn completed: the core schedules the next step; the hook
//!   waits the delay, rechecks, and continues the agent with
//!   `{"decision":"block","reason":TEXT}`.
//! * `StopFailure` — a turn ended with an API error: the run stops.
//!
//! A turn that ended without either (interrupted: no hook fires) is found at
//! the next hook call, from the transcript file (`transcript_path`).
//!
//! Time steps are counted by their source: the core is told of a plugin
//! message exactly when this adapter enqueues one, never by reading text.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::agent::Agent;
use super::audit::{ledger_file_name, LedgerWriter, DEFAULT_AUDIT_DIR};
use super::machine::{
    Effect, Input, LoopCore, LoopSettings, Source, TranscriptMessage, TurnStatus,
};
use super::policy::ConfigError;
use super::run::{load_policies, run_id_prefix, DEFAULT_DELAY_MS};

mod deliveries;
pub mod install;
mod transcript;

pub use deliveries::{ClientDeliveries, Deliveries, Fetched};
pub use transcript::classify_unended_turn;
use transcript::last_assistant_is_error;

/// Environment variable: milliseconds between a completed turn and the next
/// time step (default [`DEFAULT_DELAY_MS`]).
pub const DELAY_ENV: &str = "TICKLOOP_LOOP_DELAY_MS";
/// Environment variable: where session states live (default: the user's
/// state directory, `tickloop/claude-code`).
pub const STATE_DIR_ENV: &str = "TICKLOOP_LOOP_STATE_DIR";
/// Environment variable: the audit ledger directory (default:
/// `.pulse-tick-audit` in the Claude Code project directory).
pub const AUDIT_DIR_ENV: &str = "TICKLOOP_LOOP_AUDIT_DIR";
/// Environment variable: the policy configuration file (default: the user's
/// config directory, `tickloop/loop.json`).
pub const CONFIG_ENV: &str = "TICKLOOP_LOOP_CONFIG";

/// How the state file is laid out; a file of another version is refused.
const STATE_VERSION: u32 = 1;
/// How many answered prompt ids a state remembers (for the wake hook).
const PROMPT_MEMORY: usize = 16;
/// How long the wake hook waits for the prompt hook's answer.
const WAKE_WAIT: Duration = Duration::from_secs(20);

/// What went wrong in a hook call.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("the hook input is not the agent's hook JSON: {0}")]
    Input(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("session state {}: {message}", path.display())]
    State { path: PathBuf, message: String },
    #[error("no state directory: set {STATE_DIR_ENV}")]
    NoStateDir,
    #[error("{agent}'s session {session:?} has no Loop: its hooks never ran in it (a subscription goes only to a session its host's hooks started; is `tickloop loop {name} install` done?)", agent = agent.title(), name = agent.name())]
    NoSession { agent: Agent, session: String },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> HookError + 'a {
    move |source| HookError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The fields of Claude Code's hook input this adapter reads.
#[derive(Debug, Clone, Deserialize)]
pub struct HookInput {
    pub session_id: String,
    #[serde(default)]
    pub transcript_path: Option<PathBuf>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub hook_event_name: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub prompt_id: Option<String>,
    #[serde(default)]
    pub stop_hook_active: Option<bool>,
}

impl HookInput {
    pub fn parse(text: &str) -> Result<HookInput, HookError> {
        let input: HookInput =
            serde_json::from_str(text).map_err(|e| HookError::Input(e.to_string()))?;
        super::ids::check_session_id(&input.session_id)
            .map_err(|why| HookError::Input(format!("`session_id`: {why}")))?;
        Ok(input)
    }
}

/// Where the adapter keeps its files and how long it waits.
#[derive(Debug, Clone)]
pub struct HookEnv {
    /// Which agent's hooks these are.
    pub agent: Agent,
    pub state_dir: PathBuf,
    /// `None`: `.pulse-tick-audit` in the project directory.
    pub audit_dir: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub delay_ms: u64,
    /// tickhost's runtime directory, for subscription deliveries.
    pub runtime_dir: PathBuf,
}

impl HookEnv {
    /// Claude Code's, from the environment (the variables above,
    /// `CLAUDE_PROJECT_DIR`).
    pub fn from_env(runtime_dir: PathBuf) -> Result<HookEnv, HookError> {
        HookEnv::for_agent(Agent::ClaudeCode, runtime_dir)
    }

    /// `agent`'s, from the environment: its states in `tickloop/NAME` of the
    /// user's state directory unless [`STATE_DIR_ENV`] says otherwise.
    pub fn for_agent(agent: Agent, runtime_dir: PathBuf) -> Result<HookEnv, HookError> {
        let state_dir = match std::env::var_os(STATE_DIR_ENV) {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => dirs::state_dir()
                .or_else(dirs::data_local_dir)
                .ok_or(HookError::NoStateDir)?
                .join("tickloop")
                .join(agent.name()),
        };
        let delay_ms = match std::env::var(DELAY_ENV) {
            Ok(v) => v.trim().parse().map_err(|_| {
                HookError::Input(format!("{DELAY_ENV}={v:?} is not a number of milliseconds"))
            })?,
            Err(_) => DEFAULT_DELAY_MS,
        };
        Ok(HookEnv {
            agent,
            state_dir,
            audit_dir: std::env::var_os(AUDIT_DIR_ENV)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            config: std::env::var_os(CONFIG_ENV)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            delay_ms,
            runtime_dir,
        })
    }

    fn audit_dir_for(&self, input: &HookInput) -> PathBuf {
        if let Some(d) = &self.audit_dir {
            return d.clone();
        }
        let project = std::env::var_os(self.agent.project_dir_env())
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| input.cwd.clone())
            .unwrap_or_else(|| PathBuf::from("."));
        project.join(DEFAULT_AUDIT_DIR)
    }
}

/// How the hook prompt of one `prompt_id` was answered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum PromptAnswer {
    /// Passed on to the model.
    Passed,
    /// A control command, answered to the person. `timer`: the token of the
    /// step it scheduled (the wake hook carries it).
    Consumed { timer: Option<(u64, u64)> },
}

/// One Claude Code session's Loop, as saved between hook calls.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SessionState {
    version: u32,
    core: LoopCore,
    /// The last delivered `seq` of each subscribed instance.
    seqs: BTreeMap<String, u64>,
    /// Instances whose end was delivered.
    ended: Vec<String>,
    /// A first time step went out through the wake hook and its carrier
    /// prompt (`<task-notification>`) has not been seen yet.
    awaiting_carrier: bool,
    /// The text of a step the Stop hook just sent, for agents that pass it
    /// through their prompt hook as the next prompt (Gemini CLI): that
    /// prompt is the step arriving, already counted, not a person's.
    #[serde(default)]
    pending_step: Option<String>,
    /// Recently answered prompts, newest last.
    prompts: Vec<(String, PromptAnswer)>,
}

/// The session's state file, locked for the life of this value.
struct Locked {
    _lock: File,
    path: PathBuf,
    state: SessionState,
    fresh: bool,
}

fn state_paths(env: &HookEnv, session_id: &str) -> (PathBuf, PathBuf) {
    let name = ledger_file_name(session_id);
    let stem = name.trim_end_matches(".jsonl");
    (
        env.state_dir.join(format!("{stem}.json")),
        env.state_dir.join(format!("{stem}.lock")),
    )
}

fn lock_state(env: &HookEnv, session_id: &str) -> Result<Locked, HookError> {
    std::fs::create_dir_all(&env.state_dir).map_err(io("cannot create", &env.state_dir))?;
    let (path, lock_path) = state_paths(env, session_id);
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(io("cannot open", &lock_path))?;
    lock.lock().map_err(io("cannot lock", &lock_path))?;
    let (state, fresh) = match std::fs::read(&path) {
        Ok(bytes) => {
            let state: SessionState =
                serde_json::from_slice(&bytes).map_err(|e| HookError::State {
                    path: path.clone(),
                    message: format!("{e} (remove the file to start this session's Loop afresh)"),
                })?;
            if state.version != STATE_VERSION {
                return Err(HookError::State {
                    path,
                    message: format!(
                        "version {} is not {STATE_VERSION} (remove the file to start afresh)",
                        state.version
                    ),
                });
            }
            (state, false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let policies = load_policies(env.config.as_deref())?;
            let core = LoopCore::new(
                LoopSettings {
                    session_id: session_id.to_string(),
                    delay_ms: env.delay_ms,
                    run_id_prefix: run_id_prefix(),
                    first_step_after_next_turn: env.agent.first_step_after_next_turn(),
                    command_plane: format!("{} prompt hook", env.agent.name()),
                },
                policies,
            );
            (
                SessionState {
                    version: STATE_VERSION,
                    core,
                    seqs: BTreeMap::new(),
                    ended: Vec::new(),
                    awaiting_carrier: false,
                    pending_step: None,
                    prompts: Vec::new(),
                },
                true,
            )
        }
        Err(e) => return Err(io("cannot read", &path)(e)),
    };
    Ok(Locked {
        _lock: lock,
        path,
        state,
        fresh,
    })
}

impl Locked {
    fn save(&self) -> Result<(), HookError> {
        use tickloop_client::whole_file::{write, Durability, Mode};
        let bytes = serde_json::to_vec(&self.state).map_err(|e| HookError::State {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        write(&self.path, &bytes, Mode::AsItWas, Durability::Durable).map_err(|e| HookError::Io {
            what: "cannot write",
            path: e.path,
            source: e.source,
        })
    }

    fn remember(&mut self, prompt_id: Option<&str>, answer: PromptAnswer) {
        let Some(id) = prompt_id else { return };
        let prompts = &mut self.state.prompts;
        prompts.retain(|(p, _)| p != id);
        prompts.push((id.to_string(), answer));
        let excess = prompts.len().saturating_sub(PROMPT_MEMORY);
        prompts.drain(..excess);
    }
}

/// What a hook call prints and how it exits.
#[derive(Debug, Clone, PartialEq)]
pub struct HookOutput {
    /// The JSON decision for stdout, if any.
    pub stdout: Option<Value>,
    /// Text for stderr (with exit code 2 it reaches the model: the wake hook).
    pub stderr: Option<String>,
    pub exit_code: i32,
}

impl HookOutput {
    fn nothing() -> HookOutput {
        HookOutput {
            stdout: None,
            stderr: None,
            exit_code: 0,
        }
    }

    /// Stops the prompt (its reason goes to the person) or continues the
    /// turn (its reason is the agent's next user message).
    fn block(agent: Agent, reason: String) -> HookOutput {
        HookOutput {
            stdout: Some(json!({"decision": agent.block_decision(), "reason": reason})),
            stderr: None,
            exit_code: 0,
        }
    }
}

/// The hook events this adapter answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    UserPromptSubmit,
    /// The `asyncRewake` companion of `UserPromptSubmit`.
    Wake,
    Stop,
    StopFailure,
}

impl HookEvent {
    pub fn parse(s: &str) -> Option<HookEvent> {
        Some(match s {
            "user-prompt-submit" => HookEvent::UserPromptSubmit,
            "wake" => HookEvent::Wake,
            "stop" => HookEvent::Stop,
            "stop-failure" => HookEvent::StopFailure,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::Wake => "wake",
            HookEvent::Stop => "stop",
            HookEvent::StopFailure => "stop-failure",
        }
    }
}

/// Handles one hook call.
pub fn handle(
    event: HookEvent,
    input: &HookInput,
    env: &HookEnv,
    deliveries: &dyn Deliveries,
) -> Result<HookOutput, HookError> {
    match event {
        HookEvent::UserPromptSubmit => user_prompt_submit(input, env),
        HookEvent::Wake => wake(input, env, deliveries),
        HookEvent::Stop => turn_ended(input, env, deliveries, None),
        HookEvent::StopFailure => turn_ended(input, env, deliveries, Some(TurnStatus::Error)),
    }
}

/// Whether a prompt is a control command (`/tick` and a word boundary).
pub fn is_control(prompt: &str) -> bool {
    let t = prompt.trim_start();
    t == "/tick" || t.starts_with("/tick ") || t.starts_with("/tick\t") || t.starts_with("/tick\n")
}

/// The harness's own prompts (a background task's notification, which is
/// also how the wake hook's text arrives): not the person's.
fn is_harness_prompt(prompt: &str) -> bool {
    prompt.trim_start().starts_with("<task-notification>")
}

fn user_prompt_submit(input: &HookInput, env: &HookEnv) -> Result<HookOutput, HookError> {
    let prompt = input.prompt.clone().unwrap_or_default();
    let mut locked = lock_state(env, &input.session_id)?;
    let mut ledger = Ledger::new(env.audit_dir_for(input), &input.session_id);
    let carrier = (locked.state.awaiting_carrier && is_harness_prompt(&prompt))
        || locked.state.pending_step.as_deref() == Some(prompt.as_str());
    locked.state.pending_step = None;
    if !carrier {
        reconcile(&mut locked, input, &mut ledger)?;
    }
    let output = if is_control(&prompt) {
        let effects = locked
            .state
            .core
            .handle(Input::Command(prompt.trim().to_string()));
        let mut replies = Vec::new();
        let mut timer = None;
        for effect in effects {
            match effect {
                Effect::Reply { text, .. } => replies.push(text),
                Effect::ArmTimer { token, delay_ms } => timer = Some((token, delay_ms)),
                other => ledger.apply(other)?,
            }
        }
        if timer.is_some() {
            replies.push("the first time step follows after the delay".into());
        }
        locked.remember(input.prompt_id.as_deref(), PromptAnswer::Consumed { timer });
        HookOutput::block(env.agent, format!("tickloop: {}", replies.join("\n")))
    } else {
        let source = if carrier {
            // The wake hook's time step arriving: the core already counted it.
            locked.state.awaiting_carrier = false;
            None
        } else if is_harness_prompt(&prompt) {
            Some(Source {
                kind: "harness".into(),
                plugin: None,
            })
        } else {
            Some(Source::user())
        };
        if let Some(source) = source {
            let mut effects = locked.state.core.handle(Input::Message(TranscriptMessage {
                role: "user".into(),
                source,
            }));
            // A step scheduled before this prompt (its wake hook still
            // waiting) sees a changed session: the core cancels it now.
            if let Some(token) = locked.state.core.timer() {
                effects.extend(locked.state.core.handle(Input::TimerFired(token)));
            }
            for effect in effects {
                ledger.apply(effect)?;
            }
        }
        locked.remember(input.prompt_id.as_deref(), PromptAnswer::Passed);
        HookOutput::nothing()
    };
    locked.save()?;
    Ok(output)
}

/// A turn that began (the core has it open) but ended with no Stop hook:
/// classify it from the transcript and tell the core.
fn reconcile(locked: &mut Locked, input: &HookInput, ledger: &mut Ledger) -> Result<(), HookError> {
    if locked.fresh || !locked.state.core.turn_active() {
        return Ok(());
    }
    let status = input
        .transcript_path
        .as_deref()
        .map(classify_unended_turn)
        .unwrap_or_else(|| TurnStatus::Unknown("no transcript".into()));
    let effects = locked.state.core.handle(Input::TurnEnd(status));
    for effect in effects {
        match effect {
            // A turn that did not complete schedules nothing; a stray timer
            // is never left armed.
            Effect::ArmTimer { .. } | Effect::Reply { .. } => {}
            other => ledger.apply(other)?,
        }
    }
    locked.state.awaiting_carrier = false;
    Ok(())
}

/// The `asyncRewake` hook: carries the first step of a run armed by this
/// prompt. Exit 2 with the step on stderr wakes the model.
fn wake(
    input: &HookInput,
    env: &HookEnv,
    deliveries: &dyn Deliveries,
) -> Result<HookOutput, HookError> {
    let prompt = input.prompt.clone().unwrap_or_default();
    if !is_control(&prompt) {
        return Ok(HookOutput::nothing());
    }
    let Some(prompt_id) = input.prompt_id.clone() else {
        return Ok(HookOutput::nothing());
    };
    // Both hooks start together: wait for the prompt hook's answer.
    let deadline = std::time::Instant::now() + WAKE_WAIT;
    let answer = loop {
        let locked = lock_state(env, &input.session_id)?;
        if let Some((_, a)) = locked.state.prompts.iter().find(|(p, _)| *p == prompt_id) {
            break a.clone();
        }
        drop(locked);
        if std::time::Instant::now() >= deadline {
            return Ok(HookOutput::nothing());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let PromptAnswer::Consumed {
        timer: Some((token, delay_ms)),
    } = answer
    else {
        return Ok(HookOutput::nothing());
    };
    std::thread::sleep(Duration::from_millis(delay_ms));
    match fire(input, env, deliveries, token, true)? {
        Some(text) => Ok(HookOutput {
            stdout: None,
            stderr: Some(text),
            exit_code: 2,
        }),
        None => Ok(HookOutput::nothing()),
    }
}

/// The delay is over: fetch deliveries, fire the timer, and return the step's
/// text when one was enqueued (the core is told it entered the transcript).
/// `via_wake`: the text goes out through the wake hook, and arrives back as
/// a harness prompt (its carrier).
fn fire(
    input: &HookInput,
    env: &HookEnv,
    deliveries: &dyn Deliveries,
    token: u64,
    via_wake: bool,
) -> Result<Option<String>, HookError> {
    let subscriptions = {
        let locked = lock_state(env, &input.session_id)?;
        if locked.state.core.timer() != Some(token) {
            return Ok(None); // stopped or changed meanwhile: nothing to fetch
        }
        locked.state.core.subscriptions().to_vec()
    };
    let fetched = if subscriptions.is_empty() {
        Vec::new()
    } else {
        deliveries.fetch(&subscriptions)
    };
    let mut locked = lock_state(env, &input.session_id)?;
    let mut ledger = Ledger::new(env.audit_dir_for(input), &input.session_id);
    for f in fetched {
        let input = match f {
            Fetched::State(mut d) => {
                let last = locked.state.seqs.get(&d.instance).copied();
                if last == Some(d.seq) && d.reloaded.is_none() {
                    continue; // unchanged since the previous step: nothing to send
                }
                d.updates = match last {
                    Some(prev) if d.seq > prev && d.reloaded.is_none() => d.seq - prev,
                    _ => d.updates,
                };
                d.merged = d.updates.saturating_sub(1);
                locked.state.seqs.insert(d.instance.clone(), d.seq);
                Input::Delivery(d)
            }
            Fetched::Ended { instance, ended } => {
                if locked.state.ended.contains(&instance) {
                    continue;
                }
                locked.state.ended.push(instance.clone());
                Input::Ended { instance, ended }
            }
        };
        for effect in locked.state.core.handle(input) {
            ledger.apply(effect)?;
        }
    }
    let mut text = None;
    for effect in locked.state.core.handle(Input::TimerFired(token)) {
        match effect {
            Effect::Enqueue { message, .. } => text = Some(message_text(&message)),
            other => ledger.apply(other)?,
        }
    }
    if text.is_some() {
        // The harness puts it into the session now: counted by its source.
        let effects = locked.state.core.handle(Input::Message(TranscriptMessage {
            role: "user".into(),
            source: Source::loop_plugin(),
        }));
        for effect in effects {
            ledger.apply(effect)?;
        }
        if env.agent.step_passes_prompt_hook() {
            locked.state.pending_step = text.clone();
        } else {
            locked.state.awaiting_carrier = via_wake;
        }
    }
    locked.save()?;
    Ok(text)
}

/// `Stop` (status from the transcript: completed unless an API error) and
/// `StopFailure` (error).
fn turn_ended(
    input: &HookInput,
    env: &HookEnv,
    deliveries: &dyn Deliveries,
    status: Option<TurnStatus>,
) -> Result<HookOutput, HookError> {
    let timer = {
        let mut locked = lock_state(env, &input.session_id)?;
        let mut ledger = Ledger::new(env.audit_dir_for(input), &input.session_id);
        if !locked.state.core.turn_active() {
            // A turn the Loop did not see begin (a session older than the
            // install): note the transcript message first.
            locked.state.core.handle(Input::Message(TranscriptMessage {
                role: "user".into(),
                source: Source::user(),
            }));
        }
        let status = status.unwrap_or_else(|| {
            if last_assistant_is_error(input.transcript_path.as_deref()) {
                TurnStatus::Error
            } else {
                TurnStatus::Completed
            }
        });
        let mut timer = None;
        for effect in locked.state.core.handle(Input::TurnEnd(status)) {
            match effect {
                Effect::ArmTimer { token, delay_ms } => timer = Some((token, delay_ms)),
                other => ledger.apply(other)?,
            }
        }
        locked.state.awaiting_carrier = false;
        locked.save()?;
        timer
    };
    let Some((token, delay_ms)) = timer else {
        return Ok(HookOutput::nothing());
    };
    std::thread::sleep(Duration::from_millis(delay_ms));
    Ok(match fire(input, env, deliveries, token, false)? {
        Some(text) => HookOutput::block(env.agent, text),
        None => HookOutput::nothing(),
    })
}

/// The time-step message as Claude Code's text: the policy's text, then each
/// subscription delivery as one JSON line (data, never instructions).
pub fn message_text(message: &Value) -> String {
    let mut out = String::new();
    for part in message["content"].as_array().into_iter().flatten() {
        match part["type"].as_str() {
            Some("text") => out.push_str(part["text"].as_str().unwrap_or("")),
            Some("data") => {
                out.push_str("\n\n");
                out.push_str(&part["data"].to_string());
            }
            _ => {}
        }
    }
    out
}

/// The session's audit ledger, opened at the first record.
struct Ledger {
    dir: PathBuf,
    session_id: String,
    writer: Option<LedgerWriter>,
}

impl Ledger {
    fn new(dir: PathBuf, session_id: &str) -> Ledger {
        Ledger {
            dir,
            session_id: session_id.to_string(),
            writer: None,
        }
    }

    /// Carries out the effects a hook call has no other use for: audit
    /// records are appended; a `watch` is left to the next time step (it
    /// fetches the subscribed Ticks' state itself); the rest needs nothing.
    fn apply(&mut self, effect: Effect) -> Result<(), HookError> {
        let Effect::Audit(record) = effect else {
            return Ok(());
        };
        let writer = match &mut self.writer {
            Some(w) => w,
            None => {
                let w = LedgerWriter::open(&self.dir, &self.session_id)
                    .map_err(io("cannot open the audit ledger in", &self.dir))?;
                self.writer.insert(w)
            }
        };
        let path = writer.path().to_path_buf();
        writer
            .append(&record)
            .map_err(io("cannot append to the audit ledger", &path))
    }
}

/// Runs one hook call on this process's stdin/stdout; returns the exit code.
/// Errors go to stderr with exit code 1, which Claude Code shows the person
/// and otherwise ignores (a non-blocking hook error).
pub fn run_hook(event: HookEvent, runtime_dir: PathBuf) -> i32 {
    run_agent_hook(Agent::ClaudeCode, event, runtime_dir)
}

/// [`run_hook`] for `agent`'s hooks.
pub fn run_agent_hook(agent: Agent, event: HookEvent, runtime_dir: PathBuf) -> i32 {
    if let Some(refused) = super::hook_origin::refusal(agent, event.name()) {
        eprintln!("{refused}");
        return 1;
    }
    let result = (|| {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| HookError::Input(format!("cannot read stdin: {e}")))?;
        let input = HookInput::parse(&text)?;
        let env = HookEnv::for_agent(agent, runtime_dir.clone())?;
        handle(event, &input, &env, &ClientDeliveries { runtime_dir })
    })();
    match result {
        Ok(out) => {
            if let Some(v) = out.stdout {
                let mut stdout = std::io::stdout().lock();
                let _ = writeln!(stdout, "{v}");
                let _ = stdout.flush();
            }
            if let Some(e) = out.stderr {
                eprintln!("{e}");
            }
            out.exit_code
        }
        Err(e) => {
            eprintln!("tickloop loop {} hook {}: {e}", agent.name(), event.name());
            1
        }
    }
}

/// A Loop subscription from outside a hook (TickManage `subscribe` in the
/// MCP bridge Claude Code or Codex started, which tells it the session):
/// the same [`Input::Subscribe`] as `/tick subscribe`, into a session whose
/// state the host's own hook calls made (a made-up session id reaches
/// nothing). Returns the core's reply (`ok`, text).
pub fn subscribe_session(
    session_id: &str,
    instances: Vec<String>,
    env: &HookEnv,
) -> Result<(bool, String), HookError> {
    super::ids::check_session_id(session_id)
        .map_err(|why| HookError::Input(format!("the session: {why}")))?;
    let mut locked = lock_state(env, session_id)?;
    if locked.fresh {
        return Err(HookError::NoSession {
            agent: env.agent,
            session: session_id.to_string(),
        });
    }
    let mut reply = (false, "no reply".to_string());
    for effect in locked.state.core.handle(Input::Subscribe(instances)) {
        if let Effect::Reply { ok, text } = effect {
            reply = (ok, text);
        }
    }
    locked.save()?;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoTicks;
    impl Deliveries for NoTicks {
        fn fetch(&self, _: &[String]) -> Vec<Fetched> {
            Vec::new()
        }
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tickloop-cc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn input(event: &str, prompt: Option<&str>, prompt_id: &str, transcript: &Path) -> HookInput {
        HookInput::parse(
            &json!({
                "session_id": "s-1",
                "transcript_path": transcript,
                "hook_event_name": event,
                "prompt": prompt,
                "prompt_id": prompt_id,
            })
            .to_string(),
        )
        .unwrap()
    }

    #[test]
    fn control_prompts_are_tick_and_a_word_boundary() {
        assert!(is_control("/tick"));
        assert!(is_control("  /tick 3 --policy x"));
        assert!(!is_control("/tickle"));
        assert!(!is_control("tick"));
    }

    #[test]
    fn message_text_is_policy_text_then_data_lines() {
        let m = json!({"content": [{"type": "text", "text": "tick"}, {"type": "data", "data": {"instance": "hosted:c"}}]});
        assert_eq!(message_text(&m), "tick\n\n{\"instance\":\"hosted:c\"}");
    }

    /// The hooks' whole cycle without Claude Code: a person's turn, `/tick 2`
    /// consumed, the wake hook's step, its carrier, the Stop hook's step, and
    /// the run complete; each call a fresh load of the state from disk.
    #[test]
    fn a_bounded_run_through_the_hooks() {
        let d = scratch("cycle");
        let env = HookEnv {
            agent: Agent::ClaudeCode,
            state_dir: d.join("state"),
            audit_dir: Some(d.join("audit")),
            config: Some(d.join("loop.json")),
            delay_ms: 0,
            runtime_dir: d.join("rt"),
        };
        std::fs::write(d.join("loop.json"), "{}").unwrap();
        let t = d.join("t.jsonl");
        let call = |event, prompt: Option<&str>, id: &str| {
            handle(event, &input("x", prompt, id, &t), &env, &NoTicks).unwrap()
        };
        assert_eq!(
            call(HookEvent::UserPromptSubmit, Some("hello"), "p1"),
            HookOutput::nothing()
        );
        assert_eq!(
            call(HookEvent::Wake, Some("hello"), "p1"),
            HookOutput::nothing()
        );
        assert_eq!(call(HookEvent::Stop, None, "p1"), HookOutput::nothing());
        let armed = call(HookEvent::UserPromptSubmit, Some("/tick 2"), "p2");
        let reason = armed.stdout.unwrap()["reason"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(reason.contains("armed run"), "{reason}");
        let woke = call(HookEvent::Wake, Some("/tick 2"), "p2");
        assert_eq!((woke.exit_code, woke.stderr.as_deref()), (2, Some("tick")));
        let carrier = "<task-notification>\n<summary>Stop hook feedback</summary>";
        assert_eq!(
            call(HookEvent::UserPromptSubmit, Some(carrier), "p3"),
            HookOutput::nothing()
        );
        let second = call(HookEvent::Stop, None, "p3");
        assert_eq!(second, HookOutput::block(Agent::ClaudeCode, "tick".into()));
        assert_eq!(call(HookEvent::Stop, None, "p3"), HookOutput::nothing());
        let status = call(HookEvent::UserPromptSubmit, Some("/tick status"), "p4");
        assert!(status.stdout.unwrap()["reason"]
            .as_str()
            .unwrap()
            .contains("inactive"));
        let ledger =
            std::fs::read_to_string(d.join("audit").join(ledger_file_name("s-1"))).unwrap();
        let types: Vec<String> = ledger
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["type"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(
            types,
            [
                "loop_armed",
                "tick_scheduled",
                "tick_enqueued",
                "tick_terminal",
                "tick_scheduled",
                "tick_enqueued",
                "tick_terminal",
                "loop_complete"
            ]
        );
        // A person typing `tick` is a natural message, not a step: the next
        // run starts from the two steps counted by their source.
        assert_eq!(
            call(HookEvent::UserPromptSubmit, Some("tick"), "p5"),
            HookOutput::nothing()
        );
        assert_eq!(call(HookEvent::Stop, None, "p5"), HookOutput::nothing());
        let again = call(HookEvent::UserPromptSubmit, Some("/tick 1"), "p6");
        assert!(again.stdout.unwrap()["reason"]
            .as_str()
            .unwrap()
            .contains("armed run"));
        let ledger =
            std::fs::read_to_string(d.join("audit").join(ledger_file_name("s-1"))).unwrap();
        let armed: Vec<Value> = ledger
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|r| r["type"] == "loop_armed")
            .collect();
        assert_eq!(armed.len(), 2);
        assert_eq!(armed[1]["startCount"], 2, "{}", armed[1]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
