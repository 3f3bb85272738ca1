//! The Loop, the Tick tools and consent inside the real Codex CLI, driven by
//! a scripted Responses API on loopback (issues 29 and 37).
//!
//! Each trial gives Codex its own `CODEX_HOME` (the person's config: the
//! scripted provider, `approval_policy = "never"` as `codex exec` runs, the
//! project trusted), installs Tickloop into the project with `tickloop loop
//! codex install`, and runs `codex exec` once per prompt (`codex exec resume
//! --last` keeps the session), the way a harness drives Codex; the `/tick 0`
//! trial types into Codex's own screen in tmux. Hooks run with
//! `--dangerously-bypass-hook-trust`: Codex skips hooks nobody trusted, and
//! trusting them is the person's step (`/hooks`). The trials shared with the
//! other hosts are `tests/agents/trials.rs`; this file says how Codex runs
//! ([`Codex`]) and adds what only Codex does: it answers a server's question
//! itself under `approval_policy = "never"` (so it is not asked), and it
//! tells its MCP servers the session, so TickManage `subscribe` reaches
//! its Loop.
//!
//! Codex comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/codex`; `TICKLOOP_CODEX_BIN` names another binary).
//! Without it every trial that runs Codex is reported IGNORED, with the reason.
//!
//! No wall-clock bound is asserted; waits are on events (lines, files), with
//! generous limits that only guard against hangs.

mod agents;
mod common;

use agents::project::{AgentCli, Project};
use agents::trials;
use agents::{assert_no_tick_text, ledger, ledger_types};
use common::tmux::Tmux;
use common::Host;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Codex CLI, as the shared trials run it.
struct Codex;

static CODEX: Codex = Codex;

fn codex_bin() -> Result<PathBuf, String> {
    agents::cli_bin("TICKLOOP_CODEX_BIN", "codex", "codex")
}

impl AgentCli for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn dialect(&self) -> &'static str {
        "responses"
    }

    fn bin(&self) -> Result<PathBuf, String> {
        codex_bin()
    }

    fn config_env(&self, p: &Project) -> Vec<(&'static str, OsString)> {
        vec![
            ("HOME", p.home.clone().into()),
            ("CODEX_HOME", codex_home(p).into()),
        ]
    }

    fn configure(&self, p: &Project) {
        std::fs::create_dir_all(codex_home(p)).expect("CODEX_HOME");
        std::fs::write(
            codex_home(p).join("config.toml"),
            user_config(p.api.port, &p.dir),
        )
        .expect("config.toml");
    }

    fn run_env(&self, _p: &Project, cmd: &mut Command) {
        cmd.env("FAKE_API_KEY", "dummy");
    }

    fn prompt_args(&self, _p: &Project, resume: bool, prompt: &str) -> Vec<String> {
        let mut args: Vec<String> = [
            "exec",
            "--skip-git-repo-check",
            "--dangerously-bypass-hook-trust",
            "--json",
        ]
        .map(String::from)
        .to_vec();
        if resume {
            args.extend(["resume".into(), "--last".into()]);
        }
        args.push(prompt.into());
        args
    }

    fn mcp_call(&self, tool: &str, args: Value) -> Value {
        json!({"call": {"namespace": "mcp__tickloop", "name": tool, "args": args}})
    }

    fn shell_call(&self, command: &str) -> Value {
        json!({"call": {"name": "exec_command", "args": {"cmd": command}}})
    }

    fn last_user_text(&self, request: &Value) -> String {
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

    fn tool_results(&self, request: &Value) -> Vec<String> {
        request["body"]["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "function_call_output")
            .map(|i| i["output"].to_string())
            .collect()
    }

    fn shows_reply(&self, _p: &Project, out: &common::Out, _text: &str) {
        // `codex exec` shows only "hook: UserPromptSubmit Blocked", not the
        // reply (its screen does: `refusal_in_the_screen`).
        assert_eq!(out.code, 0, "{out:?}");
    }

    fn first_step_after_next_turn(&self) -> bool {
        true
    }

    fn step_opening(&self) -> &'static str {
        "<hook_prompt"
    }
}

/// The trial's `CODEX_HOME`.
fn codex_home(p: &Project) -> PathBuf {
    p.host.scratch().join("codex-home")
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

/// Trial: under `approval_policy = "never"` Codex would accept a server's
/// question itself, so it is not asked: the agent's MCP `input` on the
/// person's counter stays held until the person answers with `tickloop
/// approve`, and the approval log never says `approved by mcp-host`.
fn never_policy_leaves_the_question_to_the_person() {
    let p = Project::new(&CODEX, |_| {
        json!([
            CODEX.mcp_call("TickManage", json!({"action": "input", "instance": "hosted:counter", "text": "+"})),
            {"text": "typed"}
        ])
    });
    p.host.open_counter("counter");
    let turn = p.start(false, "Press + on the counter.");
    let waiting = trials::the_waiting_one(&p.host);
    assert_eq!(waiting["client"], "mcp", "{waiting}");
    assert_eq!(p.host.read("hosted:counter")["data"]["value"], 0);
    p.host.ok(&[
        "approve",
        "hosted:counter",
        waiting["call"].as_str().expect("an id"),
    ]);
    turn.finish().expect(0);
    p.host.wait_value("hosted:counter", 1);
    let log = p.host.run(&["approvals", "--log", "hosted:counter"]);
    let decided: Vec<(String, String)> = log
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (text("decision"), text("by"))
        })
        .collect();
    assert_eq!(
        decided,
        [
            ("held".to_string(), "tickhost".to_string()),
            ("approved".to_string(), "cli".to_string())
        ],
        "never approved by mcp-host"
    );
}

/// Trial: TickManage `subscribe` in Codex subscribes the session the call
/// came from (its `_meta`), and the Loop's time step carries the delivery.
fn subscribe_reaches_the_codex_session() {
    let p = Project::new(&CODEX, |_| {
        json!([
            CODEX.mcp_call("TickManage", json!({"action": "subscribe", "instance": "hosted:counter"})),
            {"text": "subscribed"},
            {"text": "going on"},
            {"text": "step seen"}
        ])
    });
    p.host.open_counter("counter");
    p.say(false, "Watch the counter.").expect(0);
    let results = p.tool_results().join("\n");
    assert!(
        results.contains("subscribed: hosted:counter") && results.contains("loop_session"),
        "{results}"
    );
    agents::increment(&p.host);
    p.say(true, "/tick 1").expect(0);
    p.say(true, "Go on.").expect(0);
    let turns = p.api.turns();
    let step = CODEX.last_user_text(&turns[turns.len() - 1]);
    assert!(
        step.contains(">tick\n\n{")
            && step.contains(r#""instance":"hosted:counter""#)
            && step.contains(r#""value":1"#),
        "the step carries the subscribed counter: {step}"
    );
    assert_no_tick_text(&p.api.requests());
    assert!(
        ledger_types(&p.dir).contains(&"loop_complete".to_string()),
        "{:#?}",
        ledger(&p.dir)
    );
}

/// Trial: in Codex's own screen, `/tick 0` is refused where the person sees
/// it, and no model request is made.
fn refusal_in_the_screen() {
    let p = Project::new(&CODEX, |_| json!([{"text": "first answer"}]));
    let line = format!(
        "cd {dir:?} && PATH={path:?} HOME={home:?} CODEX_HOME={ch:?} FAKE_API_KEY=dummy TICKLOOP_LOOP_STATE_DIR={state:?} {codex:?} --dangerously-bypass-hook-trust",
        dir = p.dir,
        path = agents::path_with_tickloop(),
        home = p.home,
        ch = codex_home(&p),
        state = p.state,
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
    let codex: &'static dyn AgentCli = &CODEX;
    let with_codex = |name: &str, f: fn(&'static dyn AgentCli)| {
        agents::trial_of(name, move || f(codex), &missing)
    };
    let trials = vec![
        with_codex("origin_facts", agents::origin::facts),
        with_codex(
            "an_own_client_cannot_answer_its_question",
            agents::origin::an_own_client_cannot_answer_its_question,
        ),
        with_codex(
            "a_forged_hook_neither_arms_nor_subscribes",
            agents::origin::a_forged_hook_neither_arms_nor_subscribes,
        ),
        with_codex(
            "tick_read_reaches_the_model",
            trials::tick_read_reaches_the_model,
        ),
        with_codex(
            "bounded_run_with_deliveries",
            trials::bounded_run_with_deliveries,
        ),
        with_codex(
            "uninstall_after_a_session",
            trials::uninstall_after_a_session,
        ),
        with_codex(
            "shell_tool_waits_for_the_person",
            trials::shell_tool_waits_for_the_person,
        ),
        agents::trial(
            "never_policy_leaves_the_question_to_the_person",
            never_policy_leaves_the_question_to_the_person,
            &missing,
        ),
        agents::trial(
            "subscribe_reaches_the_codex_session",
            subscribe_reaches_the_codex_session,
            &missing,
        ),
        agents::trial("refusal_in_the_screen", refusal_in_the_screen, &missing),
        agents::trial("uninstall_restores_files", uninstall_restores_files, &None),
    ];
    libtest_mimic::run(&args, trials).exit();
}
