//! The Loop, the Tick tools and consent inside the real opencode, driven by
//! a scripted chat-completions API on loopback (issues 29 and 37).
//!
//! Each trial gives opencode its own home (XDG directories in the scratch
//! directory), the person's `opencode.json` (the scripted provider),
//! installs Tickloop into the project with `tickloop loop opencode install`,
//! and keeps one live session the way opencode does: `opencode serve`, with
//! each prompt sent by `opencode run --attach URL` (`run` alone ends at
//! idle, before any time step). What the person is shown (the plugin's
//! toasts) is read from the server's event stream. The trials shared with
//! the other hosts are `tests/agents/trials.rs`; this file says how opencode
//! runs ([`Opencode`]). opencode gives up on a tool call after its MCP
//! `timeout` and cancels it: a held action it cancels is withdrawn.
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

use agents::project::{AgentCli, Project, Served};
use agents::trials;
use agents::{assert_no_tick_text, ledger_types};
use common::{Host, MARK_VAR};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// opencode, as the shared trials run it.
struct Opencode;

static OPENCODE: Opencode = Opencode;

fn opencode_bin() -> Result<PathBuf, String> {
    agents::cli_bin("TICKLOOP_OPENCODE_BIN", "opencode", "opencode")
}

impl AgentCli for Opencode {
    fn name(&self) -> &'static str {
        "opencode"
    }

    fn dialect(&self) -> &'static str {
        "chat"
    }

    fn bin(&self) -> Result<PathBuf, String> {
        opencode_bin()
    }

    fn config_env(&self, p: &Project) -> Vec<(&'static str, OsString)> {
        vec![
            ("HOME", p.home.clone().into()),
            ("XDG_CONFIG_HOME", p.home.join(".config").into()),
        ]
    }

    fn configure(&self, p: &Project) {
        std::fs::write(p.dir.join("opencode.json"), user_config(p.api.port))
            .expect("opencode.json");
    }

    fn run_env(&self, p: &Project, cmd: &mut Command) {
        let home = &p.home;
        cmd.env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_CACHE_HOME", home.join(".cache"))
            .env("XDG_STATE_HOME", home.join(".local/state"))
            .env("FAKE_API_KEY", "dummy")
            .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
            .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
            .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
            .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
            .env("OPENCODE_DISABLE_SHARE", "1");
    }

    /// `opencode serve` (until it listens) and a reader of its events.
    fn serve(&self, p: &Project) -> Option<Served> {
        // The first serve installs opencode's plugin SDK itself (a minute
        // or more); later ones start from what it installed.
        let sdk = PLUGIN_SDK.lock().unwrap_or_else(|e| e.into_inner());
        let template = plugin_sdk();
        let seeded = template.is_dir();
        if seeded {
            for dir in sdk_dirs(p) {
                copy_into(&template, &dir);
            }
        }
        let served = serve(p);
        if !seeded {
            keep_plugin_sdk(&p.dir.join(".opencode"), &template);
        }
        drop(sdk);
        Some(served)
    }

    /// `opencode run --attach URL [--continue] PROMPT`.
    fn prompt_args(&self, p: &Project, resume: bool, prompt: &str) -> Vec<String> {
        let url = &p.served.as_ref().expect("opencode serve").url;
        let mut args: Vec<String> = vec!["run".into(), "--attach".into(), url.clone()];
        if resume {
            args.push("--continue".into());
        }
        args.push(prompt.into());
        args
    }

    fn mcp_call(&self, tool: &str, args: Value) -> Value {
        json!({"call": {"name": format!("tickloop_{tool}"), "args": args}})
    }

    fn shell_call(&self, command: &str) -> Value {
        json!({"call": {"name": "bash", "args": {"command": command, "description": "tickloop"}}})
    }

    fn last_user_text(&self, request: &Value) -> String {
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

    fn tool_results(&self, request: &Value) -> Vec<String> {
        request["body"]["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].to_string())
            .collect()
    }

    fn shows_reply(&self, p: &Project, _out: &common::Out, text: &str) {
        toast(p, text);
    }

    fn first_step_after_next_turn(&self) -> bool {
        false
    }

    fn own_dirs(&self) -> &'static [&'static str] {
        // opencode installs its plugin SDK there itself.
        &[".opencode"]
    }
}

/// `opencode serve` in the project, once it listens, and a reader of its
/// events (the plugin's toasts) once they flow.
fn serve(p: &Project) -> Served {
    let port = free_port();
    let mut cmd = p.agent_command();
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
    let events = p.host.scratch().join("events.log");
    let watcher = Command::new("python3")
        .args(["-u", "-c", "import sys, urllib.request\nstream = urllib.request.urlopen(sys.argv[1] + '/event')\nprint('connected', flush=True)\nfor line in stream:\n    print(line.decode().strip(), flush=True)\n", &url])
        .stdout(std::fs::File::create(&events).expect("events file"))
        .stderr(Stdio::null())
        .env(MARK_VAR, p.host.runtime())
        .spawn()
        .expect("event watcher");
    common::wait_for_within(common::COMMAND_DEADLINE, "the event stream", || {
        std::fs::read_to_string(&events)
            .ok()
            .filter(|t| t.starts_with("connected"))
    });
    Served {
        url,
        events,
        children: vec![server, watcher],
    }
}

/// The folders where opencode installs its plugin SDK (`@opencode-ai/plugin`)
/// when they have none: the project's `.opencode` and the user's config.
fn sdk_dirs(p: &Project) -> [PathBuf; 2] {
    [p.dir.join(".opencode"), p.home.join(".config/opencode")]
}

/// One serve at a time sets the plugin SDK up (the first installs it).
static PLUGIN_SDK: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// What opencode installed of its plugin SDK (its `node_modules`,
/// `package.json` and `package-lock.json`), kept for the later trials and
/// runs: with them in place it starts in seconds instead of the minute its
/// own install takes (for the same version: the SDK's is opencode's).
fn plugin_sdk() -> PathBuf {
    let version = Command::new(opencode_bin().expect("opencode"))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("opencode-plugin-sdk-{version}"))
}

const SDK_FILES: [&str; 3] = ["node_modules", "package.json", "package-lock.json"];

/// Copies the plugin SDK's files from `from` into the folder `to`.
fn copy_into(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("the SDK's folder");
    for name in SDK_FILES {
        let out = Command::new("cp")
            .arg("-R")
            .arg(from.join(name))
            .arg(to)
            .output()
            .expect("cp");
        assert!(out.status.success(), "cp {name}: {out:?}");
    }
}

/// Keeps what opencode installed in `dir` as `template` (whole or not at
/// all: a copy renamed into place).
fn keep_plugin_sdk(dir: &Path, template: &Path) {
    if !SDK_FILES.iter().all(|f| dir.join(f).exists()) {
        return;
    }
    let partial = template.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    copy_into(dir, &partial);
    let _ = std::fs::rename(&partial, template);
}

/// Waits for a toast whose message contains `text`; returns it.
fn toast(p: &Project, text: &str) -> String {
    let events = &p.served.as_ref().expect("opencode serve").events;
    common::wait_for(&format!("a toast saying {text:?}"), || {
        std::fs::read_to_string(events)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l.strip_prefix("data: ")?).ok())
            .filter(|e| e["type"] == "tui.toast.show")
            .filter_map(|e| e["properties"]["message"].as_str().map(str::to_string))
            .find(|m| m.contains(text))
    })
}

/// Makes opencode give up on a Tick tool call after `ms` (the MCP server's
/// `timeout` in `opencode.json`, which install wrote; read when it starts).
fn short_mcp_timeout(p: &Project, ms: u64) {
    let path = p.dir.join("opencode.json");
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("config")).expect("JSON");
    config["mcp"]["tickloop"]["timeout"] = json!(ms);
    std::fs::write(&path, config.to_string()).expect("opencode.json");
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

/// A port free now on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Trial: `/tick 0` is refused and shown to the person, with no model
/// request; `/tick status` is answered the same way.
fn refusals_reach_no_model() {
    let p = Project::new(&OPENCODE, |_| json!([{"text": "first answer"}]));
    p.say(false, "Hello.").expect(0);
    assert_eq!(p.api.turns().len(), 1, "the person's turn");
    let before = p.api.requests().len();
    let out = p.say(true, "/tick 0");
    assert_ne!(out.code, 0, "opencode reports the refused prompt: {out:?}");
    toast(&p, "refused: invalid count `0`");
    p.say(true, "/tick status");
    toast(&p, "inactive");
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

fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let missing = opencode_bin().err();
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the opencode trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_OPENCODE_BIN"
        );
    }
    let opencode: &'static dyn AgentCli = &OPENCODE;
    let with_opencode = |name: &str, f: fn(&'static dyn AgentCli)| {
        agents::trial_of(name, move || f(opencode), &missing)
    };
    let trials = vec![
        with_opencode("origin_facts", agents::origin::facts),
        with_opencode(
            "an_own_client_cannot_answer_its_question",
            agents::origin::an_own_client_cannot_answer_its_question,
        ),
        with_opencode(
            "a_forged_hook_neither_arms_nor_subscribes",
            agents::origin::a_forged_hook_neither_arms_nor_subscribes,
        ),
        with_opencode(
            "tick_read_reaches_the_model",
            trials::tick_read_reaches_the_model,
        ),
        with_opencode(
            "bounded_run_with_deliveries",
            trials::bounded_run_with_deliveries,
        ),
        with_opencode(
            "uninstall_after_a_session",
            trials::uninstall_after_a_session,
        ),
        with_opencode(
            "shell_tool_waits_for_the_person",
            trials::shell_tool_waits_for_the_person,
        ),
        agents::trial_of(
            "a_cancelled_held_input_never_runs",
            move || trials::a_cancelled_held_input_never_runs(opencode, short_mcp_timeout),
            &missing,
        ),
        with_opencode(
            "a_held_input_approved_in_time_runs_once",
            trials::a_held_input_approved_in_time_runs_once,
        ),
        agents::trial("refusals_reach_no_model", refusals_reach_no_model, &missing),
        agents::trial("uninstall_restores_files", uninstall_restores_files, &None),
    ];
    libtest_mimic::run(&args, trials).exit();
}
