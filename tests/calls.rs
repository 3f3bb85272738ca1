//! `tickloop call` outcomes (docs/cli.md, spec 3.4, 7): host refusals that
//! never reach the Tick (stale revision, unknown tool, invalid args — exit 3),
//! a Tick's own "not executed" answer (exit 3), an executed error (exit 4),
//! an unknown outcome that is never retried (exit 5), at most 8 requests in
//! flight, and `read`/`describe` answering while long calls run.

mod common;

use common::*;
use serde_json::json;

/// Asserts a "not executed" refusal with `code`, and that nothing reached
/// the Tick: a later call is the only one the Tick ever logged.
fn refused_and_never_sent(host: &Host, id: &str, args: &[&str], code: i64) {
    let before = host.logged_call_count(id);
    let out = host.run(args);
    out.expect(3);
    let v = out.json();
    assert_eq!(v["error"]["code"], code, "{v}");
    assert_eq!(v["executed"], false, "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    // The Tick logs requests in the order it reads them, so once this call is
    // answered, anything written before it has been logged too.
    host.ok(&["call", id, "history", "--revision", "1"]);
    assert_eq!(
        host.logged_call_count(id),
        before + 1,
        "the refused call reached the Tick: {:#?}",
        logged_requests(&host.log_path(id))
    );
}

#[test]
fn call_with_stale_revision_is_not_executed_and_never_reaches_the_tick() {
    let host = Host::new();
    host.open_counter("c");
    let args = [
        "call",
        "c",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "0",
    ];
    refused_and_never_sent(&host, "c", &args, -32004);
    assert_eq!(host.read("c")["data"]["value"], 0);
}

#[test]
fn call_of_an_unknown_tool_is_not_executed_and_never_reaches_the_tick() {
    let host = Host::new();
    host.open_counter("c");
    let args = ["call", "c", "explode", "{}", "--revision", "1"];
    refused_and_never_sent(&host, "c", &args, -32602);
}

#[test]
fn call_with_args_failing_the_schema_is_not_executed_and_never_reaches_the_tick() {
    let host = Host::new();
    host.open_counter("c");
    for bad in [
        r#"{"amount":"two"}"#,
        r#"{}"#,
        r#"{"amount":1,"extra":true}"#,
    ] {
        let args = ["call", "c", "increment", bad, "--revision", "1"];
        refused_and_never_sent(&host, "c", &args, -32602);
    }
    assert_eq!(host.read("c")["seq"], 0);
}

#[test]
fn call_answered_with_minus_32000_is_executed_exit_4() {
    let host = Host::new();
    host.open_counter("c");
    let out = host.run(&["call", "c", "fail", "--revision", "1"]);
    out.expect(4);
    let v = out.json();
    assert_eq!(v["error"]["code"], -32000, "{v}");
    assert_eq!(v["error"]["message"], "the tool failed after starting");
    assert_eq!(v["executed"], true);
    assert_eq!(host.logged_calls("c", "fail"), 1);
}

#[test]
fn a_mutating_call_that_changes_the_catalog_is_known_at_once_and_stale_calls_never_reach_the_tick()
{
    let host = Host::new();
    host.open_counter("c");
    host.ok(&[
        "call",
        "c",
        "set_revision",
        r#"{"revision":"2"}"#,
        "--revision",
        "1",
    ]);
    // After a mutating call tickhost describes the Tick again (issue 27):
    // it knows revision 2 before the call's answer, so `list` says so and a
    // call for revision 1 is refused by the host, never sent to the Tick.
    assert_eq!(host.entry("hosted:c").expect("listed")["revision"], "2");
    let args = [
        "call",
        "c",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ];
    let out = host.run(&args);
    out.expect(3);
    assert_eq!(out.json()["error"]["code"], -32004, "{out:#?}");
    assert_eq!(out.json()["executed"], false);
    assert_eq!(
        host.logged_calls("c", "increment"),
        0,
        "stale call reached the Tick"
    );
    assert_eq!(host.ok(&["describe", "c"])["revision"], "2");
    let ok = host.ok(&[
        "call",
        "c",
        "increment",
        r#"{"amount":4}"#,
        "--revision",
        "2",
    ]);
    assert_eq!(ok, json!({"result":{"value":4}}));
}

#[test]
fn tick_exiting_mid_call_gives_an_unknown_outcome_and_the_call_is_sent_exactly_once() {
    let host = Host::new();
    let open = host.open_bad("x", "exit_mid_call");
    let out = host.run(&["call", "x", "break", "{}", "--revision", "1"]);
    out.expect(5);
    let v = out.json();
    assert!(
        v["unknown"]["reason"]
            .as_str()
            .is_some_and(|r| !r.is_empty()),
        "{v}"
    );
    assert_eq!(host.logged_calls("x", "break"), 1, "received exactly once");
    let ended = host.wait_ended("hosted:x");
    assert_eq!(ended["kind"], "exited", "{ended}");
    wait_gone(int(&open["pid"], "pid") as i32, "the exited Tick");
    assert_eq!(host.logged_calls("x", "break"), 1, "never retried");
}

#[test]
fn twenty_concurrent_calls_never_put_more_than_8_requests_in_flight() {
    let host = Host::new();
    host.open_bad("rec", "inflight_recorder");
    let calls: Vec<Running> = (0..20)
        .map(|i| {
            let args = format!(r#"{{"n":{i}}}"#);
            host.spawn(&["call", "rec", "break", &args, "--revision", "1"])
        })
        .collect();
    for (i, call) in calls.into_iter().enumerate() {
        let out = call.finish();
        out.expect(0);
        assert_eq!(out.json(), json!({"result":{"args":{"n":i}}}));
    }
    assert_eq!(host.logged_calls("rec", "break"), 20, "each call sent once");
    let max = host.ok(&["call", "rec", "max_in_flight", "--revision", "1"]);
    let max = int(&max["result"]["max"], "max");
    assert!(max <= 8, "the Tick saw {max} requests in flight at once");
    assert!(max >= 2, "calls were not concurrent at all (max {max})");
}

#[test]
fn read_and_describe_answer_while_long_calls_run_and_pending_calls_end_unknown_on_close() {
    let host = Host::new();
    host.open_counter("c");
    let mut sleepers: Vec<Running> = (0..3)
        .map(|_| host.spawn(&["call", "c", "sleep", r#"{"ms":60000}"#, "--revision", "1"]))
        .collect();
    wait_for("3 calls in flight", || {
        (host.entry("hosted:c")?["calls_in_flight"] == 3).then_some(())
    });
    assert_eq!(host.read("c")["seq"], 0);
    assert_eq!(host.ok(&["describe", "c"])["kind"], "example.counter");
    host.ok(&[
        "call",
        "c",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    assert!(
        sleepers.iter_mut().all(|s| s.is_running()),
        "the long calls finished before read answered"
    );
    host.ok(&["close", "c"]);
    for s in sleepers {
        let out = s.finish();
        out.expect(5);
        assert!(out.json()["unknown"]["reason"].is_string(), "{out:#?}");
    }
    assert_eq!(host.logged_calls("c", "sleep"), 3);
}
