//! A view's socket lent to the terminal thread while the view's writer
//! waits with nothing to send: the terminal thread writes the next echo's
//! rows to it itself (`terminal::EchoWaiter`), and wakes the writer only
//! for a change it did not send. And the keys of a view's terminal, lent
//! to the terminal thread while the view shows the Tick's screen as it is
//! (`terminal::LentKeys`).

use super::hub::ViewHub;
use crate::terminal::{EchoWaiter, KeysBack, LentKeys, LentTty, TerminalHandle};
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tickloop_proto::attach::{Snapshot, ViewTty};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::{watch, Notify};

/// What one view lends, and what came back.
pub(super) struct Lending {
    /// The view's socket (a duplicate of the writer's descriptor), while it
    /// is not lent; none: its frames all go through its writer.
    sink: Option<OwnedFd>,
    /// The view's terminal, when it lent it too and is not lent now: the
    /// echo is drawn there.
    tty: Option<LentTty>,
    /// Wakes the writer, while lent, for a change it was not sent.
    pub(super) told: Arc<Notify>,
    /// The change whose echo the terminal thread sent the view itself.
    pub(super) echoed: Option<u64>,
}

impl Lending {
    /// Lends the view's socket `sink`, and its terminal when it lent it
    /// (`tty`: a local view's; never an agent's, `read_only`).
    pub(super) fn new(sink: Option<OwnedFd>, tty: Option<&ViewTty>, read_only: bool) -> Lending {
        Lending {
            sink,
            tty: tty.filter(|_| !read_only).and_then(LentTty::open),
            told: Arc::default(),
            echoed: None,
        }
    }

    /// Lends view `view`, sent `last` so far, to the terminal thread:
    /// whether it did (not without a socket or a screen sent).
    pub(super) fn lend(
        &mut self,
        term: &TerminalHandle,
        view: u64,
        last: &mut Option<Snapshot>,
    ) -> bool {
        match (self.sink.take(), last.take()) {
            (Some(sink), Some(snap)) => {
                let tty = self.tty.take();
                term.echo_wait(EchoWaiter::new(view, sink, tty, snap, self.told.clone()));
                true
            }
            (sink, snap) => {
                (self.sink, *last) = (sink, snap);
                false
            }
        }
    }

    /// Takes view `view` back (the terminal thread writes to it no more):
    /// `last` is what it has been sent now; the end of a frame the socket
    /// did not take at once is written first, on `writer`.
    pub(super) async fn take_back<W: AsyncWrite + Unpin>(
        &mut self,
        term: &TerminalHandle,
        view: u64,
        last: &mut Option<Snapshot>,
        writer: &mut W,
    ) -> std::io::Result<()> {
        let Some(back) = term.echo_take_back(view) else {
            return Ok(());
        };
        self.sink = Some(back.sink);
        self.tty = back.tty;
        *last = Some(back.last);
        if back.sent.is_some() {
            self.echoed = back.sent;
        }
        if !back.unsent.is_empty() {
            writer.write_all(&back.unsent).await?;
            writer.flush().await?;
        }
        // Told, now the rows drawn on go back.
        if let Some(tty) = &self.tty {
            tty.let_go();
        }
        Ok(())
    }

    /// Whether the news of a change (`woken`: the terminal thread's wake-up
    /// while lent, else the change itself) leaves the view a frame to send:
    /// not for the echo it was sent (the typing it answered is done), nor
    /// for a wake-up left from an earlier lending with nothing new.
    pub(super) fn needs_frame(
        &self,
        changes: &mut watch::Receiver<u64>,
        woken: bool,
        typed: &AtomicBool,
    ) -> bool {
        if woken && !changes.has_changed().unwrap_or(true) {
            return false;
        }
        if self.echoed == Some(*changes.borrow_and_update()) {
            typed.store(false, Ordering::Release);
            return false;
        }
        true
    }
}

/// What a view may lend of its terminal's keys, on its events' task.
pub(super) struct KeysLending {
    /// Its terminal (none: an agent's view, or a view with no terminal of
    /// its own: every lending is given back at once).
    tty: Option<ViewTty>,
    /// The view's socket (a duplicate), whose hang-up ends a lending.
    socket: Option<OwnedFd>,
    /// The view's writer, which sends the keys back.
    back: UnboundedSender<KeysBack>,
}

impl KeysLending {
    /// A view's keys: its terminal `tty` and socket, never an agent's
    /// (`read_only`); `back` goes to its writer.
    pub(super) fn new(
        tty: Option<&ViewTty>,
        socket: Option<&OwnedFd>,
        read_only: bool,
        back: UnboundedSender<KeysBack>,
    ) -> KeysLending {
        KeysLending {
            tty: tty.filter(|_| !read_only).cloned(),
            socket: socket.and_then(|socket| socket.try_clone().ok()),
            back,
        }
    }

    /// View `id` lends its keys (`lend`, its prefix key's byte `prefix`):
    /// the terminal thread reads them, and what it types makes the view
    /// the active one and its next frame an echo (`typed`). Given back at
    /// once when they cannot be read here.
    pub(super) async fn lend(
        &self,
        hub: &Arc<ViewHub>,
        id: u64,
        (lend, prefix): (u64, u8),
        typed: &Arc<AtomicBool>,
    ) {
        let on_typed = {
            let (hub, typed) = (Arc::downgrade(hub), typed.clone());
            Box::new(move || {
                typed.store(true, Ordering::Release);
                tickloop_client::idle::mark_busy();
                if let Some(hub) = hub.upgrade() {
                    hub.activate(id, None, false);
                }
            })
        };
        let keys = match (&self.tty, &self.socket) {
            (Some(tty), Some(socket)) => socket.try_clone().ok().and_then(|socket| {
                LentKeys::open(id, lend, prefix, tty, socket, self.back.clone(), on_typed)
            }),
            _ => None,
        };
        let lent = match keys {
            Some(keys) => hub.term.lend_keys(keys).await,
            None => false,
        };
        if !lent {
            let _ = self.back.send((lend, Vec::new()));
        }
    }
}
