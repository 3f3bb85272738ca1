//! Frames for one view made from what the frame before left ([`Composer`]):
//! the Tick's screen kept as a surface, and the view drawn from it kept
//! too, so a frame costs the rows that changed, with or without a status
//! line over it.

use std::borrow::Cow;

use super::frame::{line_changes, line_key, Delta, Frame, Kept, Layout, Since, ViewShape};
use super::kept::{scroll_count, show};
use termwiz::surface::{Change, Position, Surface};
use tickloop_proto::attach::Snapshot;

/// Composes frames for one view, keeping the Tick's screen as a surface
/// from frame to frame: only the lines that changed since the frame before
/// are drawn into it again (a keystroke's echo changes one), where
/// [`compose`](super::compose) draws every line of the screen for each frame. A view that
/// is not the Tick's screen as it is (a status line on its last row, the
/// history marker, another size) is kept as well, and only its rows whose
/// line changed are copied again.
#[derive(Default)]
pub struct Composer {
    model: Surface,
    /// Each row's [`line_key`] as `model` has it.
    keys: Vec<Option<u64>>,
    /// The columns each row's line covers in `model`; the cells past them
    /// are blank.
    ends: Vec<usize>,
    view: Option<KeptView>,
    /// The kept surface the frame before was.
    last: Option<Kept>,
}

/// A view drawn from the kept model with something over it or at another
/// size.
struct KeptView {
    surface: Surface,
    shape: ViewShape,
    /// Each shown Tick row's [`line_key`] as `surface` has it; `None` when
    /// not known (never copied).
    rows: Vec<Option<Option<u64>>>,
    /// The status line and the marker as drawn on `surface`.
    status: Option<String>,
    marker: Option<String>,
    /// The first row holds a marker that is to go: it is cleared before it
    /// is copied, though not known.
    clear_first: bool,
}

impl Composer {
    /// [`compose`](super::compose), from the kept surfaces.
    pub fn compose(
        &mut self,
        snap: &Snapshot,
        cols: u16,
        rows: u16,
        note: &str,
        force_status: bool,
    ) -> Frame<'_> {
        let layout = Layout::new(snap, cols, rows, note, force_status);
        let kept = if layout.is_the_model(snap) {
            Kept::Model
        } else {
            Kept::View(layout.shape(snap))
        };
        let followed = self.last.replace(kept) == Some(kept);
        let new_view = match kept {
            Kept::Model => false,
            Kept::View(shape) => self.view.as_ref().is_none_or(|view| view.shape != shape),
        };
        let model_delta = self.update(snap, kept == Kept::Model || new_view, followed);
        let Kept::View(shape) = kept else {
            // Borrowed: a frame that shows the screen as it is (the common
            // case, a keystroke's echo) costs no copy of it.
            let mut frame = layout.frame(Cow::Borrowed(&self.model), Some(kept), &self.keys, snap);
            frame.delta = model_delta;
            return frame;
        };
        // A new view: made from the model when the model was just drawn
        // from blank, the view shows all of it but what goes over it (a
        // view's first frame, with the note on its last row), and every
        // line is plain text (drawn the same on any surface, as a copy
        // cell by cell draws it); else blank.
        let mut since = followed.then_some(Since::FrameBefore);
        let mut changes = Vec::new();
        if new_view {
            since = Some(Since::Blank);
            let from_model = model_delta.filter(|delta| {
                delta.since == Since::Blank
                    && shows_the_whole_model(&shape, layout.height)
                    && snap.lines.iter().all(printable_ascii)
            });
            self.view = Some(match from_model {
                Some(delta) => {
                    changes = delta.changes;
                    KeptView::of_model(&self.model, &self.keys, shape, layout.height)
                }
                None => KeptView::blank(shape, &layout),
            });
        }
        let view = self
            .view
            .get_or_insert_with(|| KeptView::blank(shape, &layout));
        let model = ModelRows {
            surface: &self.model,
            keys: &self.keys,
            ends: &self.ends,
            lines: &snap.lines,
        };
        changes.extend(view.update(&model, &layout));
        let mut frame = layout.frame(Cow::Borrowed(&view.surface), Some(kept), &self.keys, snap);
        frame.delta = since.map(|since| Delta { changes, since });
        frame
    }

    /// Brings the kept model to `snap`; with `keep_changes`, the changes
    /// that did, when they are all of them since the model's frame before
    /// (`followed`) or since it was blank (started again, at another size).
    fn update(&mut self, snap: &Snapshot, keep_changes: bool, followed: bool) -> Option<Delta> {
        let size = (usize::from(snap.cols), usize::from(snap.rows));
        let started_again = self.model.dimensions() != size || self.keys.len() != size.1;
        if started_again {
            self.model = Surface::new(size.0, size.1);
            self.keys = vec![None; size.1];
            self.ends = vec![0; size.1];
        }
        let lines = &snap.lines[..size.1.min(snap.lines.len())];
        let keys: Vec<Option<u64>> = lines.iter().map(line_key).collect();
        let mut changes = Vec::new();
        // Output that scrolled the Tick's screen moves the kept rows up
        // rather than drawing every row again.
        if let Some(count) = scroll_count(&self.keys, &keys, size.1) {
            changes.push(Change::ScrollRegionUp {
                first_row: 0,
                region_size: size.1,
                scroll_count: count,
            });
            self.keys.drain(..count);
            self.keys.resize(size.1, None);
            self.ends.drain(..count);
            self.ends.resize(size.1, 0);
        }
        for (y, (line, key)) in lines.iter().zip(keys).enumerate() {
            if self.keys[y] == key {
                continue;
            }
            self.keys[y] = key;
            let end = match key {
                Some(_) => {
                    let (drawn, end) = line_changes(y, line, size.0);
                    changes.extend(drawn);
                    end
                }
                None => 0,
            };
            // Only the columns the old line covered past the new one's are
            // blanked: clearing the whole row cost a cell's write for every
            // column, twice a frame (here, then on the view's terminal).
            let old_end = std::mem::replace(&mut self.ends[y], end);
            if old_end > end {
                changes.extend([
                    Change::CursorPosition {
                        x: Position::Absolute(end),
                        y: Position::Absolute(y),
                    },
                    Change::AllAttributes(Default::default()),
                    Change::Text(" ".repeat(old_end - end)),
                ]);
            }
        }
        let since = if started_again {
            Some(Since::Blank)
        } else if followed {
            Some(Since::FrameBefore)
        } else {
            None
        };
        let kept = since.filter(|_| keep_changes).map(|since| Delta {
            changes: changes.clone(),
            since,
        });
        if !changes.is_empty() {
            show(&mut self.model, changes);
        }
        kept
    }
}

/// Whether a view of `shape` that shows `height` of the Tick's rows shows
/// the Tick's whole screen at its size, but for its last row at most (the
/// status line's).
fn shows_the_whole_model(shape: &ViewShape, height: usize) -> bool {
    let (cols, rows) = (usize::from(shape.tick_cols), usize::from(shape.tick_rows));
    shape.cols == cols && shape.rows == rows && shape.width == cols && height + 1 >= rows
}

impl KeptView {
    /// A view of `shape` that shows nothing yet.
    fn blank(shape: ViewShape, layout: &Layout) -> Self {
        KeptView {
            surface: Surface::new(layout.cols, layout.rows),
            shape,
            rows: vec![None; layout.height],
            status: None,
            marker: None,
            clear_first: false,
        }
    }

    /// A view of `shape` ([`shows_the_whole_model`]) that shows `model`,
    /// whose rows have the fingerprints `keys`: a copy of it, nothing over
    /// it yet.
    fn of_model(model: &Surface, keys: &[Option<u64>], shape: ViewShape, height: usize) -> Self {
        let mut surface = model.clone();
        surface.flush_changes_older_than(surface.current_seqno());
        KeptView {
            surface,
            shape,
            rows: keys.iter().take(height).map(|key| Some(*key)).collect(),
            status: None,
            marker: None,
            clear_first: false,
        }
    }

    /// Brings the view to `model`, with `layout`'s status line and marker
    /// over it; the changes that did.
    fn update(&mut self, model: &ModelRows<'_>, layout: &Layout) -> Vec<Change> {
        let mut changes = Vec::new();
        if self.marker.as_deref() != layout.marker() && self.marker.is_some() {
            // The old marker goes with its row, cleared and copied again.
            if let Some(first) = self.rows.first_mut() {
                *first = None;
                self.clear_first = true;
            }
        }
        let first_copied = self.copy_changed_rows(model, &mut changes);
        if self.status.as_deref() != layout.status_line() {
            self.draw(layout.status_changes(), &mut changes);
            self.status = layout.status_line().map(str::to_string);
        }
        if self.marker.as_deref() != layout.marker() || first_copied {
            self.draw(layout.marker_changes(), &mut changes);
            self.marker = layout.marker().map(str::to_string);
        }
        // Nothing asks the surface for its log of changes (see `show`).
        self.surface
            .flush_changes_older_than(self.surface.current_seqno());
        changes
    }

    /// Applies `drawn` to the view, and adds it to `changes`.
    fn draw(&mut self, drawn: Vec<Change>, changes: &mut Vec<Change>) {
        if !drawn.is_empty() {
            changes.extend(drawn.iter().cloned());
            self.surface.add_changes(drawn);
        }
    }

    /// Brings the view's Tick rows to `model`'s: scrolled as the model
    /// scrolled, then each row whose line is not the one the view has is
    /// copied again; whether the first row was.
    fn copy_changed_rows(&mut self, model: &ModelRows<'_>, changes: &mut Vec<Change>) -> bool {
        let ViewShape { width, height, .. } = self.shape;
        let keys = model.keys;
        let known: Vec<Option<u64>> = self.rows.iter().map(|row| row.flatten()).collect();
        if let Some(count) = scroll_count(&known, keys, height) {
            let rows = self.surface.dimensions().1;
            self.draw(
                vec![
                    Change::ScrollRegionUp {
                        first_row: 0,
                        region_size: height,
                        scroll_count: count,
                    },
                    // The terminal's scroll region back to the whole screen.
                    Change::ScrollRegionUp {
                        first_row: 0,
                        region_size: rows,
                        scroll_count: 0,
                    },
                ],
                changes,
            );
            // The rows that come in at the bottom are blank.
            self.rows.drain(..count);
            self.rows.resize(height, Some(None));
        }
        let mut first_copied = false;
        for (row, key) in keys.iter().enumerate().take(height) {
            if self.rows[row] == Some(*key) {
                continue;
            }
            // A row drawn before is cleared first: a copy cell by cell can
            // leave cells of the old line (past the Tick's columns, where
            // the marker sits, and where wide characters of the old and the
            // new line do not line up). A row never drawn, or blank, is not.
            let clear_first = row == 0 && std::mem::take(&mut self.clear_first);
            if clear_first || matches!(self.rows[row], Some(Some(_))) {
                self.draw(clear_row(row).into(), changes);
            }
            // The row is blank now: a line of plain text that fits is drawn
            // as the model drew it (a copy compares every cell of the row);
            // any other is copied cell by cell, as `compose` does (a tab or
            // a combining mark can land elsewhere when drawn again).
            let copy = match model.lines.get(row) {
                Some(line)
                    if model.ends.get(row).is_some_and(|&end| end <= width)
                        && printable_ascii(line) =>
                {
                    line_changes(row, line, width).0
                }
                _ => self
                    .surface
                    .diff_region(0, row, width, 1, model.surface, 0, row),
            };
            self.draw(copy, changes);
            self.rows[row] = Some(*key);
            first_copied |= row == 0;
        }
        first_copied
    }
}

/// Whether `line` is printable ASCII only: each character one cell, drawn
/// the same on any surface.
fn printable_ascii(line: &tickloop_proto::attach::Line) -> bool {
    line.runs
        .iter()
        .all(|run| run.text.bytes().all(|b| (0x20..0x7f).contains(&b)))
}

/// The Tick's screen as the composer keeps it, row by row.
struct ModelRows<'a> {
    surface: &'a Surface,
    /// Each row's [`line_key`].
    keys: &'a [Option<u64>],
    /// The columns each row's line covers.
    ends: &'a [usize],
    /// The lines the rows were drawn from.
    lines: &'a [tickloop_proto::attach::Line],
}

/// The changes that blank row `y` of a surface.
fn clear_row(y: usize) -> [Change; 2] {
    [
        Change::CursorPosition {
            x: Position::Absolute(0),
            y: Position::Absolute(y),
        },
        Change::ClearToEndOfLine(Default::default()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::compose;
    use tickloop_proto::attach::{Attrs, Line, Run};

    /// The composer keeps the model between frames and draws only the
    /// lines that changed; each of its frames must be the frame `compose`
    /// makes from scratch, whatever the lines hold: wide characters,
    /// combining marks, emoji, control characters, lines wider than the
    /// screen, lines that go blank, runs with other attributes, output that
    /// scrolls, and a change of the screen's size; at the Tick's size or
    /// another, with or without a status line and the history marker.
    #[test]
    fn the_composer_makes_the_frames_compose_makes() {
        let pieces = [
            "ab",
            "中文",
            "e\u{301}",
            "👍🏽",
            "\u{200d}",
            "\t",
            "x",
            "",
            "wide line ",
            "\u{301}",
            "ｶﾀｶﾅ",
            "😀😀😀😀",
        ];
        // A small deterministic generator: the same frames on every run.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).expect("small")
        };
        let mut composer = Composer::default();
        // Frames whose changes were told from blank (the first, and those
        // of a new size or shape of view).
        let mut from_blank = 0;
        let (mut cols, mut rows) = (12u16, 5u16);
        let mut snap = Snapshot::blank(cols, rows);
        for frame_no in 0..2000 {
            if frame_no % 97 == 96 {
                (cols, rows) = (
                    8 + u16::try_from(next(10)).expect("small"),
                    3 + u16::try_from(next(4)).expect("small"),
                );
                snap = Snapshot::blank(cols, rows);
            }
            if next(4) == 0 {
                // Output scrolled the screen up by one or two rows.
                let count = 1 + next(2);
                snap.lines.rotate_left(count);
                for line in snap.lines.iter_mut().rev().take(count) {
                    *line = Line { runs: Vec::new() };
                }
            }
            for _ in 0..=next(3) {
                let row = next(usize::from(rows));
                let runs = (0..next(4))
                    .map(|_| Run {
                        text: (0..=next(4)).map(|_| pieces[next(pieces.len())]).collect(),
                        attrs: Attrs {
                            bold: next(2) == 0,
                            ..Attrs::default()
                        },
                    })
                    .collect();
                snap.lines[row] = Line { runs };
            }
            // Mostly the Tick's size, else a view around it.
            let (view_cols, view_rows) = match next(4) {
                0 => (cols + 3 - u16::try_from(next(6)).expect("small"), rows),
                1 => (cols, rows + 1 - u16::try_from(next(3)).expect("small")),
                _ => (cols, rows),
            };
            let note = ["", "ctrl+\\ then ? lists the keys"][next(2)];
            let force = next(3) == 0;
            snap.scroll.offset = u32::from(next(3) == 0) * u32::try_from(next(40)).expect("small");
            snap.scroll.history = 40;
            let mut kept = composer.compose(&snap, view_cols, view_rows, note, force);
            let fresh = compose(&snap, view_cols, view_rows, note, force);
            if let Some(Delta {
                changes,
                since: Since::Blank,
            }) = kept.delta.take()
            {
                // Changes from blank draw the frame on a terminal just cleared.
                let (width, height) = fresh.surface.dimensions();
                let mut terminal = Surface::new(width, height);
                terminal.add_changes(changes);
                assert!(
                    terminal.diff_screens(&fresh.surface).is_empty(),
                    "frame {frame_no} from blank:\n{}\n--- from scratch:\n{}",
                    terminal.screen_chars_to_string(),
                    fresh.surface.screen_chars_to_string()
                );
                from_blank += 1;
            }
            assert!(
                kept.surface.diff_screens(&fresh.surface).is_empty()
                    && fresh.surface.diff_screens(&kept.surface).is_empty(),
                "frame {frame_no} ({view_cols}x{view_rows} {note:?} {force}):\n{}\n--- from scratch:\n{}",
                kept.surface.screen_chars_to_string(),
                fresh.surface.screen_chars_to_string()
            );
            assert_eq!(kept.row_keys, fresh.row_keys, "frame {frame_no}");
            assert_eq!(
                (kept.cursor, kept.scroll_rows),
                (fresh.cursor, fresh.scroll_rows),
                "frame {frame_no}"
            );
        }
        assert!(from_blank > 20, "{from_blank}");
    }

    /// A view's first frame, its note on the last row: the view is made
    /// from the model just drawn, and the changes that drew the model,
    /// then the note, draw the frame on a terminal just cleared; the same
    /// with the history marker, and at another size (drawn blank then).
    #[test]
    fn a_first_frame_is_told_as_the_changes_from_a_blank_screen() {
        let plain = [
            "$ ls -la",
            "drwxr-xr-x  2 root root 4096 Dec  7 ..",
            "",
            "a line much wider than the screen is, cut at its end",
            "",
            "$ ",
        ];
        let mut other = plain;
        other[1] = "drwxr-xr-x  中文 ｶﾀｶﾅ e\u{301} 👍🏽";
        other[2] = "\ttab";
        let sizes = [(30, 6, 0), (30, 6, 7), (40, 6, 0), (30, 8, 0), (20, 4, 0)];
        for (texts, (cols, rows, offset)) in [plain, other]
            .into_iter()
            .flat_map(|texts| sizes.map(|size| (texts, size)))
        {
            let mut snap = crate::render::snap_with(&texts, 30, 6);
            snap.lines[2].runs[0].attrs.bold = true;
            snap.scroll.offset = offset;
            snap.scroll.history = 40;
            let mut composer = Composer::default();
            let note = "ctrl+\\ then ? lists the keys";
            let mut frame = composer.compose(&snap, cols, rows, note, true);
            let fresh = compose(&snap, cols, rows, note, true);
            let Some(Delta {
                changes,
                since: Since::Blank,
            }) = frame.delta.take()
            else {
                panic!("{cols}x{rows}: a first frame's changes are from blank");
            };
            let mut terminal = Surface::new(usize::from(cols), usize::from(rows));
            terminal.add_changes(changes);
            assert!(
                terminal.diff_screens(&fresh.surface).is_empty()
                    && frame.surface.diff_screens(&fresh.surface).is_empty(),
                "{cols}x{rows}:\n{}\n--- from scratch:\n{}",
                terminal.screen_chars_to_string(),
                fresh.surface.screen_chars_to_string()
            );
        }
    }
}
