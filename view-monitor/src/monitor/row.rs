//! One instance as the Monitor's list shows it ([`Row`]): parsed from a
//! `list` entry, what its program set escaped, a shell's state
//! ([`ShellRow`]), its state in words and its tone (the colour of its
//! state), the detail line under the list, and the filter's match. No I/O.

use crate::shell_row::ShellRow;
use serde_json::Value;
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{InstanceState, ListEntry};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// One instance as the Monitor shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub kind: Option<String>,
    pub title: Option<String>,
    /// `None` while running; the end's kind and reason once ended.
    pub ended: Option<Ended>,
    pub seq: Option<u64>,
    pub last_update_at: Option<OffsetDateTime>,
    /// When the program last wrote to its terminal (launchers that publish it).
    pub last_output_at: Option<OffsetDateTime>,
    pub calls_in_flight: u64,
    /// Calls held for a person's approval (not yet sent to the Tick).
    pub approvals_waiting: u64,
    pub views: u64,
    /// Recordings of it running now (`tickloop record`, `open --record`).
    pub recordings: u64,
    pub pid: Option<u64>,
    pub argv: Vec<String>,
    /// A `shell:` instance: its shell (KIND), where it is and its command.
    pub shell: Option<ShellRow>,
}

/// Why an instance ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub kind: String,
    pub reason: String,
}

impl Row {
    /// One `list` entry as a row, what its program set (kind, title, end
    /// reason) escaped ([`tickloop_proto::escape`]); `None` when it has no
    /// id.
    pub fn from_entry(entry: &ListEntry) -> Option<Row> {
        if entry.id.is_empty() {
            return None;
        }
        let ended = match (&entry.ended, entry.state) {
            (Some(e), _) => Some(Ended {
                kind: e.kind.as_str().to_string(),
                reason: escaped(&e.reason),
            }),
            (None, InstanceState::Ended) => Some(Ended {
                kind: "ended".into(),
                reason: String::new(),
            }),
            (None, _) => None,
        };
        let time = |at: &Option<String>| {
            at.as_deref()
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        };
        let shell = ShellRow::of(entry);
        Some(Row {
            id: entry.id.clone(),
            // What the program set, shown escaped; a shell's KIND is its
            // shell (`bash`, or `plain` without integration).
            kind: match &shell {
                Some(shell) => Some(shell.kind.clone()),
                None => entry.kind.as_deref().map(escaped),
            },
            title: entry.title.as_deref().map(escaped),
            ended,
            // A shell's is its state's, as `read` gives it.
            seq: entry.seq.or(shell.as_ref().and_then(|s| s.seq)),
            last_update_at: time(&entry.last_update_at),
            last_output_at: time(&entry.last_output_at),
            calls_in_flight: u64::from(entry.calls_in_flight),
            approvals_waiting: u64::try_from(entry.approvals_waiting).unwrap_or(u64::MAX),
            views: u64::from(entry.views),
            recordings: u64::from(entry.recordings),
            pid: (entry.pid != 0).then_some(u64::from(entry.pid)),
            argv: entry.argv.clone(),
            shell,
        })
    }

    /// A shell that has run a command (or runs one), as its integration
    /// told: the list then has its CWD and COMMAND columns.
    pub fn has_shell_command(&self) -> bool {
        self.shell.as_ref().is_some_and(|s| s.command.is_some())
    }

    /// Whether `filter` (lower case) is in its id, kind, title, state, or
    /// a shell's directory or command.
    pub fn matches(&self, filter: &str) -> bool {
        if filter.is_empty() {
            return true;
        }
        let shell = self.shell.as_ref();
        [
            Some(self.id.as_str()),
            self.kind.as_deref(),
            self.title.as_deref(),
            Some(self.state_text().as_str()),
            shell.and_then(|s| s.cwd.as_deref()),
            shell.and_then(|s| Some(s.command.as_ref()?.line.as_str())),
        ]
        .into_iter()
        .flatten()
        .any(|field| field.to_lowercase().contains(filter))
    }

    /// Every row of a `list` answer (entries without an id are skipped;
    /// an answer that is not a list has none).
    pub fn all_from_json(list: &Value) -> Vec<Row> {
        ListEntry::all(list)
            .unwrap_or_default()
            .iter()
            .filter_map(Row::from_entry)
            .collect()
    }

    /// `running` (`running · recorded` while a recording runs), or
    /// `ended: REASON` (the end's kind when it has no reason).
    pub fn state_text(&self) -> String {
        match &self.ended {
            None if self.recordings == 1 => "running · recorded".into(),
            None if self.recordings > 1 => format!("running · recorded ×{}", self.recordings),
            None => "running".into(),
            Some(e) if e.reason.is_empty() => format!("ended ({})", e.kind),
            Some(e) => format!("ended: {}", e.reason),
        }
    }
}

/// The detail line for the selected row: its full end reason, or how it
/// runs (a shell's directory and command whole).
pub fn detail(r: &Row, now: OffsetDateTime) -> String {
    match &r.ended {
        Some(e) => {
            let reason = if e.reason.is_empty() {
                "(no reason given)"
            } else {
                &e.reason
            };
            format!("{} ended ({}): {reason}", r.id, e.kind)
        }
        None => {
            let pid = r.pid.map(|p| format!(" · pid {p}")).unwrap_or_default();
            let mut line = format!("{} running{pid} · {}", r.id, r.argv.join(" "));
            if let Some(shell) = &r.shell {
                if shell.cwd.is_some() {
                    line.push_str(&format!(" · in {}", shell.cwd_cell(usize::MAX)));
                }
                if shell.command.is_some() {
                    line.push_str(&format!(" · {}", shell.command_cell(now, usize::MAX)));
                }
            }
            line
        }
    }
}

/// How an instance's state is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Running,
    /// Ended as asked or cleanly: closed, or exited with status 0.
    EndedClean,
    /// Ended otherwise: a failure, a violation, a lost launcher, a signal.
    EndedBadly,
}

impl Row {
    pub fn tone(&self) -> Tone {
        match &self.ended {
            None => Tone::Running,
            Some(e) if e.kind == "closed" || e.reason.ends_with("status 0") => Tone::EndedClean,
            Some(_) => Tone::EndedBadly,
        }
    }
}

/// The rows and the clock the list's tests share.
#[cfg(test)]
pub(super) mod fixtures {
    use super::*;
    use serde_json::json;

    pub fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-11-29T21:00:00Z", &Rfc3339).expect("a fixed time")
    }

    /// A Tick, an ended shell, and an entry without an id (skipped).
    pub fn rows() -> Vec<Row> {
        Row::all_from_json(&json!([
            {"id": "hosted:counter", "kind": "example.counter", "title": "Counter",
             "state": "running", "ended": null, "seq": 3, "views": 1, "calls_in_flight": 2,
             "last_update_at": "2026-11-29T20:59:48Z", "pid": 12, "argv": ["python3", "c.py"]},
            {"id": "shell:top", "kind": null, "title": "top", "state": "ended",
             "ended": {"reason": "exited with status 0", "kind": "exited", "at": "x"},
             "seq": null, "views": 0, "calls_in_flight": 0, "last_update_at": null},
            {"no": "id"},
        ]))
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{now, rows};
    use super::*;
    use crate::cells::age;
    use serde_json::json;

    #[test]
    fn parses_list_entries() {
        let r = rows();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].seq, Some(3));
        assert_eq!(r[0].state_text(), "running");
        assert_eq!(r[1].state_text(), "ended: exited with status 0");
        let recorded = Row::all_from_json(&json!([
            {"id": "shell:bash", "state": "running", "recordings": 1},
            {"id": "shell:zsh", "state": "running", "recordings": 2},
        ]));
        let states: Vec<String> = recorded.iter().map(Row::state_text).collect();
        assert_eq!(states, ["running · recorded", "running · recorded ×2"]);
        assert_eq!(age(r[0].last_update_at, now()), "12s");
        assert_eq!(age(r[1].last_update_at, now()), "-");
        assert_eq!(
            detail(&r[1], now()),
            "shell:top ended (exited): exited with status 0"
        );
        assert_eq!(
            detail(&r[0], now()),
            "hosted:counter running · pid 12 · python3 c.py"
        );
    }

    #[test]
    fn filter_matches_id_kind_title_and_state() {
        let r = rows();
        assert!(r[0].matches("counter"));
        assert!(r[0].matches("example"));
        assert!(r[1].matches("ended"));
        assert!(!r[0].matches("ended"));
        assert!(r[1].matches(""));
    }

    #[test]
    fn what_a_program_set_is_shown_escaped() {
        let r = Row::all_from_json(&json!([{"id": "shell:x", "kind": null,
            "title": "vim \u{9b}2J\u{202e}gnp.exe", "state": "ended",
            "ended": {"reason": "exit\u{2028}1", "kind": "exited", "at": "x"},
            "seq": null, "views": 0, "calls_in_flight": 0, "pid": 1, "argv": ["sh"]}]));
        assert_eq!(r[0].title.as_deref(), Some("vim \\u{9B}2J\\u{202E}gnp.exe"));
        assert_eq!(r[0].state_text(), "ended: exit\\u{2028}1");
    }
}
