//! One client's connection as the request dispatch sees it
//! ([`Connection`]): its lines in (read while a request is held or a wait
//! runs), its one writer ([`Outbox`]), whether the peer is still there,
//! and who it is; and [`Caller`], one request on it, made once per
//! request. A connection is a Unix socket ([`Connection::unix`]) or, for
//! tests of the dispatch, a pipe in memory ([`Connection::memory`], as
//! lsp-server's `Connection::memory()`).

use std::os::unix::io::{AsRawFd, RawFd};
use tickloop_client::framing::{Line, LineReader};
use tickloop_client::outbox::Outbox;
use tickloop_proto::wire::ClientKind;
use tokio::io::AsyncRead;
use tokio::net::UnixStream;

use super::request_line::MAX_CLIENT_LINE;

/// Bytes of lines queued for one client at most (its replies, progress,
/// watch deliveries): the connection's tasks wait for room; one longer
/// reply goes alone.
const CLIENT_QUEUE: usize = 1024 * 1024;

/// A client's lines, however they come.
pub type ClientLines = LineReader<Box<dyn AsyncRead + Unpin + Send + Sync>>;

/// One client connection.
pub struct Connection {
    pub reader: ClientLines,
    pub out: Outbox,
    /// Who the client said it is at hello (the CLI when it did not say).
    pub client: Option<ClientKind>,
    /// A line that came while a wait or run was being answered, served
    /// next.
    pub early: Option<Line>,
    /// Its socket, looked at (without reading) for a hang-up; `None` in
    /// memory, where the hang-up is read.
    socket: Option<RawFd>,
}

impl Connection {
    /// The connection of `stream`.
    pub fn unix(stream: UnixStream) -> Connection {
        let socket = stream.as_raw_fd();
        let (read, write) = stream.into_split();
        Connection {
            reader: LineReader::new(Box::new(read), MAX_CLIENT_LINE),
            out: Outbox::spawn(write, CLIENT_QUEUE),
            client: None,
            early: None,
            socket: Some(socket),
        }
    }

    /// A connection in memory, and the client's end of it (a stream the
    /// test writes request lines to and reads tickhost's lines from).
    /// Needs a tokio runtime (its writer is a task).
    pub fn memory(client: Option<ClientKind>) -> (Connection, tokio::io::DuplexStream) {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(ours);
        let connection = Connection {
            reader: LineReader::new(Box::new(read), MAX_CLIENT_LINE),
            out: Outbox::spawn(write, CLIENT_QUEUE),
            client,
            early: None,
            socket: None,
        };
        (connection, theirs)
    }

    /// Whether the peer is still connected: no hang-up (nor half-close)
    /// or error on its socket, looked at without waiting. (In memory:
    /// yes; its hang-up is read.)
    pub fn still_connected(&self) -> bool {
        self.socket.is_none_or(socket_open)
    }

    /// [`Connection::still_connected`] as a probe that owns nothing, for
    /// the gate to call while the connection's reader is busy.
    pub fn probe(&self) -> impl Fn() -> bool + Send + Sync + 'static {
        let socket = self.socket;
        move || socket.is_none_or(socket_open)
    }
}

/// Whether the peer of `socket` is still there (no hang-up, half-close or
/// error on it), looked at without waiting.
fn socket_open(socket: RawFd) -> bool {
    let mut poll = libc::pollfd {
        fd: socket,
        events: libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: poll reads and writes the one pollfd given, for no time.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    let gone = libc::POLLHUP | libc::POLLRDHUP | libc::POLLERR | libc::POLLNVAL;
    !(ready > 0 && poll.revents & gone != 0)
}

/// One request on its connection: made once per request by the dispatch,
/// and handed to whatever answers it (the gate reads the connection while
/// it holds the request, a wait or a run watches it for a hang-up).
pub struct Caller<'a> {
    pub conn: &'a mut Connection,
    /// The id of the request's envelope.
    pub id: u64,
}

impl Caller<'_> {
    /// Who asked.
    pub fn client(&self) -> Option<ClientKind> {
        self.conn.client
    }

    /// Whether an agent asked (`mcp`, `loop`, `agent_cli`).
    pub fn is_agent(&self) -> bool {
        self.conn.client.is_some_and(ClientKind::is_agent)
    }
}
