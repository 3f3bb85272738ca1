//! The Tick protocol 3 host session as a state machine: bytes from the
//! Tick's stdout, client requests and the time go in; lines to write, client
//! replies and the end of the session come out as [`Action`]s.

use super::codes::{INVALID_PARAMS, INVALID_REQUEST, NOT_EXECUTED, STALE_REVISION};
use super::descriptor::Descriptor;
use super::framing::{prefix_of, FramingError, LineSplitter};
use super::limits::{encoded_size, Limits};
use super::state::TickState;
use super::{CallOutcome, RpcError};
use crate::wire::CallRequest;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// The caller's handle for "who asked"; echoed in [`Action::Reply`].
pub type ClientToken = u64;

/// What a client asks of the Tick, as the session core takes it (the wire
/// has its own `wire::ClientRequest`, which the launcher turns into this).
#[derive(Debug, Clone, PartialEq)]
pub enum SessionRequest {
    /// A fresh `tick/describe`, validated.
    Describe,
    /// A `tick/read`, checked against the read floor.
    Read,
    /// A `tick/call`, bound to the revision it was approved against.
    Call(CallRequest),
}

/// What the session asks of its driver; drained with [`Session::poll_action`].
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Write these bytes (one JSON line, `\n` included) to the Tick's stdin.
    Write(Vec<u8>),
    /// Answer client `client`.
    Reply { client: ClientToken, reply: Reply },
    /// Initialization succeeded; descriptor() and state() are set.
    Initialized,
    /// A valid tick/update arrived (updates_received() grew; state() holds
    /// it unless a read already returned a higher seq).
    Updated,
    /// The catalog changed (a describe returned a new revision).
    CatalogChanged,
    /// The session is over: terminate the Tick's process group. Emitted once.
    End(EndReason),
}

/// The answer to one [`SessionRequest`].
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The validated descriptor, as sent.
    Describe(Value),
    /// The validated read result.
    Read(TickState),
    /// The outcome of a call.
    Call(CallOutcome),
    /// describe/read failed (timeout, invalid answer, session ended); the text says why.
    Failed(String),
}

/// Why and how the session ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndReason {
    pub kind: EndKind,
    /// A sentence a person can read.
    pub message: String,
    /// The first 256 bytes of the offending line (lossy UTF-8), when a line
    /// from the Tick caused the end.
    pub offending: Option<String>,
}

/// The class of an end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndKind {
    /// The initialization exchange failed: a timeout, an error answer, or an
    /// invalid descriptor or read result.
    InitFailed,
    /// The Tick broke the protocol (spec 3.6).
    Violation(ViolationKind),
    /// The Tick's process ended.
    Exited,
    /// The host closed the session.
    Closed,
}

impl EndKind {
    /// The machine-readable name used in `EndInfo::kind`.
    pub fn as_str(&self) -> &'static str {
        match self {
            EndKind::InitFailed => "init_failed",
            EndKind::Violation(_) => "violation",
            EndKind::Exited => "exited",
            EndKind::Closed => "closed",
        }
    }
}

/// The session-ending violations of spec 3.6.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViolationKind {
    /// A line longer than 8 MiB.
    LineTooLong,
    /// Output ended without a terminating newline.
    UnterminatedOutput,
    /// A line that is not JSON: non-protocol output on stdout.
    InvalidJson,
    /// JSON that is not a JSON-RPC 2.0 message object.
    NotJsonRpc,
    /// Neither an integer id nor a method (null, string, negative or
    /// fractional ids included).
    NoUsableId,
    /// A tick/update that breaks spec 8.2.
    InvalidUpdate,
}

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Initializing,
    Running,
    Ended,
}

/// Why a request is sent, and who waits for it.
#[derive(Debug, Clone, PartialEq)]
enum Purpose {
    InitDescribe,
    InitRead,
    /// `client` is `None` for the host's own refresh after a -32004.
    Describe {
        client: Option<ClientToken>,
    },
    Read {
        client: ClientToken,
    },
    Call {
        client: ClientToken,
    },
}

/// A request waiting for a slot.
#[derive(Debug)]
struct Outgoing {
    purpose: Purpose,
    method: &'static str,
    params: Value,
    /// What it weighs against [`Limits::max_waiting_bytes`] while it waits.
    bytes: usize,
}

/// A request written to the Tick, waiting for its answer.
#[derive(Debug)]
struct Written {
    purpose: Purpose,
    method: &'static str,
    deadline: Instant,
    /// For reads: the read floor recorded when it was written.
    read_floor: u64,
}

/// The parsed answer of a response.
enum Answer {
    Result(Value),
    Error(RpcError),
    Invalid(String),
}

/// One Tick protocol 3 host session. See `API.md` beside this file.
#[derive(Debug)]
pub struct Session {
    limits: Limits,
    phase: Phase,
    initialized: bool,
    started: Instant,
    reader: LineSplitter,
    actions: VecDeque<Action>,
    next_id: u64,
    in_flight: BTreeMap<u64, Written>,
    queue: VecDeque<Outgoing>,
    waiting_for_init: VecDeque<(ClientToken, SessionRequest)>,
    /// The bytes of the requests in `waiting_for_init`.
    waiting_for_init_bytes: usize,
    /// The host's pipe to the Tick is backed up: nothing more is written.
    writes_held: bool,
    descriptor: Option<Descriptor>,
    state: Option<TickState>,
    last_update_seq: Option<u64>,
    last_read_seq: Option<u64>,
    updates_received: u64,
    ignored_notifications: u64,
    ignored_requests: u64,
    discarded_responses: u64,
    end_reason: Option<EndReason>,
}

impl Session {
    /// A session for a Tick started at `now`; writes `tick/describe` at once.
    pub fn new(limits: Limits, now: Instant) -> Session {
        let reader = LineSplitter::new(limits.max_line);
        let mut session = Session {
            limits,
            phase: Phase::Initializing,
            initialized: false,
            started: now,
            reader,
            actions: VecDeque::new(),
            next_id: 1,
            in_flight: BTreeMap::new(),
            queue: VecDeque::new(),
            waiting_for_init: VecDeque::new(),
            waiting_for_init_bytes: 0,
            writes_held: false,
            descriptor: None,
            state: None,
            last_update_seq: None,
            last_read_seq: None,
            updates_received: 0,
            ignored_notifications: 0,
            ignored_requests: 0,
            discarded_responses: 0,
            end_reason: None,
        };
        session.enqueue(Purpose::InitDescribe);
        session.pump(now);
        session
    }

    /// The next thing to do, in order.
    pub fn poll_action(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    /// Bytes read from the Tick's stdout.
    pub fn on_stdout(&mut self, bytes: &[u8], now: Instant) {
        if self.phase == Phase::Ended {
            return;
        }
        self.reader.push(bytes);
        while self.phase != Phase::Ended {
            match self.reader.next_line() {
                None => break,
                Some(Ok(line)) => self.handle_line(&line),
                Some(Err(error)) => self.framing_violation(error),
            }
        }
        self.pump(now);
    }

    /// The Tick's stdout reached EOF; a partial line left over is a violation.
    pub fn on_stdout_eof(&mut self, _now: Instant) {
        if self.phase == Phase::Ended {
            return;
        }
        if let Err(error) = self.reader.finish() {
            self.framing_violation(error);
        }
    }

    /// The Tick's process ended; `description` is e.g. "exited with status 3".
    pub fn on_exit(&mut self, description: &str, _now: Instant) {
        self.end(EndKind::Exited, format!("the Tick {description}"), None);
    }

    /// A client's request; answered later with [`Action::Reply`] (at once
    /// when refused or when the session is over).
    pub fn request(&mut self, client: ClientToken, request: SessionRequest, now: Instant) {
        let bytes = request_bytes(&request);
        let waiting = self.waiting_bytes();
        if self.phase != Phase::Ended
            && (self.queue.len() + self.waiting_for_init.len() >= self.limits.max_waiting
                || (waiting > 0 && waiting + bytes > self.limits.max_waiting_bytes))
        {
            return self.refuse_busy(client, request);
        }
        match self.phase {
            Phase::Ended => self.refuse_not_running(client, request),
            Phase::Initializing => {
                self.waiting_for_init_bytes += bytes;
                self.waiting_for_init.push_back((client, request));
            }
            Phase::Running => {
                self.submit(client, request, bytes);
                self.pump(now);
            }
        }
    }

    /// Answers `request` without writing it to the Tick, saying `why`: a
    /// call is not executed, a describe or read fails. For the host's own
    /// refusals (a Tick that has stopped reading its stdin).
    pub fn refuse_request(&mut self, client: ClientToken, request: SessionRequest, why: String) {
        self.refuse(client, request, why);
    }

    /// The host says whether the Tick has stopped taking what is written
    /// to it (its stdin backed up): while `held`, nothing more is written,
    /// and what waits stays queued (bounded); released, writing goes on.
    pub fn hold_writes(&mut self, held: bool, now: Instant) {
        self.writes_held = held;
        if !held && self.phase == Phase::Running {
            self.pump(now);
        }
    }

    /// Whether writes are held ([`Session::hold_writes`]).
    pub fn writes_held(&self) -> bool {
        self.writes_held
    }

    /// Answers every client request waiting to be written without writing
    /// it, saying `why` (a call is not executed); the host's own requests
    /// stay queued.
    pub fn refuse_waiting(&mut self, why: &str) {
        let mut kept = VecDeque::new();
        for outgoing in std::mem::take(&mut self.queue) {
            match outgoing.purpose {
                Purpose::Call { .. }
                | Purpose::Read { .. }
                | Purpose::Describe {
                    client: Some(_), ..
                } => self.abandon(
                    outgoing.purpose,
                    || CallOutcome::NotExecuted {
                        error: rpc_error(INVALID_REQUEST, why.to_string()),
                    },
                    why,
                ),
                _ => kept.push_back(outgoing),
            }
        }
        self.queue = kept;
    }

    /// The bytes of the requests waiting to be written.
    fn waiting_bytes(&self) -> usize {
        self.waiting_for_init_bytes + self.queue.iter().map(|o| o.bytes).sum::<usize>()
    }

    /// The host ends the session (`reason` says why, e.g. "closed by the user").
    pub fn close(&mut self, reason: &str, _now: Instant) {
        self.end(EndKind::Closed, reason.to_string(), None);
    }

    /// Applies every timeout due at `now`.
    pub fn on_time(&mut self, now: Instant) {
        if self.phase == Phase::Initializing && now >= self.init_deadline() {
            let seconds = self.limits.init_total_timeout.as_secs_f64();
            self.end(
                EndKind::InitFailed,
                format!("initialization did not finish within {seconds} s"),
                None,
            );
        }
        let expired: Vec<u64> = self
            .in_flight
            .iter()
            .filter(|(_, written)| written.deadline <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in expired {
            if self.phase == Phase::Ended {
                break;
            }
            if let Some(written) = self.in_flight.remove(&id) {
                self.expire(written);
            }
        }
        self.pump(now);
    }

    /// When [`Session::on_time`] should next be called.
    pub fn next_deadline(&self) -> Option<Instant> {
        if self.phase == Phase::Ended {
            return None;
        }
        let requests = self.in_flight.values().map(|written| written.deadline);
        let init = (self.phase == Phase::Initializing).then(|| self.init_deadline());
        requests.chain(init).min()
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Whether initialization completed (it stays true after the end).
    pub fn initialized(&self) -> bool {
        self.initialized
    }

    pub fn end_reason(&self) -> Option<&EndReason> {
        self.end_reason.as_ref()
    }

    /// The catalog held: the latest valid descriptor.
    pub fn descriptor(&self) -> Option<&Descriptor> {
        self.descriptor.as_ref()
    }

    /// The latest state of updates and reads: the highest seq, the later
    /// arrival on a tie.
    pub fn state(&self) -> Option<&TickState> {
        self.state.as_ref()
    }

    pub fn updates_received(&self) -> u64 {
        self.updates_received
    }

    /// Requests written to the Tick and not answered (nor timed out).
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Calls written and unanswered, plus calls waiting to be written.
    pub fn calls_in_flight(&self) -> usize {
        let written = self
            .in_flight
            .values()
            .filter(|written| matches!(written.purpose, Purpose::Call { .. }))
            .count();
        let queued = self
            .queue
            .iter()
            .filter(|outgoing| matches!(outgoing.purpose, Purpose::Call { .. }))
            .count();
        let waiting = self
            .waiting_for_init
            .iter()
            .filter(|(_, request)| matches!(request, SessionRequest::Call(_)))
            .count();
        written + queued + waiting
    }

    /// Notifications other than tick/update, ignored.
    pub fn ignored_notifications(&self) -> u64 {
        self.ignored_notifications
    }

    /// Requests from the Tick (a method and an id), ignored.
    pub fn ignored_requests(&self) -> u64 {
        self.ignored_requests
    }

    /// Responses whose id matched no request in flight (late or unknown), discarded.
    pub fn discarded_responses(&self) -> u64 {
        self.discarded_responses
    }

    fn init_deadline(&self) -> Instant {
        self.started + self.limits.init_total_timeout
    }

    // ----- client requests -----

    fn submit(&mut self, client: ClientToken, request: SessionRequest, bytes: usize) {
        match request {
            SessionRequest::Describe => self.enqueue(Purpose::Describe {
                client: Some(client),
            }),
            SessionRequest::Read => self.enqueue(Purpose::Read { client }),
            SessionRequest::Call(CallRequest {
                tool,
                args,
                revision,
            }) => match self.check_call(&tool, &args, &revision) {
                Ok(()) => self.queue.push_back(Outgoing {
                    bytes,
                    purpose: Purpose::Call { client },
                    method: "tick/call",
                    params: json!({ "tool": tool, "args": args, "revision": revision }),
                }),
                Err(error) => self.reply(client, Reply::Call(CallOutcome::NotExecuted { error })),
            },
        }
    }

    /// The host's own checks before sending a call (spec 7.2, 10).
    fn check_call(&self, tool: &str, args: &Value, revision: &str) -> Result<(), RpcError> {
        let Some(descriptor) = &self.descriptor else {
            return Err(rpc_error(
                INVALID_REQUEST,
                "the session holds no tool catalog".to_string(),
            ));
        };
        if revision != descriptor.revision {
            return Err(RpcError {
                code: STALE_REVISION,
                message: format!(
                    "the call was prepared against revision {revision:?}, but the Tick's catalog \
                     is now revision {:?}; describe the Tick and prepare the call again",
                    descriptor.revision
                ),
                data: Some(json!({ "revision": descriptor.revision })),
            });
        }
        let Some(found) = descriptor.tool(tool) else {
            return Err(rpc_error(
                INVALID_PARAMS,
                format!("the Tick has no tool named {tool:?}"),
            ));
        };
        found
            .check_args(args)
            .map_err(|message| rpc_error(INVALID_PARAMS, message))
    }

    fn refuse_not_running(&mut self, client: ClientToken, request: SessionRequest) {
        let why = match &self.end_reason {
            Some(reason) => format!("the session is not running: {}", reason.message),
            None => "the session is not running".to_string(),
        };
        self.refuse(client, request, why);
    }

    /// Refuses a request when [`Limits::max_waiting`] wait already.
    fn refuse_busy(&mut self, client: ClientToken, request: SessionRequest) {
        let why = format!(
            "{} requests ({} bytes) are already waiting for this Tick (at most {} requests or {} bytes wait, {} in flight); try again when some are answered",
            self.queue.len() + self.waiting_for_init.len(),
            self.waiting_bytes(),
            self.limits.max_waiting,
            self.limits.max_waiting_bytes,
            self.limits.max_in_flight
        );
        self.refuse(client, request, why);
    }

    /// Answers a request that was never written to the Tick: a call is not
    /// executed, a describe or read failed, both saying `why`.
    fn refuse(&mut self, client: ClientToken, request: SessionRequest, why: String) {
        let reply = match request {
            SessionRequest::Call(_) => Reply::Call(CallOutcome::NotExecuted {
                error: rpc_error(INVALID_REQUEST, why),
            }),
            SessionRequest::Describe | SessionRequest::Read => Reply::Failed(why),
        };
        self.reply(client, reply);
    }

    fn reply(&mut self, client: ClientToken, reply: Reply) {
        self.actions.push_back(Action::Reply { client, reply });
    }

    // ----- writing requests -----

    fn enqueue(&mut self, purpose: Purpose) {
        let method = match purpose {
            Purpose::InitDescribe | Purpose::Describe { .. } => "tick/describe",
            Purpose::InitRead | Purpose::Read { .. } => "tick/read",
            Purpose::Call { .. } => "tick/call",
        };
        self.queue.push_back(Outgoing {
            bytes: 0,
            purpose,
            method,
            params: Value::Object(Map::new()),
        });
    }

    /// Writes queued requests, oldest first, while slots are free.
    fn pump(&mut self, now: Instant) {
        while self.phase != Phase::Ended
            && !self.writes_held
            && self.in_flight.len() < self.limits.max_in_flight
        {
            let Some(outgoing) = self.queue.pop_front() else {
                break;
            };
            self.write(outgoing, now);
        }
    }

    fn write(&mut self, outgoing: Outgoing, now: Instant) {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": outgoing.method,
            "params": outgoing.params,
        });
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.actions.push_back(Action::Write(line));
        let read_floor = self.read_floor();
        self.in_flight.insert(
            id,
            Written {
                deadline: now + self.timeout_of(&outgoing.purpose),
                purpose: outgoing.purpose,
                method: outgoing.method,
                read_floor,
            },
        );
    }

    /// The greater of the previous read result's seq and the last update's seq.
    fn read_floor(&self) -> u64 {
        self.last_read_seq
            .unwrap_or(0)
            .max(self.last_update_seq.unwrap_or(0))
    }

    fn timeout_of(&self, purpose: &Purpose) -> Duration {
        match purpose {
            Purpose::InitDescribe | Purpose::InitRead => self.limits.init_request_timeout,
            Purpose::Describe { .. } | Purpose::Read { .. } => self.limits.query_timeout,
            Purpose::Call { .. } => self.limits.call_timeout,
        }
    }

    // ----- reading the Tick's lines -----

    fn framing_violation(&mut self, error: FramingError) {
        let offending = Some(lossy(error.prefix()));
        let kind = match error {
            FramingError::LineTooLong { .. } => ViolationKind::LineTooLong,
            FramingError::Unterminated { .. } => ViolationKind::UnterminatedOutput,
        };
        let shown = show_bytes(error.prefix());
        let message = match kind {
            ViolationKind::UnterminatedOutput => {
                format!("non-protocol output on stdout: {error}: {shown}")
            }
            _ => format!("protocol violation: {error}; it starts {shown}"),
        };
        self.end(EndKind::Violation(kind), message, offending);
    }

    fn violation(&mut self, kind: ViolationKind, message: String, line: &[u8]) {
        self.end(EndKind::Violation(kind), message, Some(lossy(line)));
    }

    fn handle_line(&mut self, line: &[u8]) {
        let message: Value = match serde_json::from_slice(line) {
            Ok(message) => message,
            Err(error) => {
                let text = format!(
                    "non-protocol output on stdout: {} is not a JSON-RPC message ({error})",
                    show_bytes(line)
                );
                return self.violation(ViolationKind::InvalidJson, text, line);
            }
        };
        let Some(object) = message.as_object() else {
            let text = format!(
                "non-protocol output on stdout: {} is JSON but not a JSON-RPC message object",
                show_bytes(line)
            );
            return self.violation(ViolationKind::NotJsonRpc, text, line);
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            let text = format!(
                "a line on stdout does not carry \"jsonrpc\": \"2.0\": {}",
                show_bytes(line)
            );
            return self.violation(ViolationKind::NotJsonRpc, text, line);
        }
        match object.get("method") {
            Some(Value::String(method)) => self.handle_method(method, object, line),
            _ => match object.get("id").and_then(Value::as_u64) {
                Some(id) => self.handle_response(id, object, line),
                None => {
                    let text = format!(
                        "a line on stdout has neither an unsigned integer id nor a method: {}",
                        show_bytes(line)
                    );
                    self.violation(ViolationKind::NoUsableId, text, line)
                }
            },
        }
    }

    fn handle_method(&mut self, method: &str, object: &Map<String, Value>, line: &[u8]) {
        if object.contains_key("id") {
            // A request from the Tick: not allowed (3.2), not a listed violation.
            self.ignored_requests += 1;
        } else if method == "tick/update" {
            self.handle_update(object.get("params"), line);
        } else {
            self.ignored_notifications += 1;
        }
    }

    fn handle_update(&mut self, params: Option<&Value>, line: &[u8]) {
        let state = match params {
            None => Err("it has no params".to_string()),
            Some(params) => TickState::from_value(params, self.limits.max_update, false)
                .map_err(|error| error.to_string()),
        };
        let state = match state {
            Ok(state) => state,
            Err(why) => {
                let text = format!("the Tick sent an invalid tick/update: {why}");
                return self.violation(ViolationKind::InvalidUpdate, text, line);
            }
        };
        if let Some(last) = self.last_update_seq.filter(|last| state.seq <= *last) {
            let text = format!(
                "the Tick sent a tick/update with seq {}, not above the previous update's seq {last}",
                state.seq
            );
            return self.violation(ViolationKind::InvalidUpdate, text, line);
        }
        self.last_update_seq = Some(state.seq);
        self.updates_received += 1;
        self.adopt_state(state);
        self.actions.push_back(Action::Updated);
    }

    fn adopt_state(&mut self, state: TickState) {
        if self
            .state
            .as_ref()
            .is_none_or(|current| state.seq >= current.seq)
        {
            self.state = Some(state);
        }
    }

    fn handle_response(&mut self, id: u64, object: &Map<String, Value>, line: &[u8]) {
        let Some(written) = self.in_flight.remove(&id) else {
            self.discarded_responses += 1;
            return;
        };
        let answer = parse_answer(object);
        match written.purpose {
            Purpose::InitDescribe => self.answer_init_describe(answer, line),
            Purpose::InitRead => self.answer_init_read(answer, written.read_floor, line),
            Purpose::Describe { client } => self.answer_describe(client, answer),
            Purpose::Read { client } => self.answer_read(client, answer, written.read_floor),
            Purpose::Call { client } => self.answer_call(client, answer),
        }
    }

    // ----- answers -----

    fn answer_init_describe(&mut self, answer: Answer, line: &[u8]) {
        let failure = match self.accept_descriptor(answer) {
            Ok(descriptor) => {
                self.descriptor = Some(descriptor);
                self.enqueue(Purpose::InitRead);
                return;
            }
            Err(failure) => failure,
        };
        self.end(EndKind::InitFailed, failure, Some(lossy(line)));
    }

    fn answer_init_read(&mut self, answer: Answer, floor: u64, line: &[u8]) {
        match self.accept_read(answer, floor) {
            Ok(_) => {
                self.phase = Phase::Running;
                self.initialized = true;
                self.actions.push_back(Action::Initialized);
                self.waiting_for_init_bytes = 0;
                for (client, request) in std::mem::take(&mut self.waiting_for_init) {
                    let bytes = request_bytes(&request);
                    self.submit(client, request, bytes);
                }
            }
            Err(failure) => self.end(EndKind::InitFailed, failure, Some(lossy(line))),
        }
    }

    fn answer_describe(&mut self, client: Option<ClientToken>, answer: Answer) {
        let reply = match self.accept_descriptor(answer) {
            Ok(descriptor) => {
                let raw = descriptor.raw.clone();
                self.refresh_catalog(descriptor);
                Reply::Describe(raw)
            }
            Err(failure) => Reply::Failed(failure),
        };
        if let Some(client) = client {
            self.reply(client, reply);
        }
    }

    fn refresh_catalog(&mut self, descriptor: Descriptor) {
        let changed = self
            .descriptor
            .as_ref()
            .is_none_or(|held| held.revision != descriptor.revision);
        self.descriptor = Some(descriptor);
        if changed {
            self.actions.push_back(Action::CatalogChanged);
        }
    }

    fn answer_read(&mut self, client: ClientToken, answer: Answer, floor: u64) {
        let reply = match self.accept_read(answer, floor) {
            Ok(state) => Reply::Read(state),
            Err(failure) => Reply::Failed(failure),
        };
        self.reply(client, reply);
    }

    fn answer_call(&mut self, client: ClientToken, answer: Answer) {
        let outcome = match answer {
            Answer::Result(result) => {
                let size = encoded_size(&result);
                if size > self.limits.max_call_result {
                    CallOutcome::Unknown {
                        reason: format!(
                            "the Tick's result is {size} bytes re-encoded, over the limit of {} \
                             bytes; the call may have run",
                            self.limits.max_call_result
                        ),
                    }
                } else {
                    CallOutcome::Result { result }
                }
            }
            Answer::Error(error) if NOT_EXECUTED.contains(&error.code) => {
                if error.code == STALE_REVISION {
                    self.refresh_catalog_in_background();
                }
                CallOutcome::NotExecuted { error }
            }
            Answer::Error(error) => CallOutcome::Executed { error },
            Answer::Invalid(why) => CallOutcome::Unknown {
                reason: format!(
                    "the Tick's answer to tick/call is invalid ({why}); the call may have run"
                ),
            },
        };
        self.reply(client, Reply::Call(outcome));
    }

    /// Queues a `tick/describe` of the host's own, unless one is pending.
    fn refresh_catalog_in_background(&mut self) {
        let background = Purpose::Describe { client: None };
        let pending = self
            .queue
            .iter()
            .any(|outgoing| outgoing.purpose == background)
            || self
                .in_flight
                .values()
                .any(|written| written.purpose == background);
        if !pending {
            self.enqueue(background);
        }
    }

    fn accept_descriptor(&self, answer: Answer) -> Result<Descriptor, String> {
        match answer {
            Answer::Result(result) => {
                Descriptor::validate(&result, &self.limits).map_err(|error| error.to_string())
            }
            Answer::Error(error) => Err(answered_with_error("tick/describe", &error)),
            Answer::Invalid(why) => Err(format!(
                "the Tick's answer to tick/describe is invalid: {why}"
            )),
        }
    }

    /// Checks a read answer; on success records it as the previous read
    /// result and as the state when it is the newest.
    fn accept_read(&mut self, answer: Answer, floor: u64) -> Result<TickState, String> {
        let state = match answer {
            Answer::Result(result) => TickState::from_value(&result, self.limits.max_read, true)
                .map_err(|error| format!("the Tick's tick/read result is invalid: {error}"))?,
            Answer::Error(error) => return Err(answered_with_error("tick/read", &error)),
            Answer::Invalid(why) => {
                return Err(format!("the Tick's answer to tick/read is invalid: {why}"))
            }
        };
        if state.seq < floor {
            return Err(format!(
                "the Tick's tick/read result has seq {}, below the read floor {floor} (the \
                 highest seq of earlier reads and updates)",
                state.seq
            ));
        }
        self.last_read_seq = Some(self.last_read_seq.unwrap_or(0).max(state.seq));
        self.adopt_state(state.clone());
        Ok(state)
    }

    // ----- timeouts and the end -----

    fn expire(&mut self, written: Written) {
        let seconds = self.timeout_of(&written.purpose).as_secs_f64();
        let late = format!(
            "the Tick did not answer {} within {seconds} s",
            written.method
        );
        match written.purpose {
            Purpose::InitDescribe | Purpose::InitRead => self.end(EndKind::InitFailed, late, None),
            Purpose::Describe { client: None } => {}
            Purpose::Describe {
                client: Some(client),
            }
            | Purpose::Read { client } => self.reply(client, Reply::Failed(late)),
            Purpose::Call { client } => {
                let reason = format!("{late}; the call may have run, and it is not resent");
                self.reply(client, Reply::Call(CallOutcome::Unknown { reason }));
            }
        }
    }

    /// Ends the session once: answers everything pending, then emits `End`.
    fn end(&mut self, kind: EndKind, message: String, offending: Option<String>) {
        if self.phase == Phase::Ended {
            return;
        }
        self.phase = Phase::Ended;
        let reason = EndReason {
            kind,
            message,
            offending,
        };
        self.end_reason = Some(reason.clone());
        let unanswered = format!(
            "the session ended before the Tick answered: {}",
            reason.message
        );
        for written in std::mem::take(&mut self.in_flight).into_values() {
            self.abandon(
                written.purpose,
                || CallOutcome::Unknown {
                    reason: format!("{unanswered}; the call may have run, and it is not resent"),
                },
                &unanswered,
            );
        }
        let unsent = format!("the session is not running: {}", reason.message);
        for outgoing in std::mem::take(&mut self.queue) {
            self.abandon(
                outgoing.purpose,
                || CallOutcome::NotExecuted {
                    error: rpc_error(INVALID_REQUEST, unsent.clone()),
                },
                &unsent,
            );
        }
        self.waiting_for_init_bytes = 0;
        for (client, request) in std::mem::take(&mut self.waiting_for_init) {
            self.refuse_not_running(client, request);
        }
        self.reader = LineSplitter::new(0);
        self.actions.push_back(Action::End(reason));
    }

    fn abandon(&mut self, purpose: Purpose, outcome: impl FnOnce() -> CallOutcome, failure: &str) {
        match purpose {
            Purpose::Call { client } => self.reply(client, Reply::Call(outcome())),
            Purpose::Describe {
                client: Some(client),
            }
            | Purpose::Read { client } => self.reply(client, Reply::Failed(failure.to_string())),
            Purpose::InitDescribe | Purpose::InitRead | Purpose::Describe { client: None } => {}
        }
    }
}

fn rpc_error(code: i64, message: String) -> RpcError {
    RpcError {
        code,
        message,
        data: None,
    }
}

fn answered_with_error(method: &str, error: &RpcError) -> String {
    format!(
        "the Tick answered {method} with error {}: {}",
        error.code, error.message
    )
}

/// Sorts a response: exactly one of `result` and `error`, and an error
/// object with an integer `code`.
fn parse_answer(object: &Map<String, Value>) -> Answer {
    match (object.get("result"), object.get("error")) {
        (Some(_), Some(_)) => Answer::Invalid("it has both result and error".to_string()),
        (None, None) => Answer::Invalid("it has neither result nor error".to_string()),
        (Some(result), None) => Answer::Result(result.clone()),
        (None, Some(error)) => parse_error(error),
    }
}

fn parse_error(error: &Value) -> Answer {
    let Some(code) = error.get("code").and_then(Value::as_i64) else {
        return Answer::Invalid("its error has no integer code".to_string());
    };
    let message = match error.get("message") {
        Some(Value::String(message)) => message.clone(),
        _ => return Answer::Invalid("its error has no message string".to_string()),
    };
    Answer::Error(RpcError {
        code,
        message,
        data: error.get("data").cloned(),
    })
}

/// The first 256 bytes of `line` as lossy UTF-8.
fn lossy(line: &[u8]) -> String {
    String::from_utf8_lossy(&prefix_of(line)).into_owned()
}

/// The first 256 bytes of `line`, quoted and escaped, for messages.
fn show_bytes(line: &[u8]) -> String {
    let shown = format!("{:?}", String::from_utf8_lossy(&prefix_of(line)));
    if line.len() > super::framing::PREFIX_LEN {
        format!("{shown}… ({} bytes)", line.len())
    } else {
        shown
    }
}

/// What a client's request weighs while it waits to be written: a call
/// its arguments, re-encoded, and its names; a describe or read nothing.
fn request_bytes(request: &SessionRequest) -> usize {
    match request {
        SessionRequest::Call(call) => {
            encoded_size(&call.args) + call.tool.len() + call.revision.len()
        }
        SessionRequest::Describe | SessionRequest::Read => 0,
    }
}
