//! Loop subscriptions end to end: a real counter Tick opened through the CLI,
//! a `tickloop loop run` subscribed to it, and its `watch` deliveries riding
//! on the time steps with the right `updates` counts.

mod common;
mod loop_support;

use common::Host;
use loop_support::{LoopHarness, WAIT};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn increment(host: &Host, times: usize) {
    for _ in 0..times {
        host.ok(&[
            "call",
            "hosted:counter",
            "increment",
            r#"{"amount":1}"#,
            "--revision",
            "1",
        ]);
    }
}

/// Polls `/tick status` until it shows `needle` (the pending deliveries).
fn wait_status(h: &mut LoopHarness, needle: &str) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let status = h.status();
        if status.contains(needle) {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "status never showed `{needle}`: {status}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The data part of `instance` in an enqueued message.
fn part<'a>(enqueue: &'a Value, instance: &str) -> &'a Value {
    let content = enqueue["message"]["content"].as_array().expect("content");
    assert_eq!(content[0]["type"], "text", "policy text first: {enqueue}");
    content[1..]
        .iter()
        .map(|p| {
            assert_eq!(p["type"], "data", "deliveries are data parts: {p}");
            &p["data"]
        })
        .find(|d| d["instance"] == instance)
        .unwrap_or_else(|| panic!("no part for {instance}: {enqueue}"))
}

#[test]
fn subscription_deliveries_ride_on_time_steps() {
    let host = Host::new();
    host.open_counter("counter");
    let mut h = LoopHarness::start_from(
        "subscription",
        host.command(&[]),
        &["--delay-ms", "20", "--interval-ms", "100"],
    );
    h.send(json!({"type": "subscribe", "instances": ["hosted:counter"]}));
    let (ok, text) = h.expect_reply();
    assert!(ok && text.contains("hosted:counter"), "{text}");
    // The first delivery is the current state, with no updates.
    wait_status(&mut h, "hosted:counter (0 updates pending)");

    increment(&host, 3);
    wait_status(&mut h, "hosted:counter (3 updates pending)");
    h.turn("watch the counter", "completed");
    assert!(h.command("/tick 2").0);
    let first = h.expect_enqueue();
    let d = part(&first, "hosted:counter");
    assert_eq!(d["updates"], 3, "{d}");
    assert_eq!(d["merged"], 2, "{d}");
    assert_eq!(d["data"]["value"], 3, "{d}");
    assert_eq!(d["trimmed"], false);
    assert!(d["seq"].as_u64().unwrap() >= 3, "{d}");
    for field in [
        "instance",
        "seq",
        "updates",
        "merged",
        "trimmed",
        "recover_with",
        "data",
    ] {
        assert!(d.get(field).is_some(), "`{field}` missing from {d}");
    }
    // Deliveries are data only: text part first (the policy's), nothing else.
    assert_eq!(first["message"]["content"][0]["text"], "tick");

    // Between the steps, two more updates; the run is now enqueued, so they
    // wait for the next step.
    increment(&host, 2);
    wait_status(&mut h, "hosted:counter (2 updates pending)");
    h.step_turn(&first["message"], "completed");
    let second = h.expect_enqueue();
    let d = part(&second, "hosted:counter");
    assert_eq!(d["updates"], 2, "{d}");
    assert_eq!(d["data"]["value"], 5, "{d}");
    h.step_turn(&second["message"], "completed");
    h.wait_ledger("loop_complete");

    // Closing the Tick is delivered too, as data.
    host.ok(&["close", "hosted:counter"]);
    wait_status(&mut h, "ended");
}
