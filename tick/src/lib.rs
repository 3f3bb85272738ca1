//! `tickloop-tick`: write a Tick (Tick protocol 3) in Rust.
//!
//! A Tick is a terminal program that a person uses on screen and an AI
//! agent uses through the protocol: requests on stdin, answers and
//! `tick/update` notifications on stdout, the interface on its terminal.
//! This crate serves the protocol from a small trait, [`Tick`], and does
//! for you what the protocol's checklist (Appendix C) asks:
//!
//! * each message is written as one whole line under a lock, so threads
//!   never interleave;
//! * at start, fd 1 moves away: protocol lines go to a private duplicate
//!   and fd 1 becomes a pipe whose bytes land on the terminal with a
//!   warning, so a stray `println!` (yours or a library's) never corrupts
//!   the stream;
//! * the catalog's revision changes whenever the tools change, and a call
//!   carrying another revision is refused (-32004) without reaching you;
//! * `args` are validated against each tool's `input_schema` (-32602), and
//!   unknown tools refused, before [`Tick::call`] runs;
//! * `seq` is kept for you: [`Updater::update`] sends the next one, reads
//!   carry the last one sent;
//! * describe and read are answered on the reader thread, calls each on a
//!   thread of their own, so reads stay prompt while a tool works; on stdin
//!   EOF the running calls finish and [`serve`] returns.
//!
//! `mutates` has no default: [`Tool::new`] takes it, or use
//! [`Tool::mutating`] and [`Tool::query`].
//!
//! With the `tui` feature (on by default), [`tui::Tui`] is a ratatui
//! terminal on `/dev/tty`, with crossterm reading keys from it (stdin is the
//! protocol).
//!
//! ```no_run
//! use serde_json::{json, Value};
//! use std::sync::Mutex;
//! use tickloop_tick::{Describe, Tick, Tool, ToolError, Updater};
//!
//! struct Note(Mutex<String>);
//!
//! impl Tick for Note {
//!     fn describe(&self) -> Describe {
//!         Describe::new("example.note", "Note", "One line of text.")
//!             .tool(Tool::mutating("set_note", "Replace the note.").input(json!({
//!                 "type": "object",
//!                 "properties": {"text": {"type": "string"}},
//!                 "required": ["text"], "additionalProperties": false
//!             })))
//!     }
//!     fn read(&self) -> Option<Value> {
//!         Some(json!({"note": *self.0.lock().unwrap()}))
//!     }
//!     fn call(&self, tool: &str, args: Value, updates: &Updater) -> Result<Value, ToolError> {
//!         match tool {
//!             "set_note" => {
//!                 let mut note = self.0.lock().unwrap();
//!                 *note = args["text"].as_str().unwrap_or_default().to_string();
//!                 updates.update(json!({"note": *note})).map_err(ToolError::failed)?;
//!                 Ok(json!({"saved": true}))
//!             }
//!             _ => Err(ToolError::unknown_tool(tool)),
//!         }
//!     }
//! }
//!
//! fn main() -> Result<(), tickloop_tick::ServeError> {
//!     tickloop_tick::serve(Note(Mutex::new(String::new())))
//! }
//! ```

mod catalog;
pub mod serve;
pub mod session;
#[cfg(feature = "tui")]
pub mod tui;

pub use catalog::{Describe, Newest, Tool};
pub use serde_json;
pub use serve::{serve, ServeError, Server};
pub use session::{UpdateError, Updater};

use serde_json::Value;

/// The protocol version this crate implements.
pub const PROTOCOL: u64 = 3;

/// A Tick: what it is, what its state is now, what its tools do. Called
/// from several threads at once (describe and read while calls run).
pub trait Tick: Send + Sync + 'static {
    /// The catalog. Called for every `tick/describe` and every call, so it
    /// should be cheap; when the tools it returns change, so does the
    /// revision.
    fn describe(&self) -> Describe;

    /// The complete current business state (`None`: no content yet). No
    /// side effects; answer within milliseconds.
    fn read(&self) -> Option<Value>;

    /// Runs `tool` with `args`, which already match its `input_schema`.
    /// Send a [`Updater::update`] for any change it made to the state.
    fn call(&self, tool: &str, args: Value, updates: &Updater) -> Result<Value, ToolError>;
}

/// An error answer to a call. [`ToolError::failed`] (-32000) says the tool
/// may have had an effect; [`ToolError::invalid_args`] (-32602) that it had
/// none.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (code {code})")]
pub struct ToolError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl ToolError {
    pub fn new(code: i64, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The tool failed after starting: it may have done part of its work.
    pub fn failed(message: impl std::fmt::Display) -> ToolError {
        ToolError::new(
            tickloop_proto::core::codes::TOOL_FAILED,
            message.to_string(),
        )
    }

    /// The args were refused before anything was done (checks beyond the
    /// schema, like "no item 7").
    pub fn invalid_args(message: impl Into<String>) -> ToolError {
        ToolError::new(tickloop_proto::core::codes::INVALID_PARAMS, message)
    }

    /// A tool this Tick has no code for (not executed).
    pub fn unknown_tool(tool: &str) -> ToolError {
        ToolError::invalid_args(format!("unknown tool {tool:?}"))
    }

    /// Structured details for the caller.
    pub fn with_data(mut self, data: Value) -> ToolError {
        self.data = Some(data);
        self
    }
}
