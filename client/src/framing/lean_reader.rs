//! [`LeanBufReader`]: a buffered reader that holds no heap buffer while the
//! peer is quiet (issue 51: an idle instance's connections, one in the
//! launcher and one in tickhost, each kept an 8 KiB `BufReader` for life).
//!
//! Short reads (a keystroke, a request) land in a small array inside the
//! reader. A read that fills it means more is coming: the reader then reads
//! into a heap buffer ([`LARGE`] bytes unless told), and keeps it while
//! reads fill it.
//! Once a short read has been consumed, the heap buffer is given back.

use std::io;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncBufRead, AsyncRead, ReadBuf};

/// The array inside the reader, for short reads.
pub const SMALL: usize = 512;
/// The heap buffer, while a peer sends more than [`SMALL`] at a time
/// ([`LeanBufReader::new`]'s).
pub const LARGE: usize = 8 * 1024;

/// A buffered reader over `R` whose heap buffer lives only while the peer
/// sends more than [`SMALL`] bytes at a time.
pub struct LeanBufReader<R> {
    inner: R,
    small: [u8; SMALL],
    /// Empty (no allocation) unless the last reads filled their buffer.
    large: Vec<u8>,
    /// The bytes read and not consumed: `start..end` of `large` when it is
    /// allocated, of `small` otherwise.
    start: usize,
    end: usize,
    /// The last read filled its buffer: the peer likely has more.
    last_filled: bool,
    /// The size of `large` when it is made.
    large_capacity: usize,
}

impl<R> LeanBufReader<R> {
    pub fn new(inner: R) -> Self {
        LeanBufReader::with_capacity(inner, LARGE)
    }

    /// A reader whose heap buffer, while the peer sends more than
    /// [`SMALL`] at a time, is `large` bytes (at least [`SMALL`]).
    pub fn with_capacity(inner: R, large: usize) -> Self {
        LeanBufReader {
            inner,
            small: [0; SMALL],
            large: Vec::new(),
            start: 0,
            end: 0,
            last_filled: false,
            large_capacity: large.max(SMALL),
        }
    }

    /// The stream read.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The heap bytes held now (0 while the peer is quiet).
    pub fn heap_bytes(&self) -> usize {
        self.large.capacity()
    }

    fn buffered(&self) -> &[u8] {
        if self.large.is_empty() {
            &self.small[self.start..self.end]
        } else {
            &self.large[self.start..self.end]
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncBufRead for LeanBufReader<R> {
    fn poll_fill_buf(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<&[u8]>> {
        let this = self.get_mut();
        if this.start == this.end {
            this.start = 0;
            this.end = 0;
            if !this.last_filled && !this.large.is_empty() {
                // Drained after a short read: hold no heap while waiting.
                this.large = Vec::new();
            }
            let target: &mut [u8] = if this.large.is_empty() {
                &mut this.small
            } else {
                &mut this.large
            };
            let room = target.len();
            let mut read = ReadBuf::new(target);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            this.end = n;
            this.last_filled = n == room;
            if this.last_filled && this.large.is_empty() {
                // The small array filled: the peer sends more than it
                // holds, so the next reads go to the heap buffer.
                let mut large = vec![0; this.large_capacity];
                large[..n].copy_from_slice(&this.small[..n]);
                this.large = large;
            }
        }
        Poll::Ready(Ok(this.buffered()))
    }

    fn consume(self: Pin<&mut Self>, amt: usize) {
        let this = self.get_mut();
        this.start = (this.start + amt).min(this.end);
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LeanBufReader<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let available = ready!(self.as_mut().poll_fill_buf(cx))?;
        let n = available.len().min(out.remaining());
        out.put_slice(&available[..n]);
        self.consume(n);
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

    /// A reader over one end of a real socket pair, the writer the other.
    fn pair() -> (
        LeanBufReader<tokio::net::UnixStream>,
        tokio::net::UnixStream,
    ) {
        let (ours, theirs) = tokio::net::UnixStream::pair().expect("a socket pair");
        (LeanBufReader::new(ours), theirs)
    }

    #[tokio::test]
    async fn short_lines_never_take_heap() {
        let (mut reader, mut peer) = pair();
        for i in 0..50 {
            let line = format!("{{\"key\":{i}}}\n");
            peer.write_all(line.as_bytes()).await.expect("write");
            let mut got = String::new();
            reader.read_line(&mut got).await.expect("read");
            assert_eq!(got, line);
            assert_eq!(reader.heap_bytes(), 0, "line {i} took heap");
        }
    }

    #[tokio::test]
    async fn a_burst_is_read_whole_and_its_buffer_given_back_after() {
        let (mut reader, mut peer) = pair();
        // More than the small array and the heap buffer together, in lines.
        let lines: Vec<String> = (0..3000).map(|i| format!("line number {i}\n")).collect();
        let burst = lines.concat();
        assert!(burst.len() > SMALL + 2 * LARGE);
        let writer = tokio::spawn(async move {
            peer.write_all(burst.as_bytes()).await.expect("write");
            peer
        });
        let mut saw_heap = false;
        for want in &lines {
            let mut got = String::new();
            reader.read_line(&mut got).await.expect("read");
            assert_eq!(&got, want);
            saw_heap |= reader.heap_bytes() > 0;
        }
        assert!(saw_heap, "a burst is read through the heap buffer");
        let mut peer = writer.await.expect("the writer");
        // The burst is over: the next short line is read, and after it
        // nothing is held.
        peer.write_all(b"quiet\n").await.expect("write");
        let mut got = String::new();
        reader.read_line(&mut got).await.expect("read");
        // The burst's tail may still sit in the heap buffer, read with a
        // full buffer; the read after it gives it back.
        if reader.heap_bytes() > 0 {
            peer.write_all(b"again\n").await.expect("write");
            let mut again = String::new();
            reader.read_line(&mut again).await.expect("read");
            assert_eq!(again, "again\n");
        }
        assert_eq!(
            reader.heap_bytes(),
            0,
            "a quiet peer's reader holds no heap"
        );
    }

    #[tokio::test]
    async fn reads_pass_through_and_the_end_is_seen() {
        let (mut reader, mut peer) = pair();
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let sent = bytes.clone();
        tokio::spawn(async move {
            peer.write_all(&sent).await.expect("write");
        });
        let mut got = Vec::new();
        reader.read_to_end(&mut got).await.expect("read to the end");
        assert_eq!(got, bytes);
        assert!(reader.fill_buf().await.expect("fill at the end").is_empty());
    }
}
