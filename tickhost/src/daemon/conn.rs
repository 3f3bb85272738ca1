//! tickhost's one persistent connection to each launcher: requests matched to
//! replies by id, the newest status kept, and the end noticed when the
//! launcher goes away. Requests are written by the connection's one writer
//! task ([`Outbox`]): a request that times out stops waiting for its
//! answer, never its line halfway (a cut line would glue the next request
//! to it, and the launcher would drop the connection); one that timed out
//! before its line was started is not sent at all.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tickloop_client::framing::{write_line, Line, LineReader};
use tickloop_client::outbox::Outbox;
use tickloop_proto::wire::{
    CallOutcome, Catalog, ClientError, ClientKind, ClientReply, Envelope, ErrorKind, Hello,
    HelloReply, LauncherMessage, LauncherRequest, LauncherStatus, Role,
};
use tokio::net::unix::OwnedReadHalf;
use tokio::net::UnixStream;
use tokio::sync::oneshot;

/// The longest line tickhost accepts from a launcher (a status carries a
/// descriptor and a state, each bounded by the core's limits).
const MAX_LAUNCHER_LINE: usize = 64 * 1024 * 1024;

/// Bytes of requests queued for a launcher at most (more wait for room,
/// within their time limit); above the 8 MiB a client's line may carry.
const LAUNCHER_QUEUE: usize = 16 * 1024 * 1024;

/// How long a launcher has to answer hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(5);

/// How long tickhost waits for a launcher's answer to `request`. A call
/// gets the protocol's 60 s (the launcher's own timer answers "unknown"
/// then) and a margin; a close, the 2 s SIGTERM-to-SIGKILL and a margin;
/// anything else 10 s. `TICKLOOP_LAUNCHER_TIMEOUT_MS`, read once at start,
/// replaces the 10 s (and scales the others), for tests.
pub fn answer_limit(request: &LauncherRequest) -> Duration {
    static BASE: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    let base = *BASE.get_or_init(|| {
        std::env::var("TICKLOOP_LAUNCHER_TIMEOUT_MS")
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(Duration::from_secs(10), Duration::from_millis)
    });
    match request {
        LauncherRequest::Call { .. } => base * 15 / 2,
        LauncherRequest::Close => base * 3 / 2,
        // The old version's end (its grace) and the new one's initialization.
        LauncherRequest::Reload => base * 3,
        _ => base,
    }
}

/// The longest tickhost may take to answer a client's `call` after its
/// previous line to that client (its hello reply, or a held call's latest
/// progress, sent every 30 s): a held call's approval is confirmed by a
/// describe, then the call itself, then the status and catalog it may
/// have changed are asked for. The client waits longer than this
/// (`tickloop_client::CALL_TIMEOUT`), so its own bound only runs out when
/// tickhost itself is stopped or wedged.
pub fn call_worst_case() -> Duration {
    let describe = answer_limit(&LauncherRequest::Describe);
    let call = answer_limit(&LauncherRequest::Call(tickloop_proto::wire::CallRequest {
        tool: String::new(),
        args: serde_json::Value::Null,
        revision: String::new(),
    }));
    let status = answer_limit(&LauncherRequest::Status);
    let before = super::approval::PROGRESS_EVERY.max(describe);
    before + describe + call + status + describe
}

/// What a launcher sends right after hello: its catalog, then its status.
#[derive(Debug, Default)]
pub struct FirstStatus {
    pub status: Option<LauncherStatus>,
    pub catalog: Option<Catalog>,
}

/// A connection to one launcher, as role `host`.
pub struct LauncherConn {
    out: Outbox,
    /// The launcher process at the other end, as it was when connected
    /// (its peer credentials).
    pub launcher: Option<super::process::Known>,
    pending: Mutex<Pending>,
    pub launcher_pid: u32,
}

struct Pending {
    /// Set once the connection is gone: requests fail at once.
    lost: Option<String>,
    next_id: u64,
    waiting: HashMap<u64, Waiter>,
}

struct Waiter {
    is_call: bool,
    reply: oneshot::Sender<ClientReply>,
}

/// Why connecting to a launcher failed.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot connect to {path}: {source}")]
    Connect {
        path: String,
        source: std::io::Error,
    },
    #[error("the launcher did not answer hello: {0}")]
    Hello(String),
    #[error("the launcher refused: {0}")]
    Refused(String),
}

impl LauncherConn {
    /// Connects to the launcher at `socket` and exchanges hello.
    pub async fn connect(
        socket: &Path,
        launcher_pid: u32,
    ) -> Result<(Arc<Self>, LineReader<OwnedReadHalf>), ConnectError> {
        let stream = UnixStream::connect(socket)
            .await
            .map_err(|source| ConnectError::Connect {
                path: socket.display().to_string(),
                source,
            })?;
        let launcher = stream
            .peer_cred()
            .ok()
            .and_then(|cred| cred.pid())
            .and_then(|pid| u32::try_from(pid).ok())
            .and_then(super::process::Known::now);
        let (read, mut write) = stream.into_split();
        let mut reader = LineReader::new(read, MAX_LAUNCHER_LINE);
        write_line(&mut write, &Hello::new(Role::Host))
            .await
            .map_err(|e| ConnectError::Hello(e.to_string()))?;
        let line = tokio::time::timeout(HELLO_TIMEOUT, reader.next())
            .await
            .map_err(|_| ConnectError::Hello("no answer within 5 s".into()))?
            .map_err(|e| ConnectError::Hello(e.to_string()))?;
        let reply: HelloReply = match line {
            Some(Line::Text(text)) => serde_json::from_str(&text)
                .map_err(|e| ConnectError::Hello(format!("unreadable answer: {e}")))?,
            Some(_) => return Err(ConnectError::Hello("unreadable answer".into())),
            None => return Err(ConnectError::Hello("it closed the connection".into())),
        };
        if let Some(refused) = reply.refused {
            return Err(ConnectError::Refused(refused));
        }
        let conn = Arc::new(LauncherConn {
            out: Outbox::spawn(write, LAUNCHER_QUEUE),
            launcher,
            pending: Mutex::new(Pending {
                lost: None,
                next_id: 1,
                waiting: HashMap::new(),
            }),
            launcher_pid,
        });
        Ok((conn, reader))
    }

    /// Waits (briefly) for the catalog and status a launcher sends right
    /// after hello, so a found-again instance shows its current state at
    /// once.
    pub async fn first_status(reader: &mut LineReader<OwnedReadHalf>) -> FirstStatus {
        let mut first = FirstStatus::default();
        let wait = async {
            loop {
                match reader.next().await {
                    Ok(Some(Line::Text(text))) => match serde_json::from_str(&text) {
                        Ok(LauncherMessage::Status(status)) => {
                            first.status = Some(*status);
                            return;
                        }
                        Ok(LauncherMessage::Catalog(catalog)) => first.catalog = Some(*catalog),
                        _ => continue,
                    },
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => return,
                }
            }
        };
        let _ = tokio::time::timeout(HELLO_TIMEOUT, wait).await;
        first
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `request` and waits for its reply, at most [`answer_limit`].
    /// When the launcher goes away first: a call is an unknown outcome,
    /// anything else an `Ended` error. When it does not answer in time: a
    /// call is an unknown outcome, anything else `Unresponsive`.
    pub async fn request(&self, request: LauncherRequest) -> ClientReply {
        self.request_for(request, None).await
    }

    /// [`LauncherConn::request`] on behalf of a `client`, whom the launcher's
    /// activity record names.
    pub async fn request_for(
        &self,
        request: LauncherRequest,
        client: Option<ClientKind>,
    ) -> ClientReply {
        let is_call = matches!(request, LauncherRequest::Call { .. });
        let limit = answer_limit(&request);
        let (id_cell, waited) = (std::sync::OnceLock::new(), std::time::Instant::now());
        let answered =
            tokio::time::timeout(limit, self.request_unbounded(request, client, &id_cell)).await;
        match answered {
            Ok(reply) => reply,
            Err(_) => {
                if let Some(id) = id_cell.get() {
                    self.pending().waiting.remove(id);
                }
                let reason = format!(
                    "its launcher (pid {}) did not answer within {:.1} s; it may be stopped (SIGSTOP) or wedged: `kill -CONT {}` resumes a stopped one, `tickloop close` ends it",
                    self.launcher_pid,
                    waited.elapsed().as_secs_f64(),
                    self.launcher_pid
                );
                if is_call {
                    ClientReply::Call(CallOutcome::Unknown { reason })
                } else {
                    ClientReply::Error(ClientError {
                        kind: ErrorKind::Unresponsive,
                        message: reason,
                        data: None,
                    })
                }
            }
        }
    }

    /// [`LauncherConn::request`] without the bound; `id_cell` gets the
    /// request's id once it has one.
    async fn request_unbounded(
        &self,
        request: LauncherRequest,
        client: Option<ClientKind>,
        id_cell: &std::sync::OnceLock<u64>,
    ) -> ClientReply {
        let is_call = matches!(request, LauncherRequest::Call { .. });
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut pending = self.pending();
            if let Some(reason) = pending.lost.clone() {
                return lost_reply(is_call, &reason);
            }
            let id = pending.next_id;
            pending.next_id += 1;
            pending.waiting.insert(id, Waiter { is_call, reply: tx });
            id
        };
        let _ = id_cell.set(id);
        let envelope = Envelope {
            id,
            request,
            client,
        };
        // Kept until the answer: dropped (this future given up) before the
        // writer reached the line, the line is never sent.
        let _ticket = match self.out.send_abandonable(&envelope).await {
            Ok(ticket) => ticket,
            Err(e) => {
                self.pending().waiting.remove(&id);
                return lost_reply(
                    is_call,
                    &format!("the launcher (pid {}) went away: {e}", self.launcher_pid),
                );
            }
        };
        match rx.await {
            Ok(reply) => reply,
            Err(_) => lost_reply(
                is_call,
                &format!("the launcher (pid {}) went away", self.launcher_pid),
            ),
        }
    }

    /// Resolves once tickhost can no longer write to the launcher (a write
    /// failed): the connection is dropped then.
    pub async fn writer_stopped(&self) {
        self.out.closed().await;
    }

    /// Delivers the reply to request `id`.
    pub(super) fn answer(&self, id: u64, reply: ClientReply) {
        if let Some(waiter) = self.pending().waiting.remove(&id) {
            let _ = waiter.reply.send(reply);
        }
    }

    /// The connection is gone: every waiting request fails with `reason`.
    pub(super) fn lose(&self, reason: &str) {
        let waiting = {
            let mut pending = self.pending();
            pending.lost = Some(reason.to_string());
            std::mem::take(&mut pending.waiting)
        };
        for (_, waiter) in waiting {
            let _ = waiter.reply.send(lost_reply(waiter.is_call, reason));
        }
    }
}

fn lost_reply(is_call: bool, reason: &str) -> ClientReply {
    if is_call {
        ClientReply::Call(CallOutcome::Unknown {
            reason: reason.to_string(),
        })
    } else {
        ClientReply::Error(ClientError {
            kind: ErrorKind::Ended,
            message: reason.to_string(),
            data: None,
        })
    }
}
