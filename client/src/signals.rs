//! Signals awaited in a tokio runtime without tokio's `signal` feature.
//!
//! With that feature (or `process`, which needs it) in the build, every
//! runtime built with I/O makes tokio's registry of all 65 signals, a
//! `watch` channel each: 22 KiB of heap in every launcher and in tickhost
//! (issue 51, `benches/results/cost-2026-12-07c.md`). Here a [`Signals`]
//! registers only the signals it names, through `signal-hook-registry`
//! (already in the build through alacritty's `signal-hook`), and hears of
//! them on a socket pair of its own.
//!
//! As with tokio, a signal once listened for no longer has its default
//! action, even after its [`Signals`] is dropped.

use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream as StdUnixStream;
use tokio::io::AsyncReadExt;
use tokio::net::UnixStream;

/// One or more signals, heard as they come: [`Signals::recv`] waits for the
/// next delivery of any of them.
pub struct Signals {
    heard: UnixStream,
    /// The end the handler writes to: kept open while registered.
    told: StdUnixStream,
    registered: Vec<signal_hook_registry::SigId>,
}

impl Signals {
    /// Listens for `signals` from now on. Must be called inside a tokio
    /// runtime with I/O enabled. An error for a signal that cannot be
    /// handled (`SIGKILL`, `SIGSTOP`, and the ones the kernel raises for a
    /// fault: `SIGSEGV`, `SIGILL`, `SIGFPE`).
    pub fn new(signals: &[libc::c_int]) -> io::Result<Signals> {
        if let Some(forbidden) = signals
            .iter()
            .find(|s| signal_hook_registry::FORBIDDEN.contains(s))
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("signal {forbidden} cannot be handled"),
            ));
        }
        let (heard, told) = StdUnixStream::pair()?;
        heard.set_nonblocking(true)?;
        // A burst of signals while nobody reads must not block the handler:
        // it drops the byte when the socket is full (one is enough).
        told.set_nonblocking(true)?;
        let mut made = Signals {
            heard: UnixStream::from_std(heard)?,
            told,
            registered: Vec::new(),
        };
        let fd = made.told.as_raw_fd();
        for &signal in signals {
            let action = move || {
                let byte = 1u8;
                // SAFETY: write(2) is async-signal-safe; `fd` stays open
                // until the action is unregistered (Drop).
                unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
            };
            // SAFETY: the action only calls write(2), which is
            // async-signal-safe, and touches no lock nor allocation.
            let id = unsafe { signal_hook_registry::register(signal, action) }.map_err(|e| {
                io::Error::new(e.kind(), format!("cannot handle signal {signal}: {e}"))
            })?;
            made.registered.push(id);
        }
        Ok(made)
    }

    /// Waits for the next delivery of one of the signals (deliveries that
    /// came while nobody waited count as one).
    pub async fn recv(&mut self) -> io::Result<()> {
        let mut heard = [0u8; 64];
        loop {
            match self.heard.read(&mut heard).await {
                Ok(0) => {
                    return Err(io::Error::other("the signals' socket was closed"));
                }
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        // Unregistered before `told` is closed: once `unregister` returns,
        // no handler is running the action or will run it.
        for id in self.registered.drain(..) {
            signal_hook_registry::unregister(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raise(signal: libc::c_int) {
        // SAFETY: sends a signal to this process; it is handled.
        unsafe { libc::kill(libc::getpid(), signal) };
    }

    #[tokio::test]
    async fn a_signal_is_heard_by_each_of_its_listeners() {
        let mut signals = Signals::new(&[libc::SIGUSR2]).expect("listen for SIGUSR2");
        raise(libc::SIGUSR2);
        signals.recv().await.expect("heard");
        raise(libc::SIGUSR2);
        raise(libc::SIGUSR2);
        signals.recv().await.expect("heard");
        // Two listeners of one signal each hear it.
        let mut other = Signals::new(&[libc::SIGUSR2, libc::SIGWINCH]).expect("listen");
        raise(libc::SIGWINCH);
        other
            .recv()
            .await
            .expect("the second listener hears its other signal");
        raise(libc::SIGUSR2);
        signals.recv().await.expect("the first hears");
        other.recv().await.expect("the second hears");
    }

    #[tokio::test]
    async fn a_signal_that_cannot_be_handled_is_refused_with_its_number() {
        let refused = Signals::new(&[libc::SIGKILL])
            .err()
            .expect("SIGKILL refused");
        assert!(
            refused.to_string().contains(&libc::SIGKILL.to_string()),
            "{refused}"
        );
    }
}
