//! The end of an instance: why it ended, and how. The Tick's stdin closes
//! (after what is queued), its process group gets SIGTERM, then SIGKILL
//! after [`TERM_GRACE`]; once the group is gone the last screen and the
//! activity record are left beside the record file, the `close` requests
//! are answered with the end, and connected peers get [`FLUSH_WAIT`] to
//! take the final status and their replies before the socket goes.

use super::process::TickProcess;
use super::screen::screen_reply;
use crate::socket::{error, Incoming, Peer};
use crate::terminal::TerminalHandle;
use std::path::Path;
use std::time::Duration;
use tickloop_client::clock::now_rfc3339;
use tickloop_client::paths::InstanceFiles;
use tickloop_client::whole_file::{self, Durability, Mode};
use tickloop_proto::core::EndReason;
use tickloop_proto::wire::{ActivityRecord, ClientKind, ClientReply, EndClass, EndInfo, ErrorKind};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// How long the Tick's process group gets between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(2);
/// After SIGKILL, how long to wait for the group to disappear before giving up
/// on stragglers (zombies of a parent that does not reap).
const KILL_WAIT: Duration = Duration::from_secs(1);
/// How often the end of the process group is checked while it ends.
pub(super) const TEARDOWN_POLL: Duration = Duration::from_millis(20);
/// Before taking the screen of a failed open: time for the PTY's output to
/// reach the emulator.
const SCREEN_SETTLE: Duration = Duration::from_millis(100);
/// How long connected peers get to take the final status and replies.
const FLUSH_WAIT: Duration = Duration::from_secs(2);

/// The reason of a session closed by a client that did not say who it is.
pub(super) const CLOSED_BY_USER: &str = "closed by the user";

/// The reason of a session closed by `client`, naming the actor: `closed by
/// the person (cli)`, `closed by an agent (mcp)`.
pub(super) fn closed_by(client: Option<ClientKind>) -> String {
    match client {
        Some(kind) => format!("closed by {}", kind.actor()),
        None => CLOSED_BY_USER.to_string(),
    }
}

/// How the session's end is told (a close with the reason it was given).
pub(super) fn end_info(reason: &EndReason) -> EndInfo {
    EndInfo {
        reason: reason.message.clone(),
        kind: EndClass::from(&reason.kind),
        offending: reason.offending.clone(),
        at: now_rfc3339(),
        not_saved: Vec::new(),
    }
}

/// An end asked for (`close`, a reload), not come from the session.
pub(super) fn closed(reason: &str) -> EndInfo {
    EndInfo {
        reason: reason.to_string(),
        kind: EndClass::Closed,
        offending: None,
        at: now_rfc3339(),
        not_saved: Vec::new(),
    }
}

/// The end of a program without a protocol session, which exited.
pub(super) fn program_exited(description: &str) -> EndInfo {
    EndInfo {
        reason: format!("the program {description}"),
        kind: EndClass::Exited,
        offending: None,
        at: now_rfc3339(),
        not_saved: Vec::new(),
    }
}

/// The Tick's process group on its way out.
pub(super) struct Ending {
    info: EndInfo,
    since: Instant,
    killed_at: Option<Instant>,
}

impl Ending {
    /// Starts ending `tick`'s process group for `info`: its stdin closes
    /// (after what is queued; that tells the Tick too), SIGTERM now,
    /// SIGKILL later ([`Self::step`]).
    pub(super) fn begin(info: EndInfo, tick: &mut TickProcess) -> Ending {
        tick.close_stdin();
        signal_group(tick.pid(), libc::SIGTERM);
        Ending {
            info,
            since: Instant::now(),
            killed_at: None,
        }
    }

    /// Why it ends.
    pub(super) fn info(&self) -> &EndInfo {
        &self.info
    }

    pub(super) fn into_info(self) -> EndInfo {
        self.info
    }

    /// Advances the end of the process group (SIGKILL once [`TERM_GRACE`]
    /// has passed); `true` when it is over: the Tick has exited and its
    /// group is gone, or still there [`KILL_WAIT`] after SIGKILL.
    pub(super) fn step(&mut self, tick: &TickProcess) -> bool {
        let pid = tick.pid();
        let now = Instant::now();
        let alive = group_alive(pid);
        if alive && self.killed_at.is_none() && now >= self.since + TERM_GRACE {
            signal_group(pid, libc::SIGKILL);
            self.killed_at = Some(now);
        }
        tick.exited()
            && (!alive
                || self
                    .killed_at
                    .is_some_and(|killed| now >= killed + KILL_WAIT))
    }
}

fn signal_group(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) on the Tick's own process group.
        unsafe {
            libc::kill(-pid, signal);
        }
    }
}

/// Whether any process of the Tick's group is left.
fn group_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence.
    let r = unsafe { libc::kill(-pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Leaves the last screen, with all its history (up to `history_limit`
/// lines) and the Tick's final output applied, in the instance's folder
/// (the launcher listening on `socket`'s), for `screen` after the end. Its
/// lines, and what was not saved, and why, when it could not be.
pub(super) async fn keep_last_screen(
    term: &TerminalHandle,
    socket: &Path,
    history_limit: usize,
) -> (Vec<String>, Option<String>) {
    let Some(text) = term.settled_screen(history_limit).await else {
        let why = "the last screen was not saved: the terminal's emulator had stopped";
        return (Vec::new(), Some(why.into()));
    };
    let lines = text.lines.clone();
    let path = InstanceFiles::of_socket(socket).screen;
    let not_saved = keep(
        &path,
        &screen_reply(text, history_limit, true),
        "the last screen",
    );
    (lines, not_saved)
}

/// Leaves the activity `record` beside the last screen, for `activity`
/// after the end; what was not saved, and why, when it could not be.
pub(super) fn keep_activity(socket: &Path, record: &ActivityRecord) -> Option<String> {
    let path = InstanceFiles::of_socket(socket).activity;
    keep(&path, record, "the activity record")
}

/// Writes `value` to `path` whole; the sentence saying `what` was not
/// saved (also logged) when it could not be.
fn keep(path: &Path, value: &impl serde::Serialize, what: &str) -> Option<String> {
    let json = match serde_json::to_vec(value) {
        Ok(json) => json,
        Err(e) => return Some(format!("{what} was not saved: cannot encode it: {e}")),
    };
    // The instance's folder is in the runtime directory: not synced.
    let error = whole_file::write(path, &json, Mode::Private, Durability::Volatile).err()?;
    let sentence = error.not_saved(what);
    eprintln!("launcher: {sentence}");
    Some(sentence)
}

/// The start of the screen of a Tick that never came up, for its failed
/// open (after a moment for its last output to reach the emulator).
pub(super) async fn failed_open_screen(term: &TerminalHandle) -> String {
    tokio::time::sleep(SCREEN_SETTLE).await;
    term.screen(0)
        .await
        .map(|s| s.head(256))
        .unwrap_or_default()
}

/// The connections' side of the end: who asked to `close`, the signal
/// that tells every connection to write what it holds and close, and the
/// channel that says they all did.
pub(super) struct Farewell {
    closers: Vec<(u64, Peer)>,
    shutdown_tx: watch::Sender<bool>,
    /// Every connection holds a weak sender of this one: all gone when
    /// `flushed_rx` says so.
    flushed_tx: Option<mpsc::Sender<()>>,
    flushed_rx: mpsc::Receiver<()>,
}

impl Farewell {
    /// The farewell, with the shutdown signal and the flush channel for
    /// the connections.
    pub(super) fn new() -> (Farewell, watch::Receiver<bool>, mpsc::WeakSender<()>) {
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let (flushed_tx, flushed_rx) = mpsc::channel(1);
        let flushed = flushed_tx.downgrade();
        let farewell = Farewell {
            closers: Vec::new(),
            shutdown_tx,
            flushed_tx: Some(flushed_tx),
            flushed_rx,
        };
        (farewell, shutdown_rx, flushed)
    }

    /// `close` request `id` from `peer`: answered with the end.
    pub(super) fn add_closer(&mut self, id: u64, peer: Peer) {
        self.closers.push((id, peer));
    }

    /// Answers the `close` requests with `info`, refuses what still comes
    /// in on `requests`, lets every connection write what it holds (for at
    /// most [`FLUSH_WAIT`]), then removes `socket`.
    pub(super) async fn finish(
        mut self,
        info: &EndInfo,
        requests: &mut mpsc::Receiver<Box<Incoming>>,
        socket: &Path,
    ) {
        let ended = serde_json::to_value(info).unwrap_or_default();
        for (id, peer) in self.closers.drain(..) {
            peer.reply(id, ClientReply::Ok(ended.clone()));
        }
        let _ = self.shutdown_tx.send(true);
        requests.close();
        while let Ok(incoming) = requests.try_recv() {
            incoming
                .peer
                .reply(incoming.id, error(ErrorKind::Ended, &info.reason));
        }
        self.flushed_tx = None;
        let _ = tokio::time::timeout(FLUSH_WAIT, self.flushed_rx.recv()).await;
        let _ = std::fs::remove_file(socket);
    }
}
