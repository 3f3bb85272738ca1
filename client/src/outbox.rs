//! One writer per connection: a task owns a socket's write half and writes
//! each queued line whole. Nothing that gives up waiting (a timeout, a
//! dropped request, a `select!` that took another branch) can leave half a
//! line on the wire, which would glue the next line to it and make the peer
//! drop the connection. Lines wait on a queue bounded in bytes (a sender
//! waits for room: memory stays bounded when the peer stops reading; a line
//! longer than the bound waits until the queue is empty, then goes alone),
//! and every sender learns that the peer has gone once the writer has
//! stopped (a write failed).
//!
//! A line queued with [`Outbox::send_abandonable`] is skipped when its
//! [`Ticket`] is dropped before the writer reaches it (a request that timed
//! out before it was written is never sent late); once the writer has
//! started it, the line is finished.

use serde::Serialize;
use std::sync::Arc;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot, OwnedSemaphorePermit, Semaphore, TryAcquireError};

/// One line on its way, and who waits for it to be written.
struct Queued {
    line: Vec<u8>,
    /// Its room in the queue, given back once it is written.
    _room: OwnedSemaphorePermit,
    /// Told once the line is written; with `abandonable`, a closed one
    /// means nobody wants the line any more.
    written: Option<oneshot::Sender<()>>,
    abandonable: bool,
}

/// The sending side of a connection's writer task.
#[derive(Clone)]
pub struct Outbox {
    /// Boxed: the channel allocates its slots 32 at a time, and a quiet
    /// connection keeps that block for its life (tickhost has one per
    /// instance): 256 bytes of boxes, not 1.8 kB of lines.
    tx: mpsc::UnboundedSender<Box<Queued>>,
    /// The queue's room, in bytes.
    room: Arc<Semaphore>,
    max_bytes: usize,
}

/// A line queued with [`Outbox::send_abandonable`]: dropping it before the
/// line was written takes the line back.
pub struct Ticket {
    written: oneshot::Receiver<()>,
}

impl Ticket {
    /// Waits until the line is written; an error when it never will be (the
    /// writer stopped).
    pub async fn written(self) -> std::io::Result<()> {
        self.written.await.map_err(|_| gone())
    }
}

fn gone() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the connection's writer has stopped (the peer went away)",
    )
}

fn encode<T: Serialize>(value: &T) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    Ok(line)
}

impl Outbox {
    /// Starts the writer task of `writer`, with room for `max_bytes` of
    /// lines waiting (at least one byte). It ends when a write fails or
    /// every [`Outbox`] is dropped (after writing what was queued), and
    /// then shuts `writer` down.
    pub fn spawn<W>(writer: W, max_bytes: usize) -> Outbox
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let max_bytes = max_bytes.clamp(1, Semaphore::MAX_PERMITS);
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(writer, rx));
        Outbox {
            tx,
            room: Arc::new(Semaphore::new(max_bytes)),
            max_bytes,
        }
    }

    /// The room a line of `len` bytes takes (all of it, for a longer one).
    fn permits(&self, len: usize) -> u32 {
        u32::try_from(len.clamp(1, self.max_bytes)).unwrap_or(u32::MAX)
    }

    /// Queues `line`, waiting for its room. Cancel-safe: a dropped call
    /// queued nothing.
    async fn queue(
        &self,
        line: Vec<u8>,
        written: Option<oneshot::Sender<()>>,
        abandonable: bool,
    ) -> std::io::Result<()> {
        let room = self
            .room
            .clone()
            .acquire_many_owned(self.permits(line.len()))
            .await
            .map_err(|_| gone())?;
        if self.tx.is_closed() {
            return Err(gone());
        }
        self.tx
            .send(Box::new(Queued {
                line,
                _room: room,
                written,
                abandonable,
            }))
            .map_err(|_| gone())
    }

    /// Queues `value` as one JSON line, waiting for room; an error when the
    /// writer has stopped. Cancel-safe: a dropped call queued nothing.
    pub async fn send<T: Serialize>(&self, value: &T) -> std::io::Result<()> {
        self.queue(encode(value)?, None, false).await
    }

    /// [`Outbox::send`], and waits until the line is written (before the
    /// process exits, say).
    pub async fn send_written<T: Serialize>(&self, value: &T) -> std::io::Result<()> {
        let (written, done) = oneshot::channel();
        self.queue(encode(value)?, Some(written), false).await?;
        done.await.map_err(|_| gone())
    }

    /// Queues `value` unless the queue has no room for it or the writer
    /// has stopped (what is dropped then is advisory: a progress line,
    /// say); whether it was queued.
    pub fn offer<T: Serialize>(&self, value: &T) -> bool {
        let Ok(line) = encode(value) else {
            return false;
        };
        let room = match self
            .room
            .clone()
            .try_acquire_many_owned(self.permits(line.len()))
        {
            Ok(room) => room,
            Err(TryAcquireError::NoPermits | TryAcquireError::Closed) => return false,
        };
        self.tx
            .send(Box::new(Queued {
                line,
                _room: room,
                written: None,
                abandonable: false,
            }))
            .is_ok()
    }

    /// Queues `value`, waiting for room; the line is taken back when the
    /// returned [`Ticket`] is dropped before the writer reaches it.
    pub async fn send_abandonable<T: Serialize>(&self, value: &T) -> std::io::Result<Ticket> {
        let (written, ticket) = oneshot::channel();
        self.queue(encode(value)?, Some(written), true).await?;
        Ok(Ticket { written: ticket })
    }

    /// Resolves once the writer has stopped (a write failed: the peer has
    /// gone).
    pub async fn closed(&self) {
        self.tx.closed().await;
    }

    /// Whether the writer has stopped.
    pub fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }
}

/// The writer task: each line whole, in order, until a write fails or
/// every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Box<Queued>>,
) {
    while let Some(queued) = rx.recv().await {
        if queued.abandonable && queued.written.as_ref().is_some_and(|w| w.is_closed()) {
            continue;
        }
        let written = async {
            writer.write_all(&queued.line).await?;
            writer.flush().await
        };
        if written.await.is_err() {
            // Everyone waiting hears it: their senders see the channel
            // closed once `rx` is dropped here.
            return;
        }
        if let Some(told) = queued.written {
            let _ = told.send(());
        }
    }
    let _ = writer.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncBufReadExt;

    #[tokio::test]
    async fn lines_are_written_whole_and_abandoned_ones_are_skipped() {
        let (near, far) = tokio::io::duplex(16);
        let outbox = Outbox::spawn(near, 1024);
        let reading = tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(far).lines();
            let mut got = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                got.push(line);
            }
            got
        });
        // More than the pipe holds at once.
        let first = outbox
            .send_abandonable(&"a".repeat(64))
            .await
            .expect("queued");
        // A ticket dropped before its line was reached: never written.
        let (written, ticket) = oneshot::channel();
        drop(ticket);
        outbox
            .queue(b"\"skipped\"\n".to_vec(), Some(written), true)
            .await
            .expect("queued");
        outbox.send(&"last").await.expect("queued");
        first.written().await.expect("written");
        drop(outbox);
        let got = reading.await.expect("the reader");
        assert_eq!(
            got,
            vec![format!("\"{}\"", "a".repeat(64)), "\"last\"".into()]
        );
    }

    #[tokio::test]
    async fn a_cancelled_sender_never_cuts_a_line() {
        let (near, far) = tokio::io::duplex(8);
        let outbox = Outbox::spawn(near, 1024);
        // A send given up on while the line is being written (the pipe is
        // full and nobody reads): the line is still finished later.
        let big = "b".repeat(100);
        let gave_up = tokio::time::timeout(
            std::time::Duration::from_millis(1),
            outbox.send_written(&big),
        )
        .await;
        assert!(gave_up.is_err(), "nobody reads yet: the write waits");
        outbox.send(&"next").await.expect("queued");
        drop(outbox);
        let mut lines = tokio::io::BufReader::new(far).lines();
        assert_eq!(
            lines.next_line().await.ok().flatten(),
            Some(format!("\"{big}\""))
        );
        assert_eq!(
            lines.next_line().await.ok().flatten(),
            Some("\"next\"".into())
        );
    }
}
