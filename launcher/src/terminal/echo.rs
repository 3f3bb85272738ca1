//! The frame of a keystroke's echo, taken on the terminal thread, and the
//! views waiting for it, to which the terminal thread writes it itself (or
//! draws it on their terminals, [`super::direct`]).

use super::direct::LentTty;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, Mutex};
use tickloop_proto::attach::{Snapshot, ToView};
use tokio::sync::Notify;

/// The live screen taken by the terminal thread as it applies the first
/// output after a view's keystroke, so that the frame with the echo needs
/// no round trip to the terminal thread: the view that was woken by that
/// change takes it as it is (see [`super::TerminalHandle::echo_frame`]).
/// Views with nothing left to send wait here too ([`EchoWaiter`]): the
/// terminal thread writes the echo's frame to their sockets at once, with
/// no hop through the runtime's thread.
#[derive(Default)]
pub(super) struct EchoFrame {
    /// A view typed since the last output was applied.
    pub(super) wanted: std::sync::atomic::AtomicBool,
    /// The screen, and the change it was taken for.
    pub(super) frame: Mutex<Option<(u64, Snapshot)>>,
    /// The views that have sent all they had and wait for the next change.
    pub(super) waiters: Mutex<Vec<EchoWaiter>>,
}

/// A view lent to the terminal thread while its task waits: its socket and
/// the screen it was sent last. The task takes it back before it writes
/// anything or looks at what it sent
/// ([`super::TerminalHandle::echo_take_back`]), so the two never write to
/// the socket at once.
pub struct EchoWaiter {
    /// The view's number at its hub.
    view: u64,
    /// The view's socket (a duplicate of the task's descriptor, non-blocking
    /// as that one is).
    pub(crate) sink: OwnedFd,
    /// The view's terminal, when it lent it: the echo is drawn there.
    pub(crate) tty: Option<LentTty>,
    /// The screen the view has been sent.
    pub(crate) last: Snapshot,
    /// The change whose frame the terminal thread sent it, if it did.
    pub(crate) sent: Option<u64>,
    /// The part of that frame the socket did not take at once: the view's
    /// task writes it before anything else.
    pub(crate) unsent: Vec<u8>,
    /// What the view was last told its terminal shows, when echoes were
    /// drawn there since (their rows kept): it is told at its next
    /// [`EchoWaiter::tell`].
    told: Option<Snapshot>,
    /// Wakes the view's task for a change it was not sent: while lent it
    /// does not listen to every change (an echo it was sent would wake it
    /// for nothing, and the next keystroke would find its thread busy).
    wake: Arc<Notify>,
}

impl EchoWaiter {
    /// View `view` waits, having been sent `last` on `sink`; `wake` wakes
    /// it for every change it is not sent.
    pub fn new(
        view: u64,
        sink: OwnedFd,
        tty: Option<LentTty>,
        last: Snapshot,
        wake: Arc<Notify>,
    ) -> EchoWaiter {
        EchoWaiter {
            view,
            sink,
            tty,
            last,
            sent: None,
            unsent: Vec::new(),
            told: None,
            wake,
        }
    }

    pub(super) fn view(&self) -> u64 {
        self.view
    }

    /// Writes the frame that turns the view's screen into `snap` (change
    /// `change`) to its socket, as much as it takes now. A view whose
    /// screen has another size is left to its task (it sends the screen
    /// whole), and so is a view whose last frame is not all written yet.
    /// An echo drawn on the view's terminal is told later, with the ones
    /// after it, and its rows kept until then ([`EchoWaiter::tell`]): the
    /// view is not woken by every echo.
    fn send(&mut self, snap: &Snapshot, change: u64) {
        if !self.unsent.is_empty() {
            return;
        }
        let Some(rows) = self.last.diff(snap) else {
            return;
        };
        let mut kept = None;
        if !rows.is_noop(&self.last) {
            // Out for the turn, which borrows it.
            let tty = self.tty.take();
            match tty
                .as_ref()
                .and_then(|tty| tty.draw(&self.sink, &self.last, snap, &rows))
            {
                Some((turn, unwritten)) if unwritten.is_empty() => {
                    turn.keep();
                    kept = Some(rows);
                }
                // The terminal did not take it all: the view writes the
                // rest, told now, after what was drawn before; the rows
                // go back once it is written.
                Some((turn, unwritten)) => {
                    self.flush_told();
                    self.write_line(&ToView::Drawn { rows, unwritten });
                    drop(turn);
                }
                None => {
                    self.flush_told();
                    self.write_line(&ToView::Rows(rows));
                }
            }
            self.tty = tty;
            if kept.is_none() {
                self.let_go();
            }
        }
        match kept {
            // Drawn: what the view was told is kept the first time, and the
            // screen it shows follows by the rows that changed (no copy of
            // the whole screen at every echo).
            Some(rows) => {
                if self.told.is_none() {
                    self.told = Some(self.last.clone());
                }
                if self.last.apply(rows).is_err() {
                    self.last = snap.clone();
                }
            }
            None => self.last = snap.clone(),
        }
        self.sent = Some(change);
    }

    /// Tells the view what was drawn on its terminal since it was told
    /// last, and lets go of the rows kept: the view asked for them
    /// ([`tickloop_proto::attach::ViewEvent::TakeRows`]).
    pub(super) fn tell(&mut self) {
        self.flush_told();
        self.let_go();
    }

    /// Writes what was drawn since the view was told last, as one
    /// [`ToView::Drawn`] (the rows stay kept).
    pub(crate) fn flush_told(&mut self) {
        let Some(told) = self.told.take() else {
            return;
        };
        if let Some(rows) = told.diff(&self.last) {
            self.write_line(&ToView::Drawn {
                rows,
                unwritten: String::new(),
            });
        }
    }

    fn let_go(&self) {
        if let Some(tty) = &self.tty {
            tty.let_go();
        }
    }

    /// Writes `message` after what is not written yet, as much as the
    /// socket takes now.
    fn write_line(&mut self, message: &ToView) {
        let Ok(mut line) = serde_json::to_vec(message) else {
            return;
        };
        line.push(b'\n');
        if !self.unsent.is_empty() {
            self.unsent.extend_from_slice(&line);
            return;
        }
        let taken = send_now(&self.sink, &line);
        self.unsent = line.split_off(taken);
    }
}

impl EchoFrame {
    /// The echo's frame, `snap` for change `change`, written to every view
    /// waiting (on the terminal thread, before the change is told).
    pub(super) fn send_to_waiters(&self, snap: &Snapshot, change: u64) {
        if let Ok(mut waiters) = self.waiters.lock() {
            for waiter in waiters.iter_mut() {
                waiter.send(snap, change);
            }
        }
    }

    /// View `view` asks for its terminal's rows: told what was drawn on
    /// them, and let go of (if it is waiting here; else its task did
    /// both when it took it back).
    pub(super) fn tell(&self, view: u64) {
        if let Ok(mut waiters) = self.waiters.lock() {
            if let Some(waiter) = waiters.iter_mut().find(|w| w.view == view) {
                waiter.tell();
            }
        }
    }

    /// Change `change` was told: the views waiting that were not sent it
    /// are woken (after the change is told, so that a view lent after this
    /// sees it told, and one lent before is woken), and so are those whose
    /// socket did not take all of it: their task writes the rest.
    pub(super) fn wake_waiters(&self, change: u64) {
        if let Ok(waiters) = self.waiters.lock() {
            let woken = |w: &&EchoWaiter| w.sent != Some(change) || !w.unsent.is_empty();
            for waiter in waiters.iter().filter(woken) {
                waiter.wake.notify_one();
            }
        }
    }
}

/// Writes `bytes` to the socket `sink` without waiting: how many it took
/// (none on an error: the task's own write finds out what it is).
fn send_now(sink: &OwnedFd, bytes: &[u8]) -> usize {
    let mut done = 0;
    while done < bytes.len() {
        let rest = &bytes[done..];
        // SAFETY: `rest` is a valid buffer of `rest.len()` bytes for the
        // call; the descriptor is owned by `sink` for its duration.
        let n = unsafe {
            libc::send(
                sink.as_raw_fd(),
                rest.as_ptr().cast(),
                rest.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        match usize::try_from(n) {
            Ok(n) => done += n,
            Err(_) if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
            }
            Err(_) => break,
        }
    }
    done
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;
    use tickloop_proto::attach::{Attrs, Cursor, Line, Modes, Run, Scrollback};

    fn screen(rows: u16, cols: u16, text: &[&str]) -> Snapshot {
        let mut lines = vec![Line::default(); usize::from(rows)];
        for (line, t) in lines.iter_mut().zip(text) {
            *line = Line {
                runs: vec![Run {
                    text: (*t).to_string(),
                    attrs: Attrs::default(),
                }],
            };
        }
        Snapshot {
            cols,
            rows,
            cursor: Cursor {
                x: 0,
                y: u16::try_from(text.len()).unwrap_or(0),
                visible: true,
                shape: Default::default(),
            },
            alt_screen: false,
            modes: Modes::default(),
            title: String::new(),
            scroll: Scrollback::default(),
            lines,
        }
    }

    fn waiting(last: &Snapshot) -> (EchoFrame, UnixStream) {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        ours.set_nonblocking(true).expect("non-blocking");
        let echo = EchoFrame::default();
        let waiter = EchoWaiter::new(7, OwnedFd::from(ours), None, last.clone(), Arc::default());
        echo.waiters.lock().expect("waiters").push(waiter);
        (echo, theirs)
    }

    #[test]
    fn a_waiting_view_is_sent_the_rows_that_make_its_screen_the_echos() {
        let before = screen(4, 20, &["$ "]);
        let after = screen(4, 20, &["$ l"]);
        let (echo, mut view) = waiting(&before);
        echo.send_to_waiters(&after, 12);
        let back = echo.waiters.lock().expect("waiters").remove(0);
        assert_eq!(back.sent, Some(12));
        assert!(back.unsent.is_empty());
        assert_eq!(back.last, after);
        drop(back);
        let mut line = String::new();
        view.read_to_string(&mut line).expect("the frame");
        assert!(line.ends_with('\n'), "one whole line: {line:?}");
        let ToView::Rows(rows) = serde_json::from_str(line.trim_end()).expect("a frame") else {
            panic!("not rows: {line}");
        };
        assert_eq!(rows.rows.len(), 1, "only the changed row: {line}");
        let mut shown = before.clone();
        shown.apply(rows).expect("applies");
        assert_eq!(shown, after);
    }

    #[test]
    fn what_a_full_socket_did_not_take_is_kept_whole_for_the_views_task() {
        let before = screen(4, 20, &["$ "]);
        let (echo, mut view) = waiting(&before);
        // Fill the view's socket first.
        let sink = echo.waiters.lock().expect("waiters")[0]
            .sink
            .try_clone()
            .expect("dup");
        let filler = vec![b' '; 4096];
        let mut filled = 0;
        loop {
            let n = send_now(&sink, &filler);
            filled += n;
            if n < filler.len() {
                break;
            }
        }
        let text = "x".repeat(20);
        let after = screen(4, 20, &["$ ", &text, &text, &text]);
        echo.send_to_waiters(&after, 3);
        // Its task is woken to write the rest, though it was sent the change.
        let wake = echo.waiters.lock().expect("waiters")[0].wake.clone();
        echo.wake_waiters(3);
        assert!(woken(&wake), "the rest of the frame left unwritten");
        let back = echo.waiters.lock().expect("waiters").remove(0);
        assert_eq!(back.sent, Some(3));
        assert!(!back.unsent.is_empty(), "the socket was full");
        // What went after the filler and what was kept make the line whole.
        drop((back.sink, sink));
        let mut got = Vec::new();
        view.read_to_end(&mut got).expect("read");
        let mut line = got.split_off(filled);
        line.extend_from_slice(&back.unsent);
        let line = String::from_utf8(line).expect("utf-8");
        assert!(line.ends_with('\n'), "one whole line: {line:?}");
        let ToView::Rows(rows) = serde_json::from_str(line.trim_end()).expect("a frame") else {
            panic!("not rows: {line}");
        };
        let mut shown = before.clone();
        shown.apply(rows).expect("applies");
        assert_eq!(shown, after);
        assert_eq!(back.last, after);
    }

    /// Whether `wake` holds a wake-up now.
    fn woken(wake: &Notify) -> bool {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            tokio::select! {
                biased;
                _ = wake.notified() => true,
                _ = std::future::ready(()) => false,
            }
        })
    }

    #[test]
    fn a_waiting_view_is_woken_for_a_change_it_was_not_sent_and_only_then() {
        let before = screen(4, 20, &["$ "]);
        let (echo, _view) = waiting(&before);
        let wake = echo.waiters.lock().expect("waiters")[0].wake.clone();
        // Sent the echo of change 1: told of it, it is not woken.
        echo.send_to_waiters(&screen(4, 20, &["$ l"]), 1);
        echo.wake_waiters(1);
        assert!(!woken(&wake), "woken for the echo it was sent");
        // Change 2 was output it was not sent: woken.
        echo.wake_waiters(2);
        assert!(woken(&wake), "not woken for a change it was not sent");
    }

    /// A terminal for the view to lend: a PTY's slave, as the launcher
    /// opens it, and as the view holds its locks (its own description).
    fn lent_terminal() -> (Box<dyn portable_pty::MasterPty>, LentTty, std::fs::File) {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let pair = portable_pty::native_pty_system()
            .openpty(portable_pty::PtySize::default())
            .expect("a PTY");
        let path = pair.master.tty_name().expect("the slave's path");
        let view = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOCTTY)
            .open(&path)
            .expect("the view opens its terminal");
        let dev = view.metadata().expect("metadata").rdev();
        let tty = tickloop_proto::attach::ViewTty {
            path: path.to_string_lossy().into_owned(),
            dev,
        };
        let lent = LentTty::open(&tty).expect("the launcher opens it");
        (pair.master, lent, view)
    }

    /// The lines the view was sent so far.
    fn lines_sent(view: &mut UnixStream) -> Vec<ToView> {
        view.set_nonblocking(true).expect("non-blocking");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = view.read(&mut buf) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        String::from_utf8(got)
            .expect("utf-8")
            .lines()
            .map(|line| serde_json::from_str(line).expect("a message"))
            .collect()
    }

    /// Echoes drawn on the view's terminal are not sent one by one: the
    /// rows stay taken until the view asks, and it is told all at once.
    /// While the view wants its rows back, nothing is drawn: what was
    /// drawn is told first, then the change comes as rows.
    #[test]
    fn echoes_drawn_are_told_as_one_when_the_view_asks_for_its_rows() {
        use std::os::fd::AsFd;
        use tickloop_client::tty_turns::{self, Rows};
        let (_master, lent, view_lock) = lent_terminal();
        let (ours, mut view) = UnixStream::pair().expect("socket pair");
        ours.set_nonblocking(true).expect("non-blocking");
        let before = screen(4, 20, &["$ "]);
        let echo = EchoFrame::default();
        let waiter = EchoWaiter::new(
            7,
            OwnedFd::from(ours),
            Some(lent),
            before.clone(),
            Arc::default(),
        );
        echo.waiters.lock().expect("waiters").push(waiter);

        let typed = [screen(4, 20, &["$ l"]), screen(4, 20, &["$ ls"])];
        for (change, next) in (1..).zip(&typed) {
            echo.send_to_waiters(next, change);
        }
        assert!(lines_sent(&mut view).is_empty(), "told before it asked");
        let view_fd = view_lock.as_fd();
        assert!(
            !tty_turns::take(view_fd, Rows::ALL, false),
            "rows let go of"
        );

        echo.tell(7);
        let told = lines_sent(&mut view);
        let [ToView::Drawn { rows, unwritten }] = told.as_slice() else {
            panic!("not one drawn: {told:?}");
        };
        assert!(unwritten.is_empty());
        let mut shown = before.clone();
        shown.apply(rows.clone()).expect("applies");
        assert_eq!(shown, typed[1]);
        assert!(tty_turns::take(view_fd, Rows::ALL, false), "rows kept");
        tty_turns::give(view_fd, Rows::ALL);

        // Drawn again; then the view says it wants its rows.
        let more = [screen(4, 20, &["$ ls "]), screen(4, 20, &["$ ls -"])];
        echo.send_to_waiters(&more[0], 3);
        assert!(tty_turns::take(view_fd, Rows::WANTED, false));
        echo.send_to_waiters(&more[1], 4);
        let told = lines_sent(&mut view);
        let [ToView::Drawn { rows: drawn, .. }, ToView::Rows(sent)] = told.as_slice() else {
            panic!("not drawn then rows: {told:?}");
        };
        let mut shown = typed[1].clone();
        shown.apply(drawn.clone()).expect("applies");
        assert_eq!(shown, more[0], "what was drawn");
        shown.apply(sent.clone()).expect("applies");
        assert_eq!(shown, more[1]);
        assert!(tty_turns::take(view_fd, Rows::ALL, false), "rows let go of");
    }

    #[test]
    fn a_view_of_another_size_is_left_to_its_task() {
        let before = screen(4, 20, &["$ "]);
        let (echo, _view) = waiting(&before);
        echo.send_to_waiters(&screen(5, 20, &["$ l"]), 4);
        let back = echo.waiters.lock().expect("waiters").remove(0);
        assert_eq!(back.sent, None);
        assert_eq!(back.last, before);
    }
}
