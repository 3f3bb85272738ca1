//! The one framing of every Tickloop wire (client ↔ tickhost ↔ launcher ↔
//! view): one JSON value per `\n`-terminated line, never buffering more than
//! a bound. [`LineReader`] skips an overlong line and goes on (a peer's bad
//! line costs only that line); [`read_line_limited`] refuses it (for a peer
//! that must not be read further), and [`read_line_blocking`] is the same
//! for a blocking reader (the CLI's connection, views, handshakes);
//! [`write_line`] writes one value. [`LeanBufReader`] buffers a stream
//! without holding heap while the peer is quiet.

mod lean_reader;

pub use lean_reader::LeanBufReader;
use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};

/// One line read from a peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (without its `\n`), valid UTF-8.
    Text(String),
    /// A line longer than the limit: it was skipped. `len` is its length,
    /// `head` its first [`HEAD_KEPT`] bytes (at most), kept so the request
    /// it carried can still be answered by its id.
    TooLong { len: usize, head: Vec<u8> },
    /// A line that is not UTF-8.
    NotUtf8,
}

/// How much of an overlong line [`LineReader`] keeps ([`Line::TooLong`]'s
/// `head`).
pub const HEAD_KEPT: usize = 256;

/// Reads `\n`-terminated lines, never buffering more than `max` bytes of one.
/// [`LineReader::next`] is cancel-safe: a partial line survives a dropped
/// future (it is kept in the reader, not in the future).
pub struct LineReader<R> {
    inner: LeanBufReader<R>,
    max: usize,
    buf: Vec<u8>,
    skipped: usize,
    /// The first bytes of the line being skipped.
    head: Vec<u8>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// The stream read.
    pub fn get_ref(&self) -> &R {
        self.inner.get_ref()
    }

    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner: LeanBufReader::new(inner),
            max,
            buf: Vec::new(),
            skipped: 0,
            head: Vec::new(),
        }
    }

    /// The next line; `None` at end of stream (a partial last line is
    /// returned as a line first).
    pub async fn next(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                if self.buf.is_empty() && self.skipped == 0 {
                    return Ok(None);
                }
                return Ok(Some(self.take()));
            }
            let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if self.skipped > 0 || self.buf.len() + chunk.len() > self.max {
                // The head: what was buffered, then what comes, up to
                // HEAD_KEPT bytes.
                let buffered = std::mem::take(&mut self.buf);
                if self.skipped == 0 {
                    self.head = buffered[..buffered.len().min(HEAD_KEPT)].to_vec();
                }
                let room = HEAD_KEPT.saturating_sub(self.head.len()).min(chunk.len());
                self.head.extend_from_slice(&chunk[..room]);
                self.skipped += buffered.len() + chunk.len();
            } else {
                self.buf.extend_from_slice(chunk);
            }
            let used = done.unwrap_or(chunk.len());
            self.inner.consume(used);
            if done.is_some() {
                return Ok(Some(self.take()));
            }
        }
    }

    fn take(&mut self) -> Line {
        if self.skipped > 0 {
            let len = self.skipped;
            self.skipped = 0;
            self.buf.clear();
            let head = std::mem::take(&mut self.head);
            return Line::TooLong { len, head };
        }
        let bytes = std::mem::take(&mut self.buf);
        match String::from_utf8(bytes) {
            Ok(mut text) => {
                if text.ends_with('\r') {
                    text.pop();
                }
                Line::Text(text)
            }
            Err(_) => Line::NotUtf8,
        }
    }
}

/// Writes `value` as one JSON line and flushes.
pub async fn write_line<W: AsyncWrite + Unpin, T: Serialize>(
    writer: &mut W,
    value: &T,
) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    writer.write_all(&bytes).await?;
    writer.flush().await
}

/// Reads one `\n`-terminated line into `line` (without the `\n`). `Ok(false)`
/// at a clean EOF; an error when the line passes `max` bytes (without ever
/// buffering more than that) or at EOF inside a line.
pub async fn read_line_limited<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<bool> {
    line.clear();
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return if line.is_empty() {
                Ok(false)
            } else {
                Err(ended_inside_a_line(line.len()))
            };
        }
        let (take, done) = take_line_part(line, buf, max)?;
        reader.consume(take);
        if done {
            return Ok(true);
        }
    }
}

/// Takes what `buf` holds of the current line into `line`: how many bytes
/// of `buf` to consume, and whether the line ended (its `\n`, and a `\r`
/// before it, left out). An error when the line would pass `max` bytes.
fn take_line_part(line: &mut Vec<u8>, buf: &[u8], max: usize) -> std::io::Result<(usize, bool)> {
    let (take, done) = match buf.iter().position(|&b| b == b'\n') {
        Some(pos) => (pos + 1, true),
        None => (buf.len(), false),
    };
    let content = if done { &buf[..take - 1] } else { &buf[..take] };
    if line.len() + content.len() > max {
        return Err(too_long(max));
    }
    line.extend_from_slice(content);
    if done && line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok((take, done))
}

/// The error for a line over `max` bytes (kind `InvalidData`, the only
/// `InvalidData` the line readers make).
fn too_long(max: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("a line longer than {max} bytes (one JSON value per line is expected)"),
    )
}

fn ended_inside_a_line(len: usize) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        format!("the stream ended inside a line (after {len} bytes of it)"),
    )
}

/// [`read_line_limited`] for a blocking reader: the next `\n`-terminated
/// line (without its `\n`, nor a `\r` before it), never buffering more
/// than `max` bytes of it. `Ok(None)` at a clean end of stream; an
/// `InvalidData` error when the line passes `max` bytes, an `UnexpectedEof`
/// one when the stream ends inside a line. A reader with a read timeout
/// gives its `WouldBlock`/`TimedOut` error back as it came.
pub fn read_line_blocking<R: std::io::BufRead>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return if line.is_empty() {
                Ok(None)
            } else {
                Err(ended_inside_a_line(line.len()))
            };
        }
        let (take, done) = take_line_part(&mut line, buf, max)?;
        reader.consume(take);
        if done {
            return Ok(Some(line));
        }
    }
}

/// [`read_line_blocking`] for text: a line that is not UTF-8 is an
/// `InvalidData` error saying so.
pub fn read_text_line_blocking<R: std::io::BufRead>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Option<String>> {
    match read_line_blocking(reader, max)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes).map(Some).map_err(|e| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line that is not UTF-8 ({e})"),
            )
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_bounded() {
        let input: &[u8] = b"short\nthis one is far too long\n\xff\nlast";
        let mut reader = LineReader::new(input, 10);
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text("short".into()))
        );
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::TooLong {
                len: 24,
                head: b"this one is far too long".to_vec()
            })
        );
        assert_eq!(reader.next().await.ok().flatten(), Some(Line::NotUtf8));
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(reader.next().await.ok().flatten(), None);
    }

    #[tokio::test]
    async fn an_overlong_line_keeps_its_head_however_it_arrives() {
        let mut line = br#"{"id":7,"request":{"op":"input","text":""#.to_vec();
        line.extend(std::iter::repeat_n(b'a', 5000));
        line.extend_from_slice(b"\"}}\nnext\n");
        // Chunks of 3 bytes: the head spans many reads.
        let (mut client, server) = tokio::io::duplex(3);
        let mut reader = LineReader::new(server, 100);
        let sent = line.clone();
        tokio::spawn(async move { client.write_all(&sent).await });
        match reader.next().await.ok().flatten() {
            Some(Line::TooLong { len, head }) => {
                assert_eq!(len, line.len() - "\nnext\n".len());
                assert_eq!(head, line[..HEAD_KEPT]);
            }
            other => panic!("expected a long line, got {other:?}"),
        }
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text("next".into()))
        );
    }

    #[test]
    fn blocking_lines_are_bounded() {
        let mut input: &[u8] = b"short\r\nlonger than ten\n";
        let first = read_line_blocking(&mut input, 10);
        assert_eq!(first.ok().flatten(), Some(b"short".to_vec()));
        let second = read_line_blocking(&mut input, 10);
        assert_eq!(
            second.err().map(|e| e.kind()),
            Some(std::io::ErrorKind::InvalidData)
        );
        let mut clean: &[u8] = b"";
        assert!(matches!(read_line_blocking(&mut clean, 10), Ok(None)));
        let mut cut: &[u8] = b"half";
        assert_eq!(
            read_line_blocking(&mut cut, 10).err().map(|e| e.kind()),
            Some(std::io::ErrorKind::UnexpectedEof)
        );
        let mut not_text: &[u8] = b"\xff\n";
        assert!(read_text_line_blocking(&mut not_text, 10).is_err());
    }
}
