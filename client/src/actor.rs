//! Who acts, read from an environment: the person, or an agent whose
//! host's tool (a shell tool running `tickloop ...`) or host (its MCP
//! servers, its hooks) set one of the markers below. The CLI reads its own
//! environment with it (`src/actor.rs`); the MCP bridge and the Loop's
//! hooks read other processes' (`/proc/PID/environ`, [`crate::process`])
//! to tell who started them.
//!
//! Decided from the environment, in this order:
//!
//! 1. `TICKLOOP_ACTOR=agent|person`, said explicitly (with `agent`, the host
//!    is named by what follows, else `other`);
//! 2. `TICKLOOP_AGENT=HOST`, which `tickloop loop AGENT install` adds to the
//!    host's tool environment (Claude Code's settings `env`, Codex's
//!    `shell_environment_policy.set`, opencode's plugin `shell.env`);
//! 3. the variables the hosts set in their tools' processes themselves:
//!    `CLAUDECODE=1` (Claude Code), `CODEX_THREAD_ID` (Codex CLI),
//!    `GEMINI_CLI=1` (Gemini CLI), `OPENCODE=1` (opencode), and `AI_AGENT`.
//!
//! With none of them, it is the person. This guards a well-meaning agent
//! against acting unasked; a hostile process of the same user can unset a
//! variable.

use tickloop_proto::wire::{AgentHost, ClientKind};

/// The variable that says who acts explicitly: `agent` or `person`.
pub const ACTOR_VAR: &str = "TICKLOOP_ACTOR";
/// The variable `loop AGENT install` adds to the host's tool environment.
pub const AGENT_VAR: &str = "TICKLOOP_AGENT";

/// The hosts' own markers in their tools' processes, and whose they are.
pub const MARKERS: [(&str, AgentHost); 4] = [
    ("CLAUDECODE", AgentHost::ClaudeCode),
    ("CODEX_THREAD_ID", AgentHost::Codex),
    ("GEMINI_CLI", AgentHost::Gemini),
    ("OPENCODE", AgentHost::Opencode),
];

/// The client kind the variables `get` returns say; an error says what is
/// wrong with `TICKLOOP_ACTOR`.
pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<ClientKind, String> {
    let set = |name: &str| get(name).filter(|v| !v.trim().is_empty());
    let named = || set(AGENT_VAR).map(|v| host_named(&v));
    let marked = || {
        MARKERS
            .iter()
            .find(|(var, _)| set(var).is_some_and(|v| v != "0"))
            .map(|(_, host)| *host)
            .or_else(|| set("AI_AGENT").map(|v| host_named(&v)))
    };
    match set(ACTOR_VAR).as_deref().map(str::trim) {
        Some("person") => Ok(ClientKind::Cli),
        Some("agent") => Ok(ClientKind::AgentCli(
            named().or_else(marked).unwrap_or(AgentHost::Other),
        )),
        Some(other) => Err(format!(
            "{ACTOR_VAR}={other:?} is neither `agent` nor `person`; unset it, or set it to one of those"
        )),
        None => Ok(named()
            .or_else(marked)
            .map_or(ClientKind::Cli, ClientKind::AgentCli)),
    }
}

/// The host a variable's value names: `claude-code`, `codex`, `gemini`,
/// `opencode` (also as the first word of `AI_AGENT`'s
/// `claude-code_2-1-332_agent`), else `other`.
fn host_named(value: &str) -> AgentHost {
    let value = value.trim();
    let first = value.split('_').next().unwrap_or(value);
    AgentHost::parse(value)
        .or_else(|| AgentHost::parse(first))
        .unwrap_or(AgentHost::Other)
}

/// The agent host an environment (`NAME=VALUE` pairs, as
/// `/proc/PID/environ` holds them) says acts, if it says an agent does; an
/// unreadable `TICKLOOP_ACTOR` counts as an agent (`other`): a process that
/// says anything but `person` there is not taken for the person.
pub fn agent_in<'a>(
    vars: impl IntoIterator<Item = (&'a str, &'a str)> + Clone,
) -> Option<AgentHost> {
    let get = |name: &str| {
        vars.clone()
            .into_iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    };
    match from_env(get) {
        Ok(ClientKind::AgentCli(host)) => Some(host),
        Ok(_) => None,
        Err(_) => Some(AgentHost::Other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(vars: &[(&str, &str)]) -> Result<ClientKind, String> {
        from_env(|name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn the_person_unless_something_says_an_agent() {
        assert_eq!(kind(&[]), Ok(ClientKind::Cli));
        assert_eq!(kind(&[("CLAUDECODE", "")]), Ok(ClientKind::Cli));
        assert_eq!(kind(&[("GEMINI_CLI", "0")]), Ok(ClientKind::Cli));
        let claude = ClientKind::AgentCli(AgentHost::ClaudeCode);
        assert_eq!(kind(&[("CLAUDECODE", "1")]), Ok(claude));
        assert_eq!(
            kind(&[("CODEX_THREAD_ID", "01a2")]),
            Ok(ClientKind::AgentCli(AgentHost::Codex))
        );
        assert_eq!(
            kind(&[("OPENCODE", "1")]),
            Ok(ClientKind::AgentCli(AgentHost::Opencode))
        );
        assert_eq!(
            kind(&[("AI_AGENT", "claude-code_2-1-332_agent")]),
            Ok(claude)
        );
        assert_eq!(
            kind(&[("AI_AGENT", "aider")]),
            Ok(ClientKind::AgentCli(AgentHost::Other))
        );
    }

    #[test]
    fn the_explicit_word_then_install_s_variable_then_the_markers() {
        // The person said so, in a host's tool: the person.
        assert_eq!(
            kind(&[("TICKLOOP_ACTOR", "person"), ("CLAUDECODE", "1")]),
            Ok(ClientKind::Cli)
        );
        // An agent that names no host.
        assert_eq!(
            kind(&[("TICKLOOP_ACTOR", "agent")]),
            Ok(ClientKind::AgentCli(AgentHost::Other))
        );
        assert_eq!(
            kind(&[("TICKLOOP_ACTOR", "agent"), ("GEMINI_CLI", "1")]),
            Ok(ClientKind::AgentCli(AgentHost::Gemini))
        );
        // Install's variable names the host before a marker does.
        assert_eq!(
            kind(&[("TICKLOOP_AGENT", "codex"), ("CLAUDECODE", "1")]),
            Ok(ClientKind::AgentCli(AgentHost::Codex))
        );
        let wrong = kind(&[("TICKLOOP_ACTOR", "robot")]).expect_err("refused");
        assert!(
            wrong.contains("TICKLOOP_ACTOR") && wrong.contains("person"),
            "{wrong}"
        );
    }
}
