//! The frame of a keystroke's echo, taken on the terminal thread.

use std::sync::Mutex;
use tickloop_proto::attach::Snapshot;

/// The live screen taken by the terminal thread as it applies the first
/// output after a view's keystroke, so that the frame with the echo needs
/// no round trip to the terminal thread: the view that was woken by that
/// change takes it as it is (see [`super::TerminalHandle::echo_frame`]).
#[derive(Default)]
pub(super) struct EchoFrame {
    /// A view typed since the last output was applied.
    pub(super) wanted: std::sync::atomic::AtomicBool,
    /// The screen, and the change it was taken for.
    pub(super) frame: Mutex<Option<(u64, Snapshot)>>,
}
