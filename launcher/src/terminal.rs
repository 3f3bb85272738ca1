//! The Tick's terminal: the PTY master, and the three threads around it.
//!
//! * the **reader** drains the master at all times (an undrained PTY blocks
//!   the Tick after ~17 KB) and hands chunks to the emulator thread;
//! * the **emulator** thread owns the [`Emulator`] (not `Sync`: one owner),
//!   applies output, answers snapshot and resize requests, and sends its
//!   answers to terminal queries to the writer;
//! * the **writer** thread is the only place that writes to the master
//!   (emulator answers and typed input), so a Tick that never reads its
//!   terminal cannot block the launcher.
//!
//! portable-pty's writer lives in the writer thread for the whole life of the
//! process: dropping it would type `\n` and Ctrl-D into the Tick's terminal.

use crate::emulator::{Emulator, ScreenText};
use crate::LauncherError;
use portable_pty::{native_pty_system, MasterPty, PtySize, SlavePty};
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// The size every Tick starts with.
pub const START_ROWS: u16 = 30;
/// The size every Tick starts with.
pub const START_COLS: u16 = 120;

/// Chunks of output queued for the emulator. When the emulator falls this far
/// behind, the reader waits, which slows the Tick like a real terminal would.
const EMULATOR_QUEUE: usize = 256;
/// Chunks of input queued for the PTY master.
const WRITER_QUEUE: usize = 1024;

enum EmuMsg {
    Output(Vec<u8>),
    Resize(u16, u16),
    Snapshot(oneshot::Sender<ScreenText>),
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
    emu_tx: mpsc::Sender<EmuMsg>,
}

impl TerminalHandle {
    /// Opens the PTY at 120x30 and starts the reader, emulator and writer threads.
    pub fn open() -> Result<Arc<TerminalHandle>, LauncherError> {
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
        spawn_thread("pty-writer", move || writer_thread(writer, input_rx))?;

        let (emu_tx, emu_rx) = mpsc::channel::<EmuMsg>(EMULATOR_QUEUE);
        let answers = AnswerWriter(input_tx.clone());
        spawn_thread("emulator", move || emulator_thread(emu_rx, answers))?;

        let reader_tx = emu_tx.clone();
        spawn_thread("pty-reader", move || reader_thread(reader, reader_tx))?;

        Ok(Arc::new(TerminalHandle {
            master: Mutex::new(pair.master),
            _slave: Mutex::new(pair.slave),
            tty_name,
            input_tx,
            emu_tx,
        }))
    }

    /// The slave device path, which the Tick's stdio is opened from.
    pub fn tty_name(&self) -> &std::path::Path {
        &self.tty_name
    }

    /// Queue bytes typed into the Tick's terminal; never blocks.
    pub fn input(&self, bytes: Vec<u8>) -> Result<(), InputError> {
        match self.input_tx.try_send(bytes) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(InputError::Full(WRITER_QUEUE)),
            Err(TrySendError::Disconnected(_)) => Err(InputError::Gone),
        }
    }

    /// The current screen, after every chunk of output read so far from the
    /// PTY has been applied. `None` if the emulator thread is gone.
    pub async fn screen(&self) -> Option<ScreenText> {
        let (tx, rx) = oneshot::channel();
        self.emu_tx.send(EmuMsg::Snapshot(tx)).await.ok()?;
        rx.await.ok()
    }

    /// Resize the PTY (the Tick gets SIGWINCH) and the emulator's screen.
    pub async fn resize(&self, rows: u16, cols: u16) -> Result<(), LauncherError> {
        {
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
                .map_err(|e| LauncherError::Pty(e.to_string()))?;
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

fn reader_thread(mut reader: Box<dyn Read + Send>, tx: mpsc::Sender<EmuMsg>) {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if tx.blocking_send(EmuMsg::Output(buf[..n].to_vec())).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

fn emulator_thread(mut rx: mpsc::Receiver<EmuMsg>, answers: AnswerWriter) {
    let mut emulator = Emulator::new(
        usize::from(START_ROWS),
        usize::from(START_COLS),
        Box::new(answers),
    );
    while let Some(msg) = rx.blocking_recv() {
        match msg {
            EmuMsg::Output(bytes) => emulator.feed(&bytes),
            EmuMsg::Resize(rows, cols) => emulator.resize(usize::from(rows), usize::from(cols)),
            EmuMsg::Snapshot(reply) => {
                let _ = reply.send(emulator.text());
            }
        }
    }
}

fn writer_thread(mut writer: Box<dyn Write + Send>, rx: std::sync::mpsc::Receiver<Vec<u8>>) {
    while let Ok(bytes) = rx.recv() {
        // A failed write means the terminal is gone; keep draining so that
        // senders never block, and keep the writer (see the module doc).
        if writer.write_all(&bytes).is_ok() {
            let _ = writer.flush();
        }
    }
    std::mem::forget(writer);
}

/// The emulator's answers to terminal queries, queued for the writer thread.
/// Dropped when the queue is full: the emulator must never wait on the Tick.
struct AnswerWriter(SyncSender<Vec<u8>>);

impl Write for AnswerWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = self.0.try_send(buf.to_vec());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
