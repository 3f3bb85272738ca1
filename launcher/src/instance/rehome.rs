//! Making the instance's files again after they were removed (a tmp
//! cleaner took the socket, logout took the whole runtime directory): on
//! `SIGUSR1`, which tickhost (or a CLI that found no tickhost socket)
//! sends to every launcher of its runtime directory, the folder is made
//! again, the socket bound again at its path when it is gone, and the
//! record rewritten, so that views reach the instance again and a
//! tickhost started later finds it.
//!
//! A socket path that holds another socket (a new instance of the same id
//! opened while this one was lost) is left alone, and so is its record.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use tickloop_client::paths::InstanceFiles;
use tickloop_client::signals::Signals;
use tokio::net::UnixListener;
use tokio::sync::mpsc;

/// The instance's place on disk, watched for `SIGUSR1`.
pub(super) struct Home {
    socket: PathBuf,
    /// The socket file this launcher bound: `(dev, ino)`.
    bound: Option<(u64, u64)>,
    /// Where a socket bound again goes (the accepting task).
    rebinds: mpsc::Sender<UnixListener>,
    /// `None` when no handler could be installed (then nothing comes).
    signals: Option<Signals>,
}

/// What [`Home::restore`] did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Restored {
    /// The socket is this launcher's: rewrite the record.
    Ours,
    /// Another socket is at the path: leave its folder be.
    Taken,
}

impl Home {
    /// The home of the launcher listening on `socket`; sockets bound again
    /// are sent on `rebinds`.
    pub(super) fn new(socket: &Path, rebinds: mpsc::Sender<UnixListener>) -> Home {
        Home {
            socket: socket.to_path_buf(),
            bound: identity(socket),
            rebinds,
            signals: Signals::new(&[libc::SIGUSR1]).ok(),
        }
    }

    /// Resolves at the next `SIGUSR1`; never without a handler.
    pub(super) async fn signalled(&mut self) {
        match self.signals.as_mut() {
            // An error is the signals' socket gone: no signal comes again.
            Some(signals) => {
                if signals.recv().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
            None => std::future::pending().await,
        }
    }

    /// Makes the folder and the socket again where they are gone.
    pub(super) fn restore(&mut self) -> Restored {
        let files = InstanceFiles::of_socket(&self.socket);
        if let Err(e) = files.create_folder() {
            eprintln!(
                "launcher: cannot make {} again: {e}",
                files.folder.display()
            );
        }
        match identity(&self.socket) {
            Some(now) if Some(now) == self.bound => return Restored::Ours,
            Some(_) => return Restored::Taken,
            None => {}
        }
        match crate::socket::bind(&self.socket) {
            Ok(listener) => {
                self.bound = identity(&self.socket);
                eprintln!(
                    "launcher: {} was gone; listening there again",
                    self.socket.display()
                );
                let _ = self.rebinds.try_send(listener);
                Restored::Ours
            }
            Err(e) => {
                eprintln!("launcher: {e}");
                // The record still tells a later tickhost of this launcher.
                Restored::Ours
            }
        }
    }
}

/// The `(dev, ino)` of the file at `path`, when there is one.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}
