//! tickhost ↔ launcher on each instance's socket: what tickhost asks
//! ([`LauncherRequest`]), what a launcher sends back ([`LauncherMessage`]:
//! replies, its [`LauncherStatus`], its [`Catalog`]), how a launcher starts
//! ([`LaunchSpec`] in, [`LaunchReport`] out) and the record a restarted
//! tickhost finds it by ([`LauncherRecord`]).

#[cfg(doc)]
use super::OpenRequest;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

use super::{
    ApprovalPolicy, CallRequest, ClientReply, ConsentChange, ConsentDecision, EndInfo, Owner,
    ProgramSpec, RunRequest, ShellIntegration, WaitRequest,
};

/// What tickhost asks of a launcher.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum LauncherRequest {
    /// The launcher's [`LauncherStatus`] (answered also right after hello).
    Status,
    /// A fresh `tick/describe`, validated.
    Describe,
    /// A `tick/read`, read floor applied.
    Read,
    Call(CallRequest),
    /// The current screen as text ([`ScreenReply`]), one line per row,
    /// trailing blanks trimmed, with up to `history` lines of history.
    /// With `image`, the kept image of that index instead
    /// ([`super::ImageData`]).
    Screen {
        #[serde(default)]
        history: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image: Option<u32>,
    },
    /// Bytes typed into the Tick's terminal.
    Input {
        text: String,
    },
    /// Keys by name, encoded for the program's current modes (see
    /// [`crate::keys`]); all are checked before any is typed.
    Keys {
        /// Typed as it is before the keys.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        keys: Vec<String>,
    },
    /// Answered when what it waits for happens, or at its timeout.
    Wait(WaitRequest),
    /// A command typed at the shell's prompt, answered at its end or at
    /// the timeout.
    Run(RunRequest),
    /// End the session and the Tick's process group; the launcher then exits.
    Close,
    /// `artifact:` only: end the running version (as `Close` would, but the
    /// launcher stays) and start the file's newest one on the same terminal.
    /// Answered with the new status once it is up or has failed.
    Reload,
    /// The activity record, entries numbered above `after`.
    Activity {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<u64>,
    },
    /// A client (the envelope's) started or stopped following this
    /// instance's updates (`watch`, the Loop): recorded in the activity.
    Subscription {
        started: bool,
    },
    /// Change who approves what agents do (kept in the status and record).
    SetApproval(ConsentChange),
    /// tickhost's consent gate decided on (or held) an agent's action on
    /// this instance: kept in the activity record.
    Consent(ConsentDecision),
}

/// A launcher's answer, by request id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LauncherReply {
    pub id: u64,
    pub reply: ClientReply,
}

/// Everything a tickhost needs to know about a launcher's instance; sent on
/// connect and whenever it changes (coalesced: only the newest is sent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LauncherStatus {
    pub instance: String,
    pub launcher_pid: u32,
    /// The Tick's (or shell program's) pid, which is also its process group.
    pub pid: u32,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    pub started_at: String,
    /// The revision of the catalog the Tick described (`None` for `shell:`,
    /// and for an `artifact:` version not yet described). The catalog
    /// itself travels apart, as [`LauncherMessage::Catalog`], only when it
    /// changes: a status goes out on every update, and a Tick's descriptor
    /// can be large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Latest state (from updates or reads); for a `shell:` instance with
    /// shell integration, its [`super::ShellState`] (each command's start
    /// and end is one update); `None` for other `shell:` instances.
    pub state: Option<StateSnapshot>,
    /// `tick/update`s received since the session started (an `artifact:`'s
    /// count goes on across its versions).
    pub updates_total: u64,
    pub calls_in_flight: u32,
    pub views: u32,
    pub ended: Option<EndInfo>,
    /// The title the program gave its terminal (OSC 0/2), when it did: a
    /// `shell:` instance is listed with it (vim's, not `bash`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal_title: Option<String>,
    /// When the program last wrote to its terminal (RFC 3339), published at
    /// most about once a second: the Monitor's activity column. Absent from
    /// launchers older than this field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_output_at: Option<String>,
    /// The program as the user typed it (`bash`, not `/usr/bin/bash`), so a
    /// tickhost started later titles a `shell:` instance as the first did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Who approves its mutating calls (absent: `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve: Option<ApprovalPolicy>,
    /// Whose it is, and who approves an agent's typing into it and closing
    /// it (absent: as its [`ProgramSpec`] said, else `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_input: Option<ApprovalPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_close: Option<ApprovalPolicy>,
    /// `shell:` only: the shell's integration, when it has one (injected,
    /// or marks its prompt emits itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<ShellIntegration>,
    /// `shell:` only, while it has no shell integration: why, in words
    /// that follow "no integration: " (`python3 is not bash, zsh or fish`,
    /// `-c runs a command: no interactive shell`, `turned off (...)`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_integration: Option<String>,
    /// `artifact:` only: which version of the file runs, from 1, one more
    /// at each reload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    /// `artifact:` only: why this generation did not come up or stopped
    /// (its screen stays); the launcher waits for the next save.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// `artifact:` only: how often a version that had started and then
    /// stopped was started again (at most once a second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u64>,
    /// The program's terminal did not echo what is typed when this status
    /// was made: a prompt for a password (ECHO off in canonical mode, see
    /// [`super::EchoOffTyping`]). A `status` request is answered with it
    /// read at that moment; tickhost asks so before it holds an agent's
    /// typing, to show and keep that typing as how much, never what.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub echo_off: bool,
    /// Recordings running now (`tickloop record`, `open --record`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub recordings: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateSnapshot {
    pub seq: u64,
    pub data: Value,
    /// The Tick's `at`, or the launcher's receipt time.
    pub at: String,
}

/// A line from a launcher to tickhost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LauncherMessage {
    Reply(LauncherReply),
    Status(Box<LauncherStatus>),
    /// The Tick's catalog: sent right after hello and whenever it changes,
    /// always before the first status that names its revision.
    Catalog(Box<Catalog>),
}

/// A Tick's validated descriptor, as the Tick sent it, with its revision;
/// `descriptor: None` when there is none (a `shell:` instance, an
/// `artifact:` version not yet described).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Catalog {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub descriptor: Option<Value>,
}

/// The one line a launcher writes on its readiness pipe when its instance is
/// up (or failed to come up), then closes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LaunchReport {
    Ready {
        socket: PathBuf,
        status: Box<LauncherStatus>,
        /// The catalog the status's `revision` names.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        catalog: Option<Box<Catalog>>,
    },
    Failed {
        reason: String,
        /// The first 256 characters of the Tick's screen.
        screen: String,
    },
}

/// What tickhost hands a new launcher (as JSON on its stdin).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LaunchSpec {
    pub instance: String,
    /// The program, as the client's [`OpenRequest`] asked for it.
    #[serde(flatten)]
    pub program: ProgramSpec,
    /// Where to listen, and where to write `<slug>.json`.
    pub socket: PathBuf,
    /// The protocol session's time limit for initialization, in ms (`None`:
    /// the protocol's 10 s). tickhost passes its own (see
    /// [`crate::core::Limits`]), so tests of timeouts take milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_timeout_ms: Option<u64>,
    /// The session's time limit for a call, in ms (`None`: the protocol's
    /// 60 s); for tests of a Tick that does not answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
}

/// The answer to `screen`: the visible screen as text, the cursor, and the
/// history asked for. An ended instance answers with its last screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenReply {
    pub rows: usize,
    pub cols: usize,
    pub cursor: ScreenCursor,
    /// One string per visible row, trailing blanks trimmed, trailing empty
    /// rows dropped.
    pub lines: Vec<String>,
    /// Lines that scrolled off the top, oldest first (as many as asked for).
    #[serde(default)]
    pub history: Vec<String>,
    /// Lines of history held in all, and the most that will be held.
    #[serde(default)]
    pub history_len: usize,
    #[serde(default)]
    pub history_limit: usize,
    /// Bytes the screen and its history hold in the launcher (cells of the
    /// screen, the alternate screen and the history; an estimate).
    #[serde(default)]
    pub memory_bytes: usize,
    /// The images the program drew that are still on the screen or in the
    /// history held, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<super::ImagePlacement>,
    /// Bytes the kept images hold (what `[screen] image_memory_mb` bounds;
    /// images transmitted and not shown count too).
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub image_bytes: u64,
    /// Set when this is the last screen of an ended instance.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
}

/// Zero-based cursor position in the visible screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ScreenCursor {
    pub row: usize,
    pub col: usize,
}

/// `RUNTIME/l/<file>.json`, written by a launcher once its instance is up and
/// rewritten when it ends; what a restarted tickhost scans to find launchers
/// again (and to show instances that ended while it was away).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LauncherRecord {
    pub instance: String,
    pub socket: PathBuf,
    pub launcher_pid: u32,
    /// The last status the launcher published; `ended` is set once it ended.
    pub status: LauncherStatus,
    /// The catalog its `revision` names, so a tickhost started later still
    /// lists an ended instance's kind and title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub catalog: Option<Catalog>,
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}
