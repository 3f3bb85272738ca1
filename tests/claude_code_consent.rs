//! The agent host asks the person (issue 27, item 3), with the real Claude
//! Code CLI as the host and a scripted model on loopback: the model calls
//! the per-Tick `mcp__tickloop__counter__increment` tool of a counter whose
//! approval policy is `ask`; tickhost holds the call, `tickloop mcp` puts the
//! question to Claude Code (`elicitation/create`, MCP 2025-11-25), and Claude
//! Code shows it. Accepting runs the call once; declining runs nothing and
//! the model's next request carries "not executed"; an answer given first
//! with `tickloop approve` withdraws the question. Once through the
//! stream-json harness (the question is a `control_request`, the answer a
//! `control_response`, the withdrawal a `control_cancel_request`), once full
//! screen in tmux (its dialog, answered with keys, closing by itself). Those
//! two pin MCP 2025-11-25 (`tickloop mcp --max-protocol 2025-11-25`); a
//! third lets Claude Code negotiate 2026-07-28, where the question travels
//! in an `input_required` result and comes back with the call.
//!
//! Claude Code comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/claude-code`; `TICKLOOP_CLAUDE_BIN` names another
//! binary). Without it every trial is reported IGNORED, with the reason.
//! Waits are on events (lines, screens, files), with limits that only guard
//! against hangs.

mod common;
#[path = "claude_code/harness.rs"]
mod harness;

use common::tmux::Tmux;
use harness::{claude_bin, tool_results, trial, FakeApi, Project};
use libtest_mimic::Arguments;
use serde_json::{json, Value};
use std::path::Path;
use std::process::{Command, Stdio};

const TOOL: &str = "mcp__tickloop__counter__increment";

/// A project whose host runs `hosted:counter` with approval policy `ask`.
fn project_with_asking_counter() -> Project {
    let p = Project::new();
    p.host.open_asking_counter("counter");
    p
}

/// `tickloop mcp`'s arguments for Claude Code: capped at MCP 2025-11-25 when
/// this build can offer a later revision (`--max-protocol`).
fn bridge_args() -> Vec<String> {
    let help = Command::new(common::tickloop_bin())
        .args(["mcp", "--help"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let mut args = vec!["mcp".to_string()];
    if help.contains("--max-protocol") {
        args.extend(["--max-protocol".to_string(), "2025-11-25".to_string()]);
    }
    args
}

/// `claude mcp add tickloop -- tickloop mcp …` in the project.
fn add_bridge(p: &Project, api: &FakeApi) {
    let added = p
        .claude_command(api.port, 100)
        .args(["mcp", "add", "tickloop", "--", "tickloop"])
        .args(bridge_args())
        .stdin(Stdio::null())
        .output()
        .expect("claude mcp add");
    assert!(added.status.success(), "claude mcp add: {added:?}");
}

/// `tickloop mcp` offering every revision, with what Claude Code sends it
/// copied to `mcp-in.jsonl` in the project (so the trial can tell which
/// revision was spoken); that file's path.
fn add_bridge_recorded(p: &Project, api: &FakeApi) -> std::path::PathBuf {
    let record = p.dir.join("mcp-in.jsonl");
    let command = format!(
        "tee -a {} | exec tickloop mcp",
        quoted(&record.to_string_lossy())
    );
    let added = p
        .claude_command(api.port, 100)
        .args(["mcp", "add", "tickloop", "--", "sh", "-c", &command])
        .stdin(Stdio::null())
        .output()
        .expect("claude mcp add");
    assert!(added.status.success(), "claude mcp add: {added:?}");
    record
}

/// In MCP 2026-07-28 (which Claude Code negotiates through `server/discover`
/// when the server offers it): the held call answers `input_required`,
/// Claude Code shows the same question and calls again with the person's
/// answer. Accept runs it once, Decline runs nothing, and an answer given
/// with `tickloop approve` first wins over the host's later Decline (the
/// server cannot withdraw a question in this revision).
fn stream_json_in_2026_07_28() {
    let p = project_with_asking_counter();
    let api = two_increments(&p);
    let record = add_bridge_recorded(&p, &api);
    let mut c = p.claude(&api, 100, &["--allowedTools", TOOL]);
    c.say("Add 3 to the counter.");
    let asked = c.elicitation();
    let message = asked["request"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("`increment`") && message.contains("hosted:counter"),
        "{asked}"
    );
    c.answer(&asked, "accept");
    assert_eq!(c.result_text(), "first done");
    assert_eq!(increments(&p), [3]);
    c.say("Add 4 to the counter.");
    let asked = c.elicitation();
    c.answer(&asked, "decline");
    assert_eq!(c.result_text(), "second done");
    assert_eq!(
        increments(&p),
        [3],
        "the declined call never reached the Tick"
    );
    let results = tool_results(&api);
    let declined = results[1].to_lowercase().replace('_', " ");
    assert!(
        declined.contains("not executed") && declined.contains("mcp-host"),
        "{results:#?}"
    );
    c.say("Add 5 to the counter.");
    let asked = c.elicitation();
    approve_from_cli(&p);
    c.answer(&asked, "decline");
    assert_eq!(c.result_text(), "third done");
    c.finish();
    assert_eq!(increments(&p), [3, 5], "the person's approval stood");
    // What Claude Code sent: the 2026-07-28 opener, the revision in each
    // request's `_meta`, and calls sent again with the answer.
    let sent: Vec<Value> = std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(
        sent.first().map(|m| m["method"].clone()),
        Some(json!("server/discover")),
        "{sent:#?}"
    );
    assert!(
        !sent.iter().any(|m| m["method"] == "initialize"),
        "{sent:#?}"
    );
    let calls: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    assert!(
        calls.iter().all(
            |m| m["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        ),
        "{calls:#?}"
    );
    assert_eq!(
        calls
            .iter()
            .filter(|m| m["params"]["requestState"].is_string())
            .count(),
        3,
        "each held call was sent again with the answer: {calls:#?}"
    );
}

/// The `increment` amounts that reached the counter, in order (its own log).
fn increments(p: &Project) -> Vec<i64> {
    std::fs::read_to_string(p.host.log_path("counter"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tick/call" && m["params"]["tool"] == "increment")
        .filter_map(|m| m["params"]["args"]["amount"].as_i64())
        .collect()
}

/// The approval log's decisions: (decision, by, host).
fn decisions(p: &Project) -> Vec<(String, String, String)> {
    let out = p.host.run(&["approvals", "--log", "hosted:counter"]);
    out.expect(0);
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["decision"] != "held")
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (text("decision"), text("by"), text("host"))
        })
        .collect()
}

/// The scripted model: add 3, add 4, add 5, each followed by a text turn.
fn two_increments(p: &Project) -> FakeApi {
    p.api(json!([
        {"tool_use": {"name": TOOL, "input": {"amount": 3}}},
        {"text": "first done"},
        {"tool_use": {"name": TOOL, "input": {"amount": 4}}},
        {"text": "second done"},
        {"tool_use": {"name": TOOL, "input": {"amount": 5}}},
        {"text": "third done"}
    ]))
}

/// After an accepted and a declined question: the first call ran once, the
/// second never, the model heard "not executed", the log names the host.
fn assert_accepted_then_declined(p: &Project, api: &FakeApi) {
    assert_eq!(
        increments(p),
        [3],
        "only the accepted call reached the Tick"
    );
    assert_eq!(p.host.read("hosted:counter")["data"]["value"], 3);
    let results = tool_results(api);
    assert_eq!(results.len(), 2, "{results:#?}");
    assert!(results[0].contains("result"), "{results:#?}");
    let declined = results[1].to_lowercase().replace('_', " ");
    assert!(
        declined.contains("not executed") && declined.contains("mcp-host"),
        "the model's next request carries not executed: {}",
        results[1]
    );
    let log = decisions(p);
    assert_eq!(log.len(), 2, "{log:?}");
    for (entry, decision) in log.iter().zip(["approved", "refused"]) {
        assert_eq!(entry.0, decision, "{log:?}");
        assert_eq!(entry.1, "mcp-host", "{log:?}");
        assert!(
            entry.2.starts_with("claude-code"),
            "the host named: {log:?}"
        );
    }
}

/// Through the stream-json harness: the question arrives as a
/// `control_request`; Accept, then Decline, then an answer given elsewhere
/// first, which withdraws it.
fn stream_json_accept_and_decline() {
    let p = project_with_asking_counter();
    let api = two_increments(&p);
    add_bridge(&p, &api);
    let mut c = p.claude(&api, 100, &["--allowedTools", TOOL]);
    c.say("Add 3 to the counter.");
    let asked = c.elicitation();
    let message = asked["request"]["message"].as_str().unwrap_or("");
    for part in [
        "hosted:counter",
        "`increment`",
        r#"{"amount":3}"#,
        "mutates: true",
    ] {
        assert!(message.contains(part), "{part} in the question: {asked}");
    }
    assert_eq!(asked["request"]["mode"], "form", "{asked}");
    assert_eq!(asked["request"]["mcp_server_name"], "tickloop", "{asked}");
    c.answer(&asked, "accept");
    assert_eq!(c.result_text(), "first done");
    assert_eq!(increments(&p), [3]);
    c.say("Add 4 to the counter.");
    let asked = c.elicitation();
    c.answer(&asked, "decline");
    assert_eq!(c.result_text(), "second done");
    assert_accepted_then_declined(&p, &api);
    // Answered elsewhere first: Claude Code withdraws the question from the
    // harness (`control_cancel_request`) and the turn ends unanswered here.
    c.say("Add 5 to the counter.");
    let asked = c.elicitation();
    approve_from_cli(&p);
    let withdrawn = c.next_line("control_cancel_request", |v| {
        v["type"] == "control_cancel_request"
    });
    assert_eq!(withdrawn["request_id"], asked["request_id"], "{withdrawn}");
    assert_eq!(c.result_text(), "third done");
    c.finish();
    assert_eq!(increments(&p), [3, 5]);
}

/// `s` quoted for `sh`.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A `sh` line running `cmd` as it is set up (directory, environment,
/// arguments).
fn shell_line(cmd: &Command) -> String {
    let mut line = String::from("cd ");
    let dir = cmd.get_current_dir().unwrap_or(Path::new("."));
    line.push_str(&quoted(&dir.to_string_lossy()));
    line.push_str(" && env");
    // `env` takes its unsets before its settings.
    let envs: Vec<_> = cmd.get_envs().collect();
    for (key, _) in envs.iter().filter(|(_, v)| v.is_none()) {
        line.push_str(&format!(" -u {}", quoted(&key.to_string_lossy())));
    }
    for (key, value) in &envs {
        if let Some(v) = value {
            let setting = format!("{}={}", key.to_string_lossy(), v.to_string_lossy());
            line.push_str(&format!(" {}", quoted(&setting)));
        }
    }
    line.push(' ');
    line.push_str(&quoted(&cmd.get_program().to_string_lossy()));
    for arg in cmd.get_args() {
        line.push(' ');
        line.push_str(&quoted(&arg.to_string_lossy()));
    }
    line
}

/// Marks Claude Code's first run as done in the project's home (its
/// `.claude.json`, which `claude mcp add` wrote): no onboarding (which
/// checks the network), the folder trusted, the API key accepted.
fn skip_first_run(p: &Project) {
    let path = p.home.join(".claude.json");
    let mut state: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| json!({}));
    state["hasCompletedOnboarding"] = json!(true);
    state["theme"] = json!("dark");
    state["customApiKeyResponses"] = json!({"approved": ["dummy"], "rejected": []});
    let project = p.dir.to_string_lossy().into_owned();
    state["projects"][&project]["hasTrustDialogAccepted"] = json!(true);
    std::fs::write(&path, state.to_string()).expect("write .claude.json");
}

/// README's capture of Claude Code's dialog (the block in its Consent
/// section): each of its lines is on `screen`.
fn assert_readme_shows(screen: &str) {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let section = readme
        .split("## Consent")
        .nth(1)
        .expect("README has a Consent section");
    let capture = section.split("```").nth(1).expect("a capture in it");
    for line in capture.lines().map(str::trim).filter(|l| !l.is_empty()) {
        assert!(
            screen.contains(line),
            "README's capture line {line:?} is not on Claude Code's screen:\n{screen}"
        );
    }
}

/// Picks `button` (`Accept` or `Decline`) in Claude Code's elicitation
/// dialog and presses Enter. The dialog ignores keys for a moment after it
/// shows and after a move, so each key is pressed again until what it does
/// shows: Down until the selection moves to Decline, Up until it is back on
/// Accept, Enter until the dialog is gone.
fn choose(tmux: &Tmux, button: &str) {
    let press_until = |key: &str, done: &dyn Fn(&str) -> bool| {
        let mut polls = 0u32;
        common::wait_for(&format!("{key} to take effect in the dialog"), || {
            if done(&tmux.capture()) {
                return Some(());
            }
            if polls.is_multiple_of(10) {
                tmux.send_keys(&[key]);
            }
            polls += 1;
            None
        });
    };
    press_until("Down", &|s| s.contains("❯ Decline"));
    if button == "Accept" {
        press_until("Up", &|s| s.contains("❯ Accept"));
    }
    press_until("Enter", &|s| !s.contains("requests your input"));
}

/// Full screen in tmux: Claude Code's dialog shows Tickloop's question (and
/// closes when it is answered elsewhere first);
/// Enter on Accept accepts, on Decline declines. README's capture of the
/// dialog is checked against the screen.
fn full_screen_accept_and_decline() {
    let p = project_with_asking_counter();
    let api = two_increments(&p);
    add_bridge(&p, &api);
    skip_first_run(&p);
    let mut cmd = p.claude_command(api.port, 100);
    cmd.args(["Add 3 to the counter.", "--allowedTools", TOOL]);
    let tmux = Tmux::start(&p.host, 100, 40, &shell_line(&cmd));
    let screen = tmux.wait_text("requests your input");
    assert!(screen.contains("hosted:counter"), "{screen}");
    assert_readme_shows(&screen);
    choose(&tmux, "Accept");
    tmux.wait_text("first done");
    assert_eq!(increments(&p), [3]);
    tmux.type_text("Add 4 to the counter.");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text(r#"{"amount":4}"#);
    choose(&tmux, "Decline");
    tmux.wait_text("second done");
    assert_accepted_then_declined(&p, &api);
    // Answered elsewhere first: the dialog closes by itself.
    tmux.type_text("Add 5 to the counter.");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text(r#"{"amount":5}"#);
    approve_from_cli(&p);
    tmux.wait_text("third done");
    assert!(
        !tmux.capture().contains("requests your input"),
        "{}",
        tmux.capture()
    );
    assert_eq!(increments(&p), [3, 5]);
}

/// `tickloop approve` of the one call that waits, as a person in another
/// terminal would (the Monitor sends the same decision).
fn approve_from_cli(p: &Project) {
    let held = common::wait_for("a call waiting for approval", || {
        let out = p.host.run(&["approvals"]);
        let first = out.stdout.lines().next()?.to_string();
        serde_json::from_str::<Value>(&first).ok()
    });
    let call = held["call"].as_str().unwrap_or_default();
    p.host.ok(&["approve", "hosted:counter", call]);
}

fn main() {
    let args = Arguments::from_args();
    let missing = claude_bin().err();
    if let Some(why) = &missing {
        eprintln!(
            "IGNORED: the Claude Code trials need the real CLI ({why}); `.ci/run` installs it, or set TICKLOOP_CLAUDE_BIN"
        );
    }
    let trials = vec![
        trial(
            "stream_json_accept_and_decline",
            stream_json_accept_and_decline,
            &missing,
        ),
        trial(
            "full_screen_accept_and_decline",
            full_screen_accept_and_decline,
            &missing,
        ),
        trial(
            "stream_json_in_2026_07_28",
            stream_json_in_2026_07_28,
            &missing,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}
