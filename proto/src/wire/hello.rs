//! Every connection's first line ([`Hello`] / [`HelloReply`], which refuse
//! another build), who is connecting ([`Role`], [`ClientKind`]), and the
//! [`Envelope`] that carries each request with its id.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::wire_version;

/// Who is connecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A client of tickhost: the CLI, the MCP bridge, the Monitor's list.
    Client,
    /// tickhost connecting to a launcher.
    Host,
    /// A view attaching to a launcher.
    View,
    /// `tickloop record`: a launcher streams its recording (asciicast v2
    /// lines) until the Tick ends or the recorder hangs up.
    Recorder,
}

/// First line from the connecting side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hello {
    pub hello: HelloBody,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HelloBody {
    pub version: String,
    pub role: Role,
    /// What kind of client this is (roles `client` and `recorder`): the
    /// activity record of each instance says who asked, and who started a
    /// recording. Absent: the CLI. On a view (role `view`), who it shows
    /// the screen to: a launcher takes no keys, no size and no focus from a
    /// view that says it is an agent's (`mcp`, `loop`, `agent_cli`);
    /// absent, the person's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientKind>,
}

/// The front end a request came from, as the activity record shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientKind {
    /// `tickloop` commands the person runs.
    Cli,
    /// `tickloop mcp`: an MCP client's tool calls.
    Mcp,
    /// `tickloop loop run`: the Loop.
    Loop,
    /// The Monitor and the views' overlays.
    Monitor,
    /// `tickloop herdr ...`: Herdr's plugin actions and reports.
    Herdr,
    /// `tickloop web`: the person's browser (the list, a Tick's screen,
    /// approving and refusing, closing).
    Web,
    /// `tickloop` commands an agent host's tool ran (its shell tool):
    /// that agent, named by host (`{"agent_cli": "claude-code"}`).
    AgentCli(AgentHost),
}

impl ClientKind {
    /// An agent (`mcp`, `loop`, `agent_cli`) rather than the person (`cli`,
    /// `monitor`, `herdr`, `web`).
    pub fn is_agent(self) -> bool {
        matches!(
            self,
            ClientKind::Mcp | ClientKind::Loop | ClientKind::AgentCli(_)
        )
    }

    /// The name the activity record and end reasons use (`cli`, `mcp`,
    /// `agent-cli`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Cli => "cli",
            ClientKind::Mcp => "mcp",
            ClientKind::Loop => "loop",
            ClientKind::Monitor => "monitor",
            ClientKind::Herdr => "herdr",
            ClientKind::Web => "web",
            ClientKind::AgentCli(_) => "agent-cli",
        }
    }

    /// Who acted, for end reasons: `the person (cli)`, `an agent (mcp)`,
    /// `an agent (claude-code, shell tool)`.
    pub fn actor(self) -> String {
        match self {
            ClientKind::AgentCli(AgentHost::Other) => "an agent (shell tool)".to_string(),
            ClientKind::AgentCli(host) => format!("an agent ({}, shell tool)", host.as_str()),
            kind if kind.is_agent() => format!("an agent ({})", kind.as_str()),
            kind => format!("the person ({})", kind.as_str()),
        }
    }

    /// The short label a person reads in the activity and in prompts
    /// (`CLI`, `MCP`, `Claude Code (shell)`, ...).
    pub fn label(self) -> &'static str {
        match self {
            ClientKind::Cli => "CLI",
            ClientKind::Mcp => "MCP",
            ClientKind::Loop => "Loop",
            ClientKind::Monitor => "Monitor",
            ClientKind::Herdr => "Herdr",
            ClientKind::Web => "Web",
            ClientKind::AgentCli(host) => host.shell_label(),
        }
    }
}

/// The agent host whose tool ran a `tickloop` command (client kind
/// `agent_cli`), as the CLI tells from its environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AgentHost {
    ClaudeCode,
    Codex,
    Gemini,
    Opencode,
    /// An agent that said so (`TICKLOOP_ACTOR=agent`) without naming its host.
    Other,
}

impl AgentHost {
    /// Every host, for parsing and listing.
    pub const ALL: [AgentHost; 5] = [
        AgentHost::ClaudeCode,
        AgentHost::Codex,
        AgentHost::Gemini,
        AgentHost::Opencode,
        AgentHost::Other,
    ];

    /// Its name: `claude-code`, `codex`, `gemini`, `opencode`, `other` (the
    /// names of `tickloop loop AGENT`).
    pub fn as_str(self) -> &'static str {
        match self {
            AgentHost::ClaudeCode => "claude-code",
            AgentHost::Codex => "codex",
            AgentHost::Gemini => "gemini",
            AgentHost::Opencode => "opencode",
            AgentHost::Other => "other",
        }
    }

    /// The host named `name` (`claude-code`, ...); `None` for another word.
    pub fn parse(name: &str) -> Option<AgentHost> {
        AgentHost::ALL.into_iter().find(|h| h.as_str() == name)
    }

    /// The host's name for people: `Claude Code`, `Codex CLI`, ...
    pub fn title(self) -> &'static str {
        match self {
            AgentHost::ClaudeCode => "Claude Code",
            AgentHost::Codex => "Codex CLI",
            AgentHost::Gemini => "Gemini CLI",
            AgentHost::Opencode => "opencode",
            AgentHost::Other => "an agent",
        }
    }

    /// Its shell tool, as the activity and the prompts name who acted.
    pub fn shell_label(self) -> &'static str {
        match self {
            AgentHost::ClaudeCode => "Claude Code (shell)",
            AgentHost::Codex => "Codex (shell)",
            AgentHost::Gemini => "Gemini CLI (shell)",
            AgentHost::Opencode => "opencode (shell)",
            AgentHost::Other => "agent (shell)",
        }
    }
}

/// First line from the listening side: its version, and a refusal when the
/// versions differ (the connection is closed after it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HelloReply {
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

impl Hello {
    pub fn new(role: Role) -> Self {
        Hello {
            hello: HelloBody {
                version: wire_version().to_string(),
                role,
                client: None,
            },
        }
    }

    /// A client's hello, saying what kind of client it is.
    pub fn client(kind: ClientKind) -> Self {
        let mut hello = Hello::new(Role::Client);
        hello.hello.client = Some(kind);
        hello
    }

    /// A view's hello, saying whom it shows the screen to (an agent's view
    /// is read-only at the launcher).
    pub fn view(kind: ClientKind) -> Self {
        let mut hello = Hello::new(Role::View);
        hello.hello.client = Some(kind);
        hello
    }

    /// A view's hello that says an agent's view: it may watch, never type,
    /// resize or take focus.
    pub fn is_agents_view(&self) -> bool {
        self.hello.role == Role::View && self.hello.client.is_some_and(ClientKind::is_agent)
    }
}

impl HelloReply {
    /// The listening side's answer to `hello`: accepted when the versions match.
    pub fn answer(hello: &Hello) -> Self {
        let refused = (hello.hello.version != wire_version()).then(|| {
            format!(
                "version mismatch: this process is {}, the peer is {}; \
                 run `tickloop shutdown` with the old build, or use one build for all processes",
                wire_version(),
                hello.hello.version
            )
        });
        HelloReply {
            version: wire_version().to_string(),
            refused,
        }
    }
}

/// A request with the id its answer will carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Envelope<R> {
    pub id: u64,
    pub request: R,
    /// Who asked, as tickhost tells a launcher (for its activity record);
    /// absent between a client and tickhost, where the hello says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientKind>,
}

impl<R> Envelope<R> {
    /// Request `id`, nobody named as asking.
    pub fn new(id: u64, request: R) -> Self {
        Envelope {
            id,
            request,
            client: None,
        }
    }
}
