//! A quiet terminal without a thread. Once its screen is parked and it has
//! nothing to read, write or answer, the terminal thread hands its whole
//! loop to a task on the launcher's runtime and ends: a thread's stack,
//! its glibc descriptor and its alternate signal stack (some 20 KiB
//! written, in each idle launcher) go with it. The task waits on the
//! PTY master, the wake-up and the message queue with the runtime's own
//! `epoll`, and at the first of them starts a thread for the loop again,
//! which takes up exactly where the last one stopped.

use super::fd::Wake;
use super::thread::{TerminalLoop, TerminalThread};
use crate::LauncherError;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::sync::mpsc;

/// The name of the terminal's thread, each time it starts.
const THREAD_NAME: &str = "terminal";
/// How long to wait before trying again to start a thread the system
/// refused (its limit on threads reached).
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// Starts the terminal thread for `thread`; with a runtime, also the task
/// that keeps its loop while it is dormant.
#[inline(never)]
pub(super) fn start(
    thread: TerminalThread,
    runtime: Option<tokio::runtime::Handle>,
) -> Result<(), LauncherError> {
    let Some(runtime) = runtime else {
        spawn(move || thread.run(None))?;
        return Ok(());
    };
    let (back, handed_back) = mpsc::unbounded_channel();
    let running = spawn(move || thread.run(Some(back)))?;
    runtime.spawn(keep(running, handed_back));
    Ok(())
}

#[inline(never)]
fn spawn(f: impl FnOnce() + Send + 'static) -> Result<JoinHandle<()>, LauncherError> {
    std::thread::Builder::new()
        .name(THREAD_NAME.to_string())
        .spawn(f)
        .map_err(|e| LauncherError::Pty(format!("cannot start the {THREAD_NAME} thread: {e}")))
}

/// Keeps the terminal's loop for the terminal's life: each time its thread
/// hands it back, joins that thread, waits for work, and starts a thread
/// for it again. Ends when the terminal is dropped.
async fn keep(
    mut running: JoinHandle<()>,
    mut handed_back: mpsc::UnboundedReceiver<Box<TerminalLoop>>,
) {
    while let Some(mut state) = handed_back.recv().await {
        // The thread returns right after handing its loop over; joined,
        // its stack is unmapped at once (tickhost starts launchers with no
        // cache of ended threads' stacks).
        while !running.is_finished() {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
        let _ = running.join();
        // What the thread's end freed (its runtime state, its buffers),
        // and the main thread's stack below its park.
        super::quiet::return_free_memory();
        tickloop_client::idle::release_stack_at_park();
        match wait_for_work(&mut state).await {
            Woken::Work => {}
            Woken::Dropped => return,
            // Never dormant again: its thread sleeps in `poll` as before.
            Woken::CannotWait => state.dormancy = None,
        }
        let slot = Arc::new(Mutex::new(Some(state)));
        running = loop {
            let taken = slot.clone();
            let started = spawn(move || {
                let state = taken.lock().ok().and_then(|mut s| s.take());
                if let Some(state) = state {
                    state.run();
                }
            });
            match started {
                Ok(running) => break running,
                Err(e) => {
                    // Refused (the system's limit on threads): the loop is
                    // still in the slot; the output waits in the PTY.
                    eprintln!("launcher: {e}; trying again");
                    tokio::time::sleep(RETRY_AFTER).await;
                }
            }
        };
    }
}

/// What ended a dormant loop's wait.
enum Woken {
    /// Output, input, or a message (taken off the queue: `pending`).
    Work,
    /// The terminal is dropped.
    Dropped,
    /// The runtime cannot watch the descriptors.
    CannotWait,
}

/// A descriptor of the loop's, held open for the runtime to watch.
enum Watched {
    Master(Arc<OwnedFd>),
    Wake(Arc<Wake>),
}

impl AsRawFd for Watched {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            Watched::Master(fd) => fd.as_raw_fd(),
            Watched::Wake(wake) => wake.0.as_raw_fd(),
        }
    }
}

/// Registers `fd` with the runtime for readability.
fn watch(fd: Watched) -> Option<AsyncFd<Watched>> {
    // SAFETY: `Watched` holds the descriptor open (an `Arc` of its owner)
    // for the `AsyncFd`'s whole life and always gives the same number.
    unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok()
}

/// Waits until the master has output (or hangs up), the wake-up rings
/// (input queued, or a message), or a message comes.
async fn wait_for_work(state: &mut TerminalLoop) -> Woken {
    // Registered for this wait only: `epoll` reports at once what is
    // ready when it is added, so nothing that came before is missed.
    let master = watch(Watched::Master(state.writer.master.clone()));
    let wake = watch(Watched::Wake(state.writer.wake.clone()));
    let (Some(master), Some(wake)) = (master, wake) else {
        return Woken::CannotWait;
    };
    tokio::select! {
        msg = state.rx.recv() => match msg {
            Some(msg) => {
                state.pending = Some(msg);
                Woken::Work
            }
            None => Woken::Dropped,
        },
        _ = master.readable() => Woken::Work,
        _ = wake.readable() => Woken::Work,
    }
}
