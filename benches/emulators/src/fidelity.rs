//! Text-level fidelity against tmux captures: replay each case's steps into a
//! candidate and compare the visible rows, the cursor and the history.

use crate::candidates::{Candidate, Kind};
use serde_json::Value;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

/// Cases whose screen records a tmux 3.3a behaviour that differs from xterm
/// (listed in launcher/tests/fidelity/README.md): pending-wrap controls, the
/// ICH bug, ignored CHT/HPR/VPR, REP limits, BS reverse-wrap, alternate
/// screen 47 cleared on entry.
pub const TMUX_QUIRKS: &[&str] = &[
    "autowrap_pending_wrap_controls",
    "insert_delete_chars",
    "tabs_and_stops",
    "cursor_movement",
    "rep_repeat",
    "backspace_wide",
    "alt_screen_47_1047",
];

/// Cases whose history records a tmux 3.3a behaviour that differs from
/// xterm: lines scrolled out of a partial scroll region (LF, CSI S) and ED 2
/// go into the history.
pub const TMUX_HISTORY_QUIRKS: &[&str] =
    &["scroll_region_lf", "scroll_su_sd", "erase_display_2_bg"];

pub enum Step {
    Feed(Vec<u8>),
    Resize(usize, usize),
}

pub struct Case {
    pub name: String,
    pub cols: usize,
    pub rows: usize,
    pub history: Option<usize>,
    /// The generator wrote `ESC \\ ESC \\ CAN` after every feed step.
    pub sync_reset: bool,
    pub steps: Vec<Step>,
}

/// What tmux showed after the same steps.
pub struct Expect {
    /// Final width.
    pub cols: usize,
    pub cursor: (usize, usize),
    pub alt_screen: Option<bool>,
    pub lines: Vec<String>,
    pub history: Option<Vec<String>>,
}

fn usize_of(v: &Value) -> Option<usize> {
    v.as_u64().and_then(|n| usize::try_from(n).ok())
}

fn decode_hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err("odd number of hex digits".into());
    }
    digits
        .chunks(2)
        .map(|pair| {
            let text = std::str::from_utf8(pair).map_err(|e| e.to_string())?;
            u8::from_str_radix(text, 16).map_err(|e| format!("bad hex {text:?}: {e}"))
        })
        .collect()
}

fn parse_case(v: &Value) -> Result<Case, String> {
    let name = v["name"].as_str().ok_or("case without name")?.to_string();
    let cols = usize_of(&v["cols"]).ok_or_else(|| format!("{name}: no cols"))?;
    let rows = usize_of(&v["rows"]).ok_or_else(|| format!("{name}: no rows"))?;
    let history = usize_of(&v["history"]);
    let sync_reset = v["sync_reset"].as_bool().unwrap_or(false);
    let mut steps = Vec::new();
    for step in v["steps"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
        if let Some(text) = step.get("feed").and_then(Value::as_str) {
            steps.push(Step::Feed(text.as_bytes().to_vec()));
        } else if let Some(hex) = step.get("feed_hex").and_then(Value::as_str) {
            steps.push(Step::Feed(
                decode_hex(hex).map_err(|e| format!("{name}: {e}"))?,
            ));
        } else if let Some(size) = step.get("resize").and_then(Value::as_array) {
            let c = size.first().and_then(usize_of);
            let r = size.get(1).and_then(usize_of);
            match (c, r) {
                (Some(c), Some(r)) => steps.push(Step::Resize(c, r)),
                _ => return Err(format!("{name}: bad resize step")),
            }
        } else {
            return Err(format!("{name}: unknown step {step}"));
        }
    }
    Ok(Case {
        name,
        cols,
        rows,
        history,
        sync_reset,
        steps,
    })
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .map(|s| s.as_str().unwrap_or_default().to_string())
            .collect()
    })
}

fn parse_expect(v: &Value) -> Result<Expect, String> {
    let cursor = v["cursor"].as_array().ok_or("no cursor")?;
    let cx = cursor.first().and_then(usize_of).ok_or("bad cursor")?;
    let cy = cursor.get(1).and_then(usize_of).ok_or("bad cursor")?;
    Ok(Expect {
        cols: usize_of(&v["cols"]).ok_or("no cols")?,
        cursor: (cx, cy),
        alt_screen: v["alt_screen"].as_bool(),
        lines: strings(&v["lines"]).ok_or("no lines")?,
        history: strings(&v["history"]),
    })
}

/// Loaded fixtures: each case with its tmux capture, or why it has none.
pub struct Fixtures {
    pub cases: Vec<(Case, Result<Expect, String>)>,
}

pub fn load(dir: &Path) -> Result<Fixtures, String> {
    let path = dir.join("cases.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let json: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let list = json
        .as_array()
        .ok_or_else(|| format!("{}: not an array", path.display()))?;
    let mut cases = Vec::new();
    for v in list {
        let case = parse_case(v)?;
        let tmux = dir.join("tmux").join(format!("{}.json", case.name));
        let expect = std::fs::read_to_string(&tmux)
            .map_err(|e| format!("{}: {e}", tmux.display()))
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()))
            .and_then(|v| parse_expect(&v));
        cases.push((case, expect));
    }
    Ok(Fixtures { cases })
}

/// Remove escape sequences (capture-pane -e writes SGR; anything else that
/// slipped in goes too).
pub fn strip_escapes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // CSI: parameters and intermediates, then one final byte.
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') | Some('P') | Some('_') | Some('^') | Some('X') => {
                // String until BEL or ST.
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            Some('(') | Some(')') | Some('*') | Some('+') => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

/// tmux prints cells drawn with the DEC special graphics set as their ASCII
/// byte between SO and SI; turn them into the characters a terminal shows.
pub fn decode_dec_graphics(s: &str) -> String {
    const TABLE: [char; 32] = [
        ' ', '◆', '▒', '␉', '␌', '␍', '␊', '°', '±', '␤', '␋', '┘', '┐', '┌', '└', '┼', '⎺', '⎻',
        '─', '⎼', '⎽', '├', '┤', '┴', '┬', '│', '≤', '≥', 'π', '≠', '£', '·',
    ];
    let mut out = String::with_capacity(s.len());
    let mut graphics = false;
    for c in s.chars() {
        match c {
            '\x0e' => graphics = true,
            '\x0f' => graphics = false,
            '\x5f'..='\x7e' if graphics => out.push(TABLE[c as usize - 0x5f]),
            c => out.push(c),
        }
    }
    out
}

/// A tmux line as text: escapes removed, DEC graphics decoded.
pub fn tmux_text(s: &str) -> String {
    decode_dec_graphics(&strip_escapes(s))
}

fn norm(s: &str) -> &str {
    s.trim_end_matches(' ')
}

/// How one candidate did on one case.
pub struct Outcome {
    pub rows_ok: bool,
    pub cursor_ok: bool,
    /// Zero-based rows that differ.
    pub bad_rows: Vec<usize>,
    pub got_cursor: (usize, usize),
    pub want_cursor: (usize, usize),
    pub alt_ok: Option<bool>,
    /// None when tmux gave no history or the candidate keeps none.
    pub history_ok: Option<bool>,
    pub history_detail: String,
    /// tmux's history for this case is informational only (see the
    /// fixtures' README): left out of the history score.
    pub history_informational: bool,
    pub panicked: Option<String>,
    /// First differing row, for the report: (row, got, want).
    pub first_diff: Option<(usize, String, String)>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        self.panicked.is_none() && self.rows_ok && self.cursor_ok
    }

    /// Fails only because the cursor is in the pending-wrap state, which
    /// tmux shows as x == cols and the adapter could only show as cols - 1.
    pub fn pending_wrap_only(&self, cols: usize) -> bool {
        self.panicked.is_none()
            && self.rows_ok
            && !self.cursor_ok
            && self.want_cursor.0 == cols
            && self.got_cursor == (cols - 1, self.want_cursor.1)
    }

    /// A short reason for a failure, for the report.
    pub fn reason(&self) -> String {
        if let Some(p) = &self.panicked {
            return format!("panicked: {p}");
        }
        let mut parts = Vec::new();
        if !self.rows_ok {
            let rows: Vec<String> = self
                .bad_rows
                .iter()
                .take(6)
                .map(|r| r.to_string())
                .collect();
            let more = if self.bad_rows.len() > 6 { ",…" } else { "" };
            parts.push(format!("rows {}{more} differ", rows.join(",")));
        }
        if !self.cursor_ok {
            parts.push(format!(
                "cursor {:?} vs tmux {:?}",
                self.got_cursor, self.want_cursor
            ));
        }
        parts.join("; ")
    }
}

fn replay(kind: Kind, case: &Case) -> Box<dyn Candidate> {
    let mut term = kind.build(case.cols, case.rows, case.history.unwrap_or(2000));
    for step in &case.steps {
        match step {
            Step::Feed(bytes) => {
                term.feed(bytes);
                if case.sync_reset {
                    term.feed(b"\x1b\\\x1b\\\x18");
                }
            }
            Step::Resize(c, r) => term.resize(*c, *r),
        }
    }
    term
}

pub fn run(kind: Kind, case: &Case, want: &Expect) -> Outcome {
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        let mut term = replay(kind, case);
        let screen = term.screen();
        let history = term.history();
        (screen, history)
    }));
    let (screen, history) = match result {
        Ok(v) => v,
        Err(payload) => {
            return Outcome {
                rows_ok: false,
                cursor_ok: false,
                bad_rows: vec![],
                got_cursor: (0, 0),
                want_cursor: want.cursor,
                alt_ok: None,
                history_ok: None,
                history_detail: String::new(),
                history_informational: false,
                panicked: Some(crate::last_panic().unwrap_or_else(|| crate::panic_text(&*payload))),
                first_diff: None,
            }
        }
    };
    let want_lines: Vec<String> = want.lines.iter().map(|l| tmux_text(l)).collect();
    let n = want_lines.len().max(screen.rows.len());
    let mut bad_rows = Vec::new();
    let mut first_diff = None;
    for i in 0..n {
        let got = screen.rows.get(i).map(String::as_str).unwrap_or("");
        let exp = want_lines.get(i).map(String::as_str).unwrap_or("");
        if norm(got) != norm(exp) {
            bad_rows.push(i);
            if first_diff.is_none() {
                first_diff = Some((i, norm(got).to_string(), norm(exp).to_string()));
            }
        }
    }
    let (history_ok, history_detail) = match (&want.history, history) {
        (Some(want_h), Some(got_h)) => {
            let want_h: Vec<String> = want_h.iter().map(|l| tmux_text(l)).collect();
            let same_len = want_h.len() == got_h.len();
            let differing = want_h
                .iter()
                .zip(got_h.iter())
                .filter(|(a, b)| norm(a) != norm(b))
                .count();
            let ok = same_len && differing == 0;
            let detail = if ok {
                String::new()
            } else {
                format!(
                    "{} rows vs tmux {}, {} of the first {} differ",
                    got_h.len(),
                    want_h.len(),
                    differing,
                    want_h.len().min(got_h.len())
                )
            };
            (Some(ok), detail)
        }
        _ => (None, String::new()),
    };
    Outcome {
        rows_ok: bad_rows.is_empty(),
        cursor_ok: screen.cursor == want.cursor,
        bad_rows,
        got_cursor: screen.cursor,
        want_cursor: want.cursor,
        alt_ok: want.alt_screen.map(|a| a == screen.alt_screen),
        history_ok,
        history_detail,
        history_informational: case.name == "random_bytes",
        panicked: None,
        first_diff,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_sgr_and_strings() {
        assert_eq!(
            strip_escapes("\x1b[1;38;5;10mhi\x1b[0m \x1b]8;;x\x1b\\there\x1b[39m"),
            "hi there"
        );
    }

    #[test]
    fn hex() {
        assert_eq!(decode_hex("1b5b41 0a").unwrap(), b"\x1b[A\n");
    }
}
