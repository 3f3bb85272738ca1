//! The Loop, the Tick tools and consent inside the real Gemini CLI, driven
//! by a scripted Gemini API on loopback (issues 29 and 37).
//!
//! Each trial gives Gemini CLI its own home (`GEMINI_CLI_HOME`: the person's
//! settings, the scripted endpoint), installs Tickloop into the project with
//! `tickloop loop gemini install`, and runs `gemini -p` once per prompt
//! (`--resume latest` keeps the session), the way a harness drives it. The
//! trials shared with the other hosts are `tests/agents/trials.rs`; this
//! file says how Gemini CLI runs ([`Gemini`]). Gemini CLI gives up on a
//! tool call after its MCP `timeout` and cancels it: a held action it
//! cancels is withdrawn and never runs.
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

use agents::project::{AgentCli, Project};
use agents::trials;
use agents::{assert_no_tick_text, ledger_types};
use common::Host;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Gemini CLI, as the shared trials run it.
struct Gemini;

static GEMINI: Gemini = Gemini;

fn gemini_bin() -> Result<PathBuf, String> {
    agents::cli_bin("TICKLOOP_GEMINI_BIN", "gemini", "gemini")
}

/// The trial's `GEMINI_CLI_HOME`.
fn gemini_home(p: &Project) -> PathBuf {
    p.host.scratch().join("gemini-home")
}

impl AgentCli for Gemini {
    fn name(&self) -> &'static str {
        "gemini"
    }

    fn dialect(&self) -> &'static str {
        "gemini"
    }

    fn bin(&self) -> Result<PathBuf, String> {
        gemini_bin()
    }

    fn config_env(&self, p: &Project) -> Vec<(&'static str, OsString)> {
        vec![
            ("HOME", p.home.clone().into()),
            ("GEMINI_CLI_HOME", gemini_home(p).into()),
        ]
    }

    fn configure(&self, p: &Project) {
        let dir = gemini_home(p).join(".gemini");
        std::fs::create_dir_all(&dir).expect("GEMINI_CLI_HOME");
        std::fs::write(dir.join("settings.json"), user_settings()).expect("settings.json");
    }

    fn run_env(&self, p: &Project, cmd: &mut Command) {
        cmd.env("GEMINI_API_KEY", "dummy")
            .env(
                "GOOGLE_GEMINI_BASE_URL",
                format!("http://127.0.0.1:{}", p.api.port),
            )
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
    }

    /// `gemini [--resume latest] -p PROMPT`. `-p` offers the model only
    /// tools that need no confirmation: the Tick tools and the shell tool
    /// are allowed here.
    fn prompt_args(&self, _p: &Project, resume: bool, prompt: &str) -> Vec<String> {
        let mut args: Vec<String> = Vec::new();
        if resume {
            args.extend(["--resume".into(), "latest".into()]);
        }
        args.extend([
            "--allowed-tools".into(),
            "mcp_tickloop_TickRead,mcp_tickloop_TickManage,run_shell_command".into(),
            "-p".into(),
            prompt.into(),
        ]);
        args
    }

    fn mcp_call(&self, tool: &str, args: Value) -> Value {
        json!({"call": {"name": format!("mcp_tickloop_{tool}"), "args": args}})
    }

    fn shell_call(&self, command: &str) -> Value {
        json!({"call": {"name": "run_shell_command", "args": {"command": command}}})
    }

    fn last_user_text(&self, request: &Value) -> String {
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

    fn tool_results(&self, request: &Value) -> Vec<String> {
        request["body"]["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .filter(|part| part.get("functionResponse").is_some())
            .map(|part| part.to_string())
            .collect()
    }

    fn shows_reply(&self, _p: &Project, out: &common::Out, text: &str) {
        assert!(out.stderr.contains(text), "{out:?}");
    }

    fn first_step_after_next_turn(&self) -> bool {
        true
    }

    fn install_names_the_agent(&self) -> bool {
        false
    }
}

/// Makes Gemini CLI give up on a Tick tool call after `ms` (the MCP
/// server's `timeout` in the project's settings, which install wrote).
fn short_mcp_timeout(p: &Project, ms: u64) {
    let path = p.dir.join(".gemini/settings.json");
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("settings")).expect("JSON");
    settings["mcpServers"]["tickloop"]["timeout"] = json!(ms);
    std::fs::write(&path, settings.to_string()).expect("settings");
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

/// Trial: `/tick 0` is refused where the person sees it, with no model
/// request; so are `/tick status` and `/tick policies` answered.
fn refusals_reach_no_model() {
    let p = Project::new(&GEMINI, |_| json!([{"text": "first answer"}]));
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

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let missing = gemini_bin().err();
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the Gemini CLI trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_GEMINI_BIN"
        );
    }
    let gemini: &'static dyn AgentCli = &GEMINI;
    let with_gemini = |name: &str, f: fn(&'static dyn AgentCli)| {
        agents::trial_of(name, move || f(gemini), &missing)
    };
    let trials = vec![
        with_gemini("origin_facts", agents::origin::facts),
        with_gemini(
            "an_own_client_cannot_answer_its_question",
            agents::origin::an_own_client_cannot_answer_its_question,
        ),
        with_gemini(
            "a_forged_hook_neither_arms_nor_subscribes",
            agents::origin::a_forged_hook_neither_arms_nor_subscribes,
        ),
        with_gemini(
            "tick_read_reaches_the_model",
            trials::tick_read_reaches_the_model,
        ),
        with_gemini(
            "bounded_run_with_deliveries",
            trials::bounded_run_with_deliveries,
        ),
        with_gemini(
            "uninstall_after_a_session",
            trials::uninstall_after_a_session,
        ),
        with_gemini(
            "shell_tool_waits_for_the_person",
            trials::shell_tool_waits_for_the_person,
        ),
        agents::trial_of(
            "a_cancelled_held_input_never_runs",
            move || trials::a_cancelled_held_input_never_runs(gemini, short_mcp_timeout),
            &missing,
        ),
        with_gemini(
            "a_held_input_approved_in_time_runs_once",
            trials::a_held_input_approved_in_time_runs_once,
        ),
        agents::trial("refusals_reach_no_model", refusals_reach_no_model, &missing),
        agents::trial("uninstall_restores_files", uninstall_restores_files, &None),
    ];
    libtest_mimic::run(&args, trials).exit();
}
