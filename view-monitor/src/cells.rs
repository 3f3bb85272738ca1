//! Text measured in terminal cells, and the small drawing steps every
//! screen of the views shares: display width, cutting and padding to a
//! width, taking or skipping cells, a short age (`12s`, `5m`), moving the
//! cursor, an overlay's box and its last-row note on a termwiz `Surface`.
//! Used by the Monitor's list and overlay, the activity overlay and the
//! approval prompt alike. No I/O.

use termwiz::cell::{unicode_column_width, CellAttributes};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::surface::{Change, Position, Surface};
use tickloop_proto::escape::Part;
use time::OffsetDateTime;

/// Time since `at`, short: `12s`, `5m`, `3h`, `2d`; `-` without one.
pub fn age(at: Option<OffsetDateTime>, now: OffsetDateTime) -> String {
    let Some(at) = at else { return "-".into() };
    let secs = (now - at).whole_seconds().max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m", secs / 60),
        3600..=86_399 => format!("{}h", secs / 3600),
        _ => format!("{}d", secs / 86_400),
    }
}

/// The display width of `s` in cells.
pub fn width(s: &str) -> usize {
    unicode_column_width(s, None)
}

/// `s` cut to at most `max` cells, ending with `…` when cut; control
/// characters become spaces.
pub fn truncate(s: &str, max: usize) -> String {
    let clean: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if width(&clean) <= max {
        return clean;
    }
    if max == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in clean.chars() {
        let w = width(c.encode_utf8(&mut [0; 4]));
        if used + w > max - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `s` cut or padded with spaces to exactly `w` cells.
pub fn fit(s: &str, w: usize) -> String {
    let mut t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    t.push_str(&" ".repeat(pad));
    t
}

/// The first `n` cells of `s` (a wide character that would straddle the
/// edge is left out).
pub fn take_cells(s: &str, n: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    for c in s.chars() {
        let w = width(c.encode_utf8(&mut [0; 4]));
        if used + w > n {
            break;
        }
        used += w;
        out.push(c);
    }
    out
}

/// `s` without its first `n` cells.
pub fn skip_cells(s: &str, n: usize) -> String {
    let mut used = 0;
    let mut out = String::new();
    for c in s.chars() {
        if used >= n {
            out.push(c);
        } else {
            used += width(c.encode_utf8(&mut [0; 4]));
        }
    }
    out
}

/// Escaped text ([`tickloop_proto::escape`]) in rows of at most `max`
/// cells, whole: cut at any character (a command's spaces are shown as
/// they are), never inside an escape. At least one row.
pub fn wrap(shown: &str, max: usize) -> Vec<String> {
    let max = max.max(1);
    let mut rows = vec![String::new()];
    let mut used = 0;
    let mut put = |unit: &str, rows: &mut Vec<String>| {
        let w = width(unit);
        if used + w > max && used > 0 {
            rows.push(String::new());
            used = 0;
        }
        if let Some(row) = rows.last_mut() {
            row.push_str(unit);
        }
        used += w;
    };
    for part in tickloop_proto::escape::parts(shown) {
        match part {
            Part::Escape(escape) => put(escape, &mut rows),
            Part::Text(text) => {
                for c in text.chars() {
                    put(c.encode_utf8(&mut [0; 4]), &mut rows);
                }
            }
        }
    }
    rows
}

/// The changes that write escaped `text` with `attrs`, its escapes
/// (`\u{202E}`) in reverse video, so they are not taken for text typed
/// as it reads.
pub fn shown_text(text: &str, attrs: &CellAttributes) -> Vec<Change> {
    let mut escape = attrs.clone();
    escape.set_reverse(!attrs.reverse());
    let mut changes = Vec::new();
    for part in tickloop_proto::escape::parts(text) {
        let (piece, with) = match part {
            Part::Text(t) => (t, attrs),
            Part::Escape(e) => (e, &escape),
        };
        changes.push(Change::AllAttributes(with.clone()));
        changes.push(Change::Text(piece.to_string()));
    }
    changes.push(Change::AllAttributes(attrs.clone()));
    changes
}

/// Moves the cursor to column `x`, row `y`.
pub fn at(x: usize, y: usize) -> Change {
    Change::CursorPosition {
        x: Position::Absolute(x),
        y: Position::Absolute(y),
    }
}

/// An empty box from row `top` to the bottom of `screen`, full width, its
/// border in `color` with `title` on its top edge.
pub fn draw_box(screen: &mut Surface, top: usize, title: &str, color: AnsiColor) {
    let (cols, rows) = screen.dimensions();
    if cols < 2 || rows < top + 2 {
        return;
    }
    let inner = cols - 2;
    let mut border = CellAttributes::default();
    border.set_foreground(ColorAttribute::PaletteIndex(color as u8));
    let title = truncate(title, inner.saturating_sub(2));
    let mut changes = vec![
        at(0, top),
        Change::AllAttributes(border.clone()),
        Change::Text(format!(
            "┌─{title}{}┐",
            "─".repeat(inner.saturating_sub(1 + width(&title)))
        )),
    ];
    for row in top + 1..rows - 1 {
        changes.push(at(0, row));
        changes.push(Change::Text("│".into()));
        changes.push(Change::AllAttributes(CellAttributes::default()));
        changes.push(Change::Text(" ".repeat(inner)));
        changes.push(Change::AllAttributes(border.clone()));
        changes.push(Change::Text("│".into()));
    }
    changes.push(at(0, rows - 1));
    changes.push(Change::Text(format!("└{}┘", "─".repeat(inner))));
    changes.push(Change::AllAttributes(CellAttributes::default()));
    screen.add_changes(changes);
}

/// `text` in reverse video across the last row of `screen`: what an overlay
/// says when the screen is too small for its box.
pub fn last_row_note(screen: &mut Surface, text: &str) {
    let (cols, rows) = screen.dimensions();
    if rows == 0 {
        return;
    }
    let mut attrs = CellAttributes::default();
    attrs.set_reverse(true);
    let text = truncate(text, cols);
    screen.add_changes(vec![
        at(0, rows - 1),
        Change::AllAttributes(attrs),
        Change::Text(format!("{text:cols$}")),
        Change::AllAttributes(CellAttributes::default()),
    ]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::format_description::well_known::Rfc3339;

    fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-11-29T21:00:00Z", &Rfc3339).unwrap()
    }

    #[test]
    fn ages() {
        let at = |s: i64| Some(now() - time::Duration::seconds(s));
        assert_eq!(age(at(0), now()), "0s");
        assert_eq!(age(at(90), now()), "1m");
        assert_eq!(age(at(7200), now()), "2h");
        assert_eq!(age(at(3 * 86_400), now()), "3d");
        // A clock ahead of ours is "now", not negative.
        assert_eq!(age(at(-5), now()), "0s");
    }

    #[test]
    fn wrapping_keeps_every_character_and_every_escape_whole() {
        let shown =
            tickloop_proto::escape::escaped(&format!("ls{};touch F\u{202e}x", " ".repeat(20)));
        let rows = wrap(&shown, 8);
        assert_eq!(rows.concat(), shown);
        assert!(rows.iter().all(|r| width(r) <= 8), "{rows:?}");
        assert!(rows.iter().any(|r| r == "\\u{202E}"), "{rows:?}");
        assert_eq!(wrap("", 5), [""]);
        assert_eq!(wrap("日本語", 4), ["日本", "語"]);
    }

    #[test]
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(truncate("hello world", 5), "hell…");
        assert_eq!(truncate("日本語", 4), "日…");
        assert_eq!(truncate("a\nb", 5), "a b");
        assert_eq!(fit("ab", 4), "ab  ");
    }
}
