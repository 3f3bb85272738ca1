//! Connecting to tickhost (starting it when absent) and exchanging requests.
//!
//! Blocking, over a std `UnixStream`: [`Client::connect`] exchanges hello
//! (a daemon of another build is refused with a clear error),
//! [`Client::connect_or_start`] first starts `<exe> __tickhost` detached and
//! waits for its `ready` line when nobody answers. [`Client::request`] sends
//! one request and returns its reply; [`Client::watch`] starts a watch whose
//! events are read with [`Client::next_watch_item`] until the daemon's final
//! reply (every watched instance ended) or an error.
//!
//! [`Client::connect_remote`] reaches the tickhost of another machine over
//! ssh ([`crate::ssh`]): the stream is then one end of a socket pair
//! whose other end is ssh's stdio, and everything else is the same code.

use crate::framing::read_text_line_blocking;
use crate::paths::RuntimeDir;
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tickloop_proto::wire::{
    ClientKind, ClientReply, ClientRequest, Envelope, ErrorKind, HeldCall, Hello, HelloReply,
    ServerMessage, WatchEvent, MAX_CLIENT_LINE,
};

/// How long [`Client::connect_or_start`] waits for a new tickhost.
pub const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long tickhost may take to answer hello (a stopped or wedged tickhost
/// must not hang every client).
pub const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one request may wait for its reply: tickhost bounds each of its
/// own waits on a launcher, and answers any request but a call well within
/// this, so it is only reached when tickhost itself is stopped or wedged.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(90);
/// How long a `call` may wait for its next line from tickhost: longer than
/// tickhost's worst case for one (a held call's approval confirmed, the
/// call's 75 s, then its status and catalog: 135 s after the last progress
/// line; `tickhost::daemon::conn::call_worst_case`), so that running out
/// means tickhost is stopped, never a slow launcher.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(150);

/// The longest line read from tickhost: above the 64 MiB a launcher's line
/// may have in tickhost, which relays a launcher's reply whole.
const MAX_SERVER_LINE: usize = 128 * 1024 * 1024;

/// The tickhost of `runtime_dir` that runs, when one does: the pid its pid
/// file names, else one found by its process.
pub fn running_tickhost(runtime_dir: &Path) -> Option<u32> {
    use crate::runtime_procs::{find, plays, Role};
    let recorded = std::fs::read_to_string(RuntimeDir::at(runtime_dir).pid_file())
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .filter(|&pid| plays(pid, runtime_dir, Role::Tickhost));
    recorded.or_else(|| find(runtime_dir, Role::Tickhost).first().copied())
}

/// `TICKLOOP_CLIENT_TIMEOUT_MS`, when set, replaces both bounds (tests of a
/// stopped tickhost take milliseconds).
fn bound(default: Duration) -> Duration {
    std::env::var("TICKLOOP_CLIENT_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(default)
}

/// Why talking to tickhost failed.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("tickhost is not running (no answer on {socket}: {source})")]
    NotRunning {
        socket: PathBuf,
        source: std::io::Error,
    },
    #[error("tickhost refused this client: {0}")]
    Refused(String),
    #[error("cannot start tickhost: {0}")]
    StartFailed(String),
    #[error("lost the connection to tickhost: {0}")]
    Io(#[from] std::io::Error),
    #[error("tickhost sent something unreadable: {0}")]
    Protocol(String),
    #[error("tickhost did not answer within {:.1} s (is it stopped? `kill -CONT` it, or kill it and retry)", .0.as_secs_f64())]
    Timeout(Duration),
    #[error(transparent)]
    Paths(#[from] crate::paths::PathsError),
    #[error(transparent)]
    Remote(#[from] crate::ssh::RemoteError),
    #[error("{0}")]
    TooLong(TooLong),
}

/// A request whose line is longer than tickhost reads
/// ([`MAX_CLIENT_LINE`]): refused here, nothing sent.
#[derive(Debug)]
pub struct TooLong {
    /// The line's length.
    pub bytes: usize,
    /// What to do instead, for this request.
    pub advice: &'static str,
}

impl std::fmt::Display for TooLong {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the request is {} bytes as one line, over the {MAX_CLIENT_LINE} bytes (8 MiB) tickhost reads; nothing was sent: {}",
            self.bytes, self.advice
        )
    }
}

impl TooLong {
    /// The refusal a request too long to send is answered with, as
    /// tickhost answers a bad request.
    pub fn refusal(&self) -> tickloop_proto::wire::ClientError {
        tickloop_proto::wire::ClientError {
            kind: ErrorKind::BadRequest,
            message: self.to_string(),
            data: Some(serde_json::json!({
                "bytes": self.bytes,
                "limit_bytes": MAX_CLIENT_LINE,
                "sent": false,
            })),
        }
    }
}

/// What to do instead of sending `request` whole, when it is too long.
fn too_long_advice(request: &ClientRequest) -> &'static str {
    match request {
        ClientRequest::Input { .. } | ClientRequest::Keys { .. } => {
            "type the text in pieces of less than 8 MiB, one `input` each"
        }
        ClientRequest::Run { .. } => {
            "write the command to a file and run that file (`run -- sh FILE`)"
        }
        ClientRequest::Call { .. } => {
            "pass the Tick smaller arguments (a file's path rather than its contents)"
        }
        ClientRequest::Open(_) => "open it with a smaller environment or fewer, shorter arguments",
        _ => "send less in one request",
    }
}

impl ClientError {
    /// Whether tickhost is simply not running (here, or on the far side of
    /// ssh).
    pub fn is_not_running(&self) -> bool {
        match self {
            ClientError::NotRunning { .. } => true,
            ClientError::Remote(crate::ssh::RemoteError::Relay { message, .. }) => {
                message.starts_with(crate::ssh::NOT_RUNNING)
            }
            _ => false,
        }
    }
}

/// One item of a watch stream.
#[derive(Debug, Clone, PartialEq)]
pub enum WatchItem {
    /// A delivery or an `ended` line.
    Event(WatchEvent),
    /// The stream is over: `Ok` when every watched instance ended, or an
    /// error (unknown instance, ...).
    Done(ClientReply),
}

/// A connection to tickhost.
pub struct Client {
    reader: BufReader<UnixStream>,
    /// Shared with its [`Withdrawer`]s: one line at a time.
    writer: Arc<Mutex<UnixStream>>,
    ids: Arc<Ids>,
    watch_id: u64,
    /// The wire version tickhost said at hello.
    server_version: String,
    /// The ssh process when tickhost is on another machine (dropped after
    /// the stream, so ssh sees its stdin close first).
    link: Option<crate::ssh::SshLink>,
    /// What the relay said about the far side (remote connections only).
    greeting: Option<crate::ssh::Greeting>,
}

impl Client {
    /// Connects to the tickhost of `runtime_dir` and exchanges hello, in
    /// which `kind` says what kind of client this is (the CLI, the MCP
    /// bridge, the Loop, ...): the activity record of each instance shows
    /// who asked.
    pub fn connect(runtime_dir: &Path, kind: ClientKind) -> Result<Client, ClientError> {
        let socket = RuntimeDir::at(runtime_dir).socket();
        let stream = UnixStream::connect(&socket).map_err(|source| ClientError::NotRunning {
            socket: socket.clone(),
            source,
        })?;
        Client::handshake(stream, kind, None, None, socket)
    }

    /// Connects to the tickhost of the user on `host` over ssh (starting it
    /// there when needed) and exchanges hello through the relay.
    /// `want_env`: also learn the remote environment ([`Client::greeting`]).
    pub fn connect_remote(
        host: &crate::ssh::SshHost,
        want_env: bool,
        kind: ClientKind,
    ) -> Result<Client, ClientError> {
        let (stream, greeting, link) =
            crate::ssh::dial(host, &crate::ssh::RelayTo::Tickhost, want_env)?;
        let label = PathBuf::from(format!("ssh {host}"));
        Client::handshake(stream, kind, Some(link), Some(greeting), label).map_err(|e| match e {
            // Through a relay that greeted, "not running" is a lost link.
            ClientError::NotRunning { source, .. } => ClientError::Io(source),
            other => other,
        })
    }

    /// [`Client::connect_remote`], but only to a tickhost that runs there
    /// (else [`ClientError::is_not_running`]).
    pub fn connect_remote_no_start(
        host: &crate::ssh::SshHost,
        kind: ClientKind,
    ) -> Result<Client, ClientError> {
        let (stream, greeting, link) =
            crate::ssh::dial(host, &crate::ssh::RelayTo::RunningTickhost, false)?;
        let label = PathBuf::from(format!("ssh {host}"));
        Client::handshake(stream, kind, Some(link), Some(greeting), label).map_err(|e| match e {
            ClientError::NotRunning { source, .. } => ClientError::Io(source),
            other => other,
        })
    }

    /// The far side's greeting when connected over ssh.
    pub fn greeting(&self) -> Option<&crate::ssh::Greeting> {
        self.greeting.as_ref()
    }

    /// The ssh process id when connected over ssh.
    pub fn ssh_pid(&self) -> Option<u32> {
        self.link.as_ref().map(crate::ssh::SshLink::pid)
    }

    /// Exchanges hello on a fresh `stream`, as a client of `kind`.
    fn handshake(
        stream: UnixStream,
        kind: ClientKind,
        link: Option<crate::ssh::SshLink>,
        greeting: Option<crate::ssh::Greeting>,
        socket: PathBuf,
    ) -> Result<Client, ClientError> {
        let writer = Arc::new(Mutex::new(stream.try_clone()?));
        let mut client = Client {
            reader: BufReader::new(stream),
            writer,
            ids: Arc::new(Ids {
                next: AtomicU64::new(1),
                in_flight: AtomicU64::new(0),
            }),
            watch_id: 0,
            server_version: String::new(),
            link,
            greeting,
        };
        // A daemon that dies while this connects (killed, or exiting after
        // `shutdown`) resets the connection or closes it during hello: that
        // is "not running", so `connect_or_start` starts a new one.
        let hello_timeout = bound(HELLO_TIMEOUT);
        client
            .reader
            .get_ref()
            .set_read_timeout(Some(hello_timeout))?;
        let handshake = client
            .send_line(&Hello::client(kind))
            .and_then(|()| client.read_line());
        client.reader.get_ref().set_read_timeout(None)?;
        let line = match handshake {
            Ok(line) => line,
            Err(ClientError::Io(source)) if is_timeout(&source) => {
                return Err(ClientError::Timeout(hello_timeout))
            }
            Err(ClientError::Io(source)) => return Err(ClientError::NotRunning { socket, source }),
            Err(other) => return Err(other),
        };
        let answer: HelloReply = serde_json::from_str(&line)
            .map_err(|e| ClientError::Protocol(format!("hello answer: {e}")))?;
        if let Some(refused) = answer.refused {
            return Err(ClientError::Refused(refused));
        }
        client.server_version = answer.version;
        Ok(client)
    }

    /// The wire version tickhost answered at hello (`tickloop doctor`).
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    /// Connects as a client of `kind`, starting `<exe> __tickhost` first
    /// when nobody answers. Several clients starting it at once all end up
    /// connected to the one daemon that won the start.
    pub fn connect_or_start(
        runtime_dir: &Path,
        exe: &Path,
        kind: ClientKind,
    ) -> Result<Client, ClientError> {
        match Client::connect_reviving(runtime_dir, kind) {
            Err(ClientError::NotRunning { .. }) => {}
            other => return other,
        }
        let dir = RuntimeDir::ensure(runtime_dir)?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.log_file())
            .map_err(|e| {
                ClientError::StartFailed(format!("cannot open {}: {e}", dir.log_file().display()))
            })?;
        let mut command = Command::new(exe);
        command
            .arg("__tickhost")
            .env("TICKLOOP_RUNTIME_DIR", dir.root())
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        // SAFETY: the closure is async-signal-safe (see its note).
        unsafe {
            command.pre_exec(crate::runtime_procs::detach_before_exec);
        }
        let mut child = command.spawn().map_err(|e| {
            ClientError::StartFailed(format!("cannot run {} __tickhost: {e}", exe.display()))
        })?;
        let deadline = Instant::now() + START_TIMEOUT;
        // Its readiness line, read on a thread so the wait is bounded.
        let (tx, rx) = std::sync::mpsc::channel();
        if let Some(stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                let line = read_text_line_blocking(&mut BufReader::new(stdout), 1024);
                let _ = tx.send(line.ok().flatten().unwrap_or_default());
            });
        }
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_default();
        if line.trim() != "ready" {
            // It lost a race with another tickhost starting (or failed): reap
            // it if it exited, and look for the winner until the deadline.
            let _ = child.try_wait();
        }
        loop {
            let last = match Client::connect(runtime_dir, kind) {
                Ok(client) => return Ok(client),
                Err(ClientError::NotRunning { source, .. }) => source,
                Err(other) => return Err(other),
            };
            if let Ok(Some(status)) = child.try_wait() {
                if line.trim() != "ready" && !dir.socket().exists() {
                    return Err(ClientError::StartFailed(format!(
                        "tickhost exited ({status}) before it was ready; see {}",
                        dir.log_file().display()
                    )));
                }
            }
            if Instant::now() >= deadline {
                return Err(ClientError::StartFailed(format!(
                    "tickhost did not answer within {} s ({}); see {}",
                    START_TIMEOUT.as_secs(),
                    last,
                    dir.log_file().display()
                )));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// [`Client::connect`]; when nobody answers on the socket but a
    /// tickhost of `runtime_dir` runs (its socket or its whole directory
    /// was removed), that tickhost is asked to make its files again
    /// (`SIGUSR1`) and connected to once it has: a second tickhost is
    /// never started beside it. [`ClientError::NotRunning`] only when no
    /// tickhost of the directory runs.
    pub fn connect_reviving(runtime_dir: &Path, kind: ClientKind) -> Result<Client, ClientError> {
        let not_running = match Client::connect(runtime_dir, kind) {
            Err(e @ ClientError::NotRunning { .. }) => e,
            other => return other,
        };
        let Some(pid) = running_tickhost(runtime_dir) else {
            return Err(not_running);
        };
        crate::runtime_procs::signal(pid, libc::SIGUSR1);
        let deadline = Instant::now() + bound(START_TIMEOUT);
        loop {
            match Client::connect(runtime_dir, kind) {
                Err(ClientError::NotRunning { .. }) => {}
                other => return other,
            }
            if !crate::runtime_procs::alive(pid) {
                // It was on its way out: a new one may start.
                return Err(not_running);
            }
            if Instant::now() >= deadline {
                return Err(ClientError::StartFailed(format!(
                    "tickhost (pid {pid}) runs but did not make its socket {} again within {} s (is it stopped? `kill -CONT {pid}`, or `kill {pid}` and retry)",
                    RuntimeDir::at(runtime_dir).socket().display(),
                    bound(START_TIMEOUT).as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn send_line<T: serde::Serialize>(&mut self, value: &T) -> Result<(), ClientError> {
        write_line_to(&self.writer, value)
    }

    fn read_line(&mut self) -> Result<String, ClientError> {
        match read_text_line_blocking(&mut self.reader, MAX_SERVER_LINE) {
            Ok(Some(line)) => Ok(line),
            Ok(None) => Err(ClientError::Io(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "tickhost closed the connection",
            ))),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                Err(ClientError::Protocol(format!("tickhost sent {e}")))
            }
            Err(e) => Err(ClientError::Io(e)),
        }
    }

    fn read_message(&mut self) -> Result<ServerMessage, ClientError> {
        let line = self.read_line()?;
        serde_json::from_str(&line).map_err(|e| ClientError::Protocol(format!("{e}: {line:.200}")))
    }

    /// Sends `request` as one line; nothing is sent when the line would
    /// be longer than tickhost reads ([`TooLong`]).
    fn send(&mut self, request: ClientRequest) -> Result<u64, ClientError> {
        let id = self.ids.next.fetch_add(1, Ordering::Relaxed);
        let advice = too_long_advice(&request);
        let mut line = serde_json::to_vec(&Envelope::new(id, request))
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        if line.len() > MAX_CLIENT_LINE {
            return Err(ClientError::TooLong(TooLong {
                bytes: line.len(),
                advice,
            }));
        }
        line.push(b'\n');
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        writer.write_all(&line)?;
        writer.flush()?;
        // Under the same lock: a withdrawal never names a request before
        // its line is out.
        self.ids.in_flight.store(id, Ordering::SeqCst);
        Ok(id)
    }

    /// A handle that ends this connection from another thread
    /// (`shutdown`): a request blocked on it, or a wait in
    /// [`Client::next_watch_item`], returns with an error, and tickhost
    /// sees its client go (a cancelled `wait` ends there).
    pub fn hangup_handle(&self) -> std::io::Result<UnixStream> {
        self.writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .try_clone()
    }

    /// A handle that withdraws this connection's request in flight while
    /// tickhost holds it for approval, from another thread, keeping the
    /// connection (an MCP bridge does it on `notifications/cancelled`).
    pub fn withdrawer(&self) -> Withdrawer {
        Withdrawer {
            writer: self.writer.clone(),
            ids: self.ids.clone(),
        }
    }

    /// Sends `request` and waits for its reply, at most
    /// [`REQUEST_TIMEOUT`].
    pub fn request(&mut self, request: ClientRequest) -> Result<ClientReply, ClientError> {
        self.request_with_progress(request, |_| {})
    }

    /// [`Client::request`], telling `on_progress` each time tickhost says
    /// the call waits for a person's approval (at first, then every 30 s,
    /// each of which also restarts the wait for the reply).
    pub fn request_with_progress(
        &mut self,
        request: ClientRequest,
        on_progress: impl FnMut(&HeldCall),
    ) -> Result<ClientReply, ClientError> {
        self.request_waiting(request, Duration::ZERO, on_progress)
    }

    /// [`Client::request_with_progress`] for a request that tickhost
    /// answers only after `wait` (a `wait`, a `run`): the reply is waited
    /// for that much longer.
    pub fn request_waiting(
        &mut self,
        request: ClientRequest,
        wait: Duration,
        mut on_progress: impl FnMut(&HeldCall),
    ) -> Result<ClientReply, ClientError> {
        let timeout = bound(match request {
            ClientRequest::Call { .. } => CALL_TIMEOUT,
            _ => REQUEST_TIMEOUT,
        })
        .saturating_add(wait);
        let id = match self.send(request) {
            Err(ClientError::TooLong(too_long)) => {
                return Ok(ClientReply::Error(too_long.refusal()))
            }
            sent => sent?,
        };
        self.reader.get_ref().set_read_timeout(Some(timeout))?;
        let reply = self.reply_to(id, timeout, &mut on_progress);
        self.ids.in_flight.store(0, Ordering::SeqCst);
        self.reader.get_ref().set_read_timeout(None)?;
        reply
    }

    /// Reads until the reply to request `id`, telling `on_progress` of
    /// each progress line on the way.
    fn reply_to(
        &mut self,
        id: u64,
        timeout: Duration,
        on_progress: &mut impl FnMut(&HeldCall),
    ) -> Result<ClientReply, ClientError> {
        loop {
            match self.read_message() {
                Ok(ServerMessage::Reply { id: got, reply }) if got == id => return Ok(reply),
                Ok(ServerMessage::Progress { id: got, held }) if got == id => {
                    on_progress(&held);
                    continue;
                }
                // Replies to something else (a withdrawal's) and stray
                // events are skipped.
                Ok(_) => continue,
                Err(ClientError::Io(e)) if is_timeout(&e) => {
                    break Err(ClientError::Timeout(timeout))
                }
                Err(e) => break Err(e),
            }
        }
    }

    /// Starts watching `instances`; read with [`Client::next_watch_item`].
    /// The connection serves nothing else afterwards.
    pub fn watch(&mut self, instances: Vec<String>, interval_ms: u64) -> Result<(), ClientError> {
        self.watch_id = self.send(ClientRequest::Watch {
            instances,
            interval_ms,
        })?;
        Ok(())
    }

    /// The next item of the watch started by [`Client::watch`].
    pub fn next_watch_item(&mut self) -> Result<WatchItem, ClientError> {
        loop {
            match self.read_message()? {
                ServerMessage::Event { event, .. } => return Ok(WatchItem::Event(event)),
                ServerMessage::Reply { id, reply } if id == self.watch_id => {
                    return Ok(WatchItem::Done(reply))
                }
                ServerMessage::Reply { .. } | ServerMessage::Progress { .. } => continue,
            }
        }
    }
}

/// The ids of a connection's requests: the next one, and the one waiting
/// for its reply (0: none).
struct Ids {
    next: AtomicU64,
    in_flight: AtomicU64,
}

/// Withdraws the request in flight on its [`Client`] (made with
/// [`Client::withdrawer`]) while tickhost holds it for a person's approval.
/// The held request is then answered as refused (`approval: "withdrawn"`),
/// on the client's own read, and never runs; the connection stays.
#[derive(Clone)]
pub struct Withdrawer {
    writer: Arc<Mutex<UnixStream>>,
    ids: Arc<Ids>,
}

impl Withdrawer {
    /// Sends `withdraw` for the request in flight now, with `reason` for
    /// the approval log and the activity record; `false` when none is in
    /// flight. A request not held (it went on, or was answered) is not
    /// touched: tickhost answers the `withdraw` itself with `bad_request`,
    /// which the client's read skips.
    pub fn withdraw(&self, reason: Option<&str>) -> Result<bool, ClientError> {
        let mut writer = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let request = self.ids.in_flight.load(Ordering::SeqCst);
        if request == 0 {
            return Ok(false);
        }
        let id = self.ids.next.fetch_add(1, Ordering::Relaxed);
        let withdraw = ClientRequest::Withdraw {
            request,
            reason: reason.map(str::to_string),
        };
        write_line_on(&mut writer, &Envelope::new(id, withdraw))?;
        Ok(true)
    }
}

/// Writes `value` as one line on the shared `writer`.
fn write_line_to<T: serde::Serialize>(
    writer: &Mutex<UnixStream>,
    value: &T,
) -> Result<(), ClientError> {
    let mut writer = writer.lock().unwrap_or_else(|e| e.into_inner());
    write_line_on(&mut writer, value)
}

fn write_line_on<T: serde::Serialize>(
    writer: &mut UnixStream,
    value: &T,
) -> Result<(), ClientError> {
    let mut line = serde_json::to_vec(value).map_err(|e| ClientError::Protocol(e.to_string()))?;
    line.push(b'\n');
    writer.write_all(&line)?;
    writer.flush()?;
    Ok(())
}

/// Whether a read failed by its timeout.
fn is_timeout(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

/// The caller's environment, which a Tick opened on its behalf inherits
/// (spec-gaps 4.1); names and values that are not UTF-8 are converted lossily.
pub fn caller_env() -> Vec<(String, String)> {
    std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect()
}

/// The history lines of a `screen` reply (oldest first), trailing blanks
/// trimmed; empty when none were asked for.
pub fn screen_history(reply: &serde_json::Value) -> Vec<String> {
    reply
        .get("history")
        .and_then(serde_json::Value::as_array)
        .map(|lines| {
            lines
                .iter()
                .map(|l| l.as_str().unwrap_or("").trim_end().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The rows of a `screen` reply (`{"lines": [...]}`, or plain text), trailing
/// blanks trimmed and trailing empty rows dropped.
pub fn screen_rows(reply: &serde_json::Value) -> Vec<String> {
    let mut rows: Vec<String> = match reply.get("lines").and_then(serde_json::Value::as_array) {
        Some(lines) => lines
            .iter()
            .map(|l| l.as_str().unwrap_or("").trim_end().to_string())
            .collect(),
        None => reply
            .as_str()
            .unwrap_or("")
            .lines()
            .map(|l| l.trim_end().to_string())
            .collect(),
    };
    while rows.last().is_some_and(|l| l.is_empty()) {
        rows.pop();
    }
    rows
}

/// Where a front end's tickhost is: this machine's (started when absent) or
/// another machine's over ssh (started there by the relay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Machine {
    Local { runtime: PathBuf, exe: PathBuf },
    Remote(crate::ssh::SshHost),
}

/// A front end's tickhost ([`Machine`]) and what kind of client the front
/// end is (every hello on a connection names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub machine: Machine,
    pub kind: ClientKind,
}

impl Endpoint {
    /// The tickhost of `runtime` on this machine, started with `exe` when
    /// absent.
    pub fn local(runtime: PathBuf, exe: PathBuf, kind: ClientKind) -> Endpoint {
        Endpoint {
            machine: Machine::Local { runtime, exe },
            kind,
        }
    }

    /// The tickhost of `host`'s user, over ssh.
    pub fn remote(host: crate::ssh::SshHost, kind: ClientKind) -> Endpoint {
        Endpoint {
            machine: Machine::Remote(host),
            kind,
        }
    }

    /// A connection to that tickhost, starting it when needed.
    pub fn connect(&self) -> Result<Client, ClientError> {
        match &self.machine {
            Machine::Local { runtime, exe } => Client::connect_or_start(runtime, exe, self.kind),
            Machine::Remote(host) => Client::connect_remote(host, false, self.kind),
        }
    }

    /// A connection to that tickhost only when it runs (views reconnect
    /// with this; they never start one).
    pub fn connect_running(&self) -> Result<Client, ClientError> {
        match &self.machine {
            Machine::Local { runtime, .. } => Client::connect(runtime, self.kind),
            Machine::Remote(host) => Client::connect_remote_no_start(host, self.kind),
        }
    }

    /// The tickhost of `runtime` here, or of `ssh`'s machine; `exe` is this
    /// executable (to start tickhost here).
    pub fn of(runtime: &Path, ssh: Option<&crate::ssh::SshHost>, kind: ClientKind) -> Endpoint {
        match ssh {
            Some(host) => Endpoint::remote(host.clone(), kind),
            None => Endpoint::local(
                runtime.to_path_buf(),
                std::env::current_exe().unwrap_or_else(|_| PathBuf::from("tickloop")),
                kind,
            ),
        }
    }

    /// The remote host, if any.
    pub fn host(&self) -> Option<&crate::ssh::SshHost> {
        match &self.machine {
            Machine::Local { .. } => None,
            Machine::Remote(host) => Some(host),
        }
    }
}
