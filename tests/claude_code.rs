//! The Loop and the Tick tools inside the real Claude Code CLI, driven by a
//! scripted model on loopback (issue 21).
//!
//! Each trial installs the hooks with `tickloop loop claude-code install`
//! into a fresh project, starts `tests/claude_code/fake_messages_api.py` (a
//! scripted Messages API that records every request), and runs Claude Code
//! in `-p` mode with stream-json input, the way a harness keeps one session
//! alive: user messages go in on stdin, one `result` line comes out per turn.
//!
//! Claude Code comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/claude-code`; `TICKLOOP_CLAUDE_BIN` names another
//! binary). Without it every trial is reported IGNORED, with the reason.
//!
//! No wall-clock bound is asserted; waits are on events (lines, files), with
//! generous limits that only guard against hangs.

mod common;

use common::{Host, MARK_VAR};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

/// How long one Claude Code turn (or hook) may take before the trial fails.
const TURN_WAIT: Duration = Duration::from_secs(90);

/// The Claude Code binary: `TICKLOOP_CLAUDE_BIN`, else `.ci/run`'s cache.
fn claude_bin() -> Result<PathBuf, String> {
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
struct FakeApi {
    child: Child,
    port: u16,
    log: PathBuf,
}

impl FakeApi {
    fn start(dir: &Path, replies: Value, mark: &Path) -> FakeApi {
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
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The agent's main-turn requests (those that carry tools).
    fn turns(&self) -> Vec<Value> {
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

fn write_script(path: &Path, replies: &Value) {
    let tmp = path.with_extension("tmp");
    std::fs::write(
        &tmp,
        json!({"replies": replies, "default": {"text": "default reply"}}).to_string(),
    )
    .expect("write the script");
    std::fs::rename(&tmp, path).expect("replace the script");
}

/// The text of a request's last user message.
fn last_user_text(request: &Value) -> String {
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

/// Every text of every message and the system prompt of a request, for "no
/// `/tick` text reached the model".
fn all_text(request: &Value) -> String {
    request["body"].to_string()
}

/// Panics with the context when a request carries `/tick` text.
fn assert_no_tick_text(requests: &[Value]) {
    for (i, r) in requests.iter().enumerate() {
        let text = all_text(r);
        // `/tick` as a command word (`/tickloop`, in the hook's path, is not).
        let found = text.match_indices("/tick").map(|(at, _)| at).find(|&at| {
            !text[at + 5..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        });
        if let Some(at) = found {
            let from = text.floor_char_boundary(at.saturating_sub(300));
            let to = text.ceil_char_boundary((at + 300).min(text.len()));
            panic!("request {i} carries /tick text: …{}…", &text[from..to]);
        }
    }
}

/// One project with the hooks installed and a host for its Ticks.
struct Project {
    host: Host,
    dir: PathBuf,
    home: PathBuf,
    state: PathBuf,
}

impl Project {
    /// The scripted Messages API of this project's test, answering `replies`.
    fn api(&self, replies: Value) -> FakeApi {
        FakeApi::start(self.host.scratch(), replies, self.host.runtime())
    }

    fn new() -> Project {
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

    fn tickloop(&self, args: &[&str], path_arg: Option<&Path>) -> std::process::Output {
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
    fn ledger(&self) -> Vec<Value> {
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

    fn ledger_types(&self) -> Vec<String> {
        self.ledger()
            .iter()
            .map(|r| r["type"].as_str().unwrap_or("?").to_string())
            .collect()
    }

    /// `claude` with this project's environment: its own HOME, the fake
    /// API, the host's runtime directory, and `tickloop` first on PATH.
    fn claude_command(&self, port: u16, delay_ms: u64) -> Command {
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

    fn claude(&self, api: &FakeApi, delay_ms: u64, extra: &[&str]) -> Claude {
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
struct Claude {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    seen: Vec<Value>,
}

impl Claude {
    fn write(&mut self, v: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{v}").expect("write to Claude Code");
        stdin.flush().expect("flush");
    }

    fn say(&mut self, text: &str) {
        self.write(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    fn interrupt(&mut self) {
        self.write(json!({"type": "control_request", "request_id": "interrupt-1", "request": {"subtype": "interrupt"}}));
    }

    /// The next `result` line (one per turn or consumed prompt).
    fn result(&mut self) -> Value {
        let deadline = Instant::now() + TURN_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(v) => {
                    self.seen.push(v.clone());
                    if v["type"] == "result" {
                        return v;
                    }
                }
                Err(_) => panic!(
                    "no result line from Claude Code within {TURN_WAIT:?}; seen: {:?}",
                    self.seen
                        .iter()
                        .map(|v| v["type"].to_string())
                        .collect::<Vec<_>>()
                ),
            }
        }
    }

    /// The result text of the next turn.
    fn result_text(&mut self) -> String {
        self.result()["result"].as_str().unwrap_or("").to_string()
    }

    /// Closes stdin and waits for the process to end.
    fn finish(mut self) {
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

fn increment(host: &Host) {
    let out = host.run(&[
        "call",
        "hosted:counter",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// Case 1: a person's turn, then `/tick 2` with a subscribed counter that an
/// outside `tickloop call` changes: two continued turns carrying the time
/// step and the counter's delivery, the ledger in order, no `/tick` text.
fn bounded_run_with_deliveries() {
    let p = Project::new();
    p.host.open_counter("counter");
    let api = p.api(json!([
        {"text": "hello, person"},
        {"text": "step one seen", "after_file": p.host.scratch().join("step1-gate")},
        {"text": "step two seen"}
    ]));
    let mut c = p.claude(&api, 200, &[]);
    c.say("Please watch the counter.");
    assert_eq!(c.result_text(), "hello, person");
    c.say("/tick subscribe hosted:counter");
    let text = c.result_text();
    assert!(text.contains("subscribed: hosted:counter"), "{text}");
    increment(&p.host);
    increment(&p.host);
    c.say("/tick 2");
    let armed = c.result_text();
    assert!(
        armed.contains("armed run") && armed.contains("2 time steps"),
        "{armed}"
    );
    // Step one rides on the wake hook, step two on the Stop hook: both turns
    // end in one result each.
    // Step one rides on the wake hook's turn; while the model "thinks" about
    // it, the counter changes again; the Stop hook then continues that turn
    // with step two.
    common::wait_for_within(TURN_WAIT, "step one's request", || {
        (api.turns().len() == 2).then_some(())
    });
    increment(&p.host);
    std::fs::write(p.host.scratch().join("step1-gate"), "").expect("open the gate");
    let _ = c.result_text();
    common::wait_for("the loop to complete", || {
        p.ledger_types()
            .contains(&"loop_complete".to_string())
            .then_some(())
    });
    c.finish();

    let turns = api.turns();
    assert_eq!(
        turns.len(),
        3,
        "one person's turn and two time steps: {turns:#?}"
    );
    let step1 = last_user_text(&turns[1]);
    let step2 = last_user_text(&turns[2]);
    assert!(
        step1.contains("Stop hook blocking error from command \"UserPromptSubmit\": tick"),
        "step 1 comes from the wake hook, with the time-step text: {step1}"
    );
    assert!(
        step1.contains(r#""instance":"hosted:counter""#),
        "step 1 carries the delivery: {step1}"
    );
    assert!(
        step1.contains(r#""value":2"#),
        "the counter's state after two calls: {step1}"
    );
    assert!(
        step2.contains("Stop hook feedback:\ntick"),
        "step 2 continues the agent: {step2}"
    );
    assert!(
        step2.contains(r#""value":3"#) && step2.contains(r#""updates":1"#),
        "step 2 carries the one change since step 1: {step2}"
    );
    assert_no_tick_text(&api.requests());
    let types = p.ledger_types();
    assert_eq!(
        types,
        [
            "loop_armed",
            "tick_scheduled",
            "tick_enqueued",
            "tick_terminal",
            "tick_scheduled",
            "tick_enqueued",
            "tick_terminal",
            "loop_complete"
        ],
        "{:#?}",
        p.ledger()
    );
    for r in p.ledger() {
        assert_eq!(r["schema"], "pulse.tick-loop.audit.v1");
        assert_eq!(r["policyId"], "tick");
    }
}

/// Case 2: refusals reach no model.
fn refusals_reach_no_model() {
    let p = Project::new();
    let api = p.api(json!([{"text": "first answer"}]));
    let mut c = p.claude(&api, 100, &[]);
    c.say("/tick 2");
    let t = c.result_text();
    assert!(t.contains("refused: no user message yet"), "{t}");
    assert!(api.turns().is_empty(), "a refusal reached the model");
    c.say("Hello.");
    assert_eq!(c.result_text(), "first answer");
    c.say("/tick 0");
    let t = c.result_text();
    assert!(t.contains("refused: invalid count `0`"), "{t}");
    c.say("/tick --policy nosuch");
    let t = c.result_text();
    assert!(t.contains("refused: unknown policy `nosuch`"), "{t}");
    c.say("/tick policies");
    let t = c.result_text();
    assert!(t.contains("tick (default)"), "{t}");
    c.say("/tick status");
    let t = c.result_text();
    assert!(t.contains("inactive"), "{t}");
    c.finish();
    assert_eq!(
        api.turns().len(),
        1,
        "only the person's message reached the model"
    );
    assert_no_tick_text(&api.requests());
    assert!(p.ledger_types().is_empty(), "{:?}", p.ledger_types());
    // What Claude Code asked of the API at all: HEAD / and streaming messages.
    for r in api.requests() {
        let (method, path) = (
            r["method"].as_str().unwrap_or(""),
            r["path"].as_str().unwrap_or(""),
        );
        assert!(
            (method == "HEAD" && path == "/")
                || (method == "POST"
                    && path.starts_with("/v1/messages")
                    && r["body"]["stream"] == true),
            "unexpected request {method} {path}"
        );
    }
}

/// Case 3: `/tick stop` while a step is scheduled (during the delay).
fn stop_mid_run() {
    let p = Project::new();
    let api = p.api(json!([{"text": "answer"}]));
    // A long delay: the stop comes while the first step waits for it.
    let mut c = p.claude(&api, 5000, &[]);
    c.say("Hello.");
    assert_eq!(c.result_text(), "answer");
    c.say("/tick 3");
    assert!(c.result_text().contains("armed run"));
    c.say("/tick stop");
    let t = c.result_text();
    assert!(t.contains("stopped run"), "{t}");
    c.say("/tick status");
    assert!(c.result_text().contains("inactive"));
    // The wake hook finds the run gone when its delay ends: nothing is sent.
    common::wait_for_within(
        Duration::from_secs(60),
        "the scheduled step's cancellation",
        || {
            let types = p.ledger_types();
            types.contains(&"loop_stopped".to_string()).then_some(types)
        },
    );
    c.finish();
    let types = p.ledger_types();
    assert_eq!(
        types,
        [
            "loop_armed",
            "tick_scheduled",
            "tick_cancelled_before_enqueue",
            "loop_stopped"
        ],
        "{:#?}",
        p.ledger()
    );
    assert_eq!(api.turns().len(), 1, "no time step reached the model");
}

/// Case 4: an interrupted step stops the run; `--resume` is allowed once.
fn interrupted_turn_and_resume_once() {
    let p = Project::new();
    let api = p.api(json!([{"text": "answer"}, {"hang": true}]));
    // The delay is long enough for `/tick stop` to come before a step.
    let mut c = p.claude(&api, 5000, &[]);
    c.say("Hello.");
    assert_eq!(c.result_text(), "answer");
    c.say("/tick 2");
    assert!(c.result_text().contains("armed run"));
    // The first step's turn hangs in the model: interrupt it.
    common::wait_for_within(TURN_WAIT, "the first step's request", || {
        (api.turns().len() == 2).then_some(())
    });
    c.interrupt();
    let r = c.result();
    assert_ne!(r["subtype"], "success", "{r}");
    c.say("/tick status");
    let t = c.result_text();
    assert!(
        t.contains("inactive"),
        "the interrupted step stopped the run: {t}"
    );
    let ledger = p.ledger();
    let terminal = ledger
        .iter()
        .find(|r| r["type"] == "tick_terminal")
        .expect("tick_terminal");
    assert_eq!(terminal["status"], "interrupted", "{terminal}");
    assert_eq!(ledger.last().unwrap()["type"], "loop_stopped");
    c.say("/tick 1");
    let t = c.result_text();
    assert!(
        t.contains("refused: the latest turn was interrupted"),
        "{t}"
    );
    c.say("/tick 1 --resume");
    let t = c.result_text();
    assert!(t.contains("resuming after the interrupted turn"), "{t}");
    c.say("/tick stop");
    assert!(c.result_text().contains("stopped run"));
    c.say("/tick 1 --resume");
    let t = c.result_text();
    assert!(
        t.contains("refused: this interrupted turn was already resumed once"),
        "{t}"
    );
    // End of input: Claude Code waits for the wake hooks, which send nothing.
    c.finish();
    assert_eq!(api.turns().len(), 2, "no step after the interrupted one");
    let types = p.ledger_types();
    assert_eq!(
        types,
        [
            "loop_armed",
            "tick_scheduled",
            "tick_enqueued",
            "tick_terminal",
            "loop_stopped",
            "loop_armed",
            "tick_scheduled",
            "tick_cancelled_before_enqueue",
            "loop_stopped"
        ],
        "{:#?}",
        p.ledger()
    );
    let resumed = &p.ledger()[5];
    assert_eq!(resumed["resume"], true, "{resumed}");
}

/// The tool results Claude Code sent back to the model, in order.
fn tool_results(api: &FakeApi) -> Vec<String> {
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

/// Case 5: the scripted model uses the MCP tools: a Tick opened mid-session
/// brings its own tools (list_changed), TickCall gets the real result, a
/// stale revision is refused, and TickManage subscribes the session's Loop.
fn mcp_tools_inside_claude_code() {
    let p = Project::new();
    let log = p.host.log_path("counter");
    let counter = common::tick("counter.py");
    let api = p.api(
        json!([
            {"tool_use": {"name": "mcp__tickloop__TickManage", "input": {"action": "open", "command": [counter, "--log", log], "name": "counter"}}},
            {"text": "opened"},
            {"tool_use": {"name": "mcp__tickloop__TickCall", "input": {"instance": "hosted:counter", "tool": "increment", "args": {"amount": 5}, "revision": "1"}}},
            {"tool_use": {"name": "mcp__tickloop__TickCall", "input": {"instance": "hosted:counter", "tool": "increment", "args": {"amount": 7}, "revision": "stale-revision"}}},
            {"text": "called"},
            {"tool_use": {"name": "mcp__tickloop__TickManage", "input": {"action": "subscribe", "instance": "hosted:counter"}}},
            {"text": "subscribed"}
        ]),
    );
    // docs/mcp.md's snippet, as written (`tickloop` is on PATH).
    let added = p
        .claude_command(api.port, 100)
        .args(["mcp", "add", "tickloop", "--", "tickloop", "mcp"])
        .stdin(Stdio::null())
        .output()
        .expect("claude mcp add");
    assert!(added.status.success(), "claude mcp add: {added:?}");
    let allowed = "mcp__tickloop__TickManage,mcp__tickloop__TickCall";
    let mut c = p.claude(&api, 100, &["--allowedTools", allowed]);
    c.say("Open a counter.");
    assert_eq!(c.result_text(), "opened");
    c.say("Add 5 to it.");
    assert_eq!(c.result_text(), "called");
    c.say("Subscribe to it.");
    assert_eq!(c.result_text(), "subscribed");
    c.say("/tick status");
    let status = c.result_text();
    assert!(status.contains("subscribed: hosted:counter"), "{status}");
    c.finish();

    let results = tool_results(&api);
    assert_eq!(results.len(), 4, "{results:#?}");
    assert!(
        results[0].contains("hosted:counter"),
        "open: {}",
        results[0]
    );
    // Claude Code hands the model the result's structuredContent.
    assert!(
        results[1].contains(r#"\"outcome\":\"result\""#) && results[1].contains(r#"\"value\":5"#),
        "call: {results:#?}"
    );
    assert!(
        results[2].contains("not_executed") && results[2].contains("revision"),
        "stale revision: {results:#?}"
    );
    assert!(
        results[3].contains("subscribed: hosted:counter"),
        "subscribe: {}",
        results[3]
    );
    assert_eq!(
        p.host.read("hosted:counter")["data"]["value"],
        5,
        "the stale call did not run"
    );

    // The counter's own tools appeared once it opened (list_changed): in the
    // first request after the open, not before; every name fits 64.
    let turns = api.turns();
    let names = |r: &Value| -> Vec<String> {
        r["body"]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    };
    assert!(
        names(&turns[0]).contains(&"mcp__tickloop__TickCall".to_string()),
        "{:?}",
        names(&turns[0])
    );
    assert!(!names(&turns[0])
        .iter()
        .any(|n| n.starts_with("mcp__tickloop__counter__")));
    let later = names(turns.last().unwrap());
    assert!(
        later.contains(&"mcp__tickloop__counter__increment".to_string()),
        "{later:?}"
    );
    for r in &turns {
        for n in names(r) {
            assert!(n.len() <= 64, "tool name over 64 characters: {n}");
        }
    }
}

/// Case 6: uninstall leaves the settings as they were, byte for byte.
fn uninstall_restores_settings() {
    let host = Host::new();
    let dir = host.scratch().join("project");
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let original = "{\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n  \"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}\n}";
    std::fs::write(dir.join(".claude/settings.json"), original).unwrap();
    let run = |args: &[&str]| {
        let mut cmd = host.command(args);
        cmd.arg(&dir)
            .env("HOME", host.scratch())
            .env_remove("CLAUDE_CONFIG_DIR");
        cmd.output().unwrap()
    };
    let out = run(&["loop", "claude-code", "install", "--project"]);
    assert!(out.status.success(), "{out:?}");
    let installed: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        installed["hooks"]["Stop"].as_array().unwrap().len(),
        2,
        "merged, not clobbered"
    );
    assert_eq!(installed["permissions"]["allow"][0], "Bash(ls)");
    assert!(dir.join(".claude/commands/tick.md").exists());
    let out = run(&["loop", "claude-code", "uninstall", "--project"]);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap(),
        original
    );
    assert!(
        !dir.join(".claude/commands").exists(),
        "the directory install created is gone"
    );
    assert!(!dir.join(".claude/tickloop-install.json").exists());
    // Not valid JSON: refused, nothing written.
    std::fs::write(dir.join(".claude/settings.json"), "{ oops").unwrap();
    let out = run(&["loop", "claude-code", "install", "--project"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not valid JSON"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap(),
        "{ oops"
    );
    assert!(!dir.join(".claude/commands").exists());
    // A project with no settings: uninstall removes every file install made.
    let fresh = host.scratch().join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    for verb in ["install", "uninstall"] {
        let out = host
            .command(&["loop", "claude-code", verb, "--project"])
            .arg(&fresh)
            .env("HOME", host.scratch())
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    assert_eq!(
        std::fs::read_dir(&fresh).unwrap().count(),
        0,
        "nothing left in a fresh project"
    );
    // Installed for the user: a project install would run every hook twice.
    let user_home = host.scratch().join("user-home");
    std::fs::create_dir_all(&user_home).unwrap();
    let as_user = |args: &[&str], project: Option<&Path>| {
        let mut cmd = host.command(args);
        if let Some(p) = project {
            cmd.arg(p);
        }
        cmd.env("HOME", &user_home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap()
    };
    let out = as_user(&["loop", "claude-code", "install", "--user"], None);
    assert!(out.status.success(), "{out:?}");
    assert!(user_home.join(".claude/settings.json").exists());
    let out = as_user(
        &["loop", "claude-code", "install", "--project"],
        Some(&fresh),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already installed for the user"),
        "{out:?}"
    );
    assert_eq!(
        std::fs::read_dir(&fresh).unwrap().count(),
        0,
        "nothing written"
    );
    let out = as_user(&["loop", "claude-code", "uninstall", "--user"], None);
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_dir(&user_home).unwrap().count(),
        0,
        "the user's .claude install created is gone"
    );
}

fn trial(name: &str, f: fn(), missing: &Option<String>) -> Trial {
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

fn main() {
    let args = Arguments::from_args();
    let missing = claude_bin().err();
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the Claude Code trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_CLAUDE_BIN"
        );
    }
    let none = None;
    let trials = vec![
        trial(
            "bounded_run_with_deliveries",
            bounded_run_with_deliveries,
            &missing,
        ),
        trial("refusals_reach_no_model", refusals_reach_no_model, &missing),
        trial("stop_mid_run", stop_mid_run, &missing),
        trial(
            "interrupted_turn_and_resume_once",
            interrupted_turn_and_resume_once,
            &missing,
        ),
        trial(
            "mcp_tools_inside_claude_code",
            mcp_tools_inside_claude_code,
            &missing,
        ),
        // Needs no Claude Code: it checks the files install and uninstall write.
        trial(
            "uninstall_restores_settings",
            uninstall_restores_settings,
            &none,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}
