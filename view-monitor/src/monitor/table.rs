//! The Monitor's list screen: the rows ([`super::row`]) in columns fitted to
//! the terminal ([`super::columns`]), coloured by state, a full-width
//! selection bar, the detail line, and the preview of the selected
//! instance's screen under the list, all drawn on a termwiz `Surface`. No
//! I/O; time is an input, so a frame is a pure function of its
//! [`ListView`] (the snapshot tests rely on it).

use super::columns::{header_fields, layout, row_fields, segments, table_line, Col};
use super::row::{detail, Row, Tone};
use crate::cells::{at, fit, skip_cells, take_cells, truncate, width};
use crate::graphics::{mark_boxes, ImagePlacement};
use crate::shell_row::keep_start;
use termwiz::cell::{AttributeChange, CellAttributes, Intensity};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::surface::{Change, Surface};
use tickloop_proto::wire::ScreenReply;
use time::OffsetDateTime;

fn fg(color: AnsiColor) -> CellAttributes {
    let mut a = CellAttributes::default();
    a.set_foreground(ColorAttribute::PaletteIndex(color as u8));
    a
}

/// Output this recent makes the ACTIVE cell stand out.
const RECENT_SECS: i64 = 5;

/// The colours of `r`'s cell in `col` (unselected).
fn cell_attrs(r: &Row, col: Option<Col>, now: OffsetDateTime) -> CellAttributes {
    let tone = r.tone();
    match (col, tone) {
        (Some(Col::State), Tone::Running) => fg(AnsiColor::Green),
        (Some(Col::State), Tone::EndedBadly) => fg(AnsiColor::Red),
        (_, Tone::EndedClean | Tone::EndedBadly) => fg(AnsiColor::Grey),
        (Some(Col::Active), Tone::Running)
            if r.last_output_at
                .is_some_and(|at| (now - at).whole_seconds() < RECENT_SECS) =>
        {
            let mut a = fg(AnsiColor::Yellow);
            a.set_intensity(Intensity::Bold);
            a
        }
        (Some(Col::Approve), Tone::Running) if r.approvals_waiting > 0 => {
            let mut a = fg(AnsiColor::Yellow);
            a.set_intensity(Intensity::Bold);
            a
        }
        (Some(Col::Command), _)
            if r.shell
                .as_ref()
                .and_then(|s| s.command.as_ref())
                .is_some_and(|c| c.status.failed()) =>
        {
            fg(AnsiColor::Red)
        }
        (Some(Col::Kind), _) => fg(AnsiColor::Teal),
        (Some(Col::Id), _) => {
            let mut a = CellAttributes::default();
            a.set_intensity(Intensity::Bold);
            a
        }
        _ => CellAttributes::default(),
    }
}

/// The selection bar: the whole row, black on cyan.
fn selected_attrs() -> CellAttributes {
    let mut a = fg(AnsiColor::Black);
    a.set_background(ColorAttribute::PaletteIndex(AnsiColor::Teal as u8));
    a
}

/// The preview of the selected instance: its screen as text (`tickloop
/// screen`), refreshed with the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    pub id: String,
    pub screen: ScreenReply,
}

/// The list's filter, typed after `/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filter<'a> {
    pub text: &'a str,
    /// Still being typed (the footer shows it with a cursor).
    pub editing: bool,
}

/// What the list screen shows. `rows` are the rows shown (already
/// filtered); `total` and `running` count every instance.
pub struct ListView<'a> {
    pub rows: &'a [Row],
    pub total: usize,
    pub running: usize,
    pub selected: usize,
    /// The first row shown (scrolling); [`scroll_for`] keeps it in range.
    pub top: usize,
    /// The bottom line: key help, or a message.
    pub footer: &'a str,
    /// The footer is a problem (drawn in red).
    pub footer_alert: bool,
    pub filter: Option<Filter<'a>>,
    /// `Some` while the preview is on: what it shows, `None` while asked for.
    pub preview: Option<Option<&'a Preview>>,
    pub now: OffsetDateTime,
}

/// Rows of the screen the list's entries get at a terminal `rows` tall
/// with `len` entries (title, header, detail and footer take four). With
/// the preview on (terminals of 14 rows or more), the list takes what its
/// entries need, at least 3 rows and at most half; the preview the rest.
pub fn body_rows(rows: usize, preview: bool, len: usize) -> usize {
    let all = rows.saturating_sub(4);
    if !preview || rows < 14 {
        return all;
    }
    len.max(3).min(all - all / 2)
}

/// Rows the preview takes, its title line included (0 when off or when the
/// terminal is too small for it).
pub fn preview_rows(rows: usize, preview: bool, len: usize) -> usize {
    if !preview || rows < 14 {
        return 0;
    }
    rows.saturating_sub(4) - body_rows(rows, preview, len)
}

/// The `top` that keeps `selected` visible in `body` rows, moving as little
/// as possible from `top`.
pub fn scroll_for(selected: usize, top: usize, body: usize, len: usize) -> usize {
    if body == 0 {
        return selected;
    }
    let mut top = top.min(len.saturating_sub(body));
    if selected < top {
        top = selected;
    } else if selected >= top + body {
        top = selected + 1 - body;
    }
    top
}

fn text_at(y: usize, attrs: CellAttributes, text: String) -> Vec<Change> {
    vec![
        at(0, y),
        Change::AllAttributes(attrs),
        Change::Text(text),
        Change::AllAttributes(CellAttributes::default()),
    ]
}

/// The title bar: counts on the left, the filter and the preview's key on
/// the right when there is room.
fn title_line(view: &ListView, cols: usize) -> String {
    let left = format!(
        " Tickloop Monitor · {} instance{}, {} running",
        view.total,
        if view.total == 1 { "" } else { "s" },
        view.running
    );
    let mut right = String::new();
    if let Some(f) = view.filter.filter(|f| !f.text.is_empty()) {
        right.push_str(&format!(
            "filter /{} ({} shown) ",
            truncate(f.text, 24),
            view.rows.len()
        ));
    }
    let gap = cols.saturating_sub(width(&left) + width(&right));
    if right.is_empty() || gap == 0 {
        return fit(&left, cols);
    }
    fit(&format!("{left}{}{right}", " ".repeat(gap)), cols)
}

/// Draws the list screen on a `cols` x `rows` surface.
pub fn draw(view: &ListView, cols: usize, rows: usize) -> Surface {
    let mut s = Surface::new(cols, rows);
    if cols == 0 || rows == 0 {
        return s;
    }
    let mut title_attrs = CellAttributes::default();
    title_attrs.set_reverse(true);
    s.add_changes(text_at(0, title_attrs, title_line(view, cols)));
    if rows < 2 {
        return s;
    }
    let widths = layout(view.rows, cols, view.now);
    let mut header = fg(AnsiColor::Black);
    header.set_background(ColorAttribute::PaletteIndex(AnsiColor::Green as u8));
    s.add_changes(text_at(
        1,
        header,
        table_line(&header_fields(&widths), &widths, cols),
    ));

    let body = body_rows(rows, view.preview.is_some(), view.rows.len());
    if view.rows.is_empty() && body > 0 {
        let empty = match view.filter {
            Some(f) if !f.text.is_empty() => {
                format!("nothing matches /{}; Esc clears the filter", f.text)
            }
            _ => "no instances; `tickloop open -- PROGRAM` starts one".to_string(),
        };
        s.add_changes(text_at(2, CellAttributes::default(), fit(&empty, cols)));
    }
    for (i, r) in view.rows.iter().enumerate().skip(view.top).take(body) {
        let selected = i == view.selected;
        let mut changes = vec![at(0, 2 + i - view.top)];
        for (col, text) in segments(&row_fields(r, &widths, view.now), &widths, cols) {
            let attrs = if selected {
                selected_attrs()
            } else {
                cell_attrs(r, col, view.now)
            };
            changes.push(Change::AllAttributes(attrs));
            changes.push(Change::Text(text));
        }
        changes.push(Change::AllAttributes(CellAttributes::default()));
        s.add_changes(changes);
    }
    if let Some(preview) = view.preview {
        let height = preview_rows(rows, true, view.rows.len());
        if height > 0 {
            draw_preview(&mut s, 2 + body, height, cols, preview, view);
        }
    }
    if rows >= 4 {
        if let Some(r) = view.rows.get(view.selected) {
            let attrs = match r.tone() {
                Tone::EndedBadly => fg(AnsiColor::Red),
                _ => CellAttributes::default(),
            };
            s.add_changes(text_at(
                rows - 2,
                attrs,
                fit(&keep_start(&detail(r, view.now), cols), cols),
            ));
        }
    }
    if rows >= 3 {
        let mut attrs = CellAttributes::default();
        attrs.set_reverse(true);
        if view.footer_alert {
            attrs.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Red as u8));
        }
        let footer = match view.filter {
            Some(f) if f.editing => format!("/{}▏ Enter keeps the filter · Esc clears it", f.text),
            _ => view.footer.to_string(),
        };
        s.add_changes(text_at(rows - 1, attrs, fit(&footer, cols)));
    }
    // Keep the cursor parked and plain.
    s.add_change(Change::Attribute(AttributeChange::Reverse(false)));
    s
}

/// The first row and column of a `screen` to show in `rows` x `cols`:
/// from the top-left, moved only as far as needed to keep the cursor in
/// sight (as tmux's choose-tree preview does).
pub fn preview_origin(screen: &ScreenReply, cols: usize, rows: usize) -> (usize, usize) {
    let y = (screen.cursor.row + 1).saturating_sub(rows);
    let x = (screen.cursor.col + 1).saturating_sub(cols);
    (x, y)
}

/// The preview: a title line, then the selected instance's screen cropped
/// to `height - 1` rows of `cols` from row `y0`.
fn draw_preview(
    s: &mut Surface,
    y0: usize,
    height: usize,
    cols: usize,
    preview: Option<&Preview>,
    view: &ListView,
) {
    let selected = view.rows.get(view.selected);
    let shown = preview.filter(|p| selected.is_some_and(|r| r.id == p.id));
    let label = match (selected, shown) {
        (None, _) => "─ preview ".to_string(),
        (Some(r), None) => format!("─ preview of {} · asking… ", r.id),
        (Some(r), Some(p)) => {
            let ended = if p.screen.ended {
                " · its last screen"
            } else {
                ""
            };
            format!(
                "─ preview of {} ({}x{}){ended} · p hides ",
                r.id, p.screen.cols, p.screen.rows
            )
        }
    };
    let line = format!("{label}{}", "─".repeat(cols.saturating_sub(width(&label))));
    s.add_changes(text_at(y0, fg(AnsiColor::Teal), fit(&line, cols)));
    let Some(p) = shown else { return };
    let inner = height.saturating_sub(1);
    let (x, y) = preview_origin(&p.screen, cols, inner);
    let mut screen = Surface::new(cols, inner);
    for (i, text) in p.screen.lines.iter().skip(y).take(inner).enumerate() {
        // Cropped, not cut: no `…` at the edge.
        let cropped = take_cells(&skip_cells(text, x), cols);
        screen.add_changes(text_at(i, CellAttributes::default(), fit(&cropped, cols)));
    }
    // The images the program drew: a marked box in their cells, moved as
    // the screen is.
    let images: Vec<ImagePlacement> = p
        .screen
        .images
        .iter()
        .filter_map(|image| {
            let cut = usize::from(image.col).min(x);
            let cols = usize::from(image.cols).checked_sub(x - cut)?;
            Some(ImagePlacement {
                row: image.row - i64::try_from(y).unwrap_or(i64::MAX),
                col: u16::try_from(usize::from(image.col) - cut).unwrap_or(u16::MAX),
                cols: u16::try_from(cols).unwrap_or(u16::MAX),
                ..image.clone()
            })
        })
        .collect();
    mark_boxes(&mut screen, &images, 0);
    s.draw_from_screen(&screen, 0, y0 + 1);
}

#[cfg(test)]
mod tests {
    use super::super::row::fixtures::{now, rows};
    use super::*;

    fn view_of<'a>(
        r: &'a [Row],
        selected: usize,
        preview: Option<Option<&'a Preview>>,
    ) -> ListView<'a> {
        ListView {
            rows: r,
            total: r.len(),
            running: 1,
            selected,
            top: 0,
            footer: "q quits",
            footer_alert: false,
            filter: None,
            preview,
            now: now(),
        }
    }

    #[test]
    fn the_preview_keeps_the_cursor_in_sight() {
        let screen = |row, col| ScreenReply {
            rows: 30,
            cols: 120,
            cursor: tickloop_proto::wire::ScreenCursor { row, col },
            lines: Vec::new(),
            history: Vec::new(),
            history_len: 0,
            history_limit: 0,
            memory_bytes: 0,
            images: Vec::new(),
            image_bytes: 0,
            ended: false,
        };
        assert_eq!(preview_origin(&screen(3, 10), 80, 9), (0, 0));
        assert_eq!(preview_origin(&screen(29, 10), 80, 9), (0, 21));
        assert_eq!(preview_origin(&screen(0, 100), 80, 9), (21, 0));
        assert_eq!(skip_cells("日本語abc", 2), "本語abc");
        assert_eq!(take_cells("日本語abc", 5), "日本");
    }

    #[test]
    fn the_preview_marks_where_an_image_is() {
        let r = rows();
        let image = tickloop_proto::wire::ImagePlacement {
            index: 1,
            row: 1,
            col: 4,
            rows: 4,
            cols: 30,
            width_px: 300,
            height_px: 80,
            format: tickloop_proto::wire::ImageFormat::Kitty,
            bytes: 96_000,
        };
        let preview = Preview {
            id: r[1].id.clone(),
            screen: ScreenReply {
                rows: 30,
                cols: 120,
                cursor: tickloop_proto::wire::ScreenCursor { row: 6, col: 0 },
                lines: vec!["$ chafa -f kitty chart.png".into()],
                history: Vec::new(),
                history_len: 0,
                history_limit: 0,
                memory_bytes: 0,
                images: vec![image],
                image_bytes: 96_000,
                ended: false,
            },
        };
        let view = view_of(&r, 1, Some(Some(&preview)));
        let text = draw(&view, 80, 24).screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        let top = lines
            .iter()
            .position(|l| l.starts_with("$ chafa"))
            .expect("the preview's first line");
        assert!(lines[top + 1].starts_with("    ┌────"), "{text}");
        assert!(lines[top + 2].contains("[image 300×80 kitty]"), "{text}");
        assert!(lines[top + 4].starts_with("    └────"), "{text}");
    }

    #[test]
    fn draws_list_with_selection_detail_and_footer() {
        let r = rows();
        let view = view_of(&r, 1, None);
        let s = draw(&view, 80, 24);
        let text = s.screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("2 instances, 1 running"), "{text}");
        assert!(lines[1].starts_with("ID "), "{text}");
        assert!(lines[2].starts_with("hosted:counter"), "{text}");
        assert!(lines[3].starts_with("shell:top"), "{text}");
        assert!(lines[22].contains("exited with status 0"), "{text}");
        assert!(lines[23].starts_with("q quits"), "{text}");
        // The selection bar spans the row, to the last column.
        let cells = s.get_screen_cells();
        let bar = selected_attrs();
        assert_eq!(cells[3][0].attrs().background(), bar.background());
        assert_eq!(cells[3][79].attrs().background(), bar.background());
        assert_ne!(cells[2][0].attrs().background(), bar.background());
    }

    #[test]
    fn tiny_terminals_draw_without_panicking() {
        let r = rows();
        for (cols, rows_n) in [
            (0, 0),
            (0, 5),
            (5, 0),
            (1, 1),
            (2, 2),
            (3, 3),
            (10, 4),
            (12, 5),
        ] {
            for preview in [None, Some(None)] {
                let view = view_of(&r, 1, preview);
                draw(&view, cols, rows_n);
            }
        }
    }

    #[test]
    fn scrolling_keeps_the_selection_visible() {
        assert_eq!(scroll_for(0, 0, 5, 20), 0);
        assert_eq!(scroll_for(7, 0, 5, 20), 3);
        assert_eq!(scroll_for(2, 3, 5, 20), 2);
        assert_eq!(scroll_for(4, 3, 5, 20), 3);
        // A list that shrank pulls the window back.
        assert_eq!(scroll_for(1, 10, 5, 3), 0);
    }
}
