//! Views attached to this launcher: serving the attach protocol
//! ([`tickloop_proto::attach`]) on connections that said hello with role `view`, and
//! the size policy shared by all of them.
//!
//! * Each view gets a [`Snapshot`](tickloop_proto::attach::Snapshot) from the emulator, then changed rows at
//!   most every [`FRAME_INTERVAL`](serve::FRAME_INTERVAL) on average, with bursts of up to
//!   [`FRAME_BURST`](serve::FRAME_BURST) frames sent at once (so a keystroke's echo is drawn at
//!   once, not at the next 60 Hz tick): the terminal thread only signals "the
//!   screen changed" (a `watch`, so a flood of output is one pending signal),
//!   and a view's writer takes a snapshot when its next frame is due (the
//!   output the master holds then applied first: `Fresh::Held` in the
//!   terminal's messages)
//!   and sends the rows that differ from what it sent last. A slow view gets
//!   fewer frames, never a backlog. The first frame after the view typed
//!   (its echo) goes at once and is not counted, so echo never waits for
//!   the pacing however fast keys come.
//! * Keys, paste, mouse and focus are encoded for the Tick's modes as the
//!   terminal thread last published them and written to the PTY from the
//!   view's task ([`TerminalHandle::view_input`](crate::terminal::TerminalHandle::view_input)).
//! * Sizes follow the most recently active view (tmux's `latest`): attaching,
//!   any input event and any resize make a view the latest; when its size
//!   differs from the PTY's, the PTY and then the emulator are resized, after
//!   [`RESIZE_DEBOUNCE`](hub::RESIZE_DEBOUNCE) without newer requests. Attaching at the PTY's size
//!   nudges the PTY one row and back so a TUI redraws (Linux sends no
//!   SIGWINCH for an unchanged size). With no view the size stays.
//! * The Tick's colour queries (OSC 10/11/4) are answered with the colours
//!   of the most recently active view whose terminal reported them
//!   ([`ViewEvent::Colors`](tickloop_proto::attach::ViewEvent::Colors), which may come any time after the hello); when
//!   it leaves, the last ones set stay; before any, xterm's defaults.
//!
//! * A view's writer with nothing left to send lends its socket and the
//!   screen it sent to the terminal thread (`lending`), which writes the
//!   next keystroke's echo to it itself, with no hop through the runtime's
//!   thread.
//!
//! [`hub`] holds what all views of the launcher share (their count, the
//! size policy, the colours answered); [`serve`] serves one view's
//! connection (its hello, snapshot and paced frames, its events);
//! `lending` lends it to the terminal thread between frames.

pub mod hub;
mod lending;
pub mod serve;
