//! Wire types between Tickloop's processes: plain serde types, no transport.
//!
//! Every socket in Tickloop carries one JSON value per line (`\n`-terminated),
//! like the Tick protocol itself. Two conversations use these types:
//!
//! * **client ↔ tickhost** on `RUNTIME/tickhost.sock` (the CLI, the MCP bridge,
//!   the Loop, the Monitor, the Herdr adapter): the client sends [`Hello`], the
//!   daemon answers [`HelloReply`]
//!   (refusing a different version), then the client sends [`Envelope`]s
//!   carrying a [`ClientRequest`] and reads [`ServerMessage`]s back. Requests on
//!   one connection are answered in order; `watch` streams [`ServerMessage::Event`]s
//!   until the client hangs up.
//! * **tickhost ↔ launcher** on `RUNTIME/l/<kind>-<name>.sock`: the same
//!   [`Hello`] / [`HelloReply`] exchange (role `host`), then [`Envelope`]s
//!   carrying a [`LauncherRequest`], answered by id (calls run concurrently,
//!   so replies may come out of order) with [`LauncherMessage::Reply`], and
//!   unsolicited [`LauncherMessage::Status`] (state changes, and the end of
//!   the session as a status with `ended`) and [`LauncherMessage::Catalog`].
//!
//! Views attach to the same launcher socket with role `view`; their messages
//! are the attach protocol ([`crate::attach`]), not these.
//!
//! One file per conversation, as a protocol crate of plain types reads:
//!
//! | module | what it holds |
//! | --- | --- |
//! | `hello` | every connection's first line, who connects, the request envelope |
//! | `client` | client ↔ tickhost: requests, answers, errors, `list`/`open`/`watch` answers |
//! | `launcher` | tickhost ↔ launcher: requests, status, catalog, start and record |
//! | `call` | a tool call and its outcome, the same on every hop |
//! | `program` | what an instance runs (`open`'s request, shared with the launch) |
//! | `consent` | policies, owners, held actions and the decisions on them |
//! | `activity` | what agents and views did with an instance, and the timeline across instances |
//! | `activity_words` | the activity record in words, for people |
//! | `terminal` | keys, waits, `run` and a shell's state, the same on every hop |
//! | `end` | how an instance ended, the same on every hop |
//! | `image` | images a program drew, kept with its screen: placements and bytes, the same on every hop |
//! | `web` | `tickloop web`'s control socket (`--revoke`, `--login`) |
//!
//! Every type is re-exported here: callers write `wire::ListEntry`.

mod activity;
mod activity_words;
mod call;
mod client;
mod consent;
mod end;
mod hello;
mod image;
mod launcher;
mod program;
mod terminal;
mod web;

pub use activity::*;
pub use activity_words::images_dropped_words;
pub use call::*;
pub use client::*;
pub use consent::*;
pub use end::*;
pub use hello::*;
pub use image::*;
pub use launcher::*;
pub use program::*;
pub use terminal::*;
pub use web::*;

use serde_json::Value;

/// The version every Tickloop process of one build speaks: the package
/// version and a digest of the JSON Schema of every message of every socket
/// (this module's types and [`crate::attach`]'s). Two builds whose messages
/// differ in any way have different versions, and a peer with a different
/// version is refused at [`Hello`], with both versions named, instead of
/// serde quietly dropping what it does not know.
///
/// The digest is [`wire_digest`] of [`crate::wire_schema::wire_schema`], kept in
/// `tests/golden/wire-digest` beside the schema itself and checked against
/// both by `tests/wire_golden.rs`: computing it at run time cost every
/// process (each CLI command, each launcher) some 17 million instructions
/// and a megabyte of heap (benches/results/cost-2026-12-02.md).
pub const WIRE_VERSION: &str = concat!(
    "tickloop-",
    env!("CARGO_PKG_VERSION"),
    "+",
    include_str!("../../tests/golden/wire-digest")
);

/// [`WIRE_VERSION`], for callers that take a function.
pub fn wire_version() -> &'static str {
    WIRE_VERSION
}

/// The digest that names a wire schema in [`WIRE_VERSION`]: the first six
/// bytes of the SHA-256 of its [`canonical_json`], in hex.
pub fn wire_digest(schema: &Value) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(canonical_json(schema).as_bytes());
    digest[..6].iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` as JSON text with every object's keys sorted, whatever the map
/// order serde_json was built with.
pub fn canonical_json(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&map[k]));
                }
                Value::Object(out)
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    // With serde_json's `preserve_order`, insertion above is sorted order;
    // without it, maps are sorted anyway.
    serde_json::to_string_pretty(&sorted(value)).unwrap_or_default()
}
