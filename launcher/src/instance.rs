//! One instance's life: spawn the Tick, drive its protocol session, serve
//! requests, publish status, and end its process group.
//!
//! Everything that touches [`Session`] (not `Sync`) runs in one task, the
//! loop of [`run`]; the Tick's pipes, its exit, the socket's connections and
//! the terminal threads all talk to it through channels.

use crate::activity::{kept, ActivityLog};
use crate::emulator::ScreenText;
use crate::record::{now_rfc3339, write_record};
use crate::socket::{self, error, Incoming, Peer, ServeContext};
use crate::spawn::{spawn, Spawned};
use crate::terminal::TerminalHandle;
use crate::views::ViewHub;
use crate::LauncherError;
use serde_json::json;
use std::collections::HashMap;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::core::{
    Action, ClientToken, EndKind, EndReason, Limits, Reply, Session, SessionRequest,
};
use tickloop_proto::wire::{
    ActivityOutcome, ApprovalPolicy, CallOutcome, Catalog, ClientKind, ClientReply, EndClass,
    EndInfo, ErrorKind, LaunchReport, LaunchSpec, LauncherRecord, LauncherRequest, LauncherStatus,
    ScreenCursor, ScreenReply, StateSnapshot,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

/// How long the Tick's process group gets between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(2);
/// After SIGKILL, how long to wait for the group to disappear before giving up
/// on stragglers (zombies of a parent that does not reap).
const KILL_WAIT: Duration = Duration::from_secs(1);
/// How often the end of the process group is checked while it ends.
const TEARDOWN_POLL: Duration = Duration::from_millis(20);
/// When the Tick has exited but its stdout has not reached EOF (a child holds
/// it), how long to wait for the rest of its output before reporting the exit.
const EXIT_DRAIN: Duration = Duration::from_millis(200);
/// Before taking the screen of a failed open: time for the PTY's output to
/// reach the emulator.
const SCREEN_SETTLE: Duration = Duration::from_millis(100);
/// How long connected peers get to take the final status and replies.
const FLUSH_WAIT: Duration = Duration::from_secs(2);
/// How long a `shell:` program runs before the launcher reports it up. A
/// program that exits sooner (`true`, a mistyped command, `sh -c 'echo
/// x; exit 7'`) is reported ended, with its status and screen, instead of
/// "running" for a program already gone.
pub const SHELL_START_SETTLE: Duration = Duration::from_millis(25);

/// Called once with the launch report (the readiness pipe's line).
pub type ReportFn = Box<dyn FnOnce(&LaunchReport) + Send>;

/// How a launcher's run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// The instance was up (`Ready` was reported) and has ended.
    Ended(EndInfo),
    /// The instance never came up; `Failed` was reported with this reason.
    Failed(String),
}

/// Runs one instance to its end: reports `Ready` or `Failed` through
/// `report` (exactly once), serves `spec.socket`, and returns when the Tick's
/// process group is gone and connected peers have the final status.
///
/// Setup errors (socket, PTY, spawn) are reported as `Failed` and returned
/// as `Ok(RunOutcome::Failed)`; nothing is left running.
pub async fn run(spec: LaunchSpec, report: ReportFn) -> Result<RunOutcome, LauncherError> {
    let mut report = Some(report);
    let mut fail = |reason: String, screen: String| {
        if let Some(report) = report.take() {
            report(&LaunchReport::Failed {
                reason: reason.clone(),
                screen,
            });
        }
        Ok(RunOutcome::Failed(reason))
    };

    let listener = match socket::bind(&spec.socket) {
        Ok(listener) => listener,
        Err(e) => return fail(e.to_string(), String::new()),
    };
    let history = spec
        .program
        .history
        .unwrap_or(crate::emulator::DEFAULT_HISTORY)
        .min(crate::emulator::MAX_HISTORY);
    let recorder = Arc::new(crate::recorder::Recorder::new(&spec.instance));
    let term = match TerminalHandle::open(history, recorder) {
        Ok(term) => term,
        Err(e) => {
            let _ = std::fs::remove_file(&spec.socket);
            return fail(e.to_string(), String::new());
        }
    };
    // `open --record FILE`: recorded from before the Tick starts.
    let record_writer = match &spec.program.record {
        None => None,
        Some(path) => match start_file_recording(&term, path).await {
            Ok(writer) => Some(writer),
            Err(e) => {
                let _ = std::fs::remove_file(&spec.socket);
                return fail(e, String::new());
            }
        },
    };
    // Watched before it is read: a save in between is not missed.
    let mut artifact = match &spec.program.artifact {
        None => None,
        Some(path) => match crate::artifact::watch(path, &spec.program.watch) {
            Ok((watch, events)) => Some(Artifact {
                path: path.clone(),
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
            }),
            Err(e) => {
                let _ = std::fs::remove_file(&spec.socket);
                return fail(e, String::new());
            }
        },
    };
    let mut first = spec.clone();
    if let Some(path) = &spec.program.artifact {
        match crate::artifact::read_version(path) {
            Ok(version) => {
                first.program.argv = version.argv;
                if let Some(artifact) = artifact.as_mut() {
                    artifact.digest = Some(version.digest);
                }
            }
            Err(e) => {
                let _ = std::fs::remove_file(&spec.socket);
                return fail(e, String::new());
            }
        }
    }
    let spawned = match spawn(&first, term.tty_name()) {
        Ok(spawned) => spawned,
        Err(e) => {
            let _ = std::fs::remove_file(&spec.socket);
            return fail(e.to_string(), String::new());
        }
    };
    let Some(report) = report.take() else {
        return Err(LauncherError::Internal(
            "the report was already sent".into(),
        ));
    };
    let mut instance = Instance::start(spec, spawned, term, listener, report, artifact);
    instance.record_writer = record_writer;
    instance.run().await
}

/// Creates `path` (never over an existing file) and records into it.
async fn start_file_recording(
    term: &TerminalHandle,
    path: &std::path::Path,
) -> Result<std::thread::JoinHandle<()>, String> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| format!("cannot create the recording {}: {e}", path.display()))?;
    let (sink, stream) = crate::recorder::recording();
    let writer = crate::recorder::spawn_file_writer(stream, file)
        .map_err(|e| format!("cannot start the recording thread: {e}"))?;
    if !term.start_recording(sink).await {
        return Err("the terminal's emulator thread is gone".to_string());
    }
    Ok(writer)
}

/// The per-process channels of the instance loop: the Tick's stdin (a writer
/// task), its stdout (a reader task) and its exit (a waiter task). Each is
/// `None` where the program has no pipe (a `shell:` program).
type ChildPipes = (
    Option<mpsc::UnboundedSender<Vec<u8>>>,
    Option<mpsc::Receiver<StdoutEvent>>,
    oneshot::Receiver<std::process::ExitStatus>,
);

fn child_pipes(mut child: tokio::process::Child) -> ChildPipes {
    let mut stdin_tx = None;
    let mut stdout_rx = None;
    if let Some(mut stdin) = child.stdin.take() {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(async move {
            let mut broken = false;
            while let Some(bytes) = rx.recv().await {
                // A failed write is the Tick gone: its exit will follow.
                if !broken && stdin.write_all(&bytes).await.is_err() {
                    broken = true;
                }
            }
        });
        stdin_tx = Some(tx);
    }
    if let Some(mut stdout) = child.stdout.take() {
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(async move {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match stdout.read(&mut buf).await {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(StdoutEvent::Eof).await;
                        return;
                    }
                    Ok(n) => {
                        if tx
                            .send(StdoutEvent::Bytes(buf[..n].to_vec()))
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
        });
        stdout_rx = Some(rx);
    }
    let (exit_tx, exit_rx) = oneshot::channel();
    tokio::spawn(async move {
        if let Ok(status) = child.wait().await {
            let _ = exit_tx.send(status);
        }
    });
    (stdin_tx, stdout_rx, exit_rx)
}

/// What the loop hears from the Tick's stdout reader.
enum StdoutEvent {
    Bytes(Vec<u8>),
    Eof,
}

/// An `artifact:` instance's file and generations.
struct Artifact {
    path: std::path::PathBuf,
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
    events: mpsc::UnboundedReceiver<crate::artifact::Change>,
    _watch: crate::artifact::Watch,
    /// `reload` requests, answered when the new version is up or failed.
    reloaders: Vec<(u64, Peer)>,
    /// When the running process started, and when a version that stopped
    /// after its initialization starts again.
    started: Instant,
    restart_due: Option<Instant>,
    /// How many such restarts there were.
    restarts: u64,
}

/// A version that stopped after it had started is started again, at most
/// this often.
const RESTART_EVERY: Duration = Duration::from_secs(1);

/// The end reason of a session ended for a reload.
const RELOADED: &str = "reloaded: a new version of the artifact starts";

struct Ending {
    info: EndInfo,
    since: Instant,
    killed_at: Option<Instant>,
}

struct Instance {
    spec: LaunchSpec,
    pid: u32,
    argv: Vec<String>,
    started_at: String,
    term: Arc<TerminalHandle>,
    /// `None` for a `shell:` program.
    session: Option<Session>,
    stdin_tx: Option<mpsc::UnboundedSender<Vec<u8>>>,
    stdout_rx: Option<mpsc::Receiver<StdoutEvent>>,
    exit_rx: Option<oneshot::Receiver<std::process::ExitStatus>>,
    /// The exit, held until stdout reaches EOF (or [`EXIT_DRAIN`] passes).
    exit_pending: Option<(String, Instant)>,
    exited: bool,
    requests_rx: mpsc::Receiver<Incoming>,
    status_tx: watch::Sender<crate::published::Published>,
    /// The catalog last published (shared with every connection), and
    /// which version and revision it is of.
    catalog: Arc<Catalog>,
    catalog_key: (Option<u64>, Option<String>),
    shutdown_tx: watch::Sender<bool>,
    flushed_tx: Option<mpsc::Sender<()>>,
    flushed_rx: mpsc::Receiver<()>,
    pending: HashMap<ClientToken, Pending>,
    /// What agents did with this instance (see [`crate::activity`]).
    activity: ActivityLog,
    /// Views attached at the last look, to record attach and detach.
    views_seen: u32,
    next_token: ClientToken,
    snapshot: Option<StateSnapshot>,
    report: Option<ReportFn>,
    ending: Option<Ending>,
    ended: Option<EndInfo>,
    closers: Vec<(u64, Peer)>,
    dirty: bool,
    /// When a `shell:` program is reported up, unless it ends first.
    ready_at: Option<Instant>,
    /// How many views are attached (see [`crate::views`]).
    views_rx: watch::Receiver<u32>,
    /// The title the program gave its terminal.
    title_rx: watch::Receiver<String>,
    /// Bumped when the screen may have changed: the program wrote output.
    changes_rx: watch::Receiver<u64>,
    /// When the program last wrote output (RFC 3339), for the status.
    last_output_at: Option<String>,
    /// When `last_output_at` was last published, and when a newer one
    /// held back (at most one status a second for output) is due.
    output_published: Option<Instant>,
    output_due: Option<Instant>,
    /// `Some` for an `artifact:` instance.
    artifact: Option<Artifact>,
    /// `close` was asked (or the launcher was signalled): the end is final.
    closing: bool,
    /// Updates of an artifact's earlier generations, counted on in
    /// `updates_total`.
    updates_before: u64,
    /// The thread writing `open --record FILE`, joined at the end.
    record_writer: Option<std::thread::JoinHandle<()>>,
}

impl Instance {
    fn start(
        spec: LaunchSpec,
        spawned: Spawned,
        term: Arc<TerminalHandle>,
        listener: tokio::net::UnixListener,
        report: ReportFn,
        artifact: Option<Artifact>,
    ) -> Instance {
        let Spawned { child, pid, argv } = spawned;
        let started_at = now_rfc3339();
        let (stdin_tx, stdout_rx, exit_rx) = child_pipes(child);

        let session = (!spec.program.shell)
            .then(|| Session::new(spec_limits(&spec), Instant::now().into_std()));
        // A plain program is up once it has run for SHELL_START_SETTLE.
        let spec_shell_ready_at = spec
            .program
            .shell
            .then(|| Instant::now() + SHELL_START_SETTLE);

        let (requests_tx, requests_rx) = mpsc::channel(64);
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let (flushed_tx, flushed_rx) = mpsc::channel(1);
        let views = ViewHub::start(term.clone());
        let title_rx = term.subscribe_title();
        let changes_rx = term.subscribe_changes();
        let mut instance = Instance {
            spec,
            pid,
            argv,
            started_at,
            term,
            session,
            stdin_tx,
            stdout_rx,
            exit_rx: Some(exit_rx),
            artifact,
            closing: false,
            updates_before: 0,
            record_writer: None,
            exit_pending: None,
            exited: false,
            requests_rx,
            // Replaced below, once the status can be built.
            status_tx: watch::channel(crate::published::Published::default()).0,
            catalog: Arc::new(Catalog::default()),
            catalog_key: (None, None),
            shutdown_tx,
            flushed_tx: Some(flushed_tx.clone()),
            flushed_rx,
            pending: HashMap::new(),
            activity: ActivityLog::new(),
            views_seen: 0,
            next_token: 1,
            snapshot: None,
            report: Some(report),
            ending: None,
            ended: None,
            closers: Vec::new(),
            dirty: false,
            ready_at: spec_shell_ready_at,
            views_rx: views.count(),
            title_rx,
            changes_rx,
            last_output_at: None,
            output_published: None,
            output_due: None,
        };
        let (status_tx, status_rx) = watch::channel(crate::published::Published {
            status: instance.status(),
            catalog: instance.catalog.clone(),
        });
        instance.status_tx = status_tx;
        tokio::spawn(socket::serve(
            listener,
            ServeContext {
                requests: requests_tx,
                status: status_rx,
                shutdown: shutdown_rx,
                flushed: flushed_tx.downgrade(),
                views,
                term: instance.term.clone(),
            },
        ));
        instance
    }

    async fn run(mut self) -> Result<RunOutcome, LauncherError> {
        // The session queued its first request (tick/describe) at creation.
        self.drain_actions();
        loop {
            let now = Instant::now();
            let deadline = if self.ending.is_none() {
                self.session
                    .as_ref()
                    .and_then(|s| s.next_deadline())
                    .map(Instant::from_std)
            } else {
                None
            };
            let exit_deadline = self.exit_pending.as_ref().map(|(_, at)| *at);
            let ready_at = self.ready_at.filter(|_| self.ending.is_none());
            let reload_due = self.artifact.as_ref().and_then(|a| a.reload_due);
            let restart_due = self.artifact.as_ref().and_then(|a| a.restart_due);
            tokio::select! {
                Some(change) = recv_artifact(&mut self.artifact) => {
                    if let Some(artifact) = self.artifact.as_mut() {
                        artifact.reload_due = Some(Instant::now() + crate::artifact::DEBOUNCE);
                        artifact.watched_changed |= change == crate::artifact::Change::Watched;
                    }
                }
                _ = sleep_until(reload_due), if reload_due.is_some() => self.on_saved(),
                _ = sleep_until(restart_due), if restart_due.is_some() => {
                    if !self.closing {
                        self.start_generation(false);
                    }
                }
                _ = sleep_until(ready_at), if ready_at.is_some() => {
                    self.ready_at = None;
                    self.initialized();
                }
                Some(incoming) = self.requests_rx.recv() => self.on_request(incoming),
                event = recv_stdout(&mut self.stdout_rx), if self.stdout_rx.is_some() => {
                    self.on_stdout(event)
                }
                status = recv_exit(&mut self.exit_rx), if self.exit_rx.is_some() => {
                    self.exit_rx = None;
                    self.on_exit(status);
                }
                _ = sleep_until(exit_deadline), if exit_deadline.is_some() => {
                    self.deliver_exit();
                }
                _ = sleep_until(deadline), if deadline.is_some() => {
                    if let Some(session) = self.session.as_mut() {
                        session.on_time(now.max(Instant::now()).into_std());
                    }
                }
                _ = tokio::time::sleep(TEARDOWN_POLL), if self.ending.is_some() => {}
                Ok(()) = self.views_rx.changed() => self.on_views(),
                Ok(()) = self.title_rx.changed() => self.dirty = true,
                Ok(()) = self.changes_rx.changed() => self.on_output(),
                _ = sleep_until(self.output_due), if self.output_due.is_some() => {
                    self.output_due = None;
                    self.dirty = true;
                }
            }
            self.drain_actions();
            if self.teardown_step() {
                if self.artifact.is_none() || self.closing {
                    return Ok(self.finish().await);
                }
                self.generation_over();
                self.drain_actions();
            }
            if self.dirty {
                self.dirty = false;
                if self.output_due.is_none() {
                    self.output_published = Some(Instant::now());
                }
                self.publish();
            }
        }
    }

    fn on_request(&mut self, incoming: Incoming) {
        let Incoming {
            id,
            request,
            client,
            peer,
        } = incoming;
        let now = Instant::now().into_std();
        let protocol = match request {
            LauncherRequest::Status => {
                let reply = match serde_json::to_value(self.status()) {
                    Ok(value) => ClientReply::Ok(value),
                    Err(e) => error(ErrorKind::Internal, &e.to_string()),
                };
                peer.reply(id, reply);
                return;
            }
            LauncherRequest::Screen { history } => {
                let term = self.term.clone();
                let limit = self.history_limit();
                tokio::spawn(async move {
                    let reply = match term.screen(history).await {
                        Some(text) => {
                            match serde_json::to_value(screen_reply(text, limit, false)) {
                                Ok(value) => ClientReply::Ok(value),
                                Err(e) => error(ErrorKind::Internal, &e.to_string()),
                            }
                        }
                        None => error(ErrorKind::Internal, "the terminal emulator is gone"),
                    };
                    peer.reply(id, reply);
                });
                return;
            }
            LauncherRequest::Input { text } => {
                let mut asked = Asked::new(client, "input");
                asked.args = Some(kept(&json!(text)));
                let bytes = text.into_bytes();
                let n = bytes.len();
                let reply = match self.term.input(bytes) {
                    Ok(()) => ClientReply::Ok(json!({"ok": true, "bytes": n})),
                    Err(e) => error(ErrorKind::Internal, &e.to_string()),
                };
                self.record_request(asked, &reply);
                peer.reply(id, reply);
                return;
            }
            LauncherRequest::Activity { after } => {
                let record = self
                    .activity
                    .record(&self.spec.instance, after, self.tools());
                let reply = match serde_json::to_value(record) {
                    Ok(value) => ClientReply::Ok(value),
                    Err(e) => error(ErrorKind::Internal, &e.to_string()),
                };
                peer.reply(id, reply);
                return;
            }
            LauncherRequest::SetApproval { policy } => {
                self.spec.program.approve = Some(policy);
                self.rewrite_record(&self.status());
                self.dirty = true;
                peer.reply(
                    id,
                    ClientReply::Ok(
                        json!({"instance": self.spec.instance, "approve": policy.as_str()}),
                    ),
                );
                return;
            }
            LauncherRequest::Subscription { started } => {
                self.activity
                    .subscription(now_rfc3339_millis(), client, started);
                peer.reply(id, ClientReply::Ok(json!({"ok": true})));
                return;
            }
            LauncherRequest::Close => {
                self.closers.push((id, peer));
                self.closing = true;
                if let Some(artifact) = self.artifact.as_mut() {
                    artifact.reload_wanted = false;
                    artifact.reload_due = None;
                    artifact.restart_due = None;
                }
                if self.ending.is_none() && self.exited && self.exit_pending.is_none() {
                    // A failed artifact version: nothing runs, nothing to end.
                    self.begin_end(EndInfo {
                        reason: CLOSED_BY_USER.to_string(),
                        kind: EndClass::Closed,
                        offending: None,
                        at: now_rfc3339(),
                    });
                } else if self.ending.is_none() {
                    match self.session.as_mut() {
                        Some(session) => session.close(CLOSED_BY_USER, now),
                        None => self.begin_end(EndInfo {
                            reason: CLOSED_BY_USER.to_string(),
                            kind: EndClass::Closed,
                            offending: None,
                            at: now_rfc3339(),
                        }),
                    }
                }
                return;
            }
            LauncherRequest::Reload => {
                match self.artifact.as_mut() {
                    Some(artifact) if !self.closing => {
                        artifact.reloaders.push((id, peer));
                        self.reload(now);
                    }
                    Some(_) => peer.reply(id, error(ErrorKind::Ended, CLOSED_BY_USER)),
                    None => peer.reply(
                        id,
                        error(
                            ErrorKind::BadRequest,
                            &format!(
                                "{} is not an artifact; only an artifact reloads",
                                self.spec.instance
                            ),
                        ),
                    ),
                }
                return;
            }
            LauncherRequest::Describe => SessionRequest::Describe,
            LauncherRequest::Read => SessionRequest::Read,
            LauncherRequest::Call(call) => SessionRequest::Call(call),
        };
        let asked = Asked::of(client, &protocol);
        if self.session.is_none() {
            if let Some(artifact) = &self.artifact {
                let reason = artifact.failed.as_deref().unwrap_or("it is starting");
                let message = format!(
                    "{} generation {} is not running: {reason}; save {} to start it again",
                    self.spec.instance,
                    artifact.generation,
                    artifact.path.display()
                );
                let reply = error(ErrorKind::TickFailed, &message);
                self.record_request(asked, &reply);
                peer.reply(id, reply);
                return;
            }
        }
        let Some(session) = self.session.as_mut() else {
            let name = self
                .spec
                .instance
                .strip_prefix("shell:")
                .unwrap_or(&self.spec.instance);
            let message =
                format!("shell:{name} is not a Tick: it has no protocol; use screen and input");
            let reply = error(ErrorKind::NotATick, &message);
            self.record_request(asked, &reply);
            peer.reply(id, reply);
            return;
        };
        let token = self.next_token;
        self.next_token += 1;
        self.pending.insert(token, Pending { id, peer, asked });
        session.request(token, protocol, now);
        // calls_in_flight may have changed.
        self.dirty = true;
    }

    fn on_stdout(&mut self, event: Option<StdoutEvent>) {
        let now = Instant::now().into_std();
        match event {
            Some(StdoutEvent::Bytes(bytes)) => {
                self.term.recorder().from_tick(&bytes);
                if let Some(session) = self.session.as_mut() {
                    session.on_stdout(&bytes, now);
                }
            }
            Some(StdoutEvent::Eof) | None => {
                self.stdout_rx = None;
                if let Some(session) = self.session.as_mut() {
                    session.on_stdout_eof(now);
                }
                self.deliver_exit();
            }
        }
    }

    fn on_exit(&mut self, status: Option<std::process::ExitStatus>) {
        let description = match status {
            Some(status) => match (status.code(), status.signal()) {
                (Some(code), _) => format!("exited with status {code}"),
                (None, Some(signal)) => format!("killed by signal {signal}"),
                (None, None) => "exited".to_string(),
            },
            None => "exited (its status could not be read)".to_string(),
        };
        self.exited = true;
        self.exit_pending = Some((description, Instant::now() + EXIT_DRAIN));
        if self.stdout_rx.is_none() {
            self.deliver_exit();
        }
    }

    /// Hands the Tick's exit to the session (after its stdout was drained).
    fn deliver_exit(&mut self) {
        let Some((description, _)) = self.exit_pending.take() else {
            return;
        };
        match self.session.as_mut() {
            Some(session) => session.on_exit(&description, Instant::now().into_std()),
            None => self.begin_end(EndInfo {
                reason: format!("the program {description}"),
                kind: EndClass::Exited,
                offending: None,
                at: now_rfc3339(),
            }),
        }
    }

    fn drain_actions(&mut self) {
        loop {
            let Some(action) = self.session.as_mut().and_then(|s| s.poll_action()) else {
                return;
            };
            match action {
                Action::Write(bytes) => {
                    self.term.recorder().to_tick(&bytes);
                    if let Some(tx) = &self.stdin_tx {
                        let _ = tx.send(bytes);
                    }
                }
                Action::Reply { client, reply } => self.on_reply(client, reply),
                Action::Initialized => {
                    self.refresh_snapshot(true);
                    self.initialized();
                }
                Action::Updated => {
                    self.refresh_snapshot(true);
                    self.record_update();
                    self.dirty = true;
                }
                Action::CatalogChanged => self.dirty = true,
                Action::End(reason) => {
                    let mut info = end_info(&reason);
                    let reloading = self.artifact.as_ref().is_some_and(|a| a.reload_wanted);
                    if reloading && !self.closing && reason.kind == EndKind::Closed {
                        info.reason = RELOADED.to_string();
                    }
                    self.begin_end(info);
                }
            }
        }
    }

    fn on_reply(&mut self, client: ClientToken, reply: Reply) {
        let Some(Pending { id, peer, asked }) = self.pending.remove(&client) else {
            return;
        };
        let reply = match reply {
            Reply::Describe(descriptor) => ClientReply::Ok(descriptor),
            Reply::Read(state) => {
                self.refresh_snapshot(false);
                ClientReply::Ok(json!({
                    "seq": state.seq,
                    "data": state.data,
                    "at": state.at.unwrap_or_else(now_rfc3339),
                }))
            }
            Reply::Call(outcome) => ClientReply::Call(outcome),
            Reply::Failed(message) => error(ErrorKind::TickFailed, &message),
        };
        self.dirty = true;
        self.record_request(asked, &reply);
        peer.reply(id, reply);
    }

    /// Records how a request ended in the activity.
    fn record_request(&mut self, asked: Asked, reply: &ClientReply) {
        let duration_ms = u64::try_from(asked.since.elapsed().as_millis()).unwrap_or(u64::MAX);
        let (outcome, error_code, message, result) = match reply {
            ClientReply::Ok(value) => (ActivityOutcome::Ok, None, None, Some(kept(value))),
            ClientReply::Error(e) => (ActivityOutcome::Failed, None, Some(e.message.clone()), None),
            ClientReply::Call(CallOutcome::Result { result }) => {
                (ActivityOutcome::Executed, None, None, Some(kept(result)))
            }
            ClientReply::Call(CallOutcome::Executed { error }) => (
                ActivityOutcome::Executed,
                Some(error.code),
                Some(error.message.clone()),
                None,
            ),
            ClientReply::Call(CallOutcome::NotExecuted { error }) => (
                ActivityOutcome::NotExecuted,
                Some(error.code),
                Some(error.message.clone()),
                None,
            ),
            ClientReply::Call(CallOutcome::Unknown { reason }) => {
                (ActivityOutcome::Unknown, None, Some(reason.clone()), None)
            }
        };
        // A describe's result is the whole descriptor: its tools are in the
        // overlay's catalog already.
        let result = result.filter(|_| asked.method != "tick/describe");
        self.activity.request(
            asked.at,
            tickloop_proto::wire::RequestActivity {
                client: asked.client,
                method: asked.method.to_string(),
                tool: asked.tool,
                args: asked.args,
                revision: asked.revision,
                outcome,
                error_code,
                error: message,
                result,
                duration_ms,
            },
        );
    }

    /// The catalog as the activity overlay lists it.
    fn tools(&self) -> Vec<tickloop_proto::wire::ToolSummary> {
        let Some(descriptor) = self.session.as_ref().and_then(|s| s.descriptor()) else {
            return Vec::new();
        };
        descriptor
            .tools
            .iter()
            .map(|t| tickloop_proto::wire::ToolSummary {
                name: t.name.clone(),
                mutates: t.mutates,
                description: t.description.clone(),
            })
            .collect()
    }

    /// Records the update just taken into the snapshot.
    fn record_update(&mut self) {
        let Some(snapshot) = &self.snapshot else {
            return;
        };
        let bytes = serde_json::to_vec(&snapshot.data).map_or(0, |v| v.len());
        let budget = spec_limits(&self.spec).delivery_budget;
        self.activity.update(
            now_rfc3339_millis(),
            Instant::now().into_std(),
            snapshot.seq,
            bytes,
            budget,
        );
    }

    /// The number of views changed: record who came or went.
    fn on_views(&mut self) {
        let views = *self.views_rx.borrow_and_update();
        let seen = self.views_seen;
        self.views_seen = views;
        if views != seen {
            self.activity
                .view(now_rfc3339_millis(), views > seen, views);
        }
        self.dirty = true;
    }

    /// Takes the session's latest state; `fresh` when it just arrived (an
    /// update), else only a changed state gets a new receipt time.
    fn refresh_snapshot(&mut self, fresh: bool) {
        let Some(state) = self.session.as_ref().and_then(|s| s.state()) else {
            return;
        };
        if !fresh {
            if let Some(old) = &self.snapshot {
                if old.seq == state.seq && old.data == state.data {
                    return;
                }
            }
        }
        self.snapshot = Some(StateSnapshot {
            seq: state.seq,
            data: state.data.clone(),
            at: state.at.clone().unwrap_or_else(now_rfc3339),
        });
        self.dirty = true;
    }

    /// The instance is up: report Ready and write the record.
    fn initialized(&mut self) {
        self.announce();
    }

    /// Publishes the status, then rewrites the record, answers the waiting
    /// `reload`s and reports Ready (once). Status and record first: whoever
    /// gets Ready may connect or look for the record at once, and must not
    /// see the status from before (no descriptor yet, or the old failure).
    fn announce(&mut self) {
        let status = self.publish();
        self.rewrite_record(&status);
        self.answer_reloaders(&status);
        if let Some(report) = self.report.take() {
            report(&LaunchReport::Ready {
                socket: self.spec.socket.clone(),
                status: Box::new(status),
                catalog: self.catalog_if_any(),
            });
        }
        self.dirty = true;
    }

    /// Rewrites the record file with `status` (a failure is logged: the
    /// instance goes on).
    fn rewrite_record(&self, status: &LauncherStatus) {
        if let Err(e) = write_record(&self.record(status.clone())) {
            eprintln!("launcher: cannot write the record file: {e}");
        }
    }

    /// Answers the `reload` requests waiting for this generation.
    fn answer_reloaders(&mut self, status: &LauncherStatus) {
        let Some(artifact) = self.artifact.as_mut() else {
            return;
        };
        if artifact.reloaders.is_empty() {
            return;
        }
        let value = serde_json::to_value(status).unwrap_or_default();
        for (id, peer) in artifact.reloaders.drain(..) {
            peer.reply(id, ClientReply::Ok(value.clone()));
        }
    }

    /// The artifact's file has been quiet for the debounce time since it
    /// changed: start its new version if its bytes differ from the running
    /// one's (an editor's save dance, or a touch, starts nothing new).
    fn on_saved(&mut self) {
        let Some(artifact) = self.artifact.as_mut() else {
            return;
        };
        artifact.reload_due = None;
        if self.closing {
            return;
        }
        let watched_changed = std::mem::take(&mut artifact.watched_changed);
        match crate::artifact::current_digest(&artifact.path) {
            // Gone or unreadable now: its next creation is another event.
            None => {}
            Some(digest) if Some(digest) == artifact.digest && !watched_changed => {}
            Some(_) => self.reload(Instant::now().into_std()),
        }
    }

    /// Ends the running version (the protocol's shutdown: the session
    /// closes, in-flight calls get the end's outcome, stdin closes, SIGTERM,
    /// SIGKILL after the grace) and starts the file's newest one once it is
    /// gone; at once when no version runs (the last one failed).
    fn reload(&mut self, now: std::time::Instant) {
        let Some(artifact) = self.artifact.as_mut() else {
            return;
        };
        artifact.reload_wanted = true;
        if self.ending.is_some() {
            // Started when the running version is gone.
            return;
        }
        if self.exited && self.exit_pending.is_none() {
            self.start_generation(true);
            return;
        }
        match self.session.as_mut() {
            Some(session) if session.phase() != tickloop_proto::core::Phase::Ended => {
                session.close(RELOADED, now);
            }
            _ => self.begin_end(EndInfo {
                reason: RELOADED.to_string(),
                kind: EndClass::Closed,
                offending: None,
                at: now_rfc3339(),
            }),
        }
    }

    /// An artifact's version has ended and its process group is gone: start
    /// the next one if a reload is wanted, else keep its screen and reason
    /// (`failed`) and wait for the next save.
    fn generation_over(&mut self) {
        let Some(ending) = self.ending.take() else {
            return;
        };
        let pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        for Pending { id, peer, asked } in pending {
            let reply = error(ErrorKind::Ended, &ending.info.reason);
            self.record_request(asked, &reply);
            peer.reply(id, reply);
        }
        let reload = self.artifact.as_ref().is_some_and(|a| a.reload_wanted);
        let had_started = self.session.as_ref().is_some_and(|s| s.initialized());
        if reload {
            self.start_generation(true);
        } else if had_started {
            // It ran, then stopped: the same version again, throttled.
            if let Some(artifact) = self.artifact.as_mut() {
                let at = (artifact.started + RESTART_EVERY).max(Instant::now());
                artifact.restart_due = Some(at);
                eprintln!(
                    "launcher: {} generation {} stopped ({}); starting it again",
                    self.spec.instance, artifact.generation, ending.info.reason
                );
            }
            // Listed `starting` until then; calls are refused meanwhile.
            self.updates_before += self.session.as_ref().map_or(0, |s| s.updates_received());
            self.session = None;
            self.dirty = true;
        } else {
            self.generation_failed(ending.info.reason);
        }
    }

    /// This generation did not come up, or stopped: say so in the status,
    /// the record, on its terminal, and to whoever waits (the open, a
    /// `reload`); nothing is restarted until the file is saved again.
    fn generation_failed(&mut self, reason: String) {
        let Some(artifact) = self.artifact.as_mut() else {
            return;
        };
        let generation = artifact.generation;
        artifact.failed = Some(reason.clone());
        let note = format!(
            "\r\n\x1b[7m tickloop: {} generation {generation} failed: {reason}; waiting for the next save of {} \x1b[0m\r\n",
            self.spec.instance,
            artifact.path.display()
        );
        if let Err(e) = write_to_terminal(self.term.tty_name(), note.as_bytes()) {
            eprintln!("launcher: cannot write the failure on the terminal: {e}");
        }
        // An artifact that fails from the start is still opened (Ready): its
        // error is on its screen and in `list`, and a save fixes it.
        self.announce();
    }

    /// Starts the artifact file's newest version on the same terminal, with
    /// a fresh protocol session (its first describe is its initialization):
    /// the next generation, or (`new_version` false) the same one again
    /// after it stopped, counted in `restarts`.
    fn start_generation(&mut self, new_version: bool) {
        let Some(artifact) = self.artifact.as_mut() else {
            return;
        };
        if new_version {
            artifact.generation += 1;
        } else {
            artifact.restarts += 1;
        }
        artifact.restart_due = None;
        artifact.started = Instant::now();
        artifact.failed = None;
        artifact.reload_wanted = false;
        artifact.reload_due = None;
        let version = crate::artifact::read_version(&artifact.path);
        let mut spec = self.spec.clone();
        let spawned = version.and_then(|version| {
            artifact.digest = Some(version.digest);
            spec.program.argv = version.argv;
            spawn(&spec, self.term.tty_name()).map_err(|e| e.to_string())
        });
        // The old version's state and catalog are gone with it; its updates
        // stay counted, so `watch` (which follows the count) goes on.
        self.updates_before += self.session.as_ref().map_or(0, |s| s.updates_received());
        self.snapshot = None;
        self.session = None;
        self.exit_pending = None;
        let Spawned { child, pid, argv } = match spawned {
            Ok(spawned) => spawned,
            Err(reason) => {
                self.exited = true;
                self.generation_failed(reason);
                return;
            }
        };
        let (stdin_tx, stdout_rx, exit_rx) = child_pipes(child);
        self.pid = pid;
        self.argv = argv;
        self.started_at = now_rfc3339();
        self.stdin_tx = stdin_tx;
        self.stdout_rx = stdout_rx;
        self.exit_rx = Some(exit_rx);
        self.exited = false;
        self.session = Some(Session::new(
            spec_limits(&self.spec),
            Instant::now().into_std(),
        ));
        self.dirty = true;
    }

    /// Starts ending the Tick's process group (SIGTERM now, SIGKILL later).
    fn begin_end(&mut self, info: EndInfo) {
        if self.ending.is_some() {
            return;
        }
        // Closing stdin (after what is queued) tells the Tick too.
        self.stdin_tx = None;
        signal_group(self.pid, libc::SIGTERM);
        self.ending = Some(Ending {
            info,
            since: Instant::now(),
            killed_at: None,
        });
    }

    /// Advances the end of the process group; `true` when it is over.
    fn teardown_step(&mut self) -> bool {
        let pid = self.pid;
        let exited = self.exited;
        let Some(ending) = self.ending.as_mut() else {
            return false;
        };
        let now = Instant::now();
        let alive = group_alive(pid);
        if alive && ending.killed_at.is_none() && now >= ending.since + TERM_GRACE {
            signal_group(pid, libc::SIGKILL);
            ending.killed_at = Some(now);
        }
        exited
            && (!alive
                || ending
                    .killed_at
                    .is_some_and(|killed| now >= killed + KILL_WAIT))
    }

    /// The process group is gone: report, publish, record, answer, flush.
    /// The most history lines this instance's screen keeps.
    fn history_limit(&self) -> usize {
        self.spec
            .program
            .history
            .unwrap_or(crate::emulator::DEFAULT_HISTORY)
            .min(crate::emulator::MAX_HISTORY)
    }

    /// Leaves the last screen, with all its history and the Tick's final
    /// output applied, beside the record, for `screen` after the end.
    async fn keep_last_screen(&self) {
        let limit = self.history_limit();
        let Some(text) = self.term.settled_screen(limit).await else {
            return;
        };
        let path = crate::last_screen_path(&self.spec.socket);
        let written = serde_json::to_vec(&screen_reply(text, limit, true))
            .map_err(std::io::Error::other)
            .and_then(|json| crate::record::write_private(&path, &json));
        if let Err(e) = written {
            eprintln!(
                "launcher: cannot keep the last screen in {}: {e}",
                path.display()
            );
        }
    }

    /// Leaves the activity record beside the last screen, for `activity`
    /// after the end.
    fn keep_activity(&self) {
        let path = crate::last_activity_path(&self.spec.socket);
        let record = self
            .activity
            .record(&self.spec.instance, None, self.tools());
        let written = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|json| crate::record::write_private(&path, &json));
        if let Err(e) = written {
            eprintln!(
                "launcher: cannot keep the activity in {}: {e}",
                path.display()
            );
        }
    }

    async fn finish(mut self) -> RunOutcome {
        let Some(ending) = self.ending.take() else {
            return RunOutcome::Failed("internal: finished without an end".into());
        };
        // Answer what the session still holds (it answers at its end; this
        // covers anything left).
        self.drain_actions();
        let pending: Vec<Pending> = self.pending.drain().map(|(_, p)| p).collect();
        for Pending { id, peer, asked } in pending {
            let reply = error(ErrorKind::Ended, &ending.info.reason);
            self.record_request(asked, &reply);
            peer.reply(id, reply);
        }
        let info = ending.info;
        self.keep_last_screen().await;
        // The screen is settled: every recording has all the output.
        self.term.recorder().end(&info.reason);
        if let Some(writer) = self.record_writer.take() {
            let _ = tokio::task::spawn_blocking(move || writer.join()).await;
        }
        self.keep_activity();
        let shell_report = if self.spec.program.shell {
            self.report.take()
        } else {
            None
        };
        let outcome = if let Some(report) = shell_report {
            // A plain program that ended before it was reported up: it did
            // run, so it is reported as ended (status, record and last
            // screen kept), not as a failed open. Nobody can connect now.
            self.ended = Some(info.clone());
            let status = self.publish();
            self.rewrite_record(&status);
            report(&LaunchReport::Ready {
                socket: self.spec.socket.clone(),
                status: Box::new(status),
                catalog: self.catalog_if_any(),
            });
            RunOutcome::Ended(info.clone())
        } else if let Some(report) = self.report.take() {
            // Never came up: a failed open, with what the Tick showed.
            tokio::time::sleep(SCREEN_SETTLE).await;
            let screen = self
                .term
                .screen(0)
                .await
                .map(|s| s.head(256))
                .unwrap_or_default();
            report(&LaunchReport::Failed {
                reason: info.reason.clone(),
                screen,
            });
            RunOutcome::Failed(info.reason.clone())
        } else {
            self.ended = Some(info.clone());
            let status = self.publish();
            self.rewrite_record(&status);
            RunOutcome::Ended(info.clone())
        };
        let ended = serde_json::to_value(&info).unwrap_or_default();
        for (id, peer) in self.closers.drain(..) {
            peer.reply(id, ClientReply::Ok(ended.clone()));
        }
        // Let every connection write what it holds, then close.
        let _ = self.shutdown_tx.send(true);
        self.requests_rx.close();
        while let Ok(incoming) = self.requests_rx.try_recv() {
            incoming
                .peer
                .reply(incoming.id, error(ErrorKind::Ended, &info.reason));
        }
        self.flushed_tx = None;
        let _ = tokio::time::timeout(FLUSH_WAIT, self.flushed_rx.recv()).await;
        let _ = std::fs::remove_file(&self.spec.socket);
        outcome
    }

    /// The program wrote output (or the screen was resized): note the time,
    /// and publish it now if none was published in the last
    /// [`OUTPUT_STATUS_EVERY`], else when that has passed.
    fn on_output(&mut self) {
        self.last_output_at = Some(now_rfc3339());
        if self.output_due.is_some() {
            return;
        }
        let now = Instant::now();
        match self.output_published {
            Some(at) if now < at + OUTPUT_STATUS_EVERY => {
                self.output_due = Some(at + OUTPUT_STATUS_EVERY);
            }
            _ => self.dirty = true,
        }
    }

    fn status(&self) -> LauncherStatus {
        let session = self.session.as_ref();
        LauncherStatus {
            instance: self.spec.instance.clone(),
            launcher_pid: std::process::id(),
            pid: self.pid,
            argv: self.argv.clone(),
            cwd: self.spec.program.cwd.clone(),
            started_at: self.started_at.clone(),
            revision: session
                .and_then(|s| s.descriptor())
                .map(|d| d.revision.clone()),
            state: self.snapshot.clone(),
            updates_total: self.updates_before + session.map_or(0, |s| s.updates_received()),
            calls_in_flight: session.map_or(0, |s| {
                u32::try_from(s.calls_in_flight()).unwrap_or(u32::MAX)
            }),
            views: *self.views_rx.borrow(),
            ended: self.ended.clone(),
            terminal_title: Some(self.title_rx.borrow().clone()).filter(|t| !t.is_empty()),
            last_output_at: self.last_output_at.clone(),
            program: match &self.artifact {
                Some(artifact) => Some(artifact.path.to_string_lossy().into_owned()),
                None => self.spec.program.argv.first().cloned(),
            },
            approve: self
                .spec
                .program
                .approve
                .filter(|p| *p != ApprovalPolicy::Auto),
            generation: self.artifact.as_ref().map(|a| a.generation),
            failed: self.artifact.as_ref().and_then(|a| a.failed.clone()),
            restarts: self.artifact.as_ref().map(|a| a.restarts),
        }
    }

    fn record(&self, status: LauncherStatus) -> LauncherRecord {
        LauncherRecord {
            instance: self.spec.instance.clone(),
            socket: self.spec.socket.clone(),
            launcher_pid: std::process::id(),
            status,
            catalog: self.catalog_if_any().map(|c| *c),
        }
    }

    /// Publishes the status, with the catalog it names (made anew only
    /// when the version or the revision changed), to every connection;
    /// returns the status.
    fn publish(&mut self) -> LauncherStatus {
        let descriptor = self.session.as_ref().and_then(|s| s.descriptor());
        let key = (
            self.artifact.as_ref().map(|a| a.generation),
            descriptor.map(|d| d.revision.clone()),
        );
        if key != self.catalog_key {
            self.catalog = Arc::new(Catalog {
                revision: key.1.clone(),
                descriptor: descriptor.map(|d| d.raw.clone()),
            });
            self.catalog_key = key;
        }
        let status = self.status();
        self.status_tx.send_replace(crate::published::Published {
            status: status.clone(),
            catalog: self.catalog.clone(),
        });
        status
    }

    /// The published catalog, when the Tick has described one.
    fn catalog_if_any(&self) -> Option<Box<Catalog>> {
        self.catalog
            .descriptor
            .is_some()
            .then(|| Box::new((*self.catalog).clone()))
    }
}

/// Output alone republishes the status at most this often.
const OUTPUT_STATUS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The reason of a session the user closed.
const CLOSED_BY_USER: &str = "closed by the user";

fn end_info(reason: &EndReason) -> EndInfo {
    let message = match reason.kind {
        EndKind::Closed => CLOSED_BY_USER.to_string(),
        _ => reason.message.clone(),
    };
    EndInfo {
        reason: message,
        kind: EndClass::from(&reason.kind),
        offending: reason.offending.clone(),
        at: now_rfc3339(),
    }
}

async fn recv_artifact(artifact: &mut Option<Artifact>) -> Option<crate::artifact::Change> {
    match artifact {
        Some(artifact) => artifact.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Writes `bytes` on the terminal's slave side, as a program would: the
/// views and the screen show it.
fn write_to_terminal(tty: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
        .open(tty)?
        .write_all(bytes)
}

async fn recv_stdout(rx: &mut Option<mpsc::Receiver<StdoutEvent>>) -> Option<StdoutEvent> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn recv_exit(
    rx: &mut Option<oneshot::Receiver<std::process::ExitStatus>>,
) -> Option<std::process::ExitStatus> {
    match rx {
        Some(rx) => rx.await.ok(),
        None => std::future::pending().await,
    }
}

/// The protocol limits of this session: the defaults, with the
/// initialization time limit tickhost passed in the spec.
fn spec_limits(spec: &LaunchSpec) -> Limits {
    let mut limits = Limits::default();
    if let Some(ms) = spec.init_timeout_ms {
        limits.init_request_timeout = std::time::Duration::from_millis(ms);
        limits.init_total_timeout = std::time::Duration::from_millis(ms);
    }
    limits
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
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

/// The wire form of a screen read from the emulator.
fn screen_reply(text: ScreenText, history_limit: usize, ended: bool) -> ScreenReply {
    ScreenReply {
        rows: text.rows,
        cols: text.cols,
        cursor: ScreenCursor {
            row: text.cursor_row,
            col: text.cursor_col,
        },
        lines: text.lines,
        history: text.history,
        history_len: text.history_len,
        history_limit,
        memory_bytes: text.cell_bytes,
        ended,
    }
}

/// A request waiting for the Tick's answer.
struct Pending {
    id: u64,
    peer: Peer,
    asked: Asked,
}

/// What the activity record needs of a request, noted when it came in.
struct Asked {
    client: Option<ClientKind>,
    method: &'static str,
    tool: Option<String>,
    args: Option<serde_json::Value>,
    revision: Option<String>,
    at: String,
    since: Instant,
}

impl Asked {
    fn new(client: Option<ClientKind>, method: &'static str) -> Asked {
        Asked {
            client,
            method,
            tool: None,
            args: None,
            revision: None,
            at: now_rfc3339_millis(),
            since: Instant::now(),
        }
    }

    fn of(client: Option<ClientKind>, request: &SessionRequest) -> Asked {
        match request {
            SessionRequest::Describe => Asked::new(client, "tick/describe"),
            SessionRequest::Read => Asked::new(client, "tick/read"),
            SessionRequest::Call(call) => Asked {
                tool: Some(call.tool.clone()),
                args: Some(kept(&call.args)),
                revision: Some(call.revision.clone()),
                ..Asked::new(client, "tick/call")
            },
        }
    }
}
