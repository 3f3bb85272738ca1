//! The cells an image covers, on the emulator's screen: a kept image
//! ([`crate::images`]) gets a space of its size, made of blank cells that
//! carry a mark of its own ([`crate::image_mark`]). The marks
//! go wherever the cells go, so the emulator itself keeps track of the
//! image: scrolling, scroll regions, reflow on resize and the compact
//! history move them; writing over a cell or clearing it takes its mark
//! away. [`Emulator::image_marks`] finds where each image's cells are now.
//!
//! The marked cells are spaces whose colour is the background's, so no
//! view shows anything there, and alacritty does not count them as empty
//! (a reflow keeps them). Views never see the marks as links
//! ([`crate::image_mark::is_mark`]).

use super::Emulator;
use crate::history;
use crate::image_mark::{mark, mark_index};
use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::{Column, Line as GridLine};
use alacritty_terminal::term::cell::{Cell, Hyperlink};
use alacritty_terminal::term::TermMode;
use alacritty_terminal::vte::ansi::{Color, NamedColor};
use std::collections::HashMap;

/// Where the cursor goes once an image's space is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CursorAfter {
    /// To the first column of the row below the image (sixel with sixel
    /// scrolling on, as tmux and xterm do).
    BelowAtLeft,
    /// To the column after the image on its last row (kitty, `C=0`).
    AfterLastRow,
    /// Where it was (kitty, `C=1`).
    Stays,
}

/// Where an image's marked cells are now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkSpan {
    /// The first marked cell, in reading order: its row (0 is the top of the
    /// screen, history rows are negative) and column.
    pub row: i64,
    pub col: usize,
    /// How many cells carry the mark.
    pub cells: usize,
}

impl Emulator {
    /// Makes the space of image `index` at the cursor: `rows` x `cols`
    /// cells (cut at the right edge; the screen scrolls as the cursor goes
    /// down; cut to the screen's height), then moves the cursor as `after`
    /// says. The program's colours
    /// and link stay as they were for what it writes next. The cells
    /// marked, for [`Emulator::image_marks`] to compare with.
    pub fn reserve_image(
        &mut self,
        index: u32,
        rows: usize,
        cols: usize,
        after: CursorAfter,
    ) -> usize {
        self.unpark();
        let columns = self.term.columns();
        let col = self.term.grid().cursor.point.column.0.min(columns - 1);
        let width = cols.clamp(1, columns - col);
        // Cut at the screen's height, as tmux does.
        let rows = rows.clamp(1, self.term.screen_lines());
        let saved = self.term.grid().cursor.template.clone();
        let mut template = Cell {
            fg: Color::Named(NamedColor::Background),
            ..Cell::default()
        };
        template.set_hyperlink(Some(mark(index)));
        self.term.grid_mut().cursor.template = template;
        let mut bytes = Vec::with_capacity(rows * (width + 8));
        for row in 0..rows {
            if row > 0 {
                // IND: down a row, scrolling at the bottom; the column stays.
                bytes.extend_from_slice(b"\x1bD");
            }
            bytes.resize(bytes.len() + width, b' ');
            bytes.extend_from_slice(format!("\x1b[{width}D").as_bytes());
        }
        self.feed(&bytes);
        self.term.grid_mut().cursor.template = saved;
        let moves: Vec<u8> = match after {
            CursorAfter::BelowAtLeft => b"\r\x1bD".to_vec(),
            CursorAfter::AfterLastRow if col + width >= columns => b"\r\x1bD".to_vec(),
            CursorAfter::AfterLastRow => format!("\x1b[{width}C").into_bytes(),
            CursorAfter::Stays => {
                let up = rows - 1;
                if up > 0 {
                    format!("\x1b[{up}A").into_bytes()
                } else {
                    Vec::new()
                }
            }
        };
        self.feed(&moves);
        rows * width
    }

    /// Where the marked cells of each image are (by index), on the screen
    /// shown now and in its history. The screen and the rows alacritty
    /// still holds are read by reference; the compact history (decoded row
    /// by row) only when one of the `wanted` images was not found there or
    /// may reach up into it.
    pub fn image_marks(&self, wanted: &[u32]) -> HashMap<u32, MarkSpan> {
        let mut found: HashMap<u32, MarkSpan> = HashMap::new();
        let cols = self.term.columns();
        let grid = self.term.grid();
        let held = history::shown_len(&self.term, &self.history);
        let in_grid = if self.alt_screen() {
            0
        } else {
            grid.history_size()
        };
        for r in 0..grid.screen_lines() {
            note_marks(&mut found, r as i64, &grid[GridLine(r as i32)], cols);
        }
        for back in 1..=in_grid {
            note_marks(
                &mut found,
                -(back as i64),
                &grid[GridLine(-(back as i32))],
                cols,
            );
        }
        let top = -(in_grid as i64);
        let missing = wanted.iter().any(|index| !found.contains_key(index));
        let reaches_up = held > in_grid && found.values().any(|span| span.row == top);
        if missing || reaches_up {
            for i in 0..held - in_grid {
                if let Some(row) = history::shown_row(&self.term, &self.history, i, cols) {
                    note_marks(&mut found, i as i64 - held as i64, &row, cols);
                }
            }
        }
        found
    }

    /// Whether the alternate screen is shown.
    pub fn alt_screen(&self) -> bool {
        self.term.mode().contains(TermMode::ALT_SCREEN)
    }

    /// The cursor's cell on the screen: (row, column).
    pub fn cursor(&self) -> (usize, usize) {
        let point = self.term.grid().cursor.point;
        (usize::try_from(point.line.0).unwrap_or(0), point.column.0)
    }

    /// The screen's size: (rows, columns).
    pub fn size(&self) -> (usize, usize) {
        (self.term.screen_lines(), self.term.columns())
    }
}

/// Counts the marked cells of `row` (row number `at`) into `found`,
/// keeping each image's first cell in reading order.
fn note_marks(found: &mut HashMap<u32, MarkSpan>, at: i64, row: &Row<Cell>, cols: usize) {
    let mut last: Option<(Hyperlink, u32)> = None;
    for col in 0..cols.min(row.len()) {
        let cell = &row[Column(col)];
        // Most cells have no extra storage: no link to clone.
        if cell.extra.is_none() {
            continue;
        }
        let Some(link) = cell.hyperlink() else {
            continue;
        };
        let index = match &last {
            Some((seen, index)) if *seen == link => *index,
            _ => {
                let Some(index) = mark_index(&link) else {
                    continue;
                };
                last = Some((link, index));
                index
            }
        };
        let span = found.entry(index).or_insert(MarkSpan {
            row: at,
            col,
            cells: 0,
        });
        span.cells += 1;
        if (at, col) < (span.row, span.col) {
            (span.row, span.col) = (at, col);
        }
    }
}
