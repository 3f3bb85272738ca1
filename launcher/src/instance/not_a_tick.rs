//! Telling early that a program opened as a Tick is none: a shell or a
//! terminal program opened without `--shell` (`tickloop open -- bash`).
//!
//! Before it starts, [`reads_commands_from_stdin`] refuses a shell or an
//! interpreter given no script (`bash`, `python3`): it would take the
//! protocol's lines for its commands, so it is not started at all.
//!
//! Until the program first speaks the protocol on its stdout, [`Probe`]
//! watches for the signs: the protocol's first line coming back on stdout
//! (an echo: `cat`), or its terminal showing that the line was read as the
//! program's own input (a shell's "command not found", the line's words)
//! or that the program wants a terminal on its stdin or stdout (vim's
//! warnings). An echo ends the open at once; a sign on the terminal does
//! after [`GRACE`] without a protocol line, so a Tick that prints such
//! words while it starts is not cut short. Before its first reply the
//! program has read one line only, the `tick/describe` request, whose
//! words name no command, so a shell that runs it runs nothing.
//!
//! A failed open of a program that never spoke the protocol carries
//! [`with_hint`], how to open it as a terminal program, unless it only
//! exited: a Tick started with the wrong arguments exits as soon as a
//! terminal program that failed, and then only a sign on its terminal
//! tells them apart.

use tokio::time::{Duration, Instant};

/// How long a sign on the terminal waits for a protocol line before the
/// open fails.
pub(super) const GRACE: Duration = Duration::from_millis(800);

/// The most of stdout kept while looking for the end of a line.
const MAX_PARTIAL: usize = 64 * 1024;

/// What a program's terminal shows when it read the protocol line as its
/// own input, or wants a terminal where the protocol's pipes are
/// (lower case), and what that means.
const SIGNS: [(&str, &str); 10] = [
    (
        "tick/describe",
        "read the protocol's first line as its own input",
    ),
    ("jsonrpc", "read the protocol's first line as its own input"),
    (
        "command not found",
        "ran the protocol's first line as a command",
    ),
    (": not found", "ran the protocol's first line as a command"),
    ("not from a terminal", "wants a terminal on its stdin"),
    ("not to a terminal", "wants a terminal on its stdout"),
    ("not a terminal", "wants a terminal on its stdin or stdout"),
    ("not a tty", "wants a terminal on its stdin or stdout"),
    (
        "inappropriate ioctl",
        "wants a terminal on its stdin or stdout",
    ),
    ("failed tty", "wants a terminal on its stdin or stdout"),
];

/// The signs that a program is no Tick, gathered until it speaks the
/// protocol.
pub(super) struct Probe {
    /// Probing at all: a Tick's first start (not a `shell:` program, not an
    /// artifact's later generation).
    active: bool,
    /// The program wrote a protocol line (a JSON-RPC 2.0 object that is not
    /// an echo): it is a Tick, whatever else it does.
    spoke: bool,
    /// Lines written to the program while probing, to tell an echo.
    written: Vec<Vec<u8>>,
    /// The start of a stdout line not ended yet.
    partial: Vec<u8>,
    /// A sign on the terminal: when it was seen, and what it means.
    suspect: Option<(Instant, String)>,
}

impl Probe {
    pub(super) fn new(active: bool) -> Probe {
        Probe {
            active,
            spoke: false,
            written: Vec::new(),
            partial: Vec::new(),
            suspect: None,
        }
    }

    /// Whether signs are still looked for.
    pub(super) fn probing(&self) -> bool {
        self.active && !self.spoke
    }

    /// The program is up (or its first start is over): no more probing.
    pub(super) fn stop(&mut self) {
        self.active = false;
        self.written.clear();
        self.partial.clear();
        self.suspect = None;
    }

    /// Whether the program never wrote a protocol line.
    pub(super) fn never_spoke(&self) -> bool {
        !self.spoke
    }

    /// Whether its terminal showed a sign that it is no Tick (kept until
    /// a verdict or [`Probe::stop`]).
    pub(super) fn saw_sign(&self) -> bool {
        self.suspect.is_some()
    }

    /// `bytes` were written to the program's stdin.
    pub(super) fn wrote(&mut self, bytes: &[u8]) {
        if !self.probing() {
            return;
        }
        for line in bytes.split(|b| *b == b'\n') {
            let line = trim(line);
            if !line.is_empty() && self.written.len() < 8 {
                self.written.push(line.to_vec());
            }
        }
    }

    /// `bytes` came on the program's stdout; `Some(why)` when they show
    /// it is no Tick (it echoed a line written to it): what it did, to
    /// follow its name.
    pub(super) fn stdout(&mut self, bytes: &[u8]) -> Option<String> {
        if !self.probing() {
            return None;
        }
        self.partial.extend_from_slice(bytes);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            let line = trim(&line);
            if line.is_empty() {
                continue;
            }
            if self.written.iter().any(|w| w == line) {
                return Some("echoed the protocol's first line back on its stdout".into());
            }
            if speaks_protocol(line) {
                self.spoke = true;
                self.suspect = None;
                return None;
            }
        }
        if self.partial.len() > MAX_PARTIAL {
            // A long line is no echo of ours; the session judges it.
            self.stop();
        }
        None
    }

    /// The program's terminal shows `lines` (seen at `now`).
    pub(super) fn screen(&mut self, lines: &[String], now: Instant) {
        if !self.probing() || self.suspect.is_some() {
            return;
        }
        let text = lines.join("\n").to_lowercase();
        if let Some((sign, meaning)) = SIGNS.iter().find(|(sign, _)| text.contains(sign)) {
            let shown = lines
                .iter()
                .find(|l| l.to_lowercase().contains(sign))
                .map(|l| l.trim().chars().take(120).collect::<String>())
                .unwrap_or_default();
            self.suspect = Some((now, format!("{meaning} (its terminal shows {shown:?})")));
        }
    }

    /// When a sign on the terminal turns into a verdict.
    pub(super) fn due(&self) -> Option<Instant> {
        self.suspect
            .as_ref()
            .filter(|_| self.probing())
            .map(|(seen, _)| *seen + GRACE)
    }

    /// `Some(why)` when the program showed a sign and has not spoken the
    /// protocol since, for [`GRACE`]: what it did, to follow its name.
    pub(super) fn verdict(&mut self, now: Instant) -> Option<String> {
        let due = self.due()?;
        if now < due {
            return None;
        }
        self.suspect.take().map(|(_, why)| why)
    }
}

/// Shells and interpreters, which read their commands from stdin when
/// given neither a script nor a command.
const READ_STDIN: [&str; 14] = [
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "tcsh", "csh", "python", "python3",
    "node", "irb",
];

/// `Some(why)` when `argv` is a shell or an interpreter that will read its
/// commands from stdin (no script, no `-c`): where the protocol's lines go,
/// so it would run them, and it cannot be a Tick. Told before it starts,
/// so it never reads one.
pub(super) fn reads_commands_from_stdin(argv: &[String]) -> Option<String> {
    let program = argv.first()?;
    let name = std::path::Path::new(program).file_name()?.to_str()?;
    if !READ_STDIN.contains(&name) {
        return None;
    }
    let args = &argv[1..];
    // A script, or a command given inline (`-c`, `-lc`, `--command`,
    // `-e`, `-m`): the program does not come from stdin.
    let given = args.iter().any(|a| {
        !a.starts_with('-')
            || matches!(a.as_str(), "--command" | "--eval" | "--init-command")
            || (!a.starts_with("--") && a.chars().skip(1).any(|c| matches!(c, 'c' | 'e' | 'm')))
    });
    (!given).then(|| {
        format!(
            "{name} with no script reads its commands from stdin, where the Tick protocol's \
             lines go: it would run them, so it was not started"
        )
    })
}

/// A line without its trailing `\r` and surrounding blanks.
fn trim(line: &[u8]) -> &[u8] {
    line.trim_ascii()
}

/// A JSON-RPC 2.0 object: what only a Tick writes.
fn speaks_protocol(line: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .is_some_and(|v| v.get("jsonrpc").and_then(|j| j.as_str()) == Some("2.0"))
}

/// What follows the program's name in [`with_hint`].
const NEVER_SPOKE: &str = " never spoke the Tick protocol on its stdout: if it is a \
     terminal program rather than a Tick, open it with `tickloop open --shell -- ";

/// The reason of a failed open of `argv` that never spoke the protocol,
/// with how to open it as a terminal program.
pub(super) fn with_hint(reason: &str, argv: &[String]) -> String {
    let program = argv.first().map_or("it", String::as_str);
    let line: Vec<String> = argv.iter().map(|a| shell_word(a)).collect();
    format!("{reason}; {program}{NEVER_SPOKE}{}`", line.join(" "))
}

/// `why` `argv` is no Tick, and the command that opens it as a terminal
/// program.
pub(super) fn open_as_shell(why: &str, argv: &[String]) -> String {
    let line: Vec<String> = argv.iter().map(|a| shell_word(a)).collect();
    format!(
        "{why}; open it as a terminal program: `tickloop open --shell -- {}`",
        line.join(" ")
    )
}

/// Where [`with_hint`]'s advice starts in a failed open's `reason`, for a
/// front end that knows better (a package is a Tick whatever it did).
pub fn hint_start(reason: &str) -> Option<usize> {
    let at = reason.find(NEVER_SPOKE)?;
    reason[..at].rfind("; ")
}

/// `word` as a shell reads it back.
fn shell_word(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESCRIBE: &[u8] = br#"{"id":1,"jsonrpc":"2.0","method":"tick/describe","params":{}}"#;

    #[test]
    fn an_echo_of_the_first_line_is_no_tick() {
        let mut probe = Probe::new(true);
        probe.wrote(&[DESCRIBE, b"\n".as_slice()].concat());
        assert_eq!(probe.stdout(&DESCRIBE[..10]), None);
        let why = probe.stdout(&[&DESCRIBE[10..], b"\r\n".as_slice()].concat());
        assert!(why.is_some_and(|w| w.contains("echoed")));
    }

    #[test]
    fn a_protocol_line_ends_the_probing() {
        let mut probe = Probe::new(true);
        probe.wrote(&[DESCRIBE, b"\n".as_slice()].concat());
        let now = Instant::now();
        probe.screen(&["x: command not found".into()], now);
        assert!(probe.due().is_some());
        assert_eq!(
            probe.stdout(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n"),
            None
        );
        assert!(!probe.probing());
        assert_eq!(probe.due(), None);
        assert_eq!(probe.verdict(now + GRACE), None);
    }

    #[test]
    fn a_sign_on_the_terminal_is_a_verdict_after_the_grace() {
        let mut probe = Probe::new(true);
        let now = Instant::now();
        probe.screen(
            &[
                "".into(),
                "/usr/bin/bash: line 1: id:1: command not found".into(),
            ],
            now,
        );
        assert_eq!(probe.verdict(now), None);
        let why = probe.verdict(now + GRACE).expect("a verdict");
        assert!(
            why.contains("ran the protocol's first line as a command"),
            "{why}"
        );
        assert!(why.contains("id:1"), "{why}");
        // Nothing for a shell program, nor once stopped.
        let mut off = Probe::new(false);
        off.screen(&["command not found".into()], now);
        assert_eq!(off.due(), None);
    }

    #[test]
    fn a_shell_or_interpreter_with_no_script_is_told_before_it_starts() {
        let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        for reads in [
            &["bash"][..],
            &["/usr/bin/zsh", "-l"],
            &["python3"],
            &["sh", "-s"],
        ] {
            assert!(
                reads_commands_from_stdin(&argv(reads)).is_some(),
                "{reads:?}"
            );
        }
        for given in [
            &["bash", "tick.sh"][..],
            &["sh", "-c", "exec ./tick"],
            &["bash", "-lc", "./tick"],
            &["python3", "tick.py"],
            &["python3", "-m", "mytick"],
            &["node", "-e", "x"],
            &["htop"],
        ] {
            assert_eq!(reads_commands_from_stdin(&argv(given)), None, "{given:?}");
        }
    }

    #[test]
    fn the_hint_quotes_what_needs_it() {
        let said = with_hint(
            "the Tick exited with status 1",
            &["sh".into(), "-c".into(), "echo it's".into()],
        );
        assert!(
            said.ends_with(r"`tickloop open --shell -- sh -c 'echo it'\''s'`"),
            "{said}"
        );
    }
}
