//! The bytes the emulator's parser is given: OSC payloads cut at
//! [`MAX_OSC_PAYLOAD`] and zero-width characters cut at [`MAX_MARKS`] in a
//! row, the same whatever the chunking, plain runs skipped whole.

use super::MAX_OSC_PAYLOAD;

/// Drops OSC payload bytes past [`MAX_OSC_PAYLOAD`], and zero-width
/// characters past [`MAX_MARKS`] in a row (the emulator adds every one to
/// the cell before the cursor, without limit), across chunks. A printable
/// character ends a row of marks; escape sequences do not, so moving the
/// cursor back cannot pile more on a cell.
#[derive(Debug, Default)]
pub(super) struct OscLimiter {
    pub(super) state: OscState,
    payload: usize,
    /// Zero-width characters since the last printable one.
    marks: usize,
    /// The UTF-8 sequence being read, and how long it will be.
    utf8: [u8; 4],
    utf8_len: usize,
    utf8_need: usize,
}

/// The most zero-width characters (combining marks, joiners, selectors)
/// passed on in a row; tmux keeps a few per cell too.
pub const MAX_MARKS: usize = 16;

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) enum OscState {
    #[default]
    Ground,
    Esc,
    Csi,
    Osc,
    OscEsc,
}

impl OscLimiter {
    /// The parts of `bytes` to pass on, as ranges (all of it, mostly).
    pub(super) fn filter(&mut self, bytes: &[u8], out: &mut Vec<std::ops::Range<usize>>) {
        let mut start = 0;
        // Where the character being read began, when in this chunk.
        let mut char_start = None;
        let mut i = 0;
        while i < bytes.len() {
            if self.state == OscState::Ground {
                // Most output is plain ASCII text and controls: skip the
                // run at once (one comparison a byte; it was most of the
                // keeper's time besides the emulator's).
                let run = plain_run(&bytes[i..]);
                if run > 0 {
                    self.utf8_need = 0;
                    // A printable character ends a row of marks (looked
                    // for only when there is one).
                    if self.marks > 0 && bytes[i..i + run].iter().any(|b| (0x20..0x7f).contains(b))
                    {
                        self.marks = 0;
                    }
                    i += run;
                    continue;
                }
            }
            let b = bytes[i];
            match self.state {
                OscState::Ground if b >= 0x80 => {
                    if b & 0xc0 != 0x80 || self.utf8_need == 0 {
                        // A lead byte (or a stray continuation): start over.
                        self.utf8_need = match b {
                            0xc0..=0xdf => 2,
                            0xe0..=0xef => 3,
                            0xf0..=0xf7 => 4,
                            _ => 0,
                        };
                        self.utf8_len = 0;
                        char_start = Some(i);
                    }
                    if self.utf8_need > 0 {
                        self.utf8[self.utf8_len] = b;
                        self.utf8_len += 1;
                    }
                    if self.utf8_need > 0 && self.utf8_len == self.utf8_need {
                        self.utf8_need = 0;
                        let zero_width = std::str::from_utf8(&self.utf8[..self.utf8_len])
                            .ok()
                            .and_then(|s| s.chars().next())
                            .is_some_and(|c| unicode_width::UnicodeWidthChar::width(c) == Some(0));
                        if !zero_width {
                            self.marks = 0;
                        } else {
                            self.marks += 1;
                            if let (true, Some(from)) = (self.marks > MAX_MARKS, char_start) {
                                // Drop this character: pass what came before it.
                                if start < from {
                                    out.push(start..from);
                                }
                                start = i + 1;
                            }
                        }
                    }
                }
                OscState::Ground => {
                    self.utf8_need = 0;
                    if b == 0x1b {
                        self.state = OscState::Esc;
                    } else if (0x20..0x7f).contains(&b) {
                        self.marks = 0;
                    }
                }
                OscState::Esc => {
                    self.state = match b {
                        b']' => {
                            self.payload = 0;
                            OscState::Osc
                        }
                        b'[' => OscState::Csi,
                        0x1b => OscState::Esc,
                        _ => OscState::Ground,
                    };
                }
                OscState::Csi => match b {
                    0x1b => self.state = OscState::Esc,
                    0x18 | 0x1a | 0x40..=0x7e => self.state = OscState::Ground,
                    _ => {}
                },
                OscState::Osc => match b {
                    0x07 | 0x18 | 0x1a => self.state = OscState::Ground,
                    0x1b => self.state = OscState::OscEsc,
                    _ => {
                        self.payload += 1;
                        if self.payload > MAX_OSC_PAYLOAD {
                            // Drop this byte: pass what came before it.
                            if start < i {
                                out.push(start..i);
                            }
                            start = i + 1;
                        }
                    }
                },
                // ESC inside an OSC: `\` ends it (ST), `]` starts a new one,
                // anything else ended it and began another sequence.
                OscState::OscEsc => {
                    self.state = match b {
                        b']' => {
                            self.payload = 0;
                            OscState::Osc
                        }
                        0x1b => OscState::Esc,
                        _ => OscState::Ground,
                    };
                }
            }
            i += 1;
        }
        if start < bytes.len() {
            out.push(start..bytes.len());
        }
    }
}

/// How long the start of some output is up to its first ESC or non-ASCII
/// byte.
fn plain_run(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const ESCS: u64 = u64::from_ne_bytes([0x1b; 8]);
    // Eight bytes at a time: a byte with its high bit set, or one equal to
    // ESC (a zero byte of `word ^ ESCS`), marks the word. The lowest marked
    // byte is exact (a zero byte's borrow marks only bytes above it); the
    // bytes are read little-endian so that the lowest is the first.
    let mut words = bytes.chunks_exact(8);
    let mut done = 0;
    for chunk in words.by_ref() {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let escs = word ^ ESCS;
        let marked = (word | (escs.wrapping_sub(ONES) & !escs)) & HIGHS;
        if marked != 0 {
            return done + (marked.trailing_zeros() / 8) as usize;
        }
        done += 8;
    }
    done + words
        .remainder()
        .iter()
        .position(|&b| b == 0x1b || b >= 0x80)
        .unwrap_or(words.remainder().len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_run_ends_at_the_first_esc_or_high_byte() {
        for len in 0..40 {
            for at in 0..=len {
                for stop in [0x1b, 0x80, 0xc3, 0xff] {
                    let mut bytes = vec![b'a'; len];
                    if at < len {
                        bytes[at] = stop;
                        // What follows it does not move the end.
                        for later in bytes.iter_mut().skip(at + 1).step_by(3) {
                            *later = 0x1b;
                        }
                    }
                    assert_eq!(plain_run(&bytes), at.min(len), "{bytes:?}");
                }
            }
        }
        // Every byte below ESC and from ESC + 1 to 0x7f is plain, 0x1a
        // and 0x1c (ESC's neighbours) included.
        let plain: Vec<u8> = (0u8..0x80).filter(|&b| b != 0x1b).collect();
        assert_eq!(plain_run(&plain), plain.len());
    }

    /// What the limiter passes of `stream` cut into `chunk`-byte pieces.
    fn passed(stream: &[u8], chunk: usize) -> Vec<u8> {
        let mut limiter = OscLimiter::default();
        let mut out = Vec::new();
        for piece in stream.chunks(chunk.max(1)) {
            let mut parts = Vec::new();
            limiter.filter(piece, &mut parts);
            for range in parts {
                out.extend_from_slice(&piece[range]);
            }
        }
        out
    }

    proptest::proptest! {
        /// However the output is cut, the same bytes pass: plain runs are
        /// skipped whole, one byte at a time they are not.
        #[test]
        fn the_limiter_passes_the_same_whatever_the_chunks(
            pieces in proptest::collection::vec(proptest::prop_oneof![
                proptest::collection::vec(0x20u8..0x7f, 0..40),
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..8),
                proptest::prelude::Just(b"\x1b]0;title\x07".to_vec()),
                proptest::prelude::Just("e\u{301}\u{301}\u{301}\u{301}\u{301}".as_bytes().repeat(4)),
                proptest::prelude::Just(b"\x1b[31m".to_vec()),
            ], 0..30),
            chunk in 1usize..64,
        ) {
            let stream: Vec<u8> = pieces.concat();
            let whole = passed(&stream, stream.len());
            proptest::prop_assert_eq!(passed(&stream, 1), whole.clone());
            proptest::prop_assert_eq!(passed(&stream, chunk), whole);
        }
    }

    #[test]
    fn a_huge_osc_payload_is_cut_and_the_sequence_still_ends() {
        let mut limiter = OscLimiter::default();
        let mut stream = b"x\x1b]1337;File=".to_vec();
        stream.extend(std::iter::repeat_n(b'A', MAX_OSC_PAYLOAD * 2));
        stream.extend(b"\x07y");
        let mut passed = 0usize;
        let mut tail = Vec::new();
        for chunk in stream.chunks(65536) {
            let mut parts = Vec::new();
            limiter.filter(chunk, &mut parts);
            for p in parts.into_iter().map(|r| &chunk[r]) {
                passed += p.len();
                tail = p.to_vec();
            }
        }
        assert!(passed <= MAX_OSC_PAYLOAD + 64, "{passed}");
        assert!(tail.ends_with(b"\x07y"));
        assert_eq!(limiter.state, OscState::Ground);
    }
}
