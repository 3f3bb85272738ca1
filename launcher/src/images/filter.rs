//! The image sequences in a program's output, taken out before the
//! emulator sees them: sixel (`ESC P` params `q` … `ESC \`) and the kitty
//! graphics protocol (`ESC _ G` … `ESC \`). Everything else passes on as
//! text, byte for byte, in order.
//!
//! A state machine over bytes: what it takes out and passes on is the same
//! whatever the chunking of the output (property-tested below). Plain text
//! costs one `memchr` for ESC a run; only `ESC P` and `ESC _` are looked at
//! further.
//!
//! A DCS is a sixel only when its parameters are digits and `;` and its
//! final byte is `q` with no intermediate (`ESC P $ q` is DECRQSS, `ESC P
//! + q` XTGETTCAP: both pass on). A sequence is ended by `ESC \`; an ESC
//! followed by anything else ends it too (as a VT parser does: the ESC
//! begins the next sequence); CAN or SUB abandon it.

use memchr::{memchr, memchr3};

/// The longest DCS parameter string looked at (a sixel's `P1;P2;P3` is
/// short); a longer one is not a sixel and passes on.
const MAX_DCS_PARAMS: usize = 32;

const ESC: u8 = 0x1b;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// One piece of the output, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece<'a> {
    /// Bytes for the emulator.
    Text(&'a [u8]),
    /// A whole sixel sequence, `ESC P` to `ESC \` (an ST is added when an
    /// ESC of another sequence ended it).
    Sixel(Vec<u8>),
    /// A kitty graphics command: the bytes between `ESC _ G` and `ESC \`
    /// (`control;payload`).
    Kitty(Vec<u8>),
    /// An image sequence longer than the filter's limit, dropped whole:
    /// its kind and its length.
    TooLong { sixel: bool, len: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    /// An ESC ended the last chunk.
    Esc,
    /// `ESC P`, reading parameters.
    DcsHead,
    /// `ESC _`, the next byte tells.
    ApcHead,
    /// Inside a sixel's data.
    Sixel,
    /// An ESC inside a sixel's data.
    SixelEsc,
    /// Inside a kitty command.
    Kitty,
    /// An ESC inside a kitty command.
    KittyEsc,
}

/// The filter's state between chunks.
#[derive(Debug)]
pub struct ImageFilter {
    state: State,
    /// The start of a sequence not yet told apart (`ESC`, `ESC P 1;2`):
    /// text or an image's beginning.
    held: Vec<u8>,
    /// The image sequence being read.
    body: Vec<u8>,
    /// Its length, counted past the limit too.
    body_len: usize,
    /// The most bytes one image sequence may have.
    limit: usize,
}

impl ImageFilter {
    /// A filter that drops image sequences longer than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        ImageFilter {
            state: State::Ground,
            held: Vec::new(),
            body: Vec::new(),
            body_len: 0,
            limit,
        }
    }

    /// Whether no image sequence is being read (and nothing is held).
    pub fn idle(&self) -> bool {
        self.state == State::Ground
    }

    /// Splits `bytes` into pieces, in order, handed to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut dyn FnMut(Piece<'_>)) {
        let mut i = 0;
        // Where the text not yet handed out begins (in Ground).
        let mut start = 0;
        while i < bytes.len() {
            match self.state {
                State::Ground => {
                    let Some(at) = memchr(ESC, &bytes[i..]) else {
                        i = bytes.len();
                        break;
                    };
                    let esc = i + at;
                    match bytes.get(esc + 1) {
                        None => {
                            text(out, &bytes[start..esc]);
                            self.held.clear();
                            self.held.push(ESC);
                            self.state = State::Esc;
                            i = bytes.len();
                            start = i;
                        }
                        Some(&b) if b == b'P' || b == b'_' => {
                            text(out, &bytes[start..esc]);
                            self.held.clear();
                            self.held.extend_from_slice(&[ESC, b]);
                            self.state = head(b);
                            i = esc + 2;
                            start = i;
                        }
                        // Any other sequence is the emulator's; an ESC
                        // after it is looked at again.
                        Some(&b) => i = if b == ESC { esc + 1 } else { esc + 2 },
                    }
                }
                State::Esc => {
                    let b = bytes[i];
                    if b == b'P' || b == b'_' {
                        self.held.push(b);
                        self.state = head(b);
                        i += 1;
                    } else {
                        // Not ours: the ESC goes on as text, and this byte
                        // is read again as text.
                        self.pass_held(out);
                    }
                    start = i;
                }
                State::DcsHead => {
                    let b = bytes[i];
                    if (b.is_ascii_digit() || b == b';') && self.held.len() < MAX_DCS_PARAMS {
                        self.held.push(b);
                        i += 1;
                    } else if b == b'q' {
                        self.held.push(b);
                        self.begin_body(State::Sixel);
                        i += 1;
                    } else {
                        self.pass_held(out);
                    }
                    start = i;
                }
                State::ApcHead => {
                    if bytes[i] == b'G' {
                        self.held.clear();
                        self.begin_body(State::Kitty);
                        i += 1;
                    } else {
                        self.pass_held(out);
                    }
                    start = i;
                }
                State::Sixel | State::Kitty => {
                    let rest = &bytes[i..];
                    let end = memchr3(ESC, CAN, SUB, rest).unwrap_or(rest.len());
                    self.take(&rest[..end]);
                    i += end;
                    if let Some(&b) = rest.get(end) {
                        i += 1;
                        if b == ESC {
                            self.state = if self.state == State::Sixel {
                                State::SixelEsc
                            } else {
                                State::KittyEsc
                            };
                        } else {
                            // CAN or SUB: abandoned, and not shown.
                            self.abandon();
                        }
                    }
                    start = i;
                }
                State::SixelEsc | State::KittyEsc => {
                    let sixel = self.state == State::SixelEsc;
                    if sixel {
                        self.take(b"\x1b\\");
                    }
                    self.finish(sixel, out);
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else {
                        // The ESC began another sequence: read it again.
                        self.held.push(ESC);
                        self.state = State::Esc;
                    }
                    start = i;
                }
            }
        }
        if self.state == State::Ground {
            text(out, &bytes[start..i]);
        }
    }

    /// The held bytes were not an image's start: they go on as text.
    fn pass_held(&mut self, out: &mut dyn FnMut(Piece<'_>)) {
        out(Piece::Text(&self.held));
        self.held.clear();
        self.state = State::Ground;
    }

    fn begin_body(&mut self, state: State) {
        self.body = std::mem::take(&mut self.held);
        self.body_len = self.body.len();
        self.state = state;
    }

    fn take(&mut self, part: &[u8]) {
        self.body_len += part.len();
        if self.body_len <= self.limit {
            self.body.extend_from_slice(part);
        } else if !self.body.is_empty() {
            self.body = Vec::new();
        }
    }

    fn abandon(&mut self) {
        self.body = Vec::new();
        self.body_len = 0;
        self.state = State::Ground;
    }

    fn finish(&mut self, sixel: bool, out: &mut dyn FnMut(Piece<'_>)) {
        let body = std::mem::take(&mut self.body);
        let len = std::mem::take(&mut self.body_len);
        self.state = State::Ground;
        if len > self.limit {
            out(Piece::TooLong { sixel, len });
        } else if sixel {
            out(Piece::Sixel(body));
        } else {
            out(Piece::Kitty(body));
        }
    }
}

fn head(b: u8) -> State {
    if b == b'P' {
        State::DcsHead
    } else {
        State::ApcHead
    }
}

fn text(out: &mut dyn FnMut(Piece<'_>), bytes: &[u8]) {
    if !bytes.is_empty() {
        out(Piece::Text(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What comes out, adjacent text joined.
    #[derive(Debug, PartialEq, Eq)]
    enum Out {
        Text(Vec<u8>),
        Sixel(Vec<u8>),
        Kitty(Vec<u8>),
        TooLong(bool, usize),
    }

    fn run(filter: &mut ImageFilter, chunks: &[&[u8]]) -> Vec<Out> {
        let mut outs: Vec<Out> = Vec::new();
        for chunk in chunks {
            filter.feed(chunk, &mut |piece| match piece {
                Piece::Text(t) => match outs.last_mut() {
                    Some(Out::Text(joined)) => joined.extend_from_slice(t),
                    _ => outs.push(Out::Text(t.to_vec())),
                },
                Piece::Sixel(s) => outs.push(Out::Sixel(s)),
                Piece::Kitty(k) => outs.push(Out::Kitty(k)),
                Piece::TooLong { sixel, len } => outs.push(Out::TooLong(sixel, len)),
            });
        }
        outs
    }

    fn whole(bytes: &[u8]) -> Vec<Out> {
        run(&mut ImageFilter::new(1 << 20), &[bytes])
    }

    #[test]
    fn a_sixel_is_taken_out_whole_and_the_text_around_it_passes() {
        let out = whole(b"a\x1b[1mb\x1bP0;1;0q\"1;1;2;6#0~~\x1b\\c");
        assert_eq!(
            out,
            vec![
                Out::Text(b"a\x1b[1mb".to_vec()),
                Out::Sixel(b"\x1bP0;1;0q\"1;1;2;6#0~~\x1b\\".to_vec()),
                Out::Text(b"c".to_vec()),
            ]
        );
    }

    #[test]
    fn a_kitty_command_is_taken_out_without_its_framing() {
        let out = whole(b"x\x1b_Ga=T,f=24,s=1,v=1;AAAA\x1b\\y");
        assert_eq!(
            out,
            vec![
                Out::Text(b"x".to_vec()),
                Out::Kitty(b"a=T,f=24,s=1,v=1;AAAA".to_vec()),
                Out::Text(b"y".to_vec()),
            ]
        );
    }

    #[test]
    fn other_dcs_and_apc_strings_pass_on() {
        for bytes in [
            &b"\x1bP$qm\x1b\\"[..],
            b"\x1bP+q544e\x1b\\",
            b"\x1bPtmux;\x1b\x1bP\x1b\\",
            b"\x1b_other\x1b\\",
            b"\x1b]8;;x\x1b\\",
        ] {
            assert_eq!(whole(bytes), vec![Out::Text(bytes.to_vec())], "{bytes:?}");
        }
    }

    #[test]
    fn an_esc_of_another_sequence_ends_a_sixel_and_is_read_again() {
        let out = whole(b"\x1bPq#0~\x1b[2Jz");
        assert_eq!(
            out,
            vec![
                Out::Sixel(b"\x1bPq#0~\x1b\\".to_vec()),
                Out::Text(b"\x1b[2Jz".to_vec()),
            ]
        );
        // Even a second image right after.
        let out = whole(b"\x1bPq~\x1bPq~\x1b\\");
        assert_eq!(
            out,
            vec![
                Out::Sixel(b"\x1bPq~\x1b\\".to_vec()),
                Out::Sixel(b"\x1bPq~\x1b\\".to_vec()),
            ]
        );
    }

    #[test]
    fn can_abandons_an_image() {
        assert_eq!(
            whole(b"\x1bPq~~\x18after"),
            vec![Out::Text(b"after".to_vec())]
        );
    }

    #[test]
    fn a_sequence_past_the_limit_is_dropped_and_said() {
        let mut filter = ImageFilter::new(16);
        let out = run(&mut filter, &[b"\x1bPq", &[b'~'; 40], b"\x1b\\ok"]);
        assert_eq!(
            out,
            vec![Out::TooLong(true, 3 + 40 + 2), Out::Text(b"ok".to_vec())]
        );
        assert!(filter.body.capacity() <= 64, "the body is not kept");
    }

    fn output() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..20),
            Just(b"\x1bPq#0;2;0;0;0#0!5~-~~\x1b\\".to_vec()),
            Just(b"\x1bP0;1;0q\"1;1;4;6~~~~\x1b\\".to_vec()),
            Just(b"\x1b_Ga=T,f=24,s=1,v=1;AAAA\x1b\\".to_vec()),
            Just(b"\x1b_Gm=1;AAAA\x1b\\".to_vec()),
            Just(b"\x1bP$qm\x1b\\".to_vec()),
            Just(b"\x1b[31mred\x1b[0m".to_vec()),
            Just(b"\x1b".to_vec()),
            Just(b"\x1bP".to_vec()),
            Just(b"\x1b_".to_vec()),
            Just(b"\x1b\\".to_vec()),
            Just(vec![CAN]),
        ];
        proptest::collection::vec(piece, 0..12).prop_map(|p| p.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Splitting the output anywhere changes nothing that comes out.
        #[test]
        fn any_chunking_gives_the_same_pieces(
            bytes in output(),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
            limit in prop_oneof![Just(1usize << 20), 8usize..40],
        ) {
            let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut from = 0;
            for cut in at {
                chunks.push(&bytes[from..cut]);
                from = cut;
            }
            chunks.push(&bytes[from..]);
            let split = run(&mut ImageFilter::new(limit), &chunks);
            let one = run(&mut ImageFilter::new(limit), &[&bytes]);
            prop_assert_eq!(split, one);
        }

        /// Output with no `ESC P` or `ESC _` passes on untouched.
        #[test]
        fn output_without_image_starts_passes_whole(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let starts = bytes.windows(2).any(|w| w[0] == ESC && (w[1] == b'P' || w[1] == b'_'));
            prop_assume!(!starts);
            let out = whole(&bytes);
            if bytes.is_empty() {
                prop_assert!(out.is_empty());
            } else if bytes.last() == Some(&ESC) {
                // A trailing ESC waits for the next byte.
                prop_assert_eq!(out, if bytes.len() > 1 { vec![Out::Text(bytes[..bytes.len() - 1].to_vec())] } else { vec![] });
            } else {
                prop_assert_eq!(out, vec![Out::Text(bytes)]);
            }
        }
    }
}
