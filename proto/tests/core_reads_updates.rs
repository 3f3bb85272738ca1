//! Reads, the read floor and updates (spec 6.3, 8.2, 3.5).

mod core_support;

use core_support::Harness;
use serde_json::json;
use tickloop_proto::core::{
    Action, EndKind, Limits, Reply, SessionRequest, TickState, ViolationKind,
};

fn read_reply(h: &Harness, client: u64) -> Option<TickState> {
    match h.reply_to(client) {
        Reply::Read(state) => Some(state.clone()),
        _ => None,
    }
}

#[test]
fn read_below_the_last_update_seq_fails_that_read_only() {
    let mut h = Harness::running();
    h.update(5, json!({"value": 5}));
    h.request(1, SessionRequest::Read);
    let id = h.last_id();
    h.answer(id, json!({"seq": 4, "data": {"value": 4}}));
    match h.reply_to(1) {
        Reply::Failed(message) => assert!(message.contains("floor"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(h.ends.is_empty());
}

#[test]
fn read_below_the_previous_read_seq_fails() {
    let mut h = Harness::running();
    h.request(1, SessionRequest::Read);
    let id = h.last_id();
    h.answer(id, json!({"seq": 9, "data": 1}));
    assert_eq!(read_reply(&h, 1).map(|s| s.seq), Some(9));
    h.request(2, SessionRequest::Read);
    let id = h.last_id();
    h.answer(id, json!({"seq": 8, "data": 1}));
    assert!(matches!(h.reply_to(2), Reply::Failed(_)));
}

#[test]
fn read_floor_is_recorded_when_the_read_is_written() {
    let mut h = Harness::running();
    h.request(1, SessionRequest::Read);
    let id = h.last_id();
    // an update arriving after the read was written does not raise its floor
    h.update(7, json!({"value": 7}));
    h.answer(id, json!({"seq": 6, "data": {"value": 6}}));
    assert_eq!(read_reply(&h, 1).map(|s| s.seq), Some(6));
    // the state keeps the higher seq
    assert_eq!(h.session.state().map(|s| s.seq), Some(7));
}

#[test]
fn read_floor_of_a_queued_read_is_taken_when_it_is_written() {
    let mut h = Harness::running();
    for client in 0..8 {
        h.call(client, "history", json!({}), "1");
    }
    h.request(50, SessionRequest::Read);
    h.update(3, json!({}));
    h.answer(3, json!([]));
    assert_eq!(h.last_method(), "tick/read");
    let id = h.last_id();
    h.answer(id, json!({"seq": 2, "data": {}}));
    assert!(matches!(h.reply_to(50), Reply::Failed(_)));
}

#[test]
fn read_with_invalid_at_or_too_large_fails_that_read() {
    let limits = Limits {
        max_read: 100,
        ..Limits::default()
    };
    let mut h = Harness::running_with(limits);
    h.request(1, SessionRequest::Read);
    let id = h.last_id();
    h.answer(id, json!({"seq": 1, "data": 1, "at": "2024-13-45"}));
    assert!(matches!(h.reply_to(1), Reply::Failed(_)));
    h.request(2, SessionRequest::Read);
    let id = h.last_id();
    h.answer(id, json!({"seq": 1, "data": "x".repeat(200)}));
    assert!(matches!(h.reply_to(2), Reply::Failed(_)));
    h.request(3, SessionRequest::Read);
    let id = h.last_id();
    h.answer(
        id,
        json!({"seq": 1, "data": null, "at": "2024-05-01T10:00:00.5+02:00", "extra": 1}),
    );
    assert_eq!(
        read_reply(&h, 3),
        Some(TickState {
            seq: 1,
            data: json!(null),
            at: Some("2024-05-01T10:00:00.5+02:00".to_string())
        })
    );
    assert!(h.ends.is_empty());
}

#[test]
fn valid_update_is_received() {
    let mut h = Harness::running();
    h.send(json!({"jsonrpc": "2.0", "method": "tick/update",
                  "params": {"seq": 1, "data": {"value": 2}, "at": "2024-05-01T10:00:00Z"}}));
    assert_eq!(h.events, vec![Action::Updated]);
    assert_eq!(h.session.updates_received(), 1);
    assert_eq!(
        h.session.state().map(|s| s.data.clone()),
        Some(json!({"value": 2}))
    );
}

#[test]
fn update_with_null_data_is_a_violation() {
    let mut h = Harness::running();
    h.update(1, json!(null));
    assert_eq!(
        h.end().kind,
        EndKind::Violation(ViolationKind::InvalidUpdate)
    );
}

#[test]
fn update_seq_must_strictly_increase() {
    let mut h = Harness::running();
    h.update(3, json!(1));
    h.update(3, json!(1));
    let end = h.end();
    assert_eq!(end.kind, EndKind::Violation(ViolationKind::InvalidUpdate));
    assert!(end.message.contains("seq"), "{}", end.message);
}

#[test]
fn update_seq_below_a_read_result_is_allowed() {
    let mut h = Harness::running();
    h.request(1, SessionRequest::Read);
    let id = h.last_id();
    h.answer(id, json!({"seq": 10, "data": 1}));
    h.update(4, json!(1));
    assert!(h.ends.is_empty());
    assert_eq!(h.session.state().map(|s| s.seq), Some(10));
}

#[test]
fn update_with_invalid_at_is_a_violation() {
    let mut h = Harness::running();
    h.send(json!({"jsonrpc": "2.0", "method": "tick/update",
                  "params": {"seq": 1, "data": 1, "at": "now"}}));
    assert_eq!(
        h.end().kind,
        EndKind::Violation(ViolationKind::InvalidUpdate)
    );
}

#[test]
fn update_over_512_kib_is_a_violation() {
    let mut h = Harness::running();
    h.update(1, json!("x".repeat(512 * 1024)));
    assert_eq!(
        h.end().kind,
        EndKind::Violation(ViolationKind::InvalidUpdate)
    );
    let mut h = Harness::running();
    h.update(1, json!("x".repeat(500 * 1024)));
    assert!(h.ends.is_empty());
}

#[test]
fn update_with_missing_or_bad_seq_or_params_is_a_violation() {
    for params in [
        json!(null),
        json!({"data": 1}),
        json!({"seq": -1, "data": 1}),
        json!({"seq": 1.5, "data": 1}),
        json!({"seq": "1", "data": 1}),
        json!([1]),
    ] {
        let mut h = Harness::running();
        h.send(json!({"jsonrpc": "2.0", "method": "tick/update", "params": params}));
        assert_eq!(
            h.end().kind,
            EndKind::Violation(ViolationKind::InvalidUpdate),
            "{params}"
        );
    }
    let mut h = Harness::running();
    h.send(json!({"jsonrpc": "2.0", "method": "tick/update"}));
    assert_eq!(
        h.end().kind,
        EndKind::Violation(ViolationKind::InvalidUpdate)
    );
}
