//! Calls (spec 7, 10, spec-gaps 3.4): host refusals, outcome sorting, the
//! 60 s timeout, catalog refresh on -32004.

mod core_support;

use core_support::{counter_descriptor, Harness};
use serde_json::json;
use std::time::Duration;
use tickloop_proto::core::{Action, CallOutcome, Limits, Reply, SessionRequest};

fn not_executed_code(outcome: &CallOutcome) -> i64 {
    match outcome {
        CallOutcome::NotExecuted { error } => error.code,
        other => panic!("expected NotExecuted, got {other:?}"),
    }
}

#[test]
fn call_is_written_with_tool_args_and_revision() {
    let mut h = Harness::running();
    h.call(1, "increment", json!({"amount": 2}), "1");
    let line = h.writes.last().cloned().unwrap_or_default();
    assert_eq!(
        line,
        json!({"jsonrpc": "2.0", "id": 3, "method": "tick/call",
               "params": {"tool": "increment", "args": {"amount": 2}, "revision": "1"}})
    );
    h.answer(3, json!({"value": 2}));
    assert_eq!(
        h.outcome(1),
        &CallOutcome::Result {
            result: json!({"value": 2})
        }
    );
}

#[test]
fn stale_revision_is_refused_before_sending() {
    let mut h = Harness::running();
    h.call(1, "increment", json!({"amount": 1}), "0");
    assert_eq!(not_executed_code(h.outcome(1)), -32004);
    assert_eq!(h.writes.len(), 2, "nothing written");
}

#[test]
fn unknown_tool_is_refused_before_sending() {
    let mut h = Harness::running();
    h.call(1, "decrement", json!({}), "1");
    assert_eq!(not_executed_code(h.outcome(1)), -32602);
    assert_eq!(h.writes.len(), 2);
}

#[test]
fn args_failing_the_schema_are_refused_with_the_errors_listed() {
    let mut h = Harness::running();
    h.call(1, "increment", json!({"amount": "two"}), "1");
    match h.outcome(1) {
        CallOutcome::NotExecuted { error } => {
            assert_eq!(error.code, -32602);
            assert!(error.message.contains("/amount"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
    h.call(2, "increment", json!({}), "1");
    assert_eq!(not_executed_code(h.outcome(2)), -32602);
    assert_eq!(h.writes.len(), 2);
}

#[test]
fn call_on_an_ended_session_is_refused_at_once() {
    let mut h = Harness::running();
    h.session.close("test", h.now);
    h.drain();
    h.call(1, "increment", json!({"amount": 1}), "1");
    assert_eq!(not_executed_code(h.outcome(1)), -32600);
}

#[test]
fn error_answers_are_sorted_by_code() {
    let cases = [
        (-32600, false),
        (-32601, false),
        (-32602, false),
        (-32004, false),
        (-32000, true),
        (-32603, true),
        (-1, true),
        (42, true),
    ];
    for (code, executed) in cases {
        let mut h = Harness::running();
        h.call(1, "history", json!({}), "1");
        let id = h.last_id();
        h.answer_error(id, code, "nope");
        match (h.outcome(1), executed) {
            (CallOutcome::Executed { error }, true)
            | (CallOutcome::NotExecuted { error }, false) => {
                assert_eq!(error.code, code)
            }
            (other, _) => panic!("code {code}: {other:?}"),
        }
    }
}

#[test]
fn result_over_8_mib_is_unknown() {
    let limits = Limits {
        max_call_result: 1000,
        ..Limits::default()
    };
    let mut h = Harness::running_with(limits);
    h.call(1, "history", json!({}), "1");
    let id = h.last_id();
    h.answer(id, json!("x".repeat(1000)));
    match h.outcome(1) {
        CallOutcome::Unknown { reason } => assert!(reason.contains("1000"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(h.ends.is_empty());
}

#[test]
fn call_unanswered_for_60_s_is_unknown_and_not_resent() {
    let mut h = Harness::running();
    h.call(1, "increment", json!({"amount": 1}), "1");
    h.advance(Duration::from_millis(59_999));
    assert!(h.replies.is_empty());
    h.advance(Duration::from_millis(1));
    assert!(matches!(h.outcome(1), CallOutcome::Unknown { .. }));
    h.advance(Duration::from_secs(600));
    let calls = h
        .writes
        .iter()
        .filter(|w| w["method"] == "tick/call")
        .count();
    assert_eq!(calls, 1, "never resent");
}

#[test]
fn error_with_bad_shape_is_unknown() {
    let mut h = Harness::running();
    h.call(1, "history", json!({}), "1");
    let id = h.last_id();
    h.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": "bad", "message": "x"}}));
    assert!(matches!(h.outcome(1), CallOutcome::Unknown { .. }));
}

#[test]
fn stale_revision_answer_refreshes_the_catalog_in_the_background() {
    let mut h = Harness::running();
    h.call(1, "increment", json!({"amount": 1}), "1");
    let id = h.last_id();
    h.answer_error(id, -32004, "catalog changed");
    assert_eq!(not_executed_code(h.outcome(1)), -32004);
    assert_eq!(h.last_method(), "tick/describe");
    let mut next = counter_descriptor();
    next["revision"] = json!("2");
    let describe_id = h.last_id();
    h.answer(describe_id, next);
    assert_eq!(h.events, vec![Action::CatalogChanged]);
    assert_eq!(
        h.session.descriptor().map(|d| d.revision.clone()),
        Some("2".to_string())
    );
    assert_eq!(h.replies.len(), 1, "the background describe has no client");
    h.call(2, "increment", json!({"amount": 1}), "1");
    assert_eq!(not_executed_code(h.outcome(2)), -32004);
}

#[test]
fn client_describe_refreshes_the_catalog() {
    let mut h = Harness::running();
    h.request(1, SessionRequest::Describe);
    let mut next = counter_descriptor();
    next["revision"] = json!("7");
    let id = h.last_id();
    h.answer(id, next.clone());
    assert_eq!(h.reply_to(1), &Reply::Describe(next));
    assert_eq!(h.events, vec![Action::CatalogChanged]);
    h.request(2, SessionRequest::Describe);
    let id = h.last_id();
    h.answer(
        id,
        h.session
            .descriptor()
            .map(|d| d.raw.clone())
            .unwrap_or_default(),
    );
    assert_eq!(h.events.len(), 1, "same revision: no CatalogChanged");
}

#[test]
fn invalid_describe_after_initialization_fails_that_request_only() {
    let mut h = Harness::running();
    h.request(1, SessionRequest::Describe);
    let mut bad = counter_descriptor();
    bad["title"] = json!("");
    let id = h.last_id();
    h.answer(id, bad);
    match h.reply_to(1) {
        Reply::Failed(message) => assert!(message.contains("title"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(h.ends.is_empty());
    assert_eq!(
        h.session.descriptor().map(|d| d.title.clone()),
        Some("Counter".to_string())
    );
}
