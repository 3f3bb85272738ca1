//! A shell's state as the person's views show it in a row: `list`'s table,
//! the Monitor's list and the web page's list. From a `list` entry
//! ([`ListEntry::shell`], [`ListEntry::shell_state`]): its KIND (`bash`,
//! `zsh`, `fish`, or `plain` without integration), the state's `seq`, the
//! working directory, and the command running or the last one with its
//! status (`exit 2 · 3.1s · make test`). What the shell reported (its
//! directory, the command line) is escaped
//! ([`tickloop_proto::escape::escaped`]) and cut only between characters or
//! whole escapes. No I/O; the clock is an input.

use crate::cells::width;
use serde::Deserialize;
use tickloop_proto::escape::{parts, Part};
use tickloop_proto::wire::{ListEntry, ShellIntegration, ShellSummary};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// KIND of a shell with no integration (a plain program, `sh`, a REPL).
pub const PLAIN: &str = "plain";

/// A `shell:` instance as a row shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRow {
    /// `bash`, `zsh`, `fish`, the program's own name when only its marks
    /// are read, or [`PLAIN`]; escaped.
    pub kind: String,
    /// The state's `seq` (`read`'s), with integration.
    pub seq: Option<u64>,
    /// The working directory the shell last reported, escaped.
    pub cwd: Option<String>,
    /// The command running, or the last one that ended.
    pub command: Option<Command>,
}

/// A command of a shell, as its row shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The command line, escaped (empty when the shell did not say it).
    pub line: String,
    pub status: Status,
}

/// Where a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Running since then (when known).
    Running { started: Option<OffsetDateTime> },
    /// Ended with this exit status (when the shell said it), after so long
    /// (when known).
    Ended {
        exit: Option<i32>,
        duration_ms: Option<u64>,
    },
}

impl ShellRow {
    /// The row of a `list` entry; `None` when it is not a `shell:` instance.
    pub fn of(entry: &ListEntry) -> Option<ShellRow> {
        ShellRow::of_parts(&entry.id, entry.shell.as_ref(), entry.shell_state.as_ref())
    }

    /// [`ShellRow::of`] for an entry of `list`'s JSON, reading only its
    /// `id`, `shell` and `shell_state` (a table or a page that shows the
    /// rest as it is).
    pub fn of_json(entry: &serde_json::Value) -> Option<ShellRow> {
        let id = entry.get("id")?.as_str()?;
        let shell = entry
            .get("shell")
            .and_then(|v| ShellIntegration::deserialize(v).ok());
        let state = entry
            .get("shell_state")
            .and_then(|v| ShellSummary::deserialize(v).ok());
        ShellRow::of_parts(id, shell.as_ref(), state.as_ref())
    }

    fn of_parts(
        id: &str,
        shell: Option<&ShellIntegration>,
        state: Option<&ShellSummary>,
    ) -> Option<ShellRow> {
        // `shell:NAME`, or `HOST:shell:NAME` in a Monitor of several
        // machines (a NAME has no `:`).
        if id.rsplit(':').nth(1) != Some("shell") {
            return None;
        }
        let kind = match shell {
            Some(integration) => tickloop_proto::escape::escaped(&integration.shell),
            None => PLAIN.to_string(),
        };
        let Some(state) = state else {
            return Some(ShellRow {
                kind,
                seq: None,
                cwd: None,
                command: None,
            });
        };
        let command = match (&state.running, &state.last) {
            (Some(running), _) => Some(Command {
                line: tickloop_proto::escape::escaped(&running.command),
                status: Status::Running {
                    started: OffsetDateTime::parse(&running.started, &Rfc3339).ok(),
                },
            }),
            (None, Some(last)) => Some(Command {
                line: tickloop_proto::escape::escaped(&last.command),
                status: Status::Ended {
                    exit: last.exit,
                    duration_ms: last.duration_ms,
                },
            }),
            (None, None) => None,
        };
        Some(ShellRow {
            kind,
            seq: Some(state.seq),
            cwd: state.cwd.as_deref().map(tickloop_proto::escape::escaped),
            command,
        })
    }

    /// The working directory in at most `max` cells: whole when it fits,
    /// else its end after `…` (the end says where it is), cut at a `/`
    /// when one is near enough; `-` when the shell said none.
    pub fn cwd_cell(&self, max: usize) -> String {
        match &self.cwd {
            Some(cwd) => keep_end(cwd, max),
            None => "-".into(),
        }
    }

    /// The command and its status in at most `max` cells: the status first
    /// (never cut), then the command line, cut at its end with `…`;
    /// `-` when the shell ran none yet.
    pub fn command_cell(&self, now: OffsetDateTime, max: usize) -> String {
        let Some(command) = &self.command else {
            return "-".into();
        };
        let status = command.status.words(now);
        if command.line.is_empty() {
            return status;
        }
        let head = format!("{status} · ");
        let room = max.saturating_sub(width(&head));
        format!("{head}{}", keep_start(&command.line, room))
    }
}

impl Status {
    /// `running 12s`, `exit 0 · 340ms`, `exit 2`, `exit unknown · 4.0s`.
    pub fn words(self, now: OffsetDateTime) -> String {
        match self {
            Status::Running { started: None } => "running".into(),
            Status::Running {
                started: Some(started),
            } => {
                // Whole seconds: the row is drawn again each second.
                let secs = u64::try_from((now - started).whole_seconds()).unwrap_or(0);
                match secs {
                    0..=59 => format!("running {secs}s"),
                    _ => format!("running {}", duration(secs * 1000)),
                }
            }
            Status::Ended { exit, duration_ms } => {
                let exit = match exit {
                    Some(code) => format!("exit {code}"),
                    None => "exit unknown".into(),
                };
                match duration_ms {
                    Some(ms) => format!("{exit} · {}", duration(ms)),
                    None => exit,
                }
            }
        }
    }

    /// A command that ended otherwise than with status 0 (the rows show it
    /// in red).
    pub fn failed(self) -> bool {
        matches!(self, Status::Ended { exit: Some(code), .. } if code != 0)
    }
}

/// A duration, short: `12ms`, `3.1s`, `41s`, `4m05s`, `2h03m`.
pub fn duration(ms: u64) -> String {
    let secs = ms / 1000;
    match secs {
        0 => format!("{ms}ms"),
        1..=9 => format!("{}.{}s", secs, (ms % 1000) / 100),
        10..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// The units of escaped text: each character, or a whole escape.
fn units(shown: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in parts(shown) {
        match part {
            Part::Escape(escape) => out.push(escape),
            Part::Text(text) => {
                out.extend(text.char_indices().map(|(i, c)| &text[i..i + c.len_utf8()]));
            }
        }
    }
    out
}

/// Escaped text in at most `max` cells: whole, or its start and `…`.
pub fn keep_start(shown: &str, max: usize) -> String {
    if width(shown) <= max {
        return shown.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for unit in units(shown) {
        let w = width(unit);
        if used + w + 1 > max {
            break;
        }
        out.push_str(unit);
        used += w;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// Escaped text in at most `max` cells: whole, or `…` and its end, which
/// starts at a `/` when one is in its first half.
pub fn keep_end(shown: &str, max: usize) -> String {
    if width(shown) <= max {
        return shown.to_string();
    }
    if max == 0 {
        return String::new();
    }
    let mut kept: Vec<&str> = Vec::new();
    let mut used = 0;
    for unit in units(shown).into_iter().rev() {
        let w = width(unit);
        if used + w + 1 > max {
            break;
        }
        kept.push(unit);
        used += w;
    }
    kept.reverse();
    let end: String = kept.concat();
    let end = match end.find('/') {
        Some(slash) if slash > 0 && width(&end[..slash]) * 2 <= width(&end) => &end[slash..],
        _ => end.as_str(),
    };
    format!("…{end}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-12-01T00:00:20Z", &Rfc3339).expect("a time")
    }

    fn entry(value: serde_json::Value) -> ListEntry {
        serde_json::from_value(value).expect("a list entry")
    }

    #[test]
    fn a_shell_with_integration_shows_where_it_is_and_its_last_command() {
        let row = ShellRow::of(&entry(json!({
            "id": "shell:work",
            "shell": {"shell": "bash", "kind": "injected", "active": true},
            "shell_state": {"seq": 4, "cwd": "/home/u/src/tickloop", "at_prompt": true,
                "running": null, "commands_total": 2,
                "last": {"n": 2, "command": "make test", "exit": 2,
                    "started": "2026-12-01T00:00:01Z", "ended": "2026-12-01T00:00:04.1Z",
                    "duration_ms": 3100}}
        })))
        .expect("a shell");
        assert_eq!(row.kind, "bash");
        assert_eq!(row.seq, Some(4));
        assert_eq!(row.cwd_cell(40), "/home/u/src/tickloop");
        assert_eq!(row.cwd_cell(12), "…/tickloop");
        assert_eq!(row.command_cell(now(), 40), "exit 2 · 3.1s · make test");
        assert_eq!(row.command_cell(now(), 19), "exit 2 · 3.1s · ma…");
        assert!(row.command.map(|c| c.status.failed()).unwrap_or_default());
    }

    #[test]
    fn a_running_command_says_for_how_long() {
        let row = ShellRow::of(&entry(json!({
            "id": "shell:w",
            "shell": {"shell": "zsh", "kind": "injected", "active": true},
            "shell_state": {"seq": 5, "cwd": null, "at_prompt": false, "commands_total": 3,
                "running": {"n": 3, "command": "sleep 60", "started": "2026-12-01T00:00:08Z"},
                "last": null}
        })))
        .expect("a shell");
        assert_eq!(row.cwd_cell(10), "-");
        assert_eq!(row.command_cell(now(), 80), "running 12s · sleep 60");
    }

    #[test]
    fn a_shell_without_integration_is_plain_and_a_tick_is_no_shell() {
        let plain = ShellRow::of(&entry(json!({"id": "shell:py",
            "no_integration": "python3 is not a shell Tickloop integrates"})))
        .expect("a shell");
        assert_eq!(plain.kind, PLAIN);
        assert_eq!(
            (plain.seq, plain.command_cell(now(), 20)),
            (None, "-".into())
        );
        assert_eq!(ShellRow::of(&entry(json!({"id": "hosted:counter"}))), None);
        // Another machine's, in a Monitor of several.
        let there = ShellRow::of_json(&json!({"id": "box:shell:py"})).expect("a shell");
        assert_eq!(there.kind, PLAIN);
        assert_eq!(ShellRow::of_json(&json!({"id": "shell:hosted:c"})), None);
    }

    #[test]
    fn what_the_shell_said_is_escaped_and_never_cut_inside_an_escape() {
        let row = ShellRow::of(&entry(json!({
            "id": "shell:x",
            "shell": {"shell": "bash", "kind": "injected", "active": true},
            "shell_state": {"seq": 1, "cwd": "/tmp/\u{202e}gpj.sh", "at_prompt": true,
                "running": null, "commands_total": 1,
                "last": {"n": 1, "command": "echo a\nrm -rf b", "exit": 0,
                    "started": "2026-12-01T00:00:01Z", "ended": null, "duration_ms": null}}
        })))
        .expect("a shell");
        assert_eq!(row.cwd_cell(80), "/tmp/\\u{202E}gpj.sh");
        assert_eq!(row.command_cell(now(), 80), "exit 0 · echo a\\u{A}rm -rf b");
        // Cut before the escape rather than inside it.
        assert_eq!(row.command_cell(now(), 19), "exit 0 · echo a…");
        assert_eq!(keep_end("/tmp/\\u{202E}gpj.sh", 15), "…\\u{202E}gpj.sh");
        assert_eq!(keep_end("/tmp/\\u{202E}gpj.sh", 14), "…gpj.sh");
    }

    #[test]
    fn durations_are_short() {
        assert_eq!(duration(0), "0ms");
        assert_eq!(duration(340), "340ms");
        assert_eq!(duration(1_000), "1.0s");
        assert_eq!(duration(9_990), "9.9s");
        assert_eq!(duration(41_200), "41s");
        assert_eq!(duration(245_000), "4m05s");
        assert_eq!(duration(7_380_000), "2h03m");
    }
}
