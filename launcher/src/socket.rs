//! The launcher's Unix socket: the hello exchange, tickhost's requests in,
//! replies and the coalesced status out.
//!
//! One JSON value per line each way. After [`Hello`]/[`HelloReply`] (role
//! `host`), the peer sends `Envelope<LauncherRequest>` lines; the launcher
//! answers with [`LauncherMessage::Reply`] lines (in any order: calls run
//! concurrently) and pushes [`LauncherMessage::Status`] right after the hello
//! and whenever the status changes, at most one every [`STATUS_PACE`].
//! Status goes through a `watch` channel, so a flood of updates costs no
//! memory: a slow peer just sees fewer statuses.
//! Connections with role `view` are handed to [`crate::views`] after the
//! hello: they speak the attach protocol ([`tickloop_proto::attach`]).

use crate::published::Published;
use crate::views::hub::ViewHub;
use crate::views::serve::{serve_view, ViewContext};
use crate::LauncherError;
use std::os::fd::AsFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::Path;
use std::sync::Arc;
use tickloop_client::framing::{read_line_limited, write_line, LeanBufReader};
use tickloop_proto::wire::{
    Catalog, ClientError, ClientKind, ClientReply, Envelope, ErrorKind, Hello, HelloReply,
    LauncherMessage, LauncherReply, LauncherRequest, Role,
};
use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch, Notify};

/// The longest line accepted from a peer (typed input can be large).
pub const MAX_PEER_LINE: usize = 16 * 1024 * 1024;
/// The longest hello line accepted.
const MAX_HELLO_LINE: usize = 64 * 1024;
/// The least time between two statuses written to tickhost: a Tick that
/// floods updates makes a status of each, and tickhost, which serves
/// every instance from one thread, read and passed on each (to every
/// watcher) as fast as they came, keeping a quiet Tick's `read` waiting
/// behind them (`benches/isolation.py`). The newest status goes out when
/// the pace allows; a change after a pause goes at once. `watch` delivers
/// at most every 10 ms anyway, and tickhost asks for a fresh status before
/// it passes a call's reply on.
const STATUS_PACE: std::time::Duration = std::time::Duration::from_millis(10);

/// A request from a connected host, with where its answer goes.
pub struct Incoming {
    pub id: u64,
    pub request: LauncherRequest,
    /// Who asked, as tickhost says (for the activity record).
    pub client: Option<ClientKind>,
    pub peer: Peer,
    /// The length of its line.
    pub bytes: usize,
}

/// The way back to one connection: replies queued here are written in order,
/// also after the launcher started shutting down.
#[derive(Clone)]
pub struct Peer {
    /// Boxed: the channel allocates its slots 32 at a time, and a
    /// connection that sends a reply now and then keeps that block for its
    /// life (2.6 kB of `LauncherMessage`s, 256 bytes of boxes).
    tx: mpsc::Sender<Box<LauncherMessage>>,
    close: Arc<Notify>,
}

/// Replies queued for one peer at most: a peer that sends requests and does
/// not read their replies is disconnected, not buffered for without bound.
pub const PEER_QUEUE: usize = 1024;

impl Peer {
    /// Queue the answer to request `id`; a peer that has gone is ignored,
    /// and one whose [`PEER_QUEUE`] replies are all unread is disconnected.
    pub fn reply(&self, id: u64, reply: ClientReply) {
        match self
            .tx
            .try_send(Box::new(LauncherMessage::Reply(LauncherReply {
                id,
                reply,
            }))) {
            Ok(()) | Err(mpsc::error::TrySendError::Closed(_)) => {}
            Err(mpsc::error::TrySendError::Full(_)) => {
                eprintln!("launcher: a peer left {PEER_QUEUE} replies unread; disconnecting it");
                self.close.notify_one();
            }
        }
    }
}

/// Removes a stale socket file, creates the parent directory (0700) when
/// missing, binds, and makes the socket 0600.
pub fn bind(path: &Path) -> Result<UnixListener, LauncherError> {
    let err = |e: std::io::Error| LauncherError::Socket {
        path: path.to_path_buf(),
        source: e,
    };
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)
                .map_err(err)?;
        }
    }
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(e)),
    }
    let listener = UnixListener::bind(path).map_err(err)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(err)?;
    Ok(listener)
}

/// Everything the connections share.
#[derive(Clone)]
pub struct ServeContext {
    /// Boxed: a channel keeps a block of 32 slots the size of its message.
    pub requests: mpsc::Sender<Box<Incoming>>,
    pub status: watch::Receiver<Published>,
    /// Becomes `true` when the launcher is about to exit: each connection then
    /// writes what is queued and the latest status, and closes.
    pub shutdown: watch::Receiver<bool>,
    /// Upgraded by every connection's writer and held until it is done; the
    /// launcher drops its own strong sender at the end and waits until every
    /// writer has dropped theirs (everything flushed).
    pub flushed: mpsc::WeakSender<()>,
    /// The attached views and their size policy.
    pub views: Arc<ViewHub>,
    /// The terminal, for recordings (role `recorder`).
    pub term: Arc<crate::terminal::TerminalHandle>,
    /// Where each recorder connection says it started or stopped.
    pub recorders: mpsc::UnboundedSender<crate::recorder::RecorderNote>,
}

/// Accept connections until shutdown; a socket bound again at the same
/// path (its file was removed, see `instance::rehome`) arrives on
/// `rebinds` and replaces the old one.
pub async fn serve(
    mut listener: UnixListener,
    ctx: ServeContext,
    mut rebinds: mpsc::Receiver<UnixListener>,
) {
    let mut shutdown = ctx.shutdown.clone();
    loop {
        tokio::select! {
            Some(again) = rebinds.recv() => listener = again,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => match tickloop_client::peer::check(&stream) {
                    Ok(()) => {
                        let ctx = ctx.clone();
                        tokio::spawn(async move { connection(stream, ctx).await });
                    }
                    Err(refused) => eprintln!("launcher: refused a connection: {refused}"),
                },
                Err(_) => {
                    // Out of descriptors and the like: wait a little, go on.
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                }
            },
            _ = shutdown.changed() => return,
        }
    }
}

async fn connection(stream: UnixStream, ctx: ServeContext) {
    let (read_half, write_half) = stream.into_split();
    // Neither holds a buffer while the peer is quiet: replies and frames
    // go out whole, one write each (`write_line`), and requests and keys
    // are read into the reader's small array.
    let mut reader = LeanBufReader::new(read_half);
    let mut writer = write_half;

    let mut line = Vec::new();
    let hello: Hello = match read_line_limited(&mut reader, &mut line, MAX_HELLO_LINE).await {
        Ok(true) => match serde_json::from_slice(&line) {
            Ok(hello) => hello,
            Err(e) => {
                let reply = HelloReply {
                    version: tickloop_proto::wire::wire_version().to_string(),
                    refused: Some(format!("expected a hello line: {e}")),
                };
                let _ = write_line(&mut writer, &reply).await;
                return;
            }
        },
        _ => return,
    };
    let mut answer = HelloReply::answer(&hello);
    if answer.refused.is_none() {
        match hello.hello.role {
            Role::Host | Role::View | Role::Recorder => {}
            Role::Client => {
                answer.refused =
                    Some("this is a launcher's socket; clients talk to tickhost".to_string())
            }
        }
    }
    if write_line(&mut writer, &answer).await.is_err() || answer.refused.is_some() {
        return;
    }
    if hello.hello.role == Role::View {
        let view = ViewContext {
            hub: ctx.views.clone(),
            status: ctx.status.clone(),
            shutdown: ctx.shutdown.clone(),
            flushed: ctx.flushed.clone(),
            read_only: hello.is_agents_view(),
            echo_sink: writer.as_ref().as_fd().try_clone_to_owned().ok(),
        };
        serve_view(reader, writer, view).await;
        return;
    }

    if hello.hello.role == Role::Recorder {
        // A recording's lines are many and small: gathered before each write.
        serve_recorder(reader, BufWriter::new(writer), ctx, hello.hello.client).await;
        return;
    }

    let (tx, rx) = mpsc::channel(PEER_QUEUE);
    let close = Arc::new(Notify::new());
    let peer = Peer {
        tx,
        close: close.clone(),
    };
    let requests = ctx.requests.clone();
    tokio::spawn(write_loop(
        writer,
        rx,
        (ctx.status.clone(), ctx.shutdown.clone()),
        ctx.flushed.clone(),
        close.clone(),
    ));
    read_loop(reader, peer, requests, close).await;
}

/// Streams a recording of the terminal and the protocol (asciicast v2
/// lines, [`crate::recorder`]) until the Tick ends or the peer hangs up;
/// the instance hears that `client` started and stopped it.
async fn serve_recorder<R, W>(
    mut reader: R,
    mut writer: W,
    ctx: ServeContext,
    client: Option<ClientKind>,
) where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    use tokio::io::AsyncReadExt;
    let (sink, mut stream) = crate::recorder::recording();
    if !ctx.term.start_recording(sink).await {
        return;
    }
    let _running = RecorderRunning::start(ctx.recorders.clone(), client);
    let _flushed = ctx.flushed.upgrade();
    let mut scratch = [0u8; 256];
    loop {
        tokio::select! {
            line = stream.recv() => {
                let Some(line) = line else { break };
                if writer.write_all(&line).await.is_err() {
                    return;
                }
                if stream.is_empty() && writer.flush().await.is_err() {
                    return;
                }
            }
            // The recorder sends nothing after its hello: EOF is its hang-up.
            read = reader.read(&mut scratch) => {
                if matches!(read, Ok(0) | Err(_)) {
                    return;
                }
            }
        }
    }
    let _ = writer.flush().await;
}

/// A recorder connection recording: said started when made, stopped when
/// dropped (however the connection ends).
struct RecorderRunning {
    notes: mpsc::UnboundedSender<crate::recorder::RecorderNote>,
    client: Option<ClientKind>,
}

impl RecorderRunning {
    fn start(
        notes: mpsc::UnboundedSender<crate::recorder::RecorderNote>,
        client: Option<ClientKind>,
    ) -> RecorderRunning {
        let started = crate::recorder::RecorderNote {
            client,
            started: true,
        };
        let _ = notes.send(started);
        RecorderRunning { notes, client }
    }
}

impl Drop for RecorderRunning {
    fn drop(&mut self) {
        let stopped = crate::recorder::RecorderNote {
            client: self.client,
            started: false,
        };
        let _ = self.notes.send(stopped);
    }
}

async fn read_loop<R: AsyncBufRead + Unpin>(
    mut reader: R,
    peer: Peer,
    requests: mpsc::Sender<Box<Incoming>>,
    close: Arc<Notify>,
) {
    let mut line = Vec::new();
    loop {
        match read_line_limited(&mut reader, &mut line, MAX_PEER_LINE).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(_) => {
                close.notify_one();
                return;
            }
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Envelope<LauncherRequest>>(&line) {
            Ok(envelope) => {
                let incoming = Box::new(Incoming {
                    id: envelope.id,
                    request: envelope.request,
                    client: envelope.client,
                    peer: peer.clone(),
                    bytes: line.len(),
                });
                if let Err(mpsc::error::SendError(incoming)) = requests.send(incoming).await {
                    // The launcher is shutting down: nobody else will answer.
                    incoming.peer.reply(
                        incoming.id,
                        error(ErrorKind::Ended, "the instance has ended"),
                    );
                    return;
                }
            }
            Err(e) => match envelope_id(&line) {
                Some(id) => peer.reply(
                    id,
                    error(ErrorKind::BadRequest, &format!("malformed request: {e}")),
                ),
                None => {
                    close.notify_one();
                    return;
                }
            },
        }
    }
}

fn envelope_id(line: &[u8]) -> Option<u64> {
    serde_json::from_slice::<serde_json::Value>(line)
        .ok()?
        .get("id")?
        .as_u64()
}

/// A [`ClientReply::Error`] with no data.
pub fn error(kind: ErrorKind, message: &str) -> ClientReply {
    ClientReply::Error(ClientError {
        kind,
        message: message.to_string(),
        data: None,
    })
}

/// Writes the replies queued on `rx` and the newest status (paced) to a
/// host's connection, until `close` or the launcher's shutdown (`watched`:
/// the status and the shutdown flag); holds `flushed` until done.
async fn write_loop<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<Box<LauncherMessage>>,
    watched: (watch::Receiver<Published>, watch::Receiver<bool>),
    flushed: mpsc::WeakSender<()>,
    close: Arc<Notify>,
) {
    let Some(_flushed) = flushed.upgrade() else {
        return;
    };
    let (mut status, mut shutdown) = watched;
    let mut rx_open = true;

    // The catalog and the current status right after the hello; later the
    // catalog again only when it changed.
    let mut catalog_sent: Option<Arc<Catalog>> = None;
    let first = status.borrow_and_update().clone();
    if write_published(&mut writer, &first, &mut catalog_sent)
        .await
        .is_err()
    {
        return;
    }
    enum Step {
        Message(Box<LauncherMessage>),
        Status,
        Idle,
        Shutdown,
        Close,
    }
    // A status changed after the previous one went out less than
    // STATUS_PACE ago waits for the pace (the newest then goes).
    let mut status_after = tokio::time::Instant::now() + STATUS_PACE;
    let mut status_waits = false;
    loop {
        let step = tokio::select! {
            biased;
            msg = rx.recv(), if rx_open => match msg {
                Some(msg) => Step::Message(msg),
                None => { rx_open = false; Step::Idle }
            },
            changed = status.changed(), if !status_waits => match changed {
                Ok(()) if tokio::time::Instant::now() >= status_after => Step::Status,
                Ok(()) => { status_waits = true; Step::Idle }
                Err(_) => Step::Shutdown,
            },
            _ = tokio::time::sleep_until(status_after), if status_waits => Step::Status,
            _ = shutdown.wait_for(|&down| down) => Step::Shutdown,
            _ = close.notified() => Step::Close,
        };
        let result = match step {
            Step::Message(msg) => write_line(&mut writer, &*msg).await,
            Step::Status => {
                status_waits = false;
                let published = status.borrow_and_update().clone();
                let written = write_published(&mut writer, &published, &mut catalog_sent).await;
                status_after = tokio::time::Instant::now() + STATUS_PACE;
                written
            }
            Step::Idle => Ok(()),
            Step::Shutdown => break,
            Step::Close => return,
        };
        if result.is_err() {
            return;
        }
    }
    // Shutting down: what is queued, then the final status, then close.
    while let Ok(msg) = rx.try_recv() {
        if write_line(&mut writer, &msg).await.is_err() {
            return;
        }
    }
    if status.has_changed().unwrap_or(false) {
        let published = status.borrow_and_update().clone();
        if write_published(&mut writer, &published, &mut catalog_sent)
            .await
            .is_err()
        {
            return;
        }
    }
    let _ = writer.shutdown().await;
}

/// Writes `published`'s catalog when it is not the one last sent on this
/// connection, then its status.
async fn write_published<W: AsyncWrite + Unpin>(
    writer: &mut W,
    published: &Published,
    catalog_sent: &mut Option<Arc<Catalog>>,
) -> std::io::Result<()> {
    let fresh = !catalog_sent
        .as_ref()
        .is_some_and(|sent| Arc::ptr_eq(sent, &published.catalog));
    if fresh {
        let catalog = LauncherMessage::Catalog(Box::new((*published.catalog).clone()));
        write_line(writer, &catalog).await?;
        *catalog_sent = Some(published.catalog.clone());
    }
    let status = LauncherMessage::Status(Box::new(published.status.clone()));
    write_line(writer, &status).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, BufReader};

    /// The statuses written to a host, read back: `(updates_total, when)`.
    async fn next_status<R: AsyncBufRead + Unpin>(lines: &mut R) -> (u64, tokio::time::Instant) {
        loop {
            let mut line = String::new();
            let n = lines.read_line(&mut line).await.expect("a line");
            assert!(n > 0, "the writer hung up");
            if let Ok(LauncherMessage::Status(status)) = serde_json::from_str(&line) {
                return (status.updates_total, tokio::time::Instant::now());
            }
        }
    }

    /// A Tick that floods updates makes a status of each; tickhost gets at
    /// most one every STATUS_PACE, the newest, and a change after a pause
    /// at once. Time is paused: it moves only when every task waits on a
    /// timer, so the counts do not depend on the machine's speed.
    #[tokio::test(start_paused = true)]
    async fn statuses_to_a_host_are_paced_and_the_newest_goes() {
        let (status_tx, status_rx) = watch::channel(Published::default());
        let (_shutdown_tx, shutdown_rx) = watch::channel(false);
        let (flushed, _flushed_rx) = mpsc::channel::<()>(1);
        let (_reply_tx, reply_rx) = mpsc::channel(PEER_QUEUE);
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        tokio::spawn(write_loop(
            ours,
            reply_rx,
            (status_rx, shutdown_rx),
            flushed.downgrade(),
            Arc::new(Notify::new()),
        ));
        let mut lines = BufReader::new(theirs);
        assert_eq!(
            next_status(&mut lines).await.0,
            0,
            "the status after the hello"
        );

        // A flood: 500 changes, the writer given a turn after each.
        for n in 1..=500 {
            status_tx.send_modify(|p| p.status.updates_total = n);
            tokio::task::yield_now().await;
        }
        let mut written = 0;
        loop {
            let (total, _) = next_status(&mut lines).await;
            written += 1;
            if total == 500 {
                break;
            }
        }
        assert!(
            written <= 2,
            "{written} statuses written for 500 changes within one pace"
        );

        // After a pause, a change goes at once (no timer fires first).
        tokio::time::sleep(STATUS_PACE * 5).await;
        let changed_at = tokio::time::Instant::now();
        status_tx.send_modify(|p| p.status.updates_total = 501);
        let (total, seen_at) = next_status(&mut lines).await;
        assert_eq!(total, 501);
        assert_eq!(seen_at, changed_at, "a change after a pause waited");
    }
}
