//! `tickloop loop codex|gemini|opencode install|uninstall` for any of the
//! three: where each one's install lives, and which module does it.

use std::path::{Path, PathBuf};

use crate::install_kit::{InstallError, Report};
use crate::{codex, gemini, opencode, Agent};

/// The directory that holds `agent`'s install manifest, for a project (or
/// the user, `None`); `None` when there is no home directory.
pub fn manifest(agent: Agent, project: Option<&Path>) -> Option<PathBuf> {
    Some(match (agent, project) {
        (Agent::Codex, Some(p)) => codex::Target::project(p).manifest(),
        (Agent::Codex, None) => codex::Target::user()?.manifest(),
        (Agent::Gemini, Some(p)) => gemini::Target::project(p).manifest(),
        (Agent::Gemini, None) => gemini::Target::user()?.manifest(),
        (Agent::Opencode, Some(p)) => opencode::Target::project(p).manifest(),
        (Agent::Opencode, None) => opencode::Target::user()?.manifest(),
        (Agent::ClaudeCode, Some(p)) => crate::claude_code::install::Target::project(p).manifest(),
        (Agent::ClaudeCode, None) => crate::claude_code::install::Target::user()?.manifest(),
    })
}

fn no_home(agent: Agent) -> InstallError {
    InstallError::Refused {
        path: PathBuf::from("~"),
        message: format!(
            "no home directory for {}'s user settings (set HOME)",
            agent.title()
        ),
    }
}

/// Installs `agent`'s hooks or plugin and `tickloop mcp` (of `exe`).
pub fn install(agent: Agent, project: Option<&Path>, exe: &Path) -> Result<Report, InstallError> {
    match (agent, project) {
        (Agent::Codex, Some(p)) => codex::install(&codex::Target::project(p), exe),
        (Agent::Codex, None) => codex::install(&codex::Target::user().ok_or(no_home(agent))?, exe),
        (Agent::Gemini, Some(p)) => gemini::install(&gemini::Target::project(p), exe),
        (Agent::Gemini, None) => {
            gemini::install(&gemini::Target::user().ok_or(no_home(agent))?, exe)
        }
        (Agent::Opencode, Some(p)) => opencode::install(&opencode::Target::project(p), exe),
        (Agent::Opencode, None) => {
            opencode::install(&opencode::Target::user().ok_or(no_home(agent))?, exe)
        }
        (Agent::ClaudeCode, _) => Err(InstallError::Refused {
            path: PathBuf::from("."),
            message: "Claude Code has its own command: `tickloop loop claude-code install`".into(),
        }),
    }
}

/// Takes out what [`install`] wrote.
pub fn uninstall(agent: Agent, project: Option<&Path>) -> Result<Report, InstallError> {
    match (agent, project) {
        (Agent::Codex, Some(p)) => codex::uninstall(&codex::Target::project(p)),
        (Agent::Codex, None) => codex::uninstall(&codex::Target::user().ok_or(no_home(agent))?),
        (Agent::Gemini, Some(p)) => gemini::uninstall(&gemini::Target::project(p)),
        (Agent::Gemini, None) => gemini::uninstall(&gemini::Target::user().ok_or(no_home(agent))?),
        (Agent::Opencode, Some(p)) => opencode::uninstall(&opencode::Target::project(p)),
        (Agent::Opencode, None) => {
            opencode::uninstall(&opencode::Target::user().ok_or(no_home(agent))?)
        }
        (Agent::ClaudeCode, _) => Err(InstallError::Refused {
            path: PathBuf::from("."),
            message: "Claude Code has its own command: `tickloop loop claude-code uninstall`"
                .into(),
        }),
    }
}
