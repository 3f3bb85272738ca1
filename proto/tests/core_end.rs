//! The end of a session (spec 3.6, 4.5, 7.3): everything pending is answered
//! at once, End is emitted once, later inputs are ignored.

mod core_support;

use core_support::Harness;
use serde_json::json;
use std::time::Duration;
use tickloop_proto::core::{
    Action, CallOutcome, EndKind, Phase, Reply, SessionRequest, ViolationKind,
};

/// A running session with 8 calls written, 1 call and 1 read queued, and a
/// describe written.
fn busy() -> Harness {
    let mut h = Harness::running();
    h.request(100, SessionRequest::Describe);
    for client in 0..8 {
        h.call(client, "increment", json!({"amount": 1}), "1");
    }
    h.request(101, SessionRequest::Read);
    assert_eq!(h.session.in_flight(), 8);
    h
}

fn check_everything_answered_at_once(h: &Harness) {
    assert!(matches!(h.reply_to(100), Reply::Failed(_)));
    for client in 0..7 {
        assert!(
            matches!(h.outcome(client), CallOutcome::Unknown { .. }),
            "written call {client}"
        );
    }
    match h.outcome(7) {
        CallOutcome::NotExecuted { error } => assert_eq!(error.code, -32600),
        other => panic!("queued call: {other:?}"),
    }
    assert!(matches!(h.reply_to(101), Reply::Failed(_)));
    assert_eq!(h.session.phase(), Phase::Ended);
    assert_eq!(h.session.in_flight(), 0);
    assert_eq!(h.session.calls_in_flight(), 0);
    assert_eq!(h.session.next_deadline(), None);
}

#[test]
fn violation_ends_every_request_at_once() {
    let mut h = busy();
    h.bytes(b"oops\n");
    assert_eq!(h.end().kind, EndKind::Violation(ViolationKind::InvalidJson));
    check_everything_answered_at_once(&h);
}

#[test]
fn exit_ends_every_request_at_once() {
    let mut h = busy();
    h.session.on_exit("exited with status 3", h.now);
    h.drain();
    let end = h.end();
    assert_eq!(end.kind, EndKind::Exited);
    assert!(end.message.contains("exited with status 3"));
    assert_eq!(end.offending, None);
    check_everything_answered_at_once(&h);
}

#[test]
fn close_ends_every_request_at_once() {
    let mut h = busy();
    h.session.close("closed by the user", h.now);
    h.drain();
    assert_eq!(h.end().kind, EndKind::Closed);
    assert!(h.end().message.contains("closed by the user"));
    check_everything_answered_at_once(&h);
}

#[test]
fn eof_with_partial_line_ends_every_request_at_once() {
    let mut h = busy();
    h.bytes(b"{\"jsonrpc\"");
    h.session.on_stdout_eof(h.now);
    h.drain();
    assert_eq!(
        h.end().kind,
        EndKind::Violation(ViolationKind::UnterminatedOutput)
    );
    check_everything_answered_at_once(&h);
}

#[test]
fn end_is_emitted_once_and_later_input_is_ignored() {
    let mut h = busy();
    h.session.on_exit("killed by signal 9", h.now);
    h.session.close("again", h.now);
    h.session.on_exit("again", h.now);
    h.drain();
    let replies = h.replies.len();
    h.bytes(b"garbage\n");
    h.update(1, json!(1));
    h.answer(3, json!(1));
    h.session.on_stdout_eof(h.now);
    h.advance(Duration::from_secs(1000));
    assert_eq!(h.ends.len(), 1);
    assert_eq!(h.replies.len(), replies);
    assert_eq!(h.session.updates_received(), 0);
    assert!(h.events.iter().all(|e| *e != Action::Updated));
    assert_eq!(
        h.session.end_reason().map(|r| r.kind),
        Some(EndKind::Exited)
    );
}

#[test]
fn requests_after_the_end_are_answered_at_once() {
    let mut h = Harness::running();
    h.session.on_exit("exited with status 0", h.now);
    h.drain();
    let writes = h.writes.len();
    h.request(1, SessionRequest::Read);
    h.request(2, SessionRequest::Describe);
    h.call(3, "increment", json!({"amount": 1}), "1");
    assert!(matches!(h.reply_to(1), Reply::Failed(_)));
    assert!(matches!(h.reply_to(2), Reply::Failed(_)));
    match h.outcome(3) {
        CallOutcome::NotExecuted { error } => assert_eq!(error.code, -32600),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.writes.len(), writes);
}

#[test]
fn lines_after_a_violation_in_the_same_chunk_are_ignored() {
    let mut h = Harness::running();
    h.call(1, "history", json!({}), "1");
    h.bytes(b"junk\n{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":[]}\n");
    assert!(matches!(h.outcome(1), CallOutcome::Unknown { .. }));
}
