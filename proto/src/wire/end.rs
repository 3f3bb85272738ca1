//! How an instance ended ([`EndInfo`], its class [`EndClass`]), the same on
//! every hop: a launcher's status, `list`, `watch`, a wait that saw the end,
//! the Monitor. A module of its own so that every conversation's types can
//! name it without naming each other.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an instance ended, for `list`, `watch` and the Monitor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EndInfo {
    /// A sentence a person can read.
    pub reason: String,
    /// Machine-readable class.
    pub kind: EndClass,
    /// For violations: the first bytes of the offending line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offending: Option<String>,
    /// RFC 3339 time of the end.
    pub at: String,
    /// What of the instance could not be kept at its end (its last screen,
    /// its activity, its record), each a sentence naming the file and why:
    /// `no space left on the device of PATH: the last screen was not saved`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_saved: Vec<String>,
}

/// How an instance ended, as a class a program can branch on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EndClass {
    /// The program exited (or was killed by a signal).
    Exited,
    /// The Tick broke the protocol (spec 3.6).
    Violation,
    /// Closed on request (`tickloop close`, a signal to its launcher).
    Closed,
    /// Initialization failed (a timeout, an error answer, a bad descriptor).
    InitFailed,
    /// Its launcher went away without reporting an end.
    LauncherLost,
}

impl EndClass {
    pub fn as_str(self) -> &'static str {
        match self {
            EndClass::Exited => "exited",
            EndClass::Violation => "violation",
            EndClass::Closed => "closed",
            EndClass::InitFailed => "init_failed",
            EndClass::LauncherLost => "launcher_lost",
        }
    }
}

impl From<&crate::core::EndKind> for EndClass {
    fn from(kind: &crate::core::EndKind) -> Self {
        match kind {
            crate::core::EndKind::InitFailed => EndClass::InitFailed,
            crate::core::EndKind::Violation(_) => EndClass::Violation,
            crate::core::EndKind::Exited => EndClass::Exited,
            crate::core::EndKind::Closed => EndClass::Closed,
        }
    }
}
