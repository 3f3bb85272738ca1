//! One attach session: its state, one field per concern (the link to the
//! launcher, the screen drawn, the last row's note, the overlays, the
//! input), and its main loop, which takes in what the helper threads said,
//! draws once, sends a due resize, then waits for the next input or
//! deadline. What each event does lives with its concern: frames, drawing
//! and resizes in [`super::output`] (the screen's state in [`super::screen`]), keys and mouse in [`super::input`],
//! the activity overlay and the approval prompt in [`super::overlays`].

use super::note::{Note, Turn};
use super::overlays::Overlays;
use super::screen::{LastRow, Screen, FLASH};
use super::{AttachError, AttachOptions, AttachOutcome, SessionEnd};
use crate::launcher_link::{self, LinkNote};
use crate::prefix::Prefix;
use crate::render::{InputReader, MouseTranslator};
use crate::tty::RestoreGuard;
use std::io::BufReader;
use std::ops::ControlFlow;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Instant;
use termwiz::surface::Change;
use termwiz::terminal::{Terminal, TerminalWaker, UnixTerminal};
use tickloop_proto::attach::{Snapshot, ViewEvent};

/// A view's connection to its launcher, and the channels around it.
pub(super) struct Link {
    pub(super) reader: BufReader<UnixStream>,
    pub(super) writer: UnixStream,
    pub(super) notes: mpsc::Receiver<Note>,
    pub(super) note_tx: mpsc::Sender<Note>,
    pub(super) events: mpsc::Receiver<ViewEvent>,
    pub(super) event_tx: mpsc::Sender<ViewEvent>,
}

/// The loop's ends of the link once its threads run.
pub(super) struct Channels {
    /// What the helper threads say (the overlays keep a sender for the
    /// threads they start, so this never disconnects while the link runs).
    pub(super) notes: mpsc::Receiver<Note>,
    /// What goes to the launcher (sizes, keys, mouse, scrolling, colours).
    pub(super) event_tx: mpsc::Sender<ViewEvent>,
}

/// One attach session's state.
pub(super) struct Session<'a> {
    pub(super) term: &'a mut UnixTerminal,
    /// Writes between frames (bell, title, clipboard, mouse modes).
    pub(super) guard: &'a RestoreGuard,
    pub(super) opts: &'a AttachOptions,
    pub(super) channels: Channels,
    /// The Tick's screen as the launcher sent it, and as drawn.
    pub(super) screen: Screen,
    /// The note on the last row (keys, a pending prefix, a decision).
    pub(super) last_row: LastRow,
    /// The activity overlay and the approval prompt.
    pub(super) overlays: Overlays,
    /// The prefix key, and whether it was just typed.
    pub(super) prefix: Prefix,
    /// The terminal's input, and mouse reports as the Tick wants them.
    pub(super) keys: InputReader,
    pub(super) mouse: MouseTranslator,
    /// Something changed on screen since the last draw.
    pub(super) dirty: bool,
}

impl<'a> Session<'a> {
    /// Starts the link's threads, the signal thread and the approvals
    /// fetcher around a view that got `snapshot` for its `size`.
    pub(super) fn start(
        term: &'a mut UnixTerminal,
        guard: &'a RestoreGuard,
        link: Link,
        snapshot: Snapshot,
        size: (u16, u16),
        opts: &'a AttachOptions,
    ) -> Result<Self, AttachError> {
        let Link {
            reader,
            writer,
            notes,
            note_tx,
            events,
            event_tx,
        } = link;
        let waker = term.waker();
        launcher_link::spawn_link(reader, writer, note_tx.clone(), waker.clone(), events);
        spawn_signals(note_tx.clone(), waker.clone())?;
        let overlays = Overlays::start(opts, note_tx, waker);
        let prefix = Prefix::new(opts.prefix);
        let last_row = LastRow::after_attach(opts, &prefix, &snapshot, size);
        Ok(Session {
            term,
            guard,
            opts,
            channels: Channels { notes, event_tx },
            screen: Screen::new(snapshot, size),
            last_row,
            overlays,
            prefix,
            keys: InputReader::default(),
            mouse: MouseTranslator::default(),
            dirty: true,
        })
    }

    /// Runs until the session ends.
    pub(super) fn run(mut self) -> Result<SessionEnd, AttachError> {
        let _ = self.term.render(&[Change::ClearScreen(Default::default())]);
        loop {
            if let ControlFlow::Break(end) = self.turn()? {
                return Ok(end);
            }
        }
    }

    /// One turn: everything the helper threads said since the last turn,
    /// drawn once; a due resize sent; then one input (or a deadline).
    fn turn(&mut self) -> Turn {
        if let ControlFlow::Break(end) = self.take_notes()? {
            return Ok(ControlFlow::Break(end));
        }
        self.follow_title();
        if self.last_row.expire(Instant::now()) {
            self.dirty = true;
        }
        if self.dirty {
            if let ControlFlow::Break(end) = self.draw() {
                return Ok(ControlFlow::Break(end));
            }
            self.dirty = false;
        }
        self.send_due_resize();
        let wait = [self.screen.pending_resize, self.last_row.until()]
            .into_iter()
            .flatten()
            .min()
            .map(|at| at.saturating_duration_since(Instant::now()));
        let input = match self.keys.poll(self.term, wait) {
            Ok(input) => input,
            // The terminal went away (SIGHUP may come too, or not at all
            // when the view is not the session leader).
            Err(_) => return Ok(ControlFlow::Break(SessionEnd::Done(AttachOutcome::Hangup))),
        };
        self.on_input(input)
    }

    /// Takes in every note waiting, in order.
    fn take_notes(&mut self) -> Turn {
        loop {
            let note = match self.channels.notes.try_recv() {
                Ok(note) => note,
                Err(mpsc::TryRecvError::Empty) => return Ok(ControlFlow::Continue(())),
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(AttachError::Lost("the launcher connection ended".into()))
                }
            };
            if let ControlFlow::Break(end) = self.on_note(note)? {
                return Ok(ControlFlow::Break(end));
            }
        }
    }

    fn on_note(&mut self, note: Note) -> Turn {
        match note {
            Note::Link(LinkNote::Frame(frame)) => return self.on_frame(frame),
            Note::Link(LinkNote::Lost(why)) => return Err(AttachError::Lost(why)),
            Note::Link(LinkNote::Broken(why)) => return Err(AttachError::Protocol(why)),
            Note::Decided(text) => {
                self.last_row.show(Some(text), FLASH);
                self.dirty = true;
            }
            Note::Approvals(held) => {
                if self.overlays.set_waiting(held) {
                    self.dirty = true;
                }
            }
            Note::Activity(fetched) => {
                if self.overlays.update_activity(fetched) {
                    self.dirty = true;
                }
            }
            Note::Signal | Note::TerminalGone => {
                return Ok(ControlFlow::Break(SessionEnd::Done(AttachOutcome::Hangup)))
            }
        }
        Ok(ControlFlow::Continue(()))
    }
}

/// Signals (SIGTERM, SIGINT, SIGQUIT, SIGHUP) end the session cleanly: a
/// thread turns the first into a [`Note::Signal`].
fn spawn_signals(tx: mpsc::Sender<Note>, waker: TerminalWaker) -> Result<(), AttachError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGQUIT, SIGHUP])
        .map_err(|e| AttachError::Terminal(format!("cannot handle signals: {e}")))?;
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            let _ = tx.send(Note::Signal);
            let _ = waker.wake();
        }
    });
    Ok(())
}
