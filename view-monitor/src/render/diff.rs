//! The changes that bring a terminal from the frame it shows to the next:
//! row fingerprints or cells compared, and the terminal scrolled when the
//! Tick's output scrolled (as tmux does), so an update costs a few bytes.

use super::frame::{Delta, Frame, Kept, Since};
use super::kept::{scroll_count, scrolled_up_by, show};
use termwiz::surface::{Change, CursorVisibility, Position, Surface};
use tickloop_proto::attach::CursorShape;

/// What a view's terminal shows, kept to draw the next frame as changes:
/// the surface drawn last, the fingerprints of its Tick rows, and which of
/// a [`Composer`](super::Composer)'s kept surfaces it was.
pub struct Shown {
    pub surface: Surface,
    keys: Vec<Option<u64>>,
    /// The composer's kept surface drawn last, untouched.
    kept: Option<Kept>,
    /// Nothing drawn yet: the terminal is blank.
    blank: bool,
}

impl Shown {
    /// A terminal of `cols` x `rows` that shows nothing yet: its owner
    /// clears it as it makes this.
    pub fn new(cols: usize, rows: usize) -> Self {
        Shown {
            surface: Surface::new(cols, rows),
            keys: Vec::new(),
            kept: None,
            blank: true,
        }
    }

    /// The changes that make the terminal show `frame`, cursor included.
    /// A frame of a composer's kept surface is drawn as the composer drew
    /// it (with no comparison of cells) after a frame of the same surface
    /// (the rows it drew, the scroll, a new note), and on a blank terminal
    /// when the surface was blank too (a view's first frame: the rows drawn
    /// once more, not compared with a blank screen and applied); any other
    /// as [`frame_changes_keyed`]. The frame's `delta` is taken.
    pub fn changes_to(&mut self, frame: &mut Frame<'_>) -> Vec<Change> {
        let followed = std::mem::replace(&mut self.kept, frame.shows_kept());
        let blank = std::mem::replace(&mut self.blank, false);
        let same_size = self.surface.dimensions() == frame.surface.dimensions();
        match frame.delta.take() {
            Some(Delta {
                mut changes,
                since: Since::FrameBefore,
            }) if followed.is_some() && followed == frame.shows_kept() && same_size => {
                show(&mut self.surface, changes.clone());
                self.keys.clone_from(&frame.row_keys);
                changes.extend(cursor_changes(frame));
                changes
            }
            Some(Delta {
                mut changes,
                since: Since::Blank,
            }) if blank && frame.shows_kept().is_some() && same_size => {
                // The terminal shows what the kept surface shows now.
                self.surface = frame.surface.as_ref().clone();
                self.surface
                    .flush_changes_older_than(self.surface.current_seqno());
                self.keys.clone_from(&frame.row_keys);
                changes.extend(cursor_changes(frame));
                changes
            }
            _ => frame_changes_keyed(&mut self.surface, &mut self.keys, frame),
        }
    }
}

/// [`frame_changes`] for a terminal showing `shown`, whose Tick rows had
/// the fingerprints `shown_keys` (from the frame drawn before; both are
/// updated): rows are compared by fingerprint, and only the rows that
/// differ (and the first row and the rows under the Tick's, which notes and
/// markers use) are compared cell by cell. Without fingerprints on both
/// sides, the same as [`frame_changes`].
pub fn frame_changes_keyed(
    shown: &mut Surface,
    shown_keys: &mut Vec<Option<u64>>,
    frame: &Frame<'_>,
) -> Vec<Change> {
    let region = frame.scroll_rows;
    if frame.row_keys.len() != region
        || shown_keys.len() != region
        || shown.dimensions() != frame.surface.dimensions()
    {
        shown_keys.clone_from(&frame.row_keys);
        return frame_changes(shown, frame);
    }
    let (cols, rows) = shown.dimensions();
    let mut changes = Vec::new();
    if let Some(count) = scroll_count(shown_keys, &frame.row_keys, region) {
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: region,
            scroll_count: count,
        });
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: rows,
            scroll_count: 0,
        });
        show(shown, changes.clone());
        shown_keys.drain(..count);
        shown_keys.resize(region, None);
    }
    for row in 0..rows {
        let same = row > 0 && row < region && shown_keys.get(row) == frame.row_keys.get(row);
        if same {
            continue;
        }
        let diff = shown.diff_region(0, row, cols, 1, &frame.surface, 0, row);
        show(shown, diff.clone());
        changes.extend(diff);
    }
    shown_keys.clone_from(&frame.row_keys);
    changes.extend(cursor_changes(frame));
    changes
}

/// The changes that make the terminal showing `shown` show `frame`, cursor
/// included; `shown` is updated to match.
pub fn frame_changes(shown: &mut Surface, frame: &Frame<'_>) -> Vec<Change> {
    let mut changes = Vec::new();
    // When the Tick's screen scrolled, scroll the terminal too (as tmux
    // does): the rows that moved are not sent again, and the new rows are
    // drawn whole rather than as scattered cell differences.
    if let Some(count) = scrolled_up_by(shown, &frame.surface, frame.scroll_rows) {
        let (_, rows) = shown.dimensions();
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: frame.scroll_rows,
            scroll_count: count,
        });
        // The scroll region back to the whole screen, without scrolling.
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: rows,
            scroll_count: 0,
        });
        show(shown, changes.clone());
    }
    let diff = shown.diff_screens(&frame.surface);
    show(shown, diff.clone());
    changes.extend(diff);
    changes.extend(cursor_changes(frame));
    changes
}

/// Where the cursor goes and how it looks, after a frame.
fn cursor_changes(frame: &Frame<'_>) -> Vec<Change> {
    match frame.cursor {
        Some((x, y)) => vec![
            Change::CursorPosition {
                x: Position::Absolute(x),
                y: Position::Absolute(y),
            },
            Change::CursorShape(cursor_shape(frame.cursor_shape)),
            Change::CursorVisibility(CursorVisibility::Visible),
        ],
        None => vec![Change::CursorVisibility(CursorVisibility::Hidden)],
    }
}

fn cursor_shape(shape: CursorShape) -> termwiz::surface::CursorShape {
    use termwiz::surface::CursorShape as T;
    match shape {
        CursorShape::Default => T::Default,
        CursorShape::BlinkingBlock => T::BlinkingBlock,
        CursorShape::SteadyBlock => T::SteadyBlock,
        CursorShape::BlinkingUnderline => T::BlinkingUnderline,
        CursorShape::SteadyUnderline => T::SteadyUnderline,
        CursorShape::BlinkingBar => T::BlinkingBar,
        CursorShape::SteadyBar => T::SteadyBar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::frame::compose;
    use crate::render::snap_with;

    #[test]
    fn scrolled_output_scrolls_the_terminal_and_draws_new_rows_whole() {
        let before = ["<a>", "<b>", "<c>", "<d>", "<e>", ""];
        let after = ["<b>", "<c>", "<d>", "<e>", "<f>", ""];
        let mut shown = Surface::new(10, 6);
        let first = compose(&snap_with(&before, 10, 6), 10, 6, "", false);
        frame_changes(&mut shown, &first);
        let second = compose(&snap_with(&after, 10, 6), 10, 6, "", false);
        let changes = frame_changes(&mut shown, &second);
        assert!(
            matches!(
                changes[0],
                Change::ScrollRegionUp {
                    first_row: 0,
                    region_size: 6,
                    scroll_count: 1
                }
            ),
            "{changes:?}"
        );
        let texts: Vec<&str> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts.iter().any(|t| t.contains("<f>")), "{texts:?}");
        assert_eq!(
            shown.screen_chars_to_string(),
            second.surface.screen_chars_to_string()
        );
        // An unrelated change is not taken for a scroll.
        let other = compose(&snap_with(&["x", "y"], 10, 6), 10, 6, "", false);
        let changes = frame_changes(&mut shown, &other);
        assert!(!changes.iter().any(|c| matches!(
            c,
            Change::ScrollRegionUp {
                scroll_count: 1..,
                ..
            }
        )));
    }

    /// A view's shown surface lives as long as the view: if it kept its
    /// log of changes, a view left open on a busy Tick grew without end.
    #[test]
    fn a_views_shown_surface_keeps_no_log_of_the_frames_drawn() {
        // A surface with its log answers "what changed since the last
        // change" with that change alone; without it, with a whole repaint.
        let logs_changes = |shown: &Surface| {
            let last = shown.current_seqno().saturating_sub(1);
            matches!(shown.get_changes(last).1, std::borrow::Cow::Borrowed(_))
        };
        let mut logged = Surface::new(10, 6);
        logged.add_changes(vec![Change::Text("x".into()), Change::Text("y".into())]);
        assert!(logs_changes(&logged), "the check itself sees a log");
        let mut plain = Surface::new(10, 6);
        let mut keyed = Surface::new(10, 6);
        let mut keys = Vec::new();
        for i in 0..50 {
            let line = format!("<{i}>");
            let lines = ["top", line.as_str(), "", "", "", ""];
            let frame = compose(&snap_with(&lines, 10, 6), 10, 6, "", false);
            frame_changes(&mut plain, &frame);
            frame_changes_keyed(&mut keyed, &mut keys, &frame);
            assert!(!logs_changes(&plain), "frame_changes, frame {i}");
            assert!(!logs_changes(&keyed), "frame_changes_keyed, frame {i}");
            assert_eq!(
                keyed.screen_chars_to_string(),
                frame.surface.screen_chars_to_string()
            );
        }
    }

    #[test]
    fn fingerprinted_frames_reach_the_same_screen_with_fewer_changes() {
        let frames = [
            (vec!["<a>", "<b>", "<c>", "<d>", "<e>", ""], "", false),
            // Scrolled by one.
            (vec!["<b>", "<c>", "<d>", "<e>", "<f>", ""], "", false),
            // One row changed.
            (vec!["<b>", "<c>", "<D>", "<e>", "<f>", ""], "", false),
            // A note on a status line, then gone again.
            (vec!["<b>", "<c>", "<D>", "<e>", "<f>", ""], "note", true),
            (vec!["<b>", "<c>", "<D>", "<e>", "<f>", "g"], "", false),
            (vec!["x"], "", false),
        ];
        let mut keyed = Surface::new(10, 6);
        let mut keys = Vec::new();
        let mut plain = Surface::new(10, 6);
        for (i, (lines, note, force)) in frames.iter().enumerate() {
            let frame = compose(&snap_with(lines, 10, 6), 10, 6, note, *force);
            let changes = frame_changes_keyed(&mut keyed, &mut keys, &frame);
            frame_changes(&mut plain, &frame);
            assert!(keyed.diff_screens(&frame.surface).is_empty(), "frame {i}");
            assert_eq!(
                keyed.screen_chars_to_string(),
                plain.screen_chars_to_string(),
                "frame {i}"
            );
            if i == 2 {
                // Only the changed row is drawn again.
                let texts: Vec<&str> = changes
                    .iter()
                    .filter_map(|c| match c {
                        Change::Text(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(texts.concat().trim(), "D", "{changes:?}");
            }
            if i == 1 {
                assert!(
                    matches!(
                        changes[0],
                        Change::ScrollRegionUp {
                            scroll_count: 1,
                            ..
                        }
                    ),
                    "{changes:?}"
                );
            }
        }
    }

    /// A terminal drawn frame after frame through [`Shown`] shows each
    /// frame: frames of the Tick's screen as it is (drawn as the composer
    /// changed its model, without comparing cells), frames with a note
    /// over them, at another size, after output scrolled.
    #[test]
    fn a_terminal_drawn_through_shown_shows_every_frame() {
        use crate::render::Composer;
        let mut composer = Composer::default();
        let mut shown = Shown::new(10, 6);
        // What the user's terminal shows: the changes applied in order.
        let mut terminal = Surface::new(10, 6);
        let mut lines: Vec<String> = vec![String::new(); 6];
        // Frames drawn from the kept model's changes, and from a kept view's.
        let mut by_delta = (0, 0);
        // Frames drawn on a blank terminal from the composer's changes.
        let mut from_blank = 0;
        for i in 0..120 {
            if i % 5 == 0 {
                // Output scrolled by one.
                lines.rotate_left(1);
                lines[5] = String::new();
            }
            lines[i % 6] = format!("<{i}>");
            let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
            let mut snap = snap_with(&texts, 10, 6);
            // Now and then a note on the last row (which changes), the
            // history marker, or a narrower view (a resize: the view's
            // terminal starts again, as attach does).
            let (note, cols) = match i % 17 {
                3 | 4 => ("note", 10u16),
                5 => ("other", 10),
                9 | 10 => ("", 8),
                _ => ("", 10),
            };
            if (12..=14).contains(&(i % 17)) {
                snap.scroll.offset = u32::try_from(i % 17).expect("small");
                snap.scroll.history = 40;
            }
            if usize::from(cols) != terminal.dimensions().0 {
                terminal = Surface::new(usize::from(cols), 6);
                shown = Shown::new(usize::from(cols), 6);
            }
            let mut frame = composer.compose(&snap, cols, 6, note, !note.is_empty());
            if i % 17 == 6 {
                // The frame after a note's is not told as a change of the
                // model's last frame.
                assert!(frame.delta.is_none(), "frame {i}");
            }
            if i % 13 == 7 || i % 13 == 8 {
                // Something drawn over the Tick's screen for two frames, as an overlay is
                // (which makes its rows compared cell by cell).
                frame.surface.to_mut().add_change("#");
                frame.scroll_rows = 0;
                frame.row_keys.clear();
            }
            match (
                frame.delta.as_ref().map(|delta| delta.since),
                frame.shows_kept(),
            ) {
                (Some(Since::FrameBefore), Some(Kept::Model)) => by_delta.0 += 1,
                (Some(Since::FrameBefore), Some(Kept::View(_))) => by_delta.1 += 1,
                // A first frame, on a terminal just cleared, or at its new size.
                (Some(Since::Blank), Some(_))
                    if shown.surface.screen_chars_to_string().trim().is_empty() =>
                {
                    from_blank += 1;
                }
                _ => {}
            }
            let delta = frame.delta.clone();
            let changes = shown.changes_to(&mut frame);
            if let Some(delta) = delta.filter(|_| i == 0) {
                // The first frame is the composer's changes, cells not
                // compared with a blank screen.
                assert_eq!(changes[..delta.changes.len()], delta.changes[..]);
            }
            terminal.add_changes(changes);
            assert_eq!(
                terminal.screen_chars_to_string(),
                frame.surface.screen_chars_to_string(),
                "frame {i}"
            );
            assert!(
                terminal.diff_screens(&frame.surface).is_empty(),
                "frame {i}"
            );
        }
        assert!(by_delta.0 > 30 && by_delta.1 > 20, "{by_delta:?}");
        // The first frame, and the first after each resize to the narrower
        // view (back at the Tick's size, the kept model is not blank).
        assert!(from_blank >= 5, "{from_blank}");
    }

    /// Rows whose wide characters move to other columns from frame to
    /// frame: a row compared cell by cell over the old one must leave no
    /// cell of the old line, in the frames of the Monitor's overlay and the
    /// web page (`frame_changes_keyed`) as in the plain ones.
    #[test]
    fn rows_whose_wide_characters_move_are_drawn_whole() {
        let pieces = ["世", "界", "a", "b", " ", "✓", "ｘ", "cd"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).expect("small")
        };
        let mut keyed = Surface::new(12, 4);
        let mut keys = Vec::new();
        let mut keyed_terminal = Surface::new(12, 4);
        let mut plain = Surface::new(12, 4);
        let mut plain_terminal = Surface::new(12, 4);
        let mut lines = vec![String::new(); 4];
        for i in 0..400 {
            // About half the rows change in each frame; the others stay,
            // which the keyed frames skip.
            for line in &mut lines {
                if next(2) == 0 {
                    *line = (0..next(8)).map(|_| pieces[next(pieces.len())]).collect();
                }
            }
            let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
            let frame = compose(&snap_with(&texts, 12, 4), 12, 4, "", false);
            keyed_terminal.add_changes(frame_changes_keyed(&mut keyed, &mut keys, &frame));
            plain_terminal.add_changes(frame_changes(&mut plain, &frame));
            for (name, terminal) in [("keyed", &keyed_terminal), ("plain", &plain_terminal)] {
                assert_eq!(
                    terminal.screen_chars_to_string(),
                    frame.surface.screen_chars_to_string(),
                    "{name}, frame {i}: {texts:?}"
                );
            }
        }
    }

    #[test]
    fn diffs_are_small() {
        let snap = snap_with(&["hello", "world"], 10, 3);
        let mut shown = Surface::new(10, 3);
        let first = frame_changes(&mut shown, &compose(&snap, 10, 3, "", false));
        assert!(!first.is_empty());
        let again = frame_changes(&mut shown, &compose(&snap, 10, 3, "", false));
        // Nothing changed: only the cursor is placed again.
        assert!(again.iter().all(|c| matches!(
            c,
            Change::CursorPosition { .. } | Change::CursorShape(_) | Change::CursorVisibility(_)
        )));
    }
}
