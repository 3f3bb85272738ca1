//! Shared helpers of the `core_*` tests: a harness that drives a `Session`
//! with a fake clock and records every action.
#![allow(dead_code)]

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tickloop_proto::core::{
    Action, CallOutcome, EndReason, Limits, Reply, Session, SessionRequest,
};
use tickloop_proto::wire::CallRequest;

/// The descriptor of the spec's Appendix A (the counter).
pub fn counter_descriptor() -> Value {
    json!({
        "protocol": 3, "kind": "example.counter", "title": "Counter",
        "description": "Keyboard and tool calls share one value.", "revision": "1",
        "tools": [
            {"name": "increment", "description": "Add an integer to the counter.",
             "input_schema": {"type": "object", "properties": {"amount": {"type": "integer"}},
                              "required": ["amount"], "additionalProperties": false},
             "mutates": true},
            {"name": "history", "description": "Read the last 256 changes.",
             "input_schema": {"type": "object", "additionalProperties": false}, "mutates": false}
        ],
        "recover_with": "history",
        "state": {"series": [{"path": "/recent", "newest": "last"}]}
    })
}

/// A session with a fake clock; every action is recorded by kind.
pub struct Harness {
    pub session: Session,
    pub start: Instant,
    pub now: Instant,
    /// Every line written to the Tick, parsed.
    pub writes: Vec<Value>,
    pub replies: Vec<(u64, Reply)>,
    pub ends: Vec<EndReason>,
    /// Initialized, Updated, CatalogChanged.
    pub events: Vec<Action>,
}

impl Harness {
    pub fn new() -> Self {
        Self::with_limits(Limits::default())
    }

    pub fn with_limits(limits: Limits) -> Self {
        let start = Instant::now();
        let session = Session::new(limits, start);
        let mut harness = Harness {
            session,
            start,
            now: start,
            writes: Vec::new(),
            replies: Vec::new(),
            ends: Vec::new(),
            events: Vec::new(),
        };
        harness.drain();
        harness
    }

    /// A session past initialization with the counter descriptor and state seq 0.
    pub fn running() -> Self {
        Self::running_with(Limits::default())
    }

    pub fn running_with(limits: Limits) -> Self {
        let mut harness = Self::with_limits(limits);
        harness.answer(1, counter_descriptor());
        harness.answer(2, json!({"seq": 0, "data": {"value": 0, "recent": []}}));
        assert!(
            harness.events.contains(&Action::Initialized),
            "initialization failed: {:?}",
            harness.ends
        );
        harness.events.clear();
        harness
    }

    /// Moves every pending action into the record.
    pub fn drain(&mut self) {
        while let Some(action) = self.session.poll_action() {
            match action {
                Action::Write(bytes) => {
                    assert_eq!(
                        bytes.last(),
                        Some(&b'\n'),
                        "a write must end with a newline"
                    );
                    let value: Value = serde_json::from_slice(&bytes).expect("writes are JSON");
                    self.writes.push(value);
                }
                Action::Reply { client, reply } => self.replies.push((client, reply)),
                Action::End(reason) => self.ends.push(reason),
                other => self.events.push(other),
            }
        }
    }

    pub fn bytes(&mut self, bytes: &[u8]) {
        self.session.on_stdout(bytes, self.now);
        self.drain();
    }

    /// Sends one JSON message as a line from the Tick.
    pub fn send(&mut self, message: Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.bytes(&line);
    }

    pub fn answer(&mut self, id: u64, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    pub fn answer_error(&mut self, id: u64, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    pub fn update(&mut self, seq: u64, data: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": "tick/update", "params": {"seq": seq, "data": data}}));
    }

    pub fn request(&mut self, client: u64, request: SessionRequest) {
        self.session.request(client, request, self.now);
        self.drain();
    }

    pub fn call(&mut self, client: u64, tool: &str, args: Value, revision: &str) {
        self.request(
            client,
            SessionRequest::Call(CallRequest {
                tool: tool.to_string(),
                args,
                revision: revision.to_string(),
            }),
        );
    }

    pub fn advance(&mut self, by: Duration) {
        self.now += by;
        self.session.on_time(self.now);
        self.drain();
    }

    /// The id of the last line written.
    pub fn last_id(&self) -> u64 {
        self.writes
            .last()
            .and_then(|w| w["id"].as_u64())
            .expect("a write")
    }

    /// The method of the last line written.
    pub fn last_method(&self) -> String {
        self.writes
            .last()
            .map(|w| w["method"].as_str().unwrap_or("").to_string())
            .unwrap_or_default()
    }

    /// The replies to `client`.
    pub fn replies_to(&self, client: u64) -> Vec<&Reply> {
        self.replies
            .iter()
            .filter(|(c, _)| *c == client)
            .map(|(_, r)| r)
            .collect()
    }

    /// The only reply to `client`.
    pub fn reply_to(&self, client: u64) -> &Reply {
        let replies = self.replies_to(client);
        assert_eq!(
            replies.len(),
            1,
            "expected one reply to {client}, got {replies:?}"
        );
        replies[0]
    }

    /// The call outcome replied to `client`.
    pub fn outcome(&self, client: u64) -> &CallOutcome {
        match self.reply_to(client) {
            Reply::Call(outcome) => outcome,
            other => panic!("expected a call outcome, got {other:?}"),
        }
    }

    /// The one End emitted.
    pub fn end(&self) -> &EndReason {
        assert_eq!(
            self.ends.len(),
            1,
            "expected exactly one End, got {:?}",
            self.ends
        );
        &self.ends[0]
    }
}
