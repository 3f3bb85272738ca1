//! The Tick's terminal: the PTY master, and the one thread around it.
//!
//! The **terminal thread** runs one `poll` loop over the master (non-
//! blocking) and a wake-up the rest of the launcher rings after queueing a
//! message for it. It
//!
//! * drains the master at all times (an undrained PTY blocks the Tick after
//!   ~17 KB) and applies each chunk to the [`Emulator`](crate::emulator::Emulator) it owns (not
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
//!
//! One job a file: this one is the [`TerminalHandle`] the rest of the
//! launcher holds; `thread` the terminal thread's loop, `keeper` the
//! emulator it owns and what it publishes, `echo` the frame of a
//! keystroke's echo and the views it is written to at once, `direct` that echo drawn on a view's
//! own terminal when it lent it, `messages` what is queued for the thread,
//! `keys` the keys of a view's terminal read here when it lent them,
//! `pty_input` writing to the master, `fd` the descriptors it polls, and
//! `quiet` the history's upkeep between bursts of output.

mod direct;
mod dormant;
mod echo;
mod fd;
mod keeper;
mod keys;
mod last_output;
mod messages;
mod pty_input;
mod quiet;
mod thread;

pub(crate) use quiet::{release_code_when_quiet, return_free_memory};

pub use direct::LentTty;
use echo::EchoFrame;
pub use echo::EchoWaiter;
use fd::{own_nonblocking_dup, Wake};
use keeper::Published;
pub use keys::{KeysBack, LentKeys, OnTyped};
use last_output::LastOutput;
use messages::{EmuMsg, ToTerminal, EMULATOR_QUEUE};
use pty_input::{queue_input, AnswerWriter, PtyWriter};
use thread::TerminalThread;

use crate::emulator::{AnswerColors, ScreenText, TermEvent};
use crate::recorder::{Recorder, RecordingSink};
use crate::shell_watch::{ShellMsg, ShellNow, ShellWatch};
use crate::LauncherError;
use alacritty_terminal::term::TermMode;
use portable_pty::{native_pty_system, MasterPty, PtySize, SlavePty};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;
use tickloop_proto::attach::TermColors;
use tickloop_proto::attach::{Snapshot, ViewEvent};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

/// The size every Tick starts with.
pub const START_ROWS: u16 = 30;
/// The size every Tick starts with.
pub const START_COLS: u16 = 120;

/// Bells and clipboard writes queued for each view.
const EVENTS_QUEUE: usize = 32;

/// How long no output must arrive before an ended Tick's screen is final.
const SETTLE_QUIET: std::time::Duration = std::time::Duration::from_millis(30);
/// The most an ended Tick's final screen waits for output to stop.
const SETTLE_LIMIT: std::time::Duration = std::time::Duration::from_secs(1);

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
    input_tx: Sender<Vec<u8>>,
    pty_writer: Arc<PtyWriter>,
    /// The Tick's terminal modes as the terminal thread last published them.
    modes: Arc<AtomicU32>,
    emu_tx: ToTerminal,
    /// Bumped by the terminal thread whenever the screen may have changed.
    changes_rx: watch::Receiver<u64>,
    /// The change the terminal thread had applied when it last ran out of
    /// output (see [`Self::subscribe_drained`]).
    drained_rx: watch::Receiver<u64>,
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
    /// Whether any image is placed (see [`Self::images_placed`]).
    images_placed: Arc<AtomicBool>,
    /// When the program last wrote output (see [`Self::last_output_at`]).
    last_output: Arc<LastOutput>,
    /// The shell's state read from the output, as the terminal thread last
    /// published it.
    shell_rx: watch::Receiver<Arc<ShellNow>>,
    /// Images dropped for the image memory's limit, in all.
    images_dropped_rx: watch::Receiver<crate::images::ImagesDropped>,
    image_limit_mb: u64,
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
        let (handle, thread) = Self::build(history, recorder, shell)?;
        dormant::start(thread, tokio::runtime::Handle::try_current().ok())?;
        Ok(Arc::new(handle))
    }

    /// The PTY at 120x30, this handle to it and the terminal thread's state,
    /// not started yet.
    fn build(
        history: usize,
        recorder: Arc<Recorder>,
        shell: bool,
    ) -> Result<(TerminalHandle, TerminalThread), LauncherError> {
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

        let (input_tx, input_rx) = channel::<Vec<u8>>();
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

        let image_limit = crate::images::Images::configured_limit();
        let (tx, emu_rx) = mpsc::channel::<Box<EmuMsg>>(EMULATOR_QUEUE);
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
        let images_placed = Arc::new(AtomicBool::new(false));
        let last_output = Arc::new(LastOutput::default());
        let (changes_tx, changes_rx) = watch::channel(0u64);
        let (drained_tx, drained_rx) = watch::channel(0u64);
        let (events_tx, _) = broadcast::channel(EVENTS_QUEUE);
        let (title_tx, title_rx) = watch::channel(String::new());
        let colors = AnswerColors::default();
        let (images_dropped_tx, images_dropped_rx) =
            watch::channel(crate::images::ImagesDropped::default());
        let published = Published {
            images_dropped: images_dropped_tx,
            changes: changes_tx,
            drained: drained_tx,
            events: events_tx.clone(),
            title: title_tx,
            modes: modes.clone(),
            echo: echo.clone(),
            images_placed: images_placed.clone(),
            last_output: last_output.clone(),
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
            image_limit,
        };
        let handle = TerminalHandle {
            master: Mutex::new(pair.master),
            _slave: Mutex::new(pair.slave),
            tty_name,
            input_tx,
            pty_writer,
            modes,
            emu_tx,
            changes_rx,
            drained_rx,
            events_tx,
            title_rx,
            size: Mutex::new((START_COLS, START_ROWS)),
            colors,
            recorder,
            echo,
            images_placed,
            last_output,
            shell_rx,
            images_dropped_rx,
            image_limit_mb: image_limit / (1024 * 1024),
        };
        Ok((handle, thread))
    }

    /// Images dropped for the image memory's limit, in all, and the limit
    /// in MB (`image_memory_mb`).
    pub fn subscribe_images_dropped(&self) -> (watch::Receiver<crate::images::ImagesDropped>, u64) {
        (self.images_dropped_rx.clone(), self.image_limit_mb)
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

    /// The change (a value of [`Self::subscribe_changes`]) the terminal
    /// thread had applied when it last found no more output to read: when
    /// it equals the latest change, the output has stopped for now and the
    /// screen is as the program left it. Told once each time the thread
    /// runs out of output after a change.
    pub fn subscribe_drained(&self) -> watch::Receiver<u64> {
        self.drained_rx.clone()
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

    /// The kept image `index`'s bytes, in the encoding the program sent,
    /// once every chunk read so far is applied; `None` when no image of
    /// that index is kept (or the terminal thread is gone).
    pub async fn image(&self, index: u32) -> Option<tickloop_proto::wire::ImageData> {
        let (tx, rx) = oneshot::channel();
        if !self.emu_tx.send(EmuMsg::Image(index, tx)).await {
            return None;
        }
        rx.await.ok().flatten()
    }

    /// When the program last wrote to its terminal, as the terminal thread
    /// stamped the output it applied; `None` before any output. A reader
    /// that is not woken for every change (the status, published at most
    /// about once a second) still gets the time of the last one.
    pub fn last_output_at(&self) -> Option<SystemTime> {
        self.last_output.at()
    }

    /// Whether any kept image is placed on a screen, as the terminal thread
    /// told it before the last change it published: when not, a view that
    /// shows no image need not ask [`Self::image_placements`] (a round trip
    /// to the terminal thread after every frame, every echo's included).
    pub fn images_placed(&self) -> bool {
        self.images_placed.load(Ordering::Acquire)
    }

    /// The kept images' placements as the terminal thread has them now
    /// (`None`: the terminal thread is gone).
    pub async fn image_placements(&self) -> Option<Vec<tickloop_proto::wire::ImagePlacement>> {
        let (tx, rx) = oneshot::channel();
        if !self.emu_tx.send(EmuMsg::Placements(tx)).await {
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

    /// View `waiter` has sent all it had: until its task takes it back
    /// ([`Self::echo_take_back`]), the terminal thread writes the frame of
    /// the next echo to it itself, as it applies the output.
    pub fn echo_wait(&self, waiter: EchoWaiter) {
        if let Ok(mut waiters) = self.echo.waiters.lock() {
            waiters.push(waiter);
        }
    }

    /// View `view`'s waiter back, with what was sent to it while it waited;
    /// after this the terminal thread no longer writes to it.
    pub fn echo_take_back(&self, view: u64) -> Option<EchoWaiter> {
        let mut waiters = self.echo.waiters.lock().ok()?;
        let at = waiters.iter().position(|w| w.view() == view)?;
        let mut waiter = waiters.swap_remove(at);
        // What was drawn, before anything the task sends; the rows kept
        // until the task has written it (`LentTty::let_go`).
        waiter.flush_told();
        Some(waiter)
    }

    /// View `view` asks for the rows of its terminal back: told what the
    /// terminal thread drew on them, and let go of.
    pub fn echo_tell(&self, view: u64) {
        self.echo.tell(view);
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

    /// A view lent its terminal's keys: the terminal thread reads them
    /// until it gives them back ([`keys`]). False if the thread is gone.
    pub async fn lend_keys(&self, keys: LentKeys) -> bool {
        self.emu_tx.send(EmuMsg::LendKeys(keys)).await
    }

    /// View `view` wants the keys of its lending `lend` back (given back
    /// at once if they are still lent; else they were already).
    pub async fn take_keys(&self, view: u64, lend: u64) -> bool {
        self.emu_tx.send(EmuMsg::TakeKeys { view, lend }).await
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
