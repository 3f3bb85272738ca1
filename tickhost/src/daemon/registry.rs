//! The daemon's shared state: every known instance with the newest status
//! its launcher published (only the newest: memory stays flat under update
//! floods), name resolution, and the change signal watchers wait on.

use super::approval::{tool_in, Approvals, ConsentTarget};
use super::conn::LauncherConn;
use super::log::log;
use super::starting::StartingLaunchers;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tickloop_client::clock::now_rfc3339;
use tickloop_client::kept::Kept;
use tickloop_client::paths::{parse_id, InstanceFiles, InstanceKind, RuntimeDir};
use tickloop_proto::core::delivery::{trim, Trimmed};
use tickloop_proto::core::descriptor::{Descriptor, Series};
use tickloop_proto::core::limits::Limits;
use tickloop_proto::wire::{
    ApprovalPolicy, Catalog, ClientError, ClientKind, ClientReply, ConsentDecision, EndClass,
    EndInfo, ErrorKind, HeldAction, LauncherRequest, LauncherStatus, Owner,
};
use tokio::sync::watch;

/// What every task of the daemon shares.
pub struct Shared {
    pub dir: RuntimeDir,
    pub limits: Limits,
    registry: Mutex<Registry>,
    /// Bumped whenever an instance ends or is forgotten.
    changes: watch::Sender<u64>,
    /// Set once `shutdown` has answered: the daemon exits.
    pub shutdown: watch::Sender<bool>,
    /// Calls waiting for a person's approval.
    pub approvals: Approvals,
    /// Notified when a connection to a launcher that still runs was lost:
    /// the records are scanned again and it is connected anew.
    pub rediscover: tokio::sync::Notify,
    /// Set when tickhost is about to exit: its files are not made again.
    leaving: AtomicBool,
    /// The launchers being started now (not yet able to take a signal),
    /// and the one started ahead of the next open.
    pub starting: Arc<StartingLaunchers>,
    /// Where forgotten instances' records are kept (none without a data
    /// directory).
    pub kept: Option<Kept>,
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
        let kept = Kept::of_runtime(dir.root());
        Shared::keeping(dir, exe, limits, kept)
    }

    /// [`Shared::new`] keeping forgotten instances' records in `kept`.
    pub fn keeping(dir: RuntimeDir, exe: PathBuf, limits: Limits, kept: Option<Kept>) -> Arc<Self> {
        Arc::new(Shared {
            starting: Arc::new(StartingLaunchers::new(exe, dir.root().to_path_buf())),
            dir,
            limits,
            registry: Mutex::new(Registry::default()),
            changes: watch::Sender::new(0),
            shutdown: watch::Sender::new(false),
            approvals: Approvals::configured(),
            rediscover: tokio::sync::Notify::new(),
            leaving: AtomicBool::new(false),
            kept,
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

    /// Forgets `instance` (removing its folder, after keeping its record
    /// in the data directory: [`Shared::keep_record`]), if it is still the
    /// one known by its id; `by` forgot it.
    pub fn forget(&self, instance: &Arc<Instance>, by: Option<ClientKind>) {
        {
            let mut registry = self.registry();
            if let Some(known) = registry.instances.get(&instance.id) {
                if Arc::ptr_eq(known, instance) {
                    registry.instances.remove(&instance.id);
                }
            }
        }
        self.keep_record(instance, by);
        instance.files.remove();
        self.bump();
    }

    /// Keeps what `instance`'s folder holds of its record (its approval
    /// log and activity) in the data directory, for `[records] keep_days`
    /// ([`tickloop_client::kept`]), before its folder goes.
    pub fn keep_record(&self, instance: &Instance, by: Option<ClientKind>) {
        let Some(kept) = &self.kept else {
            return;
        };
        let keep = match tickloop_client::config::load() {
            Ok(config) => config.keep_records(),
            Err(e) => {
                log(&format!(
                    "{e}; a forgotten record is kept for the default time"
                ));
                tickloop_client::config::Config::default().keep_records()
            }
        };
        let by = by.map_or_else(|| "tickhost".to_string(), ClientKind::actor);
        match kept.keep(&instance.id, &instance.files, &by, keep) {
            Ok(Some(folder)) => log(&format!(
                "{}: its record is kept in {}",
                instance.id,
                folder.display()
            )),
            Ok(None) => {}
            Err(e) => log(&format!(
                "{}: its record could not be kept in {}: {e}",
                instance.id,
                kept.root().display()
            )),
        }
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
    /// Its launcher as last connected (kept after the connection is gone).
    launcher: Mutex<Option<super::process::Known>>,
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

/// Consent decisions waiting for a launcher that does not take them (one
/// stopped, say) at most; older ones are dropped from its activity record
/// (the approval log keeps every one).
const CONSENT_NOTES_KEPT: usize = 256;

impl ConsentNotes {
    fn push(self: &Arc<Self>, entry: ConsentDecision, conn: Option<Arc<LauncherConn>>) {
        let Some(conn) = conn else { return };
        {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            if waiting.len() >= CONSENT_NOTES_KEPT {
                waiting.pop_front();
            }
            waiting.push_back(entry);
        }
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
    /// How many catalogs the launcher pushed (in the order it sent them):
    /// a describe's reply is kept only if none arrived since it was asked,
    /// so an older catalog never replaces a newer one.
    pushes: u64,
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
        tool_in(self.descriptor.as_ref()?, name)
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
                pushes: 0,
                trimmed: None,
            }),
            conn: Mutex::new(None),
            launcher: Mutex::new(None),
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
        if let Some(known) = conn.as_ref().and_then(|c| c.launcher) {
            *self.launcher.lock().unwrap_or_else(|e| e.into_inner()) = Some(known);
        }
        *self.conn.lock().unwrap_or_else(|e| e.into_inner()) = conn;
    }

    /// Its launcher process: as last connected, else the one its status
    /// names if that is a launcher now; `None` when neither runs.
    pub fn launcher(&self) -> Option<super::process::Known> {
        let connected = *self.launcher.lock().unwrap_or_else(|e| e.into_inner());
        match connected {
            Some(known) => known.alive().then_some(known),
            None => super::process::Known::now(self.status().launcher_pid)
                .filter(super::process::Known::is_launcher),
        }
    }

    pub fn close_requested(&self) -> bool {
        self.close_requested.load(Ordering::SeqCst)
    }

    /// The catalog its launcher last sent.
    pub fn catalog(&self) -> Arc<CatalogFacts> {
        self.live().catalog.clone()
    }

    /// Takes in a catalog the launcher pushed (always its newest).
    pub fn set_catalog(&self, catalog: CatalogFacts) {
        let mut live = self.live();
        live.catalog = Arc::new(catalog);
        live.pushes += 1;
    }

    /// How many catalogs the launcher has pushed so far.
    pub fn catalog_pushes(&self) -> u64 {
        self.live().pushes
    }

    /// Takes in the catalog a describe answered, asked when `pushes`
    /// catalogs had been pushed, unless the launcher pushed another since
    /// (which is as new or newer); whether it was kept.
    pub fn set_described(&self, pushes: u64, catalog: CatalogFacts) -> bool {
        let mut live = self.live();
        if live.pushes != pushes {
            return false;
        }
        live.catalog = Arc::new(catalog);
        true
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
        let series = match self.kind {
            // A shell's state: its newest commands are kept.
            InstanceKind::Shell => tickloop_proto::shell::series(),
            _ => catalog.series.to_vec(),
        };
        let trimmed = Arc::new(trim(data, &series, budget));
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
            // Recording keeps what is typed: under the typing's policy.
            HeldAction::Input | HeldAction::Record => for_agents(status.agent_input),
            // A reload ends the running program, as a close does.
            HeldAction::Close | HeldAction::Reload => for_agents(status.agent_close),
        }
    }
}

impl Instance {
    /// Whether its terminal does not echo typing now (a password prompt):
    /// its launcher's status asked for at this moment, else the last one
    /// it published.
    pub async fn echo_off_now(&self) -> bool {
        if let Some(conn) = self.conn() {
            if let ClientReply::Ok(status) = conn.request(LauncherRequest::Status).await {
                if let Ok(status) = serde_json::from_value::<LauncherStatus>(status) {
                    return status.echo_off;
                }
            }
        }
        self.status().echo_off
    }

    /// Whether an agent may forget it once it has ended (`close` of it,
    /// `open` over it, `shutdown`): its own, or the person's when the
    /// person lets agents close it (`agent_close auto`; its record is kept
    /// in the data directory all the same).
    pub fn agents_may_forget(&self) -> bool {
        self.owner() == Owner::Agent
            || self.consent_policy(HeldAction::Close) == ApprovalPolicy::Auto
    }
}

impl Shared {
    /// Asks the Tick of `instance` for its catalog now and keeps it (so
    /// `list` and the gate see its current revision), unless the launcher
    /// pushed a catalog meanwhile; the catalog, when it answered.
    pub async fn describe_again(&self, instance: &Instance) -> Option<Catalog> {
        let conn = instance.conn()?;
        let pushes = instance.catalog_pushes();
        let ClientReply::Ok(descriptor) = conn.request(LauncherRequest::Describe).await else {
            return None;
        };
        let catalog = Catalog {
            revision: descriptor
                .get("revision")
                .and_then(Value::as_str)
                .map(str::to_string),
            descriptor: Some(descriptor),
        };
        instance.set_described(pushes, CatalogFacts::new(catalog.clone(), &self.limits));
        Some(catalog)
    }
}

/// The consent gate looks at an instance through this: the instance and
/// the daemon that can describe it again.
pub struct Consent<'a> {
    pub shared: &'a Shared,
    pub instance: &'a Instance,
}

impl ConsentTarget for Consent<'_> {
    fn id(&self) -> &str {
        &self.instance.id
    }

    fn policy(&self, action: HeldAction) -> ApprovalPolicy {
        self.instance.consent_policy(action)
    }

    fn revision(&self) -> Option<String> {
        self.instance.catalog().revision.clone()
    }

    fn tool(&self, name: &str) -> Option<(bool, String)> {
        self.instance.catalog().tool(name)
    }

    fn describe(&self) -> impl std::future::Future<Output = Option<Catalog>> + Send {
        self.shared.describe_again(self.instance)
    }

    fn echo_off(&self) -> impl std::future::Future<Output = bool> + Send {
        self.instance.echo_off_now()
    }

    fn ended(&self) -> Option<EndInfo> {
        self.instance.ended()
    }

    fn approval_log(&self) -> &std::path::Path {
        &self.instance.files.approvals
    }

    fn note(&self, decision: ConsentDecision) {
        self.instance
            .consent_notes
            .push(decision, self.instance.conn());
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

    /// A catalog push that the launcher wrote before its reply to a
    /// describe (its writer sent the newest catalog it had published, then
    /// the reply it had queued with an older one): the reply does not
    /// replace the newer catalog in tickhost's copy.
    #[tokio::test]
    async fn a_describe_reply_never_replaces_a_newer_pushed_catalog() {
        use tickloop_proto::wire::{
            Envelope, HelloReply, LauncherMessage, LauncherReply, LauncherRequest,
        };
        use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
        let dir = tempfile::tempdir().expect("a temporary directory");
        let socket = dir.path().join("l.sock");
        let listener = tokio::net::UnixListener::bind(&socket).expect("bound");
        let catalog = |revision: &str| Catalog {
            revision: Some(revision.into()),
            descriptor: Some(serde_json::json!({"revision": revision, "tools": []})),
        };
        let (one, two) = (catalog("1"), catalog("2"));
        let launcher = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.expect("a connection");
            let (read, mut write) = stream.into_split();
            let mut lines = BufReader::new(read).lines();
            let _hello = lines.next_line().await;
            let answer = HelloReply {
                version: tickloop_proto::wire::wire_version().to_string(),
                refused: None,
            };
            write.write_all(&line(&answer)).await.expect("hello");
            while let Ok(Some(text)) = lines.next_line().await {
                let Ok(request) = serde_json::from_str::<Envelope<LauncherRequest>>(&text) else {
                    continue;
                };
                let reply = |value: Value| {
                    LauncherMessage::Reply(LauncherReply {
                        id: request.id,
                        reply: ClientReply::Ok(value),
                    })
                };
                let bytes = match request.request {
                    LauncherRequest::Describe => {
                        // The push of revision 2, then the reply carrying 1,
                        // in one write.
                        let mut bytes = line(&LauncherMessage::Catalog(Box::new(two.clone())));
                        bytes.extend(line(&reply(one.descriptor.clone().unwrap_or_default())));
                        bytes
                    }
                    _ => line(&LauncherMessage::Reply(LauncherReply {
                        id: request.id,
                        reply: ClientReply::Error(ClientError {
                            kind: ErrorKind::BadRequest,
                            message: "not here".into(),
                            data: None,
                        }),
                    })),
                };
                write.write_all(&bytes).await.expect("written");
            }
        });
        let shared = Shared::new(
            RuntimeDir::at(dir.path()),
            PathBuf::from("tickloop"),
            Limits::default(),
        );
        let instance = map(&["hosted:a"])["hosted:a"].clone();
        instance.set_catalog(CatalogFacts::new(catalog("1"), &shared.limits));
        let (conn, reader) = LauncherConn::connect(&socket, 1)
            .await
            .expect("connected to the launcher");
        super::super::reader::spawn_reader(shared.clone(), instance.clone(), conn, reader);
        let described = shared.describe_again(&instance).await;
        assert_eq!(described.and_then(|c| c.revision).as_deref(), Some("1"));
        assert_eq!(instance.catalog().revision.as_deref(), Some("2"));
        launcher.abort();
    }

    /// `value` as one JSON line.
    fn line<T: serde::Serialize>(value: &T) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(value).unwrap_or_default();
        bytes.push(b'\n');
        bytes
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
