//! Consent in the real Claude Code CLI (issues 27 and 37), with a scripted
//! model on loopback: the model calls the per-Tick
//! `mcp__tickloop__counter__increment` tool of a counter whose approval
//! policy is `ask`; tickhost holds the call, `tickloop mcp` puts the question
//! to Claude Code (`elicitation/create` in MCP 2025-11-25, an
//! `input_required` result in 2026-07-28), and Claude Code shows it.
//! Accepting runs the call once; declining runs nothing and the model's next
//! request carries "not executed". Full screen in tmux at 80 columns (its
//! dialog, answered with keys; the question's four lines unfolded, with its
//! deadline), in both revisions, and through the stream-json harness (the
//! question is a `control_request`, the answer a `control_response`, the
//! withdrawal a `control_cancel_request`; `--ask-in-host always`, since
//! `claude -p` is asked nothing by default, which a trial checks too). An
//! answer given first with `tickloop approve` ends the waiting call at once
//! in 2025-11-25 and the dialog leaves the screen (what the bridge offers
//! interactive Claude Code by default: the first trial measures it); in
//! 2026-07-28 the dialog keeps the call until it is answered, and then the
//! call returns the person's answer at once. The shared agent
//! trials run too: Claude Code's Bash tool typing into and closing the
//! person's shell waits for the person (`tests/agents/trials.rs`).
//!
//! Claude Code comes from the npm registry (`.ci/run` installs it into
//! `~/.cache/tickloop-ci/claude-code`; `TICKLOOP_CLAUDE_BIN` names another
//! binary). Without it every trial is reported IGNORED, with the reason.
//! Waits are on events (lines, screens, files), with limits that only guard
//! against hangs.

mod agents;
mod common;
#[path = "claude_code/harness.rs"]
mod harness;

use common::tmux::Tmux;
use harness::{claude_bin, tool_results, trial, FakeApi, Project, CLAUDE_CODE};
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

/// `tickloop mcp`'s arguments capped at MCP 2025-11-25.
const MCP_2025: [&str; 3] = ["mcp", "--max-protocol", "2025-11-25"];

/// `claude mcp add tickloop -- tickloop ARGS` in the project.
fn add_bridge(p: &Project, api: &FakeApi, args: &[&str]) {
    let added = p
        .claude_command(api.port, 100)
        .args(["mcp", "add", "tickloop", "--", "tickloop"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("claude mcp add");
    assert!(added.status.success(), "claude mcp add: {added:?}");
}

/// `tickloop mcp FLAGS` offering every revision, with what Claude Code sends
/// it copied to `mcp-in.jsonl` in the project (so the trial can tell which
/// revision was spoken); that file's path.
fn add_bridge_recorded(p: &Project, api: &FakeApi, flags: &str) -> std::path::PathBuf {
    let record = p.dir.join("mcp-in.jsonl");
    let command = format!(
        "tee -a {} | exec tickloop mcp {flags}",
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
    // `claude -p` is not interactive: the harness says it shows questions.
    let record = add_bridge_recorded(&p, &api, "--ask-in-host always");
    let mut c = p.claude(&api, 100, &["--allowedTools", TOOL]);
    c.say("Add 3 to the counter.");
    let asked = c.elicitation();
    let message = asked["request"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("increment") && message.contains("hosted:counter"),
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
    let sent = sent_to_bridge(&record);
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

/// The messages Claude Code sent the bridge, as [`add_bridge_recorded`]
/// kept them.
fn sent_to_bridge(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
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
    // `claude -p` is not interactive: the harness says it shows questions.
    add_bridge(
        &p,
        &api,
        &[&MCP_2025[..], &["--ask-in-host", "always"]].concat(),
    );
    let mut c = p.claude(&api, 100, &["--allowedTools", TOOL]);
    c.say("Add 3 to the counter.");
    let asked = c.elicitation();
    let message = asked["request"]["message"].as_str().unwrap_or("");
    for part in [
        "Add an integer to the counter? · hosted:counter",
        "Asked by this session's agent (Claude Code, session ",
        "Answer by ",
        r#"increment {"amount":3} rev 1"#,
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

/// `line` with what changes from run to run made a placeholder: a time
/// (`HH:MM:SS`) and a session id (`session 1234abcd`).
fn settled(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let is_time = i + 8 <= chars.len()
            && chars[i..i + 8].iter().enumerate().all(|(k, c)| {
                if k == 2 || k == 5 {
                    *c == ':'
                } else {
                    c.is_ascii_digit()
                }
            });
        if is_time {
            out.push_str("HH:MM:SS");
            i += 8;
            continue;
        }
        if line[line.char_indices().nth(i).map_or(0, |(b, _)| b)..].starts_with("session ")
            && i + 16 <= chars.len()
            && chars[i + 8..i + 16].iter().all(|c| c.is_ascii_hexdigit())
        {
            out.push_str("session ID");
            i += 16;
            continue;
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// README's capture of Claude Code's dialog (the block in its Consent
/// section): each of its lines is on `screen` (times and session ids as
/// placeholders).
fn assert_readme_shows(screen: &str) {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let section = readme
        .split("## Consent")
        .nth(1)
        .expect("README has a Consent section");
    let capture = section.split("```").nth(1).expect("a capture in it");
    let shown = settled(screen);
    for line in capture.lines().map(str::trim).filter(|l| !l.is_empty()) {
        assert!(
            shown.contains(&settled(line)),
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

/// Claude Code full screen in tmux, 80 columns, with `tickloop mcp
/// BRIDGE`: the question shows unfolded with its deadline (and as README
/// shows it); Enter on Accept accepts, on Decline declines. Then the third
/// call is approved with `tickloop approve` while the dialog is up, and
/// `elsewhere` checks what Claude Code does then.
fn full_screen(bridge: &[&str], elsewhere: fn(&Tmux, &Project)) {
    let p = project_with_asking_counter();
    let api = two_increments(&p);
    add_bridge(&p, &api, bridge);
    skip_first_run(&p);
    let mut cmd = p.claude_command(api.port, 100);
    cmd.args(["Add 3 to the counter.", "--allowedTools", TOOL]);
    let tmux = Tmux::start(&p.host, 80, 40, &shell_line(&cmd));
    let screen = tmux.wait_text("requests your input");
    assert!(
        screen.contains("Answer by ") && screen.contains("hosted:counter"),
        "the question names the instance and its deadline: {screen}"
    );
    assert!(!screen.contains("more line"), "nothing folded: {screen}");
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
    tmux.type_text("Add 5 to the counter.");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text(r#"{"amount":5}"#);
    approve_from_cli(&p);
    elsewhere(&tmux, &p);
    assert_eq!(increments(&p), [3, 5], "the approved call ran once");
    let log = decisions(&p);
    assert_eq!(
        log.last().map(|(d, by, _)| (d.as_str(), by.as_str())),
        Some(("approved", "cli")),
        "the person's answer stands, and nothing after it: {log:?}"
    );
}

/// MCP 2025-11-25: an answer elsewhere ends the waiting call at once, the
/// bridge withdraws the question with `notifications/cancelled`, the
/// dialog leaves the screen and the agent's turn goes on.
fn full_screen_in_2025_11_25() {
    full_screen(&MCP_2025, |tmux, _| {
        common::wait_for("the withdrawn dialog to leave the screen", || {
            (!tmux.capture().contains("requests your input")).then_some(())
        });
        tmux.wait_text("third done");
    });
}

/// MCP 2026-07-28 (which Claude Code negotiates when offered; the bridge
/// offers it to interactive Claude Code only with `--max-protocol
/// 2026-07-28`): the dialog holds the call (the server cannot withdraw a
/// question in this revision); the approved call runs at once, and when
/// the person answers the dialog, the call returns the real outcome at
/// once (the Decline comes too late to refuse it).
fn full_screen_in_2026_07_28() {
    full_screen(&["mcp", "--max-protocol", "2026-07-28"], |tmux, p| {
        common::wait_for("the approved call to run", || {
            (increments(p) == [3, 5]).then_some(())
        });
        assert!(
            tmux.capture().contains("requests your input"),
            "{}",
            tmux.capture()
        );
        choose(tmux, "Decline");
        tmux.wait_text("third done");
    });
}

/// Claude Code full screen with the bridge as `claude mcp add` installs it
/// (`tickloop mcp`, no flags): interactive Claude Code is offered MCP up to
/// 2025-11-25 (it falls back from `server/discover` to `initialize`), so
/// its first question, approved with `tickloop approve` while the dialog
/// is up, is withdrawn and leaves the screen; the call runs once and the
/// model gets its real result. Prints how long the dialog stayed after the
/// approval (not a bound: the trial waits for it to go).
fn a_question_approved_elsewhere_leaves_the_screen() {
    let p = project_with_asking_counter();
    let api = two_increments(&p);
    let record = add_bridge_recorded(&p, &api, "");
    skip_first_run(&p);
    let mut cmd = p.claude_command(api.port, 100);
    cmd.args(["Add 3 to the counter.", "--allowedTools", TOOL]);
    let tmux = Tmux::start(&p.host, 80, 40, &shell_line(&cmd));
    tmux.wait_text("requests your input");
    let approved = std::time::Instant::now();
    approve_from_cli(&p);
    common::wait_for("the dialog to leave Claude Code's screen", || {
        (!tmux.capture().contains("requests your input")).then_some(())
    });
    let gone = approved.elapsed();
    tmux.wait_text("first done");
    let answered = approved.elapsed();
    eprintln!(
        "measured: Claude Code's dialog left the screen {} ms after `tickloop approve` was started; the model's turn ended after {} ms",
        gone.as_millis(),
        answered.as_millis()
    );
    assert_eq!(increments(&p), [3], "the approved call ran once");
    let results = tool_results(&api);
    assert_eq!(results.len(), 1, "{results:#?}");
    let result: Value = serde_json::from_str::<String>(&results[0])
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    assert_eq!(
        result,
        json!({"outcome": "result", "result": {"value": 3}}),
        "the model got the Tick's real result: {results:#?}"
    );
    let log = decisions(&p);
    assert_eq!(
        log.iter()
            .map(|(d, by, _)| (d.as_str(), by.as_str()))
            .collect::<Vec<_>>(),
        [("approved", "cli")],
        "the person's answer, and nothing from the withdrawn dialog: {log:?}"
    );
    let sent = sent_to_bridge(&record);
    assert!(
        sent.iter().any(|m| m["method"] == "initialize"),
        "Claude Code fell back to initialize (2025-11-25): {sent:#?}"
    );
}

/// `claude -p` answers a server's question without the person (it
/// dismisses it at once), so by default it is not asked: the call waits
/// for the person, who approves with `tickloop approve`.
fn print_mode_is_not_asked() {
    let p = project_with_asking_counter();
    let api = two_increments(&p);
    add_bridge(&p, &api, &MCP_2025);
    let mut c = p.claude(&api, 100, &["--allowedTools", TOOL]);
    c.say("Add 3 to the counter.");
    approve_from_cli(&p);
    assert_eq!(c.result_text(), "first done");
    let asked = c
        .seen
        .iter()
        .any(|v| v["type"] == "control_request" && v["request"]["subtype"] == "elicitation");
    assert!(!asked, "no question reached Claude Code's harness");
    c.finish();
    assert_eq!(increments(&p), [3]);
    let log = decisions(&p);
    assert_eq!(log.len(), 1, "{log:?}");
    assert_eq!((log[0].0.as_str(), log[0].1.as_str()), ("approved", "cli"));
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

/// The origin probe (`tests/agents/origin.rs`) in Claude Code's full
/// screen, where a host question is asked: its MCP server, its hooks and its
/// Bash tool, measured and checked as in `claude -p`; the records kept as
/// `claude-code-full-screen` when asked.
fn origin_facts_full_screen() {
    let name = "claude-code-full-screen";
    let p = Project::new();
    let out = p.host.scratch().join("origin.jsonl");
    let api = p.api(agents::origin::probe_replies(&CLAUDE_CODE, &out, name));
    agents::origin::claude_code_hooks(&p.dir, &|event| {
        agents::origin::probe_line(&out, "hook", &format!("{name}/hook-{event}"))
    });
    agents::origin::claude_code_mcp(
        p.claude_command(api.port, 100),
        &agents::origin::probe_args(&out, "mcp", &format!("{name}/mcp")),
    );
    skip_first_run(&p);
    let mut cmd = p.claude_command(api.port, 100);
    cmd.args([
        "Probe, please.",
        "--allowedTools",
        "Bash",
        "--permission-mode",
        "default",
    ]);
    let tmux = Tmux::start(&p.host, 100, 40, &shell_line(&cmd));
    tmux.wait_text("probed");
    let records = agents::origin::collect(&out, name);
    agents::origin::check(name, &records);
    let mcp = records
        .iter()
        .find(|r| r["label"] == format!("{name}/mcp"))
        .expect("the MCP server's record");
    assert_eq!(
        mcp["self"]["environ"]["values"]["CLAUDE_CODE_ENTRYPOINT"], "cli",
        "interactive: {mcp}"
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
    let trials = vec![
        trial(
            "a_question_approved_elsewhere_leaves_the_screen",
            a_question_approved_elsewhere_leaves_the_screen,
            &missing,
        ),
        trial(
            "stream_json_accept_and_decline",
            stream_json_accept_and_decline,
            &missing,
        ),
        trial(
            "full_screen_in_2025_11_25",
            full_screen_in_2025_11_25,
            &missing,
        ),
        trial(
            "full_screen_in_2026_07_28",
            full_screen_in_2026_07_28,
            &missing,
        ),
        trial(
            "stream_json_in_2026_07_28",
            stream_json_in_2026_07_28,
            &missing,
        ),
        trial("print_mode_is_not_asked", print_mode_is_not_asked, &missing),
        agents::trial_of(
            "origin_facts",
            || agents::origin::facts(&CLAUDE_CODE),
            &missing,
        ),
        trial(
            "origin_facts_full_screen",
            origin_facts_full_screen,
            &missing,
        ),
        agents::trial_of(
            "an_own_client_cannot_answer_its_question",
            || agents::origin::an_own_client_cannot_answer_its_question(&CLAUDE_CODE),
            &missing,
        ),
        agents::trial_of(
            "a_forged_hook_neither_arms_nor_subscribes",
            || agents::origin::a_forged_hook_neither_arms_nor_subscribes(&CLAUDE_CODE),
            &missing,
        ),
        agents::trial_of(
            "shell_tool_waits_for_the_person",
            || agents::trials::shell_tool_waits_for_the_person(&CLAUDE_CODE),
            &missing,
        ),
    ];
    libtest_mimic::run(&args, trials).exit();
}
