//! What a view shows of a Tick's screen: the attach protocol's [`Snapshot`]
//! drawn on a termwiz [`Surface`], cropped or padded to the view's size,
//! with a status line saying so and the history marker ([`Frame`]); from
//! scratch ([`compose`]) or keeping the screen from frame to frame
//! ([`Composer`](super::Composer)).

use std::borrow::Cow;
use std::hash::{Hash, Hasher};

use super::attrs::cell_attributes;
use super::history::scroll_marker;
use termwiz::cell::CellAttributes;
use termwiz::surface::{Change, Position, Surface};
use tickloop_proto::attach::{CursorShape, Snapshot};

/// The Tick's screen at its own size.
pub fn model_surface(snap: &Snapshot) -> Surface {
    let mut surface = Surface::new(usize::from(snap.cols), usize::from(snap.rows));
    for (y, line) in snap.lines.iter().enumerate().take(usize::from(snap.rows)) {
        if !line.runs.is_empty() {
            surface.add_changes(line_changes(y, line, usize::from(snap.cols)).0);
        }
    }
    surface
}

/// The changes that draw `line` on row `y` of a surface `cols` wide whose
/// row is blank, and the columns they draw on. A line wider than the row is
/// cut at its end: a surface would carry the rest over onto the next row
/// (or scroll, on the last).
pub(super) fn line_changes(
    y: usize,
    line: &tickloop_proto::attach::Line,
    cols: usize,
) -> (Vec<Change>, usize) {
    let mut changes = vec![Change::CursorPosition {
        x: Position::Absolute(0),
        y: Position::Absolute(y),
    }];
    let mut room = cols;
    for run in &line.runs {
        let text = within(&run.text, &mut room);
        changes.push(Change::AllAttributes(cell_attributes(&run.attrs)));
        push_cells(&mut changes, text);
        if text.len() < run.text.len() {
            break;
        }
    }
    (changes, cols - room)
}

/// The start of `text` that fits in `room` cells, each cell as wide as
/// [`push_cells`] draws it, and the room left after it.
fn within<'a>(text: &'a str, room: &mut usize) -> &'a str {
    use unicode_width::UnicodeWidthChar;
    let mut after_base = false;
    for (i, c) in text.char_indices() {
        let joins = after_base && !c.is_control() && c.width() == Some(0);
        let width = match (joins, c.is_control()) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => c.width().unwrap_or(1).max(1),
        };
        if width > *room {
            return &text[..i];
        }
        *room -= width;
        after_base = true;
    }
    text
}

/// A fingerprint of a line as the Tick's screen has it (`None`: blank).
pub(super) fn line_key(line: &tickloop_proto::attach::Line) -> Option<u64> {
    (!line.runs.is_empty()).then(|| {
        let mut hasher = super::fingerprint::hasher();
        for run in &line.runs {
            run.text.hash(&mut hasher);
            run.attrs.hash(&mut hasher);
        }
        hasher.finish()
    })
}

/// The text of a run as surface changes whose cells sit in the columns the
/// screen keeper gave them. The keeper gives each character its own width
/// (a combining mark or joiner joins the cell before it), as tmux does;
/// termwiz measures whole graphemes, which differ for emoji sequences. So
/// ASCII goes as it is, every other cell goes as its own text (adjacent
/// cells must not merge into one grapheme), and a cell termwiz would draw
/// at another width is drawn as its base character, or blanks.
fn push_cells(changes: &mut Vec<Change>, text: &str) {
    use unicode_width::UnicodeWidthChar;
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // Cells never hold control characters; make sure a stray one cannot
        // move the surface's cursor.
        let c = if c.is_control() { ' ' } else { c };
        if c.is_ascii() && chars.peek().is_none_or(|n| n.width() != Some(0)) {
            plain.push(c);
            continue;
        }
        let mut cell = c.to_string();
        while let Some(&next) = chars.peek() {
            if next.width() != Some(0) || next.is_control() {
                break;
            }
            // Invisible format characters (zero-width space, joiners, word
            // joiner, BOM) draw nothing; termwiz would give them a cell.
            if !matches!(next as u32, 0x200b..=0x200f | 0x2060..=0x2064 | 0xfeff) {
                cell.push(next);
            }
            chars.next();
        }
        let width = c.width().unwrap_or(1).max(1);
        if !plain.is_empty() {
            changes.push(Change::Text(std::mem::take(&mut plain)));
        }
        let drawn = if termwiz::cell::unicode_column_width(&cell, None) == width {
            cell
        } else if termwiz::cell::unicode_column_width(&c.to_string(), None) == width {
            c.to_string()
        } else {
            " ".repeat(width)
        };
        changes.push(Change::Text(drawn));
    }
    if !plain.is_empty() {
        changes.push(Change::Text(plain));
    }
}

/// How the view's size relates to the PTY's, as the status line says it;
/// `None` when they are the same. The status line itself takes the view's
/// last row, which counts as cropping when the PTY needs it.
pub fn size_status(pty: (u16, u16), view: (u16, u16)) -> Option<String> {
    if pty == view {
        return None;
    }
    let (pc, pr) = pty;
    let (vc, vr) = view;
    let shown_rows = if vr > 1 { vr - 1 } else { vr };
    let crop = pc > vc || pr > shown_rows;
    let pad = pc < vc || pr < shown_rows;
    let how = match (crop, pad) {
        (true, true) => "cropped and padded",
        (true, false) => "cropped",
        _ => "padded",
    };
    // The launcher gives a view no more than the limit (`fit_size`).
    let limit = if tickloop_proto::attach::too_large(vc, vr) {
        format!(
            " (a Tick's screen has at most {} cells)",
            tickloop_proto::attach::MAX_SCREEN_CELLS
        )
    } else {
        String::new()
    };
    Some(format!("PTY {pc}x{pr}, view {vc}x{vr}: {how}{limit}"))
}

/// What a view shows: the Tick's screen cropped or padded to `cols` x `rows`,
/// and on the last row a status line when the sizes differ or `note` is set.
pub struct Frame<'a> {
    /// Borrowed from a [`Composer`] until something is drawn over it.
    pub surface: Cow<'a, Surface>,
    /// Where the terminal's cursor goes, `None` to hide it.
    pub cursor: Option<(usize, usize)>,
    pub cursor_shape: CursorShape,
    /// The top rows that show the Tick's screen, which [`frame_changes`] may
    /// scroll as a whole when the Tick's output scrolled (0: never scroll).
    pub scroll_rows: usize,
    /// A fingerprint of each of those rows as the Tick's screen has it
    /// (`None`: blank), so [`frame_changes_keyed`] compares rows without
    /// going through their cells; empty when not known.
    pub row_keys: Vec<Option<u64>>,
    /// The [`Composer`](super::Composer)'s kept surface the frame is;
    /// `None` for a frame made from scratch ([`compose`]).
    pub kept: Option<Kept>,
    /// The changes that drew this frame on the kept surface, when they
    /// are all of them since a state a terminal can be in: the frame
    /// before, or a blank screen ([`Delta`]).
    pub delta: Option<Delta>,
}

/// The changes that made a [`Composer`](super::Composer)'s frame from what
/// its kept surface was before.
#[derive(Clone, Debug)]
pub struct Delta {
    pub changes: Vec<Change>,
    /// What the kept surface was before them.
    pub since: Since,
}

/// What a kept surface was before a [`Delta`]'s changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Since {
    /// The composer's frame before, the same kept surface (the rows drawn
    /// again, the scroll, a new note): a terminal that shows the frame
    /// before shows this one after them ([`Shown`](super::Shown)).
    FrameBefore,
    /// A blank surface, just made (a view's first frame, or its first at a
    /// new size or shape): a terminal just cleared shows this frame after
    /// them, with no comparison of cells.
    Blank,
}

/// Which of a [`Composer`](super::Composer)'s kept surfaces a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// The Tick's screen as it is, nothing over it.
    Model,
    /// A view drawn from it, of this shape.
    View(ViewShape),
}

/// A view's size and what it shows of the Tick's screen: a view of another
/// shape is drawn anew.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewShape {
    pub cols: usize,
    pub rows: usize,
    /// The Tick's columns and rows shown (cropped to the view).
    pub width: usize,
    pub height: usize,
    /// The Tick's screen's size.
    pub tick_cols: u16,
    pub tick_rows: u16,
}

impl Frame<'_> {
    /// The kept surface the frame is, when nothing was drawn on it since
    /// it was composed.
    pub fn shows_kept(&self) -> Option<Kept> {
        self.kept
            .filter(|_| matches!(self.surface, Cow::Borrowed(_)))
    }
}

/// How a view of a Tick's screen is laid out: its size, how much of the
/// Tick's screen it shows, and what is drawn over it (the status line on
/// the last row, the history marker at the top right).
pub(super) struct Layout {
    pub(super) cols: usize,
    pub(super) rows: usize,
    /// The Tick's columns and rows shown (cropped to the view).
    pub(super) width: usize,
    pub(super) height: usize,
    /// The status line's text, padded to the view's width, when shown.
    status_line: Option<String>,
    marker: Option<String>,
}

impl Layout {
    /// The layout of `snap` at `cols` x `rows`; `note` and `force_status`
    /// as [`compose`] takes them.
    pub(super) fn new(
        snap: &Snapshot,
        cols: u16,
        rows: u16,
        note: &str,
        force_status: bool,
    ) -> Self {
        let (cols_u, rows_u) = (usize::from(cols), usize::from(rows));
        let status = size_status((snap.cols, snap.rows), (cols, rows))
            .or_else(|| force_status.then(String::new));
        let status_line = status.filter(|_| rows > 1).map(|mut text| {
            if !note.is_empty() {
                if !text.is_empty() {
                    text.push_str(" — ");
                }
                text.push_str(note);
            }
            let text: String = text.chars().take(cols_u).collect();
            format!("{text:cols_u$}")
        });
        let tick_rows = rows_u.saturating_sub(usize::from(status_line.is_some()));
        let height = tick_rows.min(usize::from(snap.rows));
        // On the first row, over the Tick's.
        let marker = scroll_marker(snap.scroll)
            .filter(|marker| marker.chars().count() <= cols_u && height > 0);
        Layout {
            cols: cols_u,
            rows: rows_u,
            width: cols_u.min(usize::from(snap.cols)),
            height,
            status_line,
            marker,
        }
    }

    /// Whether the view is the Tick's screen as it is, with nothing over it
    /// (the common case).
    pub(super) fn is_the_model(&self, snap: &Snapshot) -> bool {
        (self.cols, self.rows) == (usize::from(snap.cols), usize::from(snap.rows))
            && self.status_line.is_none()
            && self.marker.is_none()
    }

    /// The shape of a view with this layout of `snap`.
    pub(super) fn shape(&self, snap: &Snapshot) -> ViewShape {
        ViewShape {
            cols: self.cols,
            rows: self.rows,
            width: self.width,
            height: self.height,
            tick_cols: snap.cols,
            tick_rows: snap.rows,
        }
    }

    /// The status line, when there is one.
    pub(super) fn status_line(&self) -> Option<&str> {
        self.status_line.as_deref()
    }

    /// The history marker, when there is one.
    pub(super) fn marker(&self) -> Option<&str> {
        self.marker.as_deref()
    }

    /// The changes that draw the status line across the last row.
    pub(super) fn status_changes(&self) -> Vec<Change> {
        match &self.status_line {
            Some(text) => over(0, self.rows - 1, text),
            None => Vec::new(),
        }
    }

    /// The changes that draw the marker at the first row's end.
    pub(super) fn marker_changes(&self) -> Vec<Change> {
        match &self.marker {
            Some(marker) => over(self.cols - marker.chars().count(), 0, marker),
            None => Vec::new(),
        }
    }

    /// The frame showing `view` (the `kept` surface of a composer, or
    /// none), this layout of `snap` whose lines have
    /// the fingerprints `line_keys`.
    pub(super) fn frame<'a>(
        &self,
        view: Cow<'a, Surface>,
        kept: Option<Kept>,
        line_keys: &[Option<u64>],
        snap: &Snapshot,
    ) -> Frame<'a> {
        let (cx, cy) = (usize::from(snap.cursor.x), usize::from(snap.cursor.y));
        let cursor =
            (snap.cursor.visible && cx < self.width && cy < self.height).then_some((cx, cy));
        Frame {
            surface: view,
            cursor,
            cursor_shape: snap.cursor.shape,
            scroll_rows: self.height,
            row_keys: self.row_keys(line_keys, snap),
            kept,
            delta: None,
        }
    }

    /// A row draws the same when its line and the crop are the same.
    pub(super) fn row_keys(&self, line_keys: &[Option<u64>], snap: &Snapshot) -> Vec<Option<u64>> {
        line_keys
            .iter()
            .take(self.height)
            .map(|key| {
                key.map(|key| {
                    let mut hasher = super::fingerprint::hasher();
                    (snap.cols, snap.rows, self.width, key).hash(&mut hasher);
                    hasher.finish()
                })
            })
            .collect()
    }
}

/// The changes that draw `text` in reverse video from column `x` of row `y`.
fn over(x: usize, y: usize, text: &str) -> Vec<Change> {
    let mut reverse = CellAttributes::default();
    reverse.set_reverse(true);
    vec![
        Change::CursorPosition {
            x: Position::Absolute(x),
            y: Position::Absolute(y),
        },
        Change::AllAttributes(reverse),
        Change::Text(text.to_string()),
        Change::AllAttributes(CellAttributes::default()),
    ]
}

/// Compose the view of `snap` at the view's size. `note` (for example how to
/// detach) is appended to the status line, which only shows when the sizes
/// differ or `force_status` is set.
pub fn compose(
    snap: &Snapshot,
    cols: u16,
    rows: u16,
    note: &str,
    force_status: bool,
) -> Frame<'static> {
    let line_keys: Vec<Option<u64>> = snap.lines.iter().map(line_key).collect();
    let layout = Layout::new(snap, cols, rows, note, force_status);
    let model = model_surface(snap);
    if layout.is_the_model(snap) {
        return layout.frame(Cow::Owned(model), None, &line_keys, snap);
    }
    let mut view = Surface::new(layout.cols, layout.rows);
    let changes = view.diff_region(0, 0, layout.width, layout.height, &model, 0, 0);
    view.add_changes(changes);
    view.add_changes(layout.status_changes());
    view.add_changes(layout.marker_changes());
    layout.frame(Cow::Owned(view), None, &line_keys, snap)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::snap_with;

    #[test]
    fn same_size_has_no_status() {
        let snap = snap_with(&["hello", "world"], 10, 3);
        let frame = compose(&snap, 10, 3, "ctrl+\\ detaches", false);
        assert_eq!(
            frame.surface.screen_chars_to_string(),
            "hello     \nworld     \n          \n"
        );
        assert_eq!(frame.cursor, Some((0, 0)));
    }

    #[test]
    fn smaller_view_crops_and_says_so() {
        let snap = snap_with(&["0123456789", "abcdefghij", "ABCDEFGHIJ"], 10, 3);
        let frame = compose(&snap, 6, 3, "", false);
        let text = frame.surface.screen_chars_to_string();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0], "012345");
        assert_eq!(rows[1], "abcdef");
        assert_eq!(rows[2], "PTY 10");
        let wide = compose(&snap, 40, 3, "", false);
        let text = wide.surface.screen_chars_to_string();
        assert!(
            text.lines()
                .nth(2)
                .unwrap()
                .starts_with("PTY 10x3, view 40x3: cropped and padded"),
            "{text}"
        );
    }

    #[test]
    fn a_view_past_the_limit_is_told_why_the_tick_is_smaller() {
        assert_eq!(
            size_status((2100, 1997), (2100, 2000)).as_deref(),
            Some(
                "PTY 2100x1997, view 2100x2000: padded (a Tick's screen has at most 4194304 cells)"
            )
        );
        assert_eq!(
            size_status((80, 24), (100, 30)).as_deref(),
            Some("PTY 80x24, view 100x30: padded")
        );
    }

    #[test]
    fn larger_view_pads() {
        let snap = snap_with(&["hi"], 4, 2);
        let frame = compose(&snap, 60, 4, "ctrl+\\ detaches", false);
        let text = frame.surface.screen_chars_to_string();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0].trim_end(), "hi");
        assert_eq!(rows[1].trim_end(), "");
        assert_eq!(rows[2].trim_end(), "");
        assert_eq!(
            rows[3].trim_end(),
            "PTY 4x2, view 60x4: padded — ctrl+\\ detaches"
        );
    }

    #[test]
    fn wide_and_combining_characters_keep_their_columns() {
        let snap = snap_with(&["日本x", "e\u{301}!"], 6, 2);
        let frame = compose(&snap, 6, 2, "", false);
        let cells = frame.surface.get_screen_cells();
        assert_eq!(cells[0][0].str(), "日");
        assert_eq!(cells[0][2].str(), "本");
        assert_eq!(cells[0][4].str(), "x");
        assert_eq!(cells[1][0].str(), "e\u{301}");
        assert_eq!(cells[1][1].str(), "!");
    }
}

#[cfg(test)]
mod width_agreement_tests {
    use super::*;
    use launcher::emulator::Emulator;

    /// The column of `|` on row 0 of what a view draws.
    fn view_column(surface: &Surface) -> Option<usize> {
        let lines = surface.screen_lines();
        let mut col = 0;
        for cell in lines[0].visible_cells() {
            if cell.str() == "|" {
                return Some(col);
            }
            col = cell.cell_index() + cell.width();
        }
        None
    }

    #[test]
    fn the_keeper_and_the_views_agree_on_character_widths() {
        // Each text is followed by `|`: the keeper's cursor and the view's
        // surface must put it in the same column, or every cell after a
        // wide character would be drawn shifted.
        let texts = [
            "plain",
            "漢字かな",
            "e\u{301}x",
            "👍",
            "👍🏽",
            "❤️",
            "✔️",
            "🇫🇷",
            "한국어",
            "ｆｕｌｌ",
            "a\u{200b}b",
            "👨\u{200d}👩\u{200d}👧",
        ];
        let mut disagree = Vec::new();
        for text in texts {
            let mut emu = Emulator::new(3, 40, 0, Box::new(std::io::sink()));
            emu.feed(format!("{text}|").as_bytes());
            let snap = emu.snapshot();
            let keeper = usize::from(snap.cursor.x) - 1;
            let view = view_column(&model_surface(&snap));
            if view != Some(keeper) {
                disagree.push(format!("{text:?}: keeper column {keeper}, view {view:?}"));
            }
        }
        assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    }
}
