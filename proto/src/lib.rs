//! tickloop-proto: Tickloop's protocols as plain types and pure logic, with
//! no I/O (its dependencies are serde, serde_json, jsonschema, schemars,
//! sha2, time, thiserror and unicode-general-category; no tokio).
//!
//! - [`core`]: the Tick protocol 3 host session as a state machine — bytes,
//!   client requests and the time go in; lines to write, replies and the end
//!   of the session come out. The launcher drives it; tests drive it
//!   directly. Its contract is `src/core/API.md`, and `README.md` maps every
//!   host rule of the spec to its test.
//! - [`wire`]: the serde types of the client ↔ tickhost and tickhost ↔
//!   launcher sockets, and the wire version derived from them.
//! - [`attach`]: the launcher ↔ view attach protocol.
//! - [`wire_schema`]: the JSON Schema of both, whose digest names the wire
//!   version.
//! - [`escape`]: text from an agent or a program as a person is shown it,
//!   every invisible or control character escaped (`\u{202E}`).
//! - [`keys`]: keys by name (tmux's names), for `tickloop keys`.
//! - [`shell`]: a shell's OSC 133/7 marks read from its output, its
//!   commands kept as state, and waits on its output, all without I/O.

pub mod attach;
pub mod core;
pub mod escape;
pub mod keys;
pub mod shell;
pub mod wire;
pub mod wire_schema;
