//! An `artifact:` instance's generations: the file is watched, and a save
//! (once the file has been quiet for [`crate::artifact::DEBOUNCE`], and
//! only when its bytes or a `--watch` file changed) ends the running
//! version and starts the next generation on the same terminal; `reload`
//! does the same on request. A generation that fails to come up is kept
//! failed (its reason in the status and on its screen) until the next
//! save; one that stopped after it had started is started again, at most
//! every [`RESTART_EVERY`], counted in `restarts`.
//!
//! This module keeps the generations' state; the instance loop ends and
//! starts the processes when it says so.

use crate::artifact::{Change, Watch};
use crate::socket::Peer;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tickloop_proto::wire::{ClientReply, LauncherStatus};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// A version that stopped after it had started is started again, at most
/// this often.
const RESTART_EVERY: Duration = Duration::from_secs(1);

/// The end reason of a session ended for a reload.
pub(super) const RELOADED: &str = "reloaded: a new version of the artifact starts";

/// An `artifact:` instance's file and generations.
pub(super) struct Generations {
    path: PathBuf,
    /// The version running (or failed), from 1.
    generation: u64,
    /// Why this generation did not come up or stopped.
    failed: Option<String>,
    /// The digest of the file this generation started from.
    digest: Option<u64>,
    /// When the file's last change is old enough to start it.
    reload_due: Option<Instant>,
    /// A new version starts once the running one has ended.
    reload_wanted: bool,
    /// A `--watch` file changed since the last start: the next quiet
    /// moment starts a new version even if the artifact itself is the same.
    watched_changed: bool,
    events: mpsc::UnboundedReceiver<Change>,
    _watch: Watch,
    /// `reload` requests, answered when the new version is up or failed.
    reloaders: Vec<(u64, Peer)>,
    /// When the running process started, and when a version that stopped
    /// after its initialization starts again.
    started: Instant,
    restart_due: Option<Instant>,
    /// How many such restarts there were.
    restarts: u64,
}

impl Generations {
    /// Watches the artifact at `path` (and the `watch` globs beside it), as
    /// generation 1; read it with [`Self::first_version`] after this, so
    /// that a save in between is not missed.
    pub(super) fn watch(path: &Path, watch: &[String]) -> Result<Generations, String> {
        let (watch, events) = crate::artifact::watch(path, watch)?;
        Ok(Generations {
            path: path.to_path_buf(),
            generation: 1,
            failed: None,
            digest: None,
            reload_due: None,
            reload_wanted: false,
            watched_changed: false,
            events,
            _watch: watch,
            reloaders: Vec::new(),
            started: Instant::now(),
            restart_due: None,
            restarts: 0,
        })
    }

    /// Reads the file for generation 1: the argv that runs it.
    pub(super) fn first_version(&mut self) -> Result<Vec<String>, String> {
        let version = crate::artifact::read_version(&self.path)?;
        self.digest = Some(version.digest);
        Ok(version.argv)
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn generation(&self) -> u64 {
        self.generation
    }

    pub(super) fn failed(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    pub(super) fn restarts(&self) -> u64 {
        self.restarts
    }

    /// The next change the watch saw.
    pub(super) async fn next_change(&mut self) -> Option<Change> {
        self.events.recv().await
    }

    /// The file (or a watched one) changed: look again once it is quiet.
    pub(super) fn changed(&mut self, change: Change) {
        self.reload_due = Some(Instant::now() + crate::artifact::DEBOUNCE);
        self.watched_changed |= change == Change::Watched;
    }

    /// When the quiet time after the last change ends.
    pub(super) fn reload_due(&self) -> Option<Instant> {
        self.reload_due
    }

    /// When a version that stopped starts again.
    pub(super) fn restart_due(&self) -> Option<Instant> {
        self.restart_due
    }

    /// The file has been quiet for the debounce time since it changed:
    /// `true` when its new version is to start, that is, unless the
    /// instance is `closing`, the file cannot be read now (its next
    /// creation is another event), or its bytes are the running one's and
    /// no watched file changed (an editor's save dance, or a touch, starts
    /// nothing new).
    pub(super) fn saved(&mut self, closing: bool) -> bool {
        self.reload_due = None;
        if closing {
            return false;
        }
        let watched_changed = std::mem::take(&mut self.watched_changed);
        match crate::artifact::current_digest(&self.path) {
            None => false,
            Some(digest) if Some(digest) == self.digest && !watched_changed => false,
            Some(_) => true,
        }
    }

    /// A new version is to start once the running one has ended.
    pub(super) fn want_reload(&mut self) {
        self.reload_wanted = true;
    }

    pub(super) fn reload_wanted(&self) -> bool {
        self.reload_wanted
    }

    /// A `reload` request, answered when the new version is up or failed.
    pub(super) fn add_reloader(&mut self, id: u64, peer: Peer) {
        self.reloaders.push((id, peer));
    }

    /// Answers the `reload` requests waiting for this generation.
    pub(super) fn answer_reloaders(&mut self, status: &LauncherStatus) {
        if self.reloaders.is_empty() {
            return;
        }
        let value = serde_json::to_value(status).unwrap_or_default();
        for (id, peer) in self.reloaders.drain(..) {
            peer.reply(id, ClientReply::Ok(value.clone()));
        }
    }

    /// The instance is closing: nothing starts again.
    pub(super) fn closing(&mut self) {
        self.reload_wanted = false;
        self.reload_due = None;
        self.restart_due = None;
    }

    /// The running version stopped after it had started (for `reason`):
    /// the same version starts again, throttled.
    pub(super) fn schedule_restart(&mut self, instance: &str, reason: &str) {
        let at = (self.started + RESTART_EVERY).max(Instant::now());
        self.restart_due = Some(at);
        eprintln!(
            "launcher: {instance} generation {} stopped ({reason}); starting it again",
            self.generation
        );
    }

    /// The next generation starts (`new_version`), or the same one again
    /// after it stopped (counted in `restarts`): reads the file's newest
    /// version and returns the argv that runs it.
    pub(super) fn begin(&mut self, new_version: bool) -> Result<Vec<String>, String> {
        if new_version {
            self.generation += 1;
        } else {
            self.restarts += 1;
        }
        self.restart_due = None;
        self.started = Instant::now();
        self.failed = None;
        self.reload_wanted = false;
        self.reload_due = None;
        let version = crate::artifact::read_version(&self.path)?;
        self.digest = Some(version.digest);
        Ok(version.argv)
    }

    /// This generation did not come up, or stopped, for `reason`: kept in
    /// the status and written on its terminal (`tty`); nothing restarts it
    /// until the file is saved again.
    pub(super) fn failed_with(&mut self, instance: &str, reason: String, tty: &Path) {
        let note = format!(
            "\r\n\x1b[7m tickloop: {instance} generation {} failed: {reason}; waiting for the next save of {} \x1b[0m\r\n",
            self.generation,
            self.path.display()
        );
        self.failed = Some(reason);
        if let Err(e) = write_to_terminal(tty, note.as_bytes()) {
            eprintln!("launcher: cannot write the failure on the terminal: {e}");
        }
    }

    /// Why a request for the Tick cannot be served now: no version runs.
    pub(super) fn not_running(&self, instance: &str) -> String {
        let reason = self.failed.as_deref().unwrap_or("it is starting");
        format!(
            "{instance} generation {} is not running: {reason}; save {} to start it again",
            self.generation,
            self.path.display()
        )
    }
}

/// The next change seen by an `artifact:` instance's watch; never, for
/// another instance.
pub(super) async fn next_change(generations: &mut Option<Generations>) -> Option<Change> {
    match generations {
        Some(generations) => generations.next_change().await,
        None => std::future::pending().await,
    }
}

/// Writes `bytes` on the terminal's slave side, as a program would: the
/// views and the screen show it.
fn write_to_terminal(tty: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)?
        .write_all(bytes)
}
