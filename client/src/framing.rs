//! The one framing of every Tickloop wire (client ↔ tickhost ↔ launcher ↔
//! view): one JSON value per `\n`-terminated line, never buffering more than
//! a bound. [`LineReader`] skips an overlong line and goes on (a peer's bad
//! line costs only that line); [`read_line_limited`] refuses it (for a peer
//! that must not be read further); [`write_line`] writes one value.

use serde::Serialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// One line read from a peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line (without its `\n`), valid UTF-8.
    Text(String),
    /// A line longer than the limit: it was skipped; the value is its length.
    TooLong(usize),
    /// A line that is not UTF-8.
    NotUtf8,
}

/// Reads `\n`-terminated lines, never buffering more than `max` bytes of one.
/// [`LineReader::next`] is cancel-safe: a partial line survives a dropped
/// future (it is kept in the reader, not in the future).
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    buf: Vec<u8>,
    skipped: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner: BufReader::new(inner),
            max,
            buf: Vec::new(),
            skipped: 0,
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
                self.skipped += self.buf.len() + chunk.len();
                self.buf = Vec::new();
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
            return Line::TooLong(len);
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
                Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the connection closed inside a line",
                ))
            };
        }
        let (take, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(pos) => (pos + 1, true),
            None => (buf.len(), false),
        };
        let content = if done { &buf[..take - 1] } else { &buf[..take] };
        if line.len() + content.len() > max {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("a line longer than {max} bytes"),
            ));
        }
        line.extend_from_slice(content);
        reader.consume(take);
        if done {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(true);
        }
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
        assert_eq!(reader.next().await.ok().flatten(), Some(Line::TooLong(24)));
        assert_eq!(reader.next().await.ok().flatten(), Some(Line::NotUtf8));
        assert_eq!(
            reader.next().await.ok().flatten(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(reader.next().await.ok().flatten(), None);
    }
}
