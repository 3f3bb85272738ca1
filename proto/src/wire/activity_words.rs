//! The activity record in words, for people: what a request did (`run
//! `make test``, `keys C-c Enter`, `increment {"amount":2}`) and what it
//! came to (`exited 2 (3.1 s)`, `still running after 10 s`, `not typed:
//! the prompt had text`, `executed 3 ms`), escaped as everything an agent
//! or a program sent is shown ([`crate::escape`]). The CLI, the Monitor,
//! the activity overlay and the web page say the same.

use serde_json::{json, Value};

use super::consent::typing;
use super::{ActivityOutcome, NotTypedWhy, RequestActivity, TerminalOutcome};

/// What an [`super::ActivityEvent::ImagesDropped`] says: `3 oldest images
/// dropped (120 kB) to keep images under 32 MB (image_memory_mb)`.
pub fn images_dropped_words(images: u64, bytes: u64, too_large: u64, limit_mb: u64) -> String {
    let plural = |n: u64| if n == 1 { "" } else { "s" };
    let mut parts = Vec::new();
    if images > 0 {
        parts.push(format!(
            "{images} oldest image{} dropped ({} kB) to keep images under {limit_mb} MB (image_memory_mb)",
            plural(images),
            bytes / 1024
        ));
    }
    if too_large > 0 {
        parts.push(format!(
            "{too_large} image{} larger than {limit_mb} MB not kept",
            plural(too_large)
        ));
    }
    parts.join("; ")
}

impl RequestActivity {
    /// What was asked, whole and escaped, past `width` characters cut with
    /// how many more there are: `run `make test``, `keys C-c Enter`,
    /// `input `ls` ⏎`, `increment {"amount":2}`, `read`. Typing at a
    /// prompt with echo off is only its method: how much is in
    /// [`RequestActivity::came_to`].
    pub fn what(&self, width: usize) -> String {
        let method = self.method.trim_start_matches("tick/");
        let raw = match (self.method.as_str(), &self.args) {
            (_, _) if self.echo_off.is_some() => return method.to_string(),
            ("tick/call", args) => {
                let args = args.as_ref().map(crate::escape::json).unwrap_or_default();
                let tool = crate::escape::escaped(self.tool.as_deref().unwrap_or("?"));
                return cut(&format!("{tool} {args}"), width);
            }
            ("input" | "keys" | "run", Some(args)) => {
                format!("{method} {}", typing(method, &as_held(method, args)))
            }
            _ => method.to_string(),
        };
        cut(&crate::escape::escaped(&raw), width)
    }

    /// What it came to, for people: for typing and `run`, in words
    /// (`typed`, `pressed`, `exited 2 (3.1 s)`, `still running after
    /// 10 s`, `not typed: the prompt had text`, `typed 14 characters with
    /// echo off`); for the rest the outcome class with the error code
    /// and duration (`executed -32000 3 ms`), and why it failed.
    pub fn came_to(&self) -> String {
        if let Some(terminal) = &self.terminal {
            return match (terminal, &self.echo_off) {
                (TerminalOutcome::Typed, Some(typing)) => typing.said(),
                (TerminalOutcome::Typed, None) if self.method == "keys" => "pressed".into(),
                (terminal, _) => terminal.words(self.duration_ms),
            };
        }
        let mut text = self.outcome.label().to_string();
        if let Some(code) = self.error_code {
            text.push_str(&format!(" {code}"));
        }
        text.push_str(&format!(" {} ms", self.duration_ms));
        if let (ActivityOutcome::Failed, Some(error)) = (self.outcome, &self.error) {
            text.push_str(&format!(": {}", crate::escape::escaped(error)));
        }
        text
    }

    /// Whether it came to what its agent asked for: `Some(false)` for a
    /// command that exited with another status than 0, a run still
    /// running at its timeout or one that typed nothing, and a request
    /// that failed or was not executed; `None` when it is not known.
    pub fn went_well(&self) -> Option<bool> {
        match (&self.terminal, self.outcome) {
            (Some(TerminalOutcome::Typed), _) => Some(true),
            (Some(TerminalOutcome::Exited { status }), _) => status.map(|s| s == 0),
            (Some(TerminalOutcome::StillRunning { .. } | TerminalOutcome::NotTyped { .. }), _) => {
                Some(false)
            }
            (None, ActivityOutcome::Executed) => Some(self.error_code.is_none()),
            (None, ActivityOutcome::Ok) => Some(true),
            (None, ActivityOutcome::NotExecuted | ActivityOutcome::Failed) => Some(false),
            (None, ActivityOutcome::Unknown) => None,
        }
    }
}

impl TerminalOutcome {
    /// In words, with how long a run took (`duration_ms`) where it says.
    pub fn words(&self, duration_ms: u64) -> String {
        match self {
            TerminalOutcome::Typed => "typed".into(),
            TerminalOutcome::Exited {
                status: Some(status),
            } => {
                format!("exited {status} ({})", duration(duration_ms))
            }
            TerminalOutcome::Exited { status: None } => format!(
                "ended, its status not said by the shell ({})",
                duration(duration_ms)
            ),
            TerminalOutcome::StillRunning {
                after_ms,
                foreground,
            } => {
                let mut text = format!("still running after {}", seconds(*after_ms));
                if let Some(fg) = foreground {
                    text.push_str(&format!(
                        "; {} holds the terminal",
                        crate::escape::escaped(&fg.program)
                    ));
                }
                text
            }
            TerminalOutcome::NotTyped { why } => format!("not typed: {}", why.words()),
        }
    }
}

impl NotTypedWhy {
    /// `the prompt had text`, `not at its prompt`, ...
    pub fn words(self) -> &'static str {
        match self {
            NotTypedWhy::PromptHadText => "the prompt had text",
            NotTypedWhy::NotAtPrompt => "not at its prompt",
            NotTypedWhy::NoIntegration => "no shell integration",
            NotTypedWhy::NoPrompt => "no prompt came in time",
            NotTypedWhy::AnotherRun => "another run was being typed",
            NotTypedWhy::Unanswered => "keys typed before had no answer",
        }
    }
}

/// The arguments of `input`, `keys` or `run` as the activity keeps them
/// (the text, the keys or `{text, keys}`, the command) in the shape a
/// held action has them (`{"text"}`, `{"keys"}`, `{"command"}`).
fn as_held(method: &str, args: &Value) -> Value {
    match (method, args) {
        ("run", Value::String(command)) => json!({ "command": command }),
        ("keys", Value::Array(_)) => json!({ "keys": args }),
        ("keys", Value::Object(_)) => args.clone(),
        (_, Value::String(text)) => json!({ "text": text }),
        // Cut to the record's bound (a string of JSON), or not a shape
        // this build writes: as JSON.
        (_, other) => json!({ "text": other.to_string() }),
    }
}

/// Escaped text past `width` characters cut, saying how many more.
fn cut(shown: &str, width: usize) -> String {
    crate::escape::within(shown, width, |hidden| {
        format!(" … {hidden} more characters")
    })
}

/// `3 ms`, `1.2 s`, `2 min 5 s`.
fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1_000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min {} s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

/// `10 s`, `2 min`, `2 min 30 s` (whole seconds).
fn seconds(ms: u64) -> String {
    let s = (ms + 500) / 1000;
    match s {
        0..=119 => format!("{s} s"),
        _ if s.is_multiple_of(60) => format!("{} min", s / 60),
        _ => format!("{} min {} s", s / 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ClientKind, EchoOffTyping, Foreground, ForegroundKind};

    fn request(method: &str, args: Value, terminal: Option<TerminalOutcome>) -> RequestActivity {
        RequestActivity {
            client: Some(ClientKind::Cli),
            method: method.into(),
            tool: None,
            args: Some(args),
            echo_off: None,
            revision: None,
            outcome: ActivityOutcome::Ok,
            error_code: None,
            error: None,
            result: None,
            duration_ms: 3100,
            terminal,
        }
    }

    fn line(r: &RequestActivity) -> String {
        format!("{} → {}", r.what(200), r.came_to())
    }

    #[test]
    fn a_run_says_its_command_and_how_it_ended() {
        let exited = |status| Some(TerminalOutcome::Exited { status });
        let run = request("run", json!("make test"), exited(Some(0)));
        assert_eq!(line(&run), "run `make test` → exited 0 (3.1 s)");
        assert_eq!(run.went_well(), Some(true));
        let failed = request("run", json!("false"), exited(Some(1)));
        assert_eq!(line(&failed), "run `false` → exited 1 (3.1 s)");
        assert_eq!(failed.went_well(), Some(false));
        let late = request(
            "run",
            json!("git log"),
            Some(TerminalOutcome::StillRunning {
                after_ms: 10_004,
                foreground: Some(Foreground {
                    program: "less".into(),
                    kind: ForegroundKind::Pager,
                    keys: vec!["q".into()],
                }),
            }),
        );
        assert_eq!(
            line(&late),
            "run `git log` → still running after 10 s; less holds the terminal"
        );
        assert_eq!(late.went_well(), Some(false));
        let refused = request(
            "run",
            json!("ls"),
            Some(TerminalOutcome::NotTyped {
                why: NotTypedWhy::PromptHadText,
            }),
        );
        assert_eq!(line(&refused), "run `ls` → not typed: the prompt had text");
        for r in [&failed, &late, &refused] {
            assert!(!r.came_to().starts_with("ok"), "{}", line(r));
        }
    }

    #[test]
    fn typing_names_the_text_and_the_keys_escaped() {
        let typed = Some(TerminalOutcome::Typed);
        let input = request("input", json!("ls\r"), typed.clone());
        assert_eq!(line(&input), "input `ls` ⏎ → typed");
        let keys = request("keys", json!(["C-c", "Enter"]), typed.clone());
        assert_eq!(line(&keys), "keys C-c Enter → pressed");
        let both = request(
            "keys",
            json!({"text": "q", "keys": ["Enter"]}),
            typed.clone(),
        );
        assert_eq!(line(&both), "keys `q` then press Enter → pressed");
        // A bidi override an agent typed is shown escaped, never applied.
        let sneaky = request("input", json!("echo \u{202E}gnp.exe"), typed.clone());
        assert_eq!(line(&sneaky), "input `echo \\u{202E}gnp.exe` → typed");
        let mut password = request("input", json!(null), typed);
        password.args = None;
        password.echo_off = Some(EchoOffTyping::of::<&str>(Some("Hunter2Secret!"), &[]));
        assert_eq!(line(&password), "input → typed 14 characters with echo off");
    }

    #[test]
    fn the_rest_keep_their_outcome_class() {
        let mut call = request("tick/call", json!({"amount": 2}), None);
        call.tool = Some("increment".into());
        call.outcome = ActivityOutcome::Executed;
        call.duration_ms = 3;
        assert_eq!(line(&call), r#"increment {"amount":2} → executed 3 ms"#);
        let mut read = request("tick/read", json!(null), None);
        read.args = None;
        read.duration_ms = 1;
        assert_eq!(line(&read), "read → ok 1 ms");
        read.outcome = ActivityOutcome::Failed;
        read.error = Some("the Tick did not answer".into());
        assert_eq!(line(&read), "read → failed 1 ms: the Tick did not answer");
        let long = request("run", json!("x".repeat(300)), None);
        assert!(
            long.what(40).ends_with(" more characters"),
            "{}",
            long.what(40)
        );
    }
}
