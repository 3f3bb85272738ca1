//! The terminal thread's loop: messages first, then the input the master
//! takes now, then a few chunks of output, read ahead of the emulator; it
//! sleeps in `poll` when there is nothing to do.

use super::fd::{read_fd, readable_now, Wake};
use super::keeper::{new_emulator, Keeper, Published};
use super::keys::{LentKeys, Read};
use super::messages::{fresh_output, EmuMsg, Fresh, OutputChunk};
use super::pty_input::{queue_input, AnswerWriter, PtyWriter};
use super::quiet::{COMPACT_EVERY, PARK_AFTER, RELEASE_AFTER};
use super::{START_COLS, START_ROWS};
use crate::emulator::AnswerColors;
use crate::recorder::Recorder;
use crate::shell_watch::ShellWatch;
use alacritty_terminal::term::TermMode;
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

/// The most output the kernel holds between a Tick's writes and the
/// master's reads: bytes the Tick has written (its `write` returned) that
/// the master has not given yet. A message that must see every byte
/// written before it ([`Fresh::Written`]) reads at most this much more:
/// past it a flood's reads only go on in step with the writer, 4 KiB per
/// hand-over of the kernel, for as long as it writes (a `screen` in a
/// flood took up to 100 ms so, and slowed the flood). Linux 6.18 holds
/// about 15 KiB there (measured: a raw slave takes 15,360 bytes with
/// nobody reading), older kernels 68 KiB.
pub(super) const KERNEL_HOLDS_AT_MOST: usize = 256 * 1024;

/// Everything the terminal thread owns.
pub(super) struct TerminalThread {
    pub(super) rx: mpsc::Receiver<Box<EmuMsg>>,
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
    /// Makes the screen keeper and runs the loop on this thread until the
    /// terminal is dropped, or until it is quiet and `dormancy` takes it
    /// over ([`TerminalLoop::run`]).
    pub(super) fn run(self, dormancy: Option<HandBack>) {
        Box::new(TerminalLoop::new(self, dormancy)).run();
    }
}

/// Where a quiet loop hands itself over before its thread ends: the task
/// that keeps it while it is dormant (`dormant.rs`).
pub(super) type HandBack = mpsc::UnboundedSender<Box<TerminalLoop>>;

/// The terminal thread's whole state, kept on the heap so that a quiet
/// terminal can end its thread and a new thread take it up where it was
/// (`dormant.rs`).
pub(super) struct TerminalLoop {
    pub(super) rx: mpsc::Receiver<Box<EmuMsg>>,
    input: Receiver<Vec<u8>>,
    pub(super) writer: Arc<PtyWriter>,
    keeper: Keeper,
    buf: Vec<u8>,
    ahead: ReadAhead,
    writing: Option<Writing>,
    /// The master gives output (false once it stopped for good: an error
    /// other than "nothing now"); the loop goes on serving its messages.
    reading: bool,
    /// When the emulator last had anything to do: the screen's cells are
    /// put away once it has been quiet for the quiet time, after a read as
    /// after output (a read wakes no quiet task of its own).
    last_applied: std::time::Instant,
    /// When the screen last changed (output, a resize): the quiet time's
    /// release counts from it, so that a reader polling the screen does
    /// not put it off.
    last_changed: std::time::Instant,
    /// The quiet time's release ([`TerminalLoop::quiet_now`]) is done
    /// for what was last applied.
    released: bool,
    /// When the history was last compacted: during a burst of output that
    /// does not pause, once every [`COMPACT_EVERY`].
    compacted_at: std::time::Instant,
    /// A message taken off the queue while the loop was dormant, applied
    /// first.
    pub(super) pending: Option<Box<EmuMsg>>,
    /// Where the loop goes when it is quiet; none: it never ends its
    /// thread (no runtime to wait on, or waiting failed once).
    pub(super) dormancy: Option<HandBack>,
    /// The views' terminals whose keys this loop reads ([`super::keys`]).
    keys: Vec<LentKeys>,
    /// Whether they may have something to read: not after a `poll` that
    /// found none of them ready (a read for nothing would come before the
    /// output an echo waits for).
    keys_due: bool,
}

impl TerminalLoop {
    #[inline(never)]
    fn new(thread: TerminalThread, dormancy: Option<HandBack>) -> TerminalLoop {
        let TerminalThread {
            rx,
            input,
            writer,
            answers,
            colors,
            published,
            history,
            recorder,
            shell,
            image_limit,
        } = thread;
        let size = (usize::from(START_ROWS), usize::from(START_COLS));
        let keeper = Keeper {
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
        TerminalLoop {
            rx,
            input,
            writer,
            keeper,
            buf: vec![0u8; READ_CHUNK],
            ahead: ReadAhead::default(),
            writing: None,
            reading: true,
            last_applied: std::time::Instant::now(),
            last_changed: std::time::Instant::now(),
            released: false,
            compacted_at: std::time::Instant::now(),
            pending: None,
            dormancy,
            keys: Vec::new(),
            keys_due: true,
        }
    }

    /// Runs until the terminal is dropped, or until the screen is parked
    /// and nothing at all is to be done: then the loop hands itself to its
    /// dormancy (which starts a thread for it again at the next message,
    /// input or output) and this thread ends.
    // Not inlined: the thread's first start and each start after a
    // dormancy call it, and one copy of the loop is enough.
    #[inline(never)]
    pub(super) fn run(mut self: Box<Self>) {
        let master = self.writer.master.clone();
        loop {
            // What the rest of the launcher asked, in order.
            loop {
                let msg = match self.pending.take() {
                    Some(msg) => msg,
                    None => match self.rx.try_recv() {
                        Ok(msg) => msg,
                        Err(mpsc::error::TryRecvError::Empty) => break,
                        // The terminal is dropped: the thread ends.
                        Err(mpsc::error::TryRecvError::Disconnected) => return,
                    },
                };
                self.apply_message(*msg, &master);
            }
            if self.keys_due && !self.keys.is_empty() {
                self.read_keys();
            }
            self.keys_due = true;
            self.write_input();
            // Output, a few chunks at a time, the master drained before
            // each: the Tick goes on writing (on another core) while a
            // chunk is applied, instead of waiting for room in the PTY.
            for _ in 0..READS_PER_TURN {
                if self.reading {
                    self.reading = self.ahead.fill(
                        &master,
                        &self.writer,
                        &mut self.buf,
                        READ_AHEAD,
                        Fresh::Written,
                    );
                }
                let Some(chunk) = self.ahead.pop() else {
                    break;
                };
                self.keeper.apply(EmuMsg::Output(chunk));
                self.changed_now();
                if self.compacted_at.elapsed() >= COMPACT_EVERY {
                    self.keeper.apply(EmuMsg::Compact);
                    self.compacted_at = std::time::Instant::now();
                }
            }
            if self.ahead.is_empty() {
                match self.when_drained(&master) {
                    Next::Again => {}
                    Next::Wait(timeout) => {
                        self.keys_due = wait(
                            &master,
                            &self.writer.wake,
                            self.reading,
                            self.writing.is_some(),
                            timeout,
                            &self.keys,
                        );
                    }
                    // The terminal is dropped: the thread ends.
                    Next::Dropped => return,
                    Next::Dormant => {
                        if let Some(back) = self.dormancy.clone() {
                            // The read buffer too: none is held while
                            // dormant.
                            self.buf = Vec::new();
                            // The keeper is gone only with the runtime, the
                            // launcher's end: the loop ends with this
                            // thread then.
                            let _ = back.send(self);
                            return;
                        }
                    }
                }
            }
        }
    }

    /// What to do once every chunk read is applied: the quiet time's
    /// release and the screen's parking when they are due, then sleep until
    /// the next of them (or until something comes), or, with nothing at all
    /// to do, go dormant.
    fn when_drained(&mut self, master: &OwnedFd) -> Next {
        self.keeper.published.tell_drained();
        let unchanged_for = self.last_changed.elapsed();
        let mut timeout = None;
        if !self.released {
            if unchanged_for >= RELEASE_AFTER {
                self.quiet_now();
            } else {
                timeout = Some(RELEASE_AFTER - unchanged_for);
            }
        }
        let quiet_for = self.last_applied.elapsed();
        if timeout.is_none() && !self.keeper.emulator.is_parked() {
            if quiet_for >= PARK_AFTER {
                self.keeper.apply(EmuMsg::Park);
                super::quiet::return_free_memory();
            } else {
                timeout = Some(PARK_AFTER - quiet_for);
            }
        }
        if timeout.is_none() && self.dormancy.is_some() {
            return self.idle(master);
        }
        Next::Wait(timeout)
    }

    /// Applies one of the launcher's messages (output the master has now
    /// first, for those that want it fresh).
    fn apply_message(&mut self, msg: EmuMsg, master: &OwnedFd) {
        let msg = match msg {
            EmuMsg::LendKeys(keys) => {
                // One lending a view: a later one replaces it.
                self.keys.retain(|lent| lent.view() != keys.view());
                self.keys.push(keys);
                self.keys_due = true;
                return;
            }
            EmuMsg::TakeKeys { view, lend } => {
                if let Some(at) = self
                    .keys
                    .iter()
                    .position(|lent| lent.view() == view && lent.lend() == lend)
                {
                    self.keys.swap_remove(at).give_back(Vec::new());
                }
                return;
            }
            msg => msg,
        };
        if let Some(fresh) = fresh_output(&msg) {
            if self.reading {
                self.reading = self
                    .ahead
                    .fill_fresh(master, &self.writer, &mut self.buf, fresh);
            }
            while let Some(chunk) = self.ahead.pop() {
                self.keeper.apply(EmuMsg::Output(chunk));
                self.changed_now();
            }
        }
        let changes = matches!(msg, EmuMsg::Resize(..));
        self.keeper.apply(msg);
        if changes {
            self.changed_now();
        } else {
            self.applied_now();
        }
    }

    /// Something was applied: the screen is parked again only after
    /// [`PARK_AFTER`] from now.
    fn applied_now(&mut self) {
        self.last_applied = std::time::Instant::now();
    }

    /// The screen changed: the quiet time's release comes
    /// [`RELEASE_AFTER`] from now.
    fn changed_now(&mut self) {
        self.applied_now();
        self.last_changed = self.last_applied;
        self.released = false;
    }

    /// Nothing applied for [`RELEASE_AFTER`]: the history compacted and
    /// its spare rows given back (`ReleaseSpare`), and
    /// the read buffer, what the launcher freed since the last quiet time
    /// (the descriptor's schemas compiled once to check them, for one) and
    /// this thread's stack below the loop given back.
    fn quiet_now(&mut self) {
        self.released = true;
        self.keeper.apply(EmuMsg::ReleaseSpare);
        self.buf = Vec::new();
        self.compacted_at = std::time::Instant::now();
        super::quiet::return_free_memory();
    }

    /// Reads the keys views lent: what is typed as it is goes to the
    /// master at once (or after what is queued), the echo wanted; keys
    /// with anything else in them go back to their view.
    fn read_keys(&mut self) {
        let modes =
            TermMode::from_bits_truncate(self.keeper.published.modes.load(Ordering::Acquire));
        let newline_mode = modes.contains(TermMode::LINE_FEED_NEW_LINE);
        let mut typed = Vec::new();
        let mut at = 0;
        while at < self.keys.len() {
            match self.keys[at].read(newline_mode, &mut typed) {
                Read::Kept => at += 1,
                Read::Back(bytes) => self.keys.swap_remove(at).give_back(bytes),
                Read::Left => drop(self.keys.swap_remove(at)),
            }
        }
        if typed.is_empty() {
            return;
        }
        let echo = &self.keeper.published.echo;
        echo.wanted.store(true, Ordering::Release);
        let tx = &self.keeper.answers.tx;
        if !self.writer.write_now(&typed, tx) {
            let _ = queue_input(tx, &self.writer, typed);
        }
    }

    /// Input for the Tick, as far as the master takes it now.
    fn write_input(&mut self) {
        loop {
            if self.writing.is_none() {
                self.writing = self
                    .input
                    .try_recv()
                    .ok()
                    .map(|bytes| Writing { bytes, done: 0 });
            }
            let Some(chunk) = self.writing.as_mut() else {
                break;
            };
            match self.writer.write_some(&chunk.bytes[chunk.done..]) {
                Ok(n) => chunk.done += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // The terminal is gone: what was queued is dropped, and
                // senders never block.
                Err(_) => chunk.done = chunk.bytes.len(),
            }
            if chunk.done >= chunk.bytes.len() {
                self.writing = None;
                self.writer.queued.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// Whether the loop can go dormant: the screen parked, the master
    /// alive and quiet, no input, no message. The wake-up is cleared
    /// first, so that whatever is queued after these looks rings it again
    /// for the dormancy to see; what they find queued is taken up at once
    /// ([`Next::Again`]): its ring was just cleared, and a `poll` would
    /// sleep on it (a wait's message that came as the screen was parked
    /// went unanswered until the next output).
    fn idle(&mut self, master: &OwnedFd) -> Next {
        if !self.keeper.emulator.is_parked()
            || !self.keys.is_empty()
            || !self.reading
            || self.writing.is_some()
            || !self.ahead.is_empty()
        {
            return Next::Wait(None);
        }
        self.writer.wake.clear();
        match self.rx.try_recv() {
            Ok(msg) => {
                self.pending = Some(msg);
                return Next::Again;
            }
            Err(mpsc::error::TryRecvError::Empty) => {}
            Err(mpsc::error::TryRecvError::Disconnected) => return Next::Dropped,
        }
        if let Ok(bytes) = self.input.try_recv() {
            self.writing = Some(Writing { bytes, done: 0 });
            return Next::Again;
        }
        if has_output(master) {
            Next::Again
        } else {
            Next::Dormant
        }
    }
}

/// What the terminal loop does next, once the output read is applied.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Go round again at once: something was taken up to do.
    Again,
    /// Sleep in `poll` until something comes, or until the timeout.
    Wait(Option<std::time::Duration>),
    /// Nothing at all to do: hand the loop to its dormancy.
    Dormant,
    /// The terminal is dropped: the thread ends.
    Dropped,
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
    /// held: with [`Fresh::Written`], each read waits for what the kernel
    /// has yet to move into the master's buffer; with [`Fresh::Held`],
    /// only what that buffer holds is read. False when the master will
    /// give no more output.
    /// Output read after input was written answers that input (see
    /// [`PtyWriter::unanswered`]). An empty `buf` (given back at quiet) is
    /// made again only when the master has output.
    pub(super) fn fill(
        &mut self,
        master: &OwnedFd,
        writer: &PtyWriter,
        buf: &mut Vec<u8>,
        limit: usize,
        fresh: Fresh,
    ) -> bool {
        if buf.is_empty() {
            let waiting = match fresh {
                Fresh::Written => has_output(master),
                Fresh::Held => readable_now(master) != Some(0),
            };
            if !waiting {
                return true;
            }
            *buf = vec![0; READ_CHUNK];
        }
        while self.bytes < limit {
            if fresh == Fresh::Held && readable_now(master) == Some(0) {
                return true;
            }
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

    /// Reads what a message needs to see ([`Fresh`]): the output written
    /// before it, which is at most what the kernel holds
    /// ([`KERNEL_HOLDS_AT_MOST`]) past what was read already, or what the
    /// master holds now. False when the master will give no more output.
    pub(super) fn fill_fresh(
        &mut self,
        master: &OwnedFd,
        writer: &PtyWriter,
        buf: &mut Vec<u8>,
        fresh: Fresh,
    ) -> bool {
        let limit = self.bytes.saturating_add(KERNEL_HOLDS_AT_MOST);
        self.fill(master, writer, buf, limit, fresh)
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
/// (while `writing`), the wake-up rings, a view's lent `keys` come (or it
/// hangs up), or `timeout` (if any) passes: whether any of `keys` did.
pub(super) fn wait(
    master: &OwnedFd,
    wake: &Wake,
    reading: bool,
    writing: bool,
    timeout: Option<std::time::Duration>,
    keys: &[LentKeys],
) -> bool {
    let mut events = 0;
    if reading {
        events |= libc::POLLIN;
    }
    if writing {
        events |= libc::POLLOUT;
    }
    let mut fds = vec![
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
    fds.extend(keys.iter().flat_map(LentKeys::pollfds));
    let timeout_ms = timeout.map_or(-1, |t| {
        // Rounded up: a poll that wakes a little early only loops again.
        i32::try_from(t.as_millis().saturating_add(1)).unwrap_or(i32::MAX)
    });
    // SAFETY: `fds` is a valid array of pollfd for the call.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
    if fds[1].revents != 0 {
        wake.clear();
    }
    // A failed poll says nothing: looked at anyway.
    ready < 0 || fds[2..].iter().any(|fd| fd.revents != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terminal::TerminalHandle;

    /// A message queued as the loop goes quiet (after the screen is parked,
    /// before its last look at the queue) is taken up at once: that look
    /// cleared the wake-up the message rang, and a `poll` would sleep on
    /// it until the next output. (A `wait --prompt` asked again as the
    /// screen was parked went unanswered for its whole timeout.)
    #[test]
    fn a_message_that_comes_as_the_loop_goes_quiet_is_taken_up_at_once() {
        let recorder = Arc::new(Recorder::new("quiet"));
        let (handle, thread) = TerminalHandle::build(0, recorder, false).expect("a PTY");
        let (back, _handed_back) = mpsc::unbounded_channel();
        let mut terminal = TerminalLoop::new(thread, Some(back));
        let master = terminal.writer.master.clone();
        assert_eq!(terminal.idle(&master), Next::Wait(None), "not parked yet");
        terminal.keeper.apply(EmuMsg::Park);
        assert_eq!(terminal.idle(&master), Next::Dormant);
        let (reply, _answer) = tokio::sync::oneshot::channel();
        let message = Box::new(EmuMsg::Snapshot(0, reply));
        assert!(handle.emu_tx.tx.try_send(message).is_ok());
        handle.emu_tx.wake.ring();
        assert_eq!(terminal.idle(&master), Next::Again);
        assert!(
            matches!(terminal.pending.as_deref(), Some(EmuMsg::Snapshot(..))),
            "the message is the next thing applied"
        );
        terminal.pending = None;
        assert_eq!(terminal.idle(&master), Next::Dormant);
        drop(handle);
        assert_eq!(terminal.idle(&master), Next::Dropped);
    }

    /// Output the program wrote, as the PTY's slave gets it.
    fn program_writes(writer: &PtyWriter, bytes: &[u8]) {
        use std::io::Write;
        let mut slave = writer.slave.as_ref().expect("the slave opened again");
        slave.write_all(bytes).expect("written to the slave");
    }

    /// A read for a view's frame takes what the master holds, and nothing
    /// when it holds nothing; a read for a screen read takes everything the
    /// program wrote before it, waiting for the kernel to hand it over.
    #[test]
    fn a_frame_reads_what_the_master_holds_and_a_screen_read_all_that_was_written() {
        let recorder = Arc::new(Recorder::new("reads"));
        let (_handle, thread) = TerminalHandle::build(0, recorder, false).expect("a PTY");
        let (writer, master) = (&thread.writer, &*thread.writer.master);
        let mut ahead = ReadAhead::default();
        let mut buf = Vec::new();
        assert_eq!(readable_now(master), Some(0), "nothing written yet");
        assert!(ahead.fill_fresh(master, writer, &mut buf, Fresh::Held));
        assert!(ahead.is_empty() && buf.is_empty(), "no read, no buffer");

        program_writes(writer, &[b'a'; 100]);
        while readable_now(master) != Some(100) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(ahead.fill_fresh(master, writer, &mut buf, Fresh::Held));
        assert_eq!(ahead.bytes, 100, "what the master holds is read");
        assert!(ahead.fill_fresh(master, writer, &mut buf, Fresh::Held));
        assert_eq!(ahead.bytes, 100, "and no more");

        program_writes(writer, &[b'b'; 100]);
        assert!(ahead.fill_fresh(master, writer, &mut buf, Fresh::Written));
        assert_eq!(ahead.bytes, 200, "a screen read gets all that was written");
        let read: Vec<u8> = std::iter::from_fn(|| ahead.pop())
            .flat_map(|chunk| chunk.bytes)
            .collect();
        assert_eq!(read, [[b'a'; 100], [b'b'; 100]].concat());
    }

    /// A screen read while the program floods its terminal reads what was
    /// written before it and stops: it does not go on reading in step
    /// with the writer until the writer pauses.
    #[test]
    fn a_screen_read_in_a_flood_reads_no_more_than_the_kernel_held() {
        let recorder = Arc::new(Recorder::new("flood"));
        let (_handle, thread) = TerminalHandle::build(0, recorder, false).expect("a PTY");
        let writer = thread.writer.clone();
        let flood = 16 * KERNEL_HOLDS_AT_MOST;
        let program = std::thread::spawn({
            let writer = writer.clone();
            move || {
                // Written in pieces: each returns once the kernel took it.
                for _ in 0..flood / 4096 {
                    program_writes(&writer, &[b'x'; 4096]);
                }
            }
        });
        let master = &*writer.master;
        let (mut ahead, mut buf) = (ReadAhead::default(), Vec::new());
        while readable_now(master) == Some(0) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(ahead.fill_fresh(master, &writer, &mut buf, Fresh::Written));
        assert!(ahead.bytes >= 1, "what the kernel held is read");
        assert!(
            ahead.bytes < KERNEL_HOLDS_AT_MOST + READ_CHUNK,
            "read {} bytes of a flood of {flood}",
            ahead.bytes
        );
        // The rest is read as the loop reads a flood, and the writer ends.
        let mut total = ahead.bytes;
        while total < flood {
            while ahead.pop().is_some() {}
            assert!(ahead.fill(master, &writer, &mut buf, READ_AHEAD, Fresh::Written));
            total += ahead.bytes;
        }
        program.join().expect("the program's writes");
        assert_eq!(total, flood);
    }
}
