//! The terminal thread's loop: messages first, then the input the master
//! takes now, then a few chunks of output, read ahead of the emulator; it
//! sleeps in `poll` when there is nothing to do.

use super::fd::{read_fd, Wake};
use super::keeper::{new_emulator, Keeper, Published};
use super::messages::{wants_fresh_output, EmuMsg, OutputChunk};
use super::pty_input::{AnswerWriter, PtyWriter};
use super::quiet::RELEASE_AFTER;
use super::{START_COLS, START_ROWS};
use crate::emulator::AnswerColors;
use crate::recorder::Recorder;
use crate::shell_watch::ShellWatch;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use tokio::sync::mpsc;

/// What one read of the PTY master takes at most. Linux hands a PTY's
/// output over in pieces of at most 4 KiB (the line discipline's buffer),
/// so a larger buffer only costs memory in every launcher. The buffer is
/// given back when the screen goes quiet and made again for the next
/// output ([`ReadAhead::fill`]).
pub(super) const READ_CHUNK: usize = 16 * 1024;

/// The most output applied in a row before the terminal thread looks at
/// its messages again (a flood must not keep a snapshot waiting).
pub(super) const READS_PER_TURN: usize = 4;
/// The most output read ahead of the emulator ([`ReadAhead`]); past it
/// the Tick waits for room in the PTY, as a real terminal makes it. Each
/// byte read ahead is a byte the screen shows late when a flood ends: at
/// 1 MiB the last frame came some 60 ms after the program's last write
/// (about what the emulator takes for a MiB); 128 KiB is still eight
/// reads of the PTY for the Tick to write into while one is applied.
pub(super) const READ_AHEAD: usize = 128 * 1024;

/// Everything the terminal thread owns.
pub(super) struct TerminalThread {
    pub(super) rx: mpsc::Receiver<EmuMsg>,
    /// Input for the Tick, queued (the direct path of keystrokes aside).
    pub(super) input: Receiver<Vec<u8>>,
    pub(super) writer: Arc<PtyWriter>,
    pub(super) answers: AnswerWriter,
    pub(super) colors: AnswerColors,
    pub(super) published: Published,
    pub(super) history: usize,
    pub(super) recorder: Arc<Recorder>,
    /// A shell's commands and agents' waits, read from the output.
    pub(super) shell: ShellWatch,
    /// The most bytes of images the screen keeps.
    pub(super) image_limit: u64,
}

/// What the terminal thread is writing: a chunk, and how much of it went.
pub(super) struct Writing {
    pub(super) bytes: Vec<u8>,
    pub(super) done: usize,
}

impl TerminalThread {
    pub(super) fn run(self) {
        let TerminalThread {
            mut rx,
            input,
            writer,
            answers,
            colors,
            published,
            history,
            recorder,
            shell,
            image_limit,
        } = self;
        let size = (usize::from(START_ROWS), usize::from(START_COLS));
        let mut keeper = Keeper {
            emulator: new_emulator(size, history, &answers, &colors),
            size,
            history,
            answers,
            colors,
            published,
            recorder,
            shell,
            images: crate::images::Images::new(image_limit),
            image_limit,
            panics: 0,
        };
        let mut buf = vec![0u8; READ_CHUNK];
        let mut ahead = ReadAhead::default();
        let mut writing: Option<Writing> = None;
        // The master stopped giving output for good (an error other than
        // "nothing now"); the thread goes on serving its messages.
        let mut reading = true;
        let master = writer.master.clone();
        // When the emulator last had anything to do: the screen's cells
        // are put away once it has been quiet for the quiet time, after a
        // read as after output (a read wakes no quiet task of its own).
        let mut last_applied = std::time::Instant::now();
        loop {
            // What the rest of the launcher asked, in order.
            loop {
                match rx.try_recv() {
                    Ok(msg) => {
                        if wants_fresh_output(&msg) {
                            if reading {
                                reading = ahead.fill(&master, &writer, &mut buf, usize::MAX);
                            }
                            while let Some(chunk) = ahead.pop() {
                                keeper.apply(EmuMsg::Output(chunk));
                            }
                        }
                        let quiet = matches!(msg, EmuMsg::ReleaseSpare);
                        keeper.apply(msg);
                        last_applied = std::time::Instant::now();
                        if quiet {
                            // The read buffer too: an idle launcher holds
                            // none (the next output makes it again).
                            buf = Vec::new();
                            // Also what the launcher freed since the last
                            // quiet time (the descriptor's schemas compiled
                            // once to check them, for one), and this
                            // thread's stack below the loop: called here,
                            // not deeper, so that little of it is kept.
                            super::quiet::return_free_memory();
                        }
                    }
                    Err(mpsc::error::TryRecvError::Empty) => break,
                    // The terminal is dropped: the thread ends.
                    Err(mpsc::error::TryRecvError::Disconnected) => return,
                }
            }
            // Input for the Tick, as far as the master takes it now.
            loop {
                if writing.is_none() {
                    writing = input
                        .try_recv()
                        .ok()
                        .map(|bytes| Writing { bytes, done: 0 });
                }
                let Some(chunk) = writing.as_mut() else {
                    break;
                };
                match writer.write_some(&chunk.bytes[chunk.done..]) {
                    Ok(n) => chunk.done += n,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    // The terminal is gone: what was queued is dropped,
                    // and senders never block.
                    Err(_) => chunk.done = chunk.bytes.len(),
                }
                if chunk.done >= chunk.bytes.len() {
                    writing = None;
                    writer.queued.fetch_sub(1, Ordering::AcqRel);
                }
            }
            // Output, a few chunks at a time, the master drained before
            // each: the Tick goes on writing (on another core) while a
            // chunk is applied, instead of waiting for room in the PTY.
            for _ in 0..READS_PER_TURN {
                if reading {
                    reading = ahead.fill(&master, &writer, &mut buf, READ_AHEAD);
                }
                let Some(chunk) = ahead.pop() else {
                    break;
                };
                keeper.apply(EmuMsg::Output(chunk));
                last_applied = std::time::Instant::now();
            }
            if ahead.is_empty() {
                keeper.published.tell_drained();
                let mut timeout = None;
                if !keeper.emulator.is_parked() {
                    let quiet_for = last_applied.elapsed();
                    if quiet_for >= RELEASE_AFTER {
                        keeper.emulator.park();
                        super::quiet::return_free_memory();
                    } else {
                        timeout = Some(RELEASE_AFTER - quiet_for);
                    }
                }
                wait(&master, &writer.wake, reading, writing.is_some(), timeout);
            }
        }
    }
}

/// Output read from the master and not applied yet, oldest first, with
/// the time each chunk was read. The terminal thread reads ahead of the
/// emulator so that the PTY's buffer (about 68 KiB on Linux) never fills
/// while a chunk is applied: a Tick that floods its terminal writes on one
/// core while this thread applies on the other, as it did when a reader
/// thread of its own drained the master.
#[derive(Default)]
pub(super) struct ReadAhead {
    pub(super) chunks: std::collections::VecDeque<OutputChunk>,
    pub(super) bytes: usize,
}

impl ReadAhead {
    /// Reads the master until it has nothing more now or `limit` bytes are
    /// held. False when the master will give no more output.
    /// Output read after input was written answers that input (see
    /// [`PtyWriter::unanswered`]). An empty `buf` (given back at quiet) is
    /// made again only when the master has output.
    pub(super) fn fill(
        &mut self,
        master: &OwnedFd,
        writer: &PtyWriter,
        buf: &mut Vec<u8>,
        limit: usize,
    ) -> bool {
        if buf.is_empty() {
            if !has_output(master) {
                return true;
            }
            *buf = vec![0; READ_CHUNK];
        }
        while self.bytes < limit {
            let written = writer.written.load(Ordering::Acquire);
            match read_fd(master, buf) {
                Ok(0) => return false,
                Ok(n) => {
                    writer.answered.fetch_max(written, Ordering::AcqRel);
                    self.chunks.push_back(OutputChunk {
                        bytes: buf[..n].to_vec(),
                        read_at: std::time::Instant::now(),
                        input_before: written,
                    });
                    self.bytes += n;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// The oldest chunk not applied yet.
    pub(super) fn pop(&mut self) -> Option<OutputChunk> {
        let chunk = self.chunks.pop_front()?;
        self.bytes -= chunk.bytes.len();
        if self.chunks.is_empty() && self.chunks.capacity() > 16 {
            // A flood's queue is not kept for the quiet after it.
            self.chunks = std::collections::VecDeque::new();
        }
        Some(chunk)
    }

    pub(super) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// Whether the master has output (or news of its end) to read now.
fn has_output(master: &OwnedFd) -> bool {
    let mut fds = [libc::pollfd {
        fd: master.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    }];
    // SAFETY: `fds` is a valid array of one pollfd for the call; a zero
    // timeout never blocks.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, 0) };
    // An error of poll itself: let the read find out what it is.
    ready != 0
}

/// Sleeps until the master has output (while `reading`), can take input
/// (while `writing`), the wake-up rings, or `timeout` (if any) passes.
pub(super) fn wait(
    master: &OwnedFd,
    wake: &Wake,
    reading: bool,
    writing: bool,
    timeout: Option<std::time::Duration>,
) {
    let mut events = 0;
    if reading {
        events |= libc::POLLIN;
    }
    if writing {
        events |= libc::POLLOUT;
    }
    let mut fds = [
        libc::pollfd {
            // Not polled at all when nothing is read or written: a hung-up
            // master would report it on every call.
            fd: if events == 0 { -1 } else { master.as_raw_fd() },
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: wake.0.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let timeout_ms = timeout.map_or(-1, |t| {
        // Rounded up: a poll that wakes a little early only loops again.
        i32::try_from(t.as_millis().saturating_add(1)).unwrap_or(i32::MAX)
    });
    // SAFETY: `fds` is a valid array of two pollfd for the call.
    unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
    if fds[1].revents != 0 {
        wake.clear();
    }
}
