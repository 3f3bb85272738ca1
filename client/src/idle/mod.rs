//! What a process gives back when it goes quiet (issue 51: an idle
//! instance is mostly what its start and its last burst left):
//! - each thread, when its own work pauses, the allocator's free pages and
//!   the stack it went deep on once ([`give_back`]);
//! - the process, once nothing at all has marked it busy for [`QUIET`],
//!   the code and constants it ran once ([`when_quiet`] with
//!   [`release_code`]): those pages serve every thread, so a busy
//!   process keeps them.
//!
//! The launcher marks itself busy for each request, each message of its
//! Tick and each change of its screen; tickhost for each request and each
//! line from a launcher ([`mark_busy`]).

pub mod code;
pub mod stack;

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a process must have been quiet before it lets go of its code:
/// the launcher's quiet time for its screen.
pub const QUIET: Duration = Duration::from_millis(250);

/// Gives back the allocator's free pages and the calling thread's stack
/// below the caller ([`stack::release_below_here`]).
#[inline(never)]
pub fn give_back() -> io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks and trims the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
    stack::release_below_here()
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), format!("the stack it no longer uses: {e}")))
}

/// Asks the runtime's thread to give back its stack below the frame it
/// parks in, the next time it parks ([`release_stack_when_parked`]): a
/// task's frame is deeper than the park's, and what lies between would
/// stay written.
pub fn release_stack_at_park() {
    STACK_AT_PARK.store(true, Ordering::Relaxed);
}

/// For a runtime's `on_thread_park`: gives back the stack below the park's
/// frame once [`release_stack_at_park`] asked for it (a load of one flag
/// otherwise).
pub fn release_stack_when_parked() {
    if STACK_AT_PARK.swap(false, Ordering::Relaxed) {
        // Nothing to tell anyone: the pages only stay written.
        let _ = stack::release_below_here();
    }
}

static STACK_AT_PARK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Lets go of the code and constants this process no longer runs
/// ([`code::release_mapped_code`]).
pub fn release_code() -> io::Result<()> {
    code::release_mapped_code()
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), format!("the code it no longer runs: {e}")))
}

/// Marks this process busy: [`when_quiet`] waits for a spell of
/// [`QUIET`] with no mark. As cheap as an atomic add.
pub fn mark_busy() {
    BUSY.mark();
}

/// Calls `action` after the process's start and after each busy spell,
/// once [`mark_busy`] has not been called for [`QUIET`]. Sleeps while
/// nothing marks the process busy (an idle process has no wake-up); runs
/// for the process's life.
pub async fn when_quiet(action: impl FnMut()) {
    BUSY.when_quiet(QUIET, action).await
}

static BUSY: Busy = Busy::new();

/// The steps [`Busy::when_quiet`] looks at the marks in, during a spell.
const QUIET_STEPS: u32 = 5;

/// Marks of work, and the wake of the one waiting for them.
struct Busy {
    marks: AtomicU64,
    marked: Notify,
}

impl Busy {
    const fn new() -> Busy {
        Busy {
            marks: AtomicU64::new(0),
            marked: Notify::const_new(),
        }
    }

    fn mark(&self) {
        self.marks.fetch_add(1, Ordering::Relaxed);
        self.marked.notify_one();
    }

    async fn when_quiet(&self, quiet: Duration, mut action: impl FnMut()) {
        // The start is the first busy spell.
        loop {
            // Looked at in steps, so that the action comes within a step
            // of `quiet` after the last mark, not up to twice `quiet`.
            let mut seen = self.marks.load(Ordering::Relaxed);
            let mut quiet_steps = 0;
            while quiet_steps < QUIET_STEPS {
                tokio::time::sleep(quiet / QUIET_STEPS).await;
                let now = self.marks.load(Ordering::Relaxed);
                if now == seen {
                    quiet_steps += 1;
                } else {
                    (seen, quiet_steps) = (now, 0);
                }
            }
            action();
            // A wake left by a mark before the action is no new spell.
            let acted = self.marks.load(Ordering::Relaxed);
            while self.marks.load(Ordering::Relaxed) == acted {
                self.marked.notified().await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// A [`Busy`] of the test's own, its [`Busy::when_quiet`] running with
    /// an action that counts.
    fn started() -> (Arc<Busy>, Arc<AtomicUsize>) {
        let busy = Arc::new(Busy::new());
        let count = Arc::new(AtomicUsize::new(0));
        let (watched, counter) = (busy.clone(), count.clone());
        tokio::spawn(async move {
            watched
                .when_quiet(QUIET, move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                })
                .await
        });
        (busy, count)
    }

    #[tokio::test(start_paused = true)]
    async fn the_start_is_one_spell_then_nothing_while_idle() {
        let (_busy, count) = started();
        tokio::time::sleep(QUIET / 2).await;
        assert_eq!(count.load(Ordering::SeqCst), 0, "not before the quiet time");
        tokio::time::sleep(QUIET).await;
        assert_eq!(count.load(Ordering::SeqCst), 1, "after the start");
        tokio::time::sleep(QUIET * 100).await;
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "an idle process does nothing"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_busy_spell_is_acted_on_once_it_pauses() {
        let (busy, count) = started();
        tokio::time::sleep(QUIET * 2).await;
        assert_eq!(count.load(Ordering::SeqCst), 1);
        // Marks every tenth of the quiet time, for ten quiet times.
        for _ in 0..100 {
            busy.mark();
            tokio::time::sleep(QUIET / 10).await;
        }
        assert_eq!(count.load(Ordering::SeqCst), 1, "not while the marks come");
        tokio::time::sleep(QUIET + QUIET / 10).await;
        assert_eq!(count.load(Ordering::SeqCst), 2, "a step after they pause");
        tokio::time::sleep(QUIET * 100).await;
        assert_eq!(count.load(Ordering::SeqCst), 2, "once per spell");
        busy.mark();
        tokio::time::sleep(QUIET * 2).await;
        assert_eq!(count.load(Ordering::SeqCst), 3, "a single mark is a spell");
    }
}
