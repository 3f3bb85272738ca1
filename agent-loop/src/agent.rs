//! Which agent host a hook call serves, and what differs between them: the
//! name of its state directory, the word its hooks answer with, where its
//! project directory is, and whether a consumed `/tick` prompt can carry a
//! run's first step (`docs/claude-code.md`, `docs/codex.md`, `docs/gemini.md`).

/// An agent host whose hooks run the Loop (one engine, [`crate::claude_code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code: a background `asyncRewake` hook carries the first step.
    ClaudeCode,
    /// Codex CLI: a prompt its hook blocks starts no turn.
    Codex,
    /// Gemini CLI: a prompt its `BeforeAgent` hook denies starts no turn.
    Gemini,
    /// opencode: an in-process plugin calls the hooks and posts the steps.
    Opencode,
}

impl Agent {
    /// The name in `tickloop loop NAME` and in the state directory.
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Opencode => "opencode",
        }
    }

    /// The name a person knows it by.
    pub fn title(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex",
            Agent::Gemini => "Gemini CLI",
            Agent::Opencode => "opencode",
        }
    }

    /// Whether a run armed between turns must wait for the session's next
    /// turn: the agent starts no turn after a consumed control command and
    /// has no background hook that could start one.
    pub fn first_step_after_next_turn(self) -> bool {
        matches!(self, Agent::Codex | Agent::Gemini)
    }

    /// Whether the text that continues a turn arrives at the prompt hook as
    /// the next prompt (Gemini CLI's `BeforeAgent` and opencode's
    /// `chat.message` see it; Claude Code's and Codex's prompt hooks do not).
    pub fn step_passes_prompt_hook(self) -> bool {
        matches!(self, Agent::Gemini | Agent::Opencode)
    }

    /// The `decision` that stops a prompt (a consumed command) and continues
    /// a turn that ended (a time step): `block`, or Gemini CLI's `deny`.
    pub fn block_decision(self) -> &'static str {
        match self {
            Agent::ClaudeCode | Agent::Codex | Agent::Opencode => "block",
            Agent::Gemini => "deny",
        }
    }

    /// The environment variable naming the project directory, if the agent
    /// sets one for its hooks (else the hook input's `cwd`).
    pub fn project_dir_env(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "CLAUDE_PROJECT_DIR",
            Agent::Codex => "CODEX_PROJECT_DIR",
            Agent::Gemini => "GEMINI_PROJECT_DIR",
            Agent::Opencode => "OPENCODE_PROJECT_DIR",
        }
    }
}
