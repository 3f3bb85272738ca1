//! What every trial of the real Claude Code CLI needs (shared by
//! `tests/claude_code.rs` and `tests/claude_code_consent.rs`): the binary,
//! the scripted Messages API (`fake_messages_api.py`, through
//! [`super::agents::FakeApi`]) with what it was asked, a project with the
//! Loop's hooks installed and a host for its Ticks, a live session in
//! stream-json mode, and Claude Code as the shared agent trials run it
//! ([`ClaudeCode`]).
#![allow(dead_code)]

use super::agents::project::{self, AgentCli};
pub use super::agents::{trial, FakeApi};
use super::common::{self, Host, MARK_VAR};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long one Claude Code turn (or hook) may take before the trial fails.
pub const TURN_WAIT: Duration = Duration::from_secs(90);

/// The Claude Code binary: `TICKLOOP_CLAUDE_BIN`, else `.ci/run`'s cache.
pub fn claude_bin() -> Result<PathBuf, String> {
    super::agents::cli_bin("TICKLOOP_CLAUDE_BIN", "claude-code", "claude")
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
        FakeApi::start(
            self.host.scratch(),
            "messages",
            replies,
            self.host.runtime(),
        )
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
        for text in request_tool_results(&r) {
            if !out.contains(&text) {
                out.push(text);
            }
        }
    }
    out
}

/// The tool results one request to the Messages API carries.
fn request_tool_results(request: &Value) -> Vec<String> {
    request["body"]["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|part| part["type"] == "tool_result")
        .map(|part| part["content"].to_string())
        .collect()
}

/// Claude Code, as the shared agent trials (`tests/agents/trials.rs`) run
/// it: `claude -p PROMPT` (`--continue` keeps the session), its Bash tool
/// allowed.
pub struct ClaudeCode;

pub static CLAUDE_CODE: ClaudeCode = ClaudeCode;

impl AgentCli for ClaudeCode {
    fn name(&self) -> &'static str {
        "claude-code"
    }

    fn dialect(&self) -> &'static str {
        "messages"
    }

    fn bin(&self) -> Result<PathBuf, String> {
        claude_bin()
    }

    fn config_env(&self, p: &project::Project) -> Vec<(&'static str, OsString)> {
        vec![("HOME", p.home.clone().into())]
    }

    fn configure(&self, _p: &project::Project) {}

    fn run_env(&self, p: &project::Project, cmd: &mut Command) {
        cmd.env_remove("CLAUDE_CONFIG_DIR")
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", p.api.port),
            )
            .env("ANTHROPIC_API_KEY", "dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("IS_SANDBOX", "1")
            .env("ENABLE_TOOL_SEARCH", "false");
    }

    fn prompt_args(&self, _p: &project::Project, resume: bool, prompt: &str) -> Vec<String> {
        let mut args: Vec<String> = vec!["-p".into(), prompt.into()];
        args.extend(["--allowedTools".into(), "Bash".into()]);
        if resume {
            args.push("--continue".into());
        }
        args
    }

    fn mcp_call(&self, tool: &str, args: Value) -> Value {
        json!({"tool_use": {"name": format!("mcp__tickloop__{tool}"), "input": args}})
    }

    fn shell_call(&self, command: &str) -> Value {
        json!({"tool_use": {"name": "Bash", "input": {"command": command}}})
    }

    fn last_user_text(&self, request: &Value) -> String {
        last_user_text(request)
    }

    fn tool_results(&self, request: &Value) -> Vec<String> {
        request_tool_results(request)
    }

    fn shows_reply(&self, _p: &project::Project, out: &common::Out, text: &str) {
        assert!(
            out.stdout.contains(text) || out.stderr.contains(text),
            "{out:?}"
        );
    }

    fn first_step_after_next_turn(&self) -> bool {
        false
    }
}
