//! The launchers being started, until each has reported: their pids (a
//! launcher with no `SIGUSR1` handler yet gets none, see
//! `home::wake_launchers`), and the one started ahead of the next `open`.
//!
//! tickhost keeps one `tickloop __launcher` started and waiting for its
//! spec on stdin (the spare), and an `open` hands it its spec at once
//! rather than wait for a process start (the launcher's exec, its loader
//! and its runtime's start are about half of an open). The next spare is
//! started in the background as one is taken.
//!
//! A spare has no instance yet: its stderr is tickhost's log until its spec
//! names the instance, whose log it then opens itself. It ignores
//! `SIGUSR1` until it handles it. It exits, quietly, when tickhost closes
//! its stdin without a spec (tickhost's exit, [`StartingLaunchers::discard_spare`]).

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tickloop_client::framing::{Line, LineReader};
use tickloop_proto::wire::{LaunchReport, LaunchSpec};
use tokio::io::AsyncWriteExt;

/// A launcher started, before it has its spec.
pub struct Started {
    pub pid: u32,
    stdin: tokio::net::unix::pipe::Sender,
    stdout: tokio::net::unix::pipe::Receiver,
}

/// Why [`Started::report`] has no report.
#[derive(Debug)]
pub enum ReportError {
    /// The spec could not be written: the launcher had exited (a spare
    /// someone killed); another launcher can be started for the same spec.
    NotHanded(String),
    /// The launcher took its spec and failed.
    Failed(String),
}

impl Started {
    /// Hands the launcher `spec` and reads its one report line.
    pub async fn report(mut self, spec: &LaunchSpec) -> Result<LaunchReport, ReportError> {
        let mut spec_line = serde_json::to_vec(spec)
            .map_err(|e| ReportError::NotHanded(format!("cannot encode the spec: {e}")))?;
        spec_line.push(b'\n');
        self.stdin.write_all(&spec_line).await.map_err(|e| {
            ReportError::NotHanded(format!("cannot hand the launcher its spec: {e}"))
        })?;
        drop(self.stdin);
        let mut reader = LineReader::new(self.stdout, 16 * 1024 * 1024);
        match reader.next().await {
            Ok(Some(Line::Text(text))) => {
                serde_json::from_str::<LaunchReport>(&text).map_err(|e| {
                    ReportError::Failed(format!(
                        "the launcher's report is unreadable ({e}): {text:.200}"
                    ))
                })
            }
            Ok(Some(_)) => Err(ReportError::Failed(
                "the launcher's report is unreadable".to_string(),
            )),
            Ok(None) => Err(ReportError::Failed(
                "the launcher exited before reporting".to_string(),
            )),
            Err(e) => Err(ReportError::Failed(format!(
                "cannot read the launcher's report: {e}"
            ))),
        }
    }
}

/// The launchers being started, and the spare.
pub struct StartingLaunchers {
    /// This executable, started as `<exe> __launcher`.
    exe: PathBuf,
    /// The runtime directory's root, in each launcher's environment.
    runtime_root: PathBuf,
    pids: Mutex<HashSet<u32>>,
    spare: Mutex<Slot>,
    /// Notified when a spare being started is ready (or failed).
    settled: tokio::sync::Notify,
}

#[derive(Default)]
enum Slot {
    /// None, and none being started.
    #[default]
    Empty,
    /// One is being started in the background.
    Starting,
    Ready(Started),
    /// tickhost is leaving: none is started again.
    Closed,
}

impl StartingLaunchers {
    pub fn new(exe: PathBuf, runtime_root: PathBuf) -> Self {
        StartingLaunchers {
            exe,
            runtime_root,
            pids: Mutex::new(HashSet::new()),
            spare: Mutex::new(Slot::Empty),
            settled: tokio::sync::Notify::new(),
        }
    }

    /// Launcher `pid` is starting (`true`) or has reported (`false`).
    pub fn set(&self, pid: u32, starting: bool) {
        let mut set = self.pids.lock().unwrap_or_else(|e| e.into_inner());
        if starting {
            set.insert(pid);
        } else {
            set.remove(&pid);
        }
    }

    /// The pids of launchers being started now, the spare's included.
    pub fn pids(&self) -> HashSet<u32> {
        self.pids.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Starts `<exe> __launcher` in its own session, counted as starting; it
    /// is reaped in the background whenever it exits. Blocks until its exec.
    pub fn start(&self) -> Result<Started, String> {
        use std::os::unix::process::CommandExt;
        let mut command = std::process::Command::new(&self.exe);
        command
            .arg("__launcher")
            .current_dir("/")
            // How the launcher is found when its files are gone
            // (`tickloop_client::runtime_procs`).
            .env("TICKLOOP_RUNTIME_DIR", &self.runtime_root)
            .env(
                "GLIBC_TUNABLES",
                launcher_tunables(std::env::var_os("GLIBC_TUNABLES")),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            // tickhost's log, until the spec names the instance's own.
            .stderr(Stdio::inherit());
        // SAFETY: the closure is async-signal-safe (see its note); the
        // launcher handles SIGUSR1 from `rehome` on.
        unsafe {
            command.pre_exec(tickloop_client::runtime_procs::detach_before_exec);
        }
        let started = command.spawn().map_err(|e| {
            format!(
                "cannot start the launcher {} __launcher: {e}",
                self.exe.display()
            )
        })?;
        let mut child = tickloop_client::child::Child::new(started);
        let pid = child.id();
        let pipes = child
            .take_stdin()
            .and_then(|stdin| Ok((stdin, child.take_stdout()?)));
        // Reap the launcher whenever it exits: no zombies, and never waited
        // on here. (One whose pipes cannot be used reads the end of its
        // stdin, with no spec, and exits.)
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        match pipes {
            Ok((Some(stdin), Some(stdout))) => {
                self.set(pid, true);
                Ok(Started { pid, stdin, stdout })
            }
            Ok(_) => Err("the launcher's stdin or stdout is missing".to_string()),
            Err(e) => Err(format!("cannot use the launcher's stdin and stdout: {e}")),
        }
    }

    /// The spare launcher (waiting for the one being started, if any), or
    /// `None` when there is none; the next one is started in the
    /// background either way.
    pub async fn take_spare(self: &Arc<Self>) -> Option<Started> {
        let taken = loop {
            let settled = self.settled.notified();
            tokio::pin!(settled);
            settled.as_mut().enable();
            {
                let mut slot = self.slot();
                match std::mem::take(&mut *slot) {
                    Slot::Ready(started) => break Some(started),
                    Slot::Starting => *slot = Slot::Starting,
                    other => {
                        *slot = other;
                        break None;
                    }
                }
            }
            settled.await;
        };
        self.refill();
        taken
    }

    /// Starts a spare in the background unless one is ready or starting.
    pub fn refill(self: &Arc<Self>) {
        {
            let mut slot = self.slot();
            if !matches!(*slot, Slot::Empty) {
                return;
            }
            *slot = Slot::Starting;
        }
        let this = self.clone();
        tokio::spawn(async move {
            // The fork and exec block a thread for a millisecond or two:
            // not the one that serves requests.
            let started = tokio::task::spawn_blocking({
                let this = this.clone();
                move || this.start()
            })
            .await;
            let mut slot = this.slot();
            let failed = match started {
                Ok(Ok(started)) => {
                    if matches!(*slot, Slot::Starting) {
                        *slot = Slot::Ready(started);
                    } else {
                        // Closed meanwhile: its stdin closes as it drops.
                        this.set(started.pid, false);
                    }
                    None
                }
                Ok(Err(e)) => Some(e),
                Err(e) => Some(e.to_string()),
            };
            if failed.is_some() && matches!(*slot, Slot::Starting) {
                *slot = Slot::Empty;
            }
            drop(slot);
            if let Some(e) = failed {
                super::log::log(&format!("no spare launcher: {e}"));
            }
            this.settled.notify_waiters();
        });
    }

    /// No spare from now on; the one ready, if any, is told to exit (its
    /// stdin closed) and its pid returned.
    pub fn discard_spare(&self) -> Option<u32> {
        let ready = std::mem::replace(&mut *self.slot(), Slot::Closed);
        match ready {
            Slot::Ready(started) => {
                self.set(started.pid, false);
                Some(started.pid)
            }
            _ => None,
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.spare.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// glibc's settings for a launcher: those tickhost was started with, and,
/// unless they name them, no per-thread cache of freed chunks (`tcache`)
/// and no cache of ended threads' stacks. An idle launcher's two threads
/// hold some 30 KiB of freed chunks in their caches for good, and the
/// stack of the thread that watched its shell start keeps 8 KiB
/// (`benches/results/cost-2026-12-07d.md`); a hundred idle launchers
/// multiply both. Without the caches a freed chunk goes back to the heap,
/// which the quiet time trims, and a joined thread's stack is unmapped.
/// The Tick never sees this: its environment is the one it was opened
/// with (`launcher::spawn`).
fn launcher_tunables(inherited: Option<std::ffi::OsString>) -> std::ffi::OsString {
    const OURS: [(&str, &str); 2] = [
        ("glibc.malloc.tcache_count", "0"),
        ("glibc.pthread.stack_cache_size", "0"),
    ];
    let inherited = inherited.unwrap_or_default();
    let named = inherited.to_string_lossy().into_owned();
    let mut tunables = inherited;
    for (name, value) in OURS {
        if named.contains(name) {
            continue;
        }
        if !tunables.is_empty() {
            tunables.push(":");
        }
        tunables.push(format!("{name}={value}"));
    }
    tunables
}

#[cfg(test)]
mod tests {
    use super::launcher_tunables;
    use std::ffi::OsString;

    #[test]
    fn a_launcher_runs_without_glibc_s_caches_unless_told_otherwise() {
        let none = launcher_tunables(None);
        assert_eq!(
            none,
            "glibc.malloc.tcache_count=0:glibc.pthread.stack_cache_size=0"
        );
        assert_eq!(launcher_tunables(Some(OsString::new())), none);
        assert_eq!(
            launcher_tunables(Some("glibc.malloc.check=3".into())),
            "glibc.malloc.check=3:glibc.malloc.tcache_count=0:glibc.pthread.stack_cache_size=0"
        );
        // The person's own choice stands.
        assert_eq!(
            launcher_tunables(Some("glibc.malloc.tcache_count=7".into())),
            "glibc.malloc.tcache_count=7:glibc.pthread.stack_cache_size=0"
        );
    }
}
