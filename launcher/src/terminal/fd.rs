//! The descriptors the terminal thread polls: the PTY master's own
//! non-blocking `dup`, read and written with plain system calls, and the
//! thread's wake-up (an eventfd).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The terminal thread's wake-up: an eventfd it polls, rung by whoever
/// queued something for it.
pub(super) struct Wake(pub(super) OwnedFd);

impl Wake {
    pub(super) fn new() -> std::io::Result<Self> {
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Wake(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub(super) fn ring(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our eventfd; a full
        // counter (never, in practice) only means it is rung already.
        unsafe {
            libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8);
        }
    }

    /// Resets the count after a wake-up.
    pub(super) fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads 8 bytes into a valid u64 from our eventfd.
        unsafe {
            libc::read(self.0.as_raw_fd(), (&mut count as *mut u64).cast(), 8);
        }
    }
}

/// A non-blocking descriptor of our own for the PTY master `fd`.
pub(super) fn own_nonblocking_dup(fd: RawFd) -> std::io::Result<OwnedFd> {
    // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor or -1.
    let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `dup` is a fresh descriptor nobody else owns.
    let owned = unsafe { OwnedFd::from_raw_fd(dup) };
    // SAFETY: plain fcntl calls on a descriptor we own.
    let flags = unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_GETFL) };
    if flags < 0
        || unsafe { libc::fcntl(owned.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    Ok(owned)
}

/// One `read` of `fd` into `buf`.
pub(super) fn read_fd(fd: &OwnedFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: reads at most `buf.len()` bytes into `buf` from an open fd.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// How many bytes a read of the PTY master `fd` takes now without
/// waiting (`FIONREAD`); `None` when the kernel does not say. A `read`
/// (or a `poll`) of a master whose buffer is empty first waits for the
/// kernel's worker to move what the program wrote into it, 4 KiB at a
/// time; this looks only at what is there.
pub(super) fn readable_now(fd: &OwnedFd) -> Option<usize> {
    let mut count: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int to the valid `count`.
    let done = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut count) };
    if done < 0 {
        return None;
    }
    usize::try_from(count).ok()
}

/// One `write` of `bytes` to `fd`.
pub(super) fn write_fd(fd: &OwnedFd, bytes: &[u8]) -> std::io::Result<usize> {
    // SAFETY: writes at most `bytes.len()` bytes from `bytes` to an open fd.
    let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}
