//! The approval log of an instance (`paths::InstanceFiles::approvals`): one
//! JSON line per decision, appended whole or not at all. Each entry is one
//! `write` of the whole line with its `\n` (never a line and then its
//! newline, which a kill between the two would glue to the next entry); a
//! log whose last line was cut anyway (a full disk, a crash inside a
//! write) gets a `\n` first, so only the cut line is lost. Reading skips
//! (and counts) lines that are not entries.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;
use tickloop_proto::wire::ApprovalLogEntry;

/// Appends from every task go one at a time (the check for a cut last line
/// and the write belong together).
static APPENDING: Mutex<()> = Mutex::new(());

/// Appends `entry` to the log at `path`.
pub fn append(path: &Path, entry: &ApprovalLogEntry) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    line.push(b'\n');
    let _one_at_a_time = APPENDING.lock().unwrap_or_else(|e| e.into_inner());
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)?;
    let len = file.metadata()?.len();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1))?;
        file.read_exact(&mut last)?;
        if last[0] != b'\n' {
            line.insert(0, b'\n');
        }
    }
    file.write_all(&line)?;
    Ok(())
}

/// The log at `path`, oldest first (empty when none), and how many lines
/// could not be read as entries.
pub fn read(path: &Path) -> (Vec<ApprovalLogEntry>, usize) {
    let Ok(text) = std::fs::read_to_string(path) else {
        return (Vec::new(), 0);
    };
    let mut skipped = 0;
    let entries = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let entry = serde_json::from_str(l).ok();
            skipped += usize::from(entry.is_none());
            entry
        })
        .collect();
    (entries, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::wire::{ConsentDecision, HeldAction};

    fn entry(call: &str, decision: &str) -> ApprovalLogEntry {
        ApprovalLogEntry {
            at: "2026-01-01T00:00:00.000Z".into(),
            decision: ConsentDecision {
                action: HeldAction::Call,
                client: None,
                call: call.into(),
                instance: "hosted:c".into(),
                tool: "increment".into(),
                args: serde_json::json!({"amount": 1}),
                echo_off: None,
                revision: "1".into(),
                decision: decision.into(),
                by: "tickhost".into(),
                reason: None,
                host: None,
            },
        }
    }

    #[test]
    fn a_cut_last_line_loses_only_itself() {
        let dir = std::env::temp_dir().join(format!("tickhost-log-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let path = dir.join("approvals.jsonl");
        append(&path, &entry("%1", "held")).expect("appended");
        // A write cut short (the process killed inside it, the disk full):
        // half an entry and no newline.
        let whole = serde_json::to_string(&entry("%1", "approved")).expect("json");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("the log");
        file.write_all(&whole.as_bytes()[..whole.len() / 2])
            .expect("half a line");
        append(&path, &entry("%2", "held")).expect("appended");
        let (entries, skipped) = read(&path);
        let calls: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| (e.decision.call.as_str(), e.decision.decision.as_str()))
            .collect();
        assert_eq!(calls, [("%1", "held"), ("%2", "held")]);
        assert_eq!(skipped, 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
