//! When a `shell:` program counts as started, so that `open` can answer.
//!
//! A program that exits at once (`true`, `sh -c 'echo x; exit 7'`) is
//! reported ended, with its status and screen, rather than running. Waiting
//! a fixed [`SHELL_START_SETTLE`] for every program made every `open` of a
//! shell take that long; instead a short-lived thread looks at the program
//! every [`LOOK_EVERY`] and reports it up as soon as it waits on something
//! (it is asleep: reading its terminal, in `nanosleep`, waiting for a
//! child) — a program that has gone to sleep has got past its start. The
//! fixed time stays the limit for one that keeps running without ever
//! waiting. (A thread, not the runtime's timer: that one counts whole
//! milliseconds, and a shell's start takes about one.)

use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// The longest a `shell:` program runs before the launcher reports it up.
pub const SHELL_START_SETTLE: Duration = Duration::from_millis(25);
/// How often the program is looked at while it starts.
const LOOK_EVERY: Duration = Duration::from_micros(100);

/// A `shell:` program's start, until it counts as up.
pub(super) struct StartSettle {
    settled: oneshot::Receiver<()>,
    /// The thread that looks, joined once it has said so: a joined
    /// thread's stack is unmapped at once where glibc caches no stacks
    /// (tickhost starts launchers so), where a detached one's stays
    /// resident (8 KiB) until another thread starts.
    looker: Option<std::thread::JoinHandle<()>>,
}

impl StartSettle {
    /// Starts looking at process `pid`.
    pub(super) fn new(pid: u32) -> StartSettle {
        let (tx, settled) = oneshot::channel();
        let looker = std::thread::Builder::new()
            .name("start-settle".into())
            .spawn(move || {
                let limit = Instant::now() + SHELL_START_SETTLE;
                while Instant::now() < limit && !waiting(pid) {
                    std::thread::sleep(LOOK_EVERY);
                }
                let _ = tx.send(());
            });
        // Without the thread (`tx` dropped with the closure), the program
        // counts as up at once: `open` answers, as it would a moment later.
        StartSettle {
            settled,
            looker: looker.ok(),
        }
    }

    /// Resolves once the program counts as up.
    pub(super) async fn settled(&mut self) {
        let _ = (&mut self.settled).await;
        if let Some(looker) = self.looker.take() {
            // It has sent (or dropped its sender) as its last act: the
            // join waits for no more than its return.
            let _ = looker.join();
        }
    }
}

/// Whether process `pid` is asleep (`S`: waiting on an event) or stopped:
/// the state field of `/proc/PID/stat`. A running, exiting or dead process,
/// or one whose state cannot be read, is not.
fn waiting(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| asleep(&stat))
}

/// Whether a `/proc/PID/stat` line says asleep or stopped.
fn asleep(stat: &str) -> bool {
    // The command name, in parentheses, may itself hold ") ".
    let state = stat
        .rsplit_once(") ")
        .and_then(|(_, rest)| rest.chars().next());
    matches!(state, Some('S' | 'T' | 't'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_program_counts_as_up_and_a_running_one_does_not() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("start sleep");
        // It sleeps once it has started; wait for that, by its state.
        let pid = child.id();
        let mut seen = false;
        for _ in 0..5000 {
            if waiting(pid) {
                seen = true;
                break;
            }
            std::thread::yield_now();
        }
        let _ = child.kill();
        let _ = child.wait();
        assert!(seen, "sleep never showed as waiting");
        assert!(!waiting(u32::MAX), "no such process");
        // This thread is running as it reads its own state.
        let own = std::fs::read_to_string("/proc/thread-self/stat").expect("own stat");
        assert!(!asleep(&own), "{own}");
        assert!(asleep("7 (a) b) S 1 7"));
        assert!(!asleep("7 (a) S b) Z 1 7"));
        assert!(!asleep("7 (sh) R 1 7"));
    }

    #[tokio::test]
    async fn a_program_that_never_waits_is_up_at_the_limit() {
        // This process keeps running (the test's own thread polls), but
        // the look at it ends at the limit all the same.
        let started = Instant::now();
        let mut settle = StartSettle::new(u32::MAX);
        settle.settled().await;
        assert!(started.elapsed() >= SHELL_START_SETTLE);
    }
}
