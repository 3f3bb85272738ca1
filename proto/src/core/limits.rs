//! The numeric limits of Tick protocol 3 (spec 3.5 and spec-gaps 3.5), in one place.

use std::time::Duration;

/// One MiB in bytes.
const MIB: usize = 1024 * 1024;
/// One KiB in bytes.
const KIB: usize = 1024;

/// Every limit the host session enforces. `Limits::default()` holds the
/// values of the spec; the fields are public so tests (and only tests) may
/// shrink them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest line the Tick may write on stdout, without its `\n` (8 MiB).
    pub max_line: usize,
    /// Largest re-encoded `tick/call` result (8 MiB).
    pub max_call_result: usize,
    /// Largest re-encoded `tick/describe` result (512 KiB).
    pub max_describe: usize,
    /// Largest re-encoded `tick/update` params (512 KiB).
    pub max_update: usize,
    /// Largest re-encoded `tick/read` result (512 KiB).
    pub max_read: usize,
    /// Requests written to the Tick and not yet answered (8).
    pub max_in_flight: usize,
    /// Client requests waiting for a slot (or for initialization) beyond
    /// those in flight (256); more are refused at once, never queued
    /// without bound.
    pub max_waiting: usize,
    /// Bytes of call arguments those waiting requests may hold together
    /// (16 MiB); a request that would pass it is refused at once (one
    /// larger request may still wait alone).
    pub max_waiting_bytes: usize,
    /// Time for each initialization request, from when it is written (10 s).
    pub init_request_timeout: Duration,
    /// Time for all of initialization, from `Session::new` (10 s).
    pub init_total_timeout: Duration,
    /// Time for a `tick/call`, from when it is written (60 s).
    pub call_timeout: Duration,
    /// Time for a `tick/describe` or `tick/read` after initialization (10 s).
    pub query_timeout: Duration,
    /// Budget of one delivery of one instance's state (16 KiB).
    pub delivery_budget: usize,
    /// Budget of each item when several are delivered together (4 KiB).
    pub delivery_item_budget: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_line: 8 * MIB,
            max_call_result: 8 * MIB,
            max_describe: 512 * KIB,
            max_update: 512 * KIB,
            max_read: 512 * KIB,
            max_in_flight: 8,
            max_waiting: 256,
            max_waiting_bytes: 16 * MIB,
            init_request_timeout: Duration::from_secs(10),
            init_total_timeout: Duration::from_secs(10),
            call_timeout: Duration::from_secs(60),
            query_timeout: Duration::from_secs(10),
            delivery_budget: 16 * KIB,
            delivery_item_budget: 4 * KIB,
        }
    }
}

/// The size of `value` re-encoded by this host's serialiser, in bytes
/// (spec 2.3: sizes are measured after re-encoding).
pub fn encoded_size(value: &serde_json::Value) -> usize {
    // Serialising a `Value` into a Vec cannot fail: keys are strings and
    // numbers are finite.
    serde_json::to_vec(value).map_or(usize::MAX, |bytes| bytes.len())
}
