//! A view's connection to a launcher ([`tickloop_proto::attach`]): dialled
//! at its socket here or through ssh and the relay on another machine, the
//! hellos exchanged, the first snapshot read; then either carried by the
//! view's own poll loop ([`LineLink`]: non-blocking, lines buffered both
//! ways; the attach view) or by two threads (launcher lines in as
//! [`LinkNote`]s, [`ViewEvent`]s out; the Monitor's overlay).

use crate::error::AttachError;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;
use termwiz::caps::{Capabilities, ColorLevel};
use termwiz::terminal::TerminalWaker;
use tickloop_proto::attach::{Snapshot, TermCaps, ToView, ViewEvent, ViewHello, MAX_VIEW_LINE};
use tickloop_proto::wire::{ClientKind, Hello, HelloReply};

/// How long the view waits for the launcher's first answers before giving up.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The [`ViewHello`] of a view `size` cells large on a terminal with `caps`.
pub(crate) fn view_hello(caps: &Capabilities, size: (u16, u16), client: &str) -> ViewHello {
    ViewHello {
        cols: size.0,
        rows: size.1,
        term: TermCaps {
            truecolor: caps.color_level() == ColorLevel::TrueColor,
            colors: match caps.color_level() {
                ColorLevel::TrueColor | ColorLevel::TwoFiftySix => 256,
                ColorLevel::Sixteen => 16,
                ColorLevel::MonoChrome => 2,
            },
            mouse: true,
            bracketed_paste: caps.bracketed_paste(),
            focus_events: false,
        },
        client: Some(client.into()),
        tty: None,
    }
}

/// How the launcher answered a view's [`ViewHello`].
pub(crate) enum Start {
    Snapshot(Snapshot),
    Ended(String),
}

/// Sends the view's two hellos (the connection's, as `kind`, then
/// `hello`) on a connection from [`dial`] in one write, without waiting
/// for the launcher's answer to the first: the launcher reads both from
/// one buffer and starts on its snapshot at once, and [`read_start`] reads
/// both answers. Returns the connection's writing half.
pub(crate) fn send_hellos(
    stream: &UnixStream,
    kind: ClientKind,
    hello: &ViewHello,
) -> Result<UnixStream, AttachError> {
    let lost = |e: std::io::Error| AttachError::Lost(e.to_string());
    let mut writer = stream.try_clone().map_err(lost)?;
    let mut lines = serde_json::to_vec(&Hello::view(kind)).map_err(|e| lost(e.into()))?;
    lines.push(b'\n');
    serde_json::to_writer(&mut lines, hello).map_err(|e| lost(e.into()))?;
    lines.push(b'\n');
    writer.write_all(&lines).map_err(lost)?;
    Ok(writer)
}

/// The launcher's answers to the hellos [`send_hellos`] sent on `stream`:
/// the connection's (a refusal ends here), then the view's: its first
/// snapshot, or that the instance ended. Returns the connection's reading
/// half (reads no longer time out), its writing half, and that answer.
pub(crate) fn read_start(
    stream: UnixStream,
    writer: UnixStream,
) -> Result<(BufReader<UnixStream>, UnixStream, Start), AttachError> {
    let mut reader = BufReader::new(stream);
    let line =
        read_line(&mut reader)?.ok_or_else(|| AttachError::Lost("closed during hello".into()))?;
    let reply: HelloReply = serde_json::from_slice(&line)
        .map_err(|e| AttachError::Protocol(format!("bad hello reply: {e}")))?;
    if let Some(refused) = reply.refused {
        return Err(AttachError::Refused(refused));
    }
    let first = read_message(&mut reader)?;
    let start = match first {
        Some(ToView::Snapshot(s)) => Start::Snapshot(s),
        Some(ToView::Ended { reason }) => Start::Ended(reason),
        Some(other) => {
            return Err(AttachError::Protocol(format!(
                "expected a snapshot first, got {other:?}"
            )))
        }
        None => return Err(AttachError::Lost("closed before the first snapshot".into())),
    };
    reader
        .get_ref()
        .set_read_timeout(None)
        .map_err(|e| AttachError::Lost(e.to_string()))?;
    Ok((reader, writer, start))
}

/// Where a view's launcher is, and whom the view shows the screen to.
#[derive(Debug, Clone)]
pub(crate) struct Dial {
    /// The launcher's socket here (unused with `ssh`).
    pub socket: PathBuf,
    /// The instance is on this other machine, reached through the relay.
    pub ssh: Option<tickloop_client::ssh::SshHost>,
    /// The instance's id on its machine.
    pub instance: String,
    /// Who the view is, in its hello: an agent's view is read-only at the
    /// launcher (`wire::Hello::view`).
    pub kind: ClientKind,
}

/// A connection to the launcher of `to.instance`, nothing sent yet
/// ([`send_hellos`] next): at its socket here, or through ssh and the relay
/// on `to.ssh`'s machine. Reads on it time out until the first snapshot.
pub(crate) fn dial(
    to: &Dial,
) -> Result<(UnixStream, Option<tickloop_client::ssh::SshLink>), AttachError> {
    let instance = to.instance.as_str();
    let (stream, link, label) = match &to.ssh {
        None => {
            let stream =
                UnixStream::connect(&to.socket).map_err(|source| AttachError::Connect {
                    path: to.socket.clone(),
                    source,
                })?;
            (stream, None, to.socket.clone())
        }
        Some(host) => {
            let relay_to = tickloop_client::ssh::RelayTo::View(instance.to_string());
            let (stream, _greeting, link) = tickloop_client::ssh::dial(host, &relay_to, false)
                .map_err(|e| match e {
                    tickloop_client::ssh::RemoteError::Relay { ref message, .. }
                        if message.starts_with("no instance") =>
                    {
                        AttachError::NoSuchInstance(e.to_string())
                    }
                    other => AttachError::Remote(other),
                })?;
            let label = PathBuf::from(format!("ssh {host}: {instance}"));
            (stream, Some(link), label)
        }
    };
    stream
        .set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(|source| AttachError::Connect {
            path: label,
            source,
        })?;
    Ok((stream, link))
}

fn send_line<T: serde::Serialize>(w: &mut impl Write, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

/// One line, without its newline; `None` at end of stream (a line cut
/// short by the end counts as the end).
fn read_line(r: &mut impl BufRead) -> Result<Option<Vec<u8>>, AttachError> {
    match tickloop_client::framing::read_line_blocking(r, MAX_VIEW_LINE) {
        Ok(line) => Ok(line),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            Err(AttachError::Protocol(e.to_string()))
        }
        Err(e) => Err(AttachError::Lost(e.to_string())),
    }
}

fn read_message(r: &mut impl BufRead) -> Result<Option<ToView>, AttachError> {
    let Some(line) = read_line(r)? else {
        return Ok(None);
    };
    let message = serde_json::from_slice(&line)
        .map_err(|e| AttachError::Protocol(format!("bad message: {e}")))?;
    if let ToView::Snapshot(snapshot) = &message {
        snapshot
            .check()
            .map_err(|e| AttachError::Protocol(e.to_string()))?;
    }
    Ok(Some(message))
}

/// What the launcher's side of a link tells the view's main loop.
pub(crate) enum LinkNote {
    /// One message from the launcher.
    Frame(ToView),
    /// The connection was lost (or closed).
    Lost(String),
    /// The launcher broke the protocol.
    Broken(String),
}

/// Starts the two threads that carry a view's connection after its first
/// snapshot: each line from the launcher becomes a [`LinkNote`], sent on
/// `notes` as the view's own note type (followed by `waker.wake()`), and each [`ViewEvent`] received on `events`
/// goes to the launcher. When every sender of `events` is dropped the
/// connection is shut down both ways (a detach), which ends both threads.
pub(crate) fn spawn_link<N: From<LinkNote> + Send + 'static>(
    mut reader: BufReader<UnixStream>,
    mut writer: UnixStream,
    notes: mpsc::Sender<N>,
    waker: TerminalWaker,
    events: mpsc::Receiver<ViewEvent>,
) {
    // Launcher → view.
    std::thread::spawn(move || loop {
        let note = match read_message(&mut reader) {
            Ok(Some(msg)) => LinkNote::Frame(msg),
            Ok(None) => LinkNote::Lost("the launcher closed the connection".into()),
            Err(AttachError::Protocol(e)) => LinkNote::Broken(e),
            Err(e) => LinkNote::Lost(e.to_string()),
        };
        let last = !matches!(
            note,
            LinkNote::Frame(
                ToView::Rows(_)
                    | ToView::Drawn { .. }
                    | ToView::Snapshot(_)
                    | ToView::Resized { .. }
                    | ToView::Bell
                    | ToView::Clipboard { .. }
                    | ToView::Images { .. }
                    | ToView::Image { .. }
            )
        );
        if notes.send(N::from(note)).is_err() {
            return;
        }
        let _ = waker.wake();
        if last {
            return;
        }
    });
    // View → launcher, off the drawing thread.
    std::thread::spawn(move || {
        while let Ok(event) = events.recv() {
            if send_line(&mut writer, &event).is_err() {
                return;
            }
        }
        let _ = writer.shutdown(std::net::Shutdown::Both);
    });
}

/// A view's connection to its launcher carried by the view's own loop, no
/// thread: the socket non-blocking, what goes out queued as whole lines and
/// written as far as the socket takes it at once (the rest when it can take
/// more), what comes in cut into lines as it arrives.
pub(crate) struct LineLink {
    stream: UnixStream,
    /// Bytes read and not yet a whole line.
    incoming: Vec<u8>,
    /// Whole lines to send; `sent` of them already written.
    outgoing: Vec<u8>,
    sent: usize,
    /// The launcher closed the connection, or broke it: nothing more comes.
    done: bool,
    /// What one read takes (made once: zeroing it for each read cost more
    /// than parsing an echo's frame).
    read_buf: Box<[u8]>,
}

/// What one read of the launcher's socket takes at most.
const LINK_READ: usize = 16 * 1024;

impl LineLink {
    /// Takes over the connection [`read_start`] returned (with what its
    /// reader already buffered past the first snapshot).
    pub(crate) fn new(reader: BufReader<UnixStream>) -> Result<Self, AttachError> {
        let incoming = reader.buffer().to_vec();
        let stream = reader.into_inner();
        stream
            .set_nonblocking(true)
            .map_err(|e| AttachError::Lost(e.to_string()))?;
        Ok(LineLink {
            stream,
            incoming,
            outgoing: Vec::new(),
            sent: 0,
            done: false,
            read_buf: vec![0; LINK_READ].into_boxed_slice(),
        })
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Queues `event` as a line; [`LineLink::flush`] writes it.
    pub(crate) fn queue(&mut self, event: &ViewEvent) {
        if serde_json::to_writer(&mut self.outgoing, event).is_ok() {
            self.outgoing.push(b'\n');
        }
    }

    /// Lines are waiting for the socket to take them.
    pub(crate) fn wants_write(&self) -> bool {
        self.sent < self.outgoing.len()
    }

    /// Writes what is queued, as far as the socket takes it now.
    pub(crate) fn flush(&mut self) -> Result<(), AttachError> {
        while self.sent < self.outgoing.len() {
            match self.stream.write(&self.outgoing[self.sent..]) {
                Ok(0) => return Err(AttachError::Lost("the launcher stopped reading".into())),
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(AttachError::Lost(format!(
                        "cannot send to the launcher: {e}"
                    )))
                }
            }
        }
        if self.sent == self.outgoing.len() {
            self.outgoing.clear();
            self.sent = 0;
        }
        Ok(())
    }

    /// Whole lines were read before the link was made (with the first
    /// snapshot) and wait to be taken: [`LineLink::read`] has work even
    /// though the socket has nothing new.
    pub(crate) fn buffered(&self) -> bool {
        !self.done && self.incoming.contains(&b'\n')
    }

    /// Reads what the launcher sent (until the socket has no more now) and
    /// appends its messages to `out`, in order; the connection's end, or a
    /// line that is not a message, comes last.
    pub(crate) fn read(&mut self, out: &mut Vec<LinkNote>) {
        // What came with the first snapshot, in the same read.
        self.take_lines(out);
        while !self.done {
            match self.stream.read(&mut self.read_buf) {
                Ok(0) => {
                    self.take_lines(out);
                    if !self.done {
                        out.push(LinkNote::Lost("the launcher closed the connection".into()));
                        self.done = true;
                    }
                }
                Ok(n) => {
                    self.incoming.extend_from_slice(&self.read_buf[..n]);
                    self.take_lines(out);
                    if n < self.read_buf.len() {
                        // The socket had less than a read takes: it is
                        // empty now (the loop's `poll` says when it is
                        // not), and asking again costs an echo a call.
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    out.push(LinkNote::Lost(e.to_string()));
                    self.done = true;
                }
            }
        }
    }

    /// The whole lines read so far, as messages.
    fn take_lines(&mut self, out: &mut Vec<LinkNote>) {
        let mut start = 0;
        while let Some(end) = self.incoming[start..].iter().position(|b| *b == b'\n') {
            let line = &self.incoming[start..start + end];
            start += end + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<ToView>(line) {
                Ok(msg) => out.push(LinkNote::Frame(msg)),
                Err(e) => {
                    out.push(LinkNote::Broken(format!("bad message: {e}")));
                    self.done = true;
                    return;
                }
            }
        }
        self.incoming.drain(..start);
        if self.incoming.len() > MAX_VIEW_LINE {
            out.push(LinkNote::Broken(format!(
                "a line longer than {MAX_VIEW_LINE} bytes"
            )));
            self.done = true;
        }
    }

    /// Sends what is still queued (waiting for the socket at most a
    /// moment) and closes the connection both ways: a detach.
    pub(crate) fn close(mut self) {
        let _ = self.stream.set_nonblocking(false);
        let _ = self
            .stream
            .set_write_timeout(Some(Duration::from_millis(200)));
        let _ = self.stream.write_all(&self.outgoing[self.sent..]);
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::attach::{ApplyError, Key};

    /// The line a launcher would send for `snapshot`, with `edit` applied
    /// to its JSON (a launcher that lies about the shape).
    fn snapshot_line(edit: impl FnOnce(&mut serde_json::Value)) -> Vec<u8> {
        let mut value =
            serde_json::to_value(ToView::Snapshot(Snapshot::blank(80, 24))).expect("a snapshot");
        edit(&mut value);
        let mut line = serde_json::to_vec(&value).expect("a line");
        line.push(b'\n');
        line
    }

    fn read(line: &[u8]) -> Result<Option<ToView>, AttachError> {
        read_message(&mut std::io::Cursor::new(line.to_vec()))
    }

    #[test]
    fn a_snapshot_of_its_shape_is_read() {
        let message = read(&snapshot_line(|_| {})).expect("read");
        assert!(matches!(message, Some(ToView::Snapshot(s)) if s.rows == 24 && s.cols == 80));
    }

    // Found by fuzzing the attach protocol (tickloop-fuzz, attach_lines): a
    // snapshot of 65535x65535 cells exhausted memory when drawn (the view
    // makes a surface of the snapshot's size); one of 0 cells, or with
    // fewer lines than rows, is no screen either. The view refuses them as
    // a protocol error.
    #[test]
    fn a_snapshot_of_no_drawable_shape_is_a_protocol_error() {
        let lying = [
            snapshot_line(|v| v["rows"] = 30.into()),
            snapshot_line(|v| v["cols"] = 0.into()),
            snapshot_line(|v| {
                v["cols"] = 65535.into();
                v["rows"] = 65535.into();
                v["lines"] = serde_json::json!([]);
            }),
        ];
        for line in lying {
            match read(&line) {
                Err(AttachError::Protocol(message)) => {
                    assert!(message.contains("no screen a view draws"), "{message}")
                }
                other => panic!("{}: {other:?}", String::from_utf8_lossy(&line)),
            }
        }
        let mut big = Snapshot::blank(1, 1);
        (big.cols, big.rows) = (4096, 2048);
        big.lines = vec![big.lines[0].clone(); 2048];
        assert!(matches!(big.check(), Err(ApplyError::BadShape { .. })));
        (big.cols, big.rows) = (2048, 2048);
        assert!(big.check().is_ok(), "the largest screen a view keeps");
    }

    fn link() -> (LineLink, UnixStream) {
        let (ours, theirs) = UnixStream::pair().expect("a socket pair");
        (LineLink::new(BufReader::new(ours)).expect("a link"), theirs)
    }

    #[test]
    fn lines_are_cut_as_they_come_and_the_end_comes_last() {
        let (mut link, mut launcher) = link();
        let mut notes = Vec::new();
        link.read(&mut notes);
        assert!(notes.is_empty(), "nothing sent yet");
        launcher
            .write_all(b"{\"type\":\"bell\"}\n{\"type\":")
            .unwrap();
        link.read(&mut notes);
        assert!(matches!(notes.as_slice(), [LinkNote::Frame(ToView::Bell)]));
        notes.clear();
        launcher.write_all(b"\"bell\"}\n").unwrap();
        drop(launcher);
        // A read that took less than it could stops there (the loop's
        // `poll` says the end is there to read): the end comes by the next.
        link.read(&mut notes);
        if !matches!(notes.last(), Some(LinkNote::Lost(_))) {
            link.read(&mut notes);
        }
        assert!(matches!(
            notes.as_slice(),
            [LinkNote::Frame(ToView::Bell), LinkNote::Lost(_)]
        ));
    }

    #[test]
    fn a_line_that_is_no_message_breaks_the_link() {
        let (mut link, mut launcher) = link();
        launcher
            .write_all(b"not json\n{\"type\":\"bell\"}\n")
            .unwrap();
        let mut notes = Vec::new();
        link.read(&mut notes);
        assert!(
            matches!(notes.as_slice(), [LinkNote::Broken(_)]),
            "{}",
            notes.len()
        );
    }

    #[test]
    fn queued_events_go_whole_even_when_the_socket_is_full() {
        let (mut link, launcher) = link();
        let key = ViewEvent::Key {
            key: Key::Char('x'),
            mods: Default::default(),
        };
        // Far more than a socket buffer holds: the rest waits, in order.
        for _ in 0..100_000 {
            link.queue(&key);
        }
        link.flush().expect("a partial write is no error");
        assert!(link.wants_write());
        let reader = std::thread::spawn(move || {
            let mut lines = 0;
            for line in BufReader::new(launcher).lines() {
                let line = line.expect("a line");
                assert_eq!(
                    serde_json::from_str::<ViewEvent>(&line).ok(),
                    Some(key.clone())
                );
                lines += 1;
            }
            lines
        });
        while link.wants_write() {
            link.flush().expect("the reader takes it");
            std::thread::yield_now();
        }
        link.close();
        assert_eq!(reader.join().expect("the reader"), 100_000);
    }
}
