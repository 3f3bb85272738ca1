//! The Tick side of a protocol session, with no I/O of its own: lines in
//! ([`Session::handle`]), lines out through a [`LineSink`]. The revision
//! check, argument validation, sequence numbers and the atomic line writes
//! live here; [`crate::serve`] only moves bytes and starts threads.

use crate::catalog::{digest, Catalog};
use crate::{Tick, ToolError};
use serde_json::{json, Value};
use std::io::Write;
use std::sync::{Arc, Mutex, MutexGuard};

/// JSON-RPC and Tick protocol error codes the session answers with.
pub mod code {
    /// Method not found (not executed).
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Unknown tool or invalid args (not executed).
    pub const INVALID_PARAMS: i64 = -32602;
    /// The call's revision is not the current catalog (not executed).
    pub const STALE_REVISION: i64 = -32004;
    /// The tool failed after starting (executed).
    pub const TOOL_FAILED: i64 = -32000;
    /// Internal error (executed).
    pub const INTERNAL: i64 = -32603;
}

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
        let line = frame(&json!({"jsonrpc": "2.0", "method": "tick/update", "params": {"seq": seq, "data": data}}));
        out.sink.write_line(&line).inspect_err(|_| out.broken = true)?;
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
        let fresh = Arc::new(Catalog::compile(
            &describe,
            tools_digest,
            state.generation,
        ));
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
