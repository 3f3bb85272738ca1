//! Finding launchers again: at start, and whenever a record appears or
//! disappears in `l/` (watched with `notify`), each `l/*.json` record of an
//! instance not known yet is adopted: its launcher answers (a running
//! instance, with its state intact) or it does not (an ended one).

use super::conn::LauncherConn;
use super::log::log;
use super::reader::spawn_reader;
use super::registry::{end_info, CatalogFacts, Instance, Shared};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::paths::{parse_id, InstanceFiles};
use tickloop_proto::wire::LauncherRecord;

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

/// How often a recorded launcher that lives but does not answer (stopped,
/// wedged) is tried again.
const RETRY_EVERY: Duration = Duration::from_secs(2);

fn read_record(path: &Path) -> Option<LauncherRecord> {
    let text = std::fs::read_to_string(path).ok()?;
    let record = serde_json::from_str::<LauncherRecord>(&text).ok()?;
    parse_id(&record.instance)?;
    Some(record)
}

/// Registers the instance of every record in `l/` that is not known yet,
/// with its recorded status (an instance whose launcher process is gone is
/// ended), so that `list` is whole from the first client on, even while a
/// launcher that does not answer is still being connected by [`scan`].
pub fn register_recorded(shared: &Arc<Shared>) {
    for path in records(&shared.dir.launchers_dir()) {
        let Some(record) = read_record(&path) else {
            continue;
        };
        register(shared, &path, &record);
    }
}

/// The instance of `record`, registered now if it was not known.
fn register(shared: &Arc<Shared>, path: &Path, record: &LauncherRecord) -> Arc<Instance> {
    let id = record.instance.clone();
    let mut registry = shared.registry();
    if let Some(known) = registry.instances.get(&id) {
        return known.clone();
    }
    let mut status = record.status.clone();
    status.instance = id.clone();
    if status.ended.is_none() && !process_alive(record.launcher_pid) {
        status.ended = Some(end_info(
            tickloop_proto::wire::EndClass::LauncherLost,
            format!("the launcher (pid {}) went away", record.launcher_pid),
        ));
    }
    // The program as typed, which launchers record since `program` exists:
    // a `shell:` title stays `bash`, not `/usr/bin/bash`.
    let program = status.program.clone();
    let catalog = CatalogFacts::new(record.catalog.clone().unwrap_or_default(), &shared.limits);
    let instance = Instance::new(
        id.clone(),
        InstanceFiles::from_record(path),
        program,
        status,
        catalog,
    );
    registry.instances.insert(id, instance.clone());
    instance
}

async fn adopt(shared: &Arc<Shared>, path: &Path) {
    let Some(record) = read_record(path) else {
        return;
    };
    let id = record.instance.clone();
    if shared.registry().reserved.contains(&id) {
        // Being connected already (a retry in progress).
        return;
    }
    let instance = register(shared, path, &record);
    if instance.conn().is_some() {
        return;
    }
    if instance.ended().is_some() {
        shared.bump();
        return;
    }
    shared.registry().reserved.insert(id.clone());
    let shared = shared.clone();
    let connected = connect_recorded(&shared, &instance, &record).await;
    if !connected {
        // Alive but not answering: keep trying in the background while
        // its process lives; requests meanwhile are refused as
        // unresponsive.
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(RETRY_EVERY).await;
                if instance.ended().is_some() || instance.conn().is_some() {
                    break;
                }
                if connect_recorded(&shared, &instance, &record).await {
                    break;
                }
            }
            shared.registry().reserved.remove(&instance.id);
        });
        return;
    }
    shared.registry().reserved.remove(&id);
}

/// Connects `instance` to its recorded launcher; `false` when the launcher
/// lives but did not answer (try again later). A launcher that is gone
/// makes the instance ended.
async fn connect_recorded(
    shared: &Arc<Shared>,
    instance: &Arc<Instance>,
    record: &LauncherRecord,
) -> bool {
    let id = &instance.id;
    match connect(record).await {
        Ok((conn, mut reader)) => {
            let first = LauncherConn::first_status(&mut reader).await;
            if let Some(catalog) = first.catalog {
                instance.set_catalog(CatalogFacts::new(catalog, &shared.limits));
            }
            if let Some(mut current) = first.status {
                current.instance = id.clone();
                instance.set_status(current);
            }
            log(&format!(
                "{id}: found its launcher (pid {}) again",
                record.launcher_pid
            ));
            spawn_reader(shared.clone(), instance.clone(), conn, reader);
            shared.bump();
            true
        }
        Err(e) if process_alive(record.launcher_pid) => {
            log(&format!(
                "{id}: its launcher (pid {}) lives but does not answer ({e}); trying again every {} s",
                record.launcher_pid,
                RETRY_EVERY.as_secs()
            ));
            false
        }
        Err(e) => {
            if instance.mark_ended(end_info(
                tickloop_proto::wire::EndClass::LauncherLost,
                format!("the launcher (pid {}) went away: {e}", record.launcher_pid),
            )) {
                log(&format!("{id}: found ended"));
            }
            shared.bump();
            true
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
        tickloop_client::framing::LineReader<tokio::net::unix::OwnedReadHalf>,
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

/// Whether a launcher runs as `pid` (not another process given its pid
/// since).
fn process_alive(pid: u32) -> bool {
    super::process::Known::now(pid).is_some_and(|known| known.is_launcher())
}

/// Scans the records again each time a connection to a launcher that still
/// runs was lost ([`Shared::rediscover`]): that launcher is connected anew
/// (retried while it lives but does not answer).
pub async fn rescan_when_asked(shared: Arc<Shared>) {
    loop {
        shared.rediscover.notified().await;
        scan(&shared).await;
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
