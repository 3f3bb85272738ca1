//! The Tick side of a protocol session, with no I/O of its own: lines in
//! ([`Session::handle`]), lines out through a [`LineSink`]. The revision
//! check, argument validation, sequence numbers and the atomic line writes
//! live here; [`crate::serve`] only moves bytes and starts threads.

use crate::catalog::{digest, Catalog};
use crate::{Tick, ToolError};
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};
/// The protocol's error codes, from the one place the host names them too.
use tickloop_proto::core::codes as code;

/// Where protocol lines go: one call writes one whole line. The session
/// serialises calls, so an implementation need not lock.
pub trait LineSink: Send {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()>;
}

impl<W: Write + Send> LineSink for W {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        self.write_all(line)?;
        self.flush()
    }
}

/// Why an update could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    #[error("a tick/update carries the complete state; its data cannot be null")]
    NullData,
    #[error("cannot write the update to the host: {0}")]
    Io(#[from] std::io::Error),
}

/// What the reader should do with one line from the host.
#[derive(Debug)]
pub enum Action {
    /// Nothing: the line was not a request with a usable id (never
    /// answered, section 3.2), or it was answered already.
    Done,
    /// A valid call to run (on a thread of its own): pass it to
    /// [`Session::run_call`].
    Call(PendingCall),
}

/// A `tick/call` that passed the revision and argument checks.
#[derive(Debug)]
pub struct PendingCall {
    id: u64,
    tool: String,
    args: Value,
}

impl PendingCall {
    pub fn tool(&self) -> &str {
        &self.tool
    }
}

struct Output {
    sink: Box<dyn LineSink>,
    /// The `seq` of the last update written.
    seq: u64,
    /// Set when a write failed: the host is gone.
    broken: bool,
}

struct CatalogState {
    generation: u64,
    current: Option<Arc<Catalog>>,
}

struct Shared {
    out: Mutex<Output>,
    catalog: Mutex<CatalogState>,
}

/// A clonable handle that sends `tick/update`s, from any thread.
#[derive(Clone)]
pub struct Updater {
    shared: Arc<Shared>,
}

impl Updater {
    /// Sends the complete current state `data` (never null) with the next
    /// `seq`, which it returns. Call it for business changes only, never
    /// for a repaint, a resize or a cursor move (section 8.3).
    pub fn update(&self, data: Value) -> Result<u64, UpdateError> {
        if data.is_null() {
            return Err(UpdateError::NullData);
        }
        let mut out = lock(&self.shared.out);
        let seq = out.seq + 1;
        let line = frame(
            &json!({"jsonrpc": "2.0", "method": "tick/update", "params": {"seq": seq, "data": data}}),
        );
        out.sink
            .write_line(&line)
            .inspect_err(|_| out.broken = true)?;
        out.seq = seq;
        Ok(seq)
    }

    /// The `seq` of the last update sent (0 before any).
    pub fn seq(&self) -> u64 {
        lock(&self.shared.out).seq
    }
}

/// One session: the Tick, and the state the protocol asks the Tick side to
/// keep (last seq, catalog revision).
pub struct Session {
    tick: Arc<dyn Tick>,
    shared: Arc<Shared>,
}

impl Session {
    /// A session of `tick` writing to `sink`.
    pub fn new(tick: Arc<dyn Tick>, sink: Box<dyn LineSink>) -> Session {
        Session {
            tick,
            shared: Arc::new(Shared {
                out: Mutex::new(Output {
                    sink,
                    seq: 0,
                    broken: false,
                }),
                catalog: Mutex::new(CatalogState {
                    generation: 0,
                    current: None,
                }),
            }),
        }
    }

    pub fn updater(&self) -> Updater {
        Updater {
            shared: self.shared.clone(),
        }
    }

    /// Whether a write to the host failed (the host is gone).
    pub fn broken(&self) -> bool {
        lock(&self.shared.out).broken
    }

    /// The catalog as the Tick describes it now; a new revision when its
    /// tools differ from the last one seen.
    fn catalog(&self) -> Arc<Catalog> {
        let describe = self.tick.describe();
        let tools = describe.tools_json().to_string();
        let whole = describe.to_json("").to_string();
        let tools_digest = digest(tools.as_bytes());
        let mut state = lock(&self.shared.catalog);
        if let Some(current) = &state.current {
            if current.digest == tools_digest {
                // Same tools: same revision; the rest may have changed.
                if current.descriptor.as_ref().ok().map(strip_revision) == Some(whole.clone()) {
                    return current.clone();
                }
                let generation = state.generation;
                let fresh = Arc::new(Catalog::compile(&describe, tools_digest, generation));
                state.current = Some(fresh.clone());
                return fresh;
            }
        }
        state.generation += 1;
        let fresh = Arc::new(Catalog::compile(&describe, tools_digest, state.generation));
        state.current = Some(fresh.clone());
        fresh
    }

    /// The current revision (what a call must carry).
    pub fn revision(&self) -> String {
        self.catalog().revision.clone()
    }

    /// Handles one line from the host: answers describe, read, unknown
    /// methods and refused calls at once; hands a valid call back to be run.
    pub fn handle(&self, line: &[u8]) -> Action {
        let Ok(request) = serde_json::from_slice::<Value>(line) else {
            return Action::Done;
        };
        let Some(id) = request.get("id").and_then(Value::as_u64) else {
            return Action::Done;
        };
        let empty = json!({});
        let params = request.get("params").unwrap_or(&empty);
        match request.get("method").and_then(Value::as_str) {
            Some("tick/describe") => {
                let catalog = self.catalog();
                match &catalog.descriptor {
                    Ok(d) => self.answer(id, Ok(d.clone())),
                    Err(problem) => self.answer(
                        id,
                        Err(ToolError::new(
                            code::INTERNAL,
                            format!("this Tick's catalog is invalid: {problem}"),
                        )),
                    ),
                }
            }
            Some("tick/read") => {
                // The seq first: every update written so far is at most it,
                // so the read is never below the last update (6.3).
                let seq = self.updater().seq();
                let data = self.tick.read().unwrap_or(Value::Null);
                self.answer(id, Ok(json!({"seq": seq, "data": data})));
            }
            Some("tick/call") => match self.check_call(params) {
                Ok((tool, args)) => return Action::Call(PendingCall { id, tool, args }),
                Err(e) => self.answer(id, Err(e)),
            },
            Some(other) => self.answer(
                id,
                Err(ToolError::new(
                    code::METHOD_NOT_FOUND,
                    format!("unknown method {other}"),
                )),
            ),
            None => self.answer(
                id,
                Err(ToolError::new(
                    code::METHOD_NOT_FOUND,
                    "the request has no method",
                )),
            ),
        }
        Action::Done
    }

    /// The revision, tool and args checks of section 7.2, in that order.
    fn check_call(&self, params: &Value) -> Result<(String, Value), ToolError> {
        let catalog = self.catalog();
        let revision = params.get("revision").and_then(Value::as_str);
        if revision != Some(catalog.revision.as_str()) {
            return Err(ToolError::new(
                code::STALE_REVISION,
                format!(
                    "the Tick's tool catalog changed (revision {:?}, the call carried {}); describe the Tick and prepare the call again",
                    catalog.revision,
                    revision.map(|r| format!("{r:?}")).unwrap_or_else(|| "none".into())
                ),
            ));
        }
        let Some(tool) = params.get("tool").and_then(Value::as_str) else {
            return Err(ToolError::invalid_args("the call names no tool"));
        };
        let Some((_, validator)) = catalog.tools.iter().find(|(t, _)| t.name == tool) else {
            let known: Vec<&str> = catalog.tools.iter().map(|(t, _)| t.name.as_str()).collect();
            return Err(ToolError::invalid_args(format!(
                "unknown tool {tool:?}; the tools are {}",
                known.join(", ")
            )));
        };
        let args = params.get("args").cloned().unwrap_or_else(|| json!({}));
        if !args.is_object() {
            return Err(ToolError::invalid_args("args must be a JSON object"));
        }
        let Some(validator) = validator else {
            return Err(ToolError::invalid_args(format!(
                "tool {tool:?} has an invalid input_schema"
            )));
        };
        let errors: Vec<String> = validator
            .iter_errors(&args)
            .take(3)
            .map(|e| {
                let at = e.instance_path().to_string();
                if at.is_empty() {
                    e.to_string()
                } else {
                    format!("{at}: {e}")
                }
            })
            .collect();
        if !errors.is_empty() {
            return Err(ToolError::invalid_args(format!(
                "args do not match {tool}'s input_schema: {}",
                errors.join("; ")
            )));
        }
        Ok((tool.to_string(), args))
    }

    /// Runs a call checked by [`Session::handle`] and writes its answer. A
    /// panic in the tool is answered as an internal error (executed: it may
    /// have done part of its work).
    pub fn run_call(&self, call: PendingCall) {
        let updater = self.updater();
        let tick = self.tick.clone();
        let PendingCall { id, tool, args } = call;
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tick.call(&tool, args, &updater)
        }))
        .unwrap_or_else(|_| {
            Err(ToolError::new(
                code::INTERNAL,
                format!("tool {tool} panicked; it may have done part of its work"),
            ))
        });
        self.answer(id, outcome);
    }

    fn answer(&self, id: u64, outcome: Result<Value, ToolError>) {
        let message = match outcome {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => {
                let mut error = json!({"code": e.code, "message": e.message});
                if let Some(data) = e.data {
                    error["data"] = data;
                }
                json!({"jsonrpc": "2.0", "id": id, "error": error})
            }
        };
        let line = frame(&message);
        let mut out = lock(&self.shared.out);
        if out.sink.write_line(&line).is_err() {
            out.broken = true;
        }
    }
}

/// The descriptor's JSON with an empty revision, to compare with a fresh one.
fn strip_revision(descriptor: &Value) -> String {
    let mut d = descriptor.clone();
    d["revision"] = json!("");
    d.to_string()
}

/// One message as one line: compact JSON (which never holds a raw newline)
/// and `\n`.
fn frame(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_default();
    line.push(b'\n');
    line
}

/// A poisoned lock still holds consistent data here (every write is whole).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Describe, Tool};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A sink the test reads back.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl LineSink for Lines {
        fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
            self.0.lock().unwrap().extend_from_slice(line);
            Ok(())
        }
    }

    impl Lines {
        fn take(&self) -> Vec<Value> {
            let bytes = std::mem::take(&mut *self.0.lock().unwrap());
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect()
        }
    }

    /// A counter whose catalog grows a tool when `extra` is set.
    #[derive(Default)]
    struct Counter {
        value: Mutex<i64>,
        executed: AtomicUsize,
        extra: AtomicBool,
    }

    impl Tick for Counter {
        fn describe(&self) -> Describe {
            let d = Describe::new("test.counter", "Counter", "A number.")
                .tool(Tool::mutating("add", "Add n.").input(json!({
                    "type": "object",
                    "properties": {"n": {"type": "integer"}},
                    "required": ["n"], "additionalProperties": false
                })))
                .tool(Tool::query("boom", "Panics."));
            if self.extra.load(Ordering::SeqCst) {
                d.tool(Tool::mutating("reset", "Back to 0."))
            } else {
                d
            }
        }
        fn read(&self) -> Option<Value> {
            Some(json!({"value": *self.value.lock().unwrap()}))
        }
        fn call(&self, tool: &str, args: Value, updates: &Updater) -> Result<Value, ToolError> {
            self.executed.fetch_add(1, Ordering::SeqCst);
            match tool {
                "add" => {
                    let mut v = self.value.lock().unwrap();
                    *v += args["n"].as_i64().unwrap();
                    updates
                        .update(json!({"value": *v}))
                        .map_err(ToolError::failed)?;
                    Ok(json!({"value": *v}))
                }
                "boom" => panic!("boom"),
                _ => Err(ToolError::unknown_tool(tool)),
            }
        }
    }

    fn session() -> (Session, Lines, Arc<Counter>) {
        let lines = Lines::default();
        let tick = Arc::new(Counter::default());
        (
            Session::new(tick.clone(), Box::new(lines.clone())),
            lines,
            tick,
        )
    }

    fn request(s: &Session, id: u64, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Action::Call(call) = s.handle(line.to_string().as_bytes()) {
            s.run_call(call);
        }
    }

    fn call(s: &Session, id: u64, tool: &str, args: Value, revision: &str) {
        request(
            s,
            id,
            "tick/call",
            json!({"tool": tool, "args": args, "revision": revision}),
        );
    }

    #[test]
    fn describe_and_read_answer_with_protocol_revision_and_seq() {
        let (s, lines, _) = session();
        request(&s, 1, "tick/describe", json!({}));
        request(&s, 2, "tick/read", json!({}));
        let out = lines.take();
        assert_eq!(out[0]["id"], 1);
        assert_eq!(out[0]["result"]["protocol"], 3);
        assert_eq!(out[0]["result"]["revision"], s.revision());
        assert_eq!(out[0]["result"]["tools"][0]["mutates"], true);
        assert_eq!(out[1]["result"], json!({"seq": 0, "data": {"value": 0}}));
    }

    #[test]
    fn a_call_updates_then_answers_and_reads_never_fall_below_updates() {
        let (s, lines, _) = session();
        let rev = s.revision();
        call(&s, 1, "add", json!({"n": 2}), &rev);
        call(&s, 2, "add", json!({"n": 3}), &rev);
        request(&s, 3, "tick/read", json!({}));
        let out = lines.take();
        assert_eq!(out[0]["method"], "tick/update");
        assert_eq!(out[0]["params"], json!({"seq": 1, "data": {"value": 2}}));
        assert_eq!(
            out[1],
            json!({"jsonrpc": "2.0", "id": 1, "result": {"value": 2}})
        );
        assert_eq!(out[2]["params"]["seq"], 2);
        assert_eq!(out[4]["result"]["seq"], 2);
        assert_eq!(out[4]["result"]["data"]["value"], 5);
    }

    #[test]
    fn stale_revision_unknown_tool_and_bad_args_are_refused_unexecuted() {
        let (s, lines, tick) = session();
        let rev = s.revision();
        call(&s, 1, "add", json!({"n": 1}), "not-the-revision");
        call(&s, 2, "nope", json!({}), &rev);
        call(&s, 3, "add", json!({"n": "one"}), &rev);
        call(&s, 4, "add", json!({}), &rev);
        call(&s, 5, "add", json!({"n": 1, "x": 0}), &rev);
        request(
            &s,
            6,
            "tick/call",
            json!({"tool": "add", "args": [], "revision": rev}),
        );
        let out = lines.take();
        assert_eq!(out[0]["error"]["code"], -32004, "{out:?}");
        for answer in &out[1..] {
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
        }
        assert!(out[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"));
        assert!(out[2]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("input_schema"));
        assert_eq!(tick.executed.load(Ordering::SeqCst), 0);
        assert_eq!(*tick.value.lock().unwrap(), 0);
    }

    #[test]
    fn a_changed_catalog_gets_a_new_revision_and_the_old_one_is_refused() {
        let (s, lines, tick) = session();
        let old = s.revision();
        assert_eq!(s.revision(), old, "the same catalog keeps its revision");
        tick.extra.store(true, Ordering::SeqCst);
        let new = s.revision();
        assert_ne!(new, old);
        call(&s, 1, "add", json!({"n": 1}), &old);
        call(&s, 2, "add", json!({"n": 1}), &new);
        let out = lines.take();
        assert_eq!(out[0]["error"]["code"], -32004);
        assert_eq!(out[2]["result"]["value"], 1, "{out:?}");
        // Back to the first tools: still a revision never used before.
        tick.extra.store(false, Ordering::SeqCst);
        let third = s.revision();
        assert!(third != old && third != new, "{old} {new} {third}");
    }

    #[test]
    fn lines_without_a_usable_id_get_no_answer_and_unknown_methods_do() {
        let (s, lines, _) = session();
        assert!(matches!(s.handle(b"not json\n"), Action::Done));
        assert!(matches!(
            s.handle(br#"{"jsonrpc":"2.0","method":"tick/read"}"#),
            Action::Done
        ));
        assert!(matches!(
            s.handle(br#"{"jsonrpc":"2.0","id":"x","method":"tick/read"}"#),
            Action::Done
        ));
        assert!(lines.take().is_empty());
        request(&s, 9, "tick/other", json!({}));
        assert_eq!(lines.take()[0]["error"]["code"], -32601);
    }

    #[test]
    fn a_panicking_tool_is_answered_as_executed_internal_error() {
        let (s, lines, _) = session();
        let rev = s.revision();
        call(&s, 1, "boom", json!({}), &rev);
        let out = lines.take();
        assert_eq!(out[0]["id"], 1);
        assert_eq!(out[0]["error"]["code"], code::INTERNAL);
    }

    #[test]
    fn null_updates_are_refused() {
        let (s, lines, _) = session();
        assert!(matches!(
            s.updater().update(Value::Null),
            Err(UpdateError::NullData)
        ));
        assert!(lines.take().is_empty());
        assert_eq!(s.updater().seq(), 0);
    }

    #[test]
    fn updates_from_many_threads_are_whole_lines_in_seq_order() {
        let (s, lines, _) = session();
        let big = "x".repeat(10_000);
        std::thread::scope(|scope| {
            for t in 0..8 {
                let updater = s.updater();
                let big = &big;
                scope.spawn(move || {
                    for i in 0..50 {
                        updater.update(json!({"t": t, "i": i, "pad": big})).unwrap();
                    }
                });
            }
        });
        let out = lines.take();
        assert_eq!(out.len(), 400);
        for (n, update) in out.iter().enumerate() {
            assert_eq!(update["params"]["seq"], n as u64 + 1);
        }
    }

    #[test]
    fn an_invalid_catalog_fails_describe_with_the_reason() {
        struct Bad;
        impl Tick for Bad {
            fn describe(&self) -> Describe {
                Describe::new("t.bad", "Bad", "d")
                    .tool(Tool::mutating("x", "x"))
                    .recover_with("x")
            }
            fn read(&self) -> Option<Value> {
                None
            }
            fn call(&self, _: &str, _: Value, _: &Updater) -> Result<Value, ToolError> {
                Ok(Value::Null)
            }
        }
        let lines = Lines::default();
        let s = Session::new(Arc::new(Bad), Box::new(lines.clone()));
        request(&s, 1, "tick/describe", json!({}));
        request(&s, 2, "tick/read", json!({}));
        let out = lines.take();
        assert_eq!(out[0]["error"]["code"], code::INTERNAL);
        assert!(out[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("recover_with"));
        assert_eq!(out[1]["result"], json!({"seq": 0, "data": null}));
    }
}
