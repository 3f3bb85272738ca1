//! `wait` and `watch` on a terminal, in words: what a wait came to with the
//! rows of the screen that say it (the row it matched and those around
//! it, or the screen's last rows), never a whole screen unless asked
//! (`--screen`; `--json` has it always); and `watch`'s lines, where a
//! delivery that merged several of a shell's commands names each one.

use super::{shell_line, text, watch_event};
use std::collections::HashMap;
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{ShellCommand, ShellState, WaitReply};

/// Rows shown above and below the row a wait matched.
const AROUND: usize = 2;
/// Rows of the screen's end shown when nothing matched (quiet, timed out,
/// ended).
const LAST_ROWS: usize = 5;

/// `wait`'s answer: what happened, then the rows that show it (the whole
/// screen with `whole_screen`), each row escaped; no header over nothing.
pub fn wait_answer(id: &str, answer: &WaitReply, whole_screen: bool) -> String {
    let mut out = String::new();
    let rows = &answer.screen;
    if answer.timed_out {
        out.push_str(&format!("timed out after {} ms\n", answer.waited_ms));
    } else if let Some(matched) = &answer.matched {
        out.push_str(&format!(
            "matched \"{}\" after {} ms\n",
            escaped(matched),
            answer.waited_ms
        ));
        if !whole_screen {
            match match_row(rows, answer.line.as_deref(), matched) {
                Some(at) => {
                    let from = at.saturating_sub(AROUND);
                    let to = (at + AROUND + 1).min(rows.len());
                    out.push_str(&format!("on row {} of the screen:\n", at + 1));
                    for (i, row) in rows.iter().enumerate().take(to).skip(from) {
                        let mark = if i == at { '>' } else { ' ' };
                        out.push_str(&format!("{mark} {}\n", escaped(row)));
                    }
                }
                // Scrolled off, or wrapped over rows: the line it was on.
                None => {
                    if let Some(line) = &answer.line {
                        out.push_str(&format!("line: {}\n", escaped(line)));
                    }
                }
            }
            return out;
        }
    } else if let Some(shell) = &answer.shell {
        out.push_str(&format!(
            "{id} is at its prompt after {} ms: {}\n",
            answer.waited_ms,
            shell_line(shell)
        ));
        if !whole_screen {
            return out;
        }
    } else if let Some(ended) = &answer.ended {
        out.push_str(&format!("{id} ended: {}\n", escaped(&ended.reason)));
    } else {
        out.push_str(&format!("quiet after {} ms\n", answer.waited_ms));
    }
    if rows.is_empty() {
        if whole_screen {
            out.push_str("the screen is empty\n");
        }
        return out;
    }
    let (shown, header) = if whole_screen {
        (&rows[..], "screen:".to_string())
    } else {
        let from = rows.len().saturating_sub(LAST_ROWS);
        let first = rows[from..]
            .iter()
            .position(|r| !r.trim().is_empty())
            .map_or(rows.len(), |p| from + p);
        let header = if first == 0 {
            "screen:".to_string()
        } else {
            format!(
                "the screen's last rows ({} of {}; `tickloop screen {id}` shows it whole):",
                rows.len() - first,
                rows.len()
            )
        };
        (&rows[first..], header)
    };
    out.push_str(&header);
    out.push('\n');
    for row in shown {
        out.push_str(&format!("  {}\n", escaped(row)));
    }
    out
}

/// The row of `rows` a wait matched on: the last that reads as the
/// matched line, else the last holding what matched.
fn match_row(rows: &[String], line: Option<&str>, matched: &str) -> Option<usize> {
    let line = line.map(str::trim_end).filter(|l| !l.is_empty());
    line.and_then(|line| rows.iter().rposition(|r| r.trim_end() == line))
        .or_else(|| {
            (!matched.is_empty())
                .then(|| rows.iter().rposition(|r| r.contains(matched)))
                .flatten()
        })
}

/// `watch`'s lines on a terminal. It keeps, for each shell, the newest
/// command it said ended, so a delivery that merged several commands
/// names each (`3 commands ended: …`) rather than only the last.
#[derive(Default)]
pub struct WatchText {
    said: HashMap<String, u64>,
}

impl WatchText {
    /// The line for one event (a delivery or an end).
    pub fn line(&mut self, v: &serde_json::Value) -> String {
        let id = text(&v["instance"]);
        let is_end = v.get("ended").is_some_and(|e| !e.is_null());
        let shell = (!is_end)
            .then(|| serde_json::from_value::<ShellState>(v["data"].clone()).ok())
            .flatten();
        let Some(shell) = shell else {
            self.said.remove(&id);
            return watch_event(v);
        };
        let newest = shell.commands.last().map_or(0, |c| c.n);
        let before = self.said.insert(id.clone(), newest);
        let ended: Vec<&ShellCommand> = match before {
            Some(before) => shell.commands.iter().filter(|c| c.n > before).collect(),
            None => Vec::new(),
        };
        // One command ended and nothing runs: the line says it already.
        if ended.is_empty() || (ended.len() == 1 && shell.running.is_none()) {
            return watch_event(v);
        }
        let said: Vec<String> = ended.iter().map(|c| ended_command(c)).collect();
        let mut line = format!(
            "{} {id} {} command{} ended: {}",
            text(&v["at"]),
            ended.len(),
            if ended.len() == 1 { "" } else { "s" },
            said.join(", ")
        );
        if let Some(running) = &shell.running {
            line.push_str(&format!(
                "; command {} started: `{}`",
                running.n,
                escaped(&running.command)
            ));
        }
        line.push_str(&format!(
            " (in {}{})",
            escaped(shell.cwd.as_deref().unwrap_or("?")),
            if shell.at_prompt {
                ", at its prompt"
            } else {
                ""
            }
        ));
        line
    }
}

/// An ended command in a few words: `` `make` with status 2 ``.
fn ended_command(command: &ShellCommand) -> String {
    format!(
        "`{}` with status {}",
        escaped(&command.command),
        command
            .exit
            .map_or("unknown".to_string(), |e| e.to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(screen: &[&str]) -> WaitReply {
        WaitReply {
            timed_out: false,
            waited_ms: 40,
            matched: None,
            line: None,
            shell: None,
            ended: None,
            screen: screen.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_match_shows_its_row_and_two_around_it_not_the_screen() {
        let rows = [
            "$ make",
            "cc a.c",
            "cc b.c",
            "ready: 3 files",
            "done",
            "x",
            "$",
        ];
        let mut answer = reply(&rows);
        answer.matched = Some("ready".into());
        answer.line = Some("ready: 3 files".into());
        assert_eq!(
            wait_answer("shell:b", &answer, false),
            "matched \"ready\" after 40 ms\non row 4 of the screen:\n  cc a.c\n  cc b.c\n> ready: 3 files\n  done\n  x\n"
        );
        // --screen: the whole screen.
        let whole = wait_answer("shell:b", &answer, true);
        assert!(
            whole.ends_with(
                "screen:\n  $ make\n  cc a.c\n  cc b.c\n  ready: 3 files\n  done\n  x\n  $\n"
            ),
            "{whole}"
        );
        // Scrolled off: the line it was on.
        answer.screen = vec!["$".into()];
        assert_eq!(
            wait_answer("shell:b", &answer, false),
            "matched \"ready\" after 40 ms\nline: ready: 3 files\n"
        );
    }

    #[test]
    fn an_end_with_an_empty_screen_has_no_screen_header() {
        let mut answer = reply(&[]);
        answer.ended = Some(tickloop_proto::wire::EndInfo {
            reason: "exited with status 0".into(),
            kind: tickloop_proto::wire::EndClass::Exited,
            offending: None,
            at: "T".into(),
            not_saved: Vec::new(),
        });
        let said = wait_answer("shell:s", &answer, false);
        assert_eq!(said, "shell:s ended: exited with status 0\n");
        assert!(!said.contains("screen"));
    }

    #[test]
    fn quiet_shows_the_last_rows_and_where_the_rest_is() {
        let rows: Vec<String> = (1..=9).map(|i| format!("row {i}")).collect();
        let rows: Vec<&str> = rows.iter().map(String::as_str).collect();
        let said = wait_answer("shell:q", &reply(&rows), false);
        assert_eq!(
            said,
            "quiet after 40 ms\nthe screen's last rows (5 of 9; `tickloop screen shell:q` shows it whole):\n  row 5\n  row 6\n  row 7\n  row 8\n  row 9\n"
        );
        // A bidi control a program printed shows escaped.
        let said = wait_answer("shell:q", &reply(&["a\u{202e}b"]), false);
        assert!(said.contains("a\\u{202E}b"), "{said}");
    }

    fn shell_delivery(
        commands: &[(u64, &str, i32)],
        running: Option<(u64, &str)>,
    ) -> serde_json::Value {
        let commands: Vec<serde_json::Value> = commands
            .iter()
            .map(|(n, c, exit)| json!({"n": n, "command": c, "exit": exit, "started": "S", "ended": "E", "output": ""}))
            .collect();
        let running = running.map(|(n, c)| json!({"n": n, "command": c, "started": "S"}));
        json!({"instance": "shell:w", "seq": 3, "at": "T", "merged": 3,
            "data": {"cwd": "/tmp", "at_prompt": running.is_none(), "running": running,
                     "commands": commands, "commands_total": 4}})
    }

    #[test]
    fn a_merged_delivery_names_every_command_that_ended() {
        let mut watch = WatchText::default();
        let first = watch.line(&shell_delivery(&[(1, "cd /tmp", 0)], None));
        assert_eq!(
            first,
            watch_event(&shell_delivery(&[(1, "cd /tmp", 0)], None))
        );
        let merged = watch.line(&shell_delivery(
            &[
                (1, "cd /tmp", 0),
                (2, "true", 0),
                (3, "false", 1),
                (4, "ls", 0),
            ],
            None,
        ));
        assert_eq!(
            merged,
            "T shell:w 3 commands ended: `true` with status 0, `false` with status 1, `ls` with status 0 (in /tmp, at its prompt)"
        );
        // One ended while the next started: both said.
        let both = watch.line(&shell_delivery(
            &[(4, "ls", 0), (5, "make", 2)],
            Some((6, "sleep 9")),
        ));
        assert_eq!(
            both,
            "T shell:w 1 command ended: `make` with status 2; command 6 started: `sleep 9` (in /tmp)"
        );
        let ended = json!({"instance":"shell:w","ended":{"reason":"closed"}});
        assert_eq!(watch.line(&ended), "shell:w ended: closed");
    }
}
