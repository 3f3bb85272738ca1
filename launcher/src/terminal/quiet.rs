//! The history's upkeep between bursts of output: compacted during a
//! flood, its spare rows and the allocator's free pages given back once
//! the screen is quiet.

use super::fd::Wake;
use super::messages::EmuMsg;
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// How long a screen must be quiet before the emulator moves the rows that
/// scrolled off into its compact history and gives back the memory they
/// held (see [`crate::emulator::Emulator::release_spare_rows`]).
pub(super) const RELEASE_AFTER: std::time::Duration = std::time::Duration::from_millis(250);
/// How often, while output does not pause, the rows that scrolled off are
/// moved into the compact history ([`crate::emulator::Emulator::compact`]): a flood keeps at
/// most a second's worth of them as full rows of cells.
pub(super) const COMPACT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// After the start and after each burst of output, once the screen has
/// been quiet for [`RELEASE_AFTER`], asks the emulator to compact its
/// history and give back its spare rows (and the terminal thread its free
/// memory), and every [`COMPACT_EVERY`] of a burst that does not pause, to
/// compact it. Sleeps while nothing changes (an idle instance
/// costs no wakeups), and during a flood wakes once per [`RELEASE_AFTER`],
/// not per change. Holds the terminal thread's queue weakly, so the thread
/// still ends when the terminal is dropped (and this task with it).
pub(super) async fn release_when_quiet(
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
    // The terminal's start counts as a burst: what making the emulator
    // used goes back once it is quiet, whether or not the program writes.
    loop {
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
        if changes.changed().await.is_err() {
            return;
        }
    }
}

/// Gives back the allocator's free pages and the calling thread's stack
/// below the caller's frame ([`tickloop_client::idle::give_back`]).
pub(crate) fn return_free_memory() {
    if let Err(e) = tickloop_client::idle::give_back() {
        // Said once: this runs after every burst of output.
        static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
            eprintln!("launcher: cannot give back {e}");
        }
    }
}

/// Lets go of the code the launcher no longer runs, and of the main
/// thread's stack below the runtime's frames, each time the whole launcher
/// has been quiet ([`tickloop_client::idle::when_quiet`]: its screen's
/// changes, its requests, its Tick's messages and its views' keys mark it
/// busy).
pub(crate) async fn release_code_when_quiet() {
    let mut said = false;
    tickloop_client::idle::when_quiet(|| {
        let released =
            tickloop_client::idle::release_code().and_then(|()| tickloop_client::idle::give_back());
        if let Err(e) = released {
            if !std::mem::replace(&mut said, true) {
                eprintln!("launcher: cannot let go of {e}");
            }
        }
    })
    .await
}
