//! The Tick's process as the instance loop sees it: its stdin (fed by a
//! writer task; the bytes queued that the Tick has not taken yet are
//! counted, so a Tick that stops reading is refused more requests rather
//! than queued for without bound), its stdout (read by a reader task), its
//! exit (waited for by a waiter task), and that exit held back until its
//! output is drained.
//!
//! Each pipe is absent where the program has none (a `shell:` program,
//! whose stdin and stdout are the terminal).

use crate::spawn::Spawned;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::child::Child;
use tickloop_client::clock::now_rfc3339;
use tickloop_client::framing::LeanBufReader;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Bytes queued for the Tick's stdin that it has not taken (beyond the 64
/// KiB its pipe holds), past which the instance holds its writes and
/// refuses requests until it has taken half (256 KiB; the queue may pass it
/// by what one turn of the instance loop writes: at most the 8 requests in
/// flight). A Tick slow to take one large call meets it too, for as long as
/// it takes.
pub(super) const STDIN_UNREAD_MAX: usize = 256 * 1024;

/// When the Tick has exited but its stdout has not reached EOF (a child holds
/// it), how long to wait for the rest of its output before reporting the exit.
const EXIT_DRAIN: Duration = Duration::from_millis(200);

/// What the Tick's stdout reader hears.
pub(super) enum StdoutEvent {
    Bytes(Vec<u8>),
    Eof,
}

/// What the instance loop hears from the Tick's process.
pub(super) enum TickEvent {
    /// Output, or its end (`None`: the reader is gone, as good as EOF).
    Stdout(Option<StdoutEvent>),
    /// The process exited (`None`: its status could not be read).
    Exit(Option<ExitStatus>),
}

/// One process of the Tick (an `artifact:` instance has one per start).
pub(super) struct TickProcess {
    pid: u32,
    argv: Vec<String>,
    /// When it started (RFC 3339).
    started_at: String,
    stdin_tx: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// Bytes queued for stdin and not written into its pipe yet.
    stdin_unread: Arc<AtomicUsize>,
    stdout_rx: Option<mpsc::Receiver<StdoutEvent>>,
    exit_rx: Option<oneshot::Receiver<ExitStatus>>,
    /// The exit, held until stdout reaches EOF (or [`EXIT_DRAIN`] passes).
    exit_pending: Option<(String, Instant)>,
    exited: bool,
}

impl TickProcess {
    /// Takes over the spawned process: its pipes get their tasks.
    pub(super) fn start(spawned: Spawned) -> TickProcess {
        let Spawned {
            child, pid, argv, ..
        } = spawned;
        let started_at = now_rfc3339();
        let stdin_unread = Arc::new(AtomicUsize::new(0));
        let (stdin_tx, stdout_rx, exit_rx) = child_pipes(child, stdin_unread.clone());
        TickProcess {
            pid,
            argv,
            started_at,
            stdin_tx,
            stdin_unread,
            stdout_rx,
            exit_rx: Some(exit_rx),
            exit_pending: None,
            exited: false,
        }
    }

    pub(super) fn pid(&self) -> u32 {
        self.pid
    }

    pub(super) fn argv(&self) -> &[String] {
        &self.argv
    }

    pub(super) fn started_at(&self) -> &str {
        &self.started_at
    }

    /// Whether its exit was seen.
    pub(super) fn exited(&self) -> bool {
        self.exited
    }

    /// Whether it has exited and its exit was handed on: nothing runs.
    pub(super) fn gone(&self) -> bool {
        self.exited && self.exit_pending.is_none()
    }

    /// Queues `bytes` for its stdin (nothing when it has none, or it was
    /// closed).
    pub(super) fn write(&self, bytes: Vec<u8>) {
        if let Some(tx) = &self.stdin_tx {
            let n = bytes.len();
            self.stdin_unread.fetch_add(n, Ordering::AcqRel);
            if tx.send(bytes).is_err() {
                self.stdin_unread.fetch_sub(n, Ordering::AcqRel);
            }
        }
    }

    /// Bytes queued for its stdin that it has not taken yet (beyond what
    /// its pipe holds).
    pub(super) fn stdin_unread(&self) -> usize {
        self.stdin_unread.load(Ordering::Acquire)
    }

    /// Closes its stdin after what is queued.
    pub(super) fn close_stdin(&mut self) {
        self.stdin_tx = None;
    }

    /// Whether its stdout or its exit may still have something to say.
    pub(super) fn listening(&self) -> bool {
        self.stdout_rx.is_some() || self.exit_rx.is_some()
    }

    /// The next output or the exit (cancel-safe). Stdout is done with at
    /// its end, the exit once heard.
    pub(super) async fn next_event(&mut self) -> TickEvent {
        tokio::select! {
            event = recv_stdout(&mut self.stdout_rx), if self.stdout_rx.is_some() => {
                if !matches!(event, Some(StdoutEvent::Bytes(_))) {
                    self.stdout_rx = None;
                }
                TickEvent::Stdout(event)
            }
            status = recv_exit(&mut self.exit_rx), if self.exit_rx.is_some() => {
                self.exit_rx = None;
                TickEvent::Exit(status)
            }
            else => std::future::pending().await,
        }
    }

    /// It exited: the exit is held until its stdout is drained; `true`
    /// when that is already so (hand it on now with [`Self::take_exit`]).
    pub(super) fn on_exit(&mut self, status: Option<ExitStatus>) -> bool {
        let description = match status {
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "exited".to_string(),
            },
            None => "exited (its status could not be read)".to_string(),
        };
        self.exited = true;
        self.exit_pending = Some((description, Instant::now() + EXIT_DRAIN));
        self.stdout_rx.is_none()
    }

    /// When a held exit is handed on even though stdout has not ended.
    pub(super) fn exit_deadline(&self) -> Option<Instant> {
        self.exit_pending.as_ref().map(|(_, at)| *at)
    }

    /// The held exit's description ("exited with status 3"), once.
    pub(super) fn take_exit(&mut self) -> Option<String> {
        self.exit_pending.take().map(|(description, _)| description)
    }

    /// Its exit is not to be handed on (another process replaces it).
    pub(super) fn forget_exit(&mut self) {
        self.exit_pending = None;
    }

    /// No process replaced it (the next one could not start): it counts as
    /// exited.
    pub(super) fn not_replaced(&mut self) {
        self.exited = true;
    }
}

/// The per-process channels: the Tick's stdin (a writer task), its stdout
/// (a reader task) and its exit (a waiter task).
type ChildPipes = (
    Option<mpsc::UnboundedSender<Vec<u8>>>,
    Option<mpsc::Receiver<StdoutEvent>>,
    oneshot::Receiver<ExitStatus>,
);

fn child_pipes(mut child: Child, unread: Arc<AtomicUsize>) -> ChildPipes {
    let mut stdin_tx = None;
    let mut stdout_rx = None;
    if let Some(mut stdin) = pipe_or_none(child.take_stdin(), "stdin") {
        // Unbounded as a channel, bounded in bytes by its senders, who look
        // at `unread` first (STDIN_UNREAD_MAX).
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            let mut broken = false;
            while let Some(bytes) = rx.recv().await {
                // A failed write is the Tick gone: its exit will follow.
                if !broken && stdin.write_all(&bytes).await.is_err() {
                    broken = true;
                }
                unread.fetch_sub(bytes.len(), Ordering::AcqRel);
            }
        });
        stdin_tx = Some(tx);
    }
    if let Some(stdout) = pipe_or_none(child.take_stdout(), "stdout") {
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            // Reads of up to 64 KiB (a pipe's room) while the Tick writes
            // much; no buffer on the heap while it is quiet.
            let mut stdout = LeanBufReader::with_capacity(stdout, STDOUT_READ);
            loop {
                let bytes = match stdout.fill_buf().await {
                    Ok([]) | Err(_) => {
                        let _ = tx.send(StdoutEvent::Eof).await;
                        return;
                    }
                    Ok(read) => read.to_vec(),
                };
                stdout.consume(bytes.len());
                if tx.send(StdoutEvent::Bytes(bytes)).await.is_err() {
                    return;
                }
            }
        });
        stdout_rx = Some(rx);
    }
    let (exit_tx, exit_rx) = oneshot::channel();
    tokio::spawn(async move {
        if let Ok(status) = child.wait().await {
            let _ = exit_tx.send(status);
        }
    });
    (stdin_tx, stdout_rx, exit_rx)
}

/// The most one read of a Tick's stdout takes.
const STDOUT_READ: usize = 64 * 1024;

/// A pipe of the Tick's, or none when it cannot be used (said in the
/// launcher's log: the Tick then runs without that side of its protocol).
fn pipe_or_none<P>(pipe: std::io::Result<Option<P>>, which: &str) -> Option<P> {
    pipe.unwrap_or_else(|e| {
        eprintln!("launcher: cannot use the Tick's {which}: {e}");
        None
    })
}

async fn recv_stdout(rx: &mut Option<mpsc::Receiver<StdoutEvent>>) -> Option<StdoutEvent> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn recv_exit(rx: &mut Option<oneshot::Receiver<ExitStatus>>) -> Option<ExitStatus> {
    match rx {
        Some(rx) => rx.await.ok(),
        None => std::future::pending().await,
    }
}
