//! What agents and views did with an instance: its [`ActivityRecord`],
//! kept by its launcher.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use std::collections::BTreeMap;

use super::{ClientKind, ConsentDecision, EchoOffTyping, Foreground};

/// What agents and views did with one instance, newest last: the last
/// [`ActivityRecord::REQUESTS`] requests, the last [`ActivityRecord::UPDATES`]
/// updates and the last [`ActivityRecord::OTHERS`] view and subscription
/// events, kept by its launcher (so it lives as long as the instance, across
/// tickhost restarts) and beside its last screen once it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityRecord {
    pub instance: String,
    /// Oldest first; numbers grow by one per entry ever recorded.
    pub entries: Vec<ActivityEntry>,
    /// The number of the newest entry recorded (0: none yet): ask again with
    /// `after` set to it for what comes next.
    pub last: u64,
    /// Clients following the instance's updates now (`watch`, the Loop), as
    /// tickhost counts them.
    #[serde(default)]
    pub subscribers: u32,
    /// The Tick's tool catalog now (empty for `shell:`), for the overlay.
    #[serde(default)]
    pub tools: Vec<ToolSummary>,
    /// The pid of the launcher that kept it (its status's `launcher_pid`):
    /// with the id, what tells this record from that of an instance of the
    /// same id opened before or after (absent in records of older builds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher_pid: Option<u32>,
}

/// A tool of the catalog, as the activity overlay lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSummary {
    pub name: String,
    pub mutates: bool,
    pub description: String,
}

impl ActivityRecord {
    /// Requests kept at most.
    pub const REQUESTS: usize = 200;
    /// Updates kept at most (several in quick succession share one entry).
    pub const UPDATES: usize = 50;
    /// View and subscription events kept at most.
    pub const OTHERS: usize = 50;
}

/// One thing that happened to an instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityEntry {
    /// Its number in the instance's record (1, 2, ...).
    pub n: u64,
    /// RFC 3339 time, in milliseconds.
    pub at: String,
    #[serde(flatten)]
    pub event: ActivityEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActivityEvent {
    /// An agent's request: describe, read, call or typed input.
    Request(RequestActivity),
    /// `tick/update`s: the newest's seq, how many arrived together.
    Update {
        seq: u64,
        /// Updates this entry stands for (1 when alone): the others came
        /// within a moment of it and were merged into it.
        count: u64,
        /// Size of the newest state's data as JSON, in bytes, and the
        /// delivery budget it is cut to for agents.
        bytes: usize,
        budget: usize,
    },
    /// A view attached or detached; `views` attached after it.
    View { attached: bool, views: u32 },
    /// A client started or stopped following the updates.
    Subscription {
        client: Option<ClientKind>,
        started: bool,
    },
    /// An agent's action waited for a person, or was decided: held,
    /// approved, refused, timed out, denied by the policy, ...
    Consent(ConsentDecision),
    /// An `artifact:` instance is starting its file's newest version:
    /// asked by `client` (`tickloop reload`, TickManage `reload`, the
    /// Monitor), or because its file changed.
    Reload {
        /// Who asked (absent when the file changed, or tickhost did not say).
        client: Option<ClientKind>,
        cause: ReloadCause,
    },
    /// A recording of the instance started or stopped: `tickloop record`
    /// by `client`, or `open --record` (from its start).
    Recording {
        client: Option<ClientKind>,
        started: bool,
        /// Recordings running after it.
        recordings: u32,
    },
    /// Images the program drew were dropped to keep the instance's image
    /// memory under its limit (`image_memory_mb`): the oldest `images`,
    /// freeing `bytes`; `too_large` images larger than the limit were not
    /// kept at all.
    ImagesDropped {
        images: u64,
        bytes: u64,
        #[serde(default, skip_serializing_if = "is_zero")]
        too_large: u64,
        limit_mb: u64,
    },
}

/// Why an `artifact:` instance started its newest version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReloadCause {
    /// A client asked (`reload`).
    Asked,
    /// Its file was saved (by anyone: the person's editor, an agent's
    /// write), and the launcher reloads it as designed.
    FileChanged,
}

/// One request, with how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestActivity {
    /// Who asked (absent when tickhost did not say).
    pub client: Option<ClientKind>,
    /// `tick/describe`, `tick/read`, `tick/call` or `input`.
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The arguments (a call's), cut to [`RequestActivity::KEPT_BYTES`] of
    /// JSON (a string ending in `…` when cut); typed input as a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    /// `input` and `keys` typed at a prompt with echo off (a password):
    /// how much was typed, kept in place of `args`, which is then absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_off: Option<EchoOffTyping>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    pub outcome: ActivityOutcome,
    /// The JSON-RPC error code, when it ended in an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// The error's message, or why the outcome is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The result (a call's or a read's), cut like `args`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    pub duration_ms: u64,
    /// Typing and `run` on a terminal (`input`, `keys`, `run`): what it
    /// came to, beyond the request's `outcome` (a `run` whose command
    /// exited 2 is a request that went `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<TerminalOutcome>,
}

/// What an agent's typing or `run` on a terminal came to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TerminalOutcome {
    /// `input` or `keys`: written to the program's terminal.
    Typed,
    /// `run`: the command ended with `status` (absent when the shell did
    /// not say; 128+N when signal N ended it).
    Exited {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<i32>,
    },
    /// `run`: the command outlived the run's timeout and still runs
    /// (it is never stopped), with what held the terminal then.
    StillRunning {
        after_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        foreground: Option<Foreground>,
    },
    /// `run`: nothing was typed.
    NotTyped { why: NotTypedWhy },
}

/// Why a `run` typed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NotTypedWhy {
    /// Text was typed on the prompt already (the person's, perhaps).
    PromptHadText,
    /// A command ran, or the prompt was not drawn.
    NotAtPrompt,
    /// The shell has no integration, or showed no mark of it yet.
    NoIntegration,
    /// No prompt came within the run's timeout.
    NoPrompt,
    /// Another `run` was being typed.
    AnotherRun,
    /// The shell had not answered keys typed just before.
    Unanswered,
}

impl RequestActivity {
    /// JSON bytes of arguments and results kept per request.
    pub const KEPT_BYTES: usize = 2048;
}

/// How a request ended, in the classes of spec-gaps 3.4 for calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActivityOutcome {
    /// A call the Tick carried out (with a result, or an error that may
    /// have had effects: see `error_code`).
    Executed,
    /// A call refused before it ran (by the host or by the Tick).
    NotExecuted,
    /// A call written to the Tick with no valid answer.
    Unknown,
    /// A describe, read or input that succeeded.
    Ok,
    /// A describe, read or input that failed.
    Failed,
}

/// One entry of the timeline across instances (`tickloop activity` with
/// no ID): an entry of instance `instance`'s record, as that record has
/// it (not flattened: a consent decision names its instance too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimelineEntry {
    pub instance: String,
    pub entry: ActivityEntry,
}

/// Where a timeline was read up to: pass it back (`after`) for what came
/// next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TimelineCursor {
    /// When tickhost began answering (RFC 3339): records kept in the data
    /// directory before it were read then, and are not read again.
    pub at: String,
    /// The newest entry number read of each record, by its key
    /// (`ID#LAUNCHER_PID`, or `ID#kept-MILLIS` for a kept record of an
    /// older build).
    pub records: BTreeMap<String, u64>,
}

/// The answer to `timeline`: agents' actions on every instance (running,
/// ended, and forgotten ones whose record the data directory keeps),
/// oldest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimelineReply {
    pub entries: Vec<TimelineEntry>,
    /// Ask again with `after` set to it for what comes next.
    pub next: TimelineCursor,
    /// Records that could not be read, a sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unread: Vec<String>,
    /// Older entries left out for the request's `limit`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub left_out: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ActivityEntry {
    /// Who did it, when an agent did: a request, a consent decision on
    /// its action, a reload, recording or subscription it asked for.
    /// `None` for the person's, a Tick's own updates, views, file changes.
    pub fn agent(&self) -> Option<ClientKind> {
        let client = match &self.event {
            ActivityEvent::Request(r) => r.client,
            ActivityEvent::Consent(d) => d.client,
            ActivityEvent::Reload { client, .. }
            | ActivityEvent::Recording { client, .. }
            | ActivityEvent::Subscription { client, .. } => *client,
            ActivityEvent::Update { .. }
            | ActivityEvent::View { .. }
            | ActivityEvent::ImagesDropped { .. } => None,
        };
        client.filter(|c| c.is_agent())
    }
}

impl ActivityOutcome {
    pub fn label(self) -> &'static str {
        match self {
            ActivityOutcome::Executed => "executed",
            ActivityOutcome::NotExecuted => "not executed",
            ActivityOutcome::Unknown => "unknown",
            ActivityOutcome::Ok => "ok",
            ActivityOutcome::Failed => "failed",
        }
    }
}
