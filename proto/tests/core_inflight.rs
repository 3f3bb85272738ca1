//! Requests in flight (spec 3.3, 7.3): unique ids, at most 8, FIFO, slots
//! freed by timeouts, late answers discarded.

mod core_support;

use core_support::Harness;
use serde_json::json;
use std::time::Duration;
use tickloop_proto::core::{CallOutcome, Limits, Reply, SessionRequest};

#[test]
fn ids_increase_from_1_and_are_never_reused() {
    let mut h = Harness::running();
    for client in 0..20 {
        h.call(client, "history", json!({}), "1");
        let id = h.last_id();
        h.answer(id, json!([]));
    }
    let ids: Vec<u64> = h.writes.iter().filter_map(|w| w["id"].as_u64()).collect();
    assert_eq!(ids, (1..=22).collect::<Vec<u64>>());
}

#[test]
fn never_more_than_8_in_flight_and_the_rest_wait_in_order() {
    let mut h = Harness::running();
    for client in 0..12 {
        h.call(client, "history", json!({}), "1");
    }
    h.request(100, SessionRequest::Read);
    assert_eq!(h.session.in_flight(), 8);
    assert_eq!(h.writes.len(), 2 + 8);
    assert_eq!(h.session.calls_in_flight(), 12);
    // answering the first frees one slot: the next queued call is written
    h.answer(3, json!([]));
    assert_eq!(h.writes.len(), 11);
    assert_eq!(h.session.in_flight(), 8);
    let last = h.writes.last().cloned().unwrap_or_default();
    assert_eq!(last["id"], 11);
    assert_eq!(last["method"], "tick/call");
    // drain all: the read is written last, after every call queued before it
    for id in 4..=14 {
        h.answer(id, json!([]));
    }
    assert_eq!(
        h.writes.last().map(|w| w["method"].clone()),
        Some(json!("tick/read"))
    );
    assert!(h.session.in_flight() <= 8);
}

#[test]
fn describe_and_read_count_against_the_8_slots() {
    let mut h = Harness::running();
    for client in 0..4 {
        h.request(client, SessionRequest::Describe);
        h.request(10 + client, SessionRequest::Read);
    }
    h.call(50, "history", json!({}), "1");
    assert_eq!(h.session.in_flight(), 8);
    assert_eq!(h.writes.len(), 2 + 8);
    assert_eq!(h.session.calls_in_flight(), 1);
}

#[test]
fn timed_out_call_frees_its_slot_and_late_answer_is_discarded() {
    let mut h = Harness::running();
    for client in 0..9 {
        h.call(client, "history", json!({}), "1");
    }
    assert_eq!(h.session.in_flight(), 8);
    h.advance(Duration::from_secs(60));
    // all 8 written calls timed out; the 9th was written then, and is still waiting
    for client in 0..8 {
        assert!(matches!(h.outcome(client), CallOutcome::Unknown { .. }));
    }
    assert!(h.replies_to(8).is_empty());
    assert_eq!(h.session.in_flight(), 1);
    h.answer(3, json!(["late"]));
    assert_eq!(h.session.discarded_responses(), 1);
    assert_eq!(h.replies_to(0).len(), 1, "a late answer changes nothing");
}

#[test]
fn deadlines_are_counted_from_writing() {
    let mut h = Harness::running();
    for client in 0..9 {
        h.call(client, "history", json!({}), "1");
    }
    h.advance(Duration::from_secs(30));
    h.answer(3, json!([]));
    // the 9th was written at 30 s: it must not time out at 60 s
    h.advance(Duration::from_secs(30));
    assert!(h.replies_to(8).is_empty());
    h.advance(Duration::from_secs(30));
    assert!(matches!(h.outcome(8), CallOutcome::Unknown { .. }));
}

#[test]
fn describe_and_read_time_out_after_10_s_without_ending_the_session() {
    let mut h = Harness::running();
    h.request(1, SessionRequest::Read);
    h.request(2, SessionRequest::Describe);
    h.advance(Duration::from_secs(10));
    assert!(matches!(h.reply_to(1), Reply::Failed(_)));
    assert!(matches!(h.reply_to(2), Reply::Failed(_)));
    assert!(h.ends.is_empty());
    assert_eq!(h.session.in_flight(), 0);
}

#[test]
fn next_deadline_is_the_earliest_written_request() {
    let mut h = Harness::running();
    assert_eq!(h.session.next_deadline(), None);
    h.call(1, "history", json!({}), "1");
    assert_eq!(
        h.session.next_deadline(),
        Some(h.now + Duration::from_secs(60))
    );
    h.request(2, SessionRequest::Read);
    assert_eq!(
        h.session.next_deadline(),
        Some(h.now + Duration::from_secs(10))
    );
}

#[test]
fn requests_beyond_the_waiting_bound_are_refused_at_once_and_not_executed() {
    let limits = Limits {
        max_waiting: 4,
        ..Limits::default()
    };
    let mut h = Harness::running_with(limits);
    // 8 in flight, 4 waiting: the bound.
    for client in 0..12 {
        h.call(client, "history", json!({}), "1");
    }
    assert_eq!(h.session.in_flight(), 8);
    let written = h.writes.len();
    // The next call and read are refused at once; nothing more is written.
    h.call(20, "history", json!({}), "1");
    h.request(21, SessionRequest::Read);
    match h.outcome(20) {
        CallOutcome::NotExecuted { error } => {
            assert!(error.message.contains("already waiting"), "{error:?}")
        }
        other => panic!("expected not executed, got {other:?}"),
    }
    assert!(matches!(h.reply_to(21), Reply::Failed(why) if why.contains("try again")));
    assert_eq!(h.writes.len(), written);
    // Once one is answered, a new request waits again.
    h.answer(3, json!([]));
    h.call(22, "history", json!({}), "1");
    assert!(h.replies_to(22).is_empty(), "waiting, not refused");
}

#[test]
fn waiting_requests_are_bounded_in_bytes_too() {
    // `increment {"amount":1}` for revision 1 weighs 22 bytes: its
    // arguments re-encoded, its tool and its revision.
    let limits = Limits {
        max_waiting_bytes: 50,
        ..Limits::default()
    };
    let mut h = Harness::running_with(limits);
    let one = json!({"amount": 1});
    // 8 in flight; then two wait (44 of the 50 bytes).
    for client in 0..10 {
        h.call(client, "increment", one.clone(), "1");
    }
    assert_eq!(h.session.in_flight(), 8);
    let written = h.writes.len();
    // A third would pass the bytes: refused at once, not executed.
    h.call(20, "increment", one.clone(), "1");
    match h.outcome(20) {
        CallOutcome::NotExecuted { error } => {
            assert!(error.message.contains("bytes"), "{error:?}")
        }
        other => panic!("expected not executed, got {other:?}"),
    }
    // A read weighs nothing and still waits.
    h.request(21, SessionRequest::Read);
    assert!(h.replies_to(21).is_empty(), "waiting, not refused");
    assert_eq!(h.writes.len(), written);
    // One alone may weigh more than the bound, when nothing else waits.
    let mut h = Harness::running_with(Limits {
        max_waiting_bytes: 10,
        ..Limits::default()
    });
    for client in 0..9 {
        h.call(client, "increment", one.clone(), "1");
    }
    assert!(h.replies_to(8).is_empty(), "waiting, not refused");
    h.call(9, "increment", one, "1");
    assert!(!h.replies_to(9).is_empty(), "refused");
}

#[test]
fn held_writes_keep_requests_queued_and_the_host_can_refuse_them() {
    let mut h = Harness::running();
    let now = h.now;
    h.session.hold_writes(true, now);
    let written = h.writes.len();
    h.call(1, "history", json!({}), "1");
    h.request(2, SessionRequest::Read);
    assert_eq!(h.writes.len(), written, "nothing written while held");
    assert_eq!(h.session.calls_in_flight(), 1);
    // Released: what waits is written.
    h.session.hold_writes(false, now);
    h.drain();
    assert_eq!(h.writes.len(), written + 2);
    // Held again, and what waits is refused: not executed, never written.
    h.session.hold_writes(true, now);
    h.call(3, "history", json!({}), "1");
    h.session
        .refuse_waiting("the Tick is not reading its stdin");
    h.drain();
    match h.outcome(3) {
        CallOutcome::NotExecuted { error } => {
            assert!(error.message.contains("not reading"), "{error:?}")
        }
        other => panic!("expected not executed, got {other:?}"),
    }
    assert_eq!(h.writes.len(), written + 2);
}
