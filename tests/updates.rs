//! `tick/update` delivery through `tickloop watch` (spec 6.4, 8; docs/cli.md
//! `watch`): a burst of 5,000 updates is merged with `updates` summing to
//! 5,000 and the last state exact; a ~40 KB state is trimmed to 16 KiB
//! keeping the newest end of its declared series; several instances
//! delivered together get 4 KiB each; keys typed on screen emit updates.

mod common;

use common::*;
use serde_json::{json, Value};

#[test]
fn a_burst_of_5000_updates_reaches_watch_merged_with_the_last_state_exact() {
    let host = Host::new();
    host.open_counter("c");
    let mut w = host.watch(&["c", "--interval", "100"]);
    let first = w.next();
    assert_eq!(first["seq"], 0);
    assert_eq!(first["updates"], 0);

    let out = host.ok(&["call", "c", "flood", r#"{"count":5000}"#, "--revision", "1"]);
    assert_eq!(out["result"]["emitted"], 5000);

    let mut total = 0;
    let mut last_seq = 0;
    let last = loop {
        let d = w.next();
        assert_eq!(d["instance"], "hosted:c", "{d}");
        let seq = int(&d["seq"], "seq");
        let updates = int(&d["updates"], "updates");
        assert!(
            seq > last_seq,
            "deliveries go forward: {seq} after {last_seq}"
        );
        assert!(updates >= 1, "a delivery without updates: {d}");
        assert_eq!(int(&d["merged"], "merged"), updates - 1, "{d}");
        assert_eq!(d["trimmed"], false, "{d}");
        total += updates;
        last_seq = seq;
        if seq == 5000 {
            break d;
        }
    };
    assert_eq!(total, 5000, "updates over all deliveries");
    let recent: Vec<Value> = (4981..=5000).map(|n| json!({"seq":n,"value":n})).collect();
    assert_eq!(last["data"], json!({"value":5000,"recent":recent}));
    let r = host.read("c");
    assert_eq!(r["seq"], 5000);
    assert_eq!(r["data"], last["data"]);
    let e = host.entry("hosted:c").unwrap();
    assert_eq!(e["updates"], 5000, "{e}");
    assert_eq!(e["seq"], 5000, "{e}");
}

/// Checks a trimmed `/recent` against the full one: a `{"$trimmed":N}`
/// marker, then the newest end of the full series, N being what was cut.
fn assert_series_keeps_newest_end(trimmed: &Value, full: &Value) {
    let trimmed = trimmed.as_array().expect("trimmed /recent is an array");
    let full = full.as_array().expect("full /recent is an array");
    let marker = trimmed
        .iter()
        .position(|e| e.get("$trimmed").is_some())
        .unwrap_or_else(|| panic!("no $trimmed marker in {trimmed:?}"));
    assert_eq!(
        marker, 0,
        "the oldest end is cut, so the marker comes first"
    );
    let kept = &trimmed[1..];
    assert!(!kept.is_empty(), "nothing of the series was kept");
    let cut = int(&trimmed[0]["$trimmed"], "$trimmed");
    assert_eq!(
        cut as usize + kept.len(),
        full.len(),
        "N counts the removed elements"
    );
    assert_eq!(
        kept,
        &full[full.len() - kept.len()..],
        "the newest end is kept"
    );
}

#[test]
fn a_40_kb_state_is_trimmed_to_16_kib_keeping_the_newest_end_of_its_series() {
    let host = Host::new();
    host.open_counter("c");
    let mut w = host.watch(&["c", "--interval", "100"]);
    assert_eq!(w.next()["seq"], 0);
    host.ok(&[
        "call",
        "c",
        "big_state",
        r#"{"bytes":40000}"#,
        "--revision",
        "1",
    ]);
    let d = w.next();
    assert_eq!(d["seq"], 1, "{d}");
    assert_eq!(d["trimmed"], true);
    assert!(
        encoded_len(&d["data"]) <= 16 * 1024,
        "delivered data is {} bytes",
        encoded_len(&d["data"])
    );
    let full = host.read("c");
    assert!(encoded_len(&full["data"]) >= 40000, "read is not trimmed");
    assert_eq!(d["data"]["value"], full["data"]["value"]);
    assert_series_keeps_newest_end(&d["data"]["recent"], &full["data"]["recent"]);
}

#[test]
fn instances_delivered_together_are_trimmed_to_4_kib_each() {
    let host = Host::new();
    for id in ["a", "b"] {
        host.open_counter(id);
        host.ok(&[
            "call",
            id,
            "big_state",
            r#"{"bytes":40000}"#,
            "--revision",
            "1",
        ]);
    }
    // The updates reach tickhost's latest state asynchronously.
    wait_for("both big states to be listed", || {
        let list = host.list();
        list.iter().all(|e| e["seq"] == 1).then_some(())
    });
    // The first delivery of a watch carries every instance at once.
    let mut w = host.watch(&["a", "b", "--interval", "100"]);
    for _ in 0..2 {
        let d = w.next();
        let id = d["instance"].as_str().expect("instance").to_string();
        assert_eq!(d["seq"], 1, "{id}");
        assert_eq!(d["trimmed"], true, "{id}");
        let len = encoded_len(&d["data"]);
        assert!(len <= 4 * 1024, "{id}: delivered data is {len} bytes");
        let full = host.read(&id);
        assert_series_keeps_newest_end(&d["data"]["recent"], &full["data"]["recent"]);
    }
}

#[test]
fn keys_typed_on_screen_emit_updates_that_watch_delivers() {
    let host = Host::new();
    host.open_counter("c");
    host.wait_screen("c", "value: 0");
    let mut w = host.watch(&["c", "--interval", "50"]);
    assert_eq!(w.next()["seq"], 0);
    host.ok(&["input", "c", "+"]);
    let d = w.next();
    assert_eq!(d["seq"], 1);
    assert_eq!(d["updates"], 1);
    assert_eq!(d["data"], json!({"value":1,"recent":[{"seq":1,"value":1}]}));
    assert_eq!(d["recover_with"], "history");
    let history = host.ok(&["call", "c", "history", "--revision", "1"]);
    assert_eq!(history, json!({"result":{"changes":[{"seq":1,"value":1}]}}));
}
