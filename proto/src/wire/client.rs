//! client ↔ tickhost on `RUNTIME/tickhost.sock`: what a client asks
//! ([`ClientRequest`]), what tickhost answers ([`ServerMessage`],
//! [`ClientReply`], [`ClientError`]), and the typed answers (`list`'s
//! [`ListEntry`], `open`'s [`OpenReply`], `watch`'s [`WatchEvent`]s).

#[cfg(doc)]
use super::{ActivityRecord, ApprovalLogEntry, RunReply, TimelineReply, WaitReply};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

use super::{
    ApprovalPolicy, CallOutcome, CallRequest, ClientKind, ConsentChange, EndInfo, HeldCall,
    OpenRequest, Owner, RunRequest, TimelineCursor, WaitRequest,
};

/// The longest request line tickhost reads from a client, in bytes (the
/// line's `\n` aside): 8 MiB, so an `open` carries a whole environment. A
/// client refuses a longer request itself, before sending anything.
pub const MAX_CLIENT_LINE: usize = 8 * 1024 * 1024;

/// What a client asks of tickhost. Instance ids are full ids (`hosted:NAME`,
/// `shell:NAME`); a bare NAME is accepted when it names exactly one instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ClientRequest {
    Open(OpenRequest),
    List,
    Describe {
        instance: String,
    },
    Read {
        instance: String,
    },
    /// A call of one of the instance's tools.
    Call {
        instance: String,
        #[serde(flatten)]
        call: CallRequest,
    },
    /// Stream deliveries (one [`Delivery`] event each) every `interval_ms`.
    Watch {
        instances: Vec<String>,
        interval_ms: u64,
    },
    Screen {
        instance: String,
        /// Lines of history to include before the visible screen.
        #[serde(default)]
        history: usize,
        /// The kept image of this index (`screen --image N`): answered
        /// with its [`super::ImageData`] instead of the screen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image: Option<u32>,
    },
    Input {
        instance: String,
        text: String,
    },
    /// Keys by name (tmux's: `Enter`, `C-c`, `Up`), each encoded for the
    /// program's current modes, after `text` typed as it is when given; an
    /// unknown name types nothing.
    Keys {
        instance: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        keys: Vec<String>,
    },
    /// Wait for output, quiet, the prompt or the end ([`WaitReply`]).
    Wait {
        instance: String,
        #[serde(flatten)]
        wait: WaitRequest,
    },
    /// Type a command at a shell's prompt and wait for its end
    /// ([`RunReply`]).
    Run {
        instance: String,
        #[serde(flatten)]
        run: RunRequest,
    },
    Close {
        instance: String,
    },
    /// Start the newest version of an `artifact:` instance now (as a save
    /// would); answered when that version is up or has failed.
    Reload {
        instance: String,
    },
    /// May this client record the instance (`tickloop record`, asked
    /// before it connects to the launcher as a recorder)? Held for an
    /// agent on the person's instance as typing is; answered once it may.
    Record {
        instance: String,
    },
    /// Calls waiting for approval (of every instance), oldest first.
    Approvals,
    /// Approve or refuse a waiting call; `by` names the surface that decided.
    Decide {
        instance: String,
        call: String,
        approve: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        by: String,
        /// With `by: "mcp-host"`: the agent host that asked the person (its
        /// MCP `clientInfo`, `NAME VERSION`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        host: Option<String>,
    },
    /// Change who approves what agents do to an instance: its mutating
    /// calls (`policy`), their typing (`input`), their closing it
    /// (`close`); each absent one stays as it is.
    SetApproval {
        instance: String,
        #[serde(flatten)]
        change: ConsentChange,
    },
    /// Withdraw request `request` of this same connection while it waits
    /// for approval: the held action is decided `withdrawn` (never run),
    /// leaves every list and prompt, and is answered as refused. Read by
    /// tickhost only while a request of the connection is held; answered
    /// `bad_request` when that request is not (or no longer) waiting.
    Withdraw {
        /// The id of the held request's envelope.
        request: u64,
        /// Why, for the approval log and the activity record (`cancelled
        /// by the MCP client`); `the agent stopped waiting` comes first.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// The instance's approval log ([`ApprovalLogEntry`]s, oldest first).
    ApprovalLog {
        instance: String,
    },
    /// The instance's activity record ([`ActivityRecord`]): entries numbered
    /// above `after` (all kept ones when absent), oldest first.
    Activity {
        instance: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<u64>,
    },
    /// What agents did on every instance ([`TimelineReply`]): running,
    /// ended, and forgotten ones whose record the data directory keeps.
    Timeline {
        /// Only entries at or after this time (RFC 3339).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since: Option<String>,
        /// Only this agent's (a client kind that is an agent's).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<ClientKind>,
        /// Only what came after a previous answer's `next`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<TimelineCursor>,
        /// The newest this many entries at most (the answer counts the
        /// older ones it left out).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
    },
    Shutdown,
}

impl ClientRequest {
    /// Its `op` on the wire (`list`, `input`, `set_approval`, ...): what
    /// tickhost's request table keys each request's consent class by.
    pub fn op(&self) -> &'static str {
        match self {
            ClientRequest::Open(_) => "open",
            ClientRequest::List => "list",
            ClientRequest::Describe { .. } => "describe",
            ClientRequest::Read { .. } => "read",
            ClientRequest::Call { .. } => "call",
            ClientRequest::Watch { .. } => "watch",
            ClientRequest::Screen { .. } => "screen",
            ClientRequest::Input { .. } => "input",
            ClientRequest::Keys { .. } => "keys",
            ClientRequest::Wait { .. } => "wait",
            ClientRequest::Run { .. } => "run",
            ClientRequest::Close { .. } => "close",
            ClientRequest::Reload { .. } => "reload",
            ClientRequest::Record { .. } => "record",
            ClientRequest::Approvals => "approvals",
            ClientRequest::Decide { .. } => "decide",
            ClientRequest::SetApproval { .. } => "set_approval",
            ClientRequest::Withdraw { .. } => "withdraw",
            ClientRequest::ApprovalLog { .. } => "approval_log",
            ClientRequest::Activity { .. } => "activity",
            ClientRequest::Timeline { .. } => "timeline",
            ClientRequest::Shutdown => "shutdown",
        }
    }

    /// The instance it names, when it names one (`open` names a NAME to
    /// make, not an instance).
    pub fn instance(&self) -> Option<&str> {
        match self {
            ClientRequest::Describe { instance }
            | ClientRequest::Read { instance }
            | ClientRequest::Call { instance, .. }
            | ClientRequest::Screen { instance, .. }
            | ClientRequest::Input { instance, .. }
            | ClientRequest::Keys { instance, .. }
            | ClientRequest::Wait { instance, .. }
            | ClientRequest::Run { instance, .. }
            | ClientRequest::Close { instance }
            | ClientRequest::Reload { instance }
            | ClientRequest::Record { instance }
            | ClientRequest::Decide { instance, .. }
            | ClientRequest::SetApproval { instance, .. }
            | ClientRequest::ApprovalLog { instance }
            | ClientRequest::Activity { instance, .. } => Some(instance),
            ClientRequest::Open(_)
            | ClientRequest::List
            | ClientRequest::Watch { .. }
            | ClientRequest::Approvals
            | ClientRequest::Withdraw { .. }
            | ClientRequest::Timeline { .. }
            | ClientRequest::Shutdown => None,
        }
    }
}

/// One line from tickhost to a client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerMessage {
    /// The answer to request `id`.
    Reply { id: u64, reply: ClientReply },
    /// A streamed event of request `id` (watch).
    Event { id: u64, event: WatchEvent },
    /// Call `id` waits for a person's approval (sent when it starts waiting
    /// and every 30 s after, so the caller knows it is not lost).
    Progress { id: u64, held: HeldCall },
}

/// The answer to a [`ClientRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientReply {
    /// Success; the value is what the CLI prints.
    Ok(Value),
    /// A `call`'s outcome, which carries its own exit code.
    Call(CallOutcome),
    /// Refused or failed; nothing was changed.
    Error(ClientError),
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl ListEntry {
    /// The entries of a `list` answer; `None` when it is not one.
    pub fn all(list: &Value) -> Option<Vec<ListEntry>> {
        serde_json::from_value(list.clone()).ok()
    }
}

impl ClientReply {
    /// Success carrying one of the typed answers ([`ListEntry`]s,
    /// [`OpenReply`], ...) as the JSON the CLI prints.
    pub fn typed<T: Serialize>(answer: &T) -> ClientReply {
        match serde_json::to_value(answer) {
            Ok(value) => ClientReply::Ok(value),
            Err(e) => ClientReply::Error(ClientError {
                kind: ErrorKind::Internal,
                message: format!("cannot encode the answer: {e}"),
                data: None,
            }),
        }
    }
}

/// A failure a client can act on. `message` says what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ClientError {
    pub kind: ErrorKind,
    pub message: String,
    /// Extra data: for a failed open, `{"screen": "first 256 chars"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No instance by that id.
    NoSuchInstance,
    /// The instance has ended.
    Ended,
    /// The instance is a `shell:` program: no protocol.
    NotATick,
    /// The request itself is wrong (bad arguments, bad JSON).
    BadRequest,
    /// Opening the Tick failed (initialization, spawn).
    OpenFailed,
    /// The Tick answered a describe/read with something invalid, or timed out.
    TickFailed,
    /// The instance's launcher did not answer in time (stopped or wedged);
    /// other instances are not affected.
    Unresponsive,
    /// The person (or their policy) did not allow what an agent asked:
    /// nothing was done. `data.code` is -32010, `data.data.by` who refused.
    Refused,
    /// An `approve` or `refuse` of an action that its caller withdrew (it
    /// stopped waiting, or withdrew it explicitly): nothing was done, and
    /// nothing will be. `data` is the decision as the log keeps it.
    Withdrawn,
    /// A file Tickloop keeps could not be written (a full disk): what it
    /// would have recorded was not done; the message names the file.
    NotSaved,
    /// Anything else inside Tickloop.
    Internal,
}

/// One line of `tickloop watch`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WatchEvent {
    Delivery(Delivery),
    Ended(EndedNotice),
}

/// The latest state of one instance since its previous delivery.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Delivery {
    pub instance: String,
    pub seq: u64,
    pub at: String,
    pub data: Value,
    /// How many `tick/update`s arrived since the previous delivery.
    pub updates: u64,
    /// `updates - 1` (0 when `updates` is 0): how many were merged away.
    pub merged: u64,
    /// Whether `data` was cut to the delivery budget.
    pub trimmed: bool,
    pub recover_with: Option<String>,
    /// An `artifact:` instance started a new version (this generation)
    /// since this watcher's previous delivery: `seq` began again, and this
    /// is the new session's first state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reloaded: Option<u64>,
}

/// A watched instance ended; no more deliveries come for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndedNotice {
    pub instance: String,
    pub ended: EndInfo,
}

/// Where an instance is in its life, as `list` and `open` say it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InstanceState {
    #[default]
    Running,
    Ended,
    /// `artifact:` only: a new version not yet initialized.
    Starting,
    /// `artifact:` only: a version that did not come up or stopped; its
    /// launcher waits for the next save.
    Failed,
}

/// One instance in the answer to `list` (an array of these; the CLI prints
/// it as it is, `docs/cli.md` documents it). A field an older tickhost did
/// not send reads as its default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ListEntry {
    pub id: String,
    /// The descriptor's `kind`; null for `shell:`.
    pub kind: Option<String>,
    /// The descriptor's `title`; a `shell:` program's terminal title or
    /// the program as typed.
    pub title: Option<String>,
    pub state: InstanceState,
    pub ended: Option<EndInfo>,
    /// The newest state's `seq`; null for `shell:`.
    pub seq: Option<u64>,
    pub pid: u32,
    /// Views attached now (0 once ended).
    pub views: u32,
    pub calls_in_flight: u32,
    pub approve: ApprovalPolicy,
    /// Whose it is, and whether an agent's typing into it and closing it
    /// wait for a person.
    pub owner: Owner,
    pub agent_input: ApprovalPolicy,
    pub agent_close: ApprovalPolicy,
    /// Recordings of it running now (`tickloop record`, `open --record`).
    #[serde(skip_serializing_if = "is_zero")]
    pub recordings: u32,
    /// `tick/update`s received.
    pub updates: u64,
    pub last_update_at: Option<String>,
    pub last_output_at: Option<String>,
    /// The catalog's revision; null for `shell:`.
    pub revision: Option<String>,
    pub launcher_pid: u32,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub started_at: String,
    /// `artifact:` only: which version of the file runs, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// `artifact:` only: why the current version failed, while it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// `artifact:` only: how often a version that had started and stopped
    /// was started again.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// Calls waiting for a person's approval, and their tools.
    pub approvals_waiting: usize,
    pub approval_tools: Vec<String>,
    /// `shell:` only: its shell integration, when it has one (then `read`
    /// gives its commands, and `run` and `watch` work with it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<super::ShellIntegration>,
    /// `shell:` only, while it has no shell integration: why, in words
    /// that follow "no integration: ".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_integration: Option<String>,
    /// `shell:` only, with shell integration: its state in short (where it
    /// is, what it runs or last ran, the state's `seq`); `read` has the
    /// whole of it. `seq` above stays null for a shell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_state: Option<super::ShellSummary>,
}

/// The answer to `open`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenReply {
    pub id: String,
    pub kind: Option<String>,
    pub title: Option<String>,
    pub revision: Option<String>,
    pub pid: u32,
    pub launcher_pid: u32,
    pub seq: Option<u64>,
    pub state: InstanceState,
    /// `artifact:` only: as in [`ListEntry`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// `artifact:` only: the directory it runs in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// A `shell:` program that ended during its start: how it ended, and
    /// its last screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<EndInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<Vec<String>>,
    /// `shell:` only, when it started without shell integration: why, in
    /// words that follow "no integration: ".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_integration: Option<String>,
}
