//! tickloop-client: what every front end needs to reach Tickloop — the
//! blocking connection to tickhost (starting it when absent), dialling
//! another machine over ssh, the runtime directory's paths (and its
//! processes, and writing its files whole), the bounded line framing of
//! every socket (async and blocking) and the one writer task per
//! connection, what a quiet process
//! gives back (free heap, stack, code), the person's
//! settings file, what is kept of a forgotten instance (in the data
//! directory), the one RFC 3339 clock; who acts (the markers of an
//! environment) and what `/proc` tells of a process and who started it;
//! signals and children awaited without tokio's registry of every signal.
//! The daemon itself is the
//! `tickhost` crate; the messages are `tickloop-proto`'s.

pub mod actor;
pub mod child;
pub mod clock;
pub mod config;
mod connection;
pub mod framing;
pub mod idle;
pub mod kept;
pub mod legacy_layout;
pub mod malloc_arena;
pub mod outbox;
pub mod own_folders;
pub mod paths;
pub mod peer;
pub mod process;
pub mod runtime_procs;
pub mod signals;
pub mod ssh;
pub mod tty_turns;
pub mod whole_file;

pub use connection::{
    caller_env, running_tickhost, screen_history, screen_rows, Client, ClientError, Endpoint,
    Machine, TooLong, WatchItem, Withdrawer, CALL_TIMEOUT, HELLO_TIMEOUT, REQUEST_TIMEOUT,
    START_TIMEOUT,
};
