//! A quiet screen's cells put away as compact rows, and put back before
//! the screen is next read or written.
//!
//! alacritty keeps every cell of every row it holds: 24 bytes a cell, 86 kB
//! for a 120x30 screen, most of an idle launcher's heap, though an idle
//! shell's screen is a prompt and blank rows. Parked, each row is the
//! history's compact form ([`crate::history::row_codec`]: a blank row is
//! one byte, a line of text about as many bytes as it has characters) and
//! alacritty's row an empty vector. Only the cells go: the cursor, the
//! modes, the saved cursors and the scroll region stay in place.

use crate::history::row_codec;
use alacritty_terminal::grid::{Dimensions, Grid, Row};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::Cell;

/// One grid's rows (its history's and its screen's, oldest first), each
/// as its width, the length of its compact form and that form, one after
/// another.
#[derive(Default)]
pub(super) struct ParkedRows {
    bytes: Vec<u8>,
}

impl ParkedRows {
    /// The bytes the rows take now.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.bytes.len()
    }
}

/// Both grids of a terminal, put away.
pub(super) struct Parked {
    pub(super) shown: ParkedRows,
    pub(super) other: ParkedRows,
}

/// The lines of `grid` that hold a row: its history's (negative) and its
/// screen's.
fn lines(grid: &Grid<Cell>) -> impl Iterator<Item = Line> {
    let history = grid.history_size() as i32;
    let screen = grid.screen_lines() as i32;
    (-history..screen).map(Line)
}

/// Puts `grid`'s rows away, leaving an empty row in the place of each.
pub(super) fn park(grid: &mut Grid<Cell>) -> ParkedRows {
    let mut bytes = Vec::new();
    let mut encoded = Vec::new();
    for line in lines(grid) {
        let row = std::mem::replace(&mut grid[line], Row::from_vec(Vec::new(), 0));
        encoded.clear();
        row_codec::encode(&row, row.len(), &mut encoded);
        put_u32(&mut bytes, row.len());
        put_u32(&mut bytes, encoded.len());
        bytes.extend_from_slice(&encoded);
    }
    bytes.shrink_to_fit();
    ParkedRows { bytes }
}

/// Puts the rows [`park`] took from `grid` back, in the same places.
pub(super) fn unpark(grid: &mut Grid<Cell>, parked: ParkedRows) {
    let mut at = 0;
    let bytes = &parked.bytes;
    let mut next = || -> Option<Row<Cell>> {
        let width = get_u32(bytes, &mut at)?;
        let len = get_u32(bytes, &mut at)?;
        let encoded = bytes.get(at..at.checked_add(len)?)?;
        at += len;
        // The history's round trip is exact for all a cell shows; a row
        // this module wrote always reads back.
        Some(row_codec::decode(encoded, width).unwrap_or_else(|| blank(width)))
    };
    for line in lines(grid) {
        let width = grid.columns();
        grid[line] = next().unwrap_or_else(|| blank(width));
    }
}

fn blank(width: usize) -> Row<Cell> {
    Row::from_vec(vec![Cell::default(); width], 0)
}

fn put_u32(out: &mut Vec<u8>, n: usize) {
    out.extend_from_slice(&u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes());
}

fn get_u32(bytes: &[u8], at: &mut usize) -> Option<usize> {
    let four: [u8; 4] = bytes.get(*at..*at + 4)?.try_into().ok()?;
    *at += 4;
    usize::try_from(u32::from_le_bytes(four)).ok()
}
