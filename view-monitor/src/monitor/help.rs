//! The Monitor's `?`: every key of the list (or, the prefix then `?`, of
//! the overlay), one a line in a box at the bottom of the screen, so none
//! is cut off at 80, 60 or fewer columns; any key closes it. On a screen
//! too short for them all, the box says how many it could not show.
//!
//! Pure: [`draw`] paints the keys on a surface.

use crate::cells::{at, draw_box, last_row_note, truncate, width};
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::color::AnsiColor;
use termwiz::surface::{Change, Surface};

/// A key (as typed) and what it does.
pub type KeyHelp = (String, &'static str);

/// The list's keys.
pub fn list_keys() -> Vec<KeyHelp> {
    [
        ("↑ ↓  k j", "select"),
        ("PgUp PgDn  g G", "page up or down, first, last"),
        ("Enter", "the overlay: its live screen"),
        ("a", "attach full screen; detach comes back"),
        ("i", "what agents did with it (activity)"),
        ("w", "what agents did on every instance"),
        ("x", "close it, after asking; forget if ended"),
        ("r", "reload an artifact: (its current file)"),
        ("/", "filter as you type; Esc clears it"),
        ("p", "show or hide the preview"),
        ("y n v", "approve, refuse, view a waiting call"),
        ("?", "these keys"),
        ("q  ctrl+c", "quit"),
    ]
    .into_iter()
    .map(|(k, what)| (k.to_string(), what))
    .collect()
}

/// The overlay's keys, with the prefix key named `prefix`.
pub fn overlay_keys(prefix: &str) -> Vec<KeyHelp> {
    vec![
        (
            format!("{prefix} d"),
            "close the overlay; the program goes on",
        ),
        (
            format!("{prefix} {prefix}"),
            "send the prefix key to the program",
        ),
        (
            "shift+PgUp PgDn".to_string(),
            "scroll its history (the wheel too)",
        ),
        (
            "any other key".to_string(),
            "to the program; in history: to live",
        ),
        (format!("{prefix} ?"), "these keys"),
    ]
}

/// Paints `keys` under `title` at the bottom of `screen`. On a screen too
/// small for a box, the last row lists them as far as it can.
pub fn draw(screen: &mut Surface, title: &str, keys: &[KeyHelp]) {
    let (cols, rows) = screen.dimensions();
    if cols == 0 || rows == 0 {
        return;
    }
    if cols < 24 || rows < 5 {
        let all: Vec<String> = keys.iter().map(|(k, what)| format!("{k} {what}")).collect();
        last_row_note(screen, &all.join(" · "));
        return;
    }
    // Border, keys, the closing line, border.
    let room = rows - 3;
    let (shown, left) = if keys.len() <= room {
        (keys.len(), 0)
    } else {
        (room - 1, keys.len() - (room - 1))
    };
    let height = shown + usize::from(left > 0) + 3;
    let top = rows - height.min(rows);
    draw_box(screen, top, &format!(" {title} "), AnsiColor::Aqua);
    let key_width = keys.iter().map(|(k, _)| width(k)).max().unwrap_or(0);
    let inner = cols - 2;
    let mut bold = CellAttributes::default();
    bold.set_intensity(Intensity::Bold);
    let mut changes = Vec::new();
    for (i, (key, what)) in keys.iter().take(shown).enumerate() {
        let pad = " ".repeat(key_width.saturating_sub(width(key)) + 2);
        changes.push(at(2, top + 1 + i));
        changes.push(Change::AllAttributes(bold.clone()));
        changes.push(Change::Text(truncate(key, inner.saturating_sub(2))));
        changes.push(Change::AllAttributes(CellAttributes::default()));
        let room = inner.saturating_sub(2 + width(key) + pad.len());
        changes.push(Change::Text(format!("{pad}{}", truncate(what, room))));
    }
    let mut row = top + 1 + shown;
    if left > 0 {
        changes.push(at(2, row));
        changes.push(Change::Text(truncate(
            &format!("… {left} more (a taller terminal shows them)"),
            inner.saturating_sub(2),
        )));
        row += 1;
    }
    changes.push(at(2, row));
    changes.push(Change::AllAttributes(bold));
    changes.push(Change::Text(truncate(
        "any key closes this",
        inner.saturating_sub(2),
    )));
    changes.push(Change::AllAttributes(CellAttributes::default()));
    screen.add_changes(changes);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(screen: &Surface) -> String {
        screen.screen_chars_to_string()
    }

    #[test]
    fn every_key_shows_whole_at_60_columns() {
        let mut screen = Surface::new(60, 24);
        draw(&mut screen, "keys", &list_keys());
        let shown = text(&screen);
        for (key, what) in list_keys() {
            let line = shown
                .lines()
                .find(|l| l.contains(what))
                .unwrap_or_else(|| panic!("{what:?} cut off:\n{shown}"));
            assert!(line.contains(&key), "{line}");
        }
        assert!(shown.contains("any key closes this"), "{shown}");
    }

    #[test]
    fn a_short_screen_says_what_it_leaves_out() {
        let mut screen = Surface::new(80, 8);
        draw(&mut screen, "keys", &list_keys());
        let shown = text(&screen);
        assert!(shown.contains("… 9 more"), "{shown}");
        assert!(shown.contains("any key closes this"), "{shown}");
    }
}
