//! The per-user daemon: instances, routing, latest state, watch deliveries.
//!
//! `tickloop __tickhost` calls [`run`]. It takes the single-instance lock
//! (`tickhost.pid`), refuses to start when a tickhost already answers or
//! runs (found by its process when its files were removed), listens on
//! `tickhost.sock` (0600), finds the launchers of a previous run again
//! (`i/*/record.json`, after moving the layout before's `l/`), writes
//! `ready` on its stdout, then sends its stdout and stderr to
//! `tickhost.log` and serves until `shutdown` or a signal, making its files
//! again when they are removed. Launchers are their own sessions and
//! outlive it.
//!
//! Submodules: [`registry`] (instances and their newest status), [`conn`]
//! (the connection to each launcher), [`reader`] (its incoming lines),
//! [`open`], [`serve`] (client connections), [`connection`] (one client's
//! connection and the request on it), [`request_line`] (one client request
//! line), [`requests`] (the request table, read in one place, the one
//! dispatch and a file per family of requests), [`approval`] (the consent
//! gate: actions held for a person, their one decision, the approval log),
//! [`consent`] (a request through the gate on its caller's connection, and
//! the person's answers), [`watch`] (deliveries), [`discover`] (finding
//! launchers again), [`home`] (tickhost's own files, made again when
//! removed), [`process`] (processes known by pid and start time, so a
//! reused pid is never signalled), [`log`].

pub mod approval;
pub mod conn;
pub mod connection;
pub mod consent;
pub mod discover;
pub mod home;
pub mod log;
pub mod open;
pub mod process;
pub mod reader;
pub mod registry;
pub mod request_line;
pub mod requests;
pub mod serve;
pub mod starting;
mod upkeep;
pub mod watch;

use registry::Shared;
use std::io::{BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::PathBuf;
use std::time::Duration;
use tickloop_client::framing::read_text_line_blocking;
use tickloop_client::paths::{PathsError, RuntimeDir};
use tickloop_client::runtime_procs;
use tickloop_proto::core::limits::Limits;
use tickloop_proto::wire::{Hello, HelloReply, Role};

/// The longest hello reply read when looking for a running tickhost.
const MAX_HELLO_REPLY: usize = 64 * 1024;

/// Removes the kept records of forgotten instances of `runtime` older
/// than `[records] keep_days` (`tickloop_client::kept`).
fn prune_kept(runtime: &std::path::Path) {
    let Some(kept) = tickloop_client::kept::Kept::of_runtime(runtime) else {
        return;
    };
    let config = tickloop_client::config::load().unwrap_or_default();
    kept.prune(config.keep_records(), std::time::SystemTime::now());
}

/// Why the daemon could not start or went down.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error(transparent)]
    Paths(#[from] PathsError),
    #[error("tickhost is already running{}; `tickloop shutdown` ends it", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AlreadyRunning { pid: Option<u32> },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DaemonError {
    let what = what.into();
    move |source| DaemonError::Io { what, source }
}

/// How to run the daemon.
#[derive(Debug, Clone)]
pub struct DaemonOptions {
    /// The runtime directory (see [`RuntimeDir::locate`]).
    pub runtime_dir: PathBuf,
    /// This executable, run as `<exe> __launcher` for each instance.
    pub exe: PathBuf,
}

/// Runs the daemon until `shutdown` (or SIGTERM/SIGINT). Blocks; builds its
/// own tokio runtime.
pub fn run(options: DaemonOptions) -> Result<(), DaemonError> {
    let dir = RuntimeDir::ensure(&options.runtime_dir)?;
    let log_file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(dir.log_file())
        .map_err(io(format!("cannot open {}", dir.log_file().display())))?;

    // The single-instance lock, held for the daemon's life.
    let pid_file = lock_pid_file(&dir)?;
    if answers_hello(&dir) {
        return Err(DaemonError::AlreadyRunning { pid: None });
    }
    // A tickhost whose socket and pid file were removed holds no lock a
    // newcomer could see: it is found by its process, and asked to make
    // them again.
    no_other_tickhost(&dir)?;

    // One malloc arena: tokio's blocking threads (files) and notify's
    // watcher would each keep one of their own.
    tickloop_client::malloc_arena::limit_to_one();
    // One thread for every task: a request relayed to a launcher crosses no
    // thread inside the daemon. Nothing here blocks (files and processes go
    // through tokio; `notify` has its own thread).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        // tokio's default of 1,024 events a turn keeps 12 KiB; a turn with
        // more than 256 ready takes the rest at the next.
        .max_io_events_per_tick(256)
        .build()
        .map_err(io("cannot start the tokio runtime"))?;
    let shared = Shared::new(dir.clone(), options.exe, limits_from_env());

    runtime.block_on(async move {
        let (mut home, mut alarm) = home::Home::open(&dir, pid_file)?;

        // Every recorded instance is listed before `ready`; launchers are
        // connected concurrently, and those that answer within
        // ADOPT_BEFORE_READY (all healthy ones) are current when the first
        // client asks. A stopped launcher is connected in the background.
        discover::move_legacy_files(&shared);
        discover::register_recorded(&shared);
        let scan = tokio::spawn({
            let shared = shared.clone();
            async move { discover::scan(&shared).await }
        });
        let _ = tokio::time::timeout(ADOPT_BEFORE_READY, scan).await;
        tokio::spawn(discover::rescan_when_asked(shared.clone()));
        // Forgotten instances' records past their time go.
        tokio::task::spawn_blocking({
            let root = shared.dir.root().to_path_buf();
            move || prune_kept(&root)
        });
        home.watch_launchers(&shared);
        // Launchers that lost their files while no tickhost ran make them
        // again, and are adopted as their records appear.
        discover::find_lost(&shared, ADOPT_BEFORE_READY).await;

        // Readiness, then the log takes stdout and stderr.
        {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(b"ready\n").and_then(|()| stdout.flush());
        }
        // SAFETY: dup2 onto the standard descriptors, which stay open.
        unsafe {
            libc::dup2(log_file.as_raw_fd(), 1);
            libc::dup2(log_file.as_raw_fd(), 2);
        }
        log::log(&format!(
            "tickhost {} listening on {} (pid {})",
            tickloop_proto::wire::wire_version(),
            dir.socket().display(),
            std::process::id()
        ));
        // A launcher waits for the first open.
        shared.starting.refill();
        // What the start and each busy spell (requests, launchers' lines)
        // used and no longer needs goes back once tickhost is quiet.
        tokio::spawn(upkeep::give_back_when_quiet());

        let mut shutdown = shared.shutdown.subscribe();
        let mut terminate = tickloop_client::signals::Signals::new(&[libc::SIGTERM])
            .map_err(io("cannot handle SIGTERM"))?;
        let mut interrupt = tickloop_client::signals::Signals::new(&[libc::SIGINT])
            .map_err(io("cannot handle SIGINT"))?;
        loop {
            tokio::select! {
                accepted = home.accept() => match accepted {
                    Ok(stream) => match tickloop_client::peer::check(&stream) {
                        Ok(()) => {
                            tokio::spawn(serve::serve_client(shared.clone(), stream));
                        }
                        Err(refused) => log::log(&format!("refused a connection: {refused}")),
                    },
                    Err(e) => {
                        log::log(&format!("accept failed: {e}"));
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                signalled = alarm.disturbed() => home.repair(&shared, signalled),
                _ = shutdown.wait_for(|done| *done) => {
                    log::log("shutdown");
                    break;
                }
                _ = terminate.recv() => {
                    log::log("SIGTERM: exiting; launchers go on");
                    break;
                }
                _ = interrupt.recv() => {
                    log::log("SIGINT: exiting; launchers go on");
                    break;
                }
            }
        }
        shared.leave();
        shared.starting.discard_spare();
        let _ = std::fs::remove_file(dir.socket());
        let _ = std::fs::remove_file(dir.pid_file());
        Ok::<(), DaemonError>(())
    })?;
    // Don't wait for connection tasks or blocking threads.
    std::process::exit(0)
}

/// How long a starting daemon waits for another tickhost of its runtime
/// directory (found by its process) to answer or go.
const OTHER_WAIT: Duration = Duration::from_secs(5);

/// Errors when another tickhost of `dir` runs: one that lost its socket is
/// asked (`SIGUSR1`) to make it again, and one exiting after `shutdown` is
/// waited for (at most [`OTHER_WAIT`]).
fn no_other_tickhost(dir: &RuntimeDir) -> Result<(), DaemonError> {
    let deadline = std::time::Instant::now() + OTHER_WAIT;
    let mut asked = Vec::new();
    loop {
        let others = runtime_procs::find(dir.root(), runtime_procs::Role::Tickhost);
        let Some(&first) = others.first() else {
            return Ok(());
        };
        if answers_hello(dir) {
            return Err(DaemonError::AlreadyRunning { pid: Some(first) });
        }
        for &pid in &others {
            if !asked.contains(&pid) {
                runtime_procs::signal(pid, libc::SIGUSR1);
                asked.push(pid);
            }
        }
        if std::time::Instant::now() >= deadline {
            return Err(DaemonError::AlreadyRunning { pid: Some(first) });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// How long a starting daemon waits for the lock of one that is exiting.
const LOCK_WAIT: Duration = Duration::from_secs(5);
/// The protocol limits tickhost gives its launchers: the defaults, with
/// `TICKLOOP_INIT_TIMEOUT_MS` and `TICKLOOP_CALL_TIMEOUT_MS` (read once at
/// start; for tests) replacing the initialization and call time limits.
fn limits_from_env() -> Limits {
    let mut limits = Limits::default();
    let ms = |name: &str| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map(Duration::from_millis)
    };
    if let Some(limit) = ms("TICKLOOP_INIT_TIMEOUT_MS") {
        limits.init_request_timeout = limit;
        limits.init_total_timeout = limit;
    }
    if let Some(limit) = ms("TICKLOOP_CALL_TIMEOUT_MS") {
        limits.call_timeout = limit;
    }
    limits
}

/// How long tickhost waits, before it says `ready`, for recorded launchers
/// to answer (a healthy one answers in milliseconds).
const ADOPT_BEFORE_READY: Duration = Duration::from_millis(500);

/// Opens and locks `tickhost.pid`. A daemon still exiting (after
/// `shutdown`) holds it briefly, so this waits up to [`LOCK_WAIT`], unless
/// the holder answers on the socket (a start that lost a race); a lock
/// taken on a file that was meanwhile removed is retried on the new one.
fn lock_pid_file(dir: &RuntimeDir) -> Result<std::fs::File, DaemonError> {
    use std::os::unix::fs::MetadataExt;
    let path = dir.pid_file();
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(io(format!("cannot open {}", path.display())))?;
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            let same = match (file.metadata(), std::fs::metadata(&path)) {
                (Ok(held), Ok(now)) => held.ino() == now.ino() && held.dev() == now.dev(),
                _ => false,
            };
            if same {
                return Ok(file);
            }
            continue;
        }
        // The holder is up (not exiting): this start lost a race with
        // another; give up now rather than at the deadline.
        if std::time::Instant::now() >= deadline || answers_hello(dir) {
            let pid = std::fs::read_to_string(&path)
                .ok()
                .and_then(|s| s.trim().parse().ok());
            return Err(DaemonError::AlreadyRunning { pid });
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether a tickhost answers hello on the socket of `dir`.
pub fn answers_hello(dir: &RuntimeDir) -> bool {
    let Ok(stream) = StdUnixStream::connect(dir.socket()) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(2)));
    let Ok(mut line) = serde_json::to_vec(&Hello::new(Role::Client)) else {
        return false;
    };
    line.push(b'\n');
    let mut writer = &stream;
    if writer.write_all(&line).is_err() {
        return false;
    }
    match read_text_line_blocking(&mut BufReader::new(&stream), MAX_HELLO_REPLY) {
        Ok(Some(answer)) => serde_json::from_str::<HelloReply>(&answer).is_ok(),
        Ok(None) | Err(_) => false,
    }
}
