//! One attach session: its state, one field per concern (the link to the
//! launcher, the terminal's input, the screen drawn, the last row's note,
//! the overlays), and its one loop, which polls the terminal, the
//! launcher's socket, the signals and the overlays' wake-up at once.
//!
//! A turn: what the overlays' helper threads said taken in, the screen
//! drawn once if it changed, a due resize queued, everything queued sent;
//! then one `poll`. A keystroke read from the terminal is parsed (termwiz's
//! `InputParser` used as a parser, fed by this loop) and its event written
//! to the launcher's socket before anything is drawn; lines from the
//! launcher are applied as they arrive and drawn at the end of the turn.
//! What each event does lives with its concern: frames, drawing and
//! resizes in [`super::output`] (the screen's state in [`super::screen`]),
//! keys and mouse in [`super::input`], the activity overlay and the
//! approval prompt in [`super::overlays`].

use super::image_state::Images;
use super::lend::{KeysLend, Lent, TtyLend};
use super::note::{Note, Turn, Waker};
use super::overlays::Overlays;
use super::screen::{LastRow, Screen, FLASH};
use super::{AttachError, AttachOptions, AttachOutcome, SessionEnd};
use crate::colors::TtyAnswers;
use crate::graphics::probe::GraphicsAnswers;
use crate::launcher_link::{LineLink, LinkNote};
use crate::prefix::Prefix;
use crate::render::{InputReader, MouseTranslator};
use crate::tty::RestoreGuard;
use crate::tty_out::TtyOut;
use std::fs::File;
use std::io::Read;
use std::ops::ControlFlow;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::time::Instant;
use termwiz::surface::Change;
use tickloop_proto::attach::{Snapshot, ViewEvent};

/// The user's terminal as the loop reads it: the answers to the graphics
/// and colour questions taken out, the rest parsed into keys, mouse and
/// paste; and the signals that come with a terminal (its resizes, its
/// hang-up).
pub(super) struct TtyIn {
    pub(super) tty: File,
    pub(super) graphics: GraphicsAnswers,
    pub(super) answers: TtyAnswers,
    pub(super) keys: InputReader,
    pub(super) signals: Signals,
    /// What one read of the terminal takes (made once: zeroing it for
    /// each read cost more than reading a key).
    pub(super) buf: Box<[u8]>,
    /// The terminal lent to the launcher for echoes while the loop waits
    /// with the Tick's screen shown as it is (none: not lent).
    pub(super) lend: Option<TtyLend>,
    /// Whose the terminal's keys are ([`super::keys`]).
    pub(super) lent_keys: KeysLend,
}

/// What one read of the view's terminal takes at most.
pub(super) const TTY_READ: usize = 4096;

/// Signals as the loop hears them: the handlers write a byte to a socket
/// the loop polls (a resize on one, the end on the other).
pub(super) struct Signals {
    winch: UnixStream,
    end: UnixStream,
    ids: Vec<signal_hook::SigId>,
}

impl Signals {
    pub(super) fn register() -> Result<Self, AttachError> {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGWINCH};
        let fail = |e: std::io::Error| AttachError::Terminal(format!("cannot handle signals: {e}"));
        let (winch, winch_tx) = UnixStream::pair().map_err(fail)?;
        let (end, end_tx) = UnixStream::pair().map_err(fail)?;
        winch.set_nonblocking(true).map_err(fail)?;
        end.set_nonblocking(true).map_err(fail)?;
        let mut ids =
            vec![signal_hook::low_level::pipe::register(SIGWINCH, winch_tx).map_err(fail)?];
        for signal in [SIGTERM, SIGINT, SIGQUIT, SIGHUP] {
            let tx = end_tx.try_clone().map_err(fail)?;
            ids.push(signal_hook::low_level::pipe::register(signal, tx).map_err(fail)?);
        }
        Ok(Signals { winch, end, ids })
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Reads whatever is waiting on a non-blocking socket; whether anything was.
fn drain(socket: &mut UnixStream) -> bool {
    let mut buf = [0u8; 64];
    let mut any = false;
    while let Ok(n) = socket.read(&mut buf) {
        if n == 0 {
            break;
        }
        any = true;
    }
    any
}

/// One attach session's state.
pub(super) struct Session<'a> {
    /// Draws (termwiz is the renderer here; the loop reads the input).
    pub(super) term: &'a mut TtyOut,
    /// Writes between frames (bell, title, clipboard, mouse modes).
    pub(super) guard: &'a RestoreGuard,
    pub(super) opts: &'a AttachOptions,
    /// The launcher's socket; everything for the launcher is queued here.
    pub(super) link: LineLink,
    /// The terminal's input.
    pub(super) input: TtyIn,
    /// The note the view kept on the last row when it lent the rows above
    /// it (none: it lent them all), for what the launcher drew meanwhile.
    pub(super) lent_note: Option<String>,
    /// What the overlays' helper threads say, and the socket they wake
    /// the loop with.
    notes: mpsc::Receiver<Note>,
    wake: UnixStream,
    /// The Tick's screen as the launcher sent it, and as drawn.
    pub(super) screen: Screen,
    /// The note on the last row (keys, a pending prefix, a decision).
    pub(super) last_row: LastRow,
    /// The activity overlay and the approval prompt.
    pub(super) overlays: Overlays,
    /// The prefix key, and whether it was just typed.
    pub(super) prefix: Prefix,
    /// Mouse reports as the Tick wants them.
    pub(super) mouse: MouseTranslator,
    /// The images the Tick drew, and what the terminal draws of them.
    pub(super) images: Images,
    /// Something changed on screen since the last draw.
    pub(super) dirty: bool,
}

/// What a view shows besides the Tick's screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shows {
    /// Nothing.
    Alone,
    /// A note on the last row.
    WithANote,
    /// An overlay, images, history, another size.
    More,
}

/// What one `poll` of the loop found.
struct Ready {
    tty: bool,
    link: bool,
    winch: bool,
    end: bool,
    wake: bool,
}

impl<'a> Session<'a> {
    /// The session of a view that got `snapshot` for `size`, with the
    /// approvals fetcher started.
    pub(super) fn start(
        term: &'a mut TtyOut,
        guard: &'a RestoreGuard,
        link: LineLink,
        input: TtyIn,
        snapshot: Snapshot,
        size: (u16, u16),
        opts: &'a AttachOptions,
    ) -> Result<Self, AttachError> {
        let (note_tx, notes) = mpsc::channel::<Note>();
        let (wake, waker) = Waker::pair()
            .map_err(|e| AttachError::Terminal(format!("cannot make the loop's wake-up: {e}")))?;
        let overlays = Overlays::start(opts, note_tx, waker);
        let prefix = Prefix::new(opts.prefix);
        let last_row = LastRow::after_attach(opts, &prefix, &snapshot, size);
        Ok(Session {
            term,
            guard,
            opts,
            link,
            input,
            lent_note: None,
            notes,
            wake,
            screen: Screen::new(snapshot, size),
            last_row,
            overlays,
            prefix,
            mouse: MouseTranslator::default(),
            images: Images::default(),
            dirty: true,
        })
    }

    /// Runs until the session ends; the link is closed (what is queued
    /// sent) however it ends.
    pub(super) fn run(mut self) -> Result<SessionEnd, AttachError> {
        let _ = self.term.render(&[Change::ClearScreen(Default::default())]);
        let end = loop {
            match self.turn() {
                Ok(ControlFlow::Continue(())) => {}
                Ok(ControlFlow::Break(end)) => break Ok(end),
                Err(e) => break Err(e),
            }
        };
        self.link.close();
        // Let go of the terminal only now that the socket is shut: the
        // launcher sees the hang-up and draws on it no more, and reads no
        // key once the view holds the keys' lock.
        if let Some(mut lend) = self.input.lend.take() {
            lend.take_keys();
        }
        end
    }

    /// One turn: what the helper threads said, drawn once; a due resize
    /// and whatever else is queued sent; then one poll and what it found.
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
        self.link.flush()?;
        // Once, after the first frame is out: the keys' parser, built
        // before the wait rather than before the frame.
        self.input.keys.prepare();
        // The terminal is lent while the loop waits, if nothing but the
        // Tick's screen is shown, and taken back before anything else.
        let lent = self.lend_if_plain();
        self.follow_keys(Instant::now());
        self.link.flush()?;
        let ready = self.poll();
        if lent && !self.hold_rows() {
            self.input.lend = None;
        }
        let now = Instant::now();
        if ready.end {
            return Ok(ControlFlow::Break(SessionEnd::Done(AttachOutcome::Hangup)));
        }
        if ready.tty {
            if let ControlFlow::Break(end) = self.read_tty(now)? {
                return Ok(ControlFlow::Break(end));
            }
        }
        if let ControlFlow::Break(end) = self.on_deadlines(now)? {
            return Ok(ControlFlow::Break(end));
        }
        // The keystroke goes before anything is read or drawn.
        self.link.flush()?;
        // What the launcher drew while it was lent was told before it let
        // go: read whether or not the poll saw it.
        if ready.link || self.link.buffered() || lent {
            let mut notes = Vec::new();
            self.link.read(&mut notes);
            for note in notes {
                if let ControlFlow::Break(end) = self.on_link(note)? {
                    return Ok(ControlFlow::Break(end));
                }
            }
        }
        if ready.winch && drain(&mut self.input.signals.winch) {
            if let Ok((cols, rows)) = self.term.size() {
                self.on_resized(cols, rows);
            }
        }
        if ready.wake {
            drain(&mut self.wake);
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Lends the terminal if the view shows the Tick's screen cell for cell
    /// (all but a note on the last row, which it keeps) and has drawn all
    /// it read: whether it did.
    fn lend_if_plain(&mut self) -> bool {
        if self.dirty || self.link.buffered() || self.input.lend.is_none() {
            return false;
        }
        let lent = match self.shows_the_screen() {
            Shows::Alone => Lent::All,
            Shows::WithANote => Lent::Above(self.screen.view.1.saturating_sub(1)),
            Shows::More => return false,
        };
        self.lent_note = (lent != Lent::All).then(|| {
            let asking = self
                .overlays
                .asking(&self.prefix, usize::from(self.screen.view.0));
            self.last_row.note(&asking, self.opts).0.to_string()
        });
        match self.input.lend.as_mut() {
            Some(lend) if self.term.pen_at_defaults().is_ok() => {
                lend.lend(lent);
                true
            }
            _ => false,
        }
    }

    /// Takes the terminal's rows back from the launcher, asking for those
    /// it kept: whether the view holds them.
    fn hold_rows(&mut self) -> bool {
        let (Some(lend), link) = (self.input.lend.as_mut(), &mut self.link) else {
            return false;
        };
        lend.hold(|| {
            link.queue(&ViewEvent::TakeRows);
            // Sent whole before the view waits for the rows (a socket the
            // launcher has not read yet is waited on).
            while link.flush().is_ok() && link.wants_write() {
                let mut out = libc::pollfd {
                    fd: link.fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd for the call.
                unsafe { libc::poll(&mut out, 1, 100) };
            }
        })
    }

    /// What the view shows besides the Tick's screen.
    pub(super) fn shows_the_screen(&self) -> Shows {
        let screen = &self.screen;
        let plain = self.overlays.none_open()
            && self.images.none()
            && screen.pending_resize.is_none()
            && screen.view == (screen.model.cols, screen.model.rows)
            && screen.model.scroll.offset == 0
            && !screen.scroller.scrolled();
        let note = self.opts.status.is_some()
            || self.last_row.flash.is_some()
            || self.prefix.pending()
            || self.overlays.asking_now();
        match (plain, note) {
            (true, false) => Shows::Alone,
            (true, true) if screen.view.1 > 1 => Shows::WithANote,
            _ => Shows::More,
        }
    }

    /// Waits for the terminal, the socket, a signal or a wake-up, at most
    /// until the next deadline.
    fn poll(&mut self) -> Ready {
        let deadline = [
            self.screen.pending_resize,
            self.last_row.until(),
            self.input.graphics.deadline(),
            self.input.answers.deadline(),
            self.input.keys.deadline(),
            self.input.lent_keys.deadline(),
        ]
        .into_iter()
        .flatten()
        .min();
        // Lines read with the first snapshot wait: do not sleep.
        let deadline = if self.link.buffered() {
            Some(Instant::now())
        } else {
            deadline
        };
        let timeout = deadline.map_or(-1, |at| {
            let left = at.saturating_duration_since(Instant::now());
            // Round up: waking a moment early only polls again.
            libc::c_int::try_from(left.as_micros().div_ceil(1000)).unwrap_or(libc::c_int::MAX)
        });
        let link_events = if self.link.wants_write() {
            libc::POLLIN | libc::POLLOUT
        } else {
            libc::POLLIN
        };
        // While the launcher reads the keys, only the terminal's hang-up.
        let tty_events = if self.input.lent_keys.reads_tty() {
            libc::POLLIN
        } else {
            0
        };
        let mut fds = [
            (self.input.tty.as_raw_fd(), tty_events),
            (self.link.fd(), link_events),
            (self.input.signals.winch.as_raw_fd(), libc::POLLIN),
            (self.input.signals.end.as_raw_fd(), libc::POLLIN),
            (self.wake.as_raw_fd(), libc::POLLIN),
        ]
        .map(|(fd, events)| libc::pollfd {
            fd,
            events,
            revents: 0,
        });
        // SAFETY: `fds` is a valid array of pollfd for the call's duration.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout) };
        let hit = |i: usize| n > 0 && fds[i].revents != 0;
        Ready {
            tty: hit(0),
            link: hit(1) && fds[1].revents & !libc::POLLOUT != 0,
            winch: hit(2),
            end: hit(3),
            wake: hit(4),
        }
    }

    /// Reads the terminal: colour answers to the launcher, the rest parsed
    /// and handled (keys to the launcher at once).
    fn read_tty(&mut self, now: Instant) -> Turn {
        let n = match self.input.tty.read(&mut self.input.buf) {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::WouldBlock
                ) =>
            {
                return Ok(ControlFlow::Continue(()))
            }
            Err(_) => 0,
        };
        if n == 0 {
            // The terminal went away (SIGHUP may come too, or not at all
            // when the view is not the session leader).
            return Ok(ControlFlow::Break(SessionEnd::Done(AttachOutcome::Hangup)));
        }
        let buf = std::mem::take(&mut self.input.buf);
        let turn = self.take_typed(&buf[..n], now, n == buf.len());
        self.input.buf = buf;
        turn
    }

    /// Takes what was typed on the terminal (read here, or by the launcher
    /// and given back): colour answers to the launcher, the rest parsed
    /// and handled (keys to the launcher at once). `maybe_more`: the read
    /// filled its buffer.
    pub(super) fn take_typed(&mut self, bytes: &[u8], now: Instant, maybe_more: bool) -> Turn {
        let mut rest = Vec::new();
        if let Some(caps) = self
            .input
            .graphics
            .feed(bytes, self.screen.view, now, &mut rest)
        {
            self.on_capabilities(caps);
        }
        let mut keys = Vec::new();
        if let Some(colors) = self.input.answers.feed(&rest, now, &mut keys) {
            self.link.queue(&ViewEvent::Colors(colors));
        }
        self.input.keys.feed(&keys, maybe_more);
        self.take_input()
    }

    /// What waited for a deadline: held bytes that were keys after all,
    /// colours reported without their end marker, a held key sequence.
    fn on_deadlines(&mut self, now: Instant) -> Turn {
        let mut rest = Vec::new();
        if let Some(caps) = self
            .input
            .graphics
            .on_deadline(now, self.screen.view, &mut rest)
        {
            self.on_capabilities(caps);
        }
        let mut keys = Vec::new();
        if !rest.is_empty() {
            if let Some(colors) = self.input.answers.feed(&rest, now, &mut keys) {
                self.link.queue(&ViewEvent::Colors(colors));
            }
        }
        if let Some(colors) = self.input.answers.on_deadline(now, &mut keys) {
            self.link.queue(&ViewEvent::Colors(colors));
        }
        if !keys.is_empty() {
            self.input.keys.feed(&keys, false);
        }
        self.input.keys.on_deadline(now);
        self.take_input()
    }

    /// Handles every input event parsed so far.
    fn take_input(&mut self) -> Turn {
        while let Some(event) = self.input.keys.next_event() {
            if let ControlFlow::Break(end) = self.on_input(Some(event))? {
                return Ok(ControlFlow::Break(end));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Takes in every note waiting, in order.
    fn take_notes(&mut self) -> Turn {
        while let Ok(note) = self.notes.try_recv() {
            if let ControlFlow::Break(end) = self.on_note(note)? {
                return Ok(ControlFlow::Break(end));
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    fn on_link(&mut self, note: LinkNote) -> Turn {
        match note {
            LinkNote::Frame(frame) => self.on_frame(frame),
            LinkNote::Lost(why) => Err(AttachError::Lost(why)),
            LinkNote::Broken(why) => Err(AttachError::Protocol(why)),
        }
    }

    fn on_note(&mut self, note: Note) -> Turn {
        match note {
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
        }
        Ok(ControlFlow::Continue(()))
    }
}
