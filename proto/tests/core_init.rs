//! Initialization (spec 4.2, 4.3) and descriptor validation (spec 5.3).

mod core_support;

use core_support::{counter_descriptor, Harness};
use serde_json::{json, Value};
use std::time::Duration;
use tickloop_proto::core::descriptor::{Descriptor, DescriptorError, Newest};
use tickloop_proto::core::{
    Action, CallOutcome, EndKind, Limits, Phase, Reply, SessionRequest, ViolationKind,
};

fn validate(descriptor: &Value) -> Result<Descriptor, DescriptorError> {
    Descriptor::validate(descriptor, &Limits::default())
}

fn with(field: &str, value: Value) -> Value {
    let mut descriptor = counter_descriptor();
    descriptor[field] = value;
    descriptor
}

fn error_of(descriptor: &Value) -> String {
    match validate(descriptor) {
        Ok(_) => panic!("accepted {descriptor}"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn session_starts_by_writing_describe_then_read() {
    let mut h = Harness::new();
    assert_eq!(
        h.writes,
        vec![json!({"jsonrpc": "2.0", "id": 1, "method": "tick/describe", "params": {}})]
    );
    assert_eq!(h.session.phase(), Phase::Initializing);
    h.answer(1, counter_descriptor());
    assert_eq!(h.writes.len(), 2);
    assert_eq!(h.writes[1]["method"], "tick/read");
    assert_eq!(h.writes[1]["id"], 2);
    h.answer(2, json!({"seq": 0, "data": {"value": 0, "recent": []}}));
    assert_eq!(h.events, vec![Action::Initialized]);
    assert_eq!(h.session.phase(), Phase::Running);
    assert!(h.session.initialized());
    assert_eq!(
        h.session.descriptor().map(|d| d.revision.as_str()),
        Some("1")
    );
    assert_eq!(h.session.state().map(|s| s.seq), Some(0));
}

#[test]
fn describe_unanswered_for_10_s_fails_initialization() {
    let mut h = Harness::new();
    assert_eq!(
        h.session.next_deadline(),
        Some(h.start + Duration::from_secs(10))
    );
    h.advance(Duration::from_millis(9_999));
    assert!(h.ends.is_empty());
    h.advance(Duration::from_millis(1));
    assert_eq!(h.end().kind, EndKind::InitFailed);
    assert!(h.end().message.contains("10"), "{}", h.end().message);
}

#[test]
fn read_unanswered_for_10_s_fails_initialization() {
    let limits = Limits {
        init_total_timeout: Duration::from_secs(100),
        ..Limits::default()
    };
    let mut h = Harness::with_limits(limits);
    h.advance(Duration::from_secs(5));
    h.answer(1, counter_descriptor());
    h.advance(Duration::from_millis(9_999));
    assert!(h.ends.is_empty());
    h.advance(Duration::from_millis(1));
    assert_eq!(h.end().kind, EndKind::InitFailed);
    assert!(h.end().message.contains("tick/read"), "{}", h.end().message);
}

#[test]
fn initialization_over_10_s_in_total_fails() {
    let mut h = Harness::new();
    h.advance(Duration::from_secs(6));
    h.answer(1, counter_descriptor());
    h.advance(Duration::from_secs(4));
    assert_eq!(h.end().kind, EndKind::InitFailed);
}

#[test]
fn error_answer_to_describe_fails_initialization() {
    let mut h = Harness::new();
    h.answer_error(1, -32603, "boom");
    assert_eq!(h.end().kind, EndKind::InitFailed);
    assert!(h.end().message.contains("boom"));
}

#[test]
fn invalid_initial_read_fails_initialization() {
    let mut h = Harness::new();
    h.answer(1, counter_descriptor());
    h.answer(2, json!({"seq": 0, "data": 1, "at": "yesterday"}));
    assert_eq!(h.end().kind, EndKind::InitFailed);
    assert!(h.end().message.contains("at"), "{}", h.end().message);
}

#[test]
fn version_mismatch_message_is_exact() {
    let mut h = Harness::new();
    h.answer(1, with("protocol", json!(2)));
    assert_eq!(h.end().kind, EndKind::InitFailed);
    assert_eq!(
        h.end().message,
        "unsupported Tick protocol version 2; this host speaks Tick protocol 3"
    );
    assert_eq!(
        error_of(&with("protocol", json!(4))),
        "unsupported Tick protocol version 4; this host speaks Tick protocol 3"
    );
}

#[test]
fn missing_protocol_is_rejected() {
    let mut descriptor = counter_descriptor();
    descriptor.as_object_mut().map(|o| o.remove("protocol"));
    assert!(error_of(&descriptor).contains("protocol"));
}

#[test]
fn blank_kind_and_title_are_rejected() {
    assert!(error_of(&with("kind", json!("  \t"))).contains("kind"));
    assert!(error_of(&with("title", json!(""))).contains("title"));
    assert!(error_of(&with("title", json!(3))).contains("title"));
}

#[test]
fn empty_revision_is_rejected_but_blank_is_allowed() {
    assert!(error_of(&with("revision", json!(""))).contains("revision"));
    assert!(validate(&with("revision", json!(" "))).is_ok());
}

#[test]
fn tool_names_must_be_non_blank_and_unique() {
    let mut descriptor = counter_descriptor();
    descriptor["tools"][1]["name"] = json!(" ");
    assert!(error_of(&descriptor).contains("tools[1].name"));
    descriptor["tools"][1]["name"] = json!("increment");
    descriptor["recover_with"] = Value::Null;
    let message = error_of(&descriptor);
    assert!(
        message.contains("tools[1].name") && message.contains("unique"),
        "{message}"
    );
}

#[test]
fn input_schema_must_be_an_object_and_a_valid_schema() {
    let mut descriptor = counter_descriptor();
    descriptor["tools"][0]["input_schema"] = json!(true);
    assert!(error_of(&descriptor).contains("tools[0].input_schema"));
    descriptor["tools"][0]["input_schema"] = json!({"type": "banana"});
    let message = error_of(&descriptor);
    assert!(
        message.contains("tools[0].input_schema") && message.contains("valid JSON Schema"),
        "{message}"
    );
    descriptor["tools"][0]["input_schema"] = json!({"type": "object", "minProperties": -1});
    assert!(error_of(&descriptor).contains("tools[0].input_schema"));
}

#[test]
fn input_schema_with_remote_reference_is_rejected_without_network() {
    let mut descriptor = counter_descriptor();
    descriptor["tools"][0]["input_schema"] = json!({"$ref": "https://example.invalid/schema.json"});
    assert!(error_of(&descriptor).contains("tools[0].input_schema"));
    descriptor["tools"][0]["input_schema"] =
        json!({"$schema": "https://example.invalid/meta", "type": "object"});
    assert!(error_of(&descriptor).contains("tools[0].input_schema"));
}

#[test]
fn recover_with_must_name_an_existing_query_tool() {
    assert!(error_of(&with("recover_with", json!("nope"))).contains("recover_with"));
    let message = error_of(&with("recover_with", json!("increment")));
    assert!(
        message.contains("recover_with") && message.contains("mutates"),
        "{message}"
    );
    assert_eq!(
        validate(&counter_descriptor()).map(|d| d.recover_with),
        Ok(Some("history".to_string()))
    );
}

#[test]
fn series_paths_must_be_pointers_and_unique_with_first_or_last() {
    let series = |list: Value| with("state", json!({"series": list}));
    assert!(
        error_of(&series(json!([{"path": "recent", "newest": "last"}])))
            .contains("state.series[0].path")
    );
    assert!(error_of(&series(
        json!([{"path": "/a", "newest": "last"}, {"path": "/a", "newest": "first"}])
    ))
    .contains("state.series[1].path"));
    assert!(
        error_of(&series(json!([{"path": "/a", "newest": "middle"}])))
            .contains("state.series[0].newest")
    );
    let ok = validate(&series(
        json!([{"path": "", "newest": "first"}, {"path": "/b", "newest": "last"}]),
    ))
    .map(|d| {
        d.series
            .iter()
            .map(|s| (s.path.clone(), s.newest))
            .collect::<Vec<_>>()
    });
    assert_eq!(
        ok,
        Ok(vec![
            (String::new(), Newest::First),
            ("/b".to_string(), Newest::Last)
        ])
    );
}

#[test]
fn descriptor_over_512_kib_is_rejected() {
    let descriptor = with("description", json!("x".repeat(512 * 1024)));
    assert!(error_of(&descriptor).contains("bytes"));
    let small = with("description", json!("x".repeat(400 * 1024)));
    assert!(validate(&small).is_ok());
}

#[test]
fn unknown_descriptor_fields_are_ignored() {
    let mut descriptor = with("future_field", json!({"anything": [1, 2]}));
    descriptor["tools"][0]["icon"] = json!("+");
    let validated = validate(&descriptor).map(|d| d.raw);
    assert_eq!(validated, Ok(descriptor));
}

#[test]
fn descriptor_errors_are_readable_sentences_naming_the_field() {
    let mut descriptor = counter_descriptor();
    descriptor["tools"][0]["mutates"] = json!("yes");
    assert_eq!(
        error_of(&descriptor),
        "the descriptor's tools[0].mutates must be true or false"
    );
}

#[test]
fn tool_check_args_lists_schema_errors() {
    let descriptor = validate(&counter_descriptor()).expect("valid");
    let tool = descriptor.tool("increment").expect("tool");
    assert_eq!(tool.check_args(&json!({"amount": 2})), Ok(()));
    let message = tool
        .check_args(&json!({"amount": "two", "extra": 1}))
        .expect_err("invalid");
    assert!(message.contains("/amount"), "{message}");
    assert!(message.contains("extra"), "{message}");
    assert!(tool.check_args(&json!([1])).is_err());
}

#[test]
fn updates_before_initialization_are_received() {
    let mut h = Harness::new();
    h.update(5, json!({"value": 5}));
    assert_eq!(h.session.updates_received(), 1);
    assert_eq!(h.events, vec![Action::Updated]);
    h.answer(1, counter_descriptor());
    // the read floor includes the update received during initialization
    h.answer(2, json!({"seq": 4, "data": {}}));
    assert_eq!(h.end().kind, EndKind::InitFailed);
}

#[test]
fn client_requests_during_initialization_wait_for_it() {
    let mut h = Harness::new();
    h.call(1, "increment", json!({"amount": 1}), "1");
    h.request(2, SessionRequest::Read);
    assert_eq!(h.writes.len(), 1);
    assert!(h.replies.is_empty());
    assert_eq!(h.session.calls_in_flight(), 1);
    h.answer(1, counter_descriptor());
    h.answer(2, json!({"seq": 0, "data": null}));
    let methods: Vec<&str> = h
        .writes
        .iter()
        .map(|w| w["method"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        methods,
        ["tick/describe", "tick/read", "tick/call", "tick/read"]
    );
}

#[test]
fn failed_initialization_answers_waiting_requests() {
    let mut h = Harness::new();
    h.call(1, "increment", json!({"amount": 1}), "1");
    h.request(2, SessionRequest::Describe);
    h.answer(1, with("protocol", json!("3")));
    assert_eq!(
        h.end().message,
        "unsupported Tick protocol version \"3\"; this host speaks Tick protocol 3"
    );
    match h.outcome(1) {
        CallOutcome::NotExecuted { error } => assert_eq!(error.code, -32600),
        other => panic!("{other:?}"),
    }
    assert!(matches!(h.reply_to(2), Reply::Failed(_)));
}

#[test]
fn violation_during_initialization_keeps_its_kind() {
    let mut h = Harness::new();
    h.bytes(b"hello\n");
    assert_eq!(h.end().kind, EndKind::Violation(ViolationKind::InvalidJson));
    assert!(!h.session.initialized());
}
