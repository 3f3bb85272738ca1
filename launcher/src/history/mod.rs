//! The screen's history, compact: the rows that scrolled off the top of the
//! normal screen, oldest first, each kept as text and style runs
//! ([`row_codec`]) in one byte ring, at most `limit` of them.
//!
//! alacritty keeps history as full rows of 24-byte cells, every column of
//! every row: 2,000 lines at 120 columns are 5.8 MB. Rows that scroll off
//! still land there, at no cost on the output's path;
//! [`handler::compact`] moves them (but the newest) into this store when
//! the output pauses, and once a second during a flood, so that encoding
//! costs at most a history's worth of rows a second however fast rows
//! scroll by. Rows go back into the emulator only for a resize, which
//! reflows them exactly as alacritty would have ([`crate::emulator`]), and
//! come out again after. [`shown_len`] and [`shown_row`] read both parts
//! as one.

pub mod handler;
pub mod row_codec;

use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Cell;
use alacritty_terminal::term::{Term, TermMode};
use std::collections::VecDeque;

/// Lines of history a view or `screen` sees: none on the alternate screen
/// (as alacritty, which keeps the normal screen's history out of reach
/// there), else the compact rows and the one alacritty still holds.
pub fn shown_len<L: EventListener>(term: &Term<L>, history: &History) -> usize {
    if term.mode().contains(TermMode::ALT_SCREEN) {
        0
    } else {
        history.len() + term.grid().history_size()
    }
}

/// Line `index` of the history [`shown_len`] counts (0 is the oldest),
/// `cols` cells wide.
pub fn shown_row<L: EventListener>(
    term: &Term<L>,
    history: &History,
    index: usize,
    cols: usize,
) -> Option<Row<Cell>> {
    if index < history.len() {
        return history.row(index, cols);
    }
    let back = shown_len(term, history).checked_sub(index)?;
    let grid = term.grid();
    (back >= 1 && back <= grid.history_size()).then(|| grid[Line(-(back as i32))].clone())
}

/// The rows that scrolled off, compact.
#[derive(Debug, Default)]
pub struct History {
    /// Every row's bytes, oldest first, back to back.
    bytes: VecDeque<u8>,
    /// Where each row starts, counted from the first byte ever pushed.
    starts: VecDeque<u64>,
    /// The count of bytes ever dropped from the front (where `bytes[0]` is).
    base: u64,
    /// The count of bytes ever pushed (where the next row starts).
    end: u64,
    /// The most rows kept; the oldest go first.
    limit: usize,
    /// Rows pushed in all (to tell whether anything changed).
    pushed: u64,
    /// A scratch row, reused while encoding.
    scratch: Vec<u8>,
}

impl History {
    /// An empty history keeping at most `limit` rows.
    pub fn new(limit: usize) -> Self {
        History {
            limit,
            ..History::default()
        }
    }

    /// Rows held.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// No rows held.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The most rows kept.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Rows pushed since the history was made (cleared or not).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Bytes held for the rows (not counting what the ring keeps spare).
    pub fn bytes(&self) -> usize {
        self.bytes.len() + self.starts.len() * std::mem::size_of::<u64>()
    }

    /// Adds `row` (its first `cols` cells) as the newest, dropping the
    /// oldest beyond the limit.
    pub fn push(&mut self, row: &Row<Cell>, cols: usize) {
        if self.limit == 0 {
            return;
        }
        self.scratch.clear();
        row_codec::encode(row, cols, &mut self.scratch);
        self.starts.push_back(self.end);
        self.bytes.extend(&self.scratch);
        self.end += self.scratch.len() as u64;
        self.pushed += 1;
        while self.starts.len() > self.limit {
            self.drop_oldest();
        }
    }

    fn drop_oldest(&mut self) {
        if self.starts.pop_front().is_none() {
            return;
        }
        let next = self.starts.front().copied().unwrap_or(self.end);
        let len = usize::try_from(next - self.base).unwrap_or(self.bytes.len());
        self.bytes.drain(..len.min(self.bytes.len()));
        self.base = next;
    }

    /// Row `index` (0 is the oldest), `cols` cells wide; `None` past the end.
    pub fn row(&self, index: usize, cols: usize) -> Option<Row<Cell>> {
        let start = *self.starts.get(index)?;
        let end = self.starts.get(index + 1).copied().unwrap_or(self.end);
        let from = usize::try_from(start - self.base).ok()?;
        let to = usize::try_from(end - self.base).ok()?;
        let bytes: Vec<u8> = self.bytes.range(from..to).copied().collect();
        // Only this module writes the bytes; a row that does not decode
        // would be a bug here, shown as a blank row rather than a panic.
        Some(row_codec::decode(&bytes, cols).unwrap_or_else(|| Row::new(cols.max(1))))
    }

    /// Takes the newest `count` rows out (oldest of them first).
    pub fn take_newest(&mut self, count: usize, cols: usize) -> Vec<Row<Cell>> {
        let count = count.min(self.len());
        let first = self.len() - count;
        let rows = (first..self.len())
            .filter_map(|i| self.row(i, cols))
            .collect();
        if count > 0 {
            let cut = self.starts[first];
            self.starts.truncate(first);
            let keep = usize::try_from(cut - self.base).unwrap_or(self.bytes.len());
            self.bytes.truncate(keep);
            self.end = cut;
        }
        rows
    }

    /// Forgets every row.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.starts.clear();
        self.base = self.end;
    }

    /// Drops the oldest rows until at most `rows` are held.
    pub fn trim_to(&mut self, rows: usize) {
        while self.starts.len() > rows {
            self.drop_oldest();
        }
    }

    /// Gives back the ring's spare room.
    pub fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.starts.shrink_to_fit();
        self.scratch = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alacritty_terminal::index::Column;

    fn text_row(text: &str, cols: usize) -> Row<Cell> {
        let mut row = Row::<Cell>::new(cols);
        for (i, c) in text.chars().enumerate().take(cols) {
            row[Column(i)].c = c;
        }
        row
    }

    fn text(row: &Row<Cell>) -> String {
        crate::screen_model::row_text(row, row.len())
    }

    #[test]
    fn keeps_the_newest_rows_up_to_the_limit() {
        let mut history = History::new(3);
        for i in 0..5 {
            history.push(&text_row(&format!("line {i}"), 10), 10);
        }
        assert_eq!(history.len(), 3);
        assert_eq!(history.pushed(), 5);
        let rows: Vec<String> = (0..3).map(|i| text(&history.row(i, 10).unwrap())).collect();
        assert_eq!(rows, ["line 2", "line 3", "line 4"]);
        assert!(history.row(3, 10).is_none());

        let newest = history.take_newest(2, 10);
        assert_eq!(
            newest.iter().map(text).collect::<Vec<_>>(),
            ["line 3", "line 4"]
        );
        assert_eq!(history.len(), 1);
        history.push(&text_row("again", 10), 10);
        assert_eq!(text(&history.row(1, 10).unwrap()), "again");
        assert_eq!(text(&history.row(0, 10).unwrap()), "line 2");

        history.trim_to(1);
        assert_eq!(history.len(), 1);
        assert_eq!(text(&history.row(0, 10).unwrap()), "again");
        history.clear();
        assert!(history.is_empty());
        history.push(&text_row("after", 10), 10);
        assert_eq!(text(&history.row(0, 10).unwrap()), "after");

        let mut none = History::new(0);
        none.push(&text_row("x", 10), 10);
        assert!(none.is_empty());
    }

    #[test]
    fn a_full_history_of_log_lines_is_small() {
        let mut history = History::new(2000);
        for i in 0..3000 {
            history.push(
                &text_row(
                    &format!(
                        "{i:>6} some log text that is eighty characters long, more or less, ok"
                    ),
                    120,
                ),
                120,
            );
        }
        // alacritty: 2000 x 120 x 24 bytes = 5.76 MB.
        assert!(history.bytes() < 2000 * 120, "{}", history.bytes());
    }
}
