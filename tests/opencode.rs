//! The Loop and the Tick tools inside the real opencode, driven by a scripted
//! chat-completions API on loopback (issue 29).
//!
//! Each trial gives opencode its own home (XDG directories in the scratch
//! directory), the person's `opencode.json` (the scripted provider),
//! installs Tickloop into the project with `tickloop loop opencode install`,
//! and keeps one live session the way opencode does: `opencode serve`, with
//! each prompt sent by `opencode run --attach URL` (`run` alone ends at
//! idle, before any time step). What the person is shown (the plugin's
//! toasts) is read from the server's event stream.
//!
//! opencode comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/opencode`; `TICKLOOP_OPENCODE_BIN` names another
//! binary). Without it every trial that runs it is reported IGNORED, with
//! the reason.
//!
//! No wall-clock bound is asserted; waits are on events (lines, files), with
//! generous limits that only guard against hangs.

mod agents;
mod common;

use agents::{assert_no_tick_text, increment, ledger, ledger_types, FakeApi, TWO_STEP_RUN};
use common::{Host, MARK_VAR};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn opencode_bin() -> Result<PathBuf, String> {
    agents::cli_bin("TICKLOOP_OPENCODE_BIN", "opencode", "opencode")
}

/// The person's `opencode.json`: the scripted provider, nothing shared.
fn user_config(port: u16) -> String {
    let config = json!({
        "$schema": "https://opencode.ai/config.json",
        "model": "fake/fake-model",
        "small_model": "fake/fake-model",
        "autoupdate": false,
        "share": "disabled",
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": format!("http://127.0.0.1:{port}/v1"), "apiKey": "{env:FAKE_API_KEY}"},
            "models": {"fake-model": {"tool_call": true}}
        }}
    });
    serde_json::to_string_pretty(&config).expect("config") + "\n"
}

/// One project with Tickloop installed for opencode, its server running.
struct Project {
    host: Host,
    dir: PathBuf,
    home: PathBuf,
    api: FakeApi,
    server: Child,
    url: String,
    events: PathBuf,
    watcher: Child,
}

impl Drop for Project {
    fn drop(&mut self) {
        for child in [&mut self.server, &mut self.watcher] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A port free now on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn opencode_env(cmd: &mut Command, host: &Host, dir: &Path, home: &Path) {
    cmd.current_dir(dir)
        .env("PATH", agents::path_with_tickloop())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".local/state"))
        .env("FAKE_API_KEY", "dummy")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .env("OPENCODE_DISABLE_SHARE", "1")
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("TICKLOOP_LOOP_STATE_DIR", host.scratch().join("loop-state"))
        .env("TICKLOOP_LOOP_DELAY_MS", "200")
        .env(MARK_VAR, host.runtime());
}

impl Project {
    fn new(script: impl FnOnce(&Path) -> Value) -> Project {
        let host = Host::new();
        let replies = script(host.scratch());
        let dir = host.scratch().join("project");
        let home = host.scratch().join("home");
        std::fs::create_dir_all(&dir).expect("project dir");
        std::fs::create_dir_all(&home).expect("home dir");
        let api = FakeApi::start(host.scratch(), "chat", replies, host.runtime());
        std::fs::write(dir.join("opencode.json"), user_config(api.port)).expect("opencode.json");
        let out = host
            .command(&["loop", "opencode", "install", "--project"])
            .arg(&dir)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .output()
            .expect("install");
        assert!(out.status.success(), "install: {out:?}");
        let port = free_port();
        let mut cmd = Command::new(opencode_bin().expect("opencode"));
        opencode_env(&mut cmd, &host, &dir, &home);
        cmd.args(["serve", "--port", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut server = cmd.spawn().expect("opencode serve");
        let stdout = server.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("listening") {
                    let _ = tx.send(());
                }
            }
        });
        rx.recv_timeout(common::COMMAND_DEADLINE)
            .expect("opencode serve to listen");
        let url = format!("http://127.0.0.1:{port}");
        let events = host.scratch().join("events.log");
        let watcher = Command::new("python3")
            .args(["-u", "-c", "import sys, urllib.request\nstream = urllib.request.urlopen(sys.argv[1] + '/event')\nprint('connected', flush=True)\nfor line in stream:\n    print(line.decode().strip(), flush=True)\n", &url])
            .stdout(std::fs::File::create(&events).expect("events file"))
            .stderr(Stdio::null())
            .env(MARK_VAR, host.runtime())
            .spawn()
            .expect("event watcher");
        common::wait_for_within(common::COMMAND_DEADLINE, "the event stream", || {
            std::fs::read_to_string(&events)
                .ok()
                .filter(|t| t.starts_with("connected"))
        });
        Project {
            host,
            dir,
            home,
            api,
            server,
            url,
            events,
            watcher,
        }
    }

    /// `opencode run --attach URL [--continue] WORDS...`, to its end.
    fn run(&self, resume: bool, words: &[&str]) -> common::Out {
        let mut cmd = Command::new(opencode_bin().expect("opencode"));
        opencode_env(&mut cmd, &self.host, &self.dir, &self.home);
        cmd.args(["run", "--attach", &self.url]);
        if resume {
            cmd.arg("--continue");
        }
        cmd.args(words)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        common::run_prepared(cmd, &["opencode", "run"])
    }

    /// Waits for a toast whose message contains `text`; returns it.
    fn toast(&self, text: &str) -> String {
        common::wait_for(&format!("a toast saying {text:?}"), || {
            std::fs::read_to_string(&self.events)
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l.strip_prefix("data: ")?).ok())
                .filter(|e| e["type"] == "tui.toast.show")
                .filter_map(|e| e["properties"]["message"].as_str().map(str::to_string))
                .find(|m| m.contains(text))
        })
    }
}

/// The text of a chat-completions request's last user message.
fn last_user_text(request: &Value) -> String {
    let messages = request["body"]["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| &m["content"])
    {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Trial: the model calls TickRead on an open counter; the tool message in
/// the next request carries the counter's state.
fn tick_read_reaches_the_model() {
    let p = Project::new(|_| {
        json!([
            {"call": {"name": "tickloop_TickRead", "args": {"instance": "hosted:counter"}}},
            {"text": "read it"}
        ])
    });
    p.host.open_counter("counter");
    for _ in 0..4 {
        increment(&p.host);
    }
    let out = p.run(false, &["What does the counter say?"]);
    assert_eq!(out.code, 0, "{out:?}");
    let turns = p.api.turns();
    assert_eq!(turns.len(), 2, "the call and the answer: {turns:#?}");
    let tools = turns[0]["body"]["tools"].to_string();
    assert!(tools.contains(r#""name":"tickloop_TickRead""#), "{tools}");
    let results: Vec<String> = turns[1]["body"]["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert_eq!(results.len(), 1, "{:#}", turns[1]["body"]["messages"]);
    assert!(
        results[0].contains(r#"\"value\":4"#),
        "the counter's state after four calls: {}",
        results[0]
    );
}

/// Trial: a natural turn, `/tick subscribe hosted:counter`, `/tick 2`: the
/// plugin posts the first step after the delay and the second when that
/// turn ends; exactly two time steps, each carrying the delivery; no
/// `/tick` text reaches the model; the ledger in order.
fn bounded_run_with_deliveries() {
    let p = Project::new(|scratch| {
        json!([
            {"text": "hello, person"},
            {"text": "step one seen", "after_file": scratch.join("step1-gate")},
            {"text": "step two seen"}
        ])
    });
    let gate = p.host.scratch().join("step1-gate");
    p.host.open_counter("counter");
    let out = p.run(false, &["Please watch the counter."]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(p.api.turns().len(), 1);
    p.run(true, &["/tick", "subscribe", "hosted:counter"]);
    p.toast("subscribed: hosted:counter");
    increment(&p.host);
    increment(&p.host);
    p.run(true, &["/tick", "2"]);
    p.toast("armed run");
    common::wait_for_within(common::COMMAND_DEADLINE, "step one's request", || {
        (p.api.turns().len() == 2).then_some(())
    });
    increment(&p.host);
    std::fs::write(&gate, "").expect("open the gate");
    common::wait_for_within(common::COMMAND_DEADLINE, "the run to complete", || {
        ledger_types(&p.dir)
            .contains(&"loop_complete".to_string())
            .then_some(())
    });

    let turns = p.api.turns();
    assert_eq!(
        turns.len(),
        3,
        "one natural turn and two time steps: {turns:#?}"
    );
    let step1 = last_user_text(&turns[1]);
    let step2 = last_user_text(&turns[2]);
    for (n, step) in [(1, &step1), (2, &step2)] {
        assert!(
            step.starts_with("tick\n\n{"),
            "step {n} is the time step: {step}"
        );
        assert!(
            step.contains(r#""instance":"hosted:counter""#),
            "step {n} carries the delivery: {step}"
        );
    }
    assert!(
        step1.contains(r#""value":2"#),
        "two calls before step one: {step1}"
    );
    assert!(
        step2.contains(r#""value":3"#) && step2.contains(r#""updates":1"#),
        "step two carries the one change since step one: {step2}"
    );
    assert_no_tick_text(&p.api.requests());
    assert_eq!(ledger_types(&p.dir), TWO_STEP_RUN, "{:#?}", ledger(&p.dir));
}

/// Trial: `/tick 0` is refused and shown to the person, with no model
/// request; `/tick status` is answered the same way.
fn refusals_reach_no_model() {
    let p = Project::new(|_| json!([{"text": "first answer"}]));
    let out = p.run(false, &["Hello."]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(p.api.turns().len(), 1, "the person's turn");
    let before = p.api.requests().len();
    let out = p.run(true, &["/tick", "0"]);
    assert_ne!(out.code, 0, "opencode reports the refused prompt: {out:?}");
    p.toast("refused: invalid count `0`");
    p.run(true, &["/tick status"]);
    p.toast("inactive");
    assert_eq!(
        p.api.requests().len(),
        before,
        "no request at all for a command"
    );
    assert_no_tick_text(&p.api.requests());
    assert!(
        ledger_types(&p.dir).is_empty(),
        "{:?}",
        ledger_types(&p.dir)
    );
}

/// Trial (no opencode needed): uninstall leaves the person's files as they
/// were, byte for byte; install refuses twice across project and user, a
/// config that is not JSON, and a project whose config is JSONC.
fn uninstall_restores_files() {
    let host = Host::new();
    let dir = host.scratch().join("project");
    let home = host.scratch().join("home");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let original = "{\n  \"model\": \"x/y\",\n      \"mcp\": {\"other\": {\"type\": \"local\", \"command\": [\"true\"]}}\n}";
    std::fs::write(dir.join("opencode.json"), original).unwrap();
    let run = |args: &[&str], path: Option<&Path>| {
        let mut cmd = host.command(args);
        cmd.current_dir(&dir)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", home.join(".config"));
        if let Some(p) = path {
            cmd.arg(p);
        }
        cmd.output().unwrap()
    };
    let before = agents::snapshot(&dir);
    let out = run(&["loop", "opencode", "install", "--project"], Some(&dir));
    assert!(out.status.success(), "{out:?}");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("opencode.json")).unwrap()).unwrap();
    assert_eq!(config["mcp"]["tickloop"]["command"][1], "mcp", "{config}");
    assert_eq!(config["mcp"]["other"]["command"][0], "true");
    let plugin = std::fs::read_to_string(dir.join(".opencode/plugin/tickloop.js")).unwrap();
    assert!(
        plugin.contains(common::tickloop_bin()),
        "the plugin runs this tickloop"
    );
    let user_empty = || !home.join(".config").exists();
    let installs = agents::Installs {
        agent: "opencode",
        run: &run,
        project: &dir,
        user_empty: &user_empty,
    };
    installs.refused_twice_then_undone(&before);
    installs.unreadable_config_refused(&dir.join("opencode.json"), "{ oops", "not valid JSON");
    std::fs::remove_file(dir.join("opencode.json")).unwrap();
    installs.unreadable_config_refused(&dir.join("opencode.jsonc"), "{ // mine\n}", "JSONC");
    std::fs::remove_file(dir.join("opencode.jsonc")).unwrap();
    installs.user_then_project_refused(&host.scratch().join("fresh"));
    assert!(user_empty(), "the user's config as it was");
}

/// Trial: install, a session, uninstall: `opencode.json` as it was and the
/// plugin gone (opencode's own files in `.opencode/` are opencode's).
fn uninstall_after_a_session() {
    let p = Project::new(|_| json!([{"text": "fine"}]));
    let out = p.run(false, &["Hello."]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = p
        .host
        .command(&["loop", "opencode", "uninstall", "--project"])
        .arg(&p.dir)
        .env("HOME", &p.home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(p.dir.join("opencode.json")).unwrap(),
        user_config(p.api.port),
        "opencode.json as it was"
    );
    assert!(!p.dir.join(".opencode/plugin/tickloop.js").exists());
    assert!(!p.dir.join(".opencode/tickloop-install.json").exists());
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let missing = opencode_bin().err();
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the opencode trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_OPENCODE_BIN"
        );
    }
    let none = None;
    let trials = vec![
        agents::trial(
            "tick_read_reaches_the_model",
            tick_read_reaches_the_model,
            &missing,
        ),
        agents::trial(
            "bounded_run_with_deliveries",
            bounded_run_with_deliveries,
            &missing,
        ),
        agents::trial("refusals_reach_no_model", refusals_reach_no_model, &missing),
        agents::trial(
            "uninstall_after_a_session",
            uninstall_after_a_session,
            &missing,
        ),
        agents::trial("uninstall_restores_files", uninstall_restores_files, &none),
    ];
    libtest_mimic::run(&args, trials).exit();
}
