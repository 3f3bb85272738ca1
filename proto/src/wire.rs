//! Wire types between Tickloop's processes: plain serde types, no transport.
//!
//! Every socket in Tickloop carries one JSON value per line (`\n`-terminated),
//! like the Tick protocol itself. Two conversations use these types:
//!
//! * **client ↔ tickhost** on `RUNTIME/tickhost.sock` (the CLI, the MCP bridge,
//!   the Loop, the Monitor, the Herdr adapter): the client sends [`Hello`], the
//!   daemon answers [`HelloReply`]
//!   (refusing a different version), then the client sends [`Envelope`]s
//!   carrying a [`ClientRequest`] and reads [`ServerMessage`]s back. Requests on
//!   one connection are answered in order; `watch` streams [`ServerMessage::Event`]s
//!   until the client hangs up.
//! * **tickhost ↔ launcher** on `RUNTIME/l/<kind>-<name>.sock`: the same
//!   [`Hello`] / [`HelloReply`] exchange (role `host`), then [`Envelope`]s
//!   carrying a [`LauncherRequest`], answered by id (calls run concurrently,
//!   so replies may come out of order) with [`LauncherMessage::Reply`], and
//!   unsolicited [`LauncherMessage::Status`] (state changes, and the end of
//!   the session as a status with `ended`) and [`LauncherMessage::Catalog`].
//!
//! Views attach to the same launcher socket with role `view`; their messages
//! are the attach protocol ([`crate::attach`]), not these.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// The version every Tickloop process of one build speaks: the package
/// version and a digest of the JSON Schema of every message of every socket
/// (this module's types and [`crate::attach`]'s). Two builds whose messages
/// differ in any way have different versions, and a peer with a different
/// version is refused at [`Hello`], with both versions named, instead of
/// serde quietly dropping what it does not know.
///
/// The digest is [`wire_digest`] of [`wire_schema`], kept in
/// `tests/golden/wire-digest` beside the schema itself and checked against
/// both by `tests/wire_golden.rs`: computing it at run time cost every
/// process (each CLI command, each launcher) some 17 million instructions
/// and a megabyte of heap (benches/cost-2026-12-02.md).
pub const WIRE_VERSION: &str = concat!(
    "tickloop-",
    env!("CARGO_PKG_VERSION"),
    "+",
    include_str!("../tests/golden/wire-digest")
);

/// [`WIRE_VERSION`], for callers that take a function.
pub fn wire_version() -> &'static str {
    WIRE_VERSION
}

/// The digest that names a wire schema in [`WIRE_VERSION`]: the first six
/// bytes of the SHA-256 of its [`canonical_json`], in hex.
pub fn wire_digest(schema: &Value) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(canonical_json(schema).as_bytes());
    digest[..6].iter().map(|b| format!("{b:02x}")).collect()
}

/// Every message of every Tickloop socket, as one type for its schema.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct AllMessages {
    hello: Hello,
    hello_reply: HelloReply,
    client_request: Envelope<ClientRequest>,
    server_message: ServerMessage,
    launcher_request: Envelope<LauncherRequest>,
    launcher_message: LauncherMessage,
    launch_spec: LaunchSpec,
    launch_report: LaunchReport,
    launcher_record: LauncherRecord,
    list_entry: ListEntry,
    open_reply: OpenReply,
    screen_reply: ScreenReply,
    activity_record: ActivityRecord,
    approval_log_entry: ApprovalLogEntry,
    view_hello: crate::attach::ViewHello,
    to_view: crate::attach::ToView,
    view_event: crate::attach::ViewEvent,
}

/// The JSON Schema of every message of every Tickloop socket (what
/// [`WIRE_VERSION`] names; `proto/tests/golden/wire-schema.json` keeps it).
pub fn wire_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(AllMessages)).unwrap_or(Value::Null)
}

/// `value` as JSON text with every object's keys sorted, whatever the map
/// order serde_json was built with.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&map[k]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // With serde_json's `preserve_order`, insertion above is sorted order;
    // without it, maps are sorted anyway.
    serde_json::to_string_pretty(&sorted(value)).unwrap_or_default()
}

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
}

impl ClientKind {
    /// An agent (`mcp`, `loop`) rather than the person (`cli`, `monitor`,
    /// `herdr`).
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
    },
    Input {
        instance: String,
        text: String,
    },
    Close {
        instance: String,
    },
    /// Start the newest version of an `artifact:` instance now (as a save
    /// would); answered when that version is up or has failed.
    Reload {
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
    Shutdown,
}

/// A call of a Tick's tool, as every hop carries it: a client's
/// [`ClientRequest::Call`] (with the instance), tickhost's
/// [`LauncherRequest::Call`], the session core's
/// [`crate::core::SessionRequest::Call`], which writes it to the Tick as
/// `tick/call`'s params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CallRequest {
    pub tool: String,
    pub args: Value,
    /// The catalog revision the call was prepared against: a call for
    /// another revision is refused, not executed.
    pub revision: String,
}

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
    /// Record the session into this new file (absolute, not existing) from
    /// its start, as asciicast v2 (`open --record FILE`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<PathBuf>,
}

/// Whether a person approves an instance's `mutates: true` calls before
/// they are written to the Tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalPolicy {
    /// Every call goes through (the MCP host may still ask).
    #[default]
    Auto,
    /// Each mutating call waits in tickhost until a person approves it.
    Ask,
    /// Mutating calls are refused (not executed).
    Deny,
}

impl ApprovalPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalPolicy::Auto => "auto",
            ApprovalPolicy::Ask => "ask",
            ApprovalPolicy::Deny => "deny",
        }
    }

    pub fn parse(text: &str) -> Option<ApprovalPolicy> {
        match text {
            "auto" => Some(ApprovalPolicy::Auto),
            "ask" => Some(ApprovalPolicy::Ask),
            "deny" => Some(ApprovalPolicy::Deny),
            _ => None,
        }
    }
}

/// Whose an instance is: the person's (opened from the CLI, the Monitor or
/// Herdr) or an agent's (opened through MCP or by the Loop). An agent's
/// typing into a person's instance and closing it wait for the person by
/// default; on its own instance nothing waits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    #[default]
    Person,
    Agent,
}

impl Owner {
    /// The owner of what a client of `kind` opens (no kind: the CLI's).
    pub fn of(kind: Option<ClientKind>) -> Owner {
        if kind.is_some_and(ClientKind::is_agent) {
            Owner::Agent
        } else {
            Owner::Person
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Owner::Person => "person",
            Owner::Agent => "agent",
        }
    }
}

/// A change of who approves what agents do to an instance; an absent part
/// stays as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConsentChange {
    /// Mutating calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<ApprovalPolicy>,
    /// An agent typing into its terminal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<ApprovalPolicy>,
    /// An agent closing it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close: Option<ApprovalPolicy>,
}

/// What an agent asked for that waits for a person.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeldAction {
    /// A call of a `mutates: true` tool.
    #[default]
    Call,
    /// Typing into the instance's terminal (`args.text`).
    Input,
    /// Closing the instance.
    Close,
}

impl HeldAction {
    pub fn as_str(self) -> &'static str {
        match self {
            HeldAction::Call => "call",
            HeldAction::Input => "input",
            HeldAction::Close => "close",
        }
    }
}

/// An agent's action waiting for a person's approval: a mutating call, or
/// typing into or closing a person's instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HeldCall {
    /// What waits (absent: a call).
    #[serde(default)]
    pub action: HeldAction,
    /// Its id among the waiting actions (`#1`, `#2`, ...): `tickloop
    /// approve INSTANCE CALL`.
    pub call: String,
    pub instance: String,
    /// The tool called; `input` or `close` for those actions.
    pub tool: String,
    /// The tool's description, so the person can judge the call.
    pub description: String,
    /// The call's arguments; `{"text": ...}` for input, `{}` for close.
    pub args: Value,
    /// The catalog revision the call was made for: approval is bound to it
    /// (empty for input and close).
    pub revision: String,
    pub client: Option<ClientKind>,
    /// When it started waiting (RFC 3339).
    pub since: String,
    /// How long it has waited, and how long it may, in ms.
    pub waited_ms: u64,
    pub timeout_ms: u64,
}

/// A decision on a held action, with when it was made: one line of an
/// instance's approval log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalLogEntry {
    pub at: String,
    #[serde(flatten)]
    pub decision: ConsentDecision,
}

/// A decision on an agent's action that waited (or was refused at once),
/// as the approval log and the activity record keep it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ConsentDecision {
    /// What the agent asked for (absent: a call).
    #[serde(default)]
    pub action: HeldAction,
    /// The agent that asked, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientKind>,
    pub call: String,
    pub instance: String,
    pub tool: String,
    pub args: Value,
    pub revision: String,
    /// `approved`, `refused`, `timed_out`, `revision_changed`, `ended`,
    /// `denied` (the policy) or `held`.
    pub decision: String,
    /// Who decided: `monitor`, `cli`, `attach`, `herdr`, `mcp-host` (the
    /// agent host asked the person), `tickhost` (time-outs, policy, catalog
    /// changes, ends).
    pub by: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// With `by: "mcp-host"`: which agent host answered (`NAME VERSION`
    /// from its MCP `clientInfo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl ConsentDecision {
    /// What was asked, for people: `increment {"amount":2}`, `input
    /// "ls\r"`, `close`.
    pub fn what(&self, args_width: usize) -> String {
        let mut args = match self.action {
            HeldAction::Call => self.args.to_string(),
            HeldAction::Input => self
                .args
                .get("text")
                .map(Value::to_string)
                .unwrap_or_default(),
            HeldAction::Close => String::new(),
        };
        if args.chars().count() > args_width {
            args = args.chars().take(args_width.saturating_sub(1)).collect();
            args.push('…');
        }
        format!("{} {args}", self.tool).trim_end().to_string()
    }

    /// The decision, for people: `waits for the person`, `approved by the
    /// person (monitor)`, `refused by the person (cli): not now`, `denied
    /// by its policy`, `timed out`.
    pub fn verdict(&self) -> String {
        let by = match self.by.as_str() {
            "tickhost" | "policy" | "config" => "tickhost".to_string(),
            "mcp-host" => "the person, in the agent host".to_string(),
            by => format!("the person ({by})"),
        };
        let mut text = match self.decision.as_str() {
            "held" => "waits for the person".to_string(),
            "approved" if self.by == "policy" => "let through (its policy was set to auto)".into(),
            "approved" => format!("approved by {by}"),
            "refused" => format!("refused by {by}"),
            "denied" => "refused by its policy (deny)".to_string(),
            "timed_out" => "not approved in time".to_string(),
            "revision_changed" => "not executed: its catalog changed".to_string(),
            "ended" => "not executed: the instance ended".to_string(),
            other => other.replace('_', " "),
        };
        if let Some(reason) = self.reason.as_deref().filter(|r| !r.is_empty()) {
            text.push_str(": ");
            text.push_str(reason);
        }
        text
    }

    /// Whether the action went ahead (`Some(true)`), did not (`Some(false)`)
    /// or still waits (`None`).
    pub fn went_ahead(&self) -> Option<bool> {
        match self.decision.as_str() {
            "held" => None,
            "approved" => Some(true),
            _ => Some(false),
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
    /// Anything else inside Tickloop.
    Internal,
}

/// The outcome of a `tick/call`, sorted as spec-gaps 3.4 says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CallOutcome {
    /// The Tick answered with a result. Exit 0.
    Result { result: Value },
    /// Not executed: refused by the host before sending, or a "not executed"
    /// error code from the Tick. Exit 3.
    NotExecuted { error: RpcError },
    /// The Tick answered with an error that may have had effects. Exit 4.
    Executed { error: RpcError },
    /// Written to the Tick, no valid answer: timeout, exit, violation. Exit 5.
    /// Never retried.
    Unknown { reason: String },
}

impl CallOutcome {
    /// The CLI's exit code for this outcome.
    pub fn exit_code(&self) -> i32 {
        match self {
            CallOutcome::Result { .. } => 0,
            CallOutcome::NotExecuted { .. } => 3,
            CallOutcome::Executed { .. } => 4,
            CallOutcome::Unknown { .. } => 5,
        }
    }
}

/// A JSON-RPC error object, as the Tick sent it or as the host made it for a
/// refusal before sending.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
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
}

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
    Screen {
        #[serde(default)]
        history: usize,
    },
    /// Bytes typed into the Tick's terminal.
    Input {
        text: String,
    },
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
    /// Latest state (from updates or reads), `None` for `shell:`.
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

/// What agents and views did with one instance, newest last: the last
/// [`ActivityRecord::REQUESTS`] requests, the last [`ActivityRecord::UPDATES`]
/// updates and the last [`ActivityRecord::OTHERS`] view and subscription
/// events, kept by its launcher (so it lives as long as the instance, across
/// tickhost restarts) and beside its last screen once it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityRecord {
    pub instance: String,
    /// Oldest first; numbers grow by one per entry ever recorded.
    pub entries: Vec<ActivityEntry>,
    /// The number of the newest entry recorded (0: none yet): ask again with
    /// `after` set to it for what comes next.
    pub last: u64,
    /// Clients following the instance's updates now (`watch`, the Loop), as
    /// tickhost counts them.
    #[serde(default)]
    pub subscribers: u32,
    /// The Tick's tool catalog now (empty for `shell:`), for the overlay.
    #[serde(default)]
    pub tools: Vec<ToolSummary>,
}

/// A tool of the catalog, as the activity overlay lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolSummary {
    pub name: String,
    pub mutates: bool,
    pub description: String,
}

impl ActivityRecord {
    /// Requests kept at most.
    pub const REQUESTS: usize = 200;
    /// Updates kept at most (several in quick succession share one entry).
    pub const UPDATES: usize = 50;
    /// View and subscription events kept at most.
    pub const OTHERS: usize = 50;
}

/// One thing that happened to an instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityEntry {
    /// Its number in the instance's record (1, 2, ...).
    pub n: u64,
    /// RFC 3339 time, in milliseconds.
    pub at: String,
    #[serde(flatten)]
    pub event: ActivityEvent,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ActivityEvent {
    /// An agent's request: describe, read, call or typed input.
    Request(RequestActivity),
    /// `tick/update`s: the newest's seq, how many arrived together.
    Update {
        seq: u64,
        /// Updates this entry stands for (1 when alone): the others came
        /// within a moment of it and were merged into it.
        count: u64,
        /// Size of the newest state's data as JSON, in bytes, and the
        /// delivery budget it is cut to for agents.
        bytes: usize,
        budget: usize,
    },
    /// A view attached or detached; `views` attached after it.
    View { attached: bool, views: u32 },
    /// A client started or stopped following the updates.
    Subscription {
        client: Option<ClientKind>,
        started: bool,
    },
    /// An agent's action waited for a person, or was decided: held,
    /// approved, refused, timed out, denied by the policy, ...
    Consent(ConsentDecision),
}

/// One request, with how it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestActivity {
    /// Who asked (absent when tickhost did not say).
    pub client: Option<ClientKind>,
    /// `tick/describe`, `tick/read`, `tick/call` or `input`.
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The arguments (a call's), cut to [`RequestActivity::KEPT_BYTES`] of
    /// JSON (a string ending in `…` when cut); typed input as a string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    pub outcome: ActivityOutcome,
    /// The JSON-RPC error code, when it ended in an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i64>,
    /// The error's message, or why the outcome is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The result (a call's or a read's), cut like `args`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    pub duration_ms: u64,
}

impl RequestActivity {
    /// JSON bytes of arguments and results kept per request.
    pub const KEPT_BYTES: usize = 2048;
}

/// How a request ended, in the classes of spec-gaps 3.4 for calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActivityOutcome {
    /// A call the Tick carried out (with a result, or an error that may
    /// have had effects: see `error_code`).
    Executed,
    /// A call refused before it ran (by the host or by the Tick).
    NotExecuted,
    /// A call written to the Tick with no valid answer.
    Unknown,
    /// A describe, read or input that succeeded.
    Ok,
    /// A describe, read or input that failed.
    Failed,
}

impl ActivityOutcome {
    pub fn label(self) -> &'static str {
        match self {
            ActivityOutcome::Executed => "executed",
            ActivityOutcome::NotExecuted => "not executed",
            ActivityOutcome::Unknown => "unknown",
            ActivityOutcome::Ok => "ok",
            ActivityOutcome::Failed => "failed",
        }
    }
}
