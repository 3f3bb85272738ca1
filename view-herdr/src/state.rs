//! The small state file of Tick views shown in Herdr panes:
//! `RUNTIME/herdr-views.json` in Tickloop's runtime directory (it lives as
//! long as the Ticks it names can), guarded by an `flock` on
//! `RUNTIME/herdr-views.lock`.
//!
//! One record per (Herdr socket, instance): the pane showing it, its
//! placement and the view's pid. `tickloop herdr open` writes the pane id
//! it got; the view writes its pid when it starts and removes the record
//! when the user detaches or the Tick ends. A view ended by a signal (its
//! pane closed, or Herdr stopping) keeps its record, so the `[[startup]]`
//! hook (`tickloop herdr restore`) can reopen it after a Herdr restart —
//! where Herdr brought its pane back; a pane the user closed is not brought
//! back, and its record is forgotten then.

use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Why the state file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot use the Herdr views file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One Tick view shown in a Herdr pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewRecord {
    /// The instance id (`hosted:NAME`).
    pub instance: String,
    /// The Herdr it is shown in (`HERDR_SOCKET_PATH`; empty when unknown).
    pub herdr_socket: String,
    /// The Herdr pane id.
    pub pane_id: String,
    /// The placement it was opened with.
    pub placement: String,
    /// The view's pid, once it started.
    #[serde(default)]
    pub pid: Option<u32>,
    /// The Herdr workspace and tab of the pane (to put it back there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct ViewsFile {
    #[serde(default)]
    views: Vec<ViewRecord>,
}

/// `RUNTIME/herdr-views.json`.
pub fn views_path(runtime: &Path) -> PathBuf {
    runtime.join("herdr-views.json")
}

fn lock_path(runtime: &Path) -> PathBuf {
    runtime.join("herdr-views.lock")
}

/// Runs `f` on the records under the file's lock, and saves them when `f`
/// changed them.
pub fn update<T>(
    runtime: &Path,
    f: impl FnOnce(&mut Vec<ViewRecord>) -> T,
) -> Result<T, StateError> {
    let lock = lock_path(runtime);
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| StateError::Io { path, source }
    };
    let lock_file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(io(&lock))?;
    let _held = Flock::exclusive(&lock_file).map_err(io(&lock))?;
    let mut views = read(runtime);
    let before = views.clone();
    let out = f(&mut views);
    if views != before {
        write(runtime, &views)?;
    }
    Ok(out)
}

/// The records, read without the lock (a reader sees a whole file: writes
/// replace it by rename). A missing or unreadable file is no records.
pub fn read(runtime: &Path) -> Vec<ViewRecord> {
    std::fs::read(views_path(runtime))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<ViewsFile>(&bytes).ok())
        .map(|f| f.views)
        .unwrap_or_default()
}

fn write(runtime: &Path, views: &[ViewRecord]) -> Result<(), StateError> {
    use tickloop_client::whole_file::{write, Durability, Mode};
    let path = views_path(runtime);
    let body = serde_json::to_vec_pretty(&ViewsFile {
        views: views.to_vec(),
    })
    .map_err(|e| StateError::Io {
        path: path.clone(),
        source: std::io::Error::other(e),
    })?;
    // The runtime directory's: not synced (whole_file's text).
    write(&path, &body, Mode::Private, Durability::Volatile).map_err(|e| StateError::Io {
        path: e.path,
        source: e.source,
    })
}

/// Records `record`, replacing the one of the same Herdr and instance.
pub fn remember(runtime: &Path, record: ViewRecord) -> Result<(), StateError> {
    update(runtime, |views| {
        views.retain(|v| !(v.herdr_socket == record.herdr_socket && v.instance == record.instance));
        views.push(record);
    })
}

/// The record of `instance` in the Herdr at `herdr_socket`.
pub fn find(runtime: &Path, herdr_socket: &str, instance: &str) -> Option<ViewRecord> {
    read(runtime)
        .into_iter()
        .find(|v| v.herdr_socket == herdr_socket && v.instance == instance)
}

/// Removes the record of `instance` in `herdr_socket` when it still names
/// `pane_id` (a newer open may have replaced it).
pub fn forget(
    runtime: &Path,
    herdr_socket: &str,
    instance: &str,
    pane_id: &str,
) -> Result<(), StateError> {
    update(runtime, |views| {
        views.retain(|v| {
            !(v.herdr_socket == herdr_socket && v.instance == instance && v.pane_id == pane_id)
        })
    })
}

/// Whether process `pid` runs (a zombie, exited but not yet reaped, does
/// not).
pub fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        let state = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next());
        return !matches!(state, Some("Z" | "X"));
    }
    // SAFETY: kill with signal 0 only checks that the process exists.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// An exclusive `flock`, released when dropped (or when the file closes).
struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    fn exclusive(file: &'a File) -> std::io::Result<Self> {
        loop {
            // SAFETY: flock on an open file descriptor.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Flock(file));
            }
            let err = std::io::Error::last_os_error();
            if err.kind() != std::io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: unlocking the descriptor locked in `exclusive`.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(instance: &str, pane: &str) -> ViewRecord {
        ViewRecord {
            instance: instance.into(),
            herdr_socket: "/s".into(),
            pane_id: pane.into(),
            placement: "split".into(),
            pid: None,
            workspace_id: None,
            tab_id: None,
        }
    }

    #[test]
    fn records_are_replaced_found_and_forgotten_by_pane() {
        let dir = tempfile::tempdir().expect("tempdir");
        let rt = dir.path();
        assert!(read(rt).is_empty());
        remember(rt, record("hosted:a", "w1:p1")).unwrap();
        remember(rt, record("hosted:a", "w1:p2")).unwrap();
        remember(rt, record("hosted:b", "w1:p3")).unwrap();
        assert_eq!(read(rt).len(), 2);
        assert_eq!(find(rt, "/s", "hosted:a").unwrap().pane_id, "w1:p2");
        assert!(find(rt, "/other", "hosted:a").is_none());
        forget(rt, "/s", "hosted:a", "w1:p1").unwrap();
        assert!(
            find(rt, "/s", "hosted:a").is_some(),
            "a stale pane id keeps it"
        );
        forget(rt, "/s", "hosted:a", "w1:p2").unwrap();
        assert!(find(rt, "/s", "hosted:a").is_none());
        assert!(pid_alive(std::process::id()));
    }
}
