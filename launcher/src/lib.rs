//! The launcher: one process per Tick, owning its PTY, its screen and its
//! protocol session.
//!
//! # Entry points
//!
//! * [`main_from_stdin`] — the whole process, for `tickloop __launcher`:
//!   reads a [`LaunchSpec`](tickloop_proto::wire::LaunchSpec) (JSON) from stdin, runs the instance, writes one
//!   [`LaunchReport`](tickloop_proto::wire::LaunchReport) line on stdout (the readiness pipe) and then points
//!   fd 1 at `/dev/null`. Returns when the instance has ended; the caller
//!   then exits the process. Log text goes to stderr.
//! * [`run`] — the same in an existing tokio runtime, with the report handed
//!   to a callback instead of stdout (tests run launchers in-process this way).
//!
//! # What a run does
//!
//! 1. Binds `spec.socket` (0600; a stale file is removed; the parent
//!    directory is created, 0700, when missing).
//! 2. Opens a 120x30 PTY ([`terminal`]), whose output is always drained into
//!    the [`emulator`] on its own thread, which also writes the emulator's
//!    answers to terminal queries and typed input to the Tick.
//! 3. Spawns the program ([`spawn`]): a new session with the PTY as its
//!    controlling terminal and stderr, stdin/stdout piped (for `shell:`
//!    programs, all three are the PTY), environment exactly the spec's plus
//!    `TICKLOOP_INSTANCE_ID` and `TERM=xterm-256color`, no leaked descriptors.
//! 4. Drives `tickloop_proto::core::Session` ([`instance`]) and serves the socket
//!    ([`socket`]); on initialization reports `Ready` and writes the record
//!    file ([`record`]); a failed initialization reports `Failed` with the
//!    first 256 characters of the screen.
//! 5. When the session ends: SIGTERM to the Tick's process group, SIGKILL
//!    after 2 s, reap, publish the final status (with `ended`), rewrite the
//!    record, flush the peers, return.

/// `eprintln!` for the whole launcher (a macro defined before the modules
/// is the one they use): its stderr is its log file, which a full disk can
/// refuse, and std's `eprintln!` panics then. A line that cannot be
/// written is dropped; the instance goes on.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub mod activity;
pub mod artifact;
pub mod emulator;
pub mod foreground;
pub mod history;
pub mod image_mark;
pub mod images;
pub mod instance;
pub mod published;
pub mod record;
pub mod recorder;
pub mod screen_model;
pub mod shell_integration;
pub mod shell_watch;
pub mod socket;
pub mod spawn;
pub mod terminal;
pub mod views;

pub use instance::{run, ReportFn, RunOutcome};
use tickloop_proto::wire::{LaunchReport, LaunchSpec};

use std::io::{Read, Write};
use std::path::PathBuf;

/// Failures of the launcher itself (not of the Tick).
#[derive(Debug, thiserror::Error)]
pub enum LauncherError {
    #[error("cannot read the launch spec: {0}")]
    Spec(String),
    #[error("cannot listen on {path}: {source}")]
    Socket {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the terminal: {0}")]
    Pty(String),
    #[error("cannot write {path}: {source}: the instance was not opened")]
    Log {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("internal: {0}")]
    Internal(String),
}

/// The `tickloop __launcher` process: spec from stdin, report on stdout
/// (then closed), run until the instance has ended.
///
/// tickhost starts a launcher before the open that uses it (see tickhost's
/// `daemon::starting`): until the spec comes its stderr is tickhost's log, then the
/// instance's own. Its stdin closed with no spec at all means tickhost went
/// without needing it: it exits, quietly.
pub fn main_from_stdin() -> anyhow::Result<()> {
    // Two calls, not one body: the frame of a function running the whole
    // launcher's life stays on the main thread's stack, so the spec's
    // parsing is not part of it.
    let Some(spec) = read_spec()? else {
        return Ok(());
    };
    serve(spec)
}

/// The launch spec tickhost wrote on stdin; `None` when stdin closed with
/// none; an error already reported on stdout.
#[inline(never)]
fn read_spec() -> Result<Option<Box<LaunchSpec>>, LauncherError> {
    if !stdin_ready() {
        // A spare, made ahead of an open: it may wait long, and the code
        // of its start (the dynamic loader's, the standard library's) need
        // not stay mapped meanwhile.
        let _ = tickloop_client::idle::code::release_mapped_code();
    }
    let mut input = Vec::new();
    let read = read_stdin(&mut input);
    if matches!(read, Ok(0)) {
        return Ok(None);
    }
    match read
        .map_err(|e| LauncherError::Spec(e.to_string()))
        .and_then(|_| {
            serde_json::from_slice(&input).map_err(|e| LauncherError::Spec(e.to_string()))
        })
        .and_then(|spec: LaunchSpec| log_to_instance(&spec.socket).map(|()| spec))
    {
        Ok(spec) => Ok(Some(Box::new(spec))),
        Err(e) => {
            write_report_to_stdout(&LaunchReport::Failed {
                reason: e.to_string(),
                screen: String::new(),
            });
            Err(e)
        }
    }
}

/// Reads stdin to its end into `input`; a closed stdin reads as empty.
/// Not through `std::io::stdin()`, whose 8 KiB buffer would stay for the
/// launcher's whole life: a duplicate of fd 0, closed once read.
fn read_stdin(input: &mut Vec<u8>) -> std::io::Result<usize> {
    use std::os::fd::FromRawFd;
    // SAFETY: fcntl duplicates a descriptor number; it touches no memory.
    let copy = unsafe { libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3) };
    if copy < 0 {
        let e = std::io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EBADF) => Ok(0),
            _ => Err(e),
        };
    }
    // SAFETY: a descriptor just made, owned by nothing else.
    let mut stdin = std::fs::File::from(unsafe { std::os::fd::OwnedFd::from_raw_fd(copy) });
    stdin.read_to_end(input)
}

/// Whether the spec is there to read at once.
fn stdin_ready() -> bool {
    let mut stdin = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd on the stack, a zero timeout.
    unsafe { libc::poll(&mut stdin, 1, 0) == 1 }
}

/// Runs the instance of `spec` until it ends.
#[inline(never)]
fn serve(spec: Box<LaunchSpec>) -> anyhow::Result<()> {
    quiet_repeated_panics();
    // One malloc arena: each thread's own would keep 100-200 KiB dirty.
    tickloop_client::malloc_arena::limit_to_one();
    // One thread for every task: a request crosses no thread on its way
    // (the PTY's reader, writer and emulator have threads of their own).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        // A launcher has a handful of sockets and pipes; tokio's default
        // of 1,024 events keeps 12 KiB in every launcher.
        .max_io_events_per_tick(64)
        // The main thread's stack is given back from the park's frame,
        // the shallowest it idles in (`idle::release_stack_at_park`).
        .on_thread_park(tickloop_client::idle::release_stack_when_parked)
        .build()?;
    let outcome = runtime.block_on(instance_future(spec))?;
    match &outcome {
        RunOutcome::Ended(info) => {
            eprintln!("launcher: ended ({}): {}", info.kind.as_str(), info.reason)
        }
        RunOutcome::Failed(reason) => eprintln!("launcher: failed to open: {reason}"),
    }
    // Threads blocked on the PTY end with the process.
    runtime.shutdown_background();
    Ok(())
}

/// The launcher's whole work, as a future on the heap. Made in a call of
/// its own: the future is large, and a value of its size in [`serve`]'s
/// frame, even for a moment, would keep that many bytes of the main
/// thread's stack dirty for the launcher's whole life.
#[inline(never)]
fn instance_future(
    spec: Box<LaunchSpec>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<RunOutcome, LauncherError>>>> {
    let socket = spec.socket.clone();
    Box::pin(async move {
        tokio::spawn(reopen_log_on_signal(socket.clone()));
        tokio::spawn(close_on_signal(socket));
        run(*spec, Box::new(write_report_to_stdout)).await
    })
}

/// Makes the log of the instance listening on `socket` (in its folder,
/// which tickhost made) this process's stderr, emptied first.
fn log_to_instance(socket: &std::path::Path) -> Result<(), LauncherError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let path = tickloop_client::paths::InstanceFiles::of_socket(socket).log;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&path);
    let log = match log {
        Ok(log) => log,
        Err(source) => return Err(LauncherError::Log { path, source }),
    };
    // SAFETY: dup2 onto fd 2, which stays a valid descriptor.
    if unsafe { libc::dup2(log.as_raw_fd(), 2) } == -1 {
        let source = std::io::Error::last_os_error();
        return Err(LauncherError::Log { path, source });
    }
    Ok(())
}

/// How many panics the launcher's log tells in full.
const PANICS_LOGGED: u32 = 3;

/// Logs the first [`PANICS_LOGGED`] panics with the default hook, then one
/// line saying later ones are not logged: a Tick whose output sets off the
/// same emulator fault again and again cannot grow the log without bound
/// (the terminal thread survives each one, see `terminal.rs`).
fn quiet_repeated_panics() {
    use std::sync::atomic::{AtomicU32, Ordering};
    static PANICS: AtomicU32 = AtomicU32::new(0);
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let n = PANICS.fetch_add(1, Ordering::Relaxed) + 1;
        if n <= PANICS_LOGGED {
            default(info);
        }
        if n == PANICS_LOGGED {
            eprintln!(
                "launcher: {PANICS_LOGGED} panics logged; later ones are counted, not logged"
            );
        }
    }));
}

/// On SIGTERM or SIGINT, close the instance (its process group ends, the
/// final status and record are written) through the launcher's own socket:
/// the same path as tickhost's `close`.
async fn close_on_signal(socket: PathBuf) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let Ok(mut ended) = tickloop_client::signals::Signals::new(&[libc::SIGTERM, libc::SIGINT])
    else {
        return;
    };
    if ended.recv().await.is_err() {
        return;
    }
    eprintln!("launcher: terminated by a signal; closing the instance");
    let Ok(mut stream) = tokio::net::UnixStream::connect(&socket).await else {
        // The socket is gone (its runtime directory was removed): end the
        // Tick's process group directly rather than ignore the signal.
        eprintln!(
            "launcher: cannot reach {}; ending the Tick directly",
            socket.display()
        );
        end_children_and_exit();
    };
    let hello = tickloop_proto::wire::Hello::new(tickloop_proto::wire::Role::Host);
    let close =
        tickloop_proto::wire::Envelope::new(0, tickloop_proto::wire::LauncherRequest::Close);
    let (Ok(hello), Ok(close)) = (serde_json::to_string(&hello), serde_json::to_string(&close))
    else {
        return;
    };
    if stream
        .write_all(format!("{hello}\n{close}\n").as_bytes())
        .await
        .is_err()
    {
        return;
    }
    // Stay connected (reading what comes) until the launcher hangs up.
    let mut lines = tokio::io::BufReader::new(stream).lines();
    while let Ok(Some(_)) = lines.next_line().await {}
}

/// On each SIGUSR1 (see `instance::rehome`): a log file that was removed
/// with the instance's folder is made again, and stderr goes there.
async fn reopen_log_on_signal(socket: PathBuf) {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(mut signals) = tickloop_client::signals::Signals::new(&[libc::SIGUSR1]) else {
        return;
    };
    let files = tickloop_client::paths::InstanceFiles::of_socket(&socket);
    while signals.recv().await.is_ok() {
        if files.log.exists() || files.create_folder().is_err() {
            continue;
        }
        let Ok(log) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&files.log)
        else {
            continue;
        };
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto fd 2, which stays a valid descriptor.
        unsafe {
            libc::dup2(log.as_raw_fd(), 2);
        }
        eprintln!(
            "launcher: {} was gone; logging there again",
            files.log.display()
        );
    }
}

/// Ends the process group of every child of this launcher (the Tick leads
/// its own): SIGTERM, then SIGKILL after the usual grace; then exits.
fn end_children_and_exit() -> ! {
    let children = children_of_this_process();
    let signal_groups = |signal: libc::c_int| {
        for &pid in &children {
            // SAFETY: kill(2) on process groups this launcher started.
            unsafe {
                libc::kill(-pid, signal);
            }
        }
    };
    signal_groups(libc::SIGTERM);
    std::thread::sleep(std::time::Duration::from_secs(2));
    signal_groups(libc::SIGKILL);
    std::process::exit(0);
}

/// The pids of this process's children (`/proc/self/task/*/children`).
fn children_of_this_process() -> Vec<libc::pid_t> {
    tickloop_client::runtime_procs::children(std::process::id())
        .into_iter()
        .filter_map(|pid| libc::pid_t::try_from(pid).ok())
        .filter(|&pid| pid > 1)
        .collect()
}

/// Writes the report line on stdout, then points fd 1 at `/dev/null`, which
/// closes the readiness pipe.
fn write_report_to_stdout(report: &LaunchReport) {
    let mut line = serde_json::to_vec(report).unwrap_or_else(|e| {
        format!("{{\"failed\":{{\"reason\":\"cannot encode the report: {e}\",\"screen\":\"\"}}}}")
            .into_bytes()
    });
    line.push(b'\n');
    // Straight to fd 1: std's `stdout()` would keep a 1 KiB buffer for
    // the launcher's life.
    // SAFETY: fd 1 is open (tickhost's pipe, or /dev/null after), and the
    // `File` is never dropped, so it never closes it.
    let mut stdout = std::mem::ManuallyDrop::new(unsafe {
        <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(1)
    });
    let _ = stdout.write_all(&line);
    if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
        use std::os::fd::AsRawFd;
        // SAFETY: dup2 onto fd 1, which stays a valid descriptor.
        unsafe {
            libc::dup2(null.as_raw_fd(), 1);
        }
    }
}
