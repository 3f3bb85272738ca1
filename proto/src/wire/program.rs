//! What an instance runs and how: a client's [`OpenRequest`] and the
//! [`ProgramSpec`] it shares with the launcher's `LaunchSpec`.

#[cfg(doc)]
use super::LaunchSpec;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

use super::{ApprovalPolicy, Owner};

/// `tickloop open`: what to run and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OpenRequest {
    /// NAME of the instance; tickhost picks one from the program name when absent.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(flatten)]
    pub program: ProgramSpec,
}

/// The program an instance runs and how: what a client asks for in
/// [`OpenRequest`], and what tickhost hands the launcher in [`LaunchSpec`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProgramSpec {
    /// `false`: a Tick (`hosted:`); `true`: a plain terminal program (`shell:`).
    #[serde(default)]
    pub shell: bool,
    /// An `artifact:` Tick: this file (absolute) is run by its shebang
    /// (`python3` for a `.py` without one), watched, and run again on each
    /// save; `argv` is then empty (the launcher works it out at each start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact: Option<PathBuf>,
    /// With `artifact`: more files whose saves start a new version, as glob
    /// patterns relative to the artifact's directory (`*.json`, `lib/**/*.py`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub watch: Vec<String>,
    /// Program and arguments, as the user typed them.
    pub argv: Vec<String>,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// The caller's environment, which the Tick inherits (spec-gaps 4.1).
    pub env: Vec<(String, String)>,
    /// Lines of history its screen keeps (`None`: 2,000, like tmux).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<usize>,
    /// Who approves its mutating calls (`None`: `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve: Option<ApprovalPolicy>,
    /// The package it was opened from, by name (absent: a command, a
    /// shell program or an artifact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Who opened it: set by tickhost from the opening client (a client's
    /// own value is replaced), never asked of the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    /// Whether an agent's typing into it and closing it wait for a person
    /// (`None`: tickhost's default for its owner, from the config file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_input: Option<ApprovalPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_close: Option<ApprovalPolicy>,
    /// `shell:` running bash, zsh or fish: `false` starts it without
    /// Tickloop's shell integration (`open --no-integration`, `[shell]
    /// integration = false`); absent: with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell_integration: Option<bool>,
    /// Record the session into this new file (absolute, not existing) from
    /// its start, as asciicast v2 (`open --record FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<PathBuf>,
}
