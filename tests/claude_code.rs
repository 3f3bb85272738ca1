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

mod agents;
mod common;
#[path = "claude_code/harness.rs"]
mod harness;

use common::Host;
use harness::{claude_bin, last_user_text, tool_results, trial, Project, TURN_WAIT};
use libtest_mimic::Arguments;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

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
