//! The Loop and the Tick tools inside the real Gemini CLI, driven by a
//! scripted Gemini API on loopback (issue 29).
//!
//! Each trial gives Gemini CLI its own home (`GEMINI_CLI_HOME`: the person's
//! settings, the scripted endpoint), installs Tickloop into the project with
//! `tickloop loop gemini install`, and runs `gemini -p` once per prompt
//! (`--resume latest` keeps the session), the way a harness drives it.
//!
//! Gemini CLI comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/gemini`; `TICKLOOP_GEMINI_BIN` names another
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
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn gemini_bin() -> Result<PathBuf, String> {
    agents::cli_bin("TICKLOOP_GEMINI_BIN", "gemini", "gemini")
}

/// The person's settings: the API key auth, nothing that reaches the
/// network.
fn user_settings() -> String {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "model": {"name": "gemini-2.5-flash"}
    })
    .to_string()
}

/// One project with Tickloop installed for Gemini CLI and a host for its Ticks.
struct Project {
    host: Host,
    dir: PathBuf,
    home: PathBuf,
    gemini_home: PathBuf,
    api: FakeApi,
}

impl Project {
    fn new(script: impl FnOnce(&Path) -> Value) -> Project {
        let host = Host::new();
        let replies = script(host.scratch());
        let dir = host.scratch().join("project");
        let home = host.scratch().join("home");
        let gemini_home = host.scratch().join("gemini-home");
        for d in [&dir, &home, &gemini_home.join(".gemini")] {
            std::fs::create_dir_all(d).expect("scratch dirs");
        }
        std::fs::write(gemini_home.join(".gemini/settings.json"), user_settings())
            .expect("settings.json");
        let api = FakeApi::start(host.scratch(), "gemini", replies, host.runtime());
        let p = Project {
            host,
            dir,
            home,
            gemini_home,
            api,
        };
        let out = p.tickloop(&["loop", "gemini", "install", "--project"], Some(&p.dir));
        assert!(out.status.success(), "install: {out:?}");
        p
    }

    fn tickloop(&self, args: &[&str], path_arg: Option<&Path>) -> Output {
        let mut cmd = self.host.command(args);
        cmd.env("HOME", &self.home)
            .env("GEMINI_CLI_HOME", &self.gemini_home);
        if let Some(p) = path_arg {
            cmd.arg(p);
        }
        cmd.output().expect("run tickloop")
    }

    /// `gemini [--resume latest] -p PROMPT`, prepared. TickRead is allowed
    /// without confirmation: `-p` offers the model no tool that would ask.
    fn gemini(&self, resume: bool, prompt: &str) -> Command {
        let mut cmd = Command::new(gemini_bin().expect("Gemini CLI"));
        cmd.current_dir(&self.dir)
            .env("PATH", agents::path_with_tickloop())
            .env("HOME", &self.home)
            .env("GEMINI_CLI_HOME", &self.gemini_home)
            .env("GEMINI_API_KEY", "dummy")
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", self.api.port),
            )
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .env("TICKLOOP_RUNTIME_DIR", self.host.runtime())
            .env(
                "TICKLOOP_LOOP_STATE_DIR",
                self.host.scratch().join("loop-state"),
            )
            .env("TICKLOOP_LOOP_DELAY_MS", "200")
            .env(MARK_VAR, self.host.runtime());
        if resume {
            cmd.args(["--resume", "latest"]);
        }
        cmd.args(["--allowed-tools", "mcp_tickloop_TickRead"]);
        cmd.args(["-p", prompt])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs one prompt to its end; returns what it printed.
    fn say(&self, resume: bool, prompt: &str) -> common::Out {
        let out = common::run_prepared(self.gemini(resume, prompt), &["gemini", "-p"]);
        assert_eq!(out.code, 0, "gemini -p {prompt:?}: {out:?}");
        out
    }
}

/// The text of a request's last user content.
fn last_user_text(request: &Value) -> String {
    let contents = request["body"]["contents"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    contents
        .iter()
        .rev()
        .find(|c| c["role"] == "user")
        .map(|c| {
            c["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Trial: the model calls TickRead on an open counter; the function
/// response in the next request carries the counter's state.
fn tick_read_reaches_the_model() {
    let p = Project::new(|_| {
        json!([
            {"call": {"name": "mcp_tickloop_TickRead", "args": {"instance": "hosted:counter"}}},
            {"text": "read it"}
        ])
    });
    p.host.open_counter("counter");
    for _ in 0..4 {
        increment(&p.host);
    }
    p.say(false, "What does the counter say?");
    let turns = p.api.turns();
    assert!(turns.len() >= 2, "the call and the answer: {turns:#?}");
    let tools = turns[0]["body"]["tools"].to_string();
    assert!(tools.contains("mcp_tickloop_TickRead"), "{tools}");
    let responses: Vec<String> = turns[1]["body"]["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|part| part.get("functionResponse").is_some())
        .map(|part| part.to_string())
        .collect();
    assert_eq!(responses.len(), 1, "{:#}", turns[1]["body"]["contents"]);
    assert!(
        responses[0].contains(r#"\"value\":4"#),
        "the counter's state after four calls: {}",
        responses[0]
    );
}

/// Trial: a natural turn, `/tick subscribe hosted:counter`, `/tick 2`, the
/// next turn, then exactly two time steps, each carrying the delivery; no
/// `/tick` text reaches the model; the ledger in order.
fn bounded_run_with_deliveries() {
    let p = Project::new(|scratch| {
        json!([
            {"text": "hello, person"},
            {"text": "going on"},
            {"text": "step one seen", "after_file": scratch.join("step1-gate")},
            {"text": "step two seen"}
        ])
    });
    let gate = p.host.scratch().join("step1-gate");
    p.host.open_counter("counter");
    p.say(false, "Please watch the counter.");
    assert_eq!(p.api.turns().len(), 1);
    let out = p.say(true, "/tick subscribe hosted:counter");
    assert!(out.stderr.contains("subscribed: hosted:counter"), "{out:?}");
    increment(&p.host);
    increment(&p.host);
    let out = p.say(true, "/tick 2");
    assert!(out.stderr.contains("armed run"), "{out:?}");
    assert_eq!(p.api.turns().len(), 1, "a command reaches no model");
    assert_eq!(
        ledger_types(&p.dir),
        ["loop_armed"],
        "{:#?}",
        ledger(&p.dir)
    );
    // Gemini CLI starts no turn for a denied prompt: the run's first step
    // follows the session's next turn. While step one's model call waits,
    // the counter changes again.
    let mut runner = p.gemini(true, "Go on.");
    runner.stdout(Stdio::null()).stderr(Stdio::null());
    let mut runner = runner.spawn().expect("gemini");
    common::wait_for_within(common::COMMAND_DEADLINE, "step one's request", || {
        (p.api.turns().len() == 3).then_some(())
    });
    increment(&p.host);
    std::fs::write(&gate, "").expect("open the gate");
    let status = common::wait_for_within(common::COMMAND_DEADLINE, "gemini to end", || {
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

/// Trial: `/tick 0` is refused where the person sees it, with no model
/// request; so are `/tick status` and `/tick policies` answered.
fn refusals_reach_no_model() {
    let p = Project::new(|_| json!([{"text": "first answer"}]));
    let out = p.say(false, "Hello.");
    assert!(out.stdout.contains("first answer"), "{out:?}");
    let before = p.api.requests().len();
    let out = p.say(true, "/tick 0");
    assert!(out.stderr.contains("refused: invalid count `0`"), "{out:?}");
    let out = p.say(true, "/tick policies");
    assert!(out.stderr.contains("tick (default)"), "{out:?}");
    let out = p.say(true, "/tick status");
    assert!(out.stderr.contains("inactive"), "{out:?}");
    let out = p.say(true, "/tick stop");
    assert!(out.stderr.contains("no run is active"), "{out:?}");
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

/// Trial (no Gemini CLI needed): uninstall leaves the person's settings as
/// they were, byte for byte; install refuses twice across project and user,
/// and refuses settings that are not JSON with nothing written.
fn uninstall_restores_files() {
    let host = Host::new();
    let dir = host.scratch().join("project");
    let home = host.scratch().join("home");
    let gemini_home = host.scratch().join("gemini-home");
    std::fs::create_dir_all(dir.join(".gemini")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&gemini_home).unwrap();
    let original = "{\n  \"model\": {\"name\": \"x\"},\n     \"hooks\": {\"AfterAgent\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"true\"}]}]}\n}";
    std::fs::write(dir.join(".gemini/settings.json"), original).unwrap();
    let run = |args: &[&str], path: Option<&Path>| {
        let mut cmd = host.command(args);
        cmd.current_dir(&dir)
            .env("HOME", &home)
            .env("GEMINI_CLI_HOME", &gemini_home);
        if let Some(p) = path {
            cmd.arg(p);
        }
        cmd.output().unwrap()
    };
    let before = agents::snapshot(&dir);
    let out = run(&["loop", "gemini", "install", "--project"], Some(&dir));
    assert!(out.status.success(), "{out:?}");
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        settings["hooks"]["AfterAgent"].as_array().unwrap().len(),
        2,
        "merged: {settings}"
    );
    assert_eq!(settings["mcpServers"]["tickloop"]["args"][0], "mcp");
    assert_eq!(settings["model"]["name"], "x");
    let user_empty = || std::fs::read_dir(&gemini_home).is_ok_and(|d| d.count() == 0);
    let installs = agents::Installs {
        agent: "gemini",
        run: &run,
        project: &dir,
        user_empty: &user_empty,
    };
    installs.refused_twice_then_undone(&before);
    installs.unreadable_config_refused(
        &dir.join(".gemini/settings.json"),
        "{ oops",
        "not valid JSON",
    );
    let fresh = host.scratch().join("fresh");
    installs.user_then_project_refused(&fresh);
    assert!(user_empty(), "the user's home as it was");
    assert_eq!(
        std::fs::read_dir(&fresh).unwrap().count(),
        0,
        "nothing left in a fresh project"
    );
}

/// Trial: install, a session, uninstall: the settings as they were.
fn uninstall_after_a_session() {
    let p = Project::new(|_| json!([{"text": "fine"}]));
    let out = p.tickloop(&["loop", "gemini", "uninstall", "--project"], Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    let before = agents::snapshot(&p.dir);
    let out = p.tickloop(&["loop", "gemini", "install", "--project"], Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    p.say(false, "Hello.");
    let out = p.tickloop(&["loop", "gemini", "uninstall", "--project"], Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    let after: Vec<_> = agents::snapshot(&p.dir)
        .into_iter()
        .filter(|(path, _)| !path.starts_with(p.dir.join(".pulse-tick-audit")))
        .collect();
    assert_eq!(after, before, "the project's files as they were");
}

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let missing = gemini_bin().err();
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the Gemini CLI trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_GEMINI_BIN"
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
