//! Helpers of the Loop's transcript tests: a real `tickloop loop run` process
//! played by a scripted harness.
//!
//! [`LoopHarness`] starts the process with a private audit directory and a
//! private config directory (`XDG_CONFIG_HOME`), writes input lines, and reads
//! output lines with a bounded wait. Ordering is the synchronisation: the
//! driver answers lines in order, so "nothing was enqueued" is checked by
//! sending `/tick status` and seeing its reply come next.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The longest wait for one output line or ledger condition.
pub const WAIT: Duration = Duration::from_secs(20);

/// A private scratch directory, removed on drop.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(tag: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "tickloop-loop-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running `tickloop loop run`.
pub struct LoopHarness {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    pub session: String,
    pub audit_dir: PathBuf,
    pub config_home: PathBuf,
    pub cwd: PathBuf,
    _scratch: Scratch,
}

impl LoopHarness {
    /// `tickloop loop run --session SESSION --delay-ms 20 --audit-dir DIR`.
    pub fn start(tag: &str) -> LoopHarness {
        LoopHarness::start_with(tag, None, &["--delay-ms", "20"], true)
    }

    /// Starts with `config` (written to `XDG_CONFIG_HOME/tickloop/loop.json`
    /// when given), extra arguments, and `--audit-dir` or not (then the
    /// default, under the working directory `cwd`).
    pub fn start_with(
        tag: &str,
        config: Option<&Value>,
        extra: &[&str],
        with_audit_dir: bool,
    ) -> LoopHarness {
        let scratch = Scratch::new(tag);
        let config_home = scratch.0.join("config");
        let cwd = scratch.0.join("cwd");
        std::fs::create_dir_all(&cwd).expect("cwd");
        if let Some(config) = config {
            write_config(&config_home, config);
        }
        let audit_dir = if with_audit_dir {
            scratch.0.join("audit")
        } else {
            cwd.join(".pulse-tick-audit")
        };
        let session = format!("session/{tag}");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tickloop"));
        cmd.args(["loop", "run", "--session", &session]);
        if with_audit_dir {
            cmd.arg("--audit-dir").arg(&audit_dir);
        }
        cmd.args(extra)
            .current_dir(&cwd)
            .env("XDG_CONFIG_HOME", &config_home);
        LoopHarness::spawn(cmd, session, audit_dir, config_home, cwd, scratch)
    }

    /// Starts `tickloop loop run --session SESSION --audit-dir DIR EXTRA...`
    /// from `base`, a command already carrying the program and environment
    /// (for instance a test host's `tickloop` command).
    pub fn start_from(tag: &str, mut base: Command, extra: &[&str]) -> LoopHarness {
        let scratch = Scratch::new(tag);
        let config_home = scratch.0.join("config");
        let cwd = scratch.0.join("cwd");
        std::fs::create_dir_all(&cwd).expect("cwd");
        let audit_dir = scratch.0.join("audit");
        let session = format!("session/{tag}");
        base.args(["loop", "run", "--session", &session, "--audit-dir"])
            .arg(&audit_dir)
            .args(extra)
            .current_dir(&cwd)
            .env("XDG_CONFIG_HOME", &config_home);
        LoopHarness::spawn(base, session, audit_dir, config_home, cwd, scratch)
    }

    fn spawn(
        mut cmd: Command,
        session: String,
        audit_dir: PathBuf,
        config_home: PathBuf,
        cwd: PathBuf,
        scratch: Scratch,
    ) -> LoopHarness {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn tickloop loop run");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        LoopHarness {
            child,
            stdin,
            lines: rx,
            session,
            audit_dir,
            config_home,
            cwd,
            _scratch: scratch,
        }
    }

    pub fn send(&mut self, value: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{value}").expect("write to loop run");
        stdin.flush().expect("flush");
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write to loop run");
    }

    /// A person's message (`source: user`), opening a turn.
    pub fn user(&mut self, text: &str) {
        self.send(
            json!({"type":"message","role":"user","source":{"kind":"user"},
                         "content":[{"type":"text","text":text}]}),
        );
    }

    pub fn assistant(&mut self, text: &str) {
        self.send(
            json!({"type":"message","role":"assistant","source":{"kind":"assistant"},
                         "content":[{"type":"text","text":text}]}),
        );
    }

    pub fn turn_end(&mut self, status: &str) {
        self.send(json!({"type":"turn_end","status":status}));
    }

    /// A whole user turn ending with `status`.
    pub fn turn(&mut self, text: &str, status: &str) {
        self.user(text);
        self.assistant("ok");
        self.turn_end(status);
    }

    pub fn command(&mut self, text: &str) -> (bool, String) {
        self.send_command(text);
        self.expect_reply()
    }

    /// Sends a command without reading its reply.
    pub fn send_command(&mut self, text: &str) {
        self.send(json!({"type":"command","text":text}));
    }

    /// The harness puts an enqueued message into the transcript, as is.
    pub fn echo(&mut self, message: &Value) {
        let mut line = message.clone();
        line["type"] = json!("message");
        self.send(line);
    }

    /// The time step's turn: echo it, the model answers, the turn ends.
    pub fn step_turn(&mut self, message: &Value, status: &str) {
        self.echo(message);
        self.assistant("did a step");
        self.turn_end(status);
    }

    pub fn next_line(&mut self) -> Value {
        match self.lines.recv_timeout(WAIT) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("output line is not JSON ({e}): {line}")),
            Err(RecvTimeoutError::Timeout) => panic!("no output line within {WAIT:?}"),
            Err(RecvTimeoutError::Disconnected) => {
                panic!("loop run ended: {}", self.stderr_now())
            }
        }
    }

    pub fn expect_reply(&mut self) -> (bool, String) {
        let v = self.next_line();
        assert_eq!(v["type"], "reply", "expected a reply, got {v}");
        (
            v["ok"].as_bool().expect("reply.ok"),
            v["text"].as_str().expect("reply.text").to_string(),
        )
    }

    /// The next line is an enqueue; returns the whole line.
    pub fn expect_enqueue(&mut self) -> Value {
        let v = self.next_line();
        assert_eq!(v["type"], "enqueue", "expected an enqueue, got {v}");
        v
    }

    /// Asserts nothing is pending before the status reply: no enqueue
    /// happened. Returns the status text.
    pub fn status(&mut self) -> String {
        let (ok, text) = self.command("/tick status");
        assert!(ok);
        text
    }

    pub fn ledger_path(&self) -> PathBuf {
        let dir = std::fs::read_dir(&self.audit_dir);
        let Ok(dir) = dir else {
            return self.audit_dir.join("missing.jsonl");
        };
        let files: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        assert!(files.len() <= 1, "one ledger per session: {files:?}");
        files
            .into_iter()
            .next()
            .unwrap_or_else(|| self.audit_dir.join("missing.jsonl"))
    }

    /// Every ledger record so far (none when the file does not exist).
    pub fn ledger(&self) -> Vec<Value> {
        read_ledger(&self.ledger_path())
    }

    /// Record types in order.
    pub fn ledger_types(&self) -> Vec<String> {
        self.ledger()
            .iter()
            .map(|r| r["type"].as_str().unwrap_or("?").to_string())
            .collect()
    }

    /// Waits until the ledger's last record has type `kind`.
    pub fn wait_ledger(&self, kind: &str) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            let l = self.ledger();
            if l.last().map(|r| r["type"] == kind).unwrap_or(false) {
                return l;
            }
            assert!(
                Instant::now() < deadline,
                "ledger never ended with {kind}: {l:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit on its own; returns (exit code, stderr).
    pub fn wait_exit(&mut self) -> (i32, String) {
        let status = self.child.wait().expect("wait");
        (status.code().unwrap_or(-1), self.stderr_now())
    }

    /// Closes stdin and waits for exit; returns (exit code, rest of stdout, stderr).
    pub fn finish(mut self) -> (i32, Vec<Value>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "loop run did not exit at end of input"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let rest: Vec<Value> = self
            .lines
            .try_iter()
            .map(|l| serde_json::from_str(&l).expect("JSON line"))
            .collect();
        let stderr = self.stderr_now();
        (status.code().unwrap_or(-1), rest, stderr)
    }

    fn stderr_now(&mut self) -> String {
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut s);
        }
        s
    }
}

impl Drop for LoopHarness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn write_config(config_home: &Path, config: &Value) {
    let dir = config_home.join("tickloop");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("loop.json"), config.to_string()).expect("write config");
}

/// Reads a ledger, skipping unparsable lines as the library's reader does.
pub fn read_ledger(path: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}
