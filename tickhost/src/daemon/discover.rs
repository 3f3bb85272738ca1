//! Finding launchers again: at start, and whenever a record appears or
//! disappears under `i/` (watched with `notify`), each `i/*/record.json`
//! of an instance not known yet is adopted: its launcher answers (a running
//! instance, with its state intact) or it does not (an ended one). Files of
//! the layout before (`l/`) are moved into their folders first
//! (`tickloop_client::legacy_layout`).

use super::conn::LauncherConn;
use super::log::log;
use super::reader::spawn_reader;
use super::registry::{end_info, CatalogFacts, Instance, Shared};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::paths::{parse_id, InstanceFiles, RECORD_FILE};
use tickloop_proto::wire::LauncherRecord;

/// Adopts every record of `i/` whose instance is unknown, all at once (a
/// launcher that does not answer costs its own hello timeout, not every
/// other adoption's), and forgets ended instances whose record has gone.
pub async fn scan(shared: &Arc<Shared>) {
    move_legacy_files(shared);
    let mut adoptions = tokio::task::JoinSet::new();
    for files in records(shared) {
        let shared = shared.clone();
        adoptions.spawn(async move { adopt(&shared, &files).await });
    }
    while adoptions.join_next().await.is_some() {}
    let vanished: Vec<Arc<Instance>> = shared
        .all()
        .into_iter()
        .filter(|i| i.ended().is_some() && i.conn().is_none() && !i.files.record.exists())
        .collect();
    for instance in vanished {
        log(&format!("{}: its record is gone; forgotten", instance.id));
        shared.forget(&instance, None);
    }
}

/// Moves what the layout before left in `l/` into the instances' folders.
pub fn move_legacy_files(shared: &Shared) {
    for (from, to) in tickloop_client::legacy_layout::migrate(&shared.dir) {
        log(&format!(
            "moved {} to {} (one folder per instance)",
            from.display(),
            to.display()
        ));
    }
}

/// The instance folders of `i/` that hold a record.
fn records(shared: &Shared) -> Vec<InstanceFiles> {
    shared
        .dir
        .instance_folders()
        .into_iter()
        .filter(|(_, files)| files.record.is_file())
        .map(|(_, files)| files)
        .collect()
}

/// How often a recorded launcher that lives but does not answer (stopped,
/// wedged) is tried again.
const RETRY_EVERY: Duration = Duration::from_secs(2);

/// The record in `files`' folder, when it reads as one of the instance
/// the folder is named for (a record copied elsewhere is not adopted).
fn read_record(files: &InstanceFiles) -> Option<LauncherRecord> {
    let text = std::fs::read_to_string(&files.record).ok()?;
    let mut record = serde_json::from_str::<LauncherRecord>(&text).ok()?;
    let (kind, name) = parse_id(&record.instance)?;
    let folder = files.folder.file_name()?.to_str()?;
    if folder != tickloop_client::paths::folder_name(kind, name) {
        return None;
    }
    // The socket is the folder's (a record moved from the layout before
    // names the old path).
    record.socket = files.socket.clone();
    Some(record)
}

/// Registers the instance of every record in `l/` that is not known yet,
/// with its recorded status (an instance whose launcher process is gone is
/// ended), so that `list` is whole from the first client on, even while a
/// launcher that does not answer is still being connected by [`scan`].
pub fn register_recorded(shared: &Arc<Shared>) {
    for files in records(shared) {
        let Some(record) = read_record(&files) else {
            continue;
        };
        register(shared, &files, &record);
    }
}

/// The instance of `record`, registered now if it was not known.
fn register(shared: &Arc<Shared>, files: &InstanceFiles, record: &LauncherRecord) -> Arc<Instance> {
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
    let instance = Instance::new(id.clone(), files.clone(), program, status, catalog);
    registry.instances.insert(id, instance.clone());
    instance
}

async fn adopt(shared: &Arc<Shared>, files: &InstanceFiles) {
    let Some(record) = read_record(files) else {
        return;
    };
    let id = record.instance.clone();
    if shared.registry().reserved.contains(&id) {
        // Being connected already (a retry in progress).
        return;
    }
    let instance = register(shared, files, &record);
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

/// Finds the launchers of the runtime directory that no record names
/// (their folders were removed while no tickhost ran): each gets
/// `SIGUSR1`, makes its folder, socket and record again, and is adopted
/// here as its record appears (waited for up to `within`; one later is
/// adopted by the watch on `i/`).
pub async fn find_lost(shared: &Arc<Shared>, within: Duration) {
    use tickloop_client::runtime_procs::{find, signal, Role};
    let recorded = |shared: &Shared| -> Vec<u32> {
        shared
            .all()
            .iter()
            .map(|i| i.status().launcher_pid)
            .collect()
    };
    let known = recorded(shared);
    let starting = shared.starting.pids();
    let lost: Vec<u32> = find(shared.dir.root(), Role::Launcher)
        .into_iter()
        .filter(|pid| !known.contains(pid) && !starting.contains(pid))
        .filter(|pid| signal(*pid, libc::SIGUSR1))
        .collect();
    if lost.is_empty() {
        return;
    }
    log(&format!(
        "launchers {lost:?} have no record: asked them to make their files again"
    ));
    let deadline = tokio::time::Instant::now() + within;
    loop {
        register_recorded(shared);
        let known = recorded(shared);
        if lost.iter().all(|pid| known.contains(pid)) || tokio::time::Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    scan(shared).await;
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

/// Watches `i/` (and each instance's folder) and rescans when a record
/// appears, changes or disappears. The returned watcher must be kept alive.
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
                    .any(|p| p.file_name().is_some_and(|n| n == RECORD_FILE))
            {
                let _ = tx.send(());
            }
        }
    })?;
    watcher.watch(
        &shared.dir.instances_dir(),
        notify::RecursiveMode::Recursive,
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
