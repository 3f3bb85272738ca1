//! A shell's commands as a person reads them beside its terminal: where
//! the shell is, what runs now, and each command that ended (newest first)
//! with its status and duration in words and its output, all escaped as
//! parts ([`crate::parts`]). The page draws it in place of the state's
//! JSON, which stays one click away (the delivery goes along whole).
//!
//! Pure: a [`ShellState`] and the local offset in, JSON out.

use crate::parts::{raw_lines_parts, raw_parts};
use serde_json::{json, Value};
use tickloop_proto::wire::{ShellCommand, ShellState};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// What the page draws of a shell's state:
/// `{cwd, at_prompt, running, total, commands}`, `commands` newest first,
/// each `{n, command, ok, status, duration, started, lines, output, cut}`.
pub fn shell_view(state: &ShellState, offset: UtcOffset) -> Value {
    let clock = |at: &str| view_monitor::activity::clock(at, offset);
    let running = state.running.as_ref().map(|r| {
        json!({
            "n": r.n,
            "command": raw_parts(&r.command),
            "started": clock(&r.started),
        })
    });
    let commands: Vec<Value> = state
        .commands
        .iter()
        .rev()
        .map(|c| {
            json!({
                "n": c.n,
                "command": raw_parts(&c.command),
                "ok": c.exit.map(|e| e == 0),
                "status": status(c),
                "duration": duration(c),
                "started": clock(&c.started),
                "lines": lines(&c.output),
                "output": raw_lines_parts(c.output.strip_suffix('\n').unwrap_or(&c.output)),
                "cut": c.output_cut.as_ref().map(|cut| cut.note.clone()),
            })
        })
        .collect();
    json!({
        "cwd": state.cwd.as_deref().map(raw_parts),
        "at_prompt": state.at_prompt,
        "running": running,
        "total": state.commands_total,
        "commands": commands,
    })
}

/// How a command ended, in words: `exited 0`, `exited 2`, `exited 130
/// (Ctrl-C)`; `running`, or `ended, status unknown` when the shell did not
/// say.
pub fn status(command: &ShellCommand) -> String {
    match (command.exit, &command.ended) {
        (Some(code), _) => match code {
            130 => "exited 130 (Ctrl-C)".to_string(),
            137 => "exited 137 (killed)".to_string(),
            143 => "exited 143 (terminated)".to_string(),
            code => format!("exited {code}"),
        },
        (None, None) => "running".to_string(),
        (None, Some(_)) => "ended, status unknown".to_string(),
    }
}

/// How long a command ran, in words (`4 ms`, `2.5 s`, `3 min 5 s`,
/// `1 h 20 min`); `None` while it runs or when a time cannot be read.
pub fn duration(command: &ShellCommand) -> Option<String> {
    let parse = |at: &str| OffsetDateTime::parse(at, &Rfc3339).ok();
    let started = parse(&command.started)?;
    let ended = parse(command.ended.as_deref()?)?;
    let ms = u64::try_from((ended - started).whole_milliseconds()).unwrap_or(0);
    Some(in_words(ms))
}

/// A duration of `ms` milliseconds, in words.
fn in_words(ms: u64) -> String {
    let s = ms / 1000;
    match ms {
        0..=999 => format!("{ms} ms"),
        1000..=59_999 => format!("{}.{} s", s, (ms % 1000) / 100),
        60_000..=3_599_999 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, (s % 3600) / 60),
    }
}

/// How many lines `output` holds (a last line without its newline counts).
fn lines(output: &str) -> usize {
    output.lines().count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::wire::{OutputCut, RunningCommand};

    fn command(n: u64, line: &str, exit: Option<i32>, ended: Option<&str>) -> ShellCommand {
        ShellCommand {
            n,
            command: line.to_string(),
            exit,
            started: "2026-01-02T03:04:05.000Z".to_string(),
            ended: ended.map(str::to_string),
            output: "total 8\ndrwxr-xr-x 2 me me 4096 .\n".to_string(),
            output_cut: None,
        }
    }

    #[test]
    fn statuses_and_durations_read_as_words() {
        let ended = Some("2026-01-02T03:04:07.512Z");
        assert_eq!(status(&command(1, "ls", Some(0), ended)), "exited 0");
        assert_eq!(status(&command(1, "false", Some(2), ended)), "exited 2");
        assert_eq!(
            status(&command(1, "sleep 9", Some(130), ended)),
            "exited 130 (Ctrl-C)"
        );
        assert_eq!(
            status(&command(1, "x", None, ended)),
            "ended, status unknown"
        );
        assert_eq!(status(&command(1, "x", None, None)), "running");
        assert_eq!(
            duration(&command(1, "ls", Some(0), ended)).as_deref(),
            Some("2.5 s")
        );
        assert_eq!(duration(&command(1, "ls", Some(0), None)), None);
        assert_eq!(in_words(4), "4 ms");
        assert_eq!(in_words(185_000), "3 min 5 s");
        assert_eq!(in_words(4_800_000), "1 h 20 min");
    }

    #[test]
    fn newest_first_escaped_with_the_output_in_lines() {
        let mut cut = command(
            2,
            "yes | head -n 99999",
            Some(0),
            Some("2026-01-02T03:04:05.004Z"),
        );
        cut.output_cut = Some(OutputCut {
            lines: 9,
            bytes: 90,
            note: "9 lines cut".to_string(),
        });
        let state = ShellState {
            cwd: Some("/home/me/\u{202e}x".to_string()),
            at_prompt: false,
            running: Some(RunningCommand {
                n: 3,
                command: "sleep 100".to_string(),
                started: "2026-01-02T03:04:05.000Z".to_string(),
            }),
            commands: vec![
                command(
                    1,
                    "echo \u{202e}cba",
                    Some(1),
                    Some("2026-01-02T03:04:05.004Z"),
                ),
                cut,
            ],
            commands_total: 3,
        };
        let view = shell_view(&state, UtcOffset::UTC);
        assert_eq!(
            view["cwd"],
            json!([{"text": "/home/me/"}, {"escape": "\\u{202E}"}, {"text": "x"}])
        );
        assert_eq!(view["running"]["command"], json!([{"text": "sleep 100"}]));
        assert_eq!(view["running"]["started"], "03:04:05");
        assert_eq!(view["total"], 3);
        let commands = view["commands"].as_array().expect("commands");
        assert_eq!(commands.len(), 2);
        assert_eq!(commands[0]["n"], 2, "newest first");
        assert_eq!(commands[0]["cut"], "9 lines cut");
        assert_eq!(commands[1]["ok"], false);
        assert_eq!(commands[1]["status"], "exited 1");
        assert_eq!(commands[1]["duration"], "4 ms");
        assert_eq!(commands[1]["lines"], 2);
        assert_eq!(
            commands[1]["command"],
            json!([{"text": "echo "}, {"escape": "\\u{202E}"}, {"text": "cba"}])
        );
        assert_eq!(
            commands[1]["output"],
            json!([
                {"text": "total 8"},
                {"text": "\n"},
                {"text": "drwxr-xr-x 2 me me 4096 ."}
            ])
        );
    }
}
