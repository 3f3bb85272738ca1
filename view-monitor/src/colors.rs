//! The view's own terminal colours, asked at attach without waiting for the
//! answers: the view writes its questions (OSC 10 and 11, OSC 4 for the 16
//! ANSI colours each followed by a status report query, then a
//! device-attributes query, which every terminal answers, so its answer
//! marks the end of the others), attaches at once,
//! and picks the answers out of its terminal's input as they arrive, mixed
//! with keystrokes: the attach view's loop feeds what it reads to
//! [`TtyAnswers`], which strips the answers ([`AnswerFilter`]) and keeps
//! their time, and hands the rest to its key parser; the colours go to the launcher as
//! [`tickloop_proto::attach::ViewEvent::Colors`], which then answers the Tick's
//! colour queries with them, so a program picks its light or dark scheme
//! from the person's terminal.

use crate::answers::{Pending, Scan};
use std::time::{Duration, Instant};
use tickloop_proto::attach::TermColors;

/// How many palette entries the view asks for (the ANSI colours).
pub const PALETTE_ASKED: u8 = 16;
/// How long the start of what may be an answer is held for its rest before
/// it is passed on as the keys it then was (an alt+`]` typed alone).
const HOLD: Duration = Duration::from_millis(40);
/// How long after the last colour answer the colours are reported even
/// though the device attributes answer, which ends them, did not come.
const REPORT_AFTER: Duration = Duration::from_millis(500);
/// How long after the questions a lone ESC may still be the start of an
/// answer (a terminal that never answers the device attributes query must
/// not delay the Escape key for ever).
const AWAIT_LIMIT: Duration = Duration::from_secs(2);
/// The longest answer recognised; anything longer is not one.
const MAX_ANSWER: usize = 128;

/// The questions a view writes to its terminal at attach. Each palette
/// question is followed by a status report query (`ESC [ 5 n`, which every
/// terminal answers with `ESC [ 0 n`): tmux 3.3a answers OSC 4 without the
/// index, and only for some entries, so the status answers tell which entry
/// an answer without an index is for.
pub fn questions() -> Vec<u8> {
    let mut q = b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\".to_vec();
    for index in 0..PALETTE_ASKED {
        q.extend_from_slice(format!("\x1b]4;{index};?\x1b\\\x1b[5n").as_bytes());
    }
    q.extend_from_slice(b"\x1b[c");
    q
}

/// Picks the terminal's answers to [`questions`] out of its input stream:
/// OSC 10/11 (`ESC ] 11 ; rgb:ffff/ffff/ffff ST`), OSC 4 (`ESC ] 4 ; 1 ;
/// rgb:… ST`, and tmux 3.3a's `ESC ] 4 ; rgb:… ST`, which leaves out the
/// index: it is for the entry asked before the next status answer), ended
/// by BEL or ST, status reports (`ESC [ 0 n`) and the device attributes
/// (`ESC [ ? 62 ; 22 c`). Everything else passes through untouched and in
/// order. Sans I/O: [`TtyAnswers`] feeds it and keeps time.
#[derive(Debug, Default)]
pub struct AnswerFilter {
    /// The start of a possible answer, waiting for its rest; whether the
    /// questions' answers have not ended yet (a lone ESC at the end of a
    /// read is held for what may follow; afterwards the Escape key goes
    /// through at once).
    pending: Pending,
    found: TermColors,
    /// Status answers since the questions: the palette entry that an OSC 4
    /// answer without an index is for.
    statuses: u8,
    /// Answers arrived that were not reported yet.
    unreported: bool,
}

impl AnswerFilter {
    /// A filter for a terminal that was just asked [`questions`].
    pub fn asked() -> Self {
        AnswerFilter {
            pending: Pending::asked(),
            ..AnswerFilter::default()
        }
    }

    /// Takes `input`; appends what is not an answer to `out`. Returns the
    /// colours when the device attributes answer came after new ones.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Option<TermColors> {
        let mut report = None;
        for answer in self.pending.split(input, scan, out) {
            if let Some(colors) = self.take(&answer) {
                report = Some(colors);
            }
        }
        report
    }

    /// No more answers are waited for: a lone ESC goes through at once.
    pub fn stop_awaiting(&mut self) {
        self.pending.stop_awaiting();
    }

    /// Something is held for the rest of an answer.
    pub fn holding(&self) -> bool {
        self.pending.holding()
    }

    /// The rest did not come: what was held goes out as it was.
    pub fn release(&mut self, out: &mut Vec<u8>) {
        self.pending.release(out);
    }

    /// Colour answers came that were not reported.
    pub fn unreported(&self) -> bool {
        self.unreported
    }

    /// The colours so far, reported now (the device attributes answer did
    /// not come); `None` when there is nothing new.
    pub fn report(&mut self) -> Option<TermColors> {
        if !self.unreported {
            return None;
        }
        self.unreported = false;
        let mut colors = self.found.clone();
        colors.palette.sort_by_key(|(i, _)| *i);
        (!colors.is_empty()).then_some(colors)
    }

    /// Records one answer; the colours when it was the device attributes.
    fn take(&mut self, answer: &[u8]) -> Option<TermColors> {
        if answer.starts_with(b"\x1b[?") {
            self.pending.stop_awaiting();
            self.statuses = 0;
            return self.report();
        }
        if answer.starts_with(b"\x1b[") {
            self.statuses = self.statuses.saturating_add(1);
            return None;
        }
        let text = String::from_utf8_lossy(answer);
        let body = text
            .trim_start_matches("\x1b]")
            .trim_end_matches(['\x07', '\\'])
            .trim_end_matches('\x1b');
        let mut parts = body.splitn(3, ';');
        let (code, rest) = (parts.next()?, parts.next()?);
        match code {
            "10" => self.found.fg = rgb_to_hex(rest),
            "11" => self.found.bg = rgb_to_hex(rest),
            "4" => {
                let (index, color) = match (rest.parse::<u8>(), parts.next()) {
                    (Ok(index), Some(spec)) => (index, rgb_to_hex(spec)?),
                    _ if self.statuses < PALETTE_ASKED => (self.statuses, rgb_to_hex(rest)?),
                    _ => return None,
                };
                self.found.palette.retain(|(i, _)| *i != index);
                self.found.palette.push((index, color));
            }
            _ => return None,
        }
        self.unreported = true;
        None
    }
}

/// Whether `bytes` (starting with ESC) start with an answer.
fn scan(bytes: &[u8]) -> Scan {
    let Some(&kind) = bytes.get(1) else {
        return Scan::Partial;
    };
    match kind {
        b']' => scan_osc(bytes),
        b'[' => scan_csi(bytes),
        _ => Scan::No,
    }
}

/// `ESC ] (4|10|11) ; … (BEL | ESC \)`.
fn scan_osc(bytes: &[u8]) -> Scan {
    let digits = bytes[2..].iter().take_while(|b| b.is_ascii_digit()).count();
    let code = &bytes[2..2 + digits];
    match bytes.get(2 + digits) {
        None if matches!(code, b"" | b"1" | b"4" | b"10" | b"11") => return Scan::Partial,
        Some(b';') if matches!(code, b"4" | b"10" | b"11") => {}
        _ => return Scan::No,
    }
    crate::answers::until_terminator(bytes, 3 + digits, MAX_ANSWER, true)
}

/// `ESC [ ? (digits | ;)* c` (device attributes) or `ESC [ (0|3) n`
/// (status).
fn scan_csi(bytes: &[u8]) -> Scan {
    match bytes.get(2) {
        None => return Scan::Partial,
        Some(b'?') => {}
        Some(b'0' | b'3') => {
            return match bytes.get(3) {
                None => Scan::Partial,
                Some(b'n') => Scan::Answer(4),
                Some(_) => Scan::No,
            }
        }
        Some(_) => return Scan::No,
    }
    for (i, &b) in bytes.iter().enumerate().skip(3) {
        match b {
            b'c' => return Scan::Answer(i + 1),
            b'0'..=b'9' | b';' if i < MAX_ANSWER => {}
            _ => return Scan::No,
        }
    }
    Scan::Partial
}

/// `rgb:rrrr/gggg/bbbb` (1 to 4 hex digits a channel) as `#rrggbb`.
fn rgb_to_hex(spec: &str) -> Option<String> {
    let spec = spec.strip_prefix("rgb:")?;
    let mut out = String::from("#");
    let parts: Vec<&str> = spec.split('/').collect();
    if parts.len() != 3 {
        return None;
    }
    for part in parts {
        if part.is_empty() || part.len() > 4 {
            return None;
        }
        let value = u32::from_str_radix(part, 16).ok()?;
        let max = (1u32 << (4 * part.len())) - 1;
        out.push_str(&format!("{:02x}", value * 255 / max));
    }
    Some(out)
}

/// The terminal's input with the answers to [`questions`] taken out, and
/// the time kept around them: [`AnswerFilter`] plus when what it holds
/// must go on as keys, and when colours that came without the device
/// attributes answer are reported anyway. Sans I/O: the attach view's loop
/// reads the terminal, feeds this, and asks it for its next deadline.
#[derive(Debug)]
pub struct TtyAnswers {
    filter: AnswerFilter,
    /// When the questions were asked.
    asked: Instant,
    /// When something began to be held for the rest of an answer.
    held_since: Option<Instant>,
    /// When the last colour answer came.
    last_answer: Instant,
}

impl TtyAnswers {
    /// For a terminal that was just asked [`questions`].
    pub fn asked(now: Instant) -> Self {
        TtyAnswers {
            filter: AnswerFilter::asked(),
            asked: now,
            held_since: None,
            last_answer: now,
        }
    }

    /// Takes what was read; appends the keys (everything but answers) to
    /// `keys`. The colours, when they are complete.
    pub fn feed(&mut self, input: &[u8], now: Instant, keys: &mut Vec<u8>) -> Option<TermColors> {
        if now.duration_since(self.asked) >= AWAIT_LIMIT {
            self.filter.stop_awaiting();
        }
        let had = self.filter.unreported();
        let colors = self.filter.feed(input, keys);
        if self.filter.unreported() && !had {
            self.last_answer = now;
        }
        self.held_since = self.filter.holding().then_some(now);
        colors
    }

    /// Whether it holds bytes that may begin an answer.
    pub fn holding(&self) -> bool {
        self.held_since.is_some()
    }

    /// When [`TtyAnswers::on_deadline`] has something to do.
    pub fn deadline(&self) -> Option<Instant> {
        if let Some(since) = self.held_since {
            Some(since + HOLD)
        } else if self.filter.unreported() {
            Some(self.last_answer + REPORT_AFTER)
        } else {
            None
        }
    }

    /// A deadline passed: what was held goes on as keys (to `keys`), or
    /// the colours so far are reported.
    pub fn on_deadline(&mut self, now: Instant, keys: &mut Vec<u8>) -> Option<TermColors> {
        if self.deadline().is_none_or(|at| at > now) {
            return None;
        }
        if self.held_since.take().is_some() {
            self.filter.release(keys);
            None
        } else {
            self.filter.report()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(filter: &mut AnswerFilter, chunks: &[&[u8]]) -> (Vec<u8>, Vec<TermColors>) {
        let mut out = Vec::new();
        let mut reports = Vec::new();
        for chunk in chunks {
            reports.extend(filter.feed(chunk, &mut out));
        }
        (out, reports)
    }

    #[test]
    fn xterm_answers_are_taken_out_and_reported_at_the_attributes() {
        let mut filter = AnswerFilter::asked();
        let (out, reports) = run(
            &mut filter,
            &[b"a\x1b]10;rgb:1010/1010/1010\x1b\\b\x1b]11;rgb:ffff/ffff/ffff\x07\x1b]4;1;rgb:cd/00/00\x1b\\\x1b[?62;22cc"],
        );
        assert_eq!(out, b"abc");
        assert_eq!(
            reports,
            vec![TermColors {
                fg: Some("#101010".into()),
                bg: Some("#ffffff".into()),
                palette: vec![(1, "#cd0000".into())],
            }]
        );
        assert!(!filter.holding() && !filter.unreported());
    }

    #[test]
    fn answers_split_anywhere_are_put_back_together() {
        let whole: &[u8] = b"x\x1b]11;rgb:f/8/0\x1b\\\x1b[?1;2cy\x1b[A";
        for cut in 0..whole.len() {
            let mut filter = AnswerFilter::asked();
            let (out, reports) = run(&mut filter, &[&whole[..cut], &whole[cut..]]);
            assert_eq!(out, b"xy\x1b[A", "cut at {cut}");
            assert_eq!(reports.len(), 1, "cut at {cut}");
            assert_eq!(reports[0].bg.as_deref(), Some("#ff8800"));
        }
    }

    #[test]
    fn keys_that_start_like_an_answer_pass_through() {
        let mut filter = AnswerFilter::asked();
        // Cursor keys, alt+] followed by text, OSC codes never asked.
        let (out, reports) = run(
            &mut filter,
            &[b"\x1b[A\x1bOB\x1b]x\x1b]52;c;aGk=\x07\x1b[1;5C"],
        );
        assert_eq!(out, b"\x1b[A\x1bOB\x1b]x\x1b]52;c;aGk=\x07\x1b[1;5C");
        assert!(reports.is_empty());
        // A lone ESC (the Escape key) is held for the rest, then released.
        let (out, _) = run(&mut filter, &[b"\x1b"]);
        assert!(out.is_empty() && filter.holding());
        let mut out = Vec::new();
        filter.release(&mut out);
        assert_eq!(out, b"\x1b");
        // Once the answers ended, a lone ESC goes through at once.
        run(&mut filter, &[b"\x1b[?1;2c"]);
        let (out, _) = run(&mut filter, &[b"\x1b"]);
        assert_eq!(out, b"\x1b");
        assert!(!filter.holding());
        // An unterminated "answer" longer than any is the keys it was.
        let mut long = b"\x1b]11;".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_ANSWER));
        let (out, _) = run(&mut filter, &[&long]);
        assert_eq!(out, long);
    }

    #[test]
    fn palette_answers_without_an_index_go_by_the_status_answers() {
        // tmux 3.3a: entries 0-7 answered without an index, 8-15 not at all.
        let mut all = Vec::new();
        for i in 0..PALETTE_ASKED {
            if i < 8 {
                all.extend_from_slice(
                    format!("\x1b]4;rgb:{i:02x}{i:02x}/0000/0000\x1b\\").as_bytes(),
                );
            }
            all.extend_from_slice(b"\x1b[0n");
        }
        all.extend_from_slice(b"\x1b[?1;2c");
        let mut filter = AnswerFilter::asked();
        let (out, reports) = run(&mut filter, &[&all]);
        assert!(out.is_empty(), "{out:?}");
        assert_eq!(reports[0].palette.len(), 8);
        assert_eq!(reports[0].palette[3], (3, "#030000".into()));
        // Some skipped in between: each still lands on its own entry.
        let mut filter = AnswerFilter::asked();
        let (_, reports) = run(
            &mut filter,
            &[b"\x1b[0n\x1b]4;rgb:1212/3434/5656\x1b\\\x1b[0n\x1b[0n\x1b]4;12;rgb:0/0/f\x07\x1b[0n\x1b[?1;2c"],
        );
        assert_eq!(
            reports[0].palette,
            vec![(1, "#123456".into()), (12, "#0000ff".into())]
        );
    }

    #[test]
    fn colours_without_the_attributes_answer_are_reported_when_asked() {
        let mut filter = AnswerFilter::asked();
        let (_, reports) = run(&mut filter, &[b"\x1b]11;rgb:0/0/0\x07"]);
        assert!(reports.is_empty() && filter.unreported());
        assert_eq!(
            filter.report().and_then(|c| c.bg).as_deref(),
            Some("#000000")
        );
        assert_eq!(filter.report(), None);
        // Nothing understood: nothing to report.
        let (_, reports) = run(&mut filter, &[b"\x1b]11;rgb:zz/00/00\x1b\\\x1b[?1c"]);
        assert!(reports.is_empty());
    }

    #[test]
    fn a_held_escape_goes_on_at_its_deadline_and_late_colours_are_reported() {
        let start = Instant::now();
        let mut answers = TtyAnswers::asked(start);
        let mut keys = Vec::new();
        // A lone ESC may start an answer: held, with a deadline.
        assert_eq!(answers.feed(b"a\x1b", start, &mut keys), None);
        assert_eq!(keys, b"a");
        let at = answers.deadline().expect("a deadline while holding");
        assert_eq!(answers.on_deadline(at - HOLD / 2, &mut keys), None);
        assert_eq!(keys, b"a", "not before its deadline");
        assert_eq!(answers.on_deadline(at, &mut keys), None);
        assert_eq!(keys, b"a\x1b", "the Escape key, once nothing followed");
        // A colour answer without the attributes answer after it is
        // reported REPORT_AFTER later.
        let later = start + Duration::from_millis(100);
        assert_eq!(
            answers.feed(b"\x1b]11;rgb:0/0/0\x07", later, &mut keys),
            None
        );
        assert_eq!(answers.deadline(), Some(later + REPORT_AFTER));
        let colors = answers.on_deadline(later + REPORT_AFTER, &mut keys);
        assert_eq!(colors.and_then(|c| c.bg).as_deref(), Some("#000000"));
        assert_eq!(answers.deadline(), None);
        // Past AWAIT_LIMIT a lone ESC goes through at once.
        keys.clear();
        answers.feed(b"\x1b", start + AWAIT_LIMIT, &mut keys);
        assert_eq!(keys, b"\x1b");
        assert_eq!(answers.deadline(), None);
    }

    #[test]
    fn the_questions_end_with_the_attributes_query() {
        let q = questions();
        assert!(q.starts_with(b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b]4;0;?\x1b\\"));
        assert!(q.ends_with(b"\x1b]4;15;?\x1b\\\x1b[5n\x1b[c"));
    }
}
