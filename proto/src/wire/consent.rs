//! Consent: who approves what agents do to an instance ([`ApprovalPolicy`],
//! [`Owner`], [`ConsentChange`]), an action that waits for a person
//! ([`HeldCall`]), and the decisions the approval log keeps
//! ([`ConsentDecision`], [`ApprovalLogEntry`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ClientKind;

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
    /// `withdrawn` (its caller stopped waiting, or withdrew it), `denied`
    /// (the policy) or `held`.
    pub decision: String,
    /// Who decided: `monitor`, `cli`, `attach`, `herdr`, `mcp-host` (the
    /// agent host asked the person), `tickhost` (time-outs, policy, catalog
    /// changes, ends), `caller` (withdrawn by who asked).
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
            "withdrawn" => "withdrawn".to_string(),
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
