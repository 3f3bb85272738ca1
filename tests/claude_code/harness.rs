//! What every trial of the real Claude Code CLI needs (shared by
//! `tests/claude_code.rs` and `tests/claude_code_consent.rs`): the binary,
//! the scripted Messages API (`fake_messages_api.py`) with what it was asked,
//! a project with the Loop's hooks installed and a host for its Ticks, and a
//! live session in stream-json mode.
#![allow(dead_code)]

use super::common::{self, Host, MARK_VAR};
use libtest_mimic::{Failed, Trial};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long one Claude Code turn (or hook) may take before the trial fails.
pub const TURN_WAIT: Duration = Duration::from_secs(90);

/// The Claude Code binary: `TICKLOOP_CLAUDE_BIN`, else `.ci/run`'s cache.
pub fn claude_bin() -> Result<PathBuf, String> {
    let path = match std::env::var_os("TICKLOOP_CLAUDE_BIN") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => {
            let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
            PathBuf::from(home).join(".cache/tickloop-ci/claude-code/node_modules/.bin/claude")
        }
    };
    let out = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!("{} --version failed: {out:?}", path.display()));
    }
    Ok(path)
}

/// The scripted Messages API.
pub struct FakeApi {
    pub child: Child,
    pub port: u16,
    pub log: PathBuf,
}

impl FakeApi {
    pub fn start(dir: &Path, replies: Value, mark: &Path) -> FakeApi {
        let script = dir.join("script.json");
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        write_script(&script, &replies);
        let server =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/claude_code/fake_messages_api.py");
        let child = Command::new("python3")
            .arg(server)
            .arg("--script")
            .arg(&script)
            .arg("--log")
            .arg(&log)
            .arg("--port-file")
            .arg(&port_file)
            .env(MARK_VAR, mark)
            .stdin(Stdio::null())
            .spawn()
            .expect("start the fake Messages API");
        let port = common::wait_for("the fake Messages API's port", || {
            std::fs::read_to_string(&port_file)
                .ok()?
                .trim()
                .parse()
                .ok()
        });
        FakeApi { child, port, log }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The agent's main-turn requests (those that carry tools).
    pub fn turns(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty()))
            .collect()
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn write_script(path: &Path, replies: &Value) {
    let tmp = path.with_extension("tmp");
    std::fs::write(
        &tmp,
        json!({"replies": replies, "default": {"text": "default reply"}}).to_string(),
    )
    .expect("write the script");
    std::fs::rename(&tmp, path).expect("replace the script");
}

/// The text of a request's last user message.
pub fn last_user_text(request: &Value) -> String {
    let messages = request["body"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = messages.iter().rev().find(|m| m["role"] == "user");
    match last.map(|m| &m["content"]) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// One project with the hooks installed and a host for its Ticks.
pub struct Project {
    pub host: Host,
    pub dir: PathBuf,
    pub home: PathBuf,
    pub state: PathBuf,
}

impl Project {
    /// The scripted Messages API of this project's test, answering `replies`.
    pub fn api(&self, replies: Value) -> FakeApi {
        FakeApi::start(self.host.scratch(), replies, self.host.runtime())
    }

    pub fn new() -> Project {
        let host = Host::new();
        let dir = host.scratch().join("project");
        let home = host.scratch().join("home");
        let state = host.scratch().join("loop-state");
        std::fs::create_dir_all(&dir).expect("project dir");
        std::fs::create_dir_all(&home).expect("home dir");
        let p = Project {
            host,
            dir,
            home,
            state,
        };
        let out = p.tickloop(
            &["loop", "claude-code", "install", "--project"],
            Some(&p.dir),
        );
        assert!(out.status.success(), "install: {out:?}");
        p
    }

    pub fn tickloop(&self, args: &[&str], path_arg: Option<&Path>) -> std::process::Output {
        let mut cmd = self.host.command(args);
        // The user's own settings never matter (install refuses a project
        // when the user has the hooks).
        cmd.env("HOME", &self.home).env_remove("CLAUDE_CONFIG_DIR");
        if let Some(p) = path_arg {
            cmd.arg(p);
        }
        cmd.output().expect("run tickloop")
    }

    /// The session's audit ledger records' types, in order.
    pub fn ledger(&self) -> Vec<Value> {
        let dir = self.dir.join(".pulse-tick-audit");
        let mut records = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                let text = std::fs::read_to_string(e.path()).unwrap_or_default();
                records.extend(
                    text.lines()
                        .filter_map(|l| serde_json::from_str::<Value>(l).ok()),
                );
            }
        }
        records
    }

    pub fn ledger_types(&self) -> Vec<String> {
        self.ledger()
            .iter()
            .map(|r| r["type"].as_str().unwrap_or("?").to_string())
            .collect()
    }

    /// `claude` with this project's environment: its own HOME, the fake
    /// API, the host's runtime directory, and `tickloop` first on PATH.
    pub fn claude_command(&self, port: u16, delay_ms: u64) -> Command {
        let bin = claude_bin().expect("Claude Code");
        let tickloop_dir = Path::new(common::tickloop_bin()).parent().expect("bin dir");
        let path = std::env::join_paths(std::iter::once(tickloop_dir.to_path_buf()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ))
        .expect("PATH");
        let mut cmd = Command::new(bin);
        cmd.current_dir(&self.dir)
            .env("PATH", path)
            .env("HOME", &self.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("IS_SANDBOX", "1")
            // MCP tools in the request's `tools` (not deferred behind
            // ToolSearch), so the scripted model can call them directly.
            .env("ENABLE_TOOL_SEARCH", "false")
            .env("TICKLOOP_RUNTIME_DIR", self.host.runtime())
            .env("TICKLOOP_LOOP_STATE_DIR", &self.state)
            .env("TICKLOOP_LOOP_DELAY_MS", delay_ms.to_string())
            .env("XDG_DATA_HOME", self.host.scratch().join("data"))
            .env(MARK_VAR, self.host.runtime());
        cmd
    }

    pub fn claude(&self, api: &FakeApi, delay_ms: u64, extra: &[&str]) -> Claude {
        let mut cmd = self.claude_command(api.port, delay_ms);
        cmd.args([
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
        ])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("start Claude Code");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if let Ok(v) = serde_json::from_str::<Value>(&line) {
                    if tx.send(v).is_err() {
                        return;
                    }
                }
            }
        });
        Claude {
            child,
            stdin: Some(stdin),
            lines: rx,
            seen: Vec::new(),
        }
    }
}

/// A live Claude Code session in stream-json mode.
pub struct Claude {
    child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: Receiver<Value>,
    pub seen: Vec<Value>,
}

impl Claude {
    pub fn write(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{v}").expect("write to Claude Code");
        stdin.flush().expect("flush");
    }

    pub fn say(&mut self, text: &str) {
        self.write(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    pub fn interrupt(&mut self) {
        self.write(json!({"type": "control_request", "request_id": "interrupt-1", "request": {"subtype": "interrupt"}}));
    }

    /// The next `result` line (one per turn or consumed prompt).
    pub fn result(&mut self) -> Value {
        self.next_line("a result line", |v| v["type"] == "result")
    }

    /// The next line that is `wanted`, `what` it is for the failure.
    pub fn next_line(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + TURN_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if wanted(&v) {
                        return v;
                    }
                }
                Err(_) => panic!(
                    "no {what} from Claude Code within {TURN_WAIT:?}; seen: {:?}",
                    self.seen
                        .iter()
                        .map(|v| v["type"].to_string())
                        .collect::<Vec<_>>()
                ),
            }
        }
    }

    /// The next elicitation an MCP server asks of the person (a
    /// `control_request` of subtype `elicitation`).
    pub fn elicitation(&mut self) -> Value {
        self.next_line("elicitation control_request", |v| {
            v["type"] == "control_request" && v["request"]["subtype"] == "elicitation"
        })
    }

    /// Answers the elicitation `request` with `action` (`accept`,
    /// `decline`, `cancel`), as a harness's person would.
    pub fn answer(&mut self, request: &Value, action: &str) {
        let mut response = json!({"action": action});
        if action == "accept" {
            response["content"] = json!({});
        }
        self.write(json!({
            "type": "control_response",
            "response": {
                "subtype": "success",
                "request_id": request["request_id"],
                "response": response,
            }
        }));
    }

    /// The result text of the next turn.
    pub fn result_text(&mut self) -> String {
        self.result()["result"].as_str().unwrap_or("").to_string()
    }

    /// Closes stdin and waits for the process to end.
    pub fn finish(mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + TURN_WAIT;
        loop {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            if Instant::now() >= deadline {
                let _ = self.child.kill();
                panic!("Claude Code did not exit after its input ended");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Claude {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The tool results Claude Code sent back to the model, in order.
pub fn tool_results(api: &FakeApi) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in api.turns() {
        for m in r["body"]["messages"].as_array().into_iter().flatten() {
            for part in m["content"].as_array().into_iter().flatten() {
                if part["type"] == "tool_result" {
                    let text = part["content"].to_string();
                    if !out.contains(&text) {
                        out.push(text);
                    }
                }
            }
        }
    }
    out
}

pub fn trial(name: &str, f: fn(), missing: &Option<String>) -> Trial {
    Trial::test(name, move || {
        std::panic::catch_unwind(f).map_err(|e| {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panicked".into());
            Failed::from(msg)
        })
    })
    .with_ignored_flag(missing.is_some())
}
