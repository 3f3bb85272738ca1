//! A surface kept from frame to frame (what a view's terminal shows, or a
//! Tick's screen as a view last drew it): changes applied to it without
//! the log termwiz would keep, and by how many rows its content scrolled,
//! so that a scroll is sent as one rather than row by row.

use std::hash::{Hash, Hasher};
use termwiz::surface::{Change, Surface};

/// Applies `changes` to `shown`, the surface that stands for what a
/// terminal shows, which lives as long as its view. A surface also logs
/// every change for a later `get_changes`; nothing here asks, so the log is
/// dropped at once: kept, it grew by every frame drawn for as long as the
/// view was open (a megabyte a second under a busy Tick).
pub(super) fn show(shown: &mut Surface, changes: Vec<Change>) {
    shown.add_changes(changes);
    shown.flush_changes_older_than(shown.current_seqno());
}

/// By how many rows the top `region` rows of `old` moved up to become those
/// of `new`: the count (at most half the region) under which the most
/// non-blank rows of `new` are found in `old`, when that is at least half the
/// region and more than without scrolling. The rows that still differ (the
/// new ones at the bottom) are left to `diff_screens`.
pub(super) fn scrolled_up_by(old: &Surface, new: &Surface, region: usize) -> Option<usize> {
    if region < 4 || old.dimensions() != new.dimensions() || region > old.dimensions().1 {
        return None;
    }
    // One fingerprint per row, of its text, so that the search below compares
    // numbers, not cells; `None` for a blank row. Attributes are left out:
    // the scroll only has to be worth it, `diff_screens` then fixes any cell
    // that still differs.
    let fingerprints = |surface: &Surface| -> Vec<Option<u64>> {
        surface
            .screen_lines()
            .iter()
            .take(region)
            .map(|line| {
                // The text without trailing blanks, hashed cell by cell
                // (no string built: this runs for every row of every frame).
                let mut hasher = super::fingerprint::hasher();
                let (mut blanks, mut any) = (0usize, false);
                for cell in line.visible_cells() {
                    let text = cell.str();
                    if text == " " || text.is_empty() {
                        blanks += 1;
                        continue;
                    }
                    if blanks > 0 {
                        blanks.hash(&mut hasher);
                        blanks = 0;
                    }
                    text.hash(&mut hasher);
                    any = true;
                }
                any.then(|| hasher.finish())
            })
            .collect()
    };
    scroll_count(&fingerprints(old), &fingerprints(new), region)
}

/// By how many rows the top `region` rows fingerprinted `old_rows` moved up
/// to become `new_rows` (see [`scrolled_up_by`]).
pub(super) fn scroll_count(
    old_rows: &[Option<u64>],
    new_rows: &[Option<u64>],
    region: usize,
) -> Option<usize> {
    if region < 4 || old_rows.len() < region || new_rows.len() < region {
        return None;
    }
    let matches = |count: usize| {
        (0..region - count)
            .filter(|&row| new_rows[row].is_some() && old_rows[row + count] == new_rows[row])
            .count()
    };
    let unscrolled = matches(0);
    let (best, count) = (1..=region / 2)
        .map(|count| (matches(count), count))
        .max_by_key(|&(found, count)| (found, std::cmp::Reverse(count)))?;
    (best > unscrolled && best * 2 >= region).then_some(count)
}
