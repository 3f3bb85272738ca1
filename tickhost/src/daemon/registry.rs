//! The daemon's shared state: every known instance with the newest status
//! its launcher published (only the newest: memory stays flat under update
//! floods), name resolution, and the change signal watchers wait on.

use super::approval::{Approvals, ConsentTarget};
use super::conn::LauncherConn;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tickloop_client::clock::now_rfc3339;
use tickloop_client::paths::{parse_id, InstanceFiles, InstanceKind, RuntimeDir};
use tickloop_proto::core::delivery::{trim, Trimmed};
use tickloop_proto::core::descriptor::{Descriptor, Series};
use tickloop_proto::core::limits::Limits;
use tickloop_proto::wire::{
    ApprovalPolicy, Catalog, ClientError, ConsentDecision, EndClass, EndInfo, ErrorKind,
    HeldAction, LauncherRequest, LauncherStatus, Owner,
};
use tokio::sync::watch;

/// What every task of the daemon shares.
pub struct Shared {
    pub dir: RuntimeDir,
    /// This executable, started as `<exe> __launcher` for each instance.
    pub exe: PathBuf,
    pub limits: Limits,
    registry: Mutex<Registry>,
    /// Bumped whenever an instance ends or is forgotten.
    changes: watch::Sender<u64>,
    /// Set once `shutdown` has answered: the daemon exits.
    pub shutdown: watch::Sender<bool>,
    /// Calls waiting for a person's approval.
    pub approvals: Approvals,
    /// Set when tickhost is about to exit: its files are not made again.
    leaving: AtomicBool,
    /// The pids of launchers being started now (not yet able to take a
    /// signal).
    starting: Mutex<HashSet<u32>>,
}

/// The instances by id, and the ids being opened or adopted right now.
#[derive(Default)]
pub struct Registry {
    pub instances: BTreeMap<String, Arc<Instance>>,
    pub reserved: HashSet<String>,
}

impl Registry {
    /// Whether `id` is taken by a known instance or one being opened.
    pub fn is_taken(&self, id: &str) -> bool {
        self.instances.contains_key(id) || self.reserved.contains(id)
    }
}

impl Shared {
    pub fn new(dir: RuntimeDir, exe: PathBuf, limits: Limits) -> Arc<Self> {
        Arc::new(Shared {
            dir,
            exe,
            limits,
            registry: Mutex::new(Registry::default()),
            changes: watch::Sender::new(0),
            shutdown: watch::Sender::new(false),
            approvals: Approvals::configured(),
            leaving: AtomicBool::new(false),
            starting: Mutex::new(HashSet::new()),
        })
    }

    /// tickhost is about to exit (its socket goes with it).
    pub fn leave(&self) {
        self.leaving.store(true, Ordering::SeqCst);
    }

    /// Whether tickhost is about to exit.
    pub fn leaving(&self) -> bool {
        self.leaving.load(Ordering::SeqCst)
    }

    /// Launcher `pid` is starting (`true`) or has reported (`false`).
    pub fn set_starting(&self, pid: u32, starting: bool) {
        let mut set = self.starting.lock().unwrap_or_else(|e| e.into_inner());
        if starting {
            set.insert(pid);
        } else {
            set.remove(&pid);
        }
    }

    /// The pids of launchers being started now.
    pub fn starting_launchers(&self) -> HashSet<u32> {
        self.starting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The registry, locked (never held across an await).
    pub fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes everyone waiting for an instance to end.
    pub fn bump(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver woken by [`Shared::bump`].
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Every instance, sorted by id.
    pub fn all(&self) -> Vec<Arc<Instance>> {
        self.registry().instances.values().cloned().collect()
    }

    /// The instance `name`: a full id, or a bare NAME that exactly one
    /// instance has.
    pub fn resolve(&self, name: &str) -> Result<Arc<Instance>, ClientError> {
        let registry = self.registry();
        resolve_in(&registry.instances, name)
    }

    /// Forgets `instance` (removing its files), if it is still the one known
    /// by its id.
    pub fn forget(&self, instance: &Arc<Instance>) {
        {
            let mut registry = self.registry();
            if let Some(known) = registry.instances.get(&instance.id) {
                if Arc::ptr_eq(known, instance) {
                    registry.instances.remove(&instance.id);
                }
            }
        }
        instance.files.remove();
        self.bump();
    }
}

/// Name resolution over `instances` (see [`Shared::resolve`]).
pub fn resolve_in(
    instances: &BTreeMap<String, Arc<Instance>>,
    name: &str,
) -> Result<Arc<Instance>, ClientError> {
    if name.contains(':') {
        return instances
            .get(name)
            .cloned()
            .ok_or_else(|| no_such_instance(name));
    }
    let mut found = instances.values().filter(|i| i.name == name);
    match (found.next(), found.next()) {
        (None, _) => Err(no_such_instance(name)),
        (Some(one), None) => Ok(one.clone()),
        (Some(a), Some(b)) => Err(ClientError {
            kind: ErrorKind::BadRequest,
            message: format!(
                "{name} names more than one instance ({}, {}); use the full id",
                a.id, b.id
            ),
            data: None,
        }),
    }
}

pub fn no_such_instance(name: &str) -> ClientError {
    ClientError {
        kind: ErrorKind::NoSuchInstance,
        message: format!("no instance named {name}; `tickloop list` shows them"),
        data: None,
    }
}

/// One instance: running (with a launcher connection) or ended.
pub struct Instance {
    pub id: String,
    pub kind: InstanceKind,
    pub name: String,
    pub files: InstanceFiles,
    /// The program as the user typed it (for a `shell:` title), when known.
    pub program: Option<String>,
    live: Mutex<Live>,
    conn: Mutex<Option<Arc<LauncherConn>>>,
    /// `close` was asked: a launcher that goes away now was closed, not lost.
    pub close_requested: AtomicBool,
    /// Clients following its updates now (`watch`, the Loop).
    pub subscribers: std::sync::atomic::AtomicU32,
    /// Consent decisions on their way to the launcher's activity record, in
    /// the order they were made.
    consent_notes: Arc<ConsentNotes>,
}

/// Consent decisions waiting to be written to the launcher, sent one at a
/// time by one task (started when the first arrives, ending when none
/// wait), so the record keeps their order.
#[derive(Default)]
struct ConsentNotes {
    waiting: Mutex<std::collections::VecDeque<ConsentDecision>>,
    sending: AtomicBool,
}

impl ConsentNotes {
    fn push(self: &Arc<Self>, entry: ConsentDecision, conn: Option<Arc<LauncherConn>>) {
        let Some(conn) = conn else { return };
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(entry);
        if self.sending.swap(true, Ordering::SeqCst) {
            return;
        }
        let notes = self.clone();
        tokio::spawn(async move {
            loop {
                let next = notes
                    .waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .pop_front();
                match next {
                    Some(entry) => {
                        conn.request(LauncherRequest::Consent(entry)).await;
                    }
                    None => {
                        notes.sending.store(false, Ordering::SeqCst);
                        // One pushed after the last pop, before the store,
                        // found `sending` set: take it too.
                        let more = !notes
                            .waiting
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .is_empty();
                        if !more || notes.sending.swap(true, Ordering::SeqCst) {
                            return;
                        }
                    }
                }
            }
        });
    }
}

struct Live {
    status: Arc<LauncherStatus>,
    catalog: Arc<CatalogFacts>,
    /// The newest status's state trimmed to one budget: watchers of the
    /// same instance share it instead of trimming it each.
    trimmed: Option<(Arc<LauncherStatus>, usize, Arc<Trimmed>)>,
}

/// A Tick's catalog as its launcher last sent it, and what tickhost reads
/// from it, worked out once per catalog (a status, sent on every update,
/// carries only the revision).
#[derive(Debug, Default)]
pub struct CatalogFacts {
    /// The descriptor as the Tick sent it; `None` for `shell:` (and before
    /// a catalog arrived).
    pub descriptor: Option<Value>,
    pub revision: Option<String>,
    /// The declared series, for trimming deliveries (empty for none or an
    /// invalid descriptor).
    pub series: Arc<Vec<Series>>,
}

impl CatalogFacts {
    pub fn new(catalog: Catalog, limits: &Limits) -> CatalogFacts {
        let series = catalog
            .descriptor
            .as_ref()
            .and_then(|raw| Descriptor::validate(raw, limits).ok())
            .map(|d| d.series)
            .unwrap_or_default();
        CatalogFacts {
            descriptor: catalog.descriptor,
            revision: catalog.revision,
            series: Arc::new(series),
        }
    }

    /// A top-level field of the descriptor (`kind`, `title`, ...), or null.
    pub fn field(&self, name: &str) -> Value {
        self.descriptor
            .as_ref()
            .and_then(|d| d.get(name))
            .cloned()
            .unwrap_or(Value::Null)
    }

    /// The descriptor's `recover_with` tool, when it names one.
    pub fn recover_with(&self) -> Option<String> {
        self.descriptor
            .as_ref()
            .and_then(|d| d.get("recover_with"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// Tool `name` of the catalog: whether it mutates, and its description.
    pub fn tool(&self, name: &str) -> Option<(bool, String)> {
        let tools = self.descriptor.as_ref()?.get("tools")?.as_array()?;
        tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .map(|t| {
                (
                    t.get("mutates").and_then(Value::as_bool).unwrap_or(true),
                    t.get("description")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                )
            })
    }
}

impl Instance {
    pub fn new(
        id: String,
        files: InstanceFiles,
        program: Option<String>,
        status: LauncherStatus,
        catalog: CatalogFacts,
    ) -> Arc<Self> {
        let (kind, name) = match parse_id(&id) {
            Some((kind, name)) => (kind, name.to_string()),
            None => (InstanceKind::Hosted, id.clone()),
        };
        Arc::new(Instance {
            id,
            kind,
            name,
            files,
            program,
            live: Mutex::new(Live {
                status: Arc::new(status),
                catalog: Arc::new(catalog),
                trimmed: None,
            }),
            conn: Mutex::new(None),
            close_requested: AtomicBool::new(false),
            subscribers: std::sync::atomic::AtomicU32::new(0),
            consent_notes: Arc::default(),
        })
    }

    fn live(&self) -> MutexGuard<'_, Live> {
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The newest status.
    pub fn status(&self) -> Arc<LauncherStatus> {
        self.live().status.clone()
    }

    /// How it ended, if it did.
    pub fn ended(&self) -> Option<EndInfo> {
        self.live().status.ended.clone()
    }

    /// Replaces the status; true when this made the instance end. An ended
    /// instance keeps its end (a later status cannot revive it).
    pub fn set_status(&self, mut status: LauncherStatus) -> bool {
        let mut live = self.live();
        let was_ended = live.status.ended.clone();
        if let Some(ended) = was_ended.clone() {
            status.ended = Some(ended);
        }
        let now_ended = status.ended.is_some();
        live.status = Arc::new(status);
        was_ended.is_none() && now_ended
    }

    /// Marks the instance ended with `end` unless it already ended; true when
    /// this made it end.
    pub fn mark_ended(&self, end: EndInfo) -> bool {
        let mut live = self.live();
        if live.status.ended.is_some() {
            return false;
        }
        let mut status = (*live.status).clone();
        status.ended = Some(end);
        live.status = Arc::new(status);
        true
    }

    /// The launcher connection, while there is one.
    pub fn conn(&self) -> Option<Arc<LauncherConn>> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub fn set_conn(&self, conn: Option<Arc<LauncherConn>>) {
        *self.conn.lock().unwrap_or_else(|e| e.into_inner()) = conn;
    }

    pub fn close_requested(&self) -> bool {
        self.close_requested.load(Ordering::SeqCst)
    }

    /// The catalog its launcher last sent.
    pub fn catalog(&self) -> Arc<CatalogFacts> {
        self.live().catalog.clone()
    }

    /// Takes in a catalog the launcher sent.
    pub fn set_catalog(&self, catalog: CatalogFacts) {
        self.live().catalog = Arc::new(catalog);
    }

    /// `status`'s state trimmed to `budget` bytes keeping the catalog's
    /// series' newest ends; worked out once per status and budget, and
    /// shared by every watcher that asks.
    pub fn trimmed(&self, status: &Arc<LauncherStatus>, budget: usize) -> Arc<Trimmed> {
        let catalog = {
            let live = self.live();
            if let Some((cached, cached_budget, trimmed)) = &live.trimmed {
                if Arc::ptr_eq(cached, status) && *cached_budget == budget {
                    return trimmed.clone();
                }
            }
            live.catalog.clone()
        };
        let data = status.state.as_ref().map_or(&Value::Null, |s| &s.data);
        let trimmed = Arc::new(trim(data, &catalog.series, budget));
        self.live().trimmed = Some((status.clone(), budget, trimmed.clone()));
        trimmed
    }

    /// A `shell:` instance's title: the one the program gave its terminal,
    /// else the program as typed (else the file name of the one run).
    pub fn title(&self, status: &LauncherStatus) -> Option<String> {
        status
            .terminal_title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .or_else(|| self.program.clone())
            .or_else(|| status.program.clone())
            // A launcher older than `program`: the program's file name.
            .or_else(|| {
                status.argv.first().map(|a| {
                    std::path::Path::new(a)
                        .file_name()
                        .map_or_else(|| a.clone(), |n| n.to_string_lossy().into_owned())
                })
            })
    }

    /// The error for a request to what an ended instance keeps (`what`:
    /// `last screen`, `activity record`) when it is not there: how it
    /// ended, and why it was not kept when its launcher said so.
    pub fn not_kept(&self, end: &EndInfo, what: &str) -> ClientError {
        let mut error = self.ended_error(end);
        if let Some(why) = end.not_saved.iter().find(|n| n.contains(what)) {
            error.message = format!("{}; its {what} is not kept: {why}", error.message);
        }
        error
    }

    /// The error for a request to this instance once it ended.
    pub fn ended_error(&self, end: &EndInfo) -> ClientError {
        ClientError {
            kind: ErrorKind::Ended,
            message: format!(
                "{} has ended: {}; `tickloop close {}` forgets it",
                self.id, end.reason, self.id
            ),
            data: Some(serde_json::to_value(end).unwrap_or(Value::Null)),
        }
    }
}

impl Instance {
    /// Whose it is (an instance from before owners: the person's).
    pub fn owner(&self) -> Owner {
        self.status().owner.unwrap_or_default()
    }

    /// Who approves `action` on it now.
    pub fn consent_policy(&self, action: HeldAction) -> ApprovalPolicy {
        let status = self.status();
        let for_agents = |set: Option<ApprovalPolicy>| {
            set.unwrap_or(match status.owner.unwrap_or_default() {
                Owner::Person => ApprovalPolicy::Ask,
                Owner::Agent => ApprovalPolicy::Auto,
            })
        };
        match action {
            HeldAction::Call => status.approve.unwrap_or_default(),
            HeldAction::Input => for_agents(status.agent_input),
            HeldAction::Close => for_agents(status.agent_close),
        }
    }
}

/// The consent gate looks at an instance through this.
impl ConsentTarget for Instance {
    fn id(&self) -> &str {
        &self.id
    }

    fn policy(&self, action: HeldAction) -> ApprovalPolicy {
        self.consent_policy(action)
    }

    fn revision(&self) -> Option<String> {
        self.catalog().revision.clone()
    }

    fn tool(&self, name: &str) -> Option<(bool, String)> {
        self.catalog().tool(name)
    }

    fn ended(&self) -> Option<EndInfo> {
        Instance::ended(self)
    }

    fn approval_log(&self) -> &std::path::Path {
        &self.files.approvals
    }

    fn note(&self, decision: ConsentDecision) {
        self.consent_notes.push(decision, self.conn());
    }
}

/// An [`EndInfo`] stamped now.
pub fn end_info(kind: EndClass, reason: String) -> EndInfo {
    EndInfo {
        reason,
        kind,
        offending: None,
        at: now_rfc3339(),
        not_saved: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(id: &str) -> LauncherStatus {
        LauncherStatus {
            instance: id.into(),
            launcher_pid: 1,
            pid: 2,
            argv: vec!["x".into()],
            cwd: "/".into(),
            started_at: now_rfc3339(),
            ..Default::default()
        }
    }

    fn map(ids: &[&str]) -> BTreeMap<String, Arc<Instance>> {
        ids.iter()
            .map(|id| {
                let files = InstanceFiles::in_folder(std::path::Path::new("/nonexistent/x"));
                (
                    id.to_string(),
                    Instance::new(id.to_string(), files, None, status(id), Default::default()),
                )
            })
            .collect()
    }

    #[test]
    fn bare_names_resolve_when_unique() {
        let m = map(&["hosted:a", "hosted:b", "shell:b"]);
        assert_eq!(
            resolve_in(&m, "a").map(|i| i.id.clone()).ok(),
            Some("hosted:a".into())
        );
        assert_eq!(
            resolve_in(&m, "shell:b").map(|i| i.id.clone()).ok(),
            Some("shell:b".into())
        );
        assert_eq!(
            resolve_in(&m, "b").err().map(|e| e.kind),
            Some(ErrorKind::BadRequest)
        );
        let missing = resolve_in(&m, "zz").err();
        assert_eq!(
            missing.as_ref().map(|e| e.kind),
            Some(ErrorKind::NoSuchInstance)
        );
        assert!(missing.is_some_and(|e| e.message.contains("tickloop list")));
    }

    #[test]
    fn an_end_sticks() {
        let m = map(&["hosted:a"]);
        let a = &m["hosted:a"];
        assert!(a.mark_ended(end_info(
            tickloop_proto::wire::EndClass::Exited,
            "gone".into()
        )));
        assert!(!a.mark_ended(end_info(EndClass::LauncherLost, "x".into())));
        let mut later = status("hosted:a");
        later.updates_total = 5;
        assert!(!a.set_status(later));
        assert_eq!(a.status().updates_total, 5);
        assert_eq!(
            a.ended().map(|e| e.kind),
            Some(tickloop_proto::wire::EndClass::Exited)
        );
    }
}
