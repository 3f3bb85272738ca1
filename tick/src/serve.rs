//! Serving a [`Tick`] on stdio: moves fd 1 out of harm's way, reads
//! requests from stdin, answers describe and read at once and runs each
//! call on its own thread; returns on stdin EOF once the calls are answered.

use crate::session::{Action, LineSink, Session, Updater};
use crate::Tick;
use std::fs::File;
use std::io::{BufRead, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;

/// Why serving could not start or go on.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot keep a private copy of stdout for the protocol: {0}")]
    Stdout(std::io::Error),
    #[error("cannot read the host's requests on stdin: {0}")]
    Stdin(std::io::Error),
    #[error("cannot start a thread: {0}")]
    Thread(std::io::Error),
}

/// The longest request line read; the host's are far shorter.
const MAX_LINE: usize = 8 * 1024 * 1024;

/// Serves `tick` on stdin/stdout until stdin ends ([`Server::stdio`], then
/// [`Server::run`]). Use [`Server`] to get an [`Updater`] first.
pub fn serve<T: Tick>(tick: T) -> Result<(), ServeError> {
    Server::stdio(tick)?.run()
}

/// A session on a request stream and a line sink.
pub struct Server {
    session: Arc<Session>,
    input: Box<dyn BufRead + Send>,
}

impl Server {
    /// A server on this process's stdio. Moves fd 1 at once: protocol lines
    /// go to a private duplicate (close-on-exec, so children do not inherit
    /// it), and fd 1 becomes a pipe whose bytes are shown on the terminal
    /// (`/dev/tty`, else stderr) after a warning.
    pub fn stdio<T: Tick>(tick: T) -> Result<Server, ServeError> {
        let protocol = take_stdout().map_err(ServeError::Stdout)?;
        Ok(Server::new(
            tick,
            Box::new(std::io::BufReader::new(std::io::stdin())),
            Box::new(protocol),
        ))
    }

    /// A server reading requests from `input` and writing lines to `sink`
    /// (tests; other transports).
    pub fn new<T: Tick>(
        tick: T,
        input: Box<dyn BufRead + Send>,
        sink: Box<dyn LineSink>,
    ) -> Server {
        Server {
            session: Arc::new(Session::new(Arc::new(tick), sink)),
            input,
        }
    }

    /// A handle to send updates from any thread (a keyboard loop, a timer).
    pub fn updater(&self) -> Updater {
        self.session.updater()
    }

    /// Reads requests until EOF, then waits for the calls still running.
    pub fn run(mut self) -> Result<(), ServeError> {
        let mut calls = Vec::new();
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut self.input)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut line)
                .map_err(ServeError::Stdin)?;
            if n == 0 {
                break;
            }
            if line.last() != Some(&b'\n') && n == MAX_LINE {
                // Too long to be a request: skip to its end.
                let mut rest = Vec::new();
                self.input
                    .read_until(b'\n', &mut rest)
                    .map_err(ServeError::Stdin)?;
                continue;
            }
            if let Action::Call(call) = self.session.handle(&line) {
                let session = self.session.clone();
                let handle = std::thread::Builder::new()
                    .name(format!("tick call {}", call.tool()))
                    .spawn(move || session.run_call(call))
                    .map_err(ServeError::Thread)?;
                calls.push(handle);
                calls.retain(|c| !c.is_finished());
            }
            if self.session.broken() {
                break;
            }
        }
        for call in calls {
            // A panicking call was answered already (run_call catches it).
            let _ = call.join();
        }
        Ok(())
    }
}

/// Duplicates fd 1 for the protocol and points fd 1 at a pipe drained to
/// the terminal with a warning.
fn take_stdout() -> std::io::Result<File> {
    // SAFETY: plain fd syscalls on fds this function owns or has checked.
    unsafe {
        let private = libc::fcntl(1, libc::F_DUPFD_CLOEXEC, 3);
        if private < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let protocol = File::from_raw_fd(private);
        let mut fds = [0; 2];
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let (read_end, write_end) = (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]));
        // dup2 clears close-on-exec on fd 1: children write there too.
        if libc::dup2(write_end.as_raw_fd(), 1) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        drop(write_end);
        let terminal = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/tty")
            .or_else(|_| {
                let fd = libc::fcntl(2, libc::F_DUPFD_CLOEXEC, 3);
                if fd < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(File::from_raw_fd(fd))
                }
            })?;
        std::thread::Builder::new()
            .name("tick stray stdout".into())
            .spawn(move || forward_stray(File::from(read_end), terminal))?;
        Ok(protocol)
    }
}

/// What a stray write to stdout is shown after, on the terminal.
pub const STRAY_WARNING: &str = "tickloop-tick: this program wrote to stdout, which carries the Tick protocol; shown here instead:";

/// Copies what the program wrote to fd 1 onto the terminal, each line
/// after a `[stdout]` mark, the first after [`STRAY_WARNING`]; `\n` becomes
/// `\r\n` as the terminal may be in raw mode.
fn forward_stray(mut pipe: File, mut terminal: File) {
    let mut buf = [0u8; 4096];
    let mut warned = false;
    let mut at_line_start = true;
    loop {
        let n = match pipe.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut out = Vec::with_capacity(n + 64);
        if !warned {
            out.extend_from_slice(b"\r\n\x1b[1;33m");
            out.extend_from_slice(STRAY_WARNING.as_bytes());
            out.extend_from_slice(b"\x1b[0m\r\n");
            warned = true;
        }
        for &b in &buf[..n] {
            if at_line_start {
                out.extend_from_slice(b"[stdout] ");
                at_line_start = false;
            }
            if b == b'\n' {
                out.extend_from_slice(b"\r\n");
                at_line_start = true;
            } else {
                out.push(b);
            }
        }
        if terminal.write_all(&out).is_err() {
            // No terminal left: keep draining so writers never block.
            continue;
        }
    }
}
