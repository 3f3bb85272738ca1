//! The history's upkeep between bursts of output, timed by the terminal
//! thread's loop (`thread.rs`): compacted during a flood, its spare rows,
//! the screen's cells and the allocator's free pages given back once the
//! screen is quiet; and the launcher's code let go of once it all is.

/// How long a screen must be quiet before the emulator moves the rows that
/// scrolled off into its compact history and gives back the memory they
/// held (see [`crate::emulator::Emulator::release_spare_rows`]).
pub(super) const RELEASE_AFTER: std::time::Duration = std::time::Duration::from_millis(250);
/// How long a screen must be quiet before its cells are parked and its
/// thread ends (`emulator::parked`, `dormant`): longer than a person's
/// pause between words, so that the first key after it finds the screen
/// as it left it (a parked screen and a new thread cost that key's echo
/// some 0.3 ms, `benches/results/cost-2026-12-07d.md`), and far shorter
/// than an idle session's life.
pub(super) const PARK_AFTER: std::time::Duration = std::time::Duration::from_secs(2);
/// How often, while output does not pause, the rows that scrolled off are
/// moved into the compact history ([`crate::emulator::Emulator::compact`]): a flood keeps at
/// most a second's worth of them as full rows of cells.
pub(super) const COMPACT_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// Gives back the allocator's free pages and the calling thread's stack
/// below the caller's frame ([`tickloop_client::idle::give_back`]).
#[inline(never)]
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
        // The stack below this task's frame went back above; below the
        // runtime's park, shallower, goes back as it parks next.
        tickloop_client::idle::release_stack_at_park();
        if let Err(e) = released {
            if !std::mem::replace(&mut said, true) {
                eprintln!("launcher: cannot let go of {e}");
            }
        }
    })
    .await
}
