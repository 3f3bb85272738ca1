//! tickhost's log: one timestamped line per event, on its stderr (which
//! the daemon points at `tickhost.log` once it is ready).

/// One line to the daemon's log.
pub fn log(message: &str) {
    eprintln!("{} {message}", tickloop_client::clock::now_rfc3339());
}
