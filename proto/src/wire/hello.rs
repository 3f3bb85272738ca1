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
    /// What kind of client this is (role `client` only): the activity record
    /// of each instance says who asked. Absent: the CLI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientKind>,
}

/// The front end a request came from, as the activity record shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ClientKind {
    /// `tickloop` commands.
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
}

impl ClientKind {
    /// An agent (`mcp`, `loop`) rather than the person (`cli`, `monitor`,
    /// `herdr`, `web`).
    pub fn is_agent(self) -> bool {
        matches!(self, ClientKind::Mcp | ClientKind::Loop)
    }

    /// The name the activity record and end reasons use (`cli`, `mcp`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ClientKind::Cli => "cli",
            ClientKind::Mcp => "mcp",
            ClientKind::Loop => "loop",
            ClientKind::Monitor => "monitor",
            ClientKind::Herdr => "herdr",
            ClientKind::Web => "web",
        }
    }

    /// Who acted, for end reasons: `the person (cli)`, `an agent (mcp)`.
    pub fn actor(self) -> String {
        if self.is_agent() {
            format!("an agent ({})", self.as_str())
        } else {
            format!("the person ({})", self.as_str())
        }
    }

    /// The short label a person reads in the activity (`CLI`, `MCP`, ...).
    pub fn label(self) -> &'static str {
        match self {
            ClientKind::Cli => "CLI",
            ClientKind::Mcp => "MCP",
            ClientKind::Loop => "Loop",
            ClientKind::Monitor => "Monitor",
            ClientKind::Herdr => "Herdr",
            ClientKind::Web => "Web",
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
