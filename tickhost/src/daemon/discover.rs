//! Finding launchers again: at start, and whenever a record appears or
//! disappears in `l/` (watched with `notify`), each `l/*.json` record of an
//! instance not known yet is adopted: its launcher answers (a running
//! instance, with its state intact) or it does not (an ended one).

use super::conn::{log, spawn_reader, LauncherConn};
use super::registry::{end_info, Instance, Shared};
use crate::paths::{parse_id, InstanceFiles};
use crate::wire::LauncherRecord;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Adopts every record of `l/` whose instance is unknown, all at once (a
/// launcher that does not answer costs its own hello timeout, not every
/// other adoption's), and forgets ended instances whose record has gone.
pub async fn scan(shared: &Arc<Shared>) {
    let mut adoptions = tokio::task::JoinSet::new();
    for path in records(&shared.dir.launchers_dir()) {
        let shared = shared.clone();
        adoptions.spawn(async move { adopt(&shared, &path).await });
    }
    while adoptions.join_next().await.is_some() {}
    let vanished: Vec<Arc<Instance>> = shared
        .all()
        .into_iter()
        .filter(|i| i.ended().is_some() && i.conn().is_none() && !i.files.record.exists())
        .collect();
    for instance in vanished {
        log(&format!("{}: its record is gone; forgotten", instance.id));
        shared.forget(&instance);
    }
}

/// The `*.json` records in `dir` (temporary files, starting with `.`, skipped).
fn records(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && p.file_name()
                    .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    paths.sort();
    paths
}

async fn adopt(shared: &Arc<Shared>, path: &Path) {
    let Ok(text) = tokio::fs::read_to_string(path).await else {
        return;
    };
    let Ok(record) = serde_json::from_str::<LauncherRecord>(&text) else {
        return;
    };
    let id = record.instance.clone();
    if parse_id(&id).is_none() {
        return;
    }
    {
        let mut registry = shared.registry();
        if registry.is_taken(&id) {
            return;
        }
        registry.reserved.insert(id.clone());
    }
    let files = InstanceFiles::from_record(path);
    let mut status = record.status.clone();
    status.instance = id.clone();
    let mut connection = None;
    if status.ended.is_none() {
        match connect(&record).await {
            Ok((conn, mut reader)) => {
                if let Some(current) = LauncherConn::first_status(&mut reader).await {
                    status = current;
                    status.instance = id.clone();
                }
                connection = Some((conn, reader));
            }
            Err(e) => {
                status.ended = Some(end_info(
                    "launcher_lost",
                    format!("the launcher (pid {}) went away: {e}", record.launcher_pid),
                ));
            }
        }
    }
    let instance = Instance::new(id.clone(), files, None, status);
    {
        let mut registry = shared.registry();
        registry.reserved.remove(&id);
        registry.instances.insert(id.clone(), instance.clone());
    }
    match connection {
        Some((conn, reader)) => {
            log(&format!(
                "{id}: found its launcher (pid {}) again",
                record.launcher_pid
            ));
            spawn_reader(shared.clone(), instance, conn, reader);
        }
        None => {
            log(&format!("{id}: found ended"));
            shared.bump();
        }
    }
}

/// Connects to a recorded launcher, retrying briefly while its process lives
/// (it may be finishing its start).
async fn connect(
    record: &LauncherRecord,
) -> Result<
    (
        Arc<LauncherConn>,
        super::lines::LineReader<tokio::net::unix::OwnedReadHalf>,
    ),
    super::conn::ConnectError,
> {
    let mut attempt = 0;
    loop {
        match LauncherConn::connect(&record.socket, record.launcher_pid).await {
            Ok(pair) => return Ok(pair),
            Err(e) => {
                attempt += 1;
                // Only a socket not there yet is worth another try; a
                // launcher that took the connection but did not answer hello
                // (stopped, wedged) has had its full timeout already.
                let not_listening = matches!(e, super::conn::ConnectError::Connect { .. });
                if attempt >= 5 || !not_listening || !process_alive(record.launcher_pid) {
                    return Err(e);
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

fn process_alive(pid: u32) -> bool {
    match i32::try_from(pid) {
        // SAFETY: signal 0 only checks that the process exists.
        Ok(pid) if pid > 0 => unsafe { libc::kill(pid, 0) == 0 },
        _ => false,
    }
}

/// Watches `l/` and rescans when a record appears or disappears. The
/// returned watcher must be kept alive.
pub fn watch_launchers(shared: Arc<Shared>) -> Result<notify::RecommendedWatcher, notify::Error> {
    use notify::Watcher as _;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if let Ok(event) = event {
            // Only what changes the set of records: not the opens and
            // closes of our own reads (which would rescan forever).
            let relevant = matches!(
                event.kind,
                notify::EventKind::Create(_)
                    | notify::EventKind::Remove(_)
                    | notify::EventKind::Modify(_)
            );
            if relevant
                && event
                    .paths
                    .iter()
                    .any(|p| p.extension().is_some_and(|e| e == "json"))
            {
                let _ = tx.send(());
            }
        }
    })?;
    watcher.watch(
        &shared.dir.launchers_dir(),
        notify::RecursiveMode::NonRecursive,
    )?;
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // Let a burst settle, then scan once for all of it.
            tokio::time::sleep(Duration::from_millis(50)).await;
            while rx.try_recv().is_ok() {}
            scan(&shared).await;
        }
    });
    Ok(watcher)
}
