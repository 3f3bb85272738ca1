//! Whether the agent host shows the person the question the bridge would
//! put to it (an `elicitation/create` in the 2025 revisions, an
//! `input_required` result in 2026-07-28), decided per host and mode from
//! what the host tells its MCP server. A host that would answer the
//! question itself must never answer for the person, so where the bridge
//! cannot tell, it does not ask: the question stays in the Monitor, the
//! Tick's view, Herdr, `tickloop approvals` and a desktop notification.
//!
//! What each host showed in trials (tests/codex.rs, gemini.rs,
//! opencode.rs, claude_code_consent.rs):
//!
//! * Claude Code shows a dialog in its interactive screen
//!   (`CLAUDE_CODE_ENTRYPOINT=cli` in the server's environment); run as
//!   `claude -p` (`sdk-cli`) it dismisses the question at once without
//!   asking anyone, so it is asked only when interactive.
//! * Codex CLI shows a dialog in its screen under an approval policy that
//!   asks, and accepts the question itself, in about a millisecond, under
//!   `approval_policy = "never"` (which `codex exec` runs with). Its
//!   `_meta["x-codex-turn-metadata"]` does not carry the policy; it says
//!   `turn_trigger: "exec"` for `codex exec`, and
//!   `user_input_requested_during_turn: true` once Codex asked the person
//!   something in this turn (which it never does under `never`). Codex is
//!   asked only then.
//! * Gemini CLI and opencode declare no elicitation: never asked.
//! * Any other host that declares form elicitation is asked (the official
//!   SDKs' clients answer through a callback their application gives).
//!
//! Before any of this, a bridge the agent host did not start itself asks
//! no host at all ([`crate::launch`]).
//!
//! `tickloop mcp --ask-in-host always` asks every host that declares
//! elicitation (an SDK application that shows the question to its person),
//! `never` none; `[approval] ask_in_host = false` in the config file is
//! `never` too.

use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::Value;

/// `tickloop mcp --ask-in-host`: which hosts are asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AskInHost {
    /// The hosts known to show the person the question, and unknown ones
    /// that declare elicitation.
    #[default]
    Auto,
    /// Every host that declares elicitation.
    Always,
    /// None.
    Never,
}

impl AskInHost {
    /// `auto`, `always` or `never`; an error says which words are taken.
    pub fn parse(word: &str) -> Result<AskInHost, String> {
        match word {
            "auto" => Ok(AskInHost::Auto),
            "always" => Ok(AskInHost::Always),
            "never" => Ok(AskInHost::Never),
            other => Err(format!(
                "--ask-in-host {other:?}: say auto (the hosts that show the person the question), always or never"
            )),
        }
    }
}

/// What a request's host told the server about itself, for [`not_asked`]
/// and [`HostFacts::asker`].
#[derive(Debug, Clone, Default)]
pub struct HostFacts {
    /// Its `clientInfo` name (`claude-code`, `codex-mcp-client`, ...).
    pub name: Option<String>,
    /// Its `clientInfo` title (`Claude Code`, `Codex`), else its name: how
    /// people know it.
    pub shown: Option<String>,
    /// Codex's `_meta["x-codex-turn-metadata"]`.
    pub codex_turn: Option<Value>,
    /// `CLAUDE_CODE_ENTRYPOINT` of the server's environment (Claude Code
    /// sets it for the servers it starts).
    pub claude_entrypoint: Option<String>,
}

impl HostFacts {
    /// The facts of `context`'s request, its client's `clientInfo` from
    /// `initialize` or (2026-07-28) from the request's `_meta`.
    pub fn of(context: &RequestContext<RoleServer>) -> HostFacts {
        let info = context.meta.client_info().or_else(|| {
            context
                .peer
                .peer_info()
                .map(|info| info.client_info.clone())
        });
        HostFacts {
            name: info.as_ref().map(|i| i.name.clone()),
            shown: info.map(|i| i.title.unwrap_or(i.name)),
            codex_turn: context.meta.0.get("x-codex-turn-metadata").cloned(),
            claude_entrypoint: std::env::var("CLAUDE_CODE_ENTRYPOINT").ok(),
        }
    }
}

impl HostFacts {
    /// Who asks, for the question: the agent of this host and session
    /// (`this session's agent (Claude Code, session 9ec968c8)`),
    /// the session as the host tells it (Codex's `_meta`, Claude Code's
    /// `CLAUDE_CODE_SESSION_ID`).
    pub fn asker(&self) -> String {
        let session = self
            .codex_turn
            .as_ref()
            .and_then(|t| t.get("session_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| {
                (self.name.as_deref() == Some("claude-code"))
                    .then(|| std::env::var("CLAUDE_CODE_SESSION_ID").ok())
                    .flatten()
            });
        let host = self.shown.as_deref().unwrap_or("an MCP client");
        match session {
            Some(s) => format!(
                "this session's agent ({host}, session {})",
                s.chars().take(8).collect::<String>()
            ),
            None => format!("the agent in {host}"),
        }
    }
}

/// Why the host of `facts` is not asked (said to the agent while its
/// action waits, and in its result); `None`: it may be asked (when it
/// declared elicitation, which the caller checks).
pub fn not_asked(mode: AskInHost, facts: &HostFacts) -> Option<String> {
    match mode {
        AskInHost::Never => {
            return Some("asking in the agent host is off (--ask-in-host never, or [approval] ask_in_host = false)".into())
        }
        AskInHost::Always => return None,
        AskInHost::Auto => {}
    }
    match facts.name.as_deref() {
        Some("claude-code") => match facts.claude_entrypoint.as_deref() {
            Some("cli") => None,
            other => Some(format!(
                "Claude Code is not interactive here (CLAUDE_CODE_ENTRYPOINT={}): it would answer the question without the person",
                other.unwrap_or("unset")
            )),
        },
        Some("codex-mcp-client") => codex_not_asked(facts.codex_turn.as_ref()),
        _ => None,
    }
}

/// Whether this process's environment is what interactive Claude Code
/// gives the MCP servers it starts: `CLAUDECODE=1` and
/// `CLAUDE_CODE_ENTRYPOINT=cli`.
pub fn started_by_interactive_claude_code() -> bool {
    let var = |name: &str| std::env::var(name).ok();
    var("CLAUDECODE").as_deref() == Some("1")
        && var("CLAUDE_CODE_ENTRYPOINT").as_deref() == Some("cli")
}

/// The newest MCP revision offered when `--max-protocol` names none:
/// 2025-11-25 to interactive Claude Code (`interactive_claude_code`, from
/// [`started_by_interactive_claude_code`]) when the bridge may ask in it
/// (`mode` not `never`, started by the host itself); `None` (every
/// revision) otherwise. In 2026-07-28 a server cannot
/// withdraw an `input_required` question, and Claude Code 2.1.332 keeps
/// its dialog, and the agent's turn, until the person answers it there
/// even when they answered elsewhere first; in 2025-11-25 the bridge
/// withdraws its `elicitation/create` (`notifications/cancelled`) and the
/// dialog leaves (`tests/claude_code_consent.rs`).
pub fn newest_revision(
    mode: AskInHost,
    launch: &crate::launch::Launch,
    interactive_claude_code: bool,
) -> Option<&'static str> {
    let asks = mode != AskInHost::Never && launch.not_asked().is_none();
    (asks && interactive_claude_code).then_some("2025-11-25")
}

/// Codex is asked only in a turn where it asked the person something
/// already (so its approval policy is not `never`), and never in `codex
/// exec`.
fn codex_not_asked(turn: Option<&Value>) -> Option<String> {
    let trigger = turn
        .and_then(|t| t.get("turn_trigger"))
        .and_then(Value::as_str);
    if trigger == Some("exec") {
        return Some("`codex exec` answers questions itself (approval_policy never)".into());
    }
    let asked_person = turn
        .and_then(|t| t.get("user_input_requested_during_turn"))
        .and_then(Value::as_bool)
        == Some(true);
    (!asked_person).then(|| {
        "Codex may run under approval_policy never, where it answers questions itself (this turn asked the person nothing)".into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn facts(name: &str, turn: Option<Value>, entry: Option<&str>) -> HostFacts {
        HostFacts {
            name: Some(name.into()),
            shown: Some(name.into()),
            codex_turn: turn,
            claude_entrypoint: entry.map(str::to_string),
        }
    }

    #[test]
    fn hosts_that_would_answer_for_the_person_are_not_asked() {
        let auto = AskInHost::Auto;
        assert_eq!(
            not_asked(auto, &facts("claude-code", None, Some("cli"))),
            None
        );
        let print = not_asked(auto, &facts("claude-code", None, Some("sdk-cli")));
        assert!(print.is_some_and(|w| w.contains("sdk-cli")));
        assert!(not_asked(auto, &facts("claude-code", None, None)).is_some());
        let exec = json!({"turn_trigger": "exec", "user_input_requested_during_turn": true});
        assert!(
            not_asked(auto, &facts("codex-mcp-client", Some(exec), None))
                .is_some_and(|w| w.contains("codex exec"))
        );
        let quiet = json!({"turn_trigger": "user"});
        assert!(not_asked(auto, &facts("codex-mcp-client", Some(quiet), None)).is_some());
        let asked = json!({"turn_trigger": "user", "user_input_requested_during_turn": true});
        assert_eq!(
            not_asked(auto, &facts("codex-mcp-client", Some(asked), None)),
            None
        );
        assert_eq!(
            not_asked(auto, &facts("sdk-consent-test", None, None)),
            None
        );
        assert_eq!(
            not_asked(AskInHost::Always, &facts("codex-mcp-client", None, None)),
            None
        );
        assert!(not_asked(AskInHost::Never, &facts("x", None, None)).is_some());
        assert!(AskInHost::parse("sometimes").is_err());
    }

    #[test]
    fn interactive_claude_code_that_may_be_asked_is_offered_2025_11_25() {
        use crate::launch::Launch;
        let host = Launch::Host("claude (pid 7)".into());
        let other = Launch::Other("an agent's own client".into());
        let auto = AskInHost::Auto;
        assert_eq!(newest_revision(auto, &host, true), Some("2025-11-25"));
        assert_eq!(
            newest_revision(AskInHost::Always, &host, true),
            Some("2025-11-25")
        );
        assert_eq!(newest_revision(auto, &host, false), None);
        assert_eq!(newest_revision(auto, &other, true), None);
        assert_eq!(newest_revision(AskInHost::Never, &host, true), None);
    }
}
