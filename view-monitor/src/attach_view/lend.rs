//! The view's terminal lent to the launcher for echoes
//! ([`tickloop_proto::attach::ViewTty`]): the launcher draws a keystroke's
//! echo on it itself, as tmux's server draws on its client's terminal, so
//! the view is not woken on the echo's way. The two take turns with locks
//! on the device's rows ([`tickloop_client::tty_turns`]): the view holds
//! them all except while it waits with the Tick's screen shown cell for
//! cell (but for a note on the last row, which it keeps) and nothing read
//! that it has not drawn; the launcher draws only on rows it gets at once.
//! Here too the state of the terminal's keys lent to the launcher
//! ([`KeysLend`]; how they are lent and given back: [`super::keys`]).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};
use tickloop_client::tty_turns::{self, Rows};
use tickloop_proto::attach::ViewTty;

/// The lock the view takes turns with the launcher on.
pub(super) struct TtyLend {
    /// The device opened by its path, for writing: a file description of
    /// its own, so that the locks are this view's alone (the terminal's
    /// other descriptors are shared with the shell that started the view).
    lock: File,
    /// What the launcher may draw on now: nothing (the view holds every
    /// row), every row, or all but the last (a note covers it).
    lent: Lent,
}

/// What the view lends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lent {
    Nothing,
    All,
    /// Every row above this one.
    Above(u16),
}

impl TtyLend {
    /// The terminal `tty` (the view's `/dev/tty`) to lend, held: its path
    /// is the one of the view's standard descriptors on that device. None
    /// when it has no such path or cannot be locked.
    pub(super) fn offer(tty: &File) -> Option<(TtyLend, ViewTty)> {
        let dev = device(tty)?;
        let path = (0..3).find_map(|fd| {
            let path = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
            let path = path.to_str()?.to_string();
            let file = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
                .open(&path)
                .ok()?;
            (rdev(&file) == Some(dev)).then_some((path, file))
        });
        let (path, lock) = path?;
        let held = [Rows::WANTED, Rows::ALL, Rows::KEYS];
        if !held
            .iter()
            .all(|rows| tty_turns::take(lock.as_fd(), *rows, true))
        {
            return None;
        }
        let lend = TtyLend {
            lock,
            lent: Lent::Nothing,
        };
        Some((lend, ViewTty { path, dev }))
    }

    /// Takes the terminal back: says it wants its rows (the launcher draws
    /// no more), and when the launcher kept some it drew echoes on, asks
    /// for them (`ask`: the launcher tells what it drew, then lets go) and
    /// waits; whether the view holds it now.
    pub(super) fn hold(&mut self, ask: impl FnOnce()) -> bool {
        if self.lent != Lent::Nothing {
            let lock = self.lock.as_fd();
            if !tty_turns::take(lock, Rows::WANTED, true) {
                return false;
            }
            if !tty_turns::take(lock, Rows::ALL, false) {
                ask();
                if !tty_turns::take(lock, Rows::ALL, true) {
                    return false;
                }
            }
            self.lent = Lent::Nothing;
        }
        true
    }

    /// Lends `lent` to the launcher until [`Self::hold`] (from a view that
    /// holds it all).
    pub(super) fn lend(&mut self, lent: Lent) {
        let lock = self.lock.as_fd();
        match lent {
            Lent::Nothing => return,
            Lent::All => tty_turns::give(lock, Rows::ALL),
            Lent::Above(row) => tty_turns::give(lock, Rows::above(row)),
        }
        tty_turns::give(lock, Rows::WANTED);
        self.lent = lent;
    }

    /// Lets go of the terminal's keys: the launcher may read them
    /// ([`super::keys`]).
    pub(super) fn give_keys(&mut self) {
        tty_turns::give(self.lock.as_fd(), Rows::KEYS);
    }

    /// Takes the terminal's keys back (waits the moment the launcher may
    /// be reading them); whether the view holds them now.
    pub(super) fn take_keys(&mut self) -> bool {
        tty_turns::take(self.lock.as_fd(), Rows::KEYS, true)
    }
}

/// The terminal device `tty` is, whichever path opened it (`/dev/tty`
/// names the controlling terminal: `TIOCGDEV` says which).
fn device(tty: &File) -> Option<u64> {
    let mut dev: libc::c_uint = 0;
    // SAFETY: TIOCGDEV writes one unsigned int, from a valid fd.
    if unsafe { libc::ioctl(tty.as_raw_fd(), libc::TIOCGDEV, &mut dev) } != 0 {
        return None;
    }
    // The kernel's `new_encode_dev`, made the C library's `dev_t`.
    let major = (dev & 0xf_ff00) >> 8;
    let minor = (dev & 0xff) | ((dev >> 12) & 0xf_ff00);
    Some(libc::makedev(major, minor))
}

/// The device number of the character device `file` is.
fn rdev(file: &File) -> Option<u64> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let meta = file.metadata().ok()?;
    meta.file_type().is_char_device().then(|| meta.rdev())
}

/// How long the view keeps its keys after the launcher gave back one it
/// does not type.
pub(super) const KEEP_AFTER_GIVEN_BACK: Duration = Duration::from_secs(1);

/// Whose the terminal's keys are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keys {
    /// The view's: it reads its terminal.
    Held,
    /// The launcher's, lending number `n`.
    Lent(u64),
    /// The launcher's, asked back.
    Asked(u64),
}

/// The view's side of lending its keys ([`super::keys`]).
pub(super) struct KeysLend {
    pub(super) keys: Keys,
    /// The next lending's number.
    pub(super) next: u64,
    /// No lending before then (keys given back with bytes in them).
    pub(super) not_before: Option<Instant>,
    /// The launcher cannot read this terminal: it is not lent again.
    pub(super) refused: bool,
}

impl KeysLend {
    pub(super) fn new() -> KeysLend {
        KeysLend {
            keys: Keys::Held,
            next: 1,
            not_before: None,
            refused: false,
        }
    }

    /// Whether the view reads its terminal now.
    pub(super) fn reads_tty(&self) -> bool {
        self.keys == Keys::Held
    }

    /// When the view may lend its keys again, if it waits for that.
    pub(super) fn deadline(&self) -> Option<Instant> {
        self.not_before.filter(|_| self.keys == Keys::Held)
    }
}
