//! How a view and its launcher take turns drawing on the view's terminal
//! (`tickloop_proto::attach::ViewTty`): open-file-description locks on the
//! terminal device, one byte per screen row (byte `r` stands for row `r`).
//! Each side opens the device itself, for writing (a write lock needs
//! it), so the locks are its own.
//!
//! The view holds every row whenever it draws, or shows anything of its
//! own that a launcher's drawing would spoil; while it waits showing the
//! Tick's screen as it is, it holds none, or only the last row while a
//! note covers it. The launcher draws only on rows it locks at once,
//! never waiting.

use std::os::fd::{AsRawFd, BorrowedFd};
use tickloop_proto::attach::{KEYS_LOCK_BYTE, ROWS_WANTED_LOCK_BYTE};

/// From row `first` to the end of the screen, or `rows` rows from it.
/// (Or the terminal's keys: [`Rows::KEYS`].)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rows {
    pub first: u16,
    /// None: every row from `first` on.
    pub count: Option<u16>,
}

impl Rows {
    /// Every row.
    pub const ALL: Rows = Rows {
        first: 0,
        count: None,
    };

    /// Not a row: the terminal's keys, which the launcher reads only
    /// while the view lent them (`tickloop_proto::attach::ViewEvent::LendKeys`),
    /// holding this lock as it reads; a view that is leaving takes it
    /// before it lets go of its terminal.
    pub const KEYS: Rows = Rows {
        first: KEYS_LOCK_BYTE,
        count: Some(1),
    };

    /// Not a row: the view wants its rows back. It holds this lock
    /// whenever it holds its rows and while it waits for them; the
    /// launcher draws only when it can take it (then lets go of it at
    /// once), and keeps the rows it drew on until the view asks for them
    /// (`tickloop_proto::attach::ViewEvent::TakeRows`).
    pub const WANTED: Rows = Rows {
        first: ROWS_WANTED_LOCK_BYTE,
        count: Some(1),
    };

    /// Rows `0..end`.
    pub fn above(end: u16) -> Rows {
        Rows {
            first: 0,
            count: Some(end),
        }
    }

    /// Rows `first..`.
    pub fn from(first: u16) -> Rows {
        Rows { first, count: None }
    }
}

/// Takes `rows` on `tty`, waiting for them (`wait`) or not: whether it
/// has them.
pub fn take(tty: BorrowedFd<'_>, rows: Rows, wait: bool) -> bool {
    let cmd = if wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    set(tty, rows, libc::F_WRLCK, cmd)
}

/// Whether another description holds any of `rows` on `tty` (one call,
/// taking nothing).
pub fn taken_by_another(tty: BorrowedFd<'_>, rows: Rows) -> bool {
    let mut lock = lock_of(rows, libc::F_WRLCK);
    // SAFETY: fcntl with a valid descriptor and a valid `flock`, which it
    // fills with the conflicting lock, if any.
    let asked = unsafe { libc::fcntl(tty.as_raw_fd(), libc::F_OFD_GETLK, &mut lock) } == 0;
    // An answer it could not give counts as taken: nothing is done.
    !asked || lock.l_type != libc::F_UNLCK as libc::c_short
}

/// Lets go of `rows` on `tty`.
pub fn give(tty: BorrowedFd<'_>, rows: Rows) {
    set(tty, rows, libc::F_UNLCK, libc::F_OFD_SETLK);
}

/// The lock of `kind` on `rows`.
fn lock_of(rows: Rows, kind: libc::c_int) -> libc::flock {
    // SAFETY: `flock` is plain data; every field the call reads is set.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = kind as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    lock.l_start = libc::off_t::from(rows.first);
    // Rows end below the keys' byte.
    lock.l_len = rows.count.map_or(
        libc::off_t::from(KEYS_LOCK_BYTE) - libc::off_t::from(rows.first),
        libc::off_t::from,
    );
    // Open-file-description locks need `l_pid` 0.
    lock.l_pid = 0;
    lock
}

fn set(tty: BorrowedFd<'_>, rows: Rows, kind: libc::c_int, cmd: libc::c_int) -> bool {
    let lock = lock_of(rows, kind);
    loop {
        // SAFETY: fcntl with a valid descriptor and a valid `flock`.
        if unsafe { libc::fcntl(tty.as_raw_fd(), cmd, &lock) } == 0 {
            return true;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::{File, OpenOptions};
    use std::os::fd::AsFd;
    use std::os::unix::fs::OpenOptionsExt;

    /// A terminal device opened twice, as a view and a launcher open it.
    fn twice() -> (File, File, File) {
        let (mut master, mut slave) = (-1, -1);
        // SAFETY: openpty fills two descriptors; the other pointers may be
        // null.
        let ok = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        assert_eq!(ok, 0);
        use std::os::fd::FromRawFd;
        // SAFETY: just opened, owned by nothing else.
        let (master, slave) = unsafe { (File::from_raw_fd(master), File::from_raw_fd(slave)) };
        let path = std::fs::read_link(format!("/proc/self/fd/{}", slave.as_raw_fd()))
            .expect("the slave's path");
        let open = || {
            OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(&path)
                .expect("open the slave")
        };
        drop(slave);
        (master, open(), open())
    }

    #[test]
    fn rows_the_view_holds_are_not_taken_and_the_others_are() {
        let (_master, view, launcher) = twice();
        assert!(take(view.as_fd(), Rows::ALL, true));
        assert!(!take(launcher.as_fd(), Rows::above(5), false));
        // A note covers the last of 10 rows: the view keeps it alone.
        give(view.as_fd(), Rows::above(9));
        assert!(!take(launcher.as_fd(), Rows::ALL, false));
        assert!(!take(launcher.as_fd(), Rows::above(10), false));
        assert!(take(launcher.as_fd(), Rows::above(9), false));
        // The view waits for them back; the launcher lets go.
        give(launcher.as_fd(), Rows::above(9));
        give(view.as_fd(), Rows::ALL);
        assert!(take(launcher.as_fd(), Rows::ALL, false));
        assert!(!take(view.as_fd(), Rows::from(3), false));
        give(launcher.as_fd(), Rows::ALL);
        assert!(take(view.as_fd(), Rows::ALL, false));
        // A closed description lets go of all it held.
        drop(view);
        assert!(take(launcher.as_fd(), Rows::ALL, false));
    }

    /// The keys are apart from every row: a view that holds every row may
    /// lend its keys, and a view that lent every row keeps its keys.
    #[test]
    fn the_keys_are_taken_apart_from_the_rows() {
        let (_master, view, launcher) = twice();
        assert!(take(view.as_fd(), Rows::ALL, true));
        assert!(take(view.as_fd(), Rows::KEYS, true));
        assert!(!take(launcher.as_fd(), Rows::KEYS, false));
        give(view.as_fd(), Rows::KEYS);
        assert!(take(launcher.as_fd(), Rows::KEYS, false), "keys lent");
        assert!(!take(launcher.as_fd(), Rows::from(3), false), "no row");
        give(launcher.as_fd(), Rows::KEYS);
        assert!(!taken_by_another(launcher.as_fd(), Rows::KEYS));
        assert!(taken_by_another(launcher.as_fd(), Rows::from(3)));
        assert!(!taken_by_another(view.as_fd(), Rows::from(3)), "its own");
        give(view.as_fd(), Rows::ALL);
        assert!(take(view.as_fd(), Rows::KEYS, false));
        assert!(take(launcher.as_fd(), Rows::ALL, false), "rows lent");
        assert!(!take(launcher.as_fd(), Rows::KEYS, false), "not the keys");
    }
}
