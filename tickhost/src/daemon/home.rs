//! tickhost's own files in the runtime directory — `tickhost.sock`,
//! `tickhost.pid` (also the single-instance lock), `tickhost.log` — and
//! making them again when they are removed: a tmp cleaner takes the
//! socket, logout takes the whole directory. `notify` watches the
//! directory; `SIGUSR1` (which a CLI that finds no socket sends, as one
//! does to tmux) asks for the same. Either way the directory, `i/`, the
//! socket, the pid file and the log are made again where they are gone,
//! and every launcher of the directory gets `SIGUSR1` to make its own
//! folder, socket and record again (`launcher::instance::rehome`).

use super::log::log;
use super::registry::Shared;
use super::{io, DaemonError};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::paths::RuntimeDir;
use tickloop_client::runtime_procs::{self, Role};
use tickloop_client::signals::Signals;
use tickloop_client::whole_file;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

/// How long a burst of removals (an `rm -rf` in progress) settles before
/// the files are made again.
const SETTLE: Duration = Duration::from_millis(100);

/// The socket listened on, the pid file held, and what tells of their
/// removal.
pub struct Home {
    dir: RuntimeDir,
    listener: UnixListener,
    /// `(dev, ino)` of the socket file bound, of the pid file locked, and
    /// of the directory watched.
    socket_id: Option<(u64, u64)>,
    pid_file: std::fs::File,
    root_id: Option<(u64, u64)>,
    events_tx: mpsc::UnboundedSender<()>,
    /// Watching the runtime directory itself.
    watcher: Option<notify::RecommendedWatcher>,
    /// Watching `i/` for records ([`super::discover::watch_launchers`]),
    /// and which `i/` it watches.
    launchers: Option<notify::RecommendedWatcher>,
    instances_id: Option<(u64, u64)>,
}

/// What tells that something of the directory was removed: the watch's
/// events, and `SIGUSR1`.
pub struct Alarm {
    events: mpsc::UnboundedReceiver<()>,
    usr1: Option<Signals>,
}

impl Home {
    /// Listens on the socket of `dir` (a stale file there is replaced),
    /// writes this process's pid into the pid file, locked as `pid_file`
    /// is, and starts watching.
    pub fn open(dir: &RuntimeDir, pid_file: std::fs::File) -> Result<(Home, Alarm), DaemonError> {
        let (events_tx, events) = mpsc::unbounded_channel();
        let mut home = Home {
            dir: dir.clone(),
            listener: bind(&dir.socket())?,
            socket_id: identity(&dir.socket()),
            pid_file,
            root_id: identity(dir.root()),
            events_tx,
            watcher: None,
            launchers: None,
            instances_id: None,
        };
        match write_pid_file(dir) {
            Ok(file) => home.pid_file = file,
            // A full disk: the lock is held all the same (on the file made
            // empty); clients find this tickhost by its process.
            Err(DaemonError::Io { what, source }) if whole_file::is_full(&source) => {
                log(&format!(
                    "{what}: {source}; tickhost runs without its pid written"
                ));
            }
            Err(e) => return Err(e),
        }
        home.watcher = watch_root(dir, home.events_tx.clone());
        let alarm = Alarm {
            events,
            usr1: Signals::new(&[libc::SIGUSR1]).ok(),
        };
        Ok((home, alarm))
    }

    /// Watches `i/` for the records of launchers (again, when it is a new
    /// `i/`).
    pub fn watch_launchers(&mut self, shared: &Arc<Shared>) {
        self.instances_id = identity(&self.dir.instances_dir());
        self.launchers = match super::discover::watch_launchers(shared.clone()) {
            Ok(watcher) => Some(watcher),
            Err(e) => {
                log(&format!(
                    "cannot watch {}: {e}",
                    self.dir.instances_dir().display()
                ));
                None
            }
        };
    }

    /// The next client.
    pub async fn accept(&self) -> std::io::Result<UnixStream> {
        self.listener.accept().await.map(|(stream, _)| stream)
    }

    /// Makes again whatever of the directory is gone, and asks every
    /// launcher of it to do the same when something was (or when
    /// `signalled`: `SIGUSR1` asks for it). Nothing is done once tickhost
    /// is leaving (its `shutdown` removes the socket itself).
    pub fn repair(&mut self, shared: &Arc<Shared>, signalled: bool) {
        if shared.leaving() {
            return;
        }
        let dir = match RuntimeDir::ensure(self.dir.root()) {
            Ok(dir) => dir,
            Err(e) => {
                log(&format!("cannot make the runtime directory again: {e}"));
                return;
            }
        };
        let mut repaired = signalled;
        let root_now = identity(dir.root());
        if root_now != self.root_id || self.watcher.is_none() {
            repaired = true;
            self.root_id = root_now;
            self.watcher = watch_root(&dir, self.events_tx.clone());
        }
        if identity(&dir.instances_dir()) != self.instances_id || self.launchers.is_none() {
            repaired = true;
            self.watch_launchers(shared);
        }
        reopen_log(&dir.log_file());
        if identity(&dir.socket()) != self.socket_id {
            repaired = true;
            match bind(&dir.socket()) {
                Ok(listener) => {
                    self.listener = listener;
                    self.socket_id = identity(&dir.socket());
                    log(&format!(
                        "{} was gone: listening there again",
                        dir.socket().display()
                    ));
                }
                Err(e) => log(&format!("cannot listen again: {e}")),
            }
        }
        if identity(&dir.pid_file()) != self.pid_file.metadata().ok().map(|m| (m.dev(), m.ino())) {
            repaired = true;
            match write_pid_file(&dir) {
                Ok(file) => {
                    self.pid_file = file;
                    log(&format!(
                        "{} was gone: written again",
                        dir.pid_file().display()
                    ));
                }
                Err(e) => log(&format!("cannot write the pid file again: {e}")),
            }
        }
        if !repaired {
            return;
        }
        let woken = wake_launchers(shared);
        if woken > 0 {
            log(&format!(
                "asked {woken} launchers to make their folders, sockets and records again"
            ));
        }
    }
}

impl Alarm {
    /// Resolves when something of the directory was removed (`false`),
    /// or at `SIGUSR1` (`true`).
    pub async fn disturbed(&mut self) -> bool {
        let usr1 = async {
            match self.usr1.as_mut() {
                // An error is the signals' socket gone: no signal comes again.
                Some(usr1) => {
                    if usr1.recv().await.is_err() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending().await,
            }
        };
        let signalled = tokio::select! {
            _ = self.events.recv() => false,
            () = usr1 => true,
        };
        tokio::time::sleep(SETTLE).await;
        while self.events.try_recv().is_ok() {}
        signalled
    }
}

/// Sends `SIGUSR1` to every launcher of the runtime directory (those
/// tickhost is starting aside: they have no handler yet); how many.
pub fn wake_launchers(shared: &Shared) -> usize {
    let starting = shared.starting.pids();
    let mut pids: Vec<u32> = runtime_procs::find(shared.dir.root(), Role::Launcher);
    pids.extend(
        shared
            .all()
            .iter()
            .filter(|i| i.conn().is_some())
            .map(|i| i.status().launcher_pid),
    );
    pids.sort_unstable();
    pids.dedup();
    pids.into_iter()
        .filter(|pid| !starting.contains(pid))
        .filter(|&pid| runtime_procs::signal(pid, libc::SIGUSR1))
        .count()
}

/// The `(dev, ino)` of the file at `path`.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

/// Listens on `socket` (0600), replacing a file there.
fn bind(socket: &Path) -> Result<UnixListener, DaemonError> {
    let _ = std::fs::remove_file(socket);
    let listener =
        UnixListener::bind(socket).map_err(io(format!("cannot listen on {}", socket.display())))?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(io(format!("cannot chmod {}", socket.display())))?;
    Ok(listener)
}

/// Writes this process's pid into the pid file of `dir` whole: into a new
/// file, locked, then renamed over the path. The file returned holds the
/// lock (the single-instance lock lives on the file the path names).
pub fn write_pid_file(dir: &RuntimeDir) -> Result<std::fs::File, DaemonError> {
    let path = dir.pid_file();
    let pid = format!("{}\n", std::process::id());
    let (mode, durability) = (whole_file::Mode::Private, whole_file::Durability::Volatile);
    whole_file::write_with(&path, pid.as_bytes(), mode, durability, |file| {
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    })
    .map_err(|e| DaemonError::Io {
        what: e.not_saved("tickhost's pid"),
        source: e.source,
    })
}

/// Points stdout and stderr at the log `path` again when it was removed.
fn reopen_log(path: &PathBuf) {
    if path.exists() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
    else {
        return;
    };
    // SAFETY: dup2 onto the standard descriptors, which stay open.
    unsafe {
        libc::dup2(file.as_raw_fd(), 1);
        libc::dup2(file.as_raw_fd(), 2);
    }
}

/// Watches the directory of `dir` (itself too) for the removal or renaming
/// of itself, `i/`, the socket, the pid file or the log.
fn watch_root(
    dir: &RuntimeDir,
    tx: mpsc::UnboundedSender<()>,
) -> Option<notify::RecommendedWatcher> {
    use notify::Watcher as _;
    let watched: Vec<PathBuf> = vec![
        dir.root().to_path_buf(),
        dir.instances_dir(),
        dir.socket(),
        dir.pid_file(),
        dir.log_file(),
    ];
    let handler = move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        // Removed, or renamed away (a rename onto a path, as tickhost's
        // own pid file is written, is no loss).
        let gone = matches!(
            event.kind,
            notify::EventKind::Remove(_)
                | notify::EventKind::Modify(notify::event::ModifyKind::Name(
                    notify::event::RenameMode::From
                ))
        );
        if gone && event.paths.iter().any(|p| watched.contains(p)) {
            let _ = tx.send(());
        }
    };
    let mut watcher = match notify::recommended_watcher(handler) {
        Ok(watcher) => watcher,
        Err(e) => {
            log(&format!("cannot watch {}: {e}", dir.root().display()));
            return None;
        }
    };
    match watcher.watch(dir.root(), notify::RecursiveMode::NonRecursive) {
        Ok(()) => Some(watcher),
        Err(e) => {
            log(&format!("cannot watch {}: {e}", dir.root().display()));
            None
        }
    }
}
