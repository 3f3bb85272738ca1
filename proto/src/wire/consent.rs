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
    /// Typing into the instance's terminal: `input` (`args.text`), `keys`
    /// (`args.keys`), `run` (`args.command`, typed at a shell's prompt).
    Input,
    /// Closing the instance.
    Close,
    /// Starting an `artifact:` instance's newest version now (`reload`):
    /// its running program ends, as at a close, under `agent_close`.
    Reload,
    /// Recording the instance's terminal, what is typed into it and its
    /// protocol into a file (`record`), under `agent_input`.
    Record,
}

impl HeldAction {
    pub fn as_str(self) -> &'static str {
        match self {
            HeldAction::Call => "call",
            HeldAction::Input => "input",
            HeldAction::Close => "close",
            HeldAction::Reload => "reload",
            HeldAction::Record => "record",
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
    /// The tool called; `input`, `keys`, `run`, `close`, `reload` or
    /// `record` for those actions.
    pub tool: String,
    /// The tool's description, so the person can judge the call.
    pub description: String,
    /// The call's arguments; `{"text": ...}` for input, `{"keys": [...]}`
    /// for keys, `{"command": ...}` for run, `{}` for close, reload and
    /// record.
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

impl HeldCall {
    /// When it stops waiting and is refused (`since` plus `timeout_ms`);
    /// `None` when `since` is not RFC 3339.
    pub fn deadline(&self) -> Option<time::OffsetDateTime> {
        let since = time::OffsetDateTime::parse(
            &self.since,
            &time::format_description::well_known::Rfc3339,
        )
        .ok()?;
        let timeout = i64::try_from(self.timeout_ms).unwrap_or(i64::MAX);
        since.checked_add(time::Duration::milliseconds(timeout))
    }

    /// The deadline for people: `08:52:05 UTC (10 min)`, with how long the
    /// whole wait is.
    pub fn deadline_text(&self) -> String {
        let wait = wait_text(self.timeout_ms);
        match self.deadline() {
            Some(at) => format!(
                "{:02}:{:02}:{:02} UTC ({wait})",
                at.hour(),
                at.minute(),
                at.second()
            ),
            None => format!("{wait} after it started waiting"),
        }
    }

    /// What will happen if the person says yes, in plain words, as a
    /// question: `Type `make test` ⏎ into shell:build?`, `Close
    /// shell:build?`, and for a call the first clause of the tool's
    /// description with the arguments it names put in (`Add 3 (default 1)
    /// to the counter?`).
    pub fn plainly(&self) -> String {
        match self.action {
            HeldAction::Input if self.tool == "run" => {
                let command = self.args.get("command").and_then(Value::as_str);
                format!(
                    "Run {} at the prompt of {}?",
                    typed(command.unwrap_or(""), 48),
                    self.instance
                )
            }
            HeldAction::Input if self.tool == "keys" => {
                let keys = match self.args.get("keys") {
                    Some(Value::Array(keys)) => keys
                        .iter()
                        .map(|k| k.as_str().map_or_else(|| k.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                };
                match self.args.get("text").and_then(Value::as_str) {
                    Some(text) => format!(
                        "Type {} then press {keys} in {}?",
                        typed(text, 40),
                        self.instance
                    ),
                    None => format!("Press {keys} in {}?", self.instance),
                }
            }
            HeldAction::Input => {
                let text = self.args.get("text").and_then(Value::as_str).unwrap_or("");
                format!("Type {} into {}?", typed(text, 48), self.instance)
            }
            HeldAction::Close => format!("Close {} (its program ends)?", self.instance),
            HeldAction::Reload => format!(
                "Reload {} (its program ends and its file's newest version starts)?",
                self.instance
            ),
            HeldAction::Record => format!(
                "Record {} (its screen, what is typed into it and its protocol, into a file)?",
                self.instance
            ),
            HeldAction::Call => {
                let said = with_arguments(first_clause(&self.description), &self.args);
                let said = said.trim().trim_end_matches(['.', '!', ':']).trim_end();
                if said.is_empty() {
                    format!("Call {} on {}?", self.tool, self.instance)
                } else {
                    format!("{said}?")
                }
            }
        }
    }
}

/// A description's first sentence or clause (up to `;`, `. ` or a line's
/// end).
fn first_clause(description: &str) -> &str {
    let end = [";", ". ", "\n"]
        .iter()
        .filter_map(|stop| description.find(stop))
        .min()
        .unwrap_or(description.len());
    &description[..end]
}

/// `10 min`, `45 s`, `1 h 30 min`: a wait, for people.
fn wait_text(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 if s.is_multiple_of(60) => format!("{} min", s / 60),
        120..=7199 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// Typed text as a person reads it: printable runs in backticks, keys by
/// name (`make test` ⏎, Ctrl-C), at most `max` characters of it shown.
pub fn typed(text: &str, max: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run = String::new();
    let mut cut = false;
    for (shown, c) in text.chars().enumerate() {
        if shown >= max {
            cut = true;
            break;
        }
        let key = match c {
            '\r' => Some("⏎".to_string()),
            '\n' => Some("↵".to_string()),
            '\t' => Some("Tab".to_string()),
            '\u{1b}' => Some("Esc".to_string()),
            '\u{7f}' => Some("Backspace".to_string()),
            c if (c as u32) < 0x20 => Some(format!("Ctrl-{}", char::from(b'@' + c as u8))),
            c if c.is_control() => Some(format!("U+{:04X}", c as u32)),
            _ => None,
        };
        match key {
            Some(key) => {
                if !run.is_empty() {
                    parts.push(format!("`{}`", std::mem::take(&mut run)));
                }
                parts.push(key);
            }
            None => run.push(c),
        }
    }
    if !run.is_empty() {
        parts.push(format!("`{run}`"));
    }
    if cut {
        parts.push("…".to_string());
    }
    if parts.is_empty() {
        "nothing".to_string()
    } else {
        parts.join(" ")
    }
}

/// `description` with each `` `name` `` that `args` has replaced by its
/// value (strings as they are, the rest as JSON), so the tool's own words
/// say what this call does.
fn with_arguments(description: &str, args: &Value) -> String {
    let mut out = String::new();
    let mut rest = description;
    while let Some(open) = rest.find('`') {
        let Some(close) = rest[open + 1..].find('`').map(|c| open + 1 + c) else {
            break;
        };
        let name = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        match args.get(name) {
            Some(Value::String(s)) => out.push_str(&format!("\"{s}\"")),
            Some(value) => out.push_str(&value.to_string()),
            None => out.push_str(&rest[open..=close]),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
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
            HeldAction::Input => ["text", "command", "keys"]
                .iter()
                .find_map(|k| self.args.get(*k))
                .map(Value::to_string)
                .unwrap_or_default(),
            HeldAction::Close | HeldAction::Reload | HeldAction::Record => String::new(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn held(action: HeldAction, tool: &str, description: &str, args: Value) -> HeldCall {
        HeldCall {
            action,
            call: "%3".into(),
            instance: "shell:build".into(),
            tool: tool.into(),
            description: description.into(),
            args,
            revision: String::new(),
            client: None,
            since: "2026-12-03T08:42:05.000Z".into(),
            waited_ms: 0,
            timeout_ms: 600_000,
        }
    }

    #[test]
    fn what_waits_in_plain_words_with_its_deadline() {
        let typing = held(
            HeldAction::Input,
            "input",
            "",
            json!({"text": "make test\r\u{3}"}),
        );
        assert_eq!(
            typing.plainly(),
            "Type `make test` ⏎ Ctrl-C into shell:build?"
        );
        assert_eq!(typing.deadline_text(), "08:52:05 UTC (10 min)");
        let call = held(
            HeldAction::Call,
            "increment",
            "Add `amount` (default 1) to the counter; answers the new value.",
            json!({"amount": 3}),
        );
        assert_eq!(call.plainly(), "Add 3 (default 1) to the counter?");
        let bare = held(HeldAction::Call, "reset", "", json!({}));
        assert_eq!(bare.plainly(), "Call reset on shell:build?");
        let close = held(HeldAction::Close, "close", "", json!({}));
        assert_eq!(close.plainly(), "Close shell:build (its program ends)?");
        let run = held(
            HeldAction::Input,
            "run",
            "",
            json!({"command": "make test"}),
        );
        assert_eq!(
            run.plainly(),
            "Run `make test` at the prompt of shell:build?"
        );
        let keys = held(
            HeldAction::Input,
            "keys",
            "",
            json!({"text": "q", "keys": ["Enter", "C-c"]}),
        );
        assert_eq!(
            keys.plainly(),
            "Type `q` then press Enter C-c in shell:build?"
        );
        assert_eq!(typed(&"x".repeat(60), 5), "`xxxxx` …");
        assert_eq!(typed("", 5), "nothing");
    }
}
