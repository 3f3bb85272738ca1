//! The processes tickhost may signal — a launcher, a Tick's process group —
//! known by pid and start time (`/proc/PID/stat`), so that a pid the kernel
//! has since given to another process is never signalled: a status can be
//! stale (a Tick gone and its pid reused while its launcher was stopped, a
//! record left from before), and SIGKILL to a stranger's group is not a
//! small mistake.

/// A process as tickhost saw it: its pid and when it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    pub pid: i32,
    /// Clock ticks after boot (`/proc/PID/stat` field 22).
    start: u64,
}

/// What `/proc/PID/stat` says of a process that runs (not a zombie).
struct Stat {
    parent: i32,
    group: i32,
    start: u64,
}

fn stat(pid: i32) -> Option<Stat> {
    if pid <= 0 {
        return None;
    }
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name may hold spaces and parentheses: the fields follow the last ')'.
    let fields: Vec<&str> = text
        .get(text.rfind(')')? + 1..)?
        .split_whitespace()
        .collect();
    // fields[0] is field 3 (the state), so field N is fields[N - 3].
    if matches!(fields.first(), Some(&"Z" | &"X" | &"x")) {
        return None;
    }
    Some(Stat {
        parent: fields.get(1)?.parse().ok()?,
        group: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

impl Known {
    /// Process `pid` as it runs now; `None` when none does.
    pub fn now(pid: u32) -> Option<Known> {
        let pid = i32::try_from(pid).ok()?;
        stat(pid).map(|s| Known {
            pid,
            start: s.start,
        })
    }

    /// Whether it still runs: the same pid, started at the same time.
    pub fn alive(&self) -> bool {
        stat(self.pid).is_some_and(|s| s.start == self.start)
    }

    /// Whether it still runs and `parent` (still running) is its parent.
    pub fn child_of(&self, parent: &Known) -> bool {
        parent.alive()
            && stat(self.pid).is_some_and(|s| s.start == self.start && s.parent == parent.pid)
    }

    /// Whether it is a Tickloop launcher (`tickloop __launcher`).
    pub fn is_launcher(&self) -> bool {
        self.alive()
            && std::fs::read(format!("/proc/{}/cmdline", self.pid))
                .is_ok_and(|cmd| cmd.split(|b| *b == 0).any(|arg| arg == b"__launcher"))
    }

    /// Sends `signal` to it, if it still runs; whether it was sent.
    pub fn signal(&self, signal: libc::c_int) -> bool {
        // SAFETY: kill has no memory-safety preconditions.
        self.alive() && unsafe { libc::kill(self.pid, signal) } == 0
    }

    /// Sends `signal` to its process group, if it still runs and leads
    /// that group; whether it was sent.
    pub fn signal_group(&self, signal: libc::c_int) -> bool {
        let leads = stat(self.pid).is_some_and(|s| s.start == self.start && s.group == self.pid);
        // SAFETY: as above.
        leads && unsafe { libc::kill(-self.pid, signal) } == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_known_by_its_start_not_only_its_pid() {
        let me = Known::now(std::process::id()).expect("this process runs");
        assert!(me.alive());
        // The same pid with another start is another process: not alive,
        // never signalled.
        let stranger = Known {
            pid: me.pid,
            start: me.start + 1,
        };
        assert!(!stranger.alive());
        assert!(!stranger.signal(0));
        assert!(!stranger.signal_group(0));
        assert!(!me.is_launcher());
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let known = Known::now(child.id()).expect("the child runs");
        assert!(known.child_of(&me));
        assert!(!me.child_of(&known));
        let _ = child.kill();
        let _ = child.wait();
        assert!(!known.alive(), "a reaped child is gone");
        assert_eq!(Known::now(0), None);
    }
}
