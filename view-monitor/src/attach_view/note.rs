//! What an attach session's loop hears from the overlays' helper threads
//! (the activity and approvals fetchers, a decision's outcome), the socket
//! they wake the loop with, and what one turn of that loop decides.

use super::{AttachError, SessionEnd};
use crate::activity::Fetched;
use std::io::Write;
use std::ops::ControlFlow;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use tickloop_proto::wire::HeldCall;

/// What the loop hears from the overlays' helper threads.
pub(super) enum Note {
    /// The activity overlay's data, fetched.
    Activity(Fetched),
    /// The calls of this instance waiting for approval.
    Approvals(Vec<HeldCall>),
    /// How a decision made here went, for the last row.
    Decided(String),
}

/// Wakes the loop from a helper thread after it sent a [`Note`]: a byte
/// on a socket the loop polls.
#[derive(Clone)]
pub(super) struct Waker(Arc<UnixStream>);

impl Waker {
    /// The end the loop polls, and the waker for the threads.
    pub(super) fn pair() -> std::io::Result<(UnixStream, Waker)> {
        let (polled, woken) = UnixStream::pair()?;
        polled.set_nonblocking(true)?;
        woken.set_nonblocking(true)?;
        Ok((polled, Waker(Arc::new(woken))))
    }

    /// A full socket already has a wake-up waiting: nothing is lost.
    pub(super) fn wake(&self) {
        let _ = (&*self.0).write(&[1]);
    }
}

/// What a turn of the loop, or one event, decided: go on, or end the
/// session this way.
pub(super) type Turn = Result<ControlFlow<SessionEnd>, AttachError>;
