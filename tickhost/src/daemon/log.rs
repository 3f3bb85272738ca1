//! tickhost's log: one timestamped line per event, on its stderr (which
//! the daemon points at `tickhost.log` once it is ready). A line a full
//! disk refuses is dropped: the daemon goes on (std's `eprintln!` would
//! panic).

use std::io::Write;

/// One line to the daemon's log.
pub fn log(message: &str) {
    let line = format!("{} {message}\n", tickloop_client::clock::now_rfc3339());
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}
