//! Newline framing of the Tick's stdout (spec 3.1), with no I/O: bytes in, complete lines
//! out, with the 8 MiB line limit enforced while reading.

use std::collections::VecDeque;
use thiserror::Error;

/// A framing violation (spec 3.6). Each carries the start of the offending
/// line, at most [`PREFIX_LEN`] bytes of it.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum FramingError {
    /// A line grew past the limit without a newline.
    #[error("a line on stdout is longer than {limit} bytes")]
    LineTooLong { limit: usize, prefix: Vec<u8> },
    /// Output ended (EOF) in the middle of a line.
    #[error("output on stdout ended without a terminating newline ({len} bytes left over)")]
    Unterminated { len: usize, prefix: Vec<u8> },
}

impl FramingError {
    /// The first bytes of the offending line.
    pub fn prefix(&self) -> &[u8] {
        match self {
            FramingError::LineTooLong { prefix, .. }
            | FramingError::Unterminated { prefix, .. } => prefix,
        }
    }
}

/// How many bytes of an offending line are kept for the report.
pub const PREFIX_LEN: usize = 256;

/// Splits a byte stream into lines of at most `max_line` bytes (the `\n` not
/// counted). Memory stays bounded: bytes of a line past the limit are never
/// stored; the reader reports the error once every complete line before it
/// has been taken, and ignores everything after it.
#[derive(Debug)]
pub struct LineSplitter {
    max_line: usize,
    complete: VecDeque<Vec<u8>>,
    partial: Vec<u8>,
    overflow: Overflow,
}

#[derive(Debug, PartialEq, Eq)]
enum Overflow {
    No,
    Pending,
    Reported,
}

impl LineSplitter {
    /// A reader that accepts lines up to `max_line` bytes.
    pub fn new(max_line: usize) -> Self {
        LineSplitter {
            max_line,
            complete: VecDeque::new(),
            partial: Vec::new(),
            overflow: Overflow::No,
        }
    }

    /// Appends bytes read from the Tick's stdout.
    pub fn push(&mut self, mut bytes: &[u8]) {
        while self.overflow == Overflow::No && !bytes.is_empty() {
            let room = self.max_line.saturating_sub(self.partial.len());
            let newline = bytes.iter().position(|&byte| byte == b'\n');
            match newline {
                Some(end) if end <= room => {
                    self.partial.extend_from_slice(&bytes[..end]);
                    self.complete.push_back(std::mem::take(&mut self.partial));
                    bytes = &bytes[end + 1..];
                }
                None if bytes.len() <= room => {
                    self.partial.extend_from_slice(bytes);
                    bytes = &[];
                }
                _ => {
                    let keep = room.min(PREFIX_LEN.saturating_sub(self.partial.len()));
                    self.partial
                        .extend_from_slice(&bytes[..keep.min(bytes.len())]);
                    self.partial.truncate(PREFIX_LEN);
                    self.overflow = Overflow::Pending;
                }
            }
        }
    }

    /// The next complete line (without its `\n`), or the error of a line
    /// past the limit once the lines before it are taken; `None` when no
    /// complete line is buffered.
    pub fn next_line(&mut self) -> Option<Result<Vec<u8>, FramingError>> {
        if let Some(line) = self.complete.pop_front() {
            return Some(Ok(line));
        }
        if self.overflow == Overflow::Pending {
            self.overflow = Overflow::Reported;
            return Some(Err(FramingError::LineTooLong {
                limit: self.max_line,
                prefix: prefix_of(&self.partial),
            }));
        }
        None
    }

    /// At EOF: an error when a partial line is left over.
    pub fn finish(&mut self) -> Result<(), FramingError> {
        if self.overflow != Overflow::No || self.partial.is_empty() {
            return Ok(());
        }
        let partial = std::mem::take(&mut self.partial);
        Err(FramingError::Unterminated {
            len: partial.len(),
            prefix: prefix_of(&partial),
        })
    }

    /// Bytes held right now (complete lines and the partial one).
    pub fn buffered(&self) -> usize {
        self.partial.len() + self.complete.iter().map(Vec::len).sum::<usize>()
    }
}

/// The first [`PREFIX_LEN`] bytes of `line`.
pub fn prefix_of(line: &[u8]) -> Vec<u8> {
    line[..line.len().min(PREFIX_LEN)].to_vec()
}
