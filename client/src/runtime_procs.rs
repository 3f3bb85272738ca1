//! The processes of a runtime directory, found in `/proc` when its files
//! cannot say (its socket or pid file removed, the whole directory removed
//! by a tmp cleaner or at logout): this user's `tickloop __tickhost` and
//! `tickloop __launcher` processes whose environment names the directory
//! (`TICKLOOP_RUNTIME_DIR`, which the CLI gives the tickhost it starts and
//! tickhost gives every launcher).
//!
//! The one who finds them sends `SIGUSR1`, which each answers by making its
//! files again (as tmux answers it by making its socket again): tickhost
//! its socket, pid file and folders; a launcher its folder, socket and
//! record.

use std::path::Path;

/// What a process of the runtime directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Tickhost,
    Launcher,
}

impl Role {
    fn argument(self) -> &'static str {
        match self {
            Role::Tickhost => "__tickhost",
            Role::Launcher => "__launcher",
        }
    }
}

/// The pids of this user's processes playing `role` for the runtime
/// directory `root` (this process left out), sorted.
pub fn find(root: &Path, role: Role) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    let mut found: Vec<u32> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me && plays(pid, root, role))
        .collect();
    found.sort_unstable();
    found
}

/// Whether process `pid` is this user's, alive, and plays `role` for `root`.
pub fn plays(pid: u32, root: &Path, role: Role) -> bool {
    let proc = Path::new("/proc").join(pid.to_string());
    let owned = std::fs::metadata(&proc)
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == crate::paths::current_uid())
        .unwrap_or(false);
    if !owned || !alive(pid) {
        return false;
    }
    let Ok(cmdline) = std::fs::read(proc.join("cmdline")) else {
        return false;
    };
    if cmdline.split(|b| *b == 0).nth(1) != Some(role.argument().as_bytes()) {
        return false;
    }
    let Ok(environ) = std::fs::read(proc.join("environ")) else {
        return false;
    };
    let mut wanted = b"TICKLOOP_RUNTIME_DIR=".to_vec();
    wanted.extend_from_slice(root.as_os_str().as_encoded_bytes());
    environ
        .split(|b| *b == 0)
        .any(|var| var == wanted.as_slice())
}

/// Whether `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses.
    match stat.rfind(')') {
        Some(i) => !stat[i + 1..].trim_start().starts_with(['Z', 'X']),
        None => false,
    }
}

/// Ends every launcher of the runtime directory `root` but those of
/// `except` (ending already): SIGTERM (each ends its Tick's process group,
/// as at `close`), then, for one still running after `grace`, SIGKILL to
/// its children's process groups and to itself. Blocks until they are
/// gone; returns their pids.
pub fn end_launchers(root: &Path, except: &[u32], grace: std::time::Duration) -> Vec<u32> {
    let launchers: Vec<u32> = find(root, Role::Launcher)
        .into_iter()
        .filter(|pid| !except.contains(pid))
        .collect();
    for &pid in &launchers {
        signal(pid, libc::SIGTERM);
    }
    let deadline = std::time::Instant::now() + grace;
    while launchers.iter().any(|&pid| alive(pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for &pid in launchers.iter().filter(|&&pid| alive(pid)) {
        for child in children(pid) {
            // The Tick leads its own process group.
            if let Ok(group) = libc::pid_t::try_from(child) {
                // SAFETY: kill(2) on the process group of a launcher's child.
                unsafe {
                    libc::kill(-group, libc::SIGKILL);
                }
            }
        }
        signal(pid, libc::SIGKILL);
    }
    launchers
}

/// How long [`end_launchers`] gives launchers: their own 2 s between
/// SIGTERM and SIGKILL to the Tick, and a margin.
pub const LAUNCHER_GRACE: std::time::Duration = std::time::Duration::from_secs(4);

/// The pids of `pid`'s children (`/proc/PID/task/*/children`).
pub fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|text| {
            text.split_whitespace()
                .filter_map(|child| child.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// What a tickhost or a launcher runs between its fork and its exec
/// (`pre_exec`): a session of its own, so that it outlives whoever started
/// it, and `SIGUSR1` ignored until it handles it, so that one sent to every
/// process of the runtime directory does not end it meanwhile.
pub fn detach_before_exec() -> std::io::Result<()> {
    // SAFETY: setsid and signal are async-signal-safe, and nothing else is
    // touched between the fork and the exec.
    unsafe {
        if libc::setsid() == -1 {
            return Err(std::io::Error::last_os_error());
        }
        libc::signal(libc::SIGUSR1, libc::SIG_IGN);
    }
    Ok(())
}

/// Sends `signal` to `pid`; whether it was delivered.
pub fn signal(pid: u32, signal: libc::c_int) -> bool {
    match libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) has no memory-safety preconditions.
        Ok(pid) if pid > 0 => unsafe { libc::kill(pid, signal) == 0 },
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_is_found_by_its_role_and_runtime_directory() {
        let scratch = std::env::temp_dir().join(format!("tl-procs-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).expect("scratch");
        // `sh __launcher`: a process whose argv[1] is the role (the script
        // of that name says it runs, then waits for its stdin).
        std::fs::write(scratch.join("__launcher"), "echo running\nread x\n").expect("script");
        let root = scratch.join("runtime");
        let spawn = |dir: &Path| {
            let mut child = std::process::Command::new("sh")
                .arg("__launcher")
                .current_dir(&scratch)
                .env("TICKLOOP_RUNTIME_DIR", dir)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .expect("sh");
            // spawn returns once the exec is past its point of no return,
            // before the kernel has set up the new argv and environment
            // that /proc shows: the script's first line says it is done.
            let mut said = String::new();
            let stdout = child.stdout.take().expect("stdout");
            std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut said)
                .expect("read the script's line");
            assert_eq!(said, "running\n");
            child
        };
        let mut ours = spawn(&root);
        let mut other = spawn(&scratch.join("elsewhere"));
        let pid = ours.id();
        assert!(alive(pid));
        assert!(
            plays(pid, &root, Role::Launcher),
            "cmdline {:?}",
            std::fs::read(format!("/proc/{pid}/cmdline"))
        );
        assert!(!plays(pid, &root, Role::Tickhost));
        assert!(!plays(other.id(), &root, Role::Launcher));
        assert_eq!(find(&root, Role::Launcher), vec![pid]);
        assert!(find(&root, Role::Tickhost).is_empty());
        assert!(signal(pid, libc::SIGKILL));
        let _ = ours.wait();
        assert!(!alive(pid));
        assert!(find(&root, Role::Launcher).is_empty());
        let _ = other.kill();
        let _ = other.wait();
        let _ = std::fs::remove_dir_all(&scratch);
    }
}
