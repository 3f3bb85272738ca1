//! The Tick's terminal: the PTY master, and the three threads around it.
//!
//! * the **reader** drains the master at all times (an undrained PTY blocks
//!   the Tick after ~17 KB) and hands chunks to the emulator thread;
//! * the **emulator** thread owns the [`Emulator`] (not `Sync`: one owner),
//!   applies output, answers snapshot and resize requests, encodes views'
//!   input events, signals "the screen changed" to views (a `watch`: a flood
//!   of output is one pending signal), and sends its answers to terminal
//!   queries and the encoded events to the writer;
//! * the **writer** thread writes to the master what may block (emulator
//!   answers, pastes, `tickloop input`), so a Tick that never reads its
//!   terminal cannot block the launcher.
//!
//! The emulator thread also hands each chunk, once applied, to the
//! [`ShellWatch`] (a shell's commands, agents' waits on the output), so
//! waits are answered in the same order as the screen changes.
//!
//! A view's keystroke takes no thread hop: the socket task encodes it with
//! the modes the emulator thread published last and writes it to the
//! master itself, when nothing is queued for the writer and the Tick has
//! read all its input (so the write cannot block); otherwise it is queued
//! like the rest.
//!
//! portable-pty's writer lives in the writer thread for the whole life of the
//! process: dropping it would type `\n` and Ctrl-D into the Tick's terminal.

use crate::emulator::{AnswerColors, Emulator, ScreenText, TermEvent};
use crate::recorder::{Recorder, RecordingSink};
use crate::shell_watch::{ShellMsg, ShellNow, ShellWatch};
use crate::LauncherError;
use alacritty_terminal::term::TermMode;
use portable_pty::{native_pty_system, MasterPty, PtySize, SlavePty};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use tickloop_proto::attach::TermColors;
use tickloop_proto::attach::{Snapshot, ViewEvent};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// The size every Tick starts with.
pub const START_ROWS: u16 = 30;
/// The size every Tick starts with.
pub const START_COLS: u16 = 120;

/// What the emulator thread tells the rest of the launcher.
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

/// The live screen taken by the emulator thread as it applies the first
/// output after a view's keystroke, so that the frame with the echo needs
/// no round trip to the emulator thread: the view that was woken by that
/// change takes it as it is (see [`TerminalHandle::echo_frame`]).
#[derive(Default)]
struct EchoFrame {
    /// A view typed since the last output was applied.
    wanted: std::sync::atomic::AtomicBool,
    /// The screen, and the change it was taken for.
    frame: Mutex<Option<(u64, Snapshot)>>,
}

/// The PTY master's writer, shared by the writer thread and the direct
/// path of keystrokes ([`TerminalHandle::view_input`]).
struct PtyWriter {
    writer: Mutex<Box<dyn Write + Send>>,
    /// Chunks queued for the writer thread and not yet written.
    queued: AtomicUsize,
    /// The slave, opened again to ask how much input the Tick left unread.
    slave: Option<File>,
}

/// The longest input written straight from a view's socket task.
const DIRECT_WRITE_MAX: usize = 64;

/// Bells and clipboard writes queued for each view.
const EVENTS_QUEUE: usize = 32;
/// Chunks of output queued for the emulator. When the emulator falls this far
/// behind, the reader waits, which slows the Tick like a real terminal would.
const EMULATOR_QUEUE: usize = 256;
/// How long a screen must be quiet before the emulator gives back its
/// spare history rows (see [`Emulator::release_spare_rows`]).
const RELEASE_AFTER: std::time::Duration = std::time::Duration::from_secs(2);
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

enum EmuMsg {
    /// Output, and when it was read from the PTY.
    Output(Vec<u8>, std::time::Instant),
    /// Start a recording from the current screen ([`crate::recorder`]).
    /// Acknowledged once the recording is registered.
    Record(crate::recorder::RecordingSink, oneshot::Sender<()>),
    Resize(u16, u16),
    /// The screen as text with up to this many lines of history.
    Snapshot(usize, oneshot::Sender<ScreenText>),
    /// A view's snapshot, scrolled this many lines back into history.
    ViewSnapshot(usize, oneshot::Sender<Snapshot>),
    /// The screen has been quiet for [`RELEASE_AFTER`]: give back what the
    /// emulator holds for history it has not filled, and the allocator's
    /// free pages.
    ReleaseSpare,
    /// A wait on the output, or a `run` ([`ShellWatch::ask`]).
    Shell(ShellMsg),
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
    /// The Tick's terminal modes as the emulator thread last published them.
    modes: Arc<AtomicU32>,
    emu_tx: mpsc::Sender<EmuMsg>,
    /// Bumped by the emulator thread whenever the screen may have changed.
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
    /// The shell's state read from the output, as the emulator thread last
    /// published it.
    shell_rx: watch::Receiver<Arc<ShellNow>>,
}

impl TerminalHandle {
    /// Opens the PTY at 120x30 and starts the reader, emulator and writer
    /// threads; the screen keeps up to `history` lines that scroll off.
    /// With `shell` (a `shell:` instance), its output is read for a
    /// shell's marks; otherwise only while something waits for text.
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
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| LauncherError::Pty(e.to_string()))?;
        let writer = pair
            .master
            .take_writer()
            .map_err(|e| LauncherError::Pty(e.to_string()))?;

        let (input_tx, input_rx) = sync_channel::<Vec<u8>>(WRITER_QUEUE);
        let pty_writer = Arc::new(PtyWriter {
            writer: Mutex::new(writer),
            queued: AtomicUsize::new(0),
            // Without it every input goes through the writer thread.
            slave: std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NOCTTY)
                .open(&tty_name)
                .ok(),
        });
        let thread_writer = pty_writer.clone();
        spawn_thread("pty-writer", move || writer_thread(thread_writer, input_rx))?;

        let (emu_tx, emu_rx) = mpsc::channel::<EmuMsg>(EMULATOR_QUEUE);
        let answers = AnswerWriter {
            tx: input_tx.clone(),
            writer: pty_writer.clone(),
        };
        let modes = Arc::new(AtomicU32::new(0));
        let emulator_modes = modes.clone();
        let echo = Arc::new(EchoFrame::default());
        let emulator_echo = echo.clone();
        let (changes_tx, changes_rx) = watch::channel(0u64);
        let (events_tx, _) = broadcast::channel(EVENTS_QUEUE);
        let emulator_events = events_tx.clone();
        let (title_tx, title_rx) = watch::channel(String::new());
        let colors = AnswerColors::default();
        let emulator_colors = colors.clone();
        let emulator_recorder = recorder.clone();
        let (shell_tx, shell_rx) = watch::channel(Arc::new(ShellNow::default()));
        let shell = ShellWatch::new(shell_tx, tickloop_client::clock::now_rfc3339_millis, shell);
        spawn_thread("emulator", move || {
            let published = Published {
                changes: changes_tx,
                events: emulator_events,
                title: title_tx,
                modes: emulator_modes,
                echo: emulator_echo,
            };
            emulator_thread(
                emu_rx,
                answers,
                emulator_colors,
                published,
                history,
                emulator_recorder,
                shell,
            )
        })?;

        let reader_tx = emu_tx.clone();
        spawn_thread("pty-reader", move || reader_thread(reader, reader_tx))?;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(release_when_quiet(changes_rx.clone(), emu_tx.downgrade()));
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
    /// far. False if the emulator thread is gone.
    pub async fn ask_shell(&self, msg: ShellMsg) -> bool {
        self.emu_tx.send(EmuMsg::Shell(msg)).await.is_ok()
    }

    /// Types `text` (as it is) and then `keys` (named by an agent) encoded
    /// for the program's modes as the emulator thread last published them,
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

    /// The recordings of this terminal.
    pub fn recorder(&self) -> &Arc<Recorder> {
        &self.recorder
    }

    /// Starts a recording from the screen as it is once every chunk read
    /// so far is applied. False if the emulator thread is gone.
    pub async fn start_recording(&self, sink: RecordingSink) -> bool {
        let (tx, rx) = oneshot::channel();
        self.emu_tx.send(EmuMsg::Record(sink, tx)).await.is_ok() && rx.await.is_ok()
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
    /// applied. `None` if the emulator thread is gone.
    pub async fn view_snapshot(&self, offset: usize) -> Option<Snapshot> {
        let (tx, rx) = oneshot::channel();
        self.emu_tx
            .send(EmuMsg::ViewSnapshot(offset, tx))
            .await
            .ok()?;
        rx.await.ok()
    }

    /// The live screen as the emulator thread took it when it applied
    /// change `change` (the value of [`Self::subscribe_changes`]), if that
    /// change was the first output after a view's keystroke: the echo's
    /// frame without a round trip to the emulator thread.
    pub fn echo_frame(&self, change: u64) -> Option<Snapshot> {
        let frame = self.echo.frame.lock().ok()?;
        match frame.as_ref() {
            Some((taken, snapshot)) if *taken == change => Some(snapshot.clone()),
            _ => None,
        }
    }

    /// Encode a view's key, paste, mouse or focus event for the Tick's
    /// modes (as the emulator thread last published them) and write it to
    /// the PTY: at once when that cannot block, else through the writer
    /// thread. Input that finds the writer's queue full is dropped, as a
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
        if self.pty_writer.write_now(&bytes) {
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
    /// `None` if the emulator thread is gone.
    pub async fn screen(&self, history: usize) -> Option<ScreenText> {
        let (tx, rx) = oneshot::channel();
        self.emu_tx.send(EmuMsg::Snapshot(history, tx)).await.ok()?;
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
        self.emu_tx
            .send(EmuMsg::Resize(rows, cols))
            .await
            .map_err(|_| LauncherError::Pty("the emulator thread is gone".into()))
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
/// [`RELEASE_AFTER`], asks the emulator to give back its spare history
/// rows. Sleeps while nothing changes (an idle instance costs no wakeups),
/// and during a flood wakes once per [`RELEASE_AFTER`], not per change.
/// Holds the emulator's queue weakly, so the emulator thread still ends
/// when the terminal is dropped (and this task with it).
async fn release_when_quiet(mut changes: watch::Receiver<u64>, emulator: mpsc::WeakSender<EmuMsg>) {
    while changes.changed().await.is_ok() {
        loop {
            let seen = *changes.borrow_and_update();
            tokio::time::sleep(RELEASE_AFTER).await;
            if *changes.borrow() == seen {
                break;
            }
        }
        let Some(queue) = emulator.upgrade() else {
            return;
        };
        if queue.send(EmuMsg::ReleaseSpare).await.is_err() {
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

fn reader_thread(mut reader: Box<dyn Read + Send>, tx: mpsc::Sender<EmuMsg>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                let read_at = std::time::Instant::now();
                if tx
                    .blocking_send(EmuMsg::Output(buf[..n].to_vec(), read_at))
                    .is_err()
                {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

fn emulator_thread(
    mut rx: mpsc::Receiver<EmuMsg>,
    answers: AnswerWriter,
    colors: AnswerColors,
    published: Published,
    history: usize,
    recorder: Arc<Recorder>,
    mut shell: ShellWatch,
) {
    let Published {
        changes,
        events,
        title,
        modes,
        echo,
    } = published;
    let mut size = (usize::from(START_ROWS), usize::from(START_COLS));
    let mut emulator = Emulator::new(size.0, size.1, history, Box::new(answers.clone()));
    emulator.answer_colors_from(colors.clone());
    let mut panics = 0u64;
    while let Some(msg) = rx.blocking_recv() {
        if let EmuMsg::Resize(rows, cols) = &msg {
            size = (usize::from(*rows), usize::from(*cols));
        }
        // A panic inside the emulator (a bug of ours or of the emulator, set
        // off by what the Tick printed) must not stop this thread: the reader
        // would stop draining the PTY and the Tick would block forever. The
        // screen starts over, saying so on its first row, and the Tick goes
        // on. The panic hook (lib.rs) logs the first few panics only, so a
        // stream of them cannot grow the log without bound.
        let handled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut term = EmulatorTerminal {
                emulator: &mut emulator,
                answers: &answers,
            };
            handle_emulator_message(&mut term, msg, &changes, &recorder, &echo, &mut shell);
            for event in emulator.take_events() {
                // No view attached: nobody to tell.
                let _ = events.send(event);
            }
            if let Some(now) = emulator.take_title_change() {
                title.send_replace(now);
            }
            modes.store(emulator.input_modes(), Ordering::Release);
        }));
        if handled.is_err() {
            panics += 1;
            if panics <= 3 {
                eprintln!(
                    "launcher: the terminal emulator panicked (#{panics}); the screen starts over"
                );
            }
            emulator = Emulator::new(size.0, size.1, history, Box::new(answers.clone()));
            emulator.answer_colors_from(colors.clone());
            emulator.feed(
                b"\x1b[7m[tickloop: the screen was reset after an emulator fault]\x1b[0m\r\n",
            );
            changes.send_modify(|n| *n = n.wrapping_add(1));
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
        EmuMsg::Output(bytes, read_at) => {
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
            shell.output(&bytes, term);
        }
        EmuMsg::Shell(msg) => shell.ask(msg, term),
        EmuMsg::Record(sink, started) => {
            let emulator = &mut *term.emulator;
            recorder.start(sink, &emulator.snapshot_scrolled(0));
            let _ = started.send(());
        }
        EmuMsg::Resize(rows, cols) => {
            let emulator = &mut *term.emulator;
            emulator.resize(usize::from(rows), usize::from(cols));
            recorder.resize(cols, rows);
            changes.send_modify(|n| *n = n.wrapping_add(1));
        }
        EmuMsg::Snapshot(history, reply) => {
            let _ = reply.send(term.emulator.text(history));
        }
        EmuMsg::ViewSnapshot(offset, reply) => {
            let _ = reply.send(term.emulator.snapshot_scrolled(offset));
        }
        EmuMsg::ReleaseSpare => {
            // Also what the launcher freed since the last quiet time (the
            // descriptor's schemas compiled once to check them, for one).
            term.emulator.release_spare_rows();
            return_free_memory();
        }
    }
}

fn writer_thread(shared: Arc<PtyWriter>, rx: std::sync::mpsc::Receiver<Vec<u8>>) {
    while let Ok(bytes) = rx.recv() {
        if let Ok(mut writer) = shared.writer.lock() {
            // A failed write means the terminal is gone; keep draining so
            // that senders never block, and keep the writer (see the
            // module doc).
            if writer.write_all(&bytes).is_ok() {
                let _ = writer.flush();
            }
        }
        shared.queued.fetch_sub(1, Ordering::AcqRel);
    }
    // Dropping the writer would type into the Tick's terminal.
    std::mem::forget(shared);
}

/// Queues `bytes` for the writer thread; never blocks.
fn queue_input(
    tx: &SyncSender<Vec<u8>>,
    writer: &PtyWriter,
    bytes: Vec<u8>,
) -> Result<(), InputError> {
    writer.queued.fetch_add(1, Ordering::AcqRel);
    let sent = tx.try_send(bytes);
    if sent.is_err() {
        writer.queued.fetch_sub(1, Ordering::AcqRel);
    }
    match sent {
        Ok(()) => Ok(()),
        Err(TrySendError::Full(_)) => Err(InputError::Full(WRITER_QUEUE)),
        Err(TrySendError::Disconnected(_)) => Err(InputError::Gone),
    }
}

impl PtyWriter {
    /// Writes `bytes` now, when that cannot block and keeps the order:
    /// short, nothing queued for the writer thread (which is not writing
    /// either: it holds the lock while it does), and the Tick has read all
    /// its input. Whether it was written. (In canonical mode FIONREAD counts
    /// whole lines only; with none waiting, the line discipline keeps
    /// taking input into a full line, so the write does not block there
    /// either.)
    fn write_now(&self, bytes: &[u8]) -> bool {
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
        let Ok(mut writer) = self.writer.try_lock() else {
            return false;
        };
        if self.queued.load(Ordering::Acquire) != 0 {
            return false;
        }
        // A failed write means the terminal is gone, as for the thread.
        if writer.write_all(bytes).is_ok() {
            let _ = writer.flush();
        }
        true
    }
}

/// The emulator's answers to terminal queries, queued for the writer thread.
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
