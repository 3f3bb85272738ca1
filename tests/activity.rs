//! The activity record of an instance (issue 20): what agents asked of it,
//! who asked and how each request ended, its updates, views and
//! subscriptions; `tickloop activity ID [--follow] [--json]`; the record
//! outliving a tickhost restart and the instance's end; and the overlay a
//! view pops over the Tick with the prefix key then `m`.

mod common;

use common::tmux::Tmux;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::sync::mpsc;

fn activity(host: &Host, id: &str) -> Value {
    host.ok(&["activity", id, "--json"])
}

fn requests<'a>(record: &'a Value, method: &str) -> Vec<&'a Value> {
    record["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["type"] == "request" && e["method"] == method)
        .collect()
}

fn call_of<'a>(record: &'a Value, tool: &str) -> Vec<&'a Value> {
    requests(record, "tick/call")
        .into_iter()
        .filter(|e| e["tool"] == tool)
        .collect()
}

#[test]
fn every_request_is_recorded_with_its_client_outcome_error_code_and_duration() {
    let host = Host::new();
    host.open_counter("act");
    host.ok(&[
        "call",
        "act",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    host.run(&["call", "act", "fail", "--revision", "1"])
        .expect(4);
    host.run(&["call", "act", "nope", "--revision", "1"])
        .expect(3);
    host.run(&[
        "call",
        "act",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "0",
    ])
    .expect(3);
    host.ok(&["read", "act"]);
    host.ok(&["input", "act", "+"]);

    let record = activity(&host, "act");
    assert_eq!(record["instance"], "hosted:act");
    let entries = record["entries"].as_array().expect("entries");
    // Numbered in order, the newest being `last`.
    let numbers: Vec<u64> = entries.iter().map(|e| e["n"].as_u64().unwrap()).collect();
    assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
    assert_eq!(record["last"].as_u64(), numbers.last().copied());
    for e in entries {
        assert!(e["at"].as_str().is_some_and(|t| t.ends_with('Z')), "{e}");
    }

    let ok = &call_of(&record, "increment")[0];
    assert_eq!(ok["client"], "cli");
    assert_eq!(ok["outcome"], "executed");
    assert_eq!(ok["args"], serde_json::json!({"amount": 2}));
    assert_eq!(ok["revision"], "1");
    assert_eq!(ok["result"]["value"], 2);
    assert!(ok["duration_ms"].is_u64(), "{ok}");
    let failed = &call_of(&record, "fail")[0];
    assert_eq!(failed["outcome"], "executed");
    assert_eq!(failed["error_code"], -32000);
    let unknown_tool = &call_of(&record, "nope")[0];
    assert_eq!(unknown_tool["outcome"], "not_executed");
    assert_eq!(unknown_tool["error_code"], -32602);
    let stale = &call_of(&record, "increment")[1];
    assert_eq!(stale["outcome"], "not_executed");
    assert_eq!(stale["error_code"], -32004);
    assert_eq!(requests(&record, "tick/read")[0]["outcome"], "ok");
    assert_eq!(requests(&record, "input")[0]["args"], "+");

    // The increment's update (and the typed `+`'s) are there too, each
    // with its size against the delivery budget.
    let updates: Vec<&Value> = entries.iter().filter(|e| e["type"] == "update").collect();
    assert!(!updates.is_empty(), "{record}");
    assert_eq!(updates[0]["budget"], 16384);
    assert!(updates[0]["bytes"].as_u64().is_some_and(|b| b > 0));

    // The catalog, with what mutates.
    let tools = record["tools"].as_array().expect("tools");
    let history = tools
        .iter()
        .find(|t| t["name"] == "history")
        .expect("history");
    assert_eq!(history["mutates"], false);
}

#[test]
fn a_quick_burst_of_updates_is_one_entry_and_watchers_are_counted() {
    let host = Host::new();
    host.open_counter("burst");
    host.ok(&[
        "call",
        "burst",
        "flood",
        r#"{"count":30}"#,
        "--revision",
        "1",
    ]);
    let record = activity(&host, "burst");
    let counted: u64 = record["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "update")
        .map(|e| e["count"].as_u64().unwrap())
        .sum();
    let updates = record["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "update")
        .count();
    // Every update is counted, in fewer entries than updates.
    assert_eq!(counted, 30, "{record}");
    assert!(updates < 30, "{record}");

    let mut watch = host.watch(&["burst", "--interval", "50"]);
    watch.next();
    let record = wait_for("the watch to be counted", || {
        let r = activity(&host, "burst");
        (r["subscribers"] == 1).then_some(r)
    });
    let subscribed = record["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["type"] == "subscription" && e["started"] == true)
        .cloned()
        .expect("the subscription is recorded");
    assert_eq!(subscribed["client"], "cli");
    drop(watch);
    wait_for("the end of the watch to be recorded", || {
        let r = activity(&host, "burst");
        let ended = r["entries"]
            .as_array()?
            .iter()
            .any(|e| e["type"] == "subscription" && e["started"] == false);
        (ended && r["subscribers"] == 0).then_some(())
    });
}

#[test]
fn the_record_outlives_a_tickhost_restart_and_the_instance_s_end() {
    let host = Host::new();
    host.open_counter("keep");
    host.ok(&[
        "call",
        "keep",
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        "1",
    ]);
    let before = activity(&host, "keep");
    let old = host.tickhost_pid().expect("tickhost runs");
    // SAFETY: kill(2) of the tickhost this test started.
    assert_eq!(unsafe { libc::kill(old, libc::SIGKILL) }, 0);
    wait_gone(old, "the killed tickhost");
    // A new tickhost finds the launcher, and the record with it.
    let after = activity(&host, "keep");
    assert_eq!(after["entries"], before["entries"]);

    host.ok(&["close", "keep"]);
    host.wait_ended("hosted:keep");
    let ended = activity(&host, "keep");
    assert_eq!(
        call_of(&ended, "increment")[0]["args"],
        serde_json::json!({"amount": 5})
    );
    // Forgotten: gone from the list and the runtime directory, its record
    // kept in the data directory and read as before (issue 49).
    host.ok(&["close", "keep"]);
    assert!(host.entry("hosted:keep").is_none());
    let kept = activity(&host, "keep");
    assert_eq!(
        call_of(&kept, "increment")[0]["args"],
        serde_json::json!({"amount": 5})
    );
    host.run(&["activity", "never"])
        .expect_error(1, "no_such_instance");
}

#[test]
fn follow_prints_new_entries_as_they_come_until_the_instance_ends() {
    let host = Host::new();
    host.open_counter("fol");
    let mut child = host
        .command(&["activity", "fol", "--follow", "--json"])
        .spawn()
        .expect("start activity --follow");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("activity --follow printed a non-JSON line ({e}): {line}")
            });
            if tx.send(value).is_err() {
                return;
            }
        }
    });
    host.ok(&[
        "call",
        "fol",
        "increment",
        r#"{"amount":3}"#,
        "--revision",
        "1",
    ]);
    wait_for("the call to be followed", || loop {
        match lines.try_recv() {
            Ok(entry) if entry["tool"] == "increment" => return Some(()),
            Ok(_) => continue,
            Err(_) => return None,
        }
    });
    host.ok(&["close", "fol"]);
    let status = wait_for("activity --follow to end with the instance", || {
        child.try_wait().ok().flatten()
    });
    assert!(status.success(), "{status:?}");
}

#[test]
fn the_prefix_then_m_pops_the_activity_over_the_tick_and_esc_drops_back() {
    let host = Host::new();
    host.open_counter("ov");
    host.ok(&[
        "call",
        "ov",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    host.run(&["call", "ov", "fail", "--revision", "1"])
        .expect(4);
    let tmux = Tmux::attach(&host, "hosted:ov", 100, 30);
    tmux.wait_text("value: 2");
    // Redrawn at the view's size.
    let tick_screen = tmux.wait_text("size 100x30");

    tmux.send_keys(&["C-\\", "m"]);
    let shown = tmux.wait_text(r#"increment {"amount":2} → executed"#);
    // The header and the rows: who, what, how it ended; the catalog.
    assert!(
        shown.contains("Counter · example.counter · rev 1"),
        "{shown}"
    );
    assert!(shown.contains("1 view"), "{shown}");
    assert!(
        shown.contains("CLI     fail {} → executed -32000"),
        "{shown}"
    );
    assert!(shown.contains("mutates  Add an integer"), "{shown}");
    // The Tick stays drawn above it.
    assert!(
        shown.lines().next().unwrap_or("").contains("Counter"),
        "{shown}"
    );

    // A call made while it is up shows up in it.
    host.ok(&[
        "call",
        "ov",
        "increment",
        r#"{"amount":40}"#,
        "--revision",
        "1",
    ]);
    tmux.wait_text(r#"increment {"amount":40} → executed"#);

    // Enter shows the newest entry whole; Esc goes back to the list.
    tmux.send_keys(&["Home", "Enter"]);
    let whole = tmux.wait_text("Esc or Enter: back to the list");
    assert!(whole.contains(" at "), "{whole}");
    tmux.send_keys(&["Escape"]);
    tmux.wait_text("Enter whole request");

    // Esc drops back to the Tick: its screen as it was (with the new
    // value), and keys reach it again.
    tmux.send_keys(&["Escape"]);
    // Every row the Tick drew is back, but its value and seq (which the
    // call changed) and the last row (the note after attaching). The frame
    // that restores them may reach tmux in more than one write: wait for
    // the whole of it (a row that never comes back fails the wait).
    let rows = |s: &str| -> Vec<String> {
        let lines: Vec<&str> = s.lines().collect();
        lines[..lines.len().saturating_sub(1)]
            .iter()
            .filter(|l| !l.contains("value:") && !l.contains("seq:"))
            .map(|l| l.trim_end().to_string())
            .collect()
    };
    wait_for(
        "the overlay to close and the Tick's rows to come back",
        || {
            let s = tmux.capture();
            (!s.contains("activity ·") && s.contains("value: 42") && rows(&s) == rows(&tick_screen))
                .then_some(())
        },
    );
    tmux.send_keys(&["+"]);
    tmux.wait_text("value: 43");
    // The same keys open and close it.
    tmux.send_keys(&["C-\\", "m"]);
    tmux.wait_text("activity · hosted:ov");
    tmux.send_keys(&["C-\\", "m"]);
    wait_for("the overlay to close again", || {
        (!tmux.capture().contains("activity ·")).then_some(())
    });
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
}

#[test]
fn on_a_terminal_too_small_the_overlay_says_so_in_one_line() {
    let host = Host::new();
    host.open_counter("small");
    let tmux = Tmux::attach(&host, "hosted:small", 30, 6);
    // Redrawn at this size, the counter's title has scrolled off the top
    // (its lines do not fit 6 rows): wait for the size it says it has.
    tmux.wait_text("size 30x6");
    tmux.send_keys(&["C-\\", "m"]);
    tmux.wait_text("too small for the");
    tmux.send_keys(&["Escape"]);
    wait_for("the note to go", || {
        (!tmux.capture().contains("too small")).then_some(())
    });
}
