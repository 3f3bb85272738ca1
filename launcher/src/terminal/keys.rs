//! The keys of a view's terminal, read by the terminal thread while the
//! view lent them ([`tickloop_proto::attach::ViewEvent::LendKeys`]), as
//! tmux's server reads its client's terminal: a keystroke reaches the Tick
//! with no hop through the view or the runtime's thread. What is typed as
//! it is ([`tickloop_proto::attach::typed_as_is`]) is written to the
//! master; from the first other byte on (an escape sequence, the view's
//! prefix key, a longer character) the keys go back to the view with what
//! was read ([`tickloop_proto::attach::ToView::KeysBack`]), and the view
//! reads its terminal again. The lock on the keys' byte
//! ([`tickloop_client::tty_turns::Rows::KEYS`]) is held for each read: a
//! view that is leaving takes it (after shutting its socket) before it
//! gives its terminal back to the person's shell, so no key typed for the
//! shell is read here.

use super::direct::{hung_up, open_view_tty};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use tickloop_client::tty_turns::{self, Rows};
use tickloop_proto::attach::{typed_as_is, ViewTty};
use tokio::sync::mpsc::UnboundedSender;

/// Keys given back: the lending's number and the bytes read from the
/// first one not typed as it is on.
pub type KeysBack = (u64, Vec<u8>);

/// What a view typed for the Tick: called on the terminal thread after
/// the keys are read, before they are written (the view becomes the
/// active one; its next frame is an echo).
pub type OnTyped = Box<dyn Fn() + Send>;

/// A view's terminal whose keys the terminal thread reads.
pub struct LentKeys {
    /// The view's number at its hub.
    view: u64,
    /// The view's number for this lending.
    lend: u64,
    /// The view's prefix key's byte: the view's, never typed here.
    prefix: u8,
    /// The device, opened by the launcher (its own file description, for
    /// the lock), read and written, non-blocking.
    tty: OwnedFd,
    /// The view's socket: once the view hung up, nothing more is read.
    socket: OwnedFd,
    /// Where the keys go back: the view's task sends them.
    back: UnboundedSender<KeysBack>,
    on_typed: OnTyped,
}

impl LentKeys {
    /// The keys of `tty`, lent by view `view` (lending `lend`); none when
    /// the device cannot be opened as the view named it.
    pub fn open(
        view: u64,
        lend: u64,
        prefix: u8,
        tty: &ViewTty,
        socket: OwnedFd,
        back: UnboundedSender<KeysBack>,
        on_typed: OnTyped,
    ) -> Option<LentKeys> {
        Some(LentKeys {
            view,
            lend,
            prefix,
            tty: open_view_tty(tty, libc::O_RDWR)?,
            socket,
            back,
            on_typed,
        })
    }

    pub(super) fn view(&self) -> u64 {
        self.view
    }

    pub(super) fn lend(&self) -> u64 {
        self.lend
    }

    /// What the terminal thread polls: the device for keys, the socket for
    /// the view's hang-up.
    pub(super) fn pollfds(&self) -> [libc::pollfd; 2] {
        [
            libc::pollfd {
                fd: self.tty.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.socket.as_raw_fd(),
                events: libc::POLLRDHUP,
                revents: 0,
            },
        ]
    }

    /// Gives the keys back with `bytes` (the view reads its terminal
    /// again).
    pub(super) fn give_back(self, bytes: Vec<u8>) {
        let _ = self.back.send((self.lend, bytes));
    }

    /// Reads what was typed, while the view lets go of its keys and has
    /// not hung up: what is typed as it is goes to `typed`; from the first
    /// other byte on, the keys go back to the view, with that byte and
    /// the rest. `newline_mode`: the Tick asked Enter to send CR LF.
    pub(super) fn read(&self, newline_mode: bool, typed: &mut Vec<u8>) -> Read {
        if !tty_turns::take(self.tty.as_fd(), Rows::KEYS, false) {
            // The view took them: it is leaving.
            return Read::Left;
        }
        let read = self.read_locked(newline_mode, typed);
        tty_turns::give(self.tty.as_fd(), Rows::KEYS);
        read
    }

    fn read_locked(&self, newline_mode: bool, typed: &mut Vec<u8>) -> Read {
        if hung_up(&self.socket) {
            return Read::Left;
        }
        let mut buf = [0u8; 1024];
        let start = typed.len();
        loop {
            // SAFETY: reads at most `buf.len()` bytes into `buf` from an
            // open descriptor owned by `self`.
            let n = unsafe { libc::read(self.tty.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            let n = match usize::try_from(n) {
                // The terminal is gone: the view finds out itself.
                Ok(0) => return Read::Back(Vec::new()),
                Ok(n) => n,
                Err(_) => match std::io::Error::last_os_error().kind() {
                    std::io::ErrorKind::Interrupted => continue,
                    std::io::ErrorKind::WouldBlock => break,
                    _ => return Read::Back(Vec::new()),
                },
            };
            let bytes = &buf[..n];
            let plain = bytes
                .iter()
                .position(|b| !typed_as_is(*b, Some(self.prefix), newline_mode))
                .unwrap_or(n);
            typed.extend_from_slice(&bytes[..plain]);
            if plain < n {
                self.typed_if_any(typed.len() > start);
                return Read::Back(bytes[plain..].to_vec());
            }
            // A terminal gives what it has: a short read took it all (what
            // comes after is polled for).
            if n < buf.len() {
                break;
            }
        }
        self.typed_if_any(typed.len() > start);
        Read::Kept
    }

    fn typed_if_any(&self, any: bool) {
        if any {
            (self.on_typed)();
        }
    }
}

/// What one read of lent keys found.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Read {
    /// Nothing, or only keys typed as they are: the keys stay lent.
    Kept,
    /// A byte the view reads: the keys go back, with these bytes.
    Back(Vec<u8>),
    /// The view hung up or took its keys: nothing is sent back.
    Left,
}
