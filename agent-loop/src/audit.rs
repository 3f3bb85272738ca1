//! The Loop's audit ledger: records of schema `pulse.tick-loop.audit.v1`, one
//! append-only JSONL file per session (named from the sanitised session id)
//! in `.pulse-tick-audit` under the working directory by default.
//!
//! The state machine produces [`AuditRecord`]s without a clock; the
//! [`LedgerWriter`] stamps `recordedAt` and appends each as one complete line
//! in a single `write` on an `O_APPEND` descriptor. A crash can at worst leave
//! a torn *last* line: the writer starts a fresh line before its first record
//! when the file does not end with a newline, and [`read_ledger`] skips lines
//! that do not parse, so one torn line never hides the rest.

use serde_json::{Map, Value};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::policy::{sha256_hex, CompiledPolicy};

/// The schema every record carries.
pub const AUDIT_SCHEMA: &str = "pulse.tick-loop.audit.v1";
/// The default ledger directory, relative to the working directory.
pub const DEFAULT_AUDIT_DIR: &str = ".pulse-tick-audit";

/// The seven record types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditKind {
    LoopArmed,
    TickScheduled,
    TickEnqueued,
    TickTerminal,
    TickCancelledBeforeEnqueue,
    LoopStopped,
    LoopComplete,
}

impl AuditKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AuditKind::LoopArmed => "loop_armed",
            AuditKind::TickScheduled => "tick_scheduled",
            AuditKind::TickEnqueued => "tick_enqueued",
            AuditKind::TickTerminal => "tick_terminal",
            AuditKind::TickCancelledBeforeEnqueue => "tick_cancelled_before_enqueue",
            AuditKind::LoopStopped => "loop_stopped",
            AuditKind::LoopComplete => "loop_complete",
        }
    }
}

/// One ledger record, before it is stamped with `recordedAt`.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRecord {
    pub kind: AuditKind,
    pub session_id: String,
    pub run_id: String,
    /// The run's frozen policy (every record belongs to a run).
    pub policy: Arc<CompiledPolicy>,
    /// Record-specific fields (`step`, `status`, `reason`, ...).
    pub details: Map<String, Value>,
}

impl AuditRecord {
    /// The JSON line's value, with `recordedAt` as given (RFC 3339).
    pub fn to_json(&self, recorded_at: &str) -> Value {
        let mut obj = Map::new();
        obj.insert("schema".into(), AUDIT_SCHEMA.into());
        obj.insert("type".into(), self.kind.as_str().into());
        obj.insert("recordedAt".into(), recorded_at.into());
        obj.insert("sessionId".into(), self.session_id.clone().into());
        obj.insert("runId".into(), self.run_id.clone().into());
        obj.insert("policyId".into(), self.policy.id.clone().into());
        obj.insert(
            "timeStepSha256".into(),
            self.policy.time_step_sha256.clone().into(),
        );
        obj.insert("timeStepBytes".into(), self.policy.time_step_bytes.into());
        for (k, v) in &self.details {
            obj.insert(k.clone(), v.clone());
        }
        Value::Object(obj)
    }
}

/// The ledger file name for a session: the id with every character outside
/// `A-Z a-z 0-9 . _ -` replaced by `_`, at most 96 characters, never starting
/// with `.`; when that changed the id, a short hash of the original keeps two
/// different ids from sharing a file.
pub fn ledger_file_name(session_id: &str) -> String {
    let mut name: String = session_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(96)
        .collect();
    if name.starts_with('.') || name.is_empty() {
        name.insert(0, '_');
    }
    if name != session_id {
        name.push('-');
        name.push_str(&sha256_hex(session_id.as_bytes())[..12]);
    }
    name.push_str(".jsonl");
    name
}

/// Appends records to one session's ledger.
#[derive(Debug)]
pub struct LedgerWriter {
    path: PathBuf,
    file: File,
}

impl LedgerWriter {
    /// Opens (creating the directory and file when needed) the ledger of
    /// `session_id` in `dir`.
    pub fn open(dir: &Path, session_id: &str) -> std::io::Result<LedgerWriter> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(ledger_file_name(session_id));
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)?;
        // A torn last line from a crash: end it, so the next record starts
        // on its own line (the reader skips the torn one).
        let len = file.metadata()?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            file.seek(SeekFrom::Start(len - 1))?;
            file.read_exact(&mut last)?;
            if last[0] != b'\n' {
                file.write_all(b"\n")?;
            }
        }
        Ok(LedgerWriter { path, file })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one record, stamped now.
    pub fn append(&mut self, record: &AuditRecord) -> std::io::Result<()> {
        self.append_value(&record.to_json(&now_rfc3339_millis()))
    }

    /// Appends one JSON value as one line, in a single write.
    pub fn append_value(&mut self, value: &Value) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        // O_APPEND: the kernel places the whole buffer at the end in one
        // write; a short write (disk full) is finished by write_all.
        self.file.write_all(&line)
    }
}

/// The current time, RFC 3339 with milliseconds, UTC.
use tickloop_client::clock::now_rfc3339_millis;

/// A ledger as read back.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ledger {
    pub records: Vec<Value>,
    /// Lines that were not complete JSON objects (a torn line from a crash).
    pub skipped: usize,
}

/// Reads a ledger, skipping lines that do not parse.
pub fn read_ledger(path: &Path) -> std::io::Result<Ledger> {
    let bytes = std::fs::read(path)?;
    Ok(parse_ledger(&bytes))
}

/// Parses ledger bytes, skipping lines that are not JSON objects.
pub fn parse_ledger(bytes: &[u8]) -> Ledger {
    let mut ledger = Ledger::default();
    for line in bytes.split(|b| *b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Value>(line) {
            Ok(v @ Value::Object(_)) => ledger.records.push(v),
            _ => ledger.skipped += 1,
        }
    }
    ledger
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: AuditKind) -> AuditRecord {
        AuditRecord {
            kind,
            session_id: "s/1".into(),
            run_id: "r1".into(),
            policy: Arc::new(CompiledPolicy::compile("tick", "tick").unwrap()),
            details: Map::new(),
        }
    }

    #[test]
    fn file_names_are_sanitised() {
        assert_eq!(ledger_file_name("abc-1.2_3"), "abc-1.2_3.jsonl");
        let a = ledger_file_name("a/b");
        let b = ledger_file_name("a_b");
        assert_ne!(a, b);
        assert!(a.starts_with("a_b-"));
        assert!(ledger_file_name("..").starts_with("_.."));
        assert!(ledger_file_name("").starts_with('_'));
        assert!(!ledger_file_name("../../etc/passwd").contains('/'));
        assert!(ledger_file_name(&"x".repeat(500)).len() < 130);
    }

    #[test]
    fn record_fields() {
        let v = record(AuditKind::TickCancelledBeforeEnqueue).to_json("2026-01-01T00:00:00Z");
        assert_eq!(v["schema"], AUDIT_SCHEMA);
        assert_eq!(v["type"], "tick_cancelled_before_enqueue");
        assert_eq!(v["recordedAt"], "2026-01-01T00:00:00Z");
        assert_eq!(v["sessionId"], "s/1");
        assert_eq!(v["runId"], "r1");
        assert_eq!(v["policyId"], "tick");
        assert_eq!(v["timeStepBytes"], 4);
        assert_eq!(v["timeStepSha256"], sha256_hex(b"tick"));
    }

    #[test]
    fn torn_lines_do_not_break_the_rest() {
        let dir = std::env::temp_dir().join(format!("tickloop-audit-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        {
            let mut w = LedgerWriter::open(&dir, "s/1").unwrap();
            w.append(&record(AuditKind::LoopArmed)).unwrap();
        }
        let path = dir.join(ledger_file_name("s/1"));
        // A crash mid-line.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(br#"{"schema":"pulse.tick-loop.audit.v1","ty"#)
            .unwrap();
        drop(f);
        let torn = read_ledger(&path).unwrap();
        assert_eq!((torn.records.len(), torn.skipped), (1, 1));
        // The next process appends after it on a fresh line.
        let mut w = LedgerWriter::open(&dir, "s/1").unwrap();
        w.append(&record(AuditKind::LoopStopped)).unwrap();
        let l = read_ledger(&path).unwrap();
        assert_eq!(l.skipped, 1);
        assert_eq!(l.records.len(), 2);
        assert_eq!(l.records[1]["type"], "loop_stopped");
        assert!(now_rfc3339_millis().ends_with('Z'));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
