//! Consent: who approves what agents do to an instance ([`ApprovalPolicy`],
//! [`Owner`], [`ConsentChange`]), an action that waits for a person
//! ([`HeldCall`]), and the decisions the approval log keeps
//! ([`ConsentDecision`], [`ApprovalLogEntry`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ClientKind, EchoOffTyping};

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
    /// record (and for input and keys at a prompt with echo off: see
    /// `echo_off`).
    pub args: Value,
    /// Input or keys at a prompt with echo off (a password): how much
    /// would be typed, shown and kept in place of the text and keys, which
    /// `args` then leaves out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_off: Option<EchoOffTyping>,
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
    /// question, whole (never cut) and escaped ([`crate::escape`]): `Type
    /// `make test` ⏎ into shell:build?`, `Type `q` then press Enter C-c in
    /// shell:build?`, `Close shell:build?`, and for a call the first clause
    /// of the tool's description with the arguments it names put in (`Add 3
    /// (default 1) to the counter?`).
    pub fn plainly(&self) -> String {
        if let (HeldAction::Input, Some(typing)) = (self.action, &self.echo_off) {
            // `type 14 characters at a prompt with echo off (a password?)`
            let asked = typing.asked();
            let mut chars = asked.chars();
            let first = chars.next().map(|c| c.to_ascii_uppercase());
            return format!(
                "{}{} into {}?",
                first.map(String::from).unwrap_or_default(),
                chars.as_str(),
                self.instance
            );
        }
        crate::escape::escaped(&self.plainly_raw())
    }

    /// [`Self::plainly`], and for a call its tool and arguments (a tool's
    /// description may not name them all): `Add 2 to the counter? ·
    /// increment {"amount":2}`; escaped.
    pub fn plainly_with_call(&self) -> String {
        match self.action {
            HeldAction::Call => format!(
                "{} · {} {}",
                self.plainly(),
                crate::escape::escaped(&self.tool),
                crate::escape::json(&self.args)
            ),
            _ => self.plainly(),
        }
    }

    /// [`Self::plainly`] in at most `max` characters: whole when it fits,
    /// else cut (never inside an escape) with how much it hides and where
    /// it shows whole (`… 163 more characters: `tickloop approvals` shows
    /// all`). For a place that must be short: a view's last row, a
    /// desktop notification.
    pub fn plainly_within(&self, max: usize) -> String {
        crate::escape::within(&self.plainly(), max, |hidden| {
            format!("… {hidden} more characters: `tickloop approvals` shows all")
        })
    }

    fn plainly_raw(&self) -> String {
        match self.action {
            HeldAction::Input if self.tool == "run" => format!(
                "Run {} at the prompt of {}?",
                typing(&self.tool, &self.args),
                self.instance
            ),
            HeldAction::Input if self.tool == "keys" && self.args.get("text").is_none() => {
                format!(
                    "Press {} in {}?",
                    typing(&self.tool, &self.args),
                    self.instance
                )
            }
            HeldAction::Input => format!(
                "Type {} {} {}?",
                typing(&self.tool, &self.args),
                if self.tool == "keys" { "in" } else { "into" },
                self.instance
            ),
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

/// What an agent's typing types, for people, not yet escaped: `input`'s
/// text ([`typed`]), `run`'s command, `keys`' text then its keys by name
/// (`` `echo hi` then press C-a r m Space Enter ``; `keys` without text:
/// the keys alone).
pub(super) fn typing(tool: &str, args: &Value) -> String {
    let text = args.get("text").and_then(Value::as_str);
    match tool {
        "run" => typed(args.get("command").and_then(Value::as_str).unwrap_or("")),
        "keys" => {
            let keys = key_names(args.get("keys"));
            match text {
                Some(text) => format!("{} then press {keys}", typed(text)),
                None => keys,
            }
        }
        _ => typed(text.unwrap_or("")),
    }
}

/// Key names as [`crate::keys`] writes them (`C-a`, not `^a` or `c-A`); a
/// name that is no key as the agent sent it; `no keys` for none.
fn key_names(keys: Option<&Value>) -> String {
    let names: Vec<String> = keys
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|k| match k.as_str() {
            Some(name) => crate::keys::parse(name)
                .map_or_else(|_| name.to_string(), |pressed| crate::keys::name(&pressed)),
            None => k.to_string(),
        })
        .collect();
    if names.is_empty() {
        "no keys".to_string()
    } else {
        names.join(" ")
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

/// Typed text as a person reads it, whole: printable runs in backticks,
/// the keys a keyboard types for C0 controls and DEL by name (`make test`
/// ⏎, Ctrl-C). Not yet escaped: every other character that needs it is
/// escaped with the sentence it goes in ([`crate::escape::escaped`]).
fn typed(text: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut run = String::new();
    for c in text.chars() {
        let key = match c {
            '\r' => Some("⏎".to_string()),
            '\n' => Some("↵".to_string()),
            '\t' => Some("Tab".to_string()),
            '\u{1b}' => Some("Esc".to_string()),
            '\u{7f}' => Some("Backspace".to_string()),
            c if (c as u32) < 0x20 => Some(format!("Ctrl-{}", char::from(b'@' + c as u8))),
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
    /// Input or keys at a prompt with echo off: how much, in place of the
    /// text and keys (see [`HeldCall::echo_off`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_off: Option<EchoOffTyping>,
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
    /// What was asked, for people, escaped ([`crate::escape`]):
    /// `increment {"amount":2}`, `input `ls` ⏎`, `keys `q` then press
    /// Enter`, `close`; past `width` characters cut with how many more
    /// there are.
    pub fn what(&self, width: usize) -> String {
        if let (HeldAction::Input, Some(typing)) = (self.action, &self.echo_off) {
            return format!("{} {}", self.tool, typing.what());
        }
        let raw = match self.action {
            HeldAction::Call => format!("{} {}", self.tool, self.args),
            HeldAction::Input => format!("{} {}", self.tool, typing(&self.tool, &self.args)),
            HeldAction::Close | HeldAction::Reload | HeldAction::Record => self.tool.clone(),
        };
        crate::escape::within(&crate::escape::escaped(&raw), width, |hidden| {
            format!(" … {hidden} more characters")
        })
    }

    /// The decision, for people: `waits for the person`, `approved by the
    /// person (monitor)`, `refused by the person (cli): not now`, `denied
    /// by its policy`, `timed out`.
    pub fn verdict(&self) -> String {
        self.verdict_of("the person")
    }

    /// [`Self::verdict`] said to the person: `waits for you`, `approved by
    /// you (monitor)`, `refused by you (cli): not now` (their activity, on
    /// their terminal, the Monitor and the web page).
    pub fn verdict_to_you(&self) -> String {
        self.verdict_of("you")
    }

    fn verdict_of(&self, person: &str) -> String {
        let by = match self.by.as_str() {
            "tickhost" | "policy" | "config" => "tickhost".to_string(),
            "mcp-host" => format!("{person}, in the agent host"),
            by => format!("{person} ({by})"),
        };
        let mut text = match self.decision.as_str() {
            "held" => format!("waits for {person}"),
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
            text.push_str(&crate::escape::escaped(reason));
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
            echo_off: None,
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
        assert_eq!(typed(""), "nothing");
    }

    #[test]
    fn the_question_is_whole_its_keys_named_and_its_controls_escaped() {
        // 150 spaces hide nothing: the tail is in the question.
        let hidden_tail = format!("ls{};touch FILE", " ".repeat(150));
        let run = held(
            HeldAction::Input,
            "run",
            "",
            json!({"command": hidden_tail}),
        );
        assert_eq!(
            run.plainly(),
            format!("Run `{hidden_tail}` at the prompt of shell:build?")
        );
        // Text with its keys, the keys by their canonical names.
        let keys = held(
            HeldAction::Input,
            "keys",
            "",
            json!({"text": "echo looks-harmless", "keys": ["^a", "r", "m", "Space", "-", "r", "f", "space", "x", "enter"]}),
        );
        assert_eq!(
            keys.plainly(),
            "Type `echo looks-harmless` then press C-a r m Space - r f Space x Enter in shell:build?"
        );
        let bare = held(HeldAction::Input, "keys", "", json!({"keys": ["C-c"]}));
        assert_eq!(bare.plainly(), "Press C-c in shell:build?");
        // Bidi and zero-width characters escaped, C0 named as keys.
        let trojan = held(
            HeldAction::Input,
            "input",
            "",
            json!({"text": "echo safe \u{202e}\u{2066}; touch F\u{2069} \u{2066}#\u{2069}\u{202c}\u{200b}\r"}),
        );
        assert_eq!(
            trojan.plainly(),
            "Type `echo safe \\u{202E}\\u{2066}; touch F\\u{2069} \\u{2066}#\\u{2069}\\u{202C}\\u{200B}` ⏎ into shell:build?"
        );
        // A call's description and arguments are escaped too.
        let call = held(
            HeldAction::Call,
            "note",
            "Write `text`.",
            json!({"text": "a\u{2028}b"}),
        );
        assert_eq!(call.plainly(), "Write \"a\\u{2028}b\"?");
    }

    #[test]
    fn a_short_question_says_how_much_it_hides_and_where_it_shows_whole() {
        let command = format!("ls{};touch FILE", " ".repeat(150));
        let run = held(HeldAction::Input, "run", "", json!({"command": command}));
        let whole = run.plainly();
        assert_eq!(run.plainly_within(1000), whole);
        let short = run.plainly_within(100);
        assert_eq!(short.chars().count(), 100, "{short}");
        let hidden = whole.chars().count()
            - (100
                - "… NNN more characters: `tickloop approvals` shows all"
                    .chars()
                    .count());
        assert!(
            short.ends_with(&format!(
                "… {hidden} more characters: `tickloop approvals` shows all"
            )),
            "{short}"
        );
        assert!(short.starts_with("Run `ls  "), "{short}");
        // Never cut inside an escape.
        let bidi = held(
            HeldAction::Input,
            "input",
            "",
            json!({"text": "\u{202e}".repeat(40)}),
        );
        let short = bidi.plainly_within(80);
        let kept = short.split('…').next().unwrap_or_default();
        assert!(kept.ends_with('}') || kept.ends_with('`'), "{short}");
    }

    #[test]
    fn a_decision_says_what_was_typed_with_its_keys_escaped() {
        let decision = |tool: &str, args: Value| ConsentDecision {
            action: if tool == "close" {
                HeldAction::Close
            } else {
                HeldAction::Input
            },
            client: None,
            call: "%1".into(),
            instance: "shell:build".into(),
            tool: tool.into(),
            args,
            revision: String::new(),
            decision: "held".into(),
            by: "tickhost".into(),
            reason: None,
            host: None,
            echo_off: None,
        };
        assert_eq!(
            decision("keys", json!({"text": "echo x", "keys": ["C-a", "Enter"]})).what(120),
            "keys `echo x` then press C-a Enter"
        );
        assert_eq!(
            decision("run", json!({"command": "ls\u{202e}"})).what(120),
            "run `ls\\u{202E}`"
        );
        assert_eq!(decision("close", json!({})).what(120), "close");
        let long = decision("input", json!({"text": "y".repeat(300)})).what(60);
        assert!(long.ends_with(" more characters"), "{long}");
        assert!(long.chars().count() <= 60, "{long}");
    }

    #[test]
    fn typing_with_echo_off_is_asked_as_how_much_never_what() {
        let secret = HeldCall {
            echo_off: Some(EchoOffTyping::of::<&str>(Some("Hunter2Secret!"), &[])),
            ..held(HeldAction::Input, "input", "", json!({}))
        };
        assert_eq!(
            secret.plainly(),
            "Type 14 characters at a prompt with echo off (a password?) into shell:build?"
        );
    }
}
