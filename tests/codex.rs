//! The Loop and the Tick tools inside the real Codex CLI, driven by a
//! scripted Responses API on loopback (issue 29).
//!
//! Each trial gives Codex its own `CODEX_HOME` (the person's config: the
//! scripted provider, the project trusted), installs Tickloop into the
//! project with `tickloop loop codex install`, and runs `codex exec` once per
//! prompt (`codex exec resume ID` keeps the session), the way a harness
//! drives Codex; the `/tick 0` trial types into Codex's own screen in tmux.
//! Hooks run with `--dangerously-bypass-hook-trust`: Codex skips hooks
//! nobody trusted, and trusting them is the person's step (`/hooks`).
//!
//! Codex comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/codex`; `TICKLOOP_CODEX_BIN` names another binary).
//! Without it every trial that runs Codex is reported IGNORED, with the reason.
//!
//! No wall-clock bound is asserted; waits are on events (lines, files), with
//! generous limits that only guard against hangs.

mod agents;
mod common;

use agents::{assert_no_tick_text, increment, ledger, ledger_types, FakeApi, TWO_STEP_RUN};
use common::tmux::Tmux;
use common::{Host, MARK_VAR};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn codex_bin() -> Result<PathBuf, String> {
    agents::cli_bin("TICKLOOP_CODEX_BIN", "codex", "codex")
}

/// The person's `config.toml`: the scripted provider, nothing that reaches
/// the network, the project trusted.
fn user_config(port: u16, project: &Path) -> String {
    format!(
        r#"model = "fake-model"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[features]
plugins = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[projects.{project:?}]
trust_level = "trusted"
"#
    )
}

/// One project with Tickloop installed for Codex and a host for its Ticks.
struct Project {
    host: Host,
    dir: PathBuf,
    home: PathBuf,
    codex_home: PathBuf,
    api: FakeApi,
}

impl Project {
    fn new(replies: Value) -> Project {
        Project::with_script(|_| replies)
    }

    /// `script` makes the replies, given the scratch directory (for gates).
    fn with_script(script: impl FnOnce(&Path) -> Value) -> Project {
        let host = Host::new();
        let replies = script(host.scratch());
        let dir = host.scratch().join("project");
        let home = host.scratch().join("home");
        let codex_home = host.scratch().join("codex-home");
        for d in [&dir, &home, &codex_home] {
            std::fs::create_dir_all(d).expect("scratch dirs");
        }
        let api = FakeApi::start(host.scratch(), "responses", replies, host.runtime());
        std::fs::write(codex_home.join("config.toml"), user_config(api.port, &dir))
            .expect("config.toml");
        let p = Project {
            host,
            dir,
            home,
            codex_home,
            api,
        };
        let out = p.tickloop(&["loop", "codex", "install", "--project"], Some(&p.dir));
        assert!(out.status.success(), "install: {out:?}");
        p
    }

    fn tickloop(&self, args: &[&str], path_arg: Option<&Path>) -> Output {
        let mut cmd = self.host.command(args);
        cmd.env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home);
        if let Some(p) = path_arg {
            cmd.arg(p);
        }
        cmd.output().expect("run tickloop")
    }

    fn env(&self, cmd: &mut Command, delay_ms: u64) {
        cmd.current_dir(&self.dir)
            .env("PATH", agents::path_with_tickloop())
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home)
            .env("FAKE_API_KEY", "dummy")
            .env("TICKLOOP_RUNTIME_DIR", self.host.runtime())
            .env(
                "TICKLOOP_LOOP_STATE_DIR",
                self.host.scratch().join("loop-state"),
            )
            .env("TICKLOOP_LOOP_DELAY_MS", delay_ms.to_string())
            .env(MARK_VAR, self.host.runtime());
    }

    /// `codex exec [resume SESSION] PROMPT`, to its end; returns the session id.
    fn exec(&self, session: Option<&str>, prompt: &str, delay_ms: u64) -> String {
        let mut cmd = Command::new(codex_bin().expect("Codex"));
        self.env(&mut cmd, delay_ms);
        cmd.args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "--json",
        ]);
        if let Some(s) = session {
            cmd.args(["resume", s]);
        }
        cmd.arg(prompt)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = common::run_prepared(cmd, &["codex", "exec"]);
        assert_eq!(out.code, 0, "codex exec {prompt:?}: {out:?}");
        out.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find_map(|v| v["thread_id"].as_str().map(str::to_string))
            .unwrap_or_else(|| panic!("no thread id from codex exec: {out:?}"))
    }
}

/// The text of a Responses request's last user message.
fn last_user_text(request: &Value) -> String {
    let input = request["body"]["input"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let last = input
        .iter()
        .rev()
        .find(|m| m["type"] == "message" && m["role"] == "user");
    last.map(|m| {
        m["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    })
    .unwrap_or_default()
}

/// Trial: the model calls TickRead on an open counter; the tool's output in
/// the next request carries the counter's state.
fn tick_read_reaches_the_model() {
    let p = Project::new(json!([
        {"call": {"namespace": "mcp__tickloop", "name": "TickRead", "args": {"instance": "hosted:counter"}}},
        {"text": "read it"}
    ]));
    p.host.open_counter("counter");
    for _ in 0..4 {
        increment(&p.host);
    }
    p.exec(None, "What does the counter say?", 100);
    let turns = p.api.turns();
    assert_eq!(turns.len(), 2, "the call and the answer: {turns:#?}");
    let tools = turns[0]["body"]["tools"].to_string();
    assert!(
        tools.contains(r#""name":"mcp__tickloop""#) && tools.contains(r#""name":"TickRead""#),
        "the Tick tools reach the model as Codex's namespace: {tools}"
    );
    let outputs: Vec<String> = turns[1]["body"]["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].to_string())
        .collect();
    assert_eq!(outputs.len(), 1, "{:#}", turns[1]["body"]["input"]);
    assert!(
        outputs[0].contains(r#"\"value\":4"#) || outputs[0].contains(r#"\\\"value\\\":4"#),
        "the counter's state after four calls: {}",
        outputs[0]
    );
}

/// Trial: a natural turn, `/tick subscribe hosted:counter`, `/tick 2`, the
/// next turn, then exactly two time steps, each carrying the delivery; no
/// `/tick` text reaches the model; the ledger in order.
fn bounded_run_with_deliveries() {
    let p = Project::with_script(|scratch| {
        json!([
            {"text": "hello, person"},
            {"text": "going on"},
            {"text": "step one seen", "after_file": scratch.join("step1-gate")},
            {"text": "step two seen"}
        ])
    });
    let gate = p.host.scratch().join("step1-gate");
    p.host.open_counter("counter");
    let session = p.exec(None, "Please watch the counter.", 200);
    assert_eq!(p.api.turns().len(), 1);
    p.exec(Some(&session), "/tick subscribe hosted:counter", 200);
    increment(&p.host);
    increment(&p.host);
    p.exec(Some(&session), "/tick 2", 200);
    assert_eq!(p.api.turns().len(), 1, "a command reaches no model");
    assert_eq!(
        ledger_types(&p.dir),
        ["loop_armed"],
        "{:#?}",
        ledger(&p.dir)
    );
    assert_eq!(ledger(&p.dir)[0]["waiting"], true);
    // Codex starts no turn for a blocked prompt: the run's first step
    // follows the session's next turn. While step one's model call waits,
    // the counter changes again.
    let runner = {
        let mut cmd = Command::new(codex_bin().expect("Codex"));
        p.env(&mut cmd, 200);
        cmd.args([
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "--json",
            "resume",
            &session,
            "Go on.",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
        cmd.spawn().expect("codex exec")
    };
    let mut runner = runner;
    common::wait_for_within(common::COMMAND_DEADLINE, "step one's request", || {
        (p.api.turns().len() == 3).then_some(())
    });
    increment(&p.host);
    std::fs::write(&gate, "").expect("open the gate");
    let status = common::wait_for_within(common::COMMAND_DEADLINE, "codex exec to end", || {
        runner.try_wait().ok().flatten()
    });
    assert!(status.success(), "{status:?}");

    let turns = p.api.turns();
    assert_eq!(
        turns.len(),
        4,
        "two natural turns and two time steps: {turns:#?}"
    );
    let step1 = last_user_text(&turns[2]);
    let step2 = last_user_text(&turns[3]);
    for (n, step) in [(1, &step1), (2, &step2)] {
        assert!(
            step.starts_with("<hook_prompt") && step.contains(">tick\n\n{"),
            "step {n} is the Stop hook's time step: {step}"
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
    for r in ledger(&p.dir) {
        assert_eq!(r["schema"], "pulse.tick-loop.audit.v1");
        assert_eq!(r["sessionId"], session.as_str());
    }
}

/// Trial: in Codex's own screen, `/tick 0` is refused where the person sees
/// it, and no model request is made.
fn refusal_in_the_screen() {
    let p = Project::new(json!([{"text": "first answer"}]));
    let line = format!(
        "cd {dir:?} && PATH={path:?} HOME={home:?} CODEX_HOME={ch:?} FAKE_API_KEY=dummy TICKLOOP_LOOP_STATE_DIR={state:?} {codex:?} --dangerously-bypass-hook-trust",
        dir = p.dir,
        path = agents::path_with_tickloop(),
        home = p.home,
        ch = p.codex_home,
        state = p.host.scratch().join("loop-state"),
        codex = codex_bin().expect("Codex"),
    );
    let tmux = Tmux::start(&p.host, 120, 40, &line);
    tmux.wait_text("Ask Codex");
    submit(&tmux, "Hello.", "first answer");
    assert_eq!(p.api.turns().len(), 1);
    // A leading space: Codex's screen takes `/...` as its own command.
    submit(&tmux, " /tick 0", "refused: invalid count `0`");
    submit(&tmux, " /tick status", "inactive");
    submit(&tmux, " /tick policies", "tick (default)");
    assert_eq!(p.api.turns().len(), 1, "no refusal reached the model");
    assert_no_tick_text(&p.api.requests());
    assert!(
        ledger_types(&p.dir).is_empty(),
        "{:?}",
        ledger_types(&p.dir)
    );
    tmux.send_keys(&["C-c"]);
    tmux.send_keys(&["C-c"]);
}

/// Types `text` into Codex's composer and presses Enter once it shows (typed
/// keys arrive as one burst, which Codex holds as a paste until it settles),
/// again until `expect` shows.
fn submit(tmux: &Tmux, text: &str, expect: &str) {
    tmux.type_text(text);
    tmux.wait_text(&format!("› {text}"));
    common::wait_for(&format!("Codex's screen to show {expect:?}"), || {
        if tmux.capture().contains(expect) {
            return Some(());
        }
        if tmux.capture().contains(&format!("› {text}")) {
            tmux.send_keys(&["Enter"]);
        }
        None
    });
}

/// Trial (no Codex needed): uninstall leaves the person's files as they
/// were, byte for byte; install refuses twice across project and user, and
/// refuses a config that is not TOML with nothing written.
fn uninstall_restores_files() {
    let host = Host::new();
    let dir = host.scratch().join("project");
    let home = host.scratch().join("home");
    let codex_home = host.scratch().join("codex-home");
    std::fs::create_dir_all(dir.join(".codex")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&codex_home).unwrap();
    std::fs::write(
        dir.join(".codex/config.toml"),
        "model = \"o3\"   # mine\n[features]\nplugins = false",
    )
    .unwrap();
    std::fs::write(
        dir.join(".codex/hooks.json"),
        "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}}",
    )
    .unwrap();
    let run = |args: &[&str], path: Option<&Path>| {
        let mut cmd = host.command(args);
        // In the project: a user install there would run every hook twice.
        cmd.current_dir(&dir)
            .env("HOME", &home)
            .env("CODEX_HOME", &codex_home);
        if let Some(p) = path {
            cmd.arg(p);
        }
        cmd.output().unwrap()
    };
    let before = agents::snapshot(&dir);
    let out = run(&["loop", "codex", "install", "--project"], Some(&dir));
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        said.contains("/hooks") && said.contains("trust"),
        "says how to trust: {said}"
    );
    let config = std::fs::read_to_string(dir.join(".codex/config.toml")).unwrap();
    assert!(
        config.contains("[mcp_servers.tickloop]") && config.contains("model = \"o3\"   # mine"),
        "{config}"
    );
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".codex/hooks.json")).unwrap())
            .unwrap();
    assert_eq!(
        hooks["hooks"]["Stop"].as_array().unwrap().len(),
        2,
        "merged: {hooks}"
    );
    let user_empty = || std::fs::read_dir(&codex_home).is_ok_and(|d| d.count() == 0);
    let installs = agents::Installs {
        agent: "codex",
        run: &run,
        project: &dir,
        user_empty: &user_empty,
    };
    let user = installs.refused_twice_then_undone(&before);
    assert!(
        String::from_utf8_lossy(&user.stderr).contains("run the Loop twice"),
        "{user:?}"
    );
    // Not TOML: refused, nothing written.
    installs.unreadable_config_refused(
        &dir.join(".codex/config.toml"),
        "model = [oops",
        "not valid TOML",
    );
    // A user install, then a project one is refused; uninstall leaves the
    // user's (empty) Codex home empty.
    let fresh = host.scratch().join("fresh");
    installs.user_then_project_refused(&fresh);
    assert_eq!(std::fs::read_dir(&fresh).unwrap().count(), 0);
    assert!(user_empty());
}

/// Trial: install, then uninstall, after Codex has run in the project: the
/// config files are as they were (Codex writes its sessions elsewhere).
fn uninstall_after_a_session() {
    let p = Project::new(json!([{"text": "fine"}]));
    let out = p.tickloop(&["loop", "codex", "uninstall", "--project"], Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    let before = agents::snapshot(&p.dir);
    let out = p.tickloop(&["loop", "codex", "install", "--project"], Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    p.exec(None, "Hello.", 100);
    let out = p.tickloop(&["loop", "codex", "uninstall", "--project"], Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    let after: Vec<_> = agents::snapshot(&p.dir)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(p.dir.join(".pulse-tick-audit")))
        .collect();
    assert_eq!(after, before, "the project's files as they were");
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut missing = codex_bin().err();
    if missing.is_none() && Command::new("tmux").arg("-V").output().is_err() {
        missing = Some("tmux is not installed".into());
    }
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the Codex trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_CODEX_BIN"
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
        agents::trial("refusal_in_the_screen", refusal_in_the_screen, &missing),
        agents::trial(
            "uninstall_after_a_session",
            uninstall_after_a_session,
            &missing,
        ),
        agents::trial("uninstall_restores_files", uninstall_restores_files, &none),
    ];
    libtest_mimic::run(&args, trials).exit();
}
