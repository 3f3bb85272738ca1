//! Protocol violations after initialization (spec 3.6, 8.2): each one ends
//! only the offending session — its pending call gets an unknown outcome
//! (exit 5), its process is killed, `list` shows it ended as a violation
//! with a reason — while a second instance of the same Tick goes on
//! answering.

mod common;

use common::*;
use serde_json::json;

/// Opens two `bad.py MODE`, breaks the first with the tool `break`, checks
/// the first ended with a violation and the second still answers. Returns
/// the first's `ended` object.
fn violation_ends_only_that_session(mode: &str) -> serde_json::Value {
    let host = Host::new();
    let victim = host.open_bad("victim", mode);
    host.open_bad("bystander", mode);
    let pid = int(&victim["pid"], "pid") as i32;

    let out = host.run(&["call", "victim", "break", "{}", "--revision", "1"]);
    out.expect(5);
    let reason = &out.json()["unknown"]["reason"];
    assert!(
        reason.as_str().is_some_and(|r| !r.is_empty()),
        "unknown outcome without a reason: {out:#?}"
    );

    let ended = host.wait_ended("hosted:victim");
    assert_eq!(ended["kind"], "violation", "{mode}: {ended}");
    assert!(
        ended["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{mode}: ended without a reason: {ended}"
    );
    assert!(ended["at"].is_string(), "{ended}");
    wait_gone(pid, "the violating Tick");
    assert_eq!(host.logged_calls("victim", "break"), 1, "break sent once");

    let r = host.read("bystander");
    assert_eq!(r["data"]["mode"], mode);
    let echo = host.ok(&["call", "bystander", "echo", r#"{"x":1}"#, "--revision", "1"]);
    assert_eq!(echo, json!({"result":{"args":{"x":1}}}));
    let e = host.entry("hosted:bystander").expect("bystander listed");
    assert_eq!(e["state"], "running");
    ended
}

/// The reason (or the offending text) mentions `needle`.
fn mentions(ended: &serde_json::Value, needle: &str) -> bool {
    let text = format!(
        "{} {}",
        ended["reason"].as_str().unwrap_or(""),
        ended["offending"].as_str().unwrap_or("")
    );
    text.contains(needle)
}

#[test]
fn invalid_json_line_ends_only_that_session() {
    let ended = violation_ends_only_that_session("invalid_json_line");
    assert!(
        mentions(&ended, "this is not json"),
        "the offending bytes are shown: {ended}"
    );
}

#[test]
fn jsonrpc_1_0_ends_only_that_session() {
    violation_ends_only_that_session("jsonrpc_1_0");
}

#[test]
fn response_with_null_id_ends_only_that_session() {
    violation_ends_only_that_session("null_id_response");
}

#[test]
fn response_with_string_id_ends_only_that_session() {
    violation_ends_only_that_session("string_id_response");
}

#[test]
fn output_ending_without_newline_ends_the_session_as_a_violation() {
    violation_ends_only_that_session("no_trailing_newline_then_exit");
}

#[test]
fn line_over_8_mib_ends_only_that_session() {
    violation_ends_only_that_session("line_over_8mib");
}

#[test]
fn update_with_null_data_ends_only_that_session() {
    violation_ends_only_that_session("update_null_data");
}

#[test]
fn update_with_seq_not_increasing_ends_only_that_session() {
    violation_ends_only_that_session("update_seq_not_increasing");
}

#[test]
fn update_with_invalid_at_ends_only_that_session() {
    violation_ends_only_that_session("update_bad_at");
}

#[test]
fn update_over_512_kib_ends_only_that_session() {
    violation_ends_only_that_session("update_over_512kib");
}
