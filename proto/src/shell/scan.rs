//! A program's terminal output read as text, line edits and shell marks: a
//! small VT scanner that keeps printable text, the controls that edit a
//! line (CR, BS, TAB, LF, erase in line, cursor moves along it), and the
//! marks shells emit (OSC 133 A/B/C/D, VS Code's OSC 633 with its E
//! command line, OSC 7 and iTerm2's OSC 1337 CurrentDir), and drops every
//! other sequence. Output split anywhere between chunks scans the same.

/// A mark a shell (or its prompt) put in its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mark {
    /// `133;A`: the prompt starts.
    PromptStart,
    /// `133;B`: the prompt ends; the command line starts.
    CommandStart,
    /// `133;C`: the command's output starts; with fish 4's `cmdline_url`
    /// or kitty's `cmdline`, the command line.
    OutputStart(Option<String>),
    /// `133;D[;STATUS]`: the command ended.
    CommandEnd(Option<i32>),
    /// `633;E;LINE`: the command line (VS Code's escaping undone).
    CommandLine(String),
    /// OSC 7 `file://HOST/PATH` (or `633;P;Cwd=`, `1337;CurrentDir=`).
    Cwd(String),
}

/// A control that edits the line being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Newline,
    CarriageReturn,
    Backspace,
    Tab,
    /// CSI K: 0 to the end of the line, 1 to its start, 2 all of it.
    EraseLine(u8),
    /// CSI C / CSI D: the cursor N columns right / left.
    Forward(u16),
    Back(u16),
    /// CSI G: the cursor to column N (from 1).
    Column(u16),
    /// CSI H / CSI d / vertical moves: the cursor left this line.
    OtherRow,
}

/// What the scanner found, in order.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    Text(&'a str),
    Control(Control),
    Mark(Mark),
}

/// Where a scan's events go.
pub trait Sink {
    /// Whether printable text and the controls that edit a line are wanted
    /// now. When not, the scanner skips the output up to the next ESC at
    /// once (`memchr`; only an ESC can start a mark), and the sink drops
    /// what else comes: a program's output costs little while nobody keeps
    /// its lines.
    fn wants_text(&self) -> bool {
        true
    }
    fn event(&mut self, event: Event<'_>);
}

/// Any closure taking events is a sink that wants all text.
impl<F: FnMut(Event<'_>)> Sink for F {
    fn event(&mut self, event: Event<'_>) {
        self(event)
    }
}

/// The longest OSC payload kept (a command line in `633;E`); longer ones
/// are dropped whole.
const OSC_MAX: usize = 64 * 1024;
/// The longest CSI parameter string kept.
const CSI_MAX: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Escape,
    /// ESC followed by intermediate bytes, until a final byte.
    EscapeIntermediate,
    Csi,
    Osc,
    /// ESC seen inside an OSC: `\` ends it.
    OscEscape,
    /// DCS, SOS, PM, APC: skipped until ST.
    Skip,
    SkipEscape,
}

/// The scanner's state between chunks.
#[derive(Debug)]
pub struct Scanner {
    state: State,
    params: Vec<u8>,
    osc: Vec<u8>,
    /// The OSC is not one of ours (or too long): its bytes are not kept.
    osc_ignored: bool,
    /// The start of a UTF-8 sequence split at the end of a chunk.
    partial: Vec<u8>,
    text: String,
}

impl Default for Scanner {
    fn default() -> Self {
        Self::new()
    }
}

impl Scanner {
    pub fn new() -> Scanner {
        Scanner {
            state: State::Ground,
            params: Vec::new(),
            osc: Vec::new(),
            osc_ignored: false,
            partial: Vec::new(),
            text: String::new(),
        }
    }

    /// Scans `bytes`, telling `on` each event in order.
    pub fn feed(&mut self, bytes: &[u8], on: &mut impl Sink) {
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Ground && !on.wants_text() {
                // Only an ESC can start a mark: what comes before it is
                // text and line edits, which nobody wants now.
                self.partial.clear();
                match memchr::memchr(0x1b, &bytes[i..]) {
                    Some(at) => {
                        i += at + 1;
                        self.state = State::Escape;
                        continue;
                    }
                    None => return,
                }
            }
            if self.state == State::Ground {
                let run = bytes[i..]
                    .iter()
                    .position(|&b| b < 0x20 || b == 0x7f)
                    .map_or(bytes.len(), |n| i + n);
                if run > i {
                    if on.wants_text() {
                        self.text_run(&bytes[i..run], on);
                    } else {
                        self.partial.clear();
                    }
                    i = run;
                    continue;
                }
            }
            let b = bytes[i];
            i += 1;
            self.byte(b, on);
        }
    }

    /// Printable bytes in the ground state: decoded as UTF-8 (a sequence cut
    /// at the chunk's end waits for the next), invalid bytes as U+FFFD.
    fn text_run(&mut self, run: &[u8], on: &mut impl Sink) {
        let owned;
        let mut bytes = run;
        if !self.partial.is_empty() {
            let mut joined = std::mem::take(&mut self.partial);
            joined.extend_from_slice(run);
            owned = joined;
            bytes = &owned;
        }
        self.text.clear();
        let mut rest = bytes;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    self.text.push_str(valid);
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    // Checked valid just above.
                    self.text
                        .push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            self.text.push('\u{fffd}');
                            rest = &after[n..];
                        }
                        None => {
                            // Cut at the end: wait for the rest.
                            self.partial.extend_from_slice(after);
                            break;
                        }
                    }
                }
            }
        }
        if !self.text.is_empty() {
            on.event(Event::Text(&self.text));
        }
    }

    /// A sequence that never completed its UTF-8 is text no longer.
    fn flush_partial(&mut self, on: &mut impl Sink) {
        if !self.partial.is_empty() {
            self.partial.clear();
            on.event(Event::Text("\u{fffd}"));
        }
    }

    fn byte(&mut self, b: u8, on: &mut impl Sink) {
        match self.state {
            State::Ground => {
                self.flush_partial(on);
                self.control(b, on);
            }
            State::Escape => match b {
                b'[' => {
                    self.params.clear();
                    self.state = State::Csi;
                }
                b']' => {
                    self.osc.clear();
                    self.osc_ignored = false;
                    self.state = State::Osc;
                }
                b'P' | b'X' | b'^' | b'_' => self.state = State::Skip,
                0x1b => {}
                0x20..=0x2f => self.state = State::EscapeIntermediate,
                // ESC D (index), ESC E (next line): the cursor leaves the row.
                b'D' | b'E' | b'M' => {
                    self.state = State::Ground;
                    on.event(Event::Control(Control::OtherRow));
                }
                0x00..=0x1f => self.control(b, on),
                _ => self.state = State::Ground,
            },
            State::EscapeIntermediate => match b {
                0x30..=0x7e => self.state = State::Ground,
                0x1b => self.state = State::Escape,
                0x20..=0x2f => {}
                0x00..=0x1f => self.control(b, on),
                _ => self.state = State::Ground,
            },
            State::Csi => match b {
                0x40..=0x7e => {
                    self.state = State::Ground;
                    if let Some(control) = csi(&self.params, b) {
                        on.event(Event::Control(control));
                    }
                }
                0x1b => self.state = State::Escape,
                0x00..=0x1f => self.control(b, on),
                _ => {
                    if self.params.len() < CSI_MAX {
                        self.params.push(b);
                    }
                }
            },
            State::Osc => match b {
                0x07 => self.end_osc(on),
                0x1b => self.state = State::OscEscape,
                // CAN and SUB abort a sequence.
                0x18 | 0x1a => self.state = State::Ground,
                _ => self.osc_byte(b),
            },
            State::OscEscape => {
                if b == b'\\' {
                    self.end_osc(on);
                } else {
                    // Not ST: the OSC was cut short, and this ESC starts
                    // something new.
                    self.state = State::Escape;
                    self.byte(b, on);
                }
            }
            State::Skip => match b {
                0x1b => self.state = State::SkipEscape,
                0x18 | 0x1a => self.state = State::Ground,
                _ => {}
            },
            State::SkipEscape => {
                if b == b'\\' {
                    self.state = State::Ground;
                } else {
                    self.state = State::Skip;
                }
            }
        }
    }

    /// A C0 control (or DEL) where the terminal would act on it.
    fn control(&mut self, b: u8, on: &mut impl Sink) {
        let control = match b {
            b'\n' | 0x0b | 0x0c => Control::Newline,
            b'\r' => Control::CarriageReturn,
            0x08 => Control::Backspace,
            b'\t' => Control::Tab,
            0x1b => {
                self.state = State::Escape;
                return;
            }
            _ => return,
        };
        on.event(Event::Control(control));
    }

    fn osc_byte(&mut self, b: u8) {
        if self.osc_ignored {
            return;
        }
        self.osc.push(b);
        if self.osc.len() > OSC_MAX || (self.osc.len() <= 5 && !ours_so_far(&self.osc)) {
            self.osc_ignored = true;
            self.osc.clear();
        }
    }

    fn end_osc(&mut self, on: &mut impl Sink) {
        self.state = State::Ground;
        if self.osc_ignored {
            return;
        }
        if let Some(mark) = mark(&self.osc) {
            on.event(Event::Mark(mark));
        }
        self.osc.clear();
    }
}

/// The OSC numbers read: 133, 633, 7 and 1337.
const OURS: [&[u8]; 4] = [b"133;", b"633;", b"7;", b"1337;"];

/// Whether an OSC payload starting with `start` may be one of ours.
fn ours_so_far(start: &[u8]) -> bool {
    OURS.iter().any(|p| {
        let n = start.len().min(p.len());
        p[..n] == start[..n]
    })
}

/// The line edit a CSI sequence with `params` and `last` makes, if any.
fn csi(params: &[u8], last: u8) -> Option<Control> {
    if params
        .first()
        .is_some_and(|b| matches!(b, b'?' | b'>' | b'<' | b'='))
    {
        return None;
    }
    let first = || -> u16 {
        let text = std::str::from_utf8(params).unwrap_or("");
        text.split([';', ':'])
            .next()
            .and_then(|n| n.parse::<u16>().ok())
            .unwrap_or(0)
    };
    let count = || first().max(1);
    Some(match last {
        b'K' => Control::EraseLine(u8::try_from(first().min(2)).unwrap_or(0)),
        b'C' => Control::Forward(count()),
        b'D' => Control::Back(count()),
        b'G' | b'`' => Control::Column(count()),
        b'A' | b'B' | b'E' | b'F' | b'H' | b'f' | b'd' | b'J' => Control::OtherRow,
        _ => return None,
    })
}

/// The mark an OSC payload is, if it is one of ours.
fn mark(payload: &[u8]) -> Option<Mark> {
    let text = String::from_utf8_lossy(payload);
    let (number, rest) = text.split_once(';')?;
    match number {
        "133" | "633" => {
            let mut fields = rest.split(';');
            let kind = fields.next()?;
            match kind {
                "A" => Some(Mark::PromptStart),
                "B" => Some(Mark::CommandStart),
                "C" => Some(Mark::OutputStart(fields.find_map(|f| {
                    if let Some(url) = f.strip_prefix("cmdline_url=") {
                        Some(percent_decode(url))
                    } else {
                        f.strip_prefix("cmdline=").map(str::to_string)
                    }
                }))),
                "D" => Some(Mark::CommandEnd(
                    fields.next().and_then(|s| s.trim().parse::<i32>().ok()),
                )),
                "E" if number == "633" => {
                    let line = rest.strip_prefix("E;").unwrap_or("");
                    // A nonce may follow the line, after its own `;`
                    // (the line's `;`s are escaped as \x3b).
                    let line = line.split(';').next().unwrap_or("");
                    Some(Mark::CommandLine(vscode_unescape(line)))
                }
                "P" if number == "633" => rest
                    .strip_prefix("P;Cwd=")
                    .map(|cwd| Mark::Cwd(vscode_unescape(cwd))),
                _ => None,
            }
        }
        "7" => {
            let path = match rest.strip_prefix("file://") {
                // file://HOST/PATH: the path starts at the first `/`.
                Some(after) => &after[after.find('/')?..],
                None if rest.starts_with('/') => rest,
                None => return None,
            };
            Some(Mark::Cwd(percent_decode(path)))
        }
        "1337" => rest
            .strip_prefix("CurrentDir=")
            .map(|cwd| Mark::Cwd(cwd.to_string())),
        _ => None,
    }
}

/// `%XX` decoded (as UTF-8, lossily); a `%` not followed by two hex digits
/// stays.
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push(h * 16 + l);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// VS Code's escaping undone: `\\` is a backslash, `\xNN` a byte.
pub fn vscode_unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 1 < bytes.len() {
            if bytes[i + 1] == b'\\' {
                out.push(b'\\');
                i += 2;
                continue;
            }
            if bytes[i + 1] == b'x' && i + 3 < bytes.len() {
                if let (Some(h), Some(l)) = (hex(bytes[i + 2]), hex(bytes[i + 3])) {
                    out.push(h * 16 + l);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Events with text runs merged, as owned values.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Owned {
        Text(String),
        Control(Control),
        Mark(Mark),
    }

    fn scan_chunks(chunks: &[&[u8]]) -> Vec<Owned> {
        let mut scanner = Scanner::new();
        let mut out: Vec<Owned> = Vec::new();
        for chunk in chunks {
            scanner.feed(chunk, &mut |e: Event<'_>| match e {
                Event::Text(t) => match out.last_mut() {
                    Some(Owned::Text(prev)) => prev.push_str(t),
                    _ => out.push(Owned::Text(t.to_string())),
                },
                Event::Control(c) => out.push(Owned::Control(c)),
                Event::Mark(m) => out.push(Owned::Mark(m)),
            });
        }
        out
    }

    #[test]
    fn marks_text_and_line_edits_come_out_in_order() {
        let bytes = b"\x1b]133;A\x07$ \x1b]133;B\x1b\\ls\r\n\x1b]633;E;ls \\x3b x\\\\y\x07\x1b]133;C\x07\x1b[1;31mred\x1b[0m\tx\x08\x1b[K\n\x1b]133;D;130\x07\x1b]7;file://box/tmp/a%20b\x07";
        let got = scan_chunks(&[bytes]);
        use Owned::*;
        assert_eq!(
            got,
            vec![
                Mark(super::Mark::PromptStart),
                Text("$ ".into()),
                Mark(super::Mark::CommandStart),
                Text("ls".into()),
                Control(super::Control::CarriageReturn),
                Control(super::Control::Newline),
                Mark(super::Mark::CommandLine("ls ; x\\y".into())),
                Mark(super::Mark::OutputStart(None)),
                Text("red".into()),
                Control(super::Control::Tab),
                Text("x".into()),
                Control(super::Control::Backspace),
                Control(super::Control::EraseLine(0)),
                Control(super::Control::Newline),
                Mark(super::Mark::CommandEnd(Some(130))),
                Mark(super::Mark::Cwd("/tmp/a b".into())),
            ]
        );
    }

    #[test]
    fn other_sequences_and_long_foreign_oscs_are_dropped() {
        let mut clip = b"\x1b]52;c;".to_vec();
        clip.extend(std::iter::repeat_n(b'Q', 100_000));
        clip.extend(b"\x07after\x1bP1$r0m\x1b\\\x1b(Bz\x1b[?1049h");
        assert_eq!(scan_chunks(&[&clip]), vec![Owned::Text("afterz".into())]);
        let fish4 = b"\x1b]133;C;cmdline_url=echo%20hi\x07";
        assert_eq!(
            scan_chunks(&[fish4]),
            vec![Owned::Mark(Mark::OutputStart(Some("echo hi".into())))]
        );
        assert_eq!(
            scan_chunks(&[b"\x1b]133;D\x07\x1b]133;D;0;aid=3\x07"]),
            vec![
                Owned::Mark(Mark::CommandEnd(None)),
                Owned::Mark(Mark::CommandEnd(Some(0)))
            ]
        );
    }

    #[test]
    fn utf8_split_between_chunks_is_one_character() {
        let text = "é€😀".as_bytes();
        for cut in 0..=text.len() {
            let got = scan_chunks(&[&text[..cut], &text[cut..]]);
            assert_eq!(got, vec![Owned::Text("é€😀".into())], "cut at {cut}");
        }
        assert_eq!(
            scan_chunks(&[b"a\xffb"]),
            vec![Owned::Text("a\u{fffd}b".into())]
        );
    }

    /// A sink that wants no text: it keeps the marks and drops the rest,
    /// as the shell reader does.
    struct MarksOnly(Vec<Mark>);

    impl Sink for MarksOnly {
        fn wants_text(&self) -> bool {
            false
        }

        fn event(&mut self, event: Event<'_>) {
            match event {
                Event::Mark(mark) => self.0.push(mark),
                Event::Text(_) | Event::Control(_) => {}
            }
        }
    }

    fn marks_only(chunks: &[&[u8]]) -> Vec<Mark> {
        let mut scanner = Scanner::new();
        let mut sink = MarksOnly(Vec::new());
        for chunk in chunks {
            scanner.feed(chunk, &mut sink);
        }
        sink.0
    }

    #[test]
    fn a_sink_that_wants_no_text_gets_only_the_marks() {
        let bytes =
            b"plain\r\n\x1b[31mred\x1b[0m\x1b]133;A\x07$ \x1b]0;title\x07\x1b]7;file://h/tmp\x1b\\";
        assert_eq!(
            marks_only(&[bytes]),
            vec![Mark::PromptStart, Mark::Cwd("/tmp".into())]
        );
    }

    fn piece() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            "[ -~]{0,8}".prop_map(String::into_bytes),
            "[éλ€😀]{1,3}".prop_map(String::into_bytes),
            Just(b"\x1b]133;A\x07".to_vec()),
            Just(b"\x1b]133;B\x1b\\".to_vec()),
            Just(b"\x1b]133;C\x07".to_vec()),
            (0i32..300).prop_map(|n| format!("\x1b]133;D;{n}\x07").into_bytes()),
            "[a-z/ ]{0,10}".prop_map(|p| format!("\x1b]7;file://h/{p}\x07").into_bytes()),
            Just(b"\r\n".to_vec()),
            Just(b"\x1b[1;32m".to_vec()),
            Just(b"\x1b[K".to_vec()),
            Just(b"\x08".to_vec()),
            Just(b"\x1b]0;title\x07".to_vec()),
        ]
    }

    proptest! {
        #[test]
        fn any_split_of_the_output_scans_the_same(
            pieces in proptest::collection::vec(piece(), 0..20),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let bytes: Vec<u8> = pieces.concat();
            let whole = scan_chunks(&[&bytes]);
            let mut at: Vec<usize> = cuts.iter().map(|i| i.index(bytes.len() + 1)).collect();
            at.sort_unstable();
            let mut chunks: Vec<&[u8]> = Vec::new();
            let mut from = 0;
            for cut in at {
                chunks.push(&bytes[from..cut]);
                from = cut;
            }
            chunks.push(&bytes[from..]);
            prop_assert_eq!(scan_chunks(&chunks), whole);
        }

        #[test]
        fn every_mark_in_the_output_is_found(pieces in proptest::collection::vec(piece(), 0..20)) {
            let bytes: Vec<u8> = pieces.concat();
            let marks = scan_chunks(&[&bytes])
                .into_iter()
                .filter(|e| matches!(e, Owned::Mark(_)))
                .count();
            let sent = pieces
                .iter()
                .filter(|p| p.starts_with(b"\x1b]133;") || p.starts_with(b"\x1b]7;"))
                .count();
            prop_assert_eq!(marks, sent);
        }

        #[test]
        fn marks_are_the_same_whether_text_is_wanted_or_not(
            pieces in proptest::collection::vec(piece(), 0..20),
            cut in any::<prop::sample::Index>(),
        ) {
            let bytes: Vec<u8> = pieces.concat();
            let marks: Vec<Mark> = scan_chunks(&[&bytes])
                .into_iter()
                .filter_map(|e| match e {
                    Owned::Mark(mark) => Some(mark),
                    _ => None,
                })
                .collect();
            let cut = cut.index(bytes.len() + 1);
            prop_assert_eq!(marks_only(&[&bytes[..cut], &bytes[cut..]]), marks);
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = scan_chunks(&[&bytes]);
        }
    }
}
