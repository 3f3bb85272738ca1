//! An instance's terminal used by an agent, the same on every hop: keys by
//! name, waits the launcher is told about ([`WaitRequest`] answered by a
//! [`WaitReply`]), a command run at a shell's prompt ([`RunRequest`],
//! [`RunReply`]), a shell's commands as state ([`ShellState`]), which
//! `read shell:NAME` returns and deliveries carry, and in short
//! ([`ShellSummary`]), as `list` gives it, and typing at a prompt
//! that does not echo it, kept only as how much ([`EchoOffTyping`]).

#[cfg(doc)]
use super::{ClientRequest, LauncherRequest};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::EndInfo;

/// The default of `wait --timeout` and `run --timeout`, in ms.
pub const DEFAULT_WAIT_MS: u64 = 30_000;

/// The longest wait accepted, in ms (a day): a wait is answered by its
/// launcher, which holds it until then.
pub const MAX_WAIT_MS: u64 = 86_400_000;

/// What to wait for on an instance's terminal: exactly one of `text`,
/// `quiet_ms`, `prompt` and `ended`. Carried as it is by
/// [`ClientRequest::Wait`] and [`LauncherRequest::Wait`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct WaitRequest {
    /// A regular expression (Rust `regex` syntax) matched against each
    /// line of output that arrives after the wait starts (ANSI sequences
    /// taken out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// With `text`: a match already on the screen counts too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screen: bool,
    /// No output for this many ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
    /// The shell is at its prompt (needs shell integration).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub prompt: bool,
    /// The program has ended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ended: bool,
    /// How long to wait, in ms; then the answer says `timed_out`.
    pub timeout_ms: u64,
}

impl WaitRequest {
    /// Why this wait cannot be waited for, when it cannot (nothing, or more
    /// than one thing, to wait for; a timeout out of range).
    pub fn problem(&self) -> Option<String> {
        let asked = [
            self.text.is_some(),
            self.quiet_ms.is_some(),
            self.prompt,
            self.ended,
        ]
        .into_iter()
        .filter(|b| *b)
        .count();
        if asked != 1 {
            return Some(
                "wait for exactly one of: text (a regular expression), quiet (ms without output), prompt, ended".into(),
            );
        }
        if self.screen && self.text.is_none() {
            return Some("`screen` goes with `text` only".into());
        }
        if self.timeout_ms == 0 || self.timeout_ms > MAX_WAIT_MS {
            return Some(format!(
                "the timeout must be between 1 ms and {} s",
                MAX_WAIT_MS / 1000
            ));
        }
        if self.quiet_ms == Some(0) {
            return Some("quiet needs at least 1 ms".into());
        }
        None
    }
}

/// The answer to a wait: what happened, with the screen as it was then.
/// A wait that ran out is an answer too (`timed_out`), not an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WaitReply {
    /// The wait ran out before what it waited for happened.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// How long it waited, in ms.
    pub waited_ms: u64,
    /// `text`: what the expression matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// `text`: the whole line it is on (ANSI sequences taken out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    /// `prompt`: the shell's state then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<ShellState>,
    /// `ended`: how the program ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended: Option<EndInfo>,
    /// The screen when the wait ended, one string per row, trailing blanks
    /// and rows trimmed.
    pub screen: Vec<String>,
}

/// A command to type at a shell's prompt, run to its end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunRequest {
    /// The command line, as typed at the prompt (one line).
    pub command: String,
    /// How long to wait for its end, in ms; it keeps running after.
    pub timeout_ms: u64,
}

impl RunRequest {
    /// Why this command cannot be typed (nothing typed, nobody asked).
    pub fn problem(&self) -> Option<String> {
        if self.command.trim().is_empty() {
            return Some("run needs a command".into());
        }
        if self.command.contains(['\n', '\r']) {
            return Some(
                "run takes one line: join the commands with `;` or `&&` (or write a script and run it)"
                    .into(),
            );
        }
        if self.timeout_ms == 0 || self.timeout_ms > MAX_WAIT_MS {
            return Some(format!(
                "the timeout must be between 1 ms and {} s",
                MAX_WAIT_MS / 1000
            ));
        }
        None
    }
}

/// The answer to a run: the command as the shell's state records it, or,
/// after a timeout, how it is still running.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunReply {
    /// The wait ran out: the command still runs (it is never killed).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// The command, ended or (after a timeout) running.
    pub command: ShellCommand,
    /// The shell's working directory after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// After a timeout: the program that holds the terminal, when it is a
    /// pager or a full-screen program waiting for keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub foreground: Option<Foreground>,
}

/// A program that holds a shell's terminal waiting for keys, and how to
/// leave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Foreground {
    /// Its name (`less`, `vim`), as the system lists its process.
    pub program: String,
    pub kind: ForegroundKind,
    /// Keys by name (as `keys` takes them) that leave it; empty when not
    /// known.
    pub keys: Vec<String>,
}

/// What kind of program holds the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForegroundKind {
    /// A pager (`less`, `more`) showing the command's output.
    Pager,
    /// A program that draws the whole screen (`vim`, `top`), or that
    /// switched to the alternate screen.
    FullScreen,
}

impl Foreground {
    /// What holds the terminal, and the keys that leave it, in words
    /// (each front end adds its own command to press them).
    pub fn says(&self) -> String {
        let what = match self.kind {
            ForegroundKind::Pager => "a pager",
            ForegroundKind::FullScreen => "a full-screen program",
        };
        let keys = if self.keys.is_empty() {
            "its own keys leave it (look at its screen)".to_string()
        } else {
            format!("the keys {} leave it", self.keys.join(" "))
        };
        format!(
            "{} ({what}) holds the terminal, waiting for keys; {keys}",
            self.program
        )
    }
}

/// How a shell instance's commands are known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationKind {
    /// Tickloop's integration was injected into the shell at its start.
    Injected,
    /// The shell's prompt emits OSC 133 marks itself (fish 4, starship, a
    /// person's own prompt); nothing was injected.
    Marks,
}

/// A shell's integration: which shell, and how its commands are known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShellIntegration {
    /// `bash`, `zsh`, `fish`, or the program's name when only its marks
    /// are read.
    pub shell: String,
    pub kind: IntegrationKind,
    /// A prompt mark has been seen: the integration works.
    pub active: bool,
}

/// A shell's commands as state: what `read shell:NAME` returns as `data`,
/// and what each delivery carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShellState {
    /// The working directory the shell last reported (OSC 7).
    pub cwd: Option<String>,
    /// The shell shows its prompt and runs nothing.
    pub at_prompt: bool,
    /// The command running now.
    pub running: Option<RunningCommand>,
    /// The last commands that ended, oldest first (at most
    /// [`crate::shell::KEPT_COMMANDS`]).
    pub commands: Vec<ShellCommand>,
    /// Commands started since the shell started (each has its `n`).
    pub commands_total: u64,
}

/// A command running at a shell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RunningCommand {
    pub n: u64,
    /// The command line (empty when the shell did not say it).
    pub command: String,
    /// When it started (RFC 3339).
    pub started: String,
}

/// A command of a shell, with its output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShellCommand {
    /// Its number: the shell's first command is 1.
    pub n: u64,
    pub command: String,
    /// Its exit status (`null` while it runs, or when the shell did not
    /// say); 128+N when signal N ended it (130: Ctrl-C).
    pub exit: Option<i32>,
    pub started: String,
    /// When it ended (`null` while it runs).
    pub ended: Option<String>,
    /// What it printed, as lines of text (ANSI sequences taken out),
    /// cut to [`crate::shell::OUTPUT_BOUND`] bytes: its beginning and end.
    pub output: String,
    /// Set when `output` was cut: what was left out, and where to find it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_cut: Option<OutputCut>,
}

/// What was cut from the middle of a command's output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OutputCut {
    pub lines: u64,
    pub bytes: u64,
    /// A sentence saying so, for people and agents.
    pub note: String,
}

/// A shell's state in short, as `list` gives it for a `shell:` instance
/// with shell integration (the Monitor's and the web page's rows, `list`'s
/// table): where it is, and what it runs or last ran, without any output.
/// `read` has the whole of it ([`ShellState`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShellSummary {
    /// The state's `seq`, as `read` gives it (each command's start and end
    /// is one update).
    pub seq: u64,
    /// The working directory the shell last reported (OSC 7).
    pub cwd: Option<String>,
    /// The shell shows its prompt and runs nothing.
    pub at_prompt: bool,
    /// The command running now.
    pub running: Option<RunningCommand>,
    /// The last command that ended.
    pub last: Option<LastCommand>,
    /// Commands started since the shell started.
    pub commands_total: u64,
}

/// The last command a shell ran: a [`ShellCommand`] without its output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct LastCommand {
    pub n: u64,
    /// The command line (empty when the shell did not say it).
    pub command: String,
    /// Its exit status (`null` when the shell did not say); 128+N when
    /// signal N ended it.
    pub exit: Option<i32>,
    pub started: String,
    pub ended: Option<String>,
    /// From `started` to `ended`, when both are known.
    pub duration_ms: Option<u64>,
}

impl ShellSummary {
    /// The summary of a shell's state as its launcher publishes it (`data`,
    /// a [`ShellState`] as JSON, at `seq`); `None` when `data` is not one.
    /// Only the fields shown are read: the commands' output is left where
    /// it is.
    pub fn of_state(seq: u64, data: &serde_json::Value) -> Option<ShellSummary> {
        let object = data.as_object()?;
        let running = match object.get("running") {
            None | Some(serde_json::Value::Null) => None,
            Some(running) => Some(RunningCommand::deserialize(running).ok()?),
        };
        let last = match object.get("commands").and_then(|c| c.as_array()?.last()) {
            None => None,
            Some(command) => Some(LastCommand::of(command)?),
        };
        Some(ShellSummary {
            seq,
            cwd: object.get("cwd")?.as_str().map(str::to_string),
            at_prompt: object.get("at_prompt")?.as_bool()?,
            running,
            last,
            commands_total: object.get("commands_total")?.as_u64()?,
        })
    }
}

impl LastCommand {
    /// A [`ShellCommand`] as JSON, without its output.
    fn of(command: &serde_json::Value) -> Option<LastCommand> {
        let text = |name: &str| command.get(name)?.as_str().map(str::to_string);
        let started = text("started")?;
        let ended = text("ended");
        let duration_ms = ended
            .as_deref()
            .and_then(|ended| between_ms(&started, ended));
        Some(LastCommand {
            n: command.get("n")?.as_u64()?,
            command: text("command")?,
            exit: match command.get("exit") {
                None | Some(serde_json::Value::Null) => None,
                Some(exit) => Some(i32::try_from(exit.as_i64()?).ok()?),
            },
            started,
            ended,
            duration_ms,
        })
    }
}

/// Milliseconds from one RFC 3339 time to a later one.
fn between_ms(from: &str, to: &str) -> Option<u64> {
    use time::format_description::well_known::Rfc3339;
    let from = time::OffsetDateTime::parse(from, &Rfc3339).ok()?;
    let to = time::OffsetDateTime::parse(to, &Rfc3339).ok()?;
    u64::try_from((to - from).whole_milliseconds()).ok()
}

/// Typing at a prompt that does not echo it (a password: `read -s`, sudo,
/// ssh, gpg): the terminal's ECHO is off while its line discipline is in
/// canonical mode (ICANON), so the text goes to a program reading a line
/// it does not show. Such typing is kept, shown and answered only as how
/// much was typed, never as what (`typed 14 characters with echo off`).
/// (A shell's line editor or a full-screen program turns ECHO off too, in
/// raw mode, and draws what is typed itself: that typing is visible, and
/// kept as it is.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EchoOffTyping {
    /// Characters of text typed.
    pub characters: u64,
    /// Keys pressed by name after the text.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub keys: u64,
    /// Of the characters and keys, how many come after the first that ends
    /// a line (Enter, CR, LF, C-m, C-j): the prompt has its line by then,
    /// and they go to whatever reads next.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub after_line_end: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Whether key `name` (a tmux name) ends a line.
fn ends_line(name: &str) -> bool {
    use crate::attach::Key;
    use crate::keys::{KeypadKey, Pressed};
    match crate::keys::parse(name) {
        Ok(Pressed::Key { key, mods }) => {
            key == Key::Enter || (mods.ctrl && matches!(key, Key::Char('m' | 'j' | 'M' | 'J')))
        }
        Ok(Pressed::Keypad { key, .. }) => key == KeypadKey::Enter,
        Err(_) => false,
    }
}

impl EchoOffTyping {
    /// How much `text` and then `keys` (tmux names) type.
    pub fn of<S: AsRef<str>>(text: Option<&str>, keys: &[S]) -> EchoOffTyping {
        let text = text.unwrap_or("");
        let typed = text
            .chars()
            .map(|c| matches!(c, '\r' | '\n'))
            .chain(keys.iter().map(|k| ends_line(k.as_ref())));
        let after_line_end = typed.skip_while(|ends| !ends).skip(1).count();
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        EchoOffTyping {
            characters: count(text.chars().count()),
            keys: count(keys.len()),
            after_line_end: count(after_line_end),
        }
    }

    /// `14 characters`, `14 characters and 1 key`, `2 keys`.
    fn amount(&self) -> String {
        match (self.characters, self.keys) {
            (c, 0) => plural(c, "character"),
            (0, k) => plural(k, "key"),
            (c, k) => format!("{} and {}", plural(c, "character"), plural(k, "key")),
        }
    }

    /// How much, for a record's line: `14 characters with echo off`.
    pub fn what(&self) -> String {
        format!("{} with echo off", self.amount())
    }

    /// What was done, as the records keep it: `typed 14 characters with
    /// echo off`.
    pub fn said(&self) -> String {
        format!("typed {}", self.what())
    }

    /// What would be done, as the person is asked: `type 14 characters at
    /// a prompt with echo off (a password?)`, saying so when some of it
    /// would go past the prompt's line.
    pub fn asked(&self) -> String {
        let mut text = format!(
            "type {} at a prompt with echo off (a password?)",
            self.amount()
        );
        if self.after_line_end > 0 {
            text.push_str(&format!(
                "; {} of them after its Enter, which go to whatever reads next",
                self.after_line_end
            ));
        }
        text
    }
}

/// `1 key`, `2 keys`.
fn plural(n: u64, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_off_typing_is_said_as_how_much_never_what() {
        let password = EchoOffTyping::of::<&str>(Some("Hunter2Secret!"), &[]);
        assert_eq!(password.said(), "typed 14 characters with echo off");
        assert_eq!(
            password.asked(),
            "type 14 characters at a prompt with echo off (a password?)"
        );
        let with_enter = EchoOffTyping::of(Some("Hunter2Secret!"), &["Enter"]);
        assert_eq!(
            with_enter,
            EchoOffTyping {
                characters: 14,
                keys: 1,
                after_line_end: 0
            }
        );
        assert_eq!(
            with_enter.said(),
            "typed 14 characters and 1 key with echo off"
        );
        // Past the prompt's line: said, since another program reads it.
        let more = EchoOffTyping::of(Some("pw\rrm -rf x"), &["C-m"]);
        assert_eq!(more.after_line_end, 9);
        assert!(more
            .asked()
            .ends_with("; 9 of them after its Enter, which go to whatever reads next"));
        let keys = EchoOffTyping::of(None, &["a", "KPEnter"]);
        assert_eq!(keys.said(), "typed 2 keys with echo off");
        assert_eq!(keys.after_line_end, 0);
        assert!(!serde_json::to_string(&password)
            .unwrap_or_default()
            .contains("Hunter"));
    }

    /// The summary `list` gives reads what a launcher publishes: the last
    /// command (status, duration, no output), or the one running.
    #[test]
    fn a_shells_summary_is_its_state_in_short() {
        let state = ShellState {
            cwd: Some("/home/u/src".into()),
            at_prompt: true,
            running: None,
            commands: vec![
                ShellCommand {
                    n: 1,
                    command: "ls".into(),
                    exit: Some(0),
                    started: "2026-12-01T00:00:00Z".into(),
                    ended: Some("2026-12-01T00:00:00.250Z".into()),
                    output: "a b".into(),
                    output_cut: None,
                },
                ShellCommand {
                    n: 2,
                    command: "make test".into(),
                    exit: Some(2),
                    started: "2026-12-01T00:00:01Z".into(),
                    ended: Some("2026-12-01T00:00:04.100Z".into()),
                    output: "x".repeat(4000),
                    output_cut: None,
                },
            ],
            commands_total: 2,
        };
        let data = serde_json::to_value(&state).unwrap_or_default();
        let summary = ShellSummary::of_state(5, &data);
        assert_eq!(
            summary,
            Some(ShellSummary {
                seq: 5,
                cwd: Some("/home/u/src".into()),
                at_prompt: true,
                running: None,
                last: Some(LastCommand {
                    n: 2,
                    command: "make test".into(),
                    exit: Some(2),
                    started: "2026-12-01T00:00:01Z".into(),
                    ended: Some("2026-12-01T00:00:04.100Z".into()),
                    duration_ms: Some(3100),
                }),
                commands_total: 2,
            })
        );
        let running = ShellState {
            at_prompt: false,
            running: Some(RunningCommand {
                n: 3,
                command: "sleep 9".into(),
                started: "2026-12-01T00:00:05Z".into(),
            }),
            commands: Vec::new(),
            commands_total: 3,
            cwd: None,
        };
        let data = serde_json::to_value(&running).unwrap_or_default();
        let summary = ShellSummary::of_state(6, &data).unwrap_or_default();
        assert_eq!(
            summary.running.map(|r| r.command).as_deref(),
            Some("sleep 9")
        );
        assert_eq!(summary.last, None);
        // A Tick's state is not a shell's.
        assert_eq!(
            ShellSummary::of_state(1, &serde_json::json!({"value": 3})),
            None
        );
    }
}
