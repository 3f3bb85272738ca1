//! Property test: a Session fed arbitrary bytes and well-formed-but-wrong
//! JSON-RPC messages, in every phase, never panics, never writes a line
//! without a usable id, ends at most once, and answers every client request
//! exactly once.

mod core_support;

use core_support::counter_descriptor;
use proptest::prelude::*;
use serde_json::{json, Map, Value};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};
use tickloop_proto::core::{Action, Limits, Phase, Session, SessionRequest};
use tickloop_proto::wire::CallRequest;

/// One input to the session.
#[derive(Debug, Clone)]
enum Event {
    Bytes(Vec<u8>),
    Message(Value),
    /// Answer the `pick`-th written request (modulo) with `answer`.
    AnswerWritten {
        pick: usize,
        answer: Value,
    },
    Request(SessionRequest),
    Advance(u64),
    Eof,
    Exit,
    Close,
}

fn id_strategy() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        4 => (0u64..30).prop_map(|id| Some(json!(id))),
        1 => Just(None),
        1 => Just(Some(Value::Null)),
        1 => Just(Some(json!("3"))),
        1 => Just(Some(json!(-2))),
        1 => Just(Some(json!(2.5))),
        1 => Just(Some(json!(u64::MAX))),
    ]
}

fn small_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<i32>().prop_map(|n| json!(n)),
        "[a-z ]{0,8}".prop_map(Value::String),
        Just(json!({})),
        Just(json!([1, 2])),
    ]
}

fn error_shape() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(vec![-32600i64, -32601, -32602, -32004, -32000, -32603, 7])
            .prop_map(|code| json!({"code": code, "message": "no"})),
        Just(json!({"code": "x", "message": "no"})),
        Just(json!({"message": "no code"})),
        Just(json!(null)),
        Just(json!("error")),
    ]
}

fn state_shape() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            (0u64..20).prop_map(|s| json!(s)),
            Just(json!(-1)),
            Just(json!("1"))
        ],
        prop_oneof![Just(Value::Null), small_value()],
        prop_oneof![
            Just(None),
            Just(Some(json!("2024-05-01T10:00:00Z"))),
            Just(Some(json!("not a time")))
        ],
    )
        .prop_map(|(seq, data, at)| {
            let mut state = Map::new();
            state.insert("seq".into(), seq);
            state.insert("data".into(), data);
            if let Some(at) = at {
                state.insert("at".into(), at);
            }
            Value::Object(state)
        })
}

fn answer_shape() -> impl Strategy<Value = Value> {
    let descriptor = prop_oneof![
        Just(counter_descriptor()),
        Just({
            let mut d = counter_descriptor();
            d["revision"] = json!("2");
            d
        }),
        Just(json!({"protocol": 2})),
    ];
    prop_oneof![
        descriptor.prop_map(|d| json!({"result": d})),
        state_shape().prop_map(|s| json!({"result": s})),
        small_value().prop_map(|v| json!({"result": v})),
        error_shape().prop_map(|e| json!({"error": e})),
        Just(json!({"result": 1, "error": {"code": 1, "message": "both"}})),
        Just(json!({})),
    ]
}

fn message_strategy() -> impl Strategy<Value = Value> {
    (
        prop_oneof![8 => Just(Some(json!("2.0"))), 1 => Just(None), 1 => Just(Some(json!("1.0")))],
        id_strategy(),
        prop_oneof![
            Just(None),
            Just(Some(json!("tick/update"))),
            Just(Some(json!("tick/other"))),
            Just(Some(json!(5)))
        ],
        prop_oneof![
            Just(None),
            state_shape().prop_map(Some),
            small_value().prop_map(Some)
        ],
        answer_shape(),
    )
        .prop_map(|(jsonrpc, id, method, params, answer)| {
            let mut message = Map::new();
            if let Some(jsonrpc) = jsonrpc {
                message.insert("jsonrpc".into(), jsonrpc);
            }
            if let Some(id) = id {
                message.insert("id".into(), id);
            }
            if let Some(method) = method {
                message.insert("method".into(), method);
                if let Some(params) = params {
                    message.insert("params".into(), params);
                }
            } else if let Value::Object(answer) = answer {
                message.extend(answer);
            }
            Value::Object(message)
        })
}

fn request_strategy() -> impl Strategy<Value = SessionRequest> {
    prop_oneof![
        Just(SessionRequest::Describe),
        Just(SessionRequest::Read),
        (
            prop::sample::select(vec!["increment", "history", "nope"]),
            prop_oneof![Just(json!({"amount": 1})), Just(json!({})), Just(json!([]))],
            prop::sample::select(vec!["1", "2", "0"]),
        )
            .prop_map(|(tool, args, revision)| SessionRequest::Call(CallRequest {
                tool: tool.to_string(),
                args,
                revision: revision.to_string(),
            })),
    ]
}

fn event_strategy() -> impl Strategy<Value = Event> {
    prop_oneof![
        3 => prop::collection::vec(
            prop_oneof![any::<u8>(), Just(b'\n'), Just(b'{'), Just(b'"')], 0..40
        ).prop_map(Event::Bytes),
        6 => message_strategy().prop_map(Event::Message),
        6 => (any::<usize>(), answer_shape()).prop_map(|(pick, answer)| Event::AnswerWritten { pick, answer }),
        5 => request_strategy().prop_map(Event::Request),
        2 => prop_oneof![0u64..100, 9_000u64..11_000, 59_000u64..61_000].prop_map(Event::Advance),
        1 => Just(Event::Eof),
        1 => Just(Event::Exit),
        1 => Just(Event::Close),
    ]
}

/// Drives a session and checks the invariants after every input.
struct Checker {
    session: Session,
    now: Instant,
    written_ids: Vec<u64>,
    seen_ids: HashSet<u64>,
    replies: HashMap<u64, usize>,
    clients: u64,
    ends: usize,
}

impl Checker {
    fn new() -> Self {
        let now = Instant::now();
        let mut checker = Checker {
            session: Session::new(Limits::default(), now),
            now,
            written_ids: Vec::new(),
            seen_ids: HashSet::new(),
            replies: HashMap::new(),
            clients: 0,
            ends: 0,
        };
        checker.drain();
        checker
    }

    fn drain(&mut self) {
        while let Some(action) = self.session.poll_action() {
            match action {
                Action::Write(bytes) => self.check_write(&bytes),
                Action::Reply { client, .. } => {
                    assert!(client < self.clients, "reply to an unknown client {client}");
                    let count = self.replies.entry(client).or_default();
                    *count += 1;
                    assert_eq!(*count, 1, "client {client} answered twice");
                }
                Action::End(reason) => {
                    self.ends += 1;
                    assert_eq!(self.ends, 1, "End emitted twice");
                    assert!(!reason.message.is_empty());
                }
                other => assert_eq!(self.ends, 0, "{other:?} after End"),
            }
        }
        assert!(self.session.in_flight() <= 8);
        match self.session.phase() {
            Phase::Ended => {
                assert_eq!(self.ends, 1);
                assert!(self.session.end_reason().is_some());
                assert_eq!(self.session.in_flight(), 0);
            }
            _ => assert_eq!(self.ends, 0),
        }
    }

    fn check_write(&mut self, bytes: &[u8]) {
        assert_eq!(self.ends, 0, "a write after End");
        assert_eq!(bytes.last(), Some(&b'\n'));
        assert_eq!(bytes.iter().filter(|b| **b == b'\n').count(), 1);
        let line: Value = serde_json::from_slice(bytes).expect("a write is JSON");
        assert_eq!(line["jsonrpc"], "2.0");
        let id = line["id"].as_u64().expect("a usable id");
        assert!(id >= 1);
        assert!(self.seen_ids.insert(id), "id {id} reused");
        let method = line["method"].as_str().unwrap_or("");
        assert!(["tick/describe", "tick/read", "tick/call"].contains(&method));
        assert!(line["params"].is_object());
        self.written_ids.push(id);
    }

    fn apply(&mut self, event: Event) {
        match event {
            Event::Bytes(bytes) => self.session.on_stdout(&bytes, self.now),
            Event::Message(message) => self.send(&message),
            Event::AnswerWritten { pick, answer } => {
                if !self.written_ids.is_empty() {
                    let id = self.written_ids[pick % self.written_ids.len()];
                    let mut message = json!({"jsonrpc": "2.0", "id": id});
                    if let (Value::Object(message), Value::Object(answer)) = (&mut message, answer)
                    {
                        message.extend(answer);
                    }
                    self.send(&message);
                }
            }
            Event::Request(request) => {
                let client = self.clients;
                self.clients += 1;
                self.session.request(client, request, self.now);
            }
            Event::Advance(ms) => {
                self.now += Duration::from_millis(ms);
                self.session.on_time(self.now);
            }
            Event::Eof => self.session.on_stdout_eof(self.now),
            Event::Exit => self.session.on_exit("exited with status 1", self.now),
            Event::Close => self.session.close("test over", self.now),
        }
        self.drain();
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.session.on_stdout(&line, self.now);
    }

    fn initialize(&mut self) {
        self.apply(Event::AnswerWritten {
            pick: 0,
            answer: json!({"result": counter_descriptor()}),
        });
        self.apply(Event::AnswerWritten {
            pick: 1,
            answer: json!({"result": {"seq": 0, "data": null}}),
        });
        assert_eq!(self.session.phase(), Phase::Running);
    }

    /// Closes the session and checks that every client got exactly one reply.
    fn finish(&mut self) {
        self.session.close("end of the test", self.now);
        self.drain();
        assert_eq!(self.ends, 1);
        for client in 0..self.clients {
            assert_eq!(
                self.replies.get(&client),
                Some(&1),
                "client {client} has no reply"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn session_survives_arbitrary_input(
        initialize_first in any::<bool>(),
        events in prop::collection::vec(event_strategy(), 0..40),
    ) {
        let mut checker = Checker::new();
        if initialize_first {
            checker.initialize();
        }
        for event in events {
            checker.apply(event);
        }
        checker.finish();
    }
}
