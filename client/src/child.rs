//! A child process awaited in a tokio runtime without tokio's `process`
//! feature (which needs its `signal` feature, and with it a registry of
//! every signal in each process: see [`crate::signals`]).
//!
//! [`Child::wait`] waits on a pidfd (Linux 5.3 and later) for the exit, then
//! reaps it; where the kernel has no pidfd, a blocking thread waits instead.
//! The pipes of a child started with `Stdio::piped()` become tokio's pipe
//! ends ([`Child::take_stdin`], [`Child::take_stdout`]).

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::ExitStatus;
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::net::unix::pipe;

/// A started child, not yet reaped.
pub struct Child {
    child: std::process::Child,
    /// Readable once the child has exited.
    exited: Option<AsyncFd<OwnedFd>>,
}

impl Child {
    /// Takes a child just started (and not reaped: its pid cannot be reused
    /// before that, so the pidfd is its own). Outside a tokio runtime, or
    /// without pidfds, [`Child::wait`] waits in a blocking thread.
    pub fn new(child: std::process::Child) -> Child {
        let in_runtime = tokio::runtime::Handle::try_current().is_ok();
        let exited = pidfd_open(child.id())
            .filter(|_| in_runtime)
            // SAFETY: the OwnedFd is the descriptor, owned by the AsyncFd
            // for its whole life, and always gives the same number.
            .and_then(|fd| unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }.ok());
        Child { child, exited }
    }

    /// Its pid.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The write end of its stdin, when it was started with a pipe there.
    pub fn take_stdin(&mut self) -> io::Result<Option<pipe::Sender>> {
        self.child
            .stdin
            .take()
            .map(|stdin| pipe::Sender::from_owned_fd(OwnedFd::from(stdin)))
            .transpose()
    }

    /// The read end of its stdout, when it was started with a pipe there.
    pub fn take_stdout(&mut self) -> io::Result<Option<pipe::Receiver>> {
        self.child
            .stdout
            .take()
            .map(|stdout| pipe::Receiver::from_owned_fd(OwnedFd::from(stdout)))
            .transpose()
    }

    /// Waits for its exit and reaps it.
    pub async fn wait(mut self) -> io::Result<ExitStatus> {
        let Some(exited) = self.exited.take() else {
            let mut child = self.child;
            return tokio::task::spawn_blocking(move || child.wait())
                .await
                .map_err(io::Error::other)?;
        };
        loop {
            let mut ready = exited.readable().await?;
            if let Some(status) = self.child.try_wait()? {
                return Ok(status);
            }
            ready.clear_ready();
        }
    }
}

/// A pidfd for `pid`, or `None` where the kernel has none.
fn pidfd_open(pid: u32) -> Option<OwnedFd> {
    let pid = libc::pid_t::try_from(pid).ok()?;
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor
    // or -1; it touches no memory of ours.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    let fd = i32::try_from(fd).ok().filter(|&fd| fd >= 0)?;
    // SAFETY: a descriptor the kernel just made for us alone.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_child_s_pipes_carry_its_input_and_output_and_its_exit_is_reaped() {
        let started = Command::new("sh")
            .args(["-c", "read line; echo \"got $line\"; exit 7"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("sh starts");
        let mut child = Child::new(started);
        assert!(child.exited.is_some(), "this kernel has pidfds");
        let pid = child.id();
        let mut stdin = child.take_stdin().expect("a pipe").expect("stdin");
        let mut stdout = child.take_stdout().expect("a pipe").expect("stdout");
        stdin.write_all(b"hello\n").await.expect("write");
        let mut said = String::new();
        stdout.read_to_string(&mut said).await.expect("read");
        assert_eq!(said, "got hello\n");
        let status = child.wait().await.expect("waited");
        assert_eq!(status.code(), Some(7));
        // Reaped: the pid is no child of ours any more.
        // SAFETY: waitpid with WNOHANG on a pid; no memory is passed.
        let again =
            unsafe { libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(again, -1, "the child was reaped");
    }

    #[tokio::test]
    async fn a_child_killed_by_a_signal_says_so() {
        let started = Command::new("sleep")
            .arg("1000")
            .spawn()
            .expect("sleep starts");
        let child = Child::new(started);
        // SAFETY: sends SIGKILL to our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
        let status = child.wait().await.expect("waited");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    }
}
