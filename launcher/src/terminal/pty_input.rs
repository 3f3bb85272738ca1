//! Input for the Tick: writing to the PTY master, shared by the terminal
//! thread (what may block, queued) and the direct path of a view's
//! keystroke ([`super::TerminalHandle::view_input`]), with the counts that
//! tell whether typed input has had its answer yet.

use super::fd::{write_fd, Wake};
use super::InputError;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// Writing to the PTY master, shared by the terminal thread and the direct
/// path of keystrokes ([`super::TerminalHandle::view_input`]).
pub(super) struct PtyWriter {
    /// The master (non-blocking), this launcher's own descriptor of it.
    pub(super) master: Arc<OwnedFd>,
    /// Held while writing, so two writers never interleave.
    pub(super) writing: Mutex<()>,
    /// Chunks queued for the terminal thread and not yet written.
    pub(super) queued: AtomicUsize,
    /// Bytes written to the master so far.
    pub(super) written: AtomicU64,
    /// Of [`PtyWriter::written`], how many were written before some output
    /// was read: the terminal (its echo) or the program has answered them.
    pub(super) answered: AtomicU64,
    /// Bytes taken for writing so far (queued or written), in the order
    /// they are written: a place in [`PtyWriter::written`]'s count.
    pub(super) accepted: AtomicU64,
    /// Where the last input holding an Enter (CR or LF) ends, in
    /// [`PtyWriter::accepted`]'s count: output read once `written` passed
    /// it may be the program's answer to that Enter.
    pub(super) enter_end: AtomicU64,
    /// The slave, opened again to ask how much input the Tick left unread.
    pub(super) slave: Option<File>,
    /// Rung after queueing, so the terminal thread looks.
    pub(super) wake: Arc<Wake>,
}

/// The longest input written straight from a view's socket task.
pub(super) const DIRECT_WRITE_MAX: usize = 64;

/// The most chunks of input queued for the PTY master (counted in
/// [`PtyWriter::queued`]; the channel itself is unbounded, so that it
/// allocates its slots as they fill, not 8 KiB up front in every launcher).
pub(super) const WRITER_QUEUE: usize = 256;

/// Queues `bytes` for the terminal thread; never blocks.
pub(super) fn queue_input(
    tx: &Sender<Vec<u8>>,
    writer: &PtyWriter,
    bytes: Vec<u8>,
) -> Result<(), InputError> {
    let (len, enter) = (bytes.len(), holds_enter(&bytes));
    enqueue(tx, writer, bytes)?;
    writer.accept(len, enter);
    Ok(())
}

/// Whether input holds an Enter (CR, or LF as ctrl+J and `\n` type it).
pub(super) fn holds_enter(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| matches!(b, b'\r' | b'\n'))
}

/// Queues `bytes`, taken for writing already, for the terminal thread.
pub(super) fn enqueue(
    tx: &Sender<Vec<u8>>,
    writer: &PtyWriter,
    bytes: Vec<u8>,
) -> Result<(), InputError> {
    if writer.queued.fetch_add(1, Ordering::AcqRel) >= WRITER_QUEUE {
        writer.queued.fetch_sub(1, Ordering::AcqRel);
        return Err(InputError::Full(WRITER_QUEUE));
    }
    match tx.send(bytes) {
        Ok(()) => {
            writer.wake.ring();
            Ok(())
        }
        Err(_) => {
            writer.queued.fetch_sub(1, Ordering::AcqRel);
            Err(InputError::Gone)
        }
    }
}

impl PtyWriter {
    /// `len` bytes are taken for writing after all taken before;
    /// `enter` if they hold an Enter.
    pub(super) fn accept(&self, len: usize, enter: bool) {
        let end = self.accepted.fetch_add(len as u64, Ordering::AcqRel) + len as u64;
        if enter {
            self.enter_end.fetch_max(end, Ordering::AcqRel);
        }
    }

    /// One write of what the master takes now (the terminal thread's).
    pub(super) fn write_some(&self, bytes: &[u8]) -> std::io::Result<usize> {
        let _writing = self
            .writing
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?;
        let n = write_fd(&self.master, bytes)?;
        self.written.fetch_add(n as u64, Ordering::AcqRel);
        Ok(n)
    }

    /// Whether input typed so far has had no answer yet: some is still
    /// queued, or no output was read since it was written. (Output read
    /// after a write may have been on its way before it; a caller that
    /// must see the program's answer waits for quiet after this turns
    /// false.)
    pub(super) fn unanswered(&self) -> bool {
        self.queued.load(Ordering::Acquire) != 0
            || self.written.load(Ordering::Acquire) > self.answered.load(Ordering::Acquire)
    }

    /// Writes `bytes` now, keeping the order: short, nothing queued for
    /// the terminal thread (which is not writing either: it holds the lock
    /// while it does), and the Tick has read all its input. What the master
    /// does not take at once is queued, first in line. Whether it was
    /// written or queued. (In canonical mode FIONREAD counts whole lines
    /// only; with none waiting, the line discipline keeps taking input
    /// into a full line.)
    pub(super) fn write_now(&self, bytes: &[u8], tx: &Sender<Vec<u8>>) -> bool {
        if bytes.len() > DIRECT_WRITE_MAX || self.queued.load(Ordering::Acquire) != 0 {
            return false;
        }
        let Some(slave) = &self.slave else {
            return false;
        };
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer; the slave
        // stays open while `self` lives.
        if unsafe { libc::ioctl(slave.as_raw_fd(), libc::FIONREAD, &mut unread) } != 0
            || unread != 0
        {
            return false;
        }
        let Ok(_writing) = self.writing.try_lock() else {
            return false;
        };
        if self.queued.load(Ordering::Acquire) != 0 {
            return false;
        }
        // Counted before it is written: an Enter in it is known before
        // any output read after the write could be taken for its answer.
        self.accept(bytes.len(), holds_enter(bytes));
        let written = loop {
            match write_fd(&self.master, bytes) {
                Ok(n) => {
                    self.written.fetch_add(n as u64, Ordering::AcqRel);
                    break n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break 0,
                // A failed write means the terminal is gone.
                Err(_) => break bytes.len(),
            }
        };
        if written < bytes.len() {
            // Queued while the lock is held: the terminal thread writes it
            // before anything queued after. Dropped (a full queue), it was
            // never taken.
            let rest = bytes.len() - written;
            if enqueue(tx, self, bytes[written..].to_vec()).is_err() {
                self.accepted.fetch_sub(rest as u64, Ordering::AcqRel);
            }
        }
        true
    }
}

/// The emulator's answers to terminal queries, queued for writing.
/// Dropped when the queue is full: the emulator must never wait on the Tick.
#[derive(Clone)]
pub(super) struct AnswerWriter {
    pub(super) tx: Sender<Vec<u8>>,
    pub(super) writer: Arc<PtyWriter>,
}

impl Write for AnswerWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = queue_input(&self.tx, &self.writer, buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
