//! The view's terminal lent to the launcher for echoes
//! ([`tickloop_proto::attach::ViewTty`]): the launcher draws a keystroke's
//! echo on it itself, as tmux's server draws on its client's terminal, so
//! the view is not woken on the echo's way. The two take turns with an
//! exclusive `flock` on the device: the view holds it except while it
//! waits with the Tick's screen shown cell for cell and nothing read that
//! it has not drawn; the launcher draws only when it gets it at once.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use tickloop_proto::attach::ViewTty;

/// The lock the view takes turns with the launcher on.
pub(super) struct TtyLend {
    /// The device opened by its path: a file description of its own, so
    /// that the lock is this view's alone (the terminal's other
    /// descriptors are shared with the shell that started the view).
    lock: File,
    /// The view holds the lock.
    held: bool,
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
                .read(true)
                .custom_flags(libc::O_NOCTTY | libc::O_CLOEXEC)
                .open(&path)
                .ok()?;
            (rdev(&file) == Some(dev)).then_some((path, file))
        });
        let (path, lock) = path?;
        let mut lend = TtyLend { lock, held: false };
        if !lend.hold() {
            return None;
        }
        Some((lend, ViewTty { path, dev }))
    }

    /// Takes the terminal back (waits the moment the launcher may be
    /// drawing); whether the view holds it now.
    pub(super) fn hold(&mut self) -> bool {
        if !self.held {
            // SAFETY: flock on a descriptor owned by `self.lock`.
            self.held = unsafe { libc::flock(self.lock.as_raw_fd(), libc::LOCK_EX) } == 0;
        }
        self.held
    }

    /// Lends the terminal to the launcher until [`Self::hold`].
    pub(super) fn lend(&mut self) {
        if self.held {
            // SAFETY: as above.
            unsafe { libc::flock(self.lock.as_raw_fd(), libc::LOCK_UN) };
            self.held = false;
        }
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
