//! The Tick's terminal: the PTY master, and the one thread around it.
//!
//! The **terminal thread** runs one `poll` loop over the master (non-
//! blocking) and a wake-up the rest of the launcher rings after queueing a
//! message for it. It
//!
//! * drains the master at all times (an undrained PTY blocks the Tick after
//!   ~17 KB) and applies each chunk to the [`Emulator`] it owns (not
//!   `Sync`: one owner) as soon as it is read, signalling "the screen
//!   changed" to views (a `watch`: a flood of output is one pending
//!   signal);
//! * answers snapshot, resize and recording requests between reads;
//! * writes to the master what may block (the emulator's answers to
//!   terminal queries, pastes, `tickloop input`) when the master can take
//!   it, so a Tick that never reads its terminal cannot block the launcher.
//!
//! Reading and applying in one thread (they were two, and a third wrote)
//! takes a thread hop off the way of every echo, and two threads' stacks
//! off every launcher.
//!
//! The terminal thread also hands each chunk, once applied, to the
//! [`ShellWatch`] (a shell's commands, agents' waits on the output), so
//! waits are answered in the same order as the screen changes.
//!
//! A view's keystroke takes no thread hop: the socket task encodes it with
//! the modes the terminal thread published last and writes it to the
//! master itself, when nothing is queued for writing and the Tick has read
//! all its input; what the master does not take at once is queued like the
//! rest.
//!
//! The master is read and written through a descriptor of its own (a
//! `dup`), never through portable-pty's writer, whose drop would type `\n`
//! and Ctrl-D into the Tick's terminal.

use crate::emulator::{AnswerColors, Emulator, ScreenText, TermEvent};
use crate::recorder::{Recorder, RecordingSink};
use crate::shell_watch::{ShellMsg, ShellNow, ShellWatch};
use crate::LauncherError;
use alacritty_terminal::term::TermMode;
use portable_pty::{native_pty_system, MasterPty, PtySize, SlavePty};
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use tickloop_proto::attach::TermColors;
use tickloop_proto::attach::{Snapshot, ViewEvent};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// The size every Tick starts with.
pub const START_ROWS: u16 = 30;
/// The size every Tick starts with.
pub const START_COLS: u16 = 120;

/// What the terminal thread tells the rest of the launcher.
struct Published {
    /// Bumped whenever the screen may have changed.
    changes: watch::Sender<u64>,
    /// Bells and clipboard writes.
    events: broadcast::Sender<TermEvent>,
    /// The terminal title.
    title: watch::Sender<String>,
    /// The Tick's terminal modes, for encoding views' input.
    modes: Arc<AtomicU32>,
    /// The live screen as it was right after a keystroke's echo.
    echo: Arc<EchoFrame>,
}

/// The live screen taken by the terminal thread as it applies the first
/// output after a view's keystroke, so that the frame with the echo needs
/// no round trip to the terminal thread: the view that was woken by that
/// change takes it as it is (see [`TerminalHandle::echo_frame`]).
#[derive(Default)]
struct EchoFrame {
    /// A view typed since the last output was applied.
    wanted: std::sync::atomic::AtomicBool,
    /// The screen, and the change it was taken for.
    frame: Mutex<Option<(u64, Snapshot)>>,
}

/// Writing to the PTY master, shared by the terminal thread and the direct
/// path of keystrokes ([`TerminalHandle::view_input`]).
struct PtyWriter {
    /// The master (non-blocking), this launcher's own descriptor of it.
    master: Arc<OwnedFd>,
    /// Held while writing, so two writers never interleave.
    writing: Mutex<()>,
    /// Chunks queued for the terminal thread and not yet written.
    queued: AtomicUsize,
    /// Bytes written to the master so far.
    written: AtomicU64,
    /// Of [`PtyWriter::written`], how many were written before some output
    /// was read: the terminal (its echo) or the program has answered them.
    answered: AtomicU64,
    /// Bytes taken for writing so far (queued or written), in the order
    /// they are written: a place in [`PtyWriter::written`]'s count.
    accepted: AtomicU64,
    /// Where the last input holding an Enter (CR or LF) ends, in
    /// [`PtyWriter::accepted`]'s count: output read once `written` passed
    /// it may be the program's answer to that Enter.
    enter_end: AtomicU64,
    /// The slave, opened again to ask how much input the Tick left unread.
    slave: Option<File>,
    /// Rung after queueing, so the terminal thread looks.
    wake: Arc<Wake>,
}

/// The terminal thread's wake-up: an eventfd it polls, rung by whoever
/// queued something for it.
struct Wake(OwnedFd);

impl Wake {
    fn new() -> std::io::Result<Self> {
        // SAFETY: eventfd returns a new descriptor or -1.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Wake(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn ring(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid u64 to our eventfd; a full
        // counter (never, in practice) only means it is rung already.
        unsafe {
            libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8);
        }
    }

    /// Resets the count after a wake-up.
    fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads 8 bytes into a valid u64 from our eventfd.
        unsafe {
            libc::read(self.0.as_raw_fd(), (&mut count as *mut u64).cast(), 8);
        }
    }
}

/// Messages for the terminal thread: queued, then the thread woken.
#[derive(Clone)]
struct ToTerminal {
    tx: mpsc::Sender<EmuMsg>,
    wake: Arc<Wake>,
}

impl ToTerminal {
    async fn send(&self, msg: EmuMsg) -> bool {
        let sent = self.tx.send(msg).await.is_ok();
        self.wake.ring();
        sent
    }
}

/// The longest input written straight from a view's socket task.
const DIRECT_WRITE_MAX: usize = 64;

/// Bells and clipboard writes queued for each view.
const EVENTS_QUEUE: usize = 32;
/// Messages queued for the terminal thread (snapshots, resizes, recordings).
const EMULATOR_QUEUE: usize = 256;
/// How long a screen must be quiet before the emulator moves the rows that
/// scrolled off into its compact history and gives back the memory they
/// held (see [`Emulator::release_spare_rows`]).
const RELEASE_AFTER: std::time::Duration = std::time::Duration::from_millis(250);
/// How often, while output does not pause, the rows that scrolled off are
/// moved into the compact history ([`Emulator::compact`]): a flood keeps at
/// most a second's worth of them as full rows of cells.
const COMPACT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);
/// How long no output must arrive before an ended Tick's screen is final.
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(30);
/// The most an ended Tick's final screen waits for output to stop.
const SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);
/// Chunks of input queued for the PTY master.
/// (The channel allocates every slot up front: 32 bytes each, per instance.)
const WRITER_QUEUE: usize = 256;
/// What one read of the PTY master takes at most. Linux hands a PTY's
/// output over in pieces of at most 4 KiB (the line discipline's buffer),
/// so a larger buffer only costs memory in every launcher.
const READ_CHUNK: usize = 16 * 1024;

/// A chunk of output as the terminal thread read it from the master.
struct OutputChunk {
    bytes: Vec<u8>,
    /// When it was read (the terminal thread's own clock, as it reads).
    read_at: std::time::Instant,
    /// How much input had been written to the master before it was read
    /// ([`PtyWriter::written`]): the input this output may answer.
    input_before: u64,
}

enum EmuMsg {
    /// Output read from the PTY.
    Output(OutputChunk),
    /// Start a recording from the current screen ([`crate::recorder`]).
    /// Acknowledged once the recording is registered.
    Record(crate::recorder::RecordingSink, oneshot::Sender<()>),
    Resize(u16, u16),
    /// The screen as text with up to this many lines of history.
    Snapshot(usize, oneshot::Sender<ScreenText>),
    /// A view's snapshot, scrolled this many lines back into history.
    ViewSnapshot(usize, oneshot::Sender<Snapshot>),
    /// A wait on the output, or a `run` ([`ShellWatch::ask`]).
    Shell(ShellMsg),
    /// Output has not paused for [`COMPACT_EVERY`]: move the rows that
    /// scrolled off into the compact history.
    Compact,
    /// The screen has been quiet for [`RELEASE_AFTER`]: move the rows that
    /// scrolled off into the compact history, give back what alacritty
    /// held for them, and the allocator's free pages.
    ReleaseSpare,
}

/// Why typed input was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    #[error("the program is not reading its terminal; {0} chunks of input are already waiting")]
    Full(usize),
    #[error("the terminal is gone")]
    Gone,
}

/// The open PTY with its threads running. Cheap to share by reference.
pub struct TerminalHandle {
    master: Mutex<Box<dyn MasterPty + Send>>,
    // Keeps the slave open for the launcher's life: the master then never
    // reports EOF/EIO, and the screen stays readable after the Tick exits.
    _slave: Mutex<Box<dyn SlavePty + Send>>,
    tty_name: PathBuf,
    input_tx: SyncSender<Vec<u8>>,
    pty_writer: Arc<PtyWriter>,
    /// The Tick's terminal modes as the terminal thread last published them.
    modes: Arc<AtomicU32>,
    emu_tx: ToTerminal,
    /// Bumped by the terminal thread whenever the screen may have changed.
    changes_rx: watch::Receiver<u64>,
    /// Bells and clipboard writes, for the views to pass on.
    events_tx: broadcast::Sender<TermEvent>,
    /// The title the program gave its terminal, as it changes.
    title_rx: watch::Receiver<String>,
    /// The PTY's size as `(cols, rows)`.
    size: Mutex<(u16, u16)>,
    /// What the Tick's colour queries are answered with.
    colors: AnswerColors,
    /// The recordings of this terminal (and of the protocol beside it).
    recorder: Arc<Recorder>,
    echo: Arc<EchoFrame>,
    /// The shell's state read from the output, as the terminal thread last
    /// published it.
    shell_rx: watch::Receiver<Arc<ShellNow>>,
}

impl TerminalHandle {
    /// Opens the PTY at 120x30 and starts the terminal thread; the screen
    /// keeps up to `history` lines that scroll off. With `shell` (a
    /// `shell:` instance), its output is read for a shell's marks;
    /// otherwise only while something waits for text.
    pub fn open(
        history: usize,
        recorder: Arc<Recorder>,
        shell: bool,
    ) -> Result<Arc<TerminalHandle>, LauncherError> {
        let size = PtySize {
            rows: START_ROWS,
            cols: START_COLS,
            pixel_width: 0,
            pixel_height: 0,
        };
        let pair = native_pty_system()
            .openpty(size)
            .map_err(|e| LauncherError::Pty(e.to_string()))?;
        let tty_name = pair
            .master
            .tty_name()
            .ok_or_else(|| LauncherError::Pty("the PTY has no slave device name".into()))?;
        let master_fd = pair
            .master
            .as_raw_fd()
            .ok_or_else(|| LauncherError::Pty("the PTY master has no descriptor".into()))?;
        let master = Arc::new(own_nonblocking_dup(master_fd).map_err(|e| {
            LauncherError::Pty(format!("cannot take the PTY master's descriptor: {e}"))
        })?);
        let wake =
            Arc::new(Wake::new().map_err(|e| {
                LauncherError::Pty(format!("cannot make the terminal's wake-up: {e}"))
            })?);

        let (input_tx, input_rx) = sync_channel::<Vec<u8>>(WRITER_QUEUE);
        let pty_writer = Arc::new(PtyWriter {
            master: master.clone(),
            writing: Mutex::new(()),
            queued: AtomicUsize::new(0),
            written: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            enter_end: AtomicU64::new(0),
            // Without it every input goes through the terminal thread.
            slave: std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(&tty_name)
                .ok(),
            wake: wake.clone(),
        });

        let (tx, emu_rx) = mpsc::channel::<EmuMsg>(EMULATOR_QUEUE);
        let emu_tx = ToTerminal {
            tx,
            wake: wake.clone(),
        };
        let answers = AnswerWriter {
            tx: input_tx.clone(),
            writer: pty_writer.clone(),
        };
        let modes = Arc::new(AtomicU32::new(0));
        let echo = Arc::new(EchoFrame::default());
        let (changes_tx, changes_rx) = watch::channel(0u64);
        let (events_tx, _) = broadcast::channel(EVENTS_QUEUE);
        let (title_tx, title_rx) = watch::channel(String::new());
        let colors = AnswerColors::default();
        let published = Published {
            changes: changes_tx,
            events: events_tx.clone(),
            title: title_tx,
            modes: modes.clone(),
            echo: echo.clone(),
        };
        let (shell_tx, shell_rx) = watch::channel(Arc::new(ShellNow::default()));
        let shell = ShellWatch::new(shell_tx, tickloop_client::clock::now_rfc3339_millis, shell);
        let thread = TerminalThread {
            rx: emu_rx,
            input: input_rx,
            writer: pty_writer.clone(),
            answers,
            colors: colors.clone(),
            published,
            history,
            recorder: recorder.clone(),
            shell,
        };
        spawn_thread("terminal", move || thread.run())?;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(release_when_quiet(
                changes_rx.clone(),
                emu_tx.tx.downgrade(),
                wake,
            ));
        }

        Ok(Arc::new(TerminalHandle {
            master: Mutex::new(pair.master),
            _slave: Mutex::new(pair.slave),
            tty_name,
            input_tx,
            pty_writer,
            modes,
            emu_tx,
            changes_rx,
            events_tx,
            title_rx,
            size: Mutex::new((START_COLS, START_ROWS)),
            colors,
            recorder,
            echo,
            shell_rx,
        }))
    }

    /// The shell's state read from the output, and its changes.
    pub fn subscribe_shell(&self) -> watch::Receiver<Arc<ShellNow>> {
        self.shell_rx.clone()
    }

    /// Hands `msg` to the output's [`ShellWatch`], after every chunk read so
    /// far. False if the terminal thread is gone.
    pub async fn ask_shell(&self, msg: ShellMsg) -> bool {
        self.emu_tx.send(EmuMsg::Shell(msg)).await
    }

    /// Types `text` (as it is) and then `keys` (named by an agent) encoded
    /// for the program's modes as the terminal thread last published them,
    /// in one write; the bytes typed.
    pub fn type_keys(
        &self,
        text: Option<Vec<u8>>,
        keys: &[tickloop_proto::keys::Pressed],
    ) -> Result<usize, InputError> {
        let modes = TermMode::from_bits_truncate(self.modes.load(Ordering::Acquire));
        let mut bytes = text.unwrap_or_default();
        bytes.extend(crate::screen_model::encode_keys(modes, keys).map_err(|_| InputError::Gone)?);
        let n = bytes.len();
        self.input(bytes)?;
        Ok(n)
    }

    /// Whether the program's terminal does not echo what is typed now: a
    /// prompt for a password (`read -s`, sudo, ssh), whose termios has
    /// ECHO off while the line discipline is in canonical mode (ICANON). A
    /// shell's line editor or a full-screen program turns ECHO off too,
    /// but in raw mode, and draws what is typed itself: not this. Read
    /// from the PTY master (whose termios calls reach the slave's) at each
    /// call; when they cannot be read, it counts as off, so nothing typed
    /// is kept for want of knowing.
    pub fn echo_off(&self) -> bool {
        // SAFETY: an all-zero termios is a valid value for tcgetattr to
        // overwrite.
        let mut modes: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: tcgetattr writes one termios through a pointer to ours;
        // the master's descriptor is open while `self` lives.
        if unsafe { libc::tcgetattr(self.pty_writer.master.as_raw_fd(), &mut modes) } != 0 {
            return true;
        }
        modes.c_lflag & libc::ECHO == 0 && modes.c_lflag & libc::ICANON != 0
    }

    /// The recordings of this terminal.
    pub fn recorder(&self) -> &Arc<Recorder> {
        &self.recorder
    }

    /// Starts a recording from the screen as it is once every chunk read
    /// so far is applied. False if the terminal thread is gone.
    pub async fn start_recording(&self, sink: RecordingSink) -> bool {
        let (tx, rx) = oneshot::channel();
        self.emu_tx.send(EmuMsg::Record(sink, tx)).await && rx.await.is_ok()
    }

    /// The PTY's current size, `(cols, rows)`.
    pub fn size(&self) -> (u16, u16) {
        self.size
            .lock()
            .map_or((START_COLS, START_ROWS), |size| *size)
    }

    /// The title the program gave its terminal, and its changes.
    pub fn subscribe_title(&self) -> watch::Receiver<String> {
        self.title_rx.clone()
    }

    /// The Tick's bells and clipboard writes from now on (a view that falls
    /// [`EVENTS_QUEUE`] behind misses some).
    pub fn subscribe_events(&self) -> broadcast::Receiver<TermEvent> {
        self.events_tx.subscribe()
    }

    /// Changes of the screen (output applied, resized): `changed()` resolves
    /// once however many changes happened since it was last marked seen.
    pub fn subscribe_changes(&self) -> watch::Receiver<u64> {
        self.changes_rx.clone()
    }

    /// The screen as a view's snapshot, scrolled `offset` lines back into
    /// history (0: live), after every chunk of output read so far has been
    /// applied. `None` if the terminal thread is gone.
    pub async fn view_snapshot(&self, offset: usize) -> Option<Snapshot> {
        let (tx, rx) = oneshot::channel();
        if !self.emu_tx.send(EmuMsg::ViewSnapshot(offset, tx)).await {
            return None;
        }
        rx.await.ok()
    }

    /// The live screen as the terminal thread took it when it applied
    /// change `change` (the value of [`Self::subscribe_changes`]), if that
    /// change was the first output after a view's keystroke: the echo's
    /// frame without a round trip to the terminal thread.
    pub fn echo_frame(&self, change: u64) -> Option<Snapshot> {
        let frame = self.echo.frame.lock().ok()?;
        match frame.as_ref() {
            Some((taken, snapshot)) if *taken == change => Some(snapshot.clone()),
            _ => None,
        }
    }

    /// Encode a view's key, paste, mouse or focus event for the Tick's
    /// modes (as the terminal thread last published them) and write it to
    /// the PTY: at once when that cannot block, else through the terminal
    /// thread. Input that finds the input queue full is dropped, as a
    /// terminal drops keys a stopped program never reads.
    pub fn view_input(&self, event: &ViewEvent) -> Result<(), InputError> {
        let modes = TermMode::from_bits_truncate(self.modes.load(Ordering::Acquire));
        let bytes = match crate::screen_model::encode_input(modes, event) {
            Ok(bytes) if bytes.is_empty() => return Ok(()),
            Ok(bytes) => bytes,
            // Not encodable (a key with no encoding): nothing to send.
            Err(_) => return Ok(()),
        };
        self.echo.wanted.store(true, Ordering::Release);
        if self.pty_writer.write_now(&bytes, &self.input_tx) {
            return Ok(());
        }
        match self.input(bytes) {
            Err(InputError::Gone) => Err(InputError::Gone),
            _ => Ok(()),
        }
    }

    /// The colours the Tick's OSC 10/11/4 queries are answered with from
    /// now on (the person's terminal's own, from the active view); what
    /// `colors` leaves out stays as it was. Takes effect at once, even
    /// while output waits for the emulator. Whether anything changed.
    pub fn set_colors(&self, colors: &TermColors) -> bool {
        self.colors.set(colors)
    }

    /// Resize the PTY alone (the Tick gets SIGWINCH), not the emulator: for
    /// the one-row nudge that makes a TUI redraw at an unchanged size.
    pub fn resize_pty_only(&self, rows: u16, cols: u16) -> Result<(), LauncherError> {
        let master = self
            .master
            .lock()
            .map_err(|_| LauncherError::Pty("the PTY lock is poisoned".into()))?;
        master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| LauncherError::Pty(e.to_string()))
    }

    /// The slave device path, which the Tick's stdio is opened from.
    pub fn tty_name(&self) -> &std::path::Path {
        &self.tty_name
    }

    /// Queue bytes typed into the Tick's terminal; never blocks.
    pub fn input(&self, bytes: Vec<u8>) -> Result<(), InputError> {
        queue_input(&self.input_tx, &self.pty_writer, bytes)
    }

    /// The current screen with up to `history` lines of history, after
    /// every chunk of output read so far from the PTY has been applied.
    /// `None` if the terminal thread is gone.
    pub async fn screen(&self, history: usize) -> Option<ScreenText> {
        let (tx, rx) = oneshot::channel();
        if !self.emu_tx.send(EmuMsg::Snapshot(history, tx)).await {
            return None;
        }
        rx.await.ok()
    }

    /// The screen once everything the Tick wrote has been applied: waits
    /// until the PTY holds no unread output and no new output was applied
    /// for [`SETTLE_QUIET`] (the kernel hands a PTY's output to the master
    /// a moment after the program wrote it), at most [`SETTLE_LIMIT`]. For
    /// the last screen of an ended Tick.
    pub async fn settled_screen(&self, history: usize) -> Option<ScreenText> {
        let started = std::time::Instant::now();
        let mut seen = *self.changes_rx.borrow();
        let mut quiet_since = std::time::Instant::now();
        while started.elapsed() < SETTLE_LIMIT {
            // A round trip through the emulator applies every chunk read.
            self.screen(0).await?;
            let now = *self.changes_rx.borrow();
            if now != seen || self.unread_output() > 0 {
                seen = now;
                quiet_since = std::time::Instant::now();
            } else if quiet_since.elapsed() >= SETTLE_QUIET {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        self.screen(history).await
    }

    /// Bytes waiting in the PTY master, not yet read (0 if unknown).
    fn unread_output(&self) -> usize {
        let Ok(master) = self.master.lock() else {
            return 0;
        };
        let Some(fd) = master.as_raw_fd() else {
            return 0;
        };
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through the pointer we pass, and
        // `fd` stays open while the lock on the master is held.
        let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut n) };
        if rc == 0 {
            usize::try_from(n).unwrap_or(0)
        } else {
            0
        }
    }

    /// Resize the PTY (the Tick gets SIGWINCH) and the emulator's screen.
    pub async fn resize(&self, rows: u16, cols: u16) -> Result<(), LauncherError> {
        self.resize_pty_only(rows, cols)?;
        if let Ok(mut size) = self.size.lock() {
            *size = (cols, rows);
        }
        if self.emu_tx.send(EmuMsg::Resize(rows, cols)).await {
            Ok(())
        } else {
            Err(LauncherError::Pty("the terminal thread is gone".into()))
        }
    }
}

fn spawn_thread(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), LauncherError> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| LauncherError::Pty(format!("cannot start the {name} thread: {e}")))
}

/// After each burst of output, once the screen has been quiet for
/// [`RELEASE_AFTER`], asks the emulator to compact its history and give
/// back its spare rows, and every [`COMPACT_EVERY`] of a burst that does
/// not pause, to compact it. Sleeps while nothing changes (an idle instance
/// costs no wakeups), and during a flood wakes once per [`RELEASE_AFTER`],
/// not per change. Holds the terminal thread's queue weakly, so the thread
/// still ends when the terminal is dropped (and this task with it).
async fn release_when_quiet(
    mut changes: watch::Receiver<u64>,
    emulator: mpsc::WeakSender<EmuMsg>,
    wake: Arc<Wake>,
) {
    let send = |msg: EmuMsg| {
        let queue = emulator.upgrade();
        let wake = wake.clone();
        async move {
            let Some(queue) = queue else {
                return false;
            };
            let sent = queue.send(msg).await.is_ok();
            wake.ring();
            sent
        }
    };
    while changes.changed().await.is_ok() {
        let mut compacted = tokio::time::Instant::now();
        loop {
            let seen = *changes.borrow_and_update();
            tokio::time::sleep(RELEASE_AFTER).await;
            if *changes.borrow() == seen {
                break;
            }
            if compacted.elapsed() >= COMPACT_EVERY {
                compacted = tokio::time::Instant::now();
                if !send(EmuMsg::Compact).await {
                    return;
                }
            }
        }
        if !send(EmuMsg::ReleaseSpare).await {
            return;
        }
    }
}

/// Returns the allocator's free pages to the system (glibc keeps freed
/// memory in its heap, where it stays the process's private dirty pages).
pub(crate) fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks and trims the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A non-blocking descriptor of our own for the PTY master `fd`.
fn own_nonblocking_dup(fd: RawFd) -> std::io::Result<OwnedFd> {
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
fn read_fd(fd: &OwnedFd, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: reads at most `buf.len()` bytes into `buf` from an open fd.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// One `write` of `bytes` to `fd`.
fn write_fd(fd: &OwnedFd, bytes: &[u8]) -> std::io::Result<usize> {
    // SAFETY: writes at most `bytes.len()` bytes from `bytes` to an open fd.
    let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(n).map_err(|_| std::io::Error::last_os_error())
}

/// The most output applied in a row before the terminal thread looks at
/// its messages again (a flood must not keep a snapshot waiting).
const READS_PER_TURN: usize = 4;
/// The most output read ahead of the emulator ([`ReadAhead`]); past it
/// the Tick waits for room in the PTY, as a real terminal makes it.
const READ_AHEAD: usize = 1024 * 1024;

/// Everything the terminal thread owns.
struct TerminalThread {
    rx: mpsc::Receiver<EmuMsg>,
    /// Input for the Tick, queued (the direct path of keystrokes aside).
    input: Receiver<Vec<u8>>,
    writer: Arc<PtyWriter>,
    answers: AnswerWriter,
    colors: AnswerColors,
    published: Published,
    history: usize,
    recorder: Arc<Recorder>,
    /// A shell's commands and agents' waits, read from the output.
    shell: ShellWatch,
}

/// What the terminal thread is writing: a chunk, and how much of it went.
struct Writing {
    bytes: Vec<u8>,
    done: usize,
}

impl TerminalThread {
    fn run(self) {
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
            panics: 0,
        };
        let mut buf = vec![0u8; READ_CHUNK];
        let mut ahead = ReadAhead::default();
        let mut writing: Option<Writing> = None;
        // The master stopped giving output for good (an error other than
        // "nothing now"); the thread goes on serving its messages.
        let mut reading = true;
        let master = writer.master.clone();
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
                        keeper.apply(msg);
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
            }
            if ahead.is_empty() {
                wait(&master, &writer.wake, reading, writing.is_some());
            }
        }
    }
}

/// A message that must see every byte the Tick wrote so far.
fn wants_fresh_output(msg: &EmuMsg) -> bool {
    matches!(
        msg,
        EmuMsg::Snapshot(..) | EmuMsg::ViewSnapshot(..) | EmuMsg::Record(..) | EmuMsg::Shell(..)
    )
}

/// Output read from the master and not applied yet, oldest first, with
/// the time each chunk was read. The terminal thread reads ahead of the
/// emulator so that the PTY's buffer (about 68 KiB on Linux) never fills
/// while a chunk is applied: a Tick that floods its terminal writes on one
/// core while this thread applies on the other, as it did when a reader
/// thread of its own drained the master.
#[derive(Default)]
struct ReadAhead {
    chunks: std::collections::VecDeque<OutputChunk>,
    bytes: usize,
}

impl ReadAhead {
    /// Reads the master until it has nothing more now or `limit` bytes are
    /// held. False when the master will give no more output.
    /// Output read after input was written answers that input (see
    /// [`PtyWriter::unanswered`]).
    fn fill(&mut self, master: &OwnedFd, writer: &PtyWriter, buf: &mut [u8], limit: usize) -> bool {
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
    fn pop(&mut self) -> Option<OutputChunk> {
        let chunk = self.chunks.pop_front()?;
        self.bytes -= chunk.bytes.len();
        if self.chunks.is_empty() && self.chunks.capacity() > 16 {
            // A flood's queue is not kept for the quiet after it.
            self.chunks = std::collections::VecDeque::new();
        }
        Some(chunk)
    }

    fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }
}

/// Sleeps until the master has output (while `reading`), can take input
/// (while `writing`), or the wake-up rings.
fn wait(master: &OwnedFd, wake: &Wake, reading: bool, writing: bool) {
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
    // SAFETY: `fds` is a valid array of two pollfd for the call.
    unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
    if fds[1].revents != 0 {
        wake.clear();
    }
}

fn new_emulator(
    size: (usize, usize),
    history: usize,
    answers: &AnswerWriter,
    colors: &AnswerColors,
) -> Emulator {
    let mut emulator = Emulator::new(size.0, size.1, history, Box::new(answers.clone()));
    emulator.answer_colors_from(colors.clone());
    emulator
}

/// The emulator, and what it is made with and tells.
struct Keeper {
    emulator: Emulator,
    /// The screen's size, to make it again after a panic.
    size: (usize, usize),
    history: usize,
    answers: AnswerWriter,
    colors: AnswerColors,
    published: Published,
    recorder: Arc<Recorder>,
    /// Kept across an emulator fault: what waits is still answered.
    shell: ShellWatch,
    panics: u64,
}

impl Keeper {
    /// Applies one message to the emulator, and publishes what changed.
    fn apply(&mut self, msg: EmuMsg) {
        if let EmuMsg::Resize(rows, cols) = &msg {
            self.size = (usize::from(*rows), usize::from(*cols));
        }
        // A panic inside the emulator (a bug of ours or of the emulator,
        // set off by what the Tick printed) must not stop this thread: the
        // PTY would no longer be drained and the Tick would block forever.
        // The screen starts over, saying so on its first row, and the Tick
        // goes on. The panic hook (lib.rs) logs the first few panics only,
        // so a stream of them cannot grow the log without bound.
        let published = &self.published;
        let recorder = &self.recorder;
        let shell = &mut self.shell;
        let mut term = EmulatorTerminal {
            emulator: &mut self.emulator,
            answers: &self.answers,
        };
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            handle_emulator_message(
                &mut term,
                msg,
                &published.changes,
                recorder,
                &published.echo,
                shell,
            );
            let emulator = &mut *term.emulator;
            for event in emulator.take_events() {
                // No view attached: nobody to tell.
                let _ = published.events.send(event);
            }
            if let Some(now) = emulator.take_title_change() {
                published.title.send_replace(now);
            }
            published
                .modes
                .store(emulator.input_modes(), Ordering::Release);
        }));
        if handled.is_err() {
            self.panics += 1;
            if self.panics <= 3 {
                eprintln!(
                    "launcher: the terminal emulator panicked (#{}); the screen starts over",
                    self.panics
                );
            }
            self.emulator = new_emulator(self.size, self.history, &self.answers, &self.colors);
            self.emulator.feed(
                b"\x1b[7m[tickloop: the screen was reset after an emulator fault]\x1b[0m\r\n",
            );
            self.published
                .changes
                .send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

/// The emulator and the PTY's input, as the [`ShellWatch`] uses them.
struct EmulatorTerminal<'a> {
    emulator: &'a mut Emulator,
    answers: &'a AnswerWriter,
}

impl crate::shell_watch::Terminal for EmulatorTerminal<'_> {
    fn lines(&mut self) -> Vec<String> {
        self.emulator.text(0).lines
    }

    fn bracketed_paste(&self) -> bool {
        TermMode::from_bits_truncate(self.emulator.input_modes())
            .contains(TermMode::BRACKETED_PASTE)
    }

    fn type_bytes(&mut self, bytes: Vec<u8>) {
        let _ = queue_input(&self.answers.tx, &self.answers.writer, bytes);
    }

    fn input_unanswered(&self) -> bool {
        self.answers.writer.unanswered()
    }

    fn last_enter_end(&self) -> u64 {
        self.answers.writer.enter_end.load(Ordering::Acquire)
    }
}

fn handle_emulator_message(
    term: &mut EmulatorTerminal<'_>,
    msg: EmuMsg,
    changes: &watch::Sender<u64>,
    recorder: &Recorder,
    echo: &EchoFrame,
    shell: &mut ShellWatch,
) {
    match msg {
        EmuMsg::Output(OutputChunk {
            bytes,
            read_at,
            input_before,
        }) => {
            recorder.output(&bytes, read_at);
            term.emulator.feed(&bytes);
            let emulator = &mut *term.emulator;
            if echo.wanted.swap(false, Ordering::AcqRel) {
                // Kept before the change is told, for the view it wakes.
                let change = changes.borrow().wrapping_add(1);
                if let Ok(mut frame) = echo.frame.lock() {
                    *frame = Some((change, emulator.snapshot_scrolled(0)));
                }
            }
            changes.send_modify(|n| *n = n.wrapping_add(1));
            shell.output(&bytes, input_before, term);
        }
        EmuMsg::Shell(msg) => shell.ask(msg, term),
        EmuMsg::Record(sink, started) => {
            recorder.start(sink, &term.emulator.snapshot_scrolled(0));
            let _ = started.send(());
        }
        EmuMsg::Resize(rows, cols) => {
            term.emulator.resize(usize::from(rows), usize::from(cols));
            recorder.resize(cols, rows);
            changes.send_modify(|n| *n = n.wrapping_add(1));
        }
        EmuMsg::Snapshot(history, reply) => {
            let _ = reply.send(term.emulator.text(history));
        }
        EmuMsg::ViewSnapshot(offset, reply) => {
            let _ = reply.send(term.emulator.snapshot_scrolled(offset));
        }
        EmuMsg::Compact => term.emulator.compact(),
        EmuMsg::ReleaseSpare => {
            // Also what the launcher freed since the last quiet time (the
            // descriptor's schemas compiled once to check them, for one).
            term.emulator.release_spare_rows();
            return_free_memory();
        }
    }
}

/// Queues `bytes` for the terminal thread; never blocks.
fn queue_input(
    tx: &SyncSender<Vec<u8>>,
    writer: &PtyWriter,
    bytes: Vec<u8>,
) -> Result<(), InputError> {
    let (len, enter) = (bytes.len(), holds_enter(&bytes));
    enqueue(tx, writer, bytes)?;
    writer.accept(len, enter);
    Ok(())
}

/// Whether input holds an Enter (CR, or LF as ctrl+J and `\n` type it).
fn holds_enter(bytes: &[u8]) -> bool {
    bytes.iter().any(|b| matches!(b, b'\r' | b'\n'))
}

/// Queues `bytes`, taken for writing already, for the terminal thread.
fn enqueue(tx: &SyncSender<Vec<u8>>, writer: &PtyWriter, bytes: Vec<u8>) -> Result<(), InputError> {
    writer.queued.fetch_add(1, Ordering::AcqRel);
    let sent = tx.try_send(bytes);
    if sent.is_err() {
        writer.queued.fetch_sub(1, Ordering::AcqRel);
    }
    match sent {
        Ok(()) => {
            writer.wake.ring();
            Ok(())
        }
        Err(TrySendError::Full(_)) => Err(InputError::Full(WRITER_QUEUE)),
        Err(TrySendError::Disconnected(_)) => Err(InputError::Gone),
    }
}

impl PtyWriter {
    /// `len` bytes are taken for writing after all taken before;
    /// `enter` if they hold an Enter.
    fn accept(&self, len: usize, enter: bool) {
        let end = self.accepted.fetch_add(len as u64, Ordering::AcqRel) + len as u64;
        if enter {
            self.enter_end.fetch_max(end, Ordering::AcqRel);
        }
    }

    /// One write of what the master takes now (the terminal thread's).
    fn write_some(&self, bytes: &[u8]) -> std::io::Result<usize> {
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
    fn unanswered(&self) -> bool {
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
    fn write_now(&self, bytes: &[u8], tx: &SyncSender<Vec<u8>>) -> bool {
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
struct AnswerWriter {
    tx: SyncSender<Vec<u8>>,
    writer: Arc<PtyWriter>,
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
