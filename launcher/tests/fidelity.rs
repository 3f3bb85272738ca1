//! The screen keeper against tmux 3.3a, cell by cell: every case of
//! `tests/fidelity/cases.json` is replayed into the launcher's emulator and
//! compared with what tmux kept of the same bytes (`tests/fidelity/tmux/`,
//! made by `scripts/tmux-fixtures.py`; tmux is not needed here).
//!
//! A tmux line is read by feeding it into a fresh one-row emulator (its
//! escapes are SGR and SO/SI only), so both sides are compared as the same
//! attach-protocol cells: text, colours and attributes. Cells tmux did not
//! print (past a line's used width) must be blank on our side, whatever
//! their colour. Where tmux is known to differ from xterm, or where our
//! emulator keeps less than tmux, the row is listed in [`KNOWN`] with the
//! reason; every other row, the cursor, the alternate screen and the
//! history must match.

use launcher::emulator::Emulator;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use tickloop_proto::attach::{Attrs, Line, Snapshot};

/// `(case, what, reason)`: the differences we accept, each for a reason.
/// `what` is `row N`, `history`, or `cursor`.
const KNOWN: &[(&str, &str, &str)] = &[
    (
        "sgr_attributes",
        "row 4",
        "blink (SGR 5/6) is not kept by alacritty_terminal",
    ),
    (
        "sgr_attributes",
        "row 5",
        "blink (SGR 5/6) is not kept by alacritty_terminal",
    ),
    (
        "sgr_attributes",
        "row 9",
        "overline (SGR 53) is not kept by alacritty_terminal",
    ),
    (
        "sgr_attributes",
        "row 10",
        "overline (SGR 53) is not kept by alacritty_terminal",
    ),
    (
        "sgr_resets",
        "row 3",
        "blink (SGR 5/6) is not kept by alacritty_terminal",
    ),
    (
        "sgr_resets",
        "row 7",
        "overline (SGR 53) is not kept by alacritty_terminal",
    ),
    (
        "sgr_resets",
        "row 2",
        "SGR 21 is read as 'bold off' (Linux console, alacritty); tmux reads it as double underline",
    ),
    (
        "sgr_underline_styles",
        "row 1",
        "SGR 21 is read as 'bold off' (Linux console, alacritty); tmux reads it as double underline",
    ),
    (
        "autowrap_pending_wrap_controls",
        "row 1",
        "tmux quirk: BS/CUB in the pending-wrap state lands on the last column (xterm and ours: the one before)",
    ),
    (
        "autowrap_pending_wrap_controls",
        "row 3",
        "tmux quirk: BS/CUB in the pending-wrap state lands on the last column (xterm and ours: the one before)",
    ),
    (
        "backspace_wide",
        "row 2",
        "tmux quirk: BS/CUB in the pending-wrap state lands on the last column (xterm and ours: the one before)",
    ),
    (
        "backspace_wide",
        "row 3",
        "tmux quirk: BS at column 0 goes back up onto the wrapped line above (xterm and ours stay)",
    ),
    (
        "scroll_region_lf",
        "history",
        "tmux quirk: lines scrolled off the top of a partial scroll region go to history (xterm and ours: only full-screen scrolls)",
    ),
    (
        "scroll_su_sd",
        "history",
        "tmux quirk: lines scrolled off the top of a partial scroll region go to history (xterm and ours: only full-screen scrolls)",
    ),
    (
        "insert_delete_chars",
        "row 4",
        "tmux 3.3a bug: ICH with a count reaching the margin does nothing (fixed upstream)",
    ),
    (
        "emoji",
        "row 3",
        "a ZWJ sequence (family emoji) is one 2-column cell in tmux (glibc), three wide cells here, as in termwiz's views",
    ),
    (
        "tabs_and_stops",
        "row 4",
        "tmux ignores CHT (CSI I); xterm and ours move to the tab stop",
    ),
    (
        "cursor_movement",
        "row 5",
        "tmux ignores HPR (CSI a) and VPR (CSI e); xterm and ours move",
    ),
    (
        "cursor_movement",
        "row 6",
        "tmux ignores HPR (CSI a) and VPR (CSI e); xterm and ours move",
    ),
    (
        "rep_repeat",
        "row 1",
        "tmux repeats only ASCII with REP (CSI b), never wraps, and not after a control; ours follows xterm",
    ),
    (
        "rep_repeat",
        "row 2",
        "tmux repeats only ASCII with REP (CSI b), never wraps, and not after a control; ours follows xterm",
    ),
    (
        "rep_repeat",
        "row 4",
        "tmux repeats only ASCII with REP (CSI b), never wraps, and not after a control; ours follows xterm",
    ),
    (
        "rep_repeat",
        "cursor",
        "tmux repeats only ASCII with REP (CSI b), never wraps, and not after a control; ours follows xterm",
    ),
    (
        "alt_screen_47_1047",
        "row 0",
        "alacritty_terminal switches screens only with mode 1049, not the older 47 and 1047",
    ),
    (
        "alt_screen_47_1047",
        "row 1",
        "alacritty_terminal switches screens only with mode 1049, not the older 47 and 1047",
    ),
    (
        "alt_screen_47_1047",
        "row 2",
        "alacritty_terminal switches screens only with mode 1049, not the older 47 and 1047",
    ),
    (
        "alt_screen_47_1047",
        "alt_screen",
        "alacritty_terminal switches screens only with mode 1049, not the older 47 and 1047",
    ),
    (
        "random_bytes",
        "history",
        "the random screen pushed into history holds states tmux cannot capture faithfully (fixtures README); the visible screen is compared",
    ),
];

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    cols: usize,
    rows: usize,
    #[serde(default = "default_history")]
    history: usize,
    #[serde(default)]
    sync_reset: bool,
    steps: Vec<Step>,
}

fn default_history() -> usize {
    2000
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Step {
    Feed { feed: String },
    FeedHex { feed_hex: String },
    Resize { resize: (usize, usize) },
}

#[derive(Debug, Deserialize)]
struct Capture {
    cols: usize,
    rows: usize,
    cursor: (usize, usize),
    alt_screen: bool,
    lines: Vec<String>,
    history: Vec<String>,
}

fn fidelity_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity")
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

fn emulator(rows: usize, cols: usize, history: usize) -> Emulator {
    Emulator::new(rows, cols, history, Box::new(std::io::sink()))
}

/// Replays a case into our emulator.
fn replay(case: &Case) -> Emulator {
    let mut emu = emulator(case.rows, case.cols, case.history);
    for step in &case.steps {
        match step {
            Step::Feed { feed } => emu.feed(feed.as_bytes()),
            Step::FeedHex { feed_hex } => emu.feed(&hex(feed_hex)),
            Step::Resize { resize } => emu.resize(resize.1, resize.0),
        }
        if case.sync_reset && !matches!(step, Step::Resize { .. }) {
            emu.feed(b"\x1b\\\x1b\\\x18");
        }
    }
    emu
}

/// One cell: what it shows, and how.
type Cell = (String, Attrs);

/// A line as cells (a wide character is one cell; combining marks join the
/// cell before them).
fn cells(line: &Line) -> Vec<Cell> {
    let mut out: Vec<Cell> = Vec::new();
    for run in &line.runs {
        for c in run.text.chars() {
            let combining = unicode_width(c) == 0;
            match out.last_mut() {
                Some(last) if combining => last.0.push(c),
                _ => out.push((c.to_string(), run.attrs.clone())),
            }
        }
    }
    out
}

/// Zero for combining marks and joiners, as both sides' emulators see them.
fn unicode_width(c: char) -> usize {
    let zero = matches!(c as u32,
        0x0300..=0x036f | 0x1ab0..=0x1aff | 0x1dc0..=0x1dff | 0x20d0..=0x20ff
        | 0xfe00..=0xfe0f | 0xfe20..=0xfe2f | 0x200b..=0x200f | 0x1f3fb..=0x1f3ff);
    usize::from(!zero)
}

/// A tmux capture line as cells, read by a fresh one-row emulator.
fn tmux_cells(line: &str, cols: usize) -> Vec<Cell> {
    let mut emu = emulator(1, cols, 0);
    // The state every capture line starts from (fixtures README).
    emu.feed(b"\x1b[0m\x0f\x1b(B\x1b)0");
    emu.feed(line.as_bytes());
    let mut cells = cells(&emu.snapshot().lines[0]);
    // Blink and overline are read here, since the emulator drops them.
    for (cell, (blink, overline)) in cells.iter_mut().zip(blink_and_overline(line)) {
        cell.1.blink = blink;
        cell.1.overline = overline;
    }
    cells
}

/// For each printed cell of a tmux capture line: whether it blinks (SGR 5)
/// and is overlined (printed by tmux 3.3a as `5:3`).
fn blink_and_overline(line: &str) -> Vec<(bool, bool)> {
    let (mut blink, mut overline) = (false, false);
    let mut out = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.peek() != Some(&'[') {
                chars.next();
                continue;
            }
            chars.next();
            let mut params = String::new();
            for p in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&p) {
                    if p == 'm' {
                        let mut params = params.split(';');
                        while let Some(param) = params.next() {
                            if matches!(param, "38" | "48" | "58") {
                                // A colour: skip its 5;N or 2;R;G;B.
                                let skip = if params.next() == Some("2") { 3 } else { 1 };
                                params.nth(skip - 1);
                                continue;
                            }
                            match param {
                                "" | "0" => (blink, overline) = (false, false),
                                "5" | "6" => blink = true,
                                "25" => blink = false,
                                "5:3" => overline = true,
                                "5:5" => overline = false,
                                _ => {}
                            }
                        }
                    }
                    break;
                }
                params.push(p);
            }
        } else if c >= ' ' && unicode_width(c) > 0 {
            out.push((blink, overline));
        }
    }
    out
}

/// Compares one row: tmux's cells must be ours; past them ours are blank.
fn row_differs(ours: &Line, tmux: &str, cols: usize) -> Option<String> {
    let ours = cells(ours);
    let theirs = tmux_cells(tmux, cols);
    for (i, want) in theirs.iter().enumerate() {
        let got = ours.get(i);
        let blank_match = want.0 == " "
            && got.is_none_or(|g| g.0 == " " && g.1.bg.is_none() && want.1.bg.is_none());
        if got != Some(want) && !blank_match {
            return Some(format!(
                "cell {i}: ours {got:?}, tmux {want:?}\n  ours: {:?}\n  tmux: {:?}",
                ours.iter().map(|c| c.0.as_str()).collect::<String>(),
                theirs.iter().map(|c| c.0.as_str()).collect::<String>()
            ));
        }
    }
    if let Some((i, extra)) = ours
        .iter()
        .enumerate()
        .skip(theirs.len())
        .find(|(_, c)| c.0 != " ")
    {
        return Some(format!(
            "cell {i}: ours {extra:?} where tmux has nothing\n  ours: {:?}",
            ours.iter().map(|c| c.0.as_str()).collect::<String>()
        ));
    }
    None
}

/// Every difference of one case, as `(what, detail)`.
fn compare(case: &Case, capture: &Capture) -> Vec<(String, String)> {
    let mut emu = replay(case);
    let snap: Snapshot = emu.snapshot();
    let mut diffs = Vec::new();
    if (usize::from(snap.cols), usize::from(snap.rows)) != (capture.cols, capture.rows) {
        diffs.push((
            "size".to_string(),
            format!(
                "ours {}x{}, tmux {}x{}",
                snap.cols, snap.rows, capture.cols, capture.rows
            ),
        ));
        return diffs;
    }
    for (row, (ours, tmux)) in snap.lines.iter().zip(&capture.lines).enumerate() {
        if let Some(detail) = row_differs(ours, tmux, capture.cols) {
            diffs.push((format!("row {row}"), detail));
        }
    }
    // tmux's cursor sits at `cols` while a wrap is pending; ours stays on
    // the last column.
    let want = (capture.cursor.0.min(capture.cols - 1), capture.cursor.1);
    let got = (usize::from(snap.cursor.x), usize::from(snap.cursor.y));
    if got != want {
        diffs.push(("cursor".into(), format!("ours {got:?}, tmux {want:?}")));
    }
    if snap.alt_screen != capture.alt_screen {
        diffs.push((
            "alt_screen".into(),
            format!("ours {}, tmux {}", snap.alt_screen, capture.alt_screen),
        ));
    }
    let ours = emu.text(usize::MAX).history;
    let theirs: Vec<String> = capture
        .history
        .iter()
        .map(|line| {
            tmux_cells(line, capture.cols)
                .into_iter()
                .map(|c| c.0)
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    if ours != theirs {
        diffs.push((
            "history".into(),
            format!(
                "ours {} lines, tmux {}\n  ours: {:?}\n  tmux: {:?}",
                ours.len(),
                theirs.len(),
                ours.iter().rev().take(6).collect::<Vec<_>>(),
                theirs.iter().rev().take(6).collect::<Vec<_>>()
            ),
        ));
    }
    diffs
}

fn load() -> Vec<(Case, Capture)> {
    let dir = fidelity_dir();
    let cases: Vec<Case> =
        serde_json::from_slice(&std::fs::read(dir.join("cases.json")).expect("cases.json"))
            .expect("cases.json parses");
    cases
        .into_iter()
        .map(|case| {
            let path = dir.join("tmux").join(format!("{}.json", case.name));
            let capture: Capture = serde_json::from_slice(
                &std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
            )
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (case, capture)
        })
        .collect()
}

#[test]
fn every_case_matches_tmux_but_the_known_differences() {
    let cases = load();
    assert!(cases.len() >= 40, "only {} cases", cases.len());
    let mut unexpected = Vec::new();
    let mut known_seen = BTreeMap::new();
    for (case, capture) in &cases {
        for (what, detail) in compare(case, capture) {
            match KNOWN
                .iter()
                .find(|(name, w, _)| *name == case.name && *w == what)
            {
                Some(known) => {
                    known_seen.insert((known.0, known.1), known.2);
                }
                None => unexpected.push(format!("{} {what}: {detail}", case.name)),
            }
        }
    }
    for ((name, what), why) in &known_seen {
        eprintln!("known difference: {name} {what}: {why}");
    }
    assert!(
        unexpected.is_empty(),
        "{} differences from tmux:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
    // A known difference that no longer shows is stale: drop it from KNOWN.
    let stale: Vec<_> = KNOWN
        .iter()
        .filter(|(name, what, _)| !known_seen.contains_key(&(*name, *what)))
        .collect();
    assert!(stale.is_empty(), "stale known differences: {stale:?}");
}
