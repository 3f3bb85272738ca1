//! How the `tickloop` CLI prints: JSON for programs, tables and text for
//! people, and the errors of the contract (docs/cli.md) with their exit codes.

use serde_json::Value;
use std::io::Write;
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{ClientError, ErrorKind};
use view_monitor::cells;
use view_monitor::shell_row::ShellRow;

/// The exit of `approve` / `refuse` when the action was withdrawn by its
/// caller: not executed, like a call's exit 3.
pub const WITHDRAWN: i32 = 3;

/// An error of the CLI contract: its kind, what to say, extra data, and the
/// exit code.
#[derive(Debug)]
pub struct CliError {
    pub kind: String,
    pub message: String,
    pub data: Option<Value>,
    pub exit: i32,
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CliError {}

impl CliError {
    pub fn new(kind: &str, message: impl Into<String>, exit: i32) -> Self {
        CliError {
            kind: kind.to_string(),
            message: message.into(),
            data: None,
            exit,
        }
    }

    /// tickhost's refusal: exit 3 (not executed) when the person or a
    /// policy did not allow it (`refused`), or for an `approve` / `refuse`
    /// of an action its caller withdrew (nothing was done); else exit 1.
    pub fn from_reply(error: ClientError) -> Self {
        let exit = match error.kind {
            ErrorKind::Withdrawn => WITHDRAWN,
            ErrorKind::Refused => 3,
            _ => 1,
        };
        CliError {
            kind: kind_name(error.kind),
            message: error.message,
            data: error.data,
            exit,
        }
    }

    /// Prints the error: the reason on stderr, and in JSON mode
    /// `{"error":{...}}` on stdout.
    pub fn report(&self, json: bool) {
        let mut stderr = std::io::stderr().lock();
        if self.kind == "open_failed" {
            let _ = writeln!(stderr, "tickloop: open failed: {}", self.message);
            let screen = self
                .data
                .as_ref()
                .and_then(|d| d.get("screen"))
                .and_then(Value::as_str)
                .unwrap_or("");
            // What the program showed before it failed, when it showed anything.
            if !screen.trim().is_empty() {
                let _ = writeln!(stderr, "its screen showed:");
                for line in screen.trim_end().lines() {
                    let _ = writeln!(stderr, "  {line}");
                }
            }
        } else {
            let _ = writeln!(stderr, "tickloop: {}", self.message);
        }
        if json {
            let value = serde_json::json!({"error": {
                "kind": self.kind,
                "message": self.message,
                "data": self.data,
            }});
            // Not [`print_json`]: a reader gone must not turn the error's
            // exit code into 0.
            let mut stdout = std::io::stdout().lock();
            let _ = writeln!(stdout, "{value}").and_then(|()| stdout.flush());
        }
    }
}

/// The contract's name of an error kind (`no_such_instance`, ...).
pub fn kind_name(kind: ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "internal".to_string())
}

/// Writes `bytes` to stdout and flushes. When its reader went away
/// (`tickloop man | head`), the command ends here, quietly, with exit 0:
/// what it was printing is no longer wanted. Other errors are returned.
pub fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    let written = {
        let mut stdout = std::io::stdout().lock();
        stdout.write_all(bytes).and_then(|()| stdout.flush())
    };
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other,
    }
}

/// Prints `text` as it is ([`write_stdout`]); what `print!` and
/// `println!` do in this crate (main.rs).
pub fn out(text: &str) {
    let _ = write_stdout(text.as_bytes());
}

/// Prints one JSON value on one line. False when stdout fails.
pub fn print_json(value: &Value) -> bool {
    write_stdout(format!("{value}\n").as_bytes()).is_ok()
}

/// Prints `value` as JSON, or as `human` text on a terminal.
pub fn show(value: &Value, json: bool, human: fn(&Value) -> String) {
    if json {
        print_json(value);
    } else {
        print!("{}", human(value));
    }
}

/// Prints one line; `false` when stdout fails.
pub fn print_line(line: &str) -> bool {
    write_stdout(format!("{line}\n").as_bytes()).is_ok()
}

/// An interrupt ends a command that prints lines until it is stopped
/// (`watch`, `--follow`, ...) with exit 0 (each line is flushed as
/// printed, so nothing is lost).
pub fn exit_0_at_interrupt() {
    extern "C" fn on_interrupt(_: libc::c_int) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(0) }
    }
    // SAFETY: installs a handler that only calls an async-signal-safe function.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// The screen reply as text: one line per row, trailing blanks trimmed,
/// trailing empty rows dropped.
pub fn screen_text(value: &Value) -> String {
    tickloop_client::screen_history(value)
        .into_iter()
        .chain(tickloop_client::screen_rows(value))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn text(value: &Value) -> String {
    match value {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whose an instance is, for a person: `you`, or `agent`; with what
/// agents may do to it without asking when that is not the default
/// (`you (input auto)`).
fn owner_text(entry: &Value) -> String {
    let owner = entry["owner"].as_str().unwrap_or("person");
    let (who, default) = if owner == "agent" {
        ("agent", "auto")
    } else {
        ("you", "ask")
    };
    let changed: Vec<String> = ["input", "close"]
        .iter()
        .filter_map(|what| {
            let policy = entry[format!("agent_{what}")].as_str()?;
            (policy != default).then(|| format!("{what} {policy}"))
        })
        .collect();
    if changed.is_empty() {
        who.to_string()
    } else {
        format!("{who} ({})", changed.join(", "))
    }
}

/// How wide `list`'s table lets a shell's directory and command be (its
/// JSON has them whole; the directory keeps its end, the command its start).
const CWD_CELLS: usize = 32;
const COMMAND_CELLS: usize = 60;

/// `list` as a table for a person.
pub fn list_table(entries: &Value) -> String {
    list_table_at(entries, time::OffsetDateTime::now_utc())
}

/// [`list_table`] at `now` (how long a shell's command has run). A shell
/// says its shell as KIND (`bash`, or `plain` without integration) and its
/// state's SEQ; once any shell has run a command, CWD and COMMAND (the
/// running command, or the last with its exit and duration) come last.
pub fn list_table_at(entries: &Value, now: time::OffsetDateTime) -> String {
    let Some(entries) = entries.as_array() else {
        return format!("{entries}\n");
    };
    if entries.is_empty() {
        return "no instances; `tickloop open -- PROGRAM` starts one\n".to_string();
    }
    let shells: Vec<Option<ShellRow>> = entries.iter().map(ShellRow::of_json).collect();
    // A shell just opened has nothing for them but where it started.
    let with_state = shells.iter().flatten().any(|s| s.command.is_some());
    let mut header = vec![
        "ID", "STATE", "OWNER", "KIND", "TITLE", "SEQ", "UPDATES", "PID", "VIEWS",
    ];
    if with_state {
        header.extend(["CWD", "COMMAND"]);
    }
    let rows: Vec<Vec<String>> = entries
        .iter()
        .zip(&shells)
        .map(|(e, shell)| {
            let state = match e.get("ended") {
                Some(end) if !end.is_null() => {
                    format!("ended ({})", text(&end["kind"]))
                }
                // A recording that runs shows (`tickloop record`).
                _ => match e["recordings"].as_u64().unwrap_or(0) {
                    0 => text(&e["state"]),
                    1 => format!("{} · recorded", text(&e["state"])),
                    n => format!("{} · recorded ×{n}", text(&e["state"])),
                },
            };
            let mut row = vec![
                text(&e["id"]),
                state,
                owner_text(e),
                match shell {
                    // Set by the program: shown escaped (the JSON keeps them raw).
                    None => escaped(&text(&e["kind"])),
                    Some(shell) => shell.kind.clone(),
                },
                escaped(&text(&e["title"])),
                match shell.as_ref().and_then(|s| s.seq) {
                    Some(seq) => seq.to_string(),
                    None => text(&e["seq"]),
                },
                text(&e["updates"]),
                text(&e["pid"]),
                text(&e["views"]),
            ];
            if with_state {
                row.push(shell.as_ref().map_or("-".into(), |s| s.cwd_cell(CWD_CELLS)));
                row.push(
                    shell
                        .as_ref()
                        .map_or("-".into(), |s| s.command_cell(now, COMMAND_CELLS)),
                );
            }
            row
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cells::width(cell));
        }
    }
    let line = |row: Vec<String>| {
        let mut out = String::new();
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            out.push_str(cell);
            if i + 1 < row.len() {
                let pad = w.saturating_sub(cells::width(cell)) + 2;
                out.push_str(&" ".repeat(pad));
            }
        }
        out.trim_end().to_string() + "\n"
    };
    let mut out = line(header.iter().map(|h| h.to_string()).collect());
    for row in rows {
        out.push_str(&line(row));
    }
    for e in entries {
        if let Some(end) = e.get("ended").filter(|v| !v.is_null()) {
            out.push_str(&format!(
                "{}: {}
",
                text(&e["id"]),
                escaped(&text(&end["reason"]))
            ));
        } else if let Some(why) = e["no_integration"].as_str() {
            out.push_str(&format!(
                "{}: no integration: {}
",
                text(&e["id"]),
                escaped(why)
            ));
        }
    }
    out
}

/// `packages --host` for a person: one line a package found there.
pub fn remote_packages_text(v: &Value) -> String {
    let mut out = String::new();
    for p in v.as_array().into_iter().flatten() {
        out.push_str(&format!("{}  {}\n", text(&p["name"]), text(&p["dir"])));
    }
    if out.is_empty() {
        out.push_str("no Tick packages there\n");
    }
    out
}

/// `open` for a person.
pub fn open_text(v: &Value) -> String {
    let mut line = format!(
        "opened {} — {} (kind {}, revision {}), pid {}, launcher pid {}\n",
        text(&v["id"]),
        escaped(&text(&v["title"])),
        escaped(&text(&v["kind"])),
        text(&v["revision"]),
        text(&v["pid"]),
        text(&v["launcher_pid"]),
    );
    if let Some(why) = v["no_integration"].as_str() {
        line.push_str(&format!("no integration: {why}\n"));
    }
    if v["state"] == "failed" {
        line.push_str(&format!(
            "generation {} failed: {}\nits screen shows why (`tickloop screen {}`); save the file to start it again\n",
            text(&v["generation"]),
            text(&v["failed"]),
            text(&v["id"]),
        ));
    }
    if v["state"] == "ended" {
        line.push_str(&format!(
            "it ended during its start: {}\n",
            text(&v["ended"]["reason"])
        ));
        let screen: Vec<&str> = v["screen"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !screen.is_empty() {
            line.push_str("its screen:\n");
            for row in screen {
                line.push_str(&format!("  {row}\n"));
            }
        }
    }
    if let Some(view) = v.get("view").filter(|view| view.is_object()) {
        let pane = view["pane_id"].as_str().unwrap_or("a popup");
        line.push_str(&format!(
            "shown in Herdr pane {pane} ({})\n",
            text(&view["placement"])
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn open_and_list_say_why_a_shell_has_no_integration() {
        let opened = json!({"id":"shell:b","title":"bash","state":"running","kind":null,"revision":null,
            "pid":5,"launcher_pid":4,"no_integration":"-c runs a command: no interactive shell"});
        assert!(
            open_text(&opened)
                .contains("\nno integration: -c runs a command: no interactive shell\n"),
            "{}",
            open_text(&opened)
        );
        let listed = json!([{"id":"shell:b","state":"running","owner":"person","ended":null,
            "no_integration":"sh is a plain shell"}]);
        assert!(
            list_table(&listed).ends_with("shell:b: no integration: sh is a plain shell\n"),
            "{}",
            list_table(&listed)
        );
    }

    #[test]
    fn open_says_an_end_during_start_and_a_herdr_pane() {
        let ended = json!({"id":"shell:s","title":"sh","state":"ended","kind":null,"revision":null,"pid":5,"launcher_pid":4,
            "ended":{"reason":"the program exited with status 7"},"screen":["hello"]});
        let t = open_text(&ended);
        assert!(
            t.contains("it ended during its start: the program exited with status 7"),
            "{t}"
        );
        assert!(t.contains("  hello"), "{t}");
        let shown = json!({"id":"hosted:c","title":"C","state":"running","view":{"pane_id":"w1:p3","placement":"split"}});
        assert!(open_text(&shown).contains("shown in Herdr pane w1:p3 (split)"));
    }

    #[test]
    fn screens_lose_trailing_blanks_and_rows() {
        let v = json!({"lines": ["a  ", " b", "", "  "]});
        assert_eq!(screen_text(&v), "a\n b\n");
        assert_eq!(screen_text(&json!({"lines": []})), "");
    }

    #[test]
    fn kinds_are_snake_case() {
        assert_eq!(kind_name(ErrorKind::NoSuchInstance), "no_such_instance");
        assert_eq!(kind_name(ErrorKind::NotATick), "not_a_tick");
    }

    #[test]
    fn titles_a_program_set_are_shown_escaped() {
        let table = list_table(
            &json!([{"id":"shell:s","state":"running","ended":null,"kind":null,
            "title":"vim \u{9b}31m\u{202e}txt.exe","seq":null,"updates":null,"pid":3,"views":0}]),
        );
        assert!(table.contains("vim \\u{9B}31m\\u{202E}txt.exe"), "{table}");
        assert!(
            !table.contains('\u{202e}') && !table.contains('\u{9b}'),
            "{table}"
        );
    }

    #[test]
    fn a_shells_row_says_its_shell_directory_and_command_with_its_status() {
        let now = time::OffsetDateTime::parse(
            "2026-12-01T00:01:00Z",
            &time::format_description::well_known::Rfc3339,
        )
        .expect("a time");
        let shell = |id: &str, name: &str, state: Value| {
            json!({"id": id, "state": "running", "ended": null, "kind": null, "title": name,
                "seq": null, "updates": 4, "pid": 3, "views": 0,
                "shell": {"shell": name, "kind": "injected", "active": true},
                "shell_state": state})
        };
        let listed = json!([
            {"id":"hosted:c","state":"running","ended":null,"kind":"k","title":"T","seq":1,"updates":2,"pid":3,"views":0},
            shell("shell:work", "bash", json!({"seq": 4, "at_prompt": true, "running": null,
                "commands_total": 2,
                "cwd": "/home/ada/src/a-project-with-a-long-name/and/deeper\u{202e}",
                "last": {"n": 2, "command": "make test\nmake lint", "exit": 2,
                    "started": "2026-12-01T00:00:01Z", "ended": "2026-12-01T00:00:04.1Z",
                    "duration_ms": 3100}})),
            shell("shell:build", "zsh", json!({"seq": 5, "at_prompt": false, "cwd": "/srv",
                "running": {"n": 3, "command": "sleep 600", "started": "2026-12-01T00:00:48Z"},
                "last": null, "commands_total": 3})),
            {"id":"shell:py","state":"running","ended":null,"kind":null,"title":"python3",
                "seq":null,"updates":0,"pid":4,"views":0,
                "no_integration":"python3 is not bash, zsh or fish"},
        ]);
        let t = list_table_at(&listed, now);
        let row = |id: &str| {
            t.lines()
                .find(|l| l.starts_with(id))
                .unwrap_or_default()
                .to_string()
        };
        let header = t.lines().next().unwrap_or_default();
        assert!(
            header.contains("  CWD  ") && header.ends_with("  COMMAND"),
            "{t}"
        );
        let work = row("shell:work");
        assert!(work.contains("  bash  "), "{t}");
        assert!(work.contains("  4  "), "{t}");
        assert!(work.contains("…/and/deeper\\u{202E}  "), "{t}");
        assert!(
            work.ends_with("exit 2 · 3.1s · make test\\u{A}make lint"),
            "{t}"
        );
        let build = row("shell:build");
        assert!(build.contains("  zsh  ") && build.contains("  5  "), "{t}");
        assert!(build.contains("  /srv  "), "{t}");
        assert!(build.ends_with("  running 12s · sleep 600"), "{t}");
        let py = row("shell:py");
        assert!(py.contains("  plain  "), "{t}");
        let py_cells: Vec<&str> = py.split_whitespace().collect();
        assert_eq!(py_cells[py_cells.len() - 2..], ["-", "-"], "{t}");
        assert!(row("hosted:c").contains("  k  "), "{t}");
        // No shell's state known: the table is as it was.
        let ticks = list_table_at(&json!([listed[0].clone(), listed[3].clone()]), now);
        assert!(!ticks.contains("CWD"), "{ticks}");
    }

    #[test]
    fn tables_have_a_row_per_instance() {
        let t = list_table(
            &json!([{"id":"hosted:c","state":"running","ended":null,"kind":"k","title":"T","seq":1,"updates":2,"pid":3,"views":0}]),
        );
        assert_eq!(t.lines().count(), 2);
        assert!(t.contains("hosted:c"));
    }
}
