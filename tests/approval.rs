//! Approval (issue 15): with `--approve ask`, a call to a `mutates: true`
//! tool waits in tickhost until a person approves it, before anything is
//! written to the Tick (the counter's own log proves what reached it). Every
//! way it can end — approved, refused, timed out, its catalog revision
//! changed, the Tick ended —, `deny`, changing the policy at run time, the
//! approval log, and the prompts a person answers: the Monitor's and the
//! attach view's activity overlay, in a real terminal (tmux).

mod common;

use common::tmux::Tmux;
use common::*;
use serde_json::Value;

/// The calls `tickloop approvals` lists (one JSON line each).
fn waiting(host: &Host) -> Vec<Value> {
    let out = host.run(&["approvals"]);
    out.expect(0);
    out.stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Waits until call number `n` (1-based) of all ever held waits; returns it.
fn wait_held(host: &Host, tool: &str) -> Value {
    wait_for(&format!("a call to {tool} to wait for approval"), || {
        waiting(host).into_iter().find(|h| h["tool"] == tool)
    })
}

/// Starts `tickloop call ID TOOL ARGS --revision 1` and waits until it is
/// held; returns the running call and its call id.
fn hold(host: &Host, id: &str, tool: &str, args: &str) -> (Running, String) {
    let caller = host.spawn(&["call", id, tool, args, "--revision", "1"]);
    let call = wait_held(host, tool)["call"]
        .as_str()
        .expect("a call id")
        .to_string();
    (caller, call)
}

fn entry(host: &Host, id: &str) -> Value {
    host.entry(id).unwrap_or_else(|| panic!("{id} is listed"))
}

fn log_of(host: &Host, id: &str) -> Vec<Value> {
    let out = host.run(&["approvals", "--log", id]);
    out.expect(0);
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a log line"))
        .collect()
}

fn open_asking(host: &Host, id: &str) {
    host.open_asking_counter(id);
}

#[test]
fn a_held_call_runs_once_approved_and_a_refused_one_never_reaches_the_tick() {
    let host = Host::new();
    open_asking(&host, "ask");
    assert_eq!(host.entry("hosted:ask").expect("listed")["approve"], "ask");

    let caller = host.spawn(&[
        "call",
        "ask",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    let held = wait_held(&host, "increment");
    assert_eq!(held["instance"], "hosted:ask");
    assert_eq!(held["args"], serde_json::json!({"amount": 2}));
    assert_eq!(held["revision"], "1");
    assert_eq!(held["client"], "cli");
    assert_eq!(held["description"], "Add an integer to the counter.");
    assert_eq!(host.entry("hosted:ask").unwrap()["approvals_waiting"], 1);
    // Nothing reached the Tick while it waited.
    assert_eq!(host.logged_calls("ask", "increment"), 0);
    let call = held["call"].as_str().expect("a call id").to_string();
    host.ok(&["approve", "ask", &call]);
    let out = caller.finish();
    out.expect(0);
    assert_eq!(out.json()["result"]["value"], 2);
    assert!(
        out.stderr.contains("waiting for approval of increment"),
        "{}",
        out.stderr
    );
    assert_eq!(host.logged_calls("ask", "increment"), 1);

    // Refused: not executed, with the person's reason; the Tick never saw it.
    let (caller, call) = hold(&host, "ask", "increment", r#"{"amount":9}"#);
    host.ok(&["refuse", "ask", &call, "--reason", "not during the demo"]);
    let out = caller.finish();
    out.expect(3);
    assert!(out.stderr.contains("not during the demo"), "{}", out.stderr);
    assert_eq!(out.json()["executed"], false);
    assert_eq!(host.logged_calls("ask", "increment"), 1);
    assert_eq!(host.read("ask")["data"]["value"], 2);

    // A tool that does not mutate is never held.
    host.ok(&["call", "ask", "history", "--revision", "1"]);
    assert!(waiting(&host).is_empty());

    // Deciding on a call that no longer waits is refused, saying so.
    let again = host.run(&["approve", "ask", &call]);
    again.expect_error(1, "bad_request");

    // The log: every decision, with who made it.
    let decisions: Vec<(String, String)> = log_of(&host, "ask")
        .iter()
        .map(|e| {
            (
                e["decision"].as_str().unwrap().to_string(),
                e["by"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let pairs: Vec<(&str, &str)> = decisions
        .iter()
        .map(|(d, b)| (d.as_str(), b.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("held", "tickhost"),
            ("approved", "cli"),
            ("held", "tickhost"),
            ("refused", "cli")
        ]
    );
    assert_eq!(log_of(&host, "ask")[3]["reason"], "not during the demo");
}

#[test]
fn a_call_nobody_approves_times_out_not_executed() {
    let host = Host::new();
    host.start_tickhost_with(&[("TICKLOOP_APPROVAL_TIMEOUT_MS", "300")]);
    open_asking(&host, "slow");
    let out = host.run(&[
        "call",
        "slow",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    out.expect(3);
    assert!(
        out.stderr.contains("nobody approved the call"),
        "{}",
        out.stderr
    );
    assert_eq!(host.logged_calls("slow", "increment"), 0);
    let last = log_of(&host, "slow").pop().expect("a decision");
    assert_eq!(last["decision"], "timed_out");
}

#[test]
fn a_catalog_change_while_waiting_refuses_with_minus_32004() {
    let host = Host::new();
    open_asking(&host, "rev");
    let (first, _) = hold(&host, "rev", "increment", r#"{"amount":1}"#);
    // Changing the catalog mutates too: it waits, and is approved.
    let (change, call) = hold(&host, "rev", "set_revision", r#"{"revision":"2"}"#);
    host.ok(&["approve", "rev", &call]);
    change.finish().expect(0);
    // tickhost learns of the new catalog when the Tick is described (here
    // by an agent preparing its next call): the first call was bound to
    // revision 1, so it is not executed, -32004, and never reached the Tick.
    host.ok(&["describe", "rev"]);
    let out = first.finish();
    out.expect(3);
    assert_eq!(out.json()["error"]["code"], -32004);
    assert_eq!(host.logged_calls("rev", "increment"), 0);
}

#[test]
fn a_tick_ending_while_a_call_waits_leaves_it_not_executed() {
    let host = Host::new();
    open_asking(&host, "gone");
    let (caller, _) = hold(&host, "gone", "increment", r#"{"amount":1}"#);
    host.ok(&["close", "gone"]);
    let out = caller.finish();
    out.expect(3);
    assert!(
        out.stderr.contains("ended while the call waited"),
        "{}",
        out.stderr
    );
    assert_eq!(host.logged_calls("gone", "increment"), 0);
}

#[test]
fn deny_refuses_at_once_and_the_policy_changes_at_run_time() {
    let host = Host::new();
    let log = host.log_path("deny");
    host.ok(&[
        "open",
        "--id",
        "deny",
        "--approve",
        "deny",
        "--",
        &tick("counter.py"),
        "--log",
        &log,
    ]);
    let out = host.run(&[
        "call",
        "deny",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    out.expect(3);
    assert!(
        out.stderr.contains("approval policy deny"),
        "{}",
        out.stderr
    );
    host.ok(&["approve-policy", "deny", "auto"]);
    assert_eq!(host.entry("hosted:deny").unwrap()["approve"], "auto");
    host.ok(&[
        "call",
        "deny",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(host.logged_calls("deny", "increment"), 1);
    // Turning `ask` off lets a waiting call through.
    host.ok(&["approve-policy", "deny", "ask"]);
    let (caller, _) = hold(&host, "deny", "increment", r#"{"amount":1}"#);
    host.ok(&["approve-policy", "deny", "auto"]);
    caller.finish().expect(0);
    // A bad policy is refused by the CLI before anything changes.
    host.run(&["approve-policy", "deny", "sometimes"]).expect(2);
}

#[test]
fn the_monitor_prompts_y_approves_v_shows_the_arguments_n_refuses() {
    let host = Host::new();
    open_asking(&host, "mon");
    let tmux = Tmux::start(
        &host,
        120,
        30,
        &format!("trap '' QUIT INT; {} monitor", tickloop_bin()),
    );
    tmux.wait_text("hosted:mon");
    let caller = host.spawn(&[
        "call",
        "mon",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    let shown = tmux.wait_text("approve? hosted:mon");
    assert!(
        shown.contains("Add an integer to the counter? · hosted:mon")
            && shown.contains("asked by the person (cli) · waiting")
            && shown.contains("tool increment · catalog revision 1"),
        "{shown}"
    );
    assert!(shown.contains(r#""amount": 2"#), "{shown}");
    assert!(shown.contains("y approve · n refuse"), "{shown}");
    tmux.send_keys(&["y"]);
    caller.finish().expect(0);
    tmux.wait_text("approved %");

    let long: String = (0..12)
        .map(|i| format!(r#""k{i}":{i}"#))
        .collect::<Vec<_>>()
        .join(",");
    let caller = host.spawn(&[
        "call",
        "mon",
        "increment",
        &format!("{{{long}}}"),
        "--revision",
        "1",
    ]);
    let shown = tmux.wait_text("more lines (v shows them)");
    assert!(!shown.contains(r#""k9": 9"#), "{shown}");
    tmux.send_keys(&["v"]);
    tmux.wait_text(r#""k9": 9"#);
    tmux.send_keys(&["n"]);
    let out = caller.finish();
    // The arguments were wrong for the tool anyway, but refused before
    // anyone checked: not executed, by the Monitor.
    out.expect(3);
    // Where it was refused, said once.
    assert!(
        out.stderr.contains("refused") && out.stderr.matches("monitor").count() == 1,
        "{}",
        out.stderr
    );
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn an_attached_view_says_a_call_waits_and_its_activity_overlay_decides() {
    let host = Host::new();
    open_asking(&host, "att");
    let tmux = Tmux::attach(&host, "hosted:att", 110, 30);
    tmux.wait_text("value: 0");
    let caller = host.spawn(&[
        "call",
        "att",
        "increment",
        r#"{"amount":4}"#,
        "--revision",
        "1",
    ]);
    tmux.wait_text(r#"Add an integer to the counter? · increment {"amount":4} · asked by CLI"#);
    tmux.send_keys(&["C-\\", "m"]);
    tmux.wait_text("approve? hosted:att");
    tmux.send_keys(&["y"]);
    caller.finish().expect(0);
    // The activity shows the call executed, the prompt gone.
    let shown = tmux.wait_text(r#"increment {"amount":4} → executed"#);
    assert!(!shown.contains("approve?"), "{shown}");
    tmux.send_keys(&["Escape"]);
    tmux.wait_text("value: 4");
    let last = log_of(&host, "att").pop().expect("a decision");
    assert_eq!(last["decision"], "approved");
    assert_eq!(last["by"], "attach");
}

#[test]
fn a_call_approved_after_an_unnoticed_catalog_change_never_reaches_the_tick() {
    let host = Host::new();
    open_asking(&host, "late");
    let (first, first_call) = hold(&host, "late", "increment", r#"{"amount":1}"#);
    // The Tick changes its catalog without telling anyone (SIGUSR1, see
    // counter.py): tickhost still knows revision 1 while the call waits.
    let pid = entry(&host, "hosted:late")["pid"].to_string();
    let killed = std::process::Command::new("kill")
        .args(["-USR1", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    host.wait_screen("late", "revision: 1-usr1");
    // Approved for revision 1: tickhost describes the Tick again before the
    // approval stands, finds revision 1-usr1, and refuses the call itself.
    // The person is told that, not "approved" (one decision, the one
    // reported: issue 42).
    let approve = host.run(&["approve", "late", &first_call]);
    let error = approve.expect_error(1, "bad_request");
    assert_eq!(error["data"]["decision"], "revision_changed", "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("not approved") && m.contains("1-usr1")),
        "{error}"
    );
    let out = first.finish();
    out.expect(3);
    assert_eq!(out.json()["error"]["code"], -32004);
    assert_eq!(host.logged_calls("late", "increment"), 0);
    let decisions: Vec<Value> = log_of(&host, "late")
        .into_iter()
        .map(|e| e["decision"].clone())
        .collect();
    assert_eq!(decisions, ["held", "revision_changed"]);
    // `list` knows the new revision now.
    assert_eq!(entry(&host, "hosted:late")["revision"], "1-usr1");
}

#[test]
fn list_knows_the_revision_a_mutating_call_made() {
    let host = Host::new();
    let log = host.log_path("fresh");
    host.ok(&[
        "open",
        "--id",
        "fresh",
        "--",
        &tick("counter.py"),
        "--log",
        &log,
    ]);
    host.ok(&[
        "call",
        "fresh",
        "set_revision",
        r#"{"revision":"7"}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(entry(&host, "hosted:fresh")["revision"], "7");
    // A call for the old revision: -32004, and list still says 7.
    let out = host.run(&["call", "fresh", "increment", "{}", "--revision", "1"]);
    out.expect(3);
    assert_eq!(entry(&host, "hosted:fresh")["revision"], "7");
}

/// With notifications on, a held call runs `notify-send` with what it asks.
/// (The desktop's notification daemon cannot run here: a `notify-send` on
/// tickhost's PATH records its arguments instead, as the real one would
/// take them.)
#[test]
fn a_held_call_pops_a_desktop_notification_when_asked() {
    let host = Host::new();
    let bin = host.scratch().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let record = host.scratch().join("notified");
    let script = bin.join("notify-send");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", record.display()),
    )
    .expect("write notify-send");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    host.start_tickhost_with(&[("TICKLOOP_NOTIFY", "1"), ("PATH", &path)]);
    open_asking(&host, "note");
    let (caller, call) = hold(&host, "note", "increment", r#"{"amount":5}"#);
    let notified = wait_for("notify-send to run", || {
        std::fs::read_to_string(&record)
            .ok()
            .filter(|t| t.contains("approve"))
    });
    assert!(notified.contains("Tickloop: approve?"), "{notified}");
    assert!(
        notified.contains(r#"Add an integer to the counter? · increment {"amount":5} Asked by the person (cli); answer by "#)
            && notified.contains(&format!("`tickloop approve hosted:note {call}`")),
        "{notified}"
    );
    host.ok(&["refuse", "note", &call]);
    caller.finish().expect(3);
}
