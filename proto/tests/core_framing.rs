//! Framing and message-shape rules (spec 3.1, 3.2, 3.6).

mod core_support;

use core_support::Harness;
use serde_json::json;
use tickloop_proto::core::framing::{FramingError, LineSplitter};
use tickloop_proto::core::{
    CallOutcome, EndKind, Limits, Phase, Reply, SessionRequest, ViolationKind,
};

#[test]
fn line_reader_splits_lines_across_chunks() {
    let mut reader = LineSplitter::new(100);
    reader.push(b"{\"a\":1}\n{\"b\"");
    reader.push(b":2}\n");
    assert_eq!(reader.next_line(), Some(Ok(b"{\"a\":1}".to_vec())));
    assert_eq!(reader.next_line(), Some(Ok(b"{\"b\":2}".to_vec())));
    assert_eq!(reader.next_line(), None);
    assert_eq!(reader.finish(), Ok(()));
}

#[test]
fn line_reader_reports_overlong_line_after_earlier_lines_without_buffering_it() {
    let mut reader = LineSplitter::new(10);
    reader.push(b"short\n0123456789A");
    assert!(reader.buffered() <= 5 + 256);
    assert_eq!(reader.next_line(), Some(Ok(b"short".to_vec())));
    match reader.next_line() {
        Some(Err(FramingError::LineTooLong { limit: 10, prefix })) => {
            assert_eq!(prefix, b"0123456789".to_vec())
        }
        other => panic!("expected LineTooLong, got {other:?}"),
    }
    reader.push(&[b'x'; 1000]);
    assert_eq!(reader.next_line(), None);
}

#[test]
fn line_reader_accepts_a_line_of_exactly_the_limit() {
    let mut reader = LineSplitter::new(4);
    reader.push(b"1234\n");
    assert_eq!(reader.next_line(), Some(Ok(b"1234".to_vec())));
    reader.push(b"12345\n");
    assert!(matches!(
        reader.next_line(),
        Some(Err(FramingError::LineTooLong { .. }))
    ));
}

#[test]
fn line_reader_never_holds_more_than_the_limit_of_a_line_without_newline() {
    let mut reader = LineSplitter::new(8 * 1024 * 1024);
    let chunk = vec![b'a'; 1024 * 1024];
    for _ in 0..12 {
        reader.push(&chunk);
        assert!(reader.buffered() <= 8 * 1024 * 1024);
    }
    assert!(matches!(
        reader.next_line(),
        Some(Err(FramingError::LineTooLong { .. }))
    ));
    assert!(reader.buffered() <= 256);
}

#[test]
fn line_reader_finish_errors_on_partial_line() {
    let mut reader = LineSplitter::new(100);
    reader.push(b"{\"jsonrpc\":\"2.0\"");
    assert!(matches!(
        reader.finish(),
        Err(FramingError::Unterminated { len: 16, .. })
    ));
}

#[test]
fn line_over_8_mib_ends_session_while_reading() {
    let mut h = Harness::new();
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..8 {
        h.bytes(&chunk);
        assert!(
            h.ends.is_empty(),
            "8 MiB without newline is still within the limit"
        );
    }
    h.bytes(b" ");
    assert_eq!(h.end().kind, EndKind::Violation(ViolationKind::LineTooLong));
    assert_eq!(h.session.phase(), Phase::Ended);
}

#[test]
fn output_ending_without_newline_is_a_violation() {
    let mut h = Harness::running();
    h.bytes(b"{\"jsonrpc\":\"2.0\",\"method\":\"tick/update\"");
    assert!(h.ends.is_empty());
    h.session.on_stdout_eof(h.now);
    h.drain();
    let end = h.end();
    assert_eq!(
        end.kind,
        EndKind::Violation(ViolationKind::UnterminatedOutput)
    );
    assert!(end
        .offending
        .as_deref()
        .unwrap_or("")
        .starts_with("{\"jsonrpc\""));
}

#[test]
fn eof_after_complete_lines_is_not_a_violation() {
    let mut h = Harness::running();
    h.session.on_stdout_eof(h.now);
    h.drain();
    assert!(h.ends.is_empty());
}

#[test]
fn non_json_output_is_non_protocol_output_on_stdout() {
    let mut h = Harness::running();
    h.bytes(b"Loading plugins...\n");
    let end = h.end();
    assert_eq!(end.kind, EndKind::Violation(ViolationKind::InvalidJson));
    assert!(
        end.message.contains("non-protocol output on stdout"),
        "{}",
        end.message
    );
    assert!(
        end.message.contains("Loading plugins..."),
        "{}",
        end.message
    );
    assert_eq!(end.offending.as_deref(), Some("Loading plugins..."));
}

#[test]
fn offending_is_first_256_bytes_lossy() {
    let mut h = Harness::running();
    let mut line = vec![0xff];
    line.extend(vec![b'z'; 1000]);
    line.push(b'\n');
    h.bytes(&line);
    let offending = h.end().offending.clone().expect("offending");
    assert!(offending.starts_with('\u{fffd}'));
    assert_eq!(offending.chars().filter(|c| *c == 'z').count(), 255);
}

#[test]
fn jsonrpc_not_2_0_is_a_violation() {
    for message in [
        json!({"jsonrpc": "1.0", "method": "tick/update", "params": {"seq": 1, "data": 1}}),
        json!({"method": "tick/update", "params": {"seq": 1, "data": 1}}),
        json!([{"jsonrpc": "2.0", "method": "x"}]),
        json!(42),
    ] {
        let mut h = Harness::running();
        h.send(message.clone());
        assert_eq!(
            h.end().kind,
            EndKind::Violation(ViolationKind::NotJsonRpc),
            "{message}"
        );
    }
}

#[test]
fn line_without_integer_id_or_method_is_a_violation() {
    for id in [json!(null), json!("2"), json!(-1), json!(1.5), json!(true)] {
        let mut h = Harness::running();
        h.send(json!({"jsonrpc": "2.0", "id": id, "result": {}}));
        assert_eq!(
            h.end().kind,
            EndKind::Violation(ViolationKind::NoUsableId),
            "id {id}"
        );
    }
    let mut h = Harness::running();
    h.send(json!({"jsonrpc": "2.0", "result": {}}));
    assert_eq!(h.end().kind, EndKind::Violation(ViolationKind::NoUsableId));
}

#[test]
fn response_with_both_result_and_error_fails_only_that_call() {
    let mut h = Harness::running();
    h.call(7, "increment", json!({"amount": 1}), "1");
    let id = h.last_id();
    h.send(json!({"jsonrpc": "2.0", "id": id, "result": 1, "error": {"code": 1, "message": "x"}}));
    assert!(matches!(h.outcome(7), CallOutcome::Unknown { .. }));
    assert!(h.ends.is_empty());
    assert_eq!(h.session.phase(), Phase::Running);
}

#[test]
fn response_with_neither_result_nor_error_fails_only_that_read() {
    let mut h = Harness::running();
    h.request(8, SessionRequest::Read);
    let id = h.last_id();
    h.send(json!({"jsonrpc": "2.0", "id": id}));
    assert!(matches!(h.reply_to(8), Reply::Failed(_)));
    assert!(h.ends.is_empty());
}

#[test]
fn response_with_unknown_id_is_discarded_and_counted() {
    let mut h = Harness::running();
    h.answer(999, json!({}));
    assert_eq!(h.session.discarded_responses(), 1);
    assert!(h.ends.is_empty());
}

#[test]
fn notifications_other_than_update_are_ignored_and_counted() {
    let mut h = Harness::running();
    h.send(json!({"jsonrpc": "2.0", "method": "tick/log", "params": {"text": "hi"}}));
    h.send(json!({"jsonrpc": "2.0", "method": "progress"}));
    assert_eq!(h.session.ignored_notifications(), 2);
    assert!(h.ends.is_empty());
}

#[test]
fn request_from_the_tick_is_ignored_and_counted() {
    let mut h = Harness::running();
    h.send(json!({"jsonrpc": "2.0", "id": 1, "method": "host/ping", "params": {}}));
    assert_eq!(h.session.ignored_requests(), 1);
    assert!(h.ends.is_empty());
    assert!(h.replies.is_empty());
}

#[test]
fn lines_before_an_overlong_line_are_handled_first() {
    let limits = Limits {
        max_line: 1000,
        ..Limits::default()
    };
    let mut h = Harness::running_with(limits);
    h.call(1, "increment", json!({"amount": 1}), "1");
    let id = h.last_id();
    let mut bytes = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":5}}\n").into_bytes();
    bytes.extend(vec![b'x'; 1001]);
    h.bytes(&bytes);
    assert_eq!(h.outcome(1), &CallOutcome::Result { result: json!(5) });
    assert_eq!(h.end().kind, EndKind::Violation(ViolationKind::LineTooLong));
}
