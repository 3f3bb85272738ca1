//! What the view's terminal can draw, asked at attach as tmux and yazi ask
//! it: the kitty graphics query (`ESC _ G i=31,…,a=q;AAAA ESC \`), the cell
//! size in pixels (`CSI 16 t`, and the text area's, `CSI 14 t`, when the
//! first is not answered), then the device attributes (DA1, `CSI c`), which
//! every terminal answers, last: its answer (a `4` among its parameters
//! means sixel) ends the probe, so a terminal that answers nothing else
//! never makes the view wait.
//!
//! [`ProbeFilter`] is the parsing, bytes in and capabilities out, with no
//! I/O and no clock: the attach view's loop feeds it what it reads from its
//! terminal, and it takes the answers out (the device attributes answer
//! passes on, for [`crate::colors`], which ends its own questions with the
//! same query). [`GraphicsAnswers`] keeps the time around it (what is held
//! for the rest of an answer, the safety cap), and [`winsize_cell_px`] is
//! the one read of the terminal (its size in pixels, `TIOCGWINSZ`).

use crate::answers::{Pending, Scan};
use std::time::{Duration, Instant};

/// The kitty graphics query's image id: its answer names it.
const KITTY_QUERY_ID: &str = "31";
/// How long the start of what may be an answer is held for its rest.
const HOLD: Duration = Duration::from_millis(40);
/// The safety cap: a terminal that has not answered the device attributes
/// by then is taken to draw nothing, and a lone ESC goes on at once.
const AWAIT_LIMIT: Duration = Duration::from_secs(5);
/// The longest answer recognised (a kitty answer carries an error text).
const MAX_ANSWER: usize = 512;

/// What the view's terminal can draw, as it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// The device attributes list 4: sixel graphics.
    pub sixel: bool,
    /// The kitty graphics query was answered `OK`.
    pub kitty: bool,
    /// The size of a cell in pixels (width, height), when known.
    pub cell_px: Option<(u16, u16)>,
}

impl Capabilities {
    /// Whether the terminal draws images at all.
    pub fn draws_images(&self) -> bool {
        self.sixel || self.kitty
    }
}

/// The questions, the device attributes last. The caller sends
/// [`crate::colors::questions`] after them, which end with the same
/// device attributes query: one answer then ends both.
pub fn questions() -> Vec<u8> {
    format!("\x1b_Gi={KITTY_QUERY_ID},s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\\x1b[16t\x1b[14t").into_bytes()
}

/// Takes the answers to [`questions`] out of a terminal's input: the
/// kitty answer (`ESC _ G i=31;OK ESC \`), the cell size (`ESC [ 6 ; H ; W
/// t`), the text area (`ESC [ 4 ; H ; W t`); reads the device attributes
/// (`ESC [ ? 62 ; 4 ; 22 c`) and passes them on. Everything else passes
/// through untouched and in order.
#[derive(Debug, Default)]
pub struct ProbeFilter {
    /// The start of a possible answer, waiting for its rest; whether the
    /// device attributes have not come (a partial answer at the end of a
    /// read is held for its rest only then).
    pending: Pending,
    found: Capabilities,
    /// The text area in pixels (`CSI 4 t`), for the cell size when `CSI 6
    /// t` is not answered.
    area_px: Option<(u16, u16)>,
    /// The capabilities were reported.
    reported: bool,
}

impl ProbeFilter {
    /// A filter for a terminal that was just asked [`questions`].
    pub fn asked() -> Self {
        ProbeFilter {
            pending: Pending::asked(),
            ..ProbeFilter::default()
        }
    }

    /// Takes `input`; appends what is not an answer to `out`. The
    /// capabilities once, when the device attributes answer came; `grid`
    /// (the terminal's size in cells) turns the text area into a cell size.
    pub fn feed(
        &mut self,
        input: &[u8],
        grid: (u16, u16),
        out: &mut Vec<u8>,
    ) -> Option<Capabilities> {
        let mut report = None;
        for answer in self.pending.split(input, scan, out) {
            if answer.starts_with(b"\x1b[?") {
                if !self.reported {
                    report = Some(self.finish(&answer, grid));
                }
            } else {
                self.take(&answer);
            }
        }
        report
    }

    /// No answer is waited for any more (the safety cap): the
    /// capabilities found so far, once.
    pub fn give_up(&mut self, grid: (u16, u16)) -> Option<Capabilities> {
        self.pending.stop_awaiting();
        (!self.reported).then(|| self.finish(b"", grid))
    }

    /// Something is held for the rest of an answer.
    pub fn holding(&self) -> bool {
        self.pending.holding()
    }

    /// The rest did not come: what was held goes out as it was.
    pub fn release(&mut self, out: &mut Vec<u8>) {
        self.pending.release(out);
    }

    /// The capabilities, reported.
    pub fn reported(&self) -> bool {
        self.reported
    }

    fn finish(&mut self, attributes: &[u8], grid: (u16, u16)) -> Capabilities {
        self.pending.stop_awaiting();
        self.reported = true;
        self.found.sixel = attributes
            .strip_prefix(b"\x1b[?")
            .and_then(|rest| rest.strip_suffix(b"c"))
            .is_some_and(|params| params.split(|b| *b == b';').any(|p| p == b"4"));
        if self.found.cell_px.is_none() {
            self.found.cell_px = self.area_px.and_then(|(w, h)| {
                let (cols, rows) = grid;
                (cols > 0 && rows > 0 && w >= cols && h >= rows).then(|| (w / cols, h / rows))
            });
        }
        self.found
    }

    /// Records one answer.
    fn take(&mut self, answer: &[u8]) {
        if let Some(body) = answer.strip_prefix(b"\x1b_G") {
            let body = body.strip_suffix(b"\x1b\\").unwrap_or(body);
            let text = String::from_utf8_lossy(body);
            if let Some((keys, message)) = text.split_once(';') {
                let ours = keys.split(',').any(|k| k == format!("i={KITTY_QUERY_ID}"));
                if ours && message == "OK" {
                    self.found.kitty = true;
                }
            }
            return;
        }
        let text = String::from_utf8_lossy(&answer[2..answer.len() - 1]);
        let mut parts = text.split(';').map(|p| p.parse::<u16>().ok());
        let (Some(Some(code)), Some(Some(h)), Some(Some(w))) =
            (parts.next(), parts.next(), parts.next())
        else {
            return;
        };
        match code {
            6 if w > 0 && h > 0 => self.found.cell_px = Some((w, h)),
            4 if w > 0 && h > 0 => self.area_px = Some((w, h)),
            _ => {}
        }
    }
}

/// Whether `bytes` (starting with ESC) start with an answer.
fn scan(bytes: &[u8]) -> Scan {
    match bytes.get(1) {
        None => Scan::Partial,
        Some(b'_') => scan_apc(bytes),
        Some(b'[') => scan_csi(bytes),
        Some(_) => Scan::No,
    }
}

/// `ESC _ G … ESC \`.
fn scan_apc(bytes: &[u8]) -> Scan {
    match bytes.get(2) {
        None => return Scan::Partial,
        Some(b'G') => {}
        Some(_) => return Scan::No,
    }
    crate::answers::until_terminator(bytes, 3, MAX_ANSWER, false)
}

/// `ESC [ (4|6) ; H ; W t` or `ESC [ ? (digits | ;)* c`.
fn scan_csi(bytes: &[u8]) -> Scan {
    let attributes = match bytes.get(2) {
        None => return Scan::Partial,
        Some(b'?') => true,
        Some(b'4' | b'6') => false,
        Some(_) => return Scan::No,
    };
    let mut semicolons = 0;
    for (i, &b) in bytes.iter().enumerate().skip(3) {
        match b {
            b'c' if attributes => return Scan::Seen(i + 1),
            b't' if !attributes && semicolons == 2 => return Scan::Answer(i + 1),
            b';' if i < MAX_ANSWER => semicolons += 1,
            b'0'..=b'9' if i < MAX_ANSWER => {}
            _ => return Scan::No,
        }
        if !attributes && (i == 3 && b != b';' || semicolons > 2) {
            return Scan::No;
        }
    }
    Scan::Partial
}

/// [`ProbeFilter`] with the time kept around it: when what it holds goes
/// on as keys, and the safety cap. Sans I/O: the loop feeds it what it
/// reads and asks it for its next deadline.
#[derive(Debug)]
pub struct GraphicsAnswers {
    filter: ProbeFilter,
    asked: Instant,
    held_since: Option<Instant>,
    /// The cell size in pixels read from the terminal's size
    /// ([`winsize_cell_px`]), used when no answer gives one.
    winsize_px: Option<(u16, u16)>,
}

impl GraphicsAnswers {
    /// For a terminal that was just asked [`questions`].
    pub fn asked(now: Instant, winsize_px: Option<(u16, u16)>) -> Self {
        GraphicsAnswers {
            filter: ProbeFilter::asked(),
            asked: now,
            held_since: None,
            winsize_px,
        }
    }

    /// Takes what was read; appends the rest to `rest`. The capabilities,
    /// once, when they are known.
    pub fn feed(
        &mut self,
        input: &[u8],
        grid: (u16, u16),
        now: Instant,
        rest: &mut Vec<u8>,
    ) -> Option<Capabilities> {
        let found = self.filter.feed(input, grid, rest);
        self.held_since = self.filter.holding().then_some(now);
        found.map(|caps| self.with_winsize(caps))
    }

    /// Whether it holds bytes that may begin an answer.
    pub fn holding(&self) -> bool {
        self.held_since.is_some()
    }

    /// When [`GraphicsAnswers::on_deadline`] has something to do.
    pub fn deadline(&self) -> Option<Instant> {
        let cap = (!self.filter.reported()).then_some(self.asked + AWAIT_LIMIT);
        [self.held_since.map(|since| since + HOLD), cap]
            .into_iter()
            .flatten()
            .min()
    }

    /// A deadline passed: what was held goes on (to `rest`); past the
    /// safety cap, the capabilities found so far.
    pub fn on_deadline(
        &mut self,
        now: Instant,
        grid: (u16, u16),
        rest: &mut Vec<u8>,
    ) -> Option<Capabilities> {
        if self.held_since.is_some_and(|since| now >= since + HOLD) {
            self.held_since = None;
            self.filter.release(rest);
        }
        if now >= self.asked + AWAIT_LIMIT {
            return self
                .filter
                .give_up(grid)
                .map(|caps| self.with_winsize(caps));
        }
        None
    }

    fn with_winsize(&self, mut caps: Capabilities) -> Capabilities {
        caps.cell_px = caps.cell_px.or(self.winsize_px);
        caps
    }
}

/// The terminal's cell size in pixels from its window size (`TIOCGWINSZ`'s
/// pixel fields, which many terminals leave 0): `None` when unknown.
pub fn winsize_cell_px(fd: std::os::fd::RawFd) -> Option<(u16, u16)> {
    // SAFETY: a zeroed winsize is valid; TIOCGWINSZ fills it or fails.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: `ws` is a valid winsize for the call's duration.
    if unsafe { libc::ioctl(fd, libc::TIOCGWINSZ, &mut ws) } != 0 {
        return None;
    }
    (ws.ws_col > 0 && ws.ws_row > 0 && ws.ws_xpixel >= ws.ws_col && ws.ws_ypixel >= ws.ws_row)
        .then(|| (ws.ws_xpixel / ws.ws_col, ws.ws_ypixel / ws.ws_row))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const GRID: (u16, u16) = (80, 24);

    fn run(chunks: &[&[u8]]) -> (Vec<u8>, Vec<Capabilities>) {
        let mut filter = ProbeFilter::asked();
        let mut out = Vec::new();
        let mut found = Vec::new();
        for chunk in chunks {
            found.extend(filter.feed(chunk, GRID, &mut out));
        }
        (out, found)
    }

    #[test]
    fn a_kitty_terminal_with_a_cell_size() {
        let (out, found) = run(&[b"a\x1b_Gi=31;OK\x1b\\\x1b[6;20;10tb\x1b[4;480;800t\x1b[?62;22c"]);
        assert_eq!(out, b"ab\x1b[?62;22c", "DA1 passes on for the colours");
        assert_eq!(
            found,
            vec![Capabilities {
                sixel: false,
                kitty: true,
                cell_px: Some((10, 20)),
            }]
        );
    }

    #[test]
    fn an_xterm_in_vt340_mode_draws_sixel_and_its_cell_comes_from_the_area() {
        let (out, found) = run(&[b"\x1b[4;480;800t\x1b[?63;1;2;4;6;9;15;22c"]);
        assert_eq!(out, b"\x1b[?63;1;2;4;6;9;15;22c");
        assert_eq!(
            found,
            vec![Capabilities {
                sixel: true,
                kitty: false,
                cell_px: Some((10, 20)),
            }]
        );
    }

    #[test]
    fn a_terminal_that_answers_only_the_attributes_draws_nothing() {
        let (_, found) = run(&[b"\x1b[?1;2c"]);
        assert_eq!(found, vec![Capabilities::default()]);
        // 4 inside a longer number is not sixel; an error is not kitty.
        let (_, found) = run(&[b"\x1b_Gi=31;ENOTSUPPORTED:no\x1b\\\x1b[?64;14;42c"]);
        assert_eq!(found, vec![Capabilities::default()]);
        // Another image's OK is not the answer to the query.
        let (_, found) = run(&[b"\x1b_Gi=7;OK\x1b\\\x1b[?1c"]);
        assert!(!found[0].kitty);
    }

    #[test]
    fn keys_pass_through_and_a_second_attributes_answer_is_not_reported() {
        let keys: &[u8] = b"\x1b[A\x1b[6~\x1b[4;5H\x1bOPq\x1b_x";
        let (out, found) = run(&[keys, b"\x1b[?4c", b"\x1b[?1c"]);
        let mut expected = keys.to_vec();
        expected.extend_from_slice(b"\x1b[?4c\x1b[?1c");
        assert_eq!(out, expected);
        assert_eq!(found.len(), 1);
        assert!(found[0].sixel);
    }

    #[test]
    fn a_terminal_that_never_answers_is_given_up_on_and_a_held_escape_goes_on() {
        let start = Instant::now();
        let mut answers = GraphicsAnswers::asked(start, Some((9, 18)));
        let mut rest = Vec::new();
        assert_eq!(answers.feed(b"x\x1b", GRID, start, &mut rest), None);
        assert_eq!(rest, b"x");
        assert_eq!(answers.deadline(), Some(start + HOLD));
        assert_eq!(answers.on_deadline(start + HOLD, GRID, &mut rest), None);
        assert_eq!(rest, b"x\x1b");
        assert_eq!(answers.deadline(), Some(start + AWAIT_LIMIT));
        let caps = answers.on_deadline(start + AWAIT_LIMIT, GRID, &mut rest);
        assert_eq!(
            caps,
            Some(Capabilities {
                cell_px: Some((9, 18)),
                ..Capabilities::default()
            })
        );
        assert_eq!(answers.deadline(), None);
    }

    #[test]
    fn the_questions_end_before_the_attributes_query_the_colours_send() {
        let q = questions();
        assert!(q.starts_with(b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\"));
        assert!(q.ends_with(b"\x1b[16t\x1b[14t"));
        assert!(crate::colors::questions().ends_with(b"\x1b[c"));
    }

    /// Keys typed around the answers, and the answers of a kitty or a
    /// sixel terminal, in the order terminals send them.
    const KEYS_BEFORE: &[u8] = b"ls \x1b[A";
    const KEYS_AFTER: &[u8] = b"\x1b[1;5Cq\x1b";

    fn whole(answers: &[u8]) -> Vec<u8> {
        [KEYS_BEFORE, answers, KEYS_AFTER].concat()
    }

    proptest! {
        #[test]
        fn any_split_of_the_answers_gives_the_same_keys_and_capabilities(
            kitty in any::<bool>(),
            sixel in any::<bool>(),
            cuts in proptest::collection::vec(0usize..200, 0..8),
        ) {
            let mut answers = Vec::new();
            if kitty {
                answers.extend_from_slice(b"\x1b_Gi=31;OK\x1b\\");
            }
            answers.extend_from_slice(b"\x1b[6;17;8t\x1b[4;408;640t");
            let attributes: &[u8] = if sixel { b"\x1b[?62;4;22c" } else { b"\x1b[?62;22c" };
            answers.extend_from_slice(attributes);
            let bytes = whole(&answers);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c % (bytes.len() + 1)).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in cuts {
                chunks.push(&bytes[from..cut]);
                from = cut;
            }
            chunks.push(&bytes[from..]);
            let mut filter = ProbeFilter::asked();
            let mut out = Vec::new();
            let mut found = Vec::new();
            for chunk in chunks {
                found.extend(filter.feed(chunk, GRID, &mut out));
            }
            filter.release(&mut out);
            prop_assert_eq!(out, [KEYS_BEFORE, attributes, KEYS_AFTER].concat());
            prop_assert_eq!(found, vec![Capabilities { sixel, kitty, cell_px: Some((8, 17)) }]);
        }
    }
}
