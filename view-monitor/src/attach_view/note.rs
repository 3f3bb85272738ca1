//! What an attach session's main loop hears from its helper threads (the
//! launcher link, the overlays' fetchers, signals, the terminal's input),
//! and what one turn of that loop decides.

use super::{AttachError, SessionEnd};
use crate::activity::Fetched;
use crate::launcher_link::LinkNote;
use std::ops::ControlFlow;
use tickloop_proto::wire::HeldCall;

/// What the main loop hears from its helper threads.
pub(super) enum Note {
    /// From the launcher's side of the link.
    Link(LinkNote),
    /// The activity overlay's data, fetched.
    Activity(Fetched),
    /// The calls of this instance waiting for approval.
    Approvals(Vec<HeldCall>),
    /// How a decision made here went, for the last row.
    Decided(String),
    Signal,
    /// The view's terminal is gone (its input ended).
    TerminalGone,
}

impl From<LinkNote> for Note {
    fn from(note: LinkNote) -> Self {
        Note::Link(note)
    }
}

/// What a turn of the loop, or one event, decided: go on, or end the
/// session this way.
pub(super) type Turn = Result<ControlFlow<SessionEnd>, AttachError>;
