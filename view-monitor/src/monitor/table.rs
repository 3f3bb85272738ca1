//! The Monitor's list of instances: rows parsed from `tickloop list`'s JSON,
//! column widths fitted to the terminal (long ids, kinds, titles and end
//! reasons are cut with `…`, numbers never are), and the list drawn on a
//! termwiz `Surface`. No I/O; time is an input.

use serde_json::Value;
use termwiz::cell::{unicode_column_width, AttributeChange, CellAttributes, Intensity};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::surface::{Change, Position, Surface};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// One instance as the Monitor shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub id: String,
    pub kind: Option<String>,
    pub title: Option<String>,
    /// `None` while running; the end's kind and reason once ended.
    pub ended: Option<Ended>,
    pub seq: Option<u64>,
    pub last_update_at: Option<OffsetDateTime>,
    pub calls_in_flight: u64,
    pub views: u64,
    pub pid: Option<u64>,
    pub argv: Vec<String>,
}

/// Why an instance ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub kind: String,
    pub reason: String,
}

impl Row {
    /// Parse one `list` entry; `None` when it has no id.
    pub fn from_json(v: &Value) -> Option<Row> {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let id = text("id")?;
        let ended = match v.get("ended") {
            Some(e) if e.is_object() => Some(Ended {
                kind: e
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("ended")
                    .to_string(),
                reason: e
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            }),
            _ if text("state").as_deref() == Some("ended") => Some(Ended {
                kind: "ended".into(),
                reason: String::new(),
            }),
            _ => None,
        };
        Some(Row {
            id,
            kind: text("kind"),
            title: text("title"),
            ended,
            seq: v.get("seq").and_then(Value::as_u64),
            last_update_at: v
                .get("last_update_at")
                .and_then(Value::as_str)
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok()),
            calls_in_flight: v
                .get("calls_in_flight")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            views: v.get("views").and_then(Value::as_u64).unwrap_or(0),
            pid: v.get("pid").and_then(Value::as_u64),
            argv: v
                .get("argv")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// Every row of a `list` answer (entries without an id are skipped).
    pub fn all_from_json(list: &Value) -> Vec<Row> {
        list.as_array()
            .map(|items| items.iter().filter_map(Row::from_json).collect())
            .unwrap_or_default()
    }

    /// `running`, or `ended: REASON` (the end's kind when it has no reason).
    pub fn state_text(&self) -> String {
        match &self.ended {
            None => "running".into(),
            Some(e) if e.reason.is_empty() => format!("ended ({})", e.kind),
            Some(e) => format!("ended: {}", e.reason),
        }
    }
}

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
fn fit(s: &str, w: usize) -> String {
    let mut t = truncate(s, w);
    let pad = w.saturating_sub(width(&t));
    t.push_str(&" ".repeat(pad));
    t
}

/// The list's columns, left to right.
pub const HEADERS: [&str; 8] = [
    "ID", "KIND", "TITLE", "SEQ", "UPDATED", "CALLS", "VIEWS", "STATE",
];
/// Numeric columns (SEQ, UPDATED, CALLS, VIEWS) keep these widths.
const FIXED: [usize; 4] = [6, 7, 5, 5];
/// Text columns (ID, KIND, TITLE, STATE) never get narrower than this
/// unless the terminal itself is.
const MIN_TEXT: usize = 5;

/// Column widths for the rows at a terminal `cols` wide: numbers keep their
/// width, the text columns get what their content needs, and when it does
/// not all fit the widest text column gives way first. STATE, last, takes
/// what is left.
pub fn layout(rows: &[Row], cols: usize, now: OffsetDateTime) -> [usize; 8] {
    let gaps = HEADERS.len() - 1;
    let fixed: usize = FIXED.iter().sum();
    let budget = cols.saturating_sub(gaps + fixed);
    let need = |i: usize, f: &dyn Fn(&Row) -> String| -> usize {
        rows.iter()
            .map(|r| width(&f(r)))
            .chain([HEADERS[i].len()])
            .max()
            .unwrap_or(0)
    };
    // ID, KIND, TITLE, STATE.
    let mut text = [
        need(0, &|r| r.id.clone()),
        need(1, &|r| r.kind.clone().unwrap_or_else(|| "-".into())),
        need(2, &|r| r.title.clone().unwrap_or_default()),
        need(7, &|r| r.state_text()),
    ];
    // Numbers too wide for their column widen it (seq > 999999 is unusual).
    let mut numbers = FIXED;
    numbers[0] = numbers[0].max(need(3, &|r| {
        r.seq.map(|s| s.to_string()).unwrap_or_default()
    }));
    numbers[1] = numbers[1].max(need(4, &|r| age(r.last_update_at, now)));
    let budget = budget.saturating_sub(numbers.iter().sum::<usize>() - fixed);
    // Give way in this order, each column down to its floor: STATE (its full
    // reason is on the detail line), TITLE, KIND, then the id; then all to
    // the minimum.
    let steps: [(usize, usize); 8] = [
        (3, 14),
        (2, 10),
        (1, 10),
        (0, 16),
        (3, MIN_TEXT),
        (2, MIN_TEXT),
        (1, MIN_TEXT),
        (0, MIN_TEXT),
    ];
    for (column, floor) in steps {
        let over = text.iter().sum::<usize>().saturating_sub(budget);
        let give = over.min(text[column].saturating_sub(floor));
        text[column] -= give;
    }
    // What is left over goes to STATE.
    let used: usize = text.iter().sum();
    text[3] += budget.saturating_sub(used);
    [
        text[0], text[1], text[2], numbers[0], numbers[1], numbers[2], numbers[3], text[3],
    ]
}

/// One table line: the cells of `fields` in `widths`, separated by a space,
/// cut to `cols`.
pub fn table_line(fields: &[String; 8], widths: &[usize; 8], cols: usize) -> String {
    let mut line = String::new();
    for (i, (f, w)) in fields.iter().zip(widths).enumerate() {
        if i > 0 {
            line.push(' ');
        }
        // Numbers align right.
        if (3..=6).contains(&i) {
            let t = truncate(f, *w);
            line.push_str(&" ".repeat(w.saturating_sub(width(&t))));
            line.push_str(&t);
        } else {
            line.push_str(&fit(f, *w));
        }
    }
    fit(&line, cols)
}

/// The fields of a row, as the table shows them.
pub fn row_fields(r: &Row, now: OffsetDateTime) -> [String; 8] {
    [
        r.id.clone(),
        r.kind.clone().unwrap_or_else(|| "-".into()),
        r.title.clone().unwrap_or_default(),
        r.seq.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
        age(r.last_update_at, now),
        // An ended instance has neither (its last status may still count them).
        live(r, r.calls_in_flight),
        live(r, r.views),
        r.state_text(),
    ]
}

fn live(r: &Row, n: u64) -> String {
    if r.ended.is_some() {
        "-".into()
    } else {
        n.to_string()
    }
}

/// The detail line for the selected row: its full end reason, or how it runs.
pub fn detail(r: &Row) -> String {
    match &r.ended {
        Some(e) => {
            let reason = if e.reason.is_empty() {
                "(no reason given)"
            } else {
                &e.reason
            };
            format!("{} ended ({}): {reason}", r.id, e.kind)
        }
        None => {
            let pid = r.pid.map(|p| format!(" · pid {p}")).unwrap_or_default();
            format!("{} running{pid} · {}", r.id, r.argv.join(" "))
        }
    }
}

/// What the list screen shows besides the rows.
pub struct ListView<'a> {
    pub rows: &'a [Row],
    pub selected: usize,
    /// The first row shown (scrolling); [`scroll_for`] keeps it in range.
    pub top: usize,
    /// The bottom line: key help, or a message.
    pub footer: &'a str,
    /// The footer is a problem (drawn in red).
    pub footer_alert: bool,
    pub now: OffsetDateTime,
}

/// Rows of the screen the list's entries get at a terminal `rows` tall
/// (title, header, detail and footer take four).
pub fn body_rows(rows: usize) -> usize {
    rows.saturating_sub(4)
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
        Change::CursorPosition {
            x: Position::Absolute(0),
            y: Position::Absolute(y),
        },
        Change::AllAttributes(attrs),
        Change::Text(text),
        Change::AllAttributes(CellAttributes::default()),
    ]
}

/// Draws the list screen on a `cols` x `rows` surface.
pub fn draw(view: &ListView, cols: usize, rows: usize) -> Surface {
    let mut s = Surface::new(cols, rows);
    if cols == 0 || rows == 0 {
        return s;
    }
    let running = view.rows.iter().filter(|r| r.ended.is_none()).count();
    let mut title_attrs = CellAttributes::default();
    title_attrs.set_reverse(true);
    let title = format!(
        " Tickloop Monitor · {} instances, {running} running",
        view.rows.len()
    );
    s.add_changes(text_at(0, title_attrs, fit(&title, cols)));
    if rows < 2 {
        return s;
    }
    let widths = layout(view.rows, cols, view.now);
    let mut bold = CellAttributes::default();
    bold.set_intensity(Intensity::Bold);
    let headers = HEADERS.map(str::to_string);
    s.add_changes(text_at(1, bold, table_line(&headers, &widths, cols)));

    let body = body_rows(rows);
    if view.rows.is_empty() && body > 0 {
        s.add_changes(text_at(
            2,
            CellAttributes::default(),
            fit("no instances; `tickloop open -- PROGRAM` starts one", cols),
        ));
    }
    for (i, r) in view.rows.iter().enumerate().skip(view.top).take(body) {
        let mut attrs = CellAttributes::default();
        if r.ended.is_some() {
            attrs.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Grey as u8));
        }
        if i == view.selected {
            attrs.set_reverse(true);
        }
        let line = table_line(&row_fields(r, view.now), &widths, cols);
        s.add_changes(text_at(2 + i - view.top, attrs, line));
    }
    if rows >= 4 {
        if let Some(r) = view.rows.get(view.selected) {
            let mut attrs = CellAttributes::default();
            if r.ended.is_some() {
                attrs.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Red as u8));
            }
            s.add_changes(text_at(rows - 2, attrs, fit(&detail(r), cols)));
        }
    }
    if rows >= 3 {
        let mut attrs = CellAttributes::default();
        attrs.set_reverse(true);
        if view.footer_alert {
            attrs.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Red as u8));
        }
        s.add_changes(text_at(rows - 1, attrs, fit(view.footer, cols)));
    }
    // Keep the cursor parked and plain.
    s.add_change(Change::Attribute(AttributeChange::Reverse(false)));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-11-29T21:00:00Z", &Rfc3339).unwrap()
    }

    fn rows() -> Vec<Row> {
        Row::all_from_json(&json!([
            {"id": "hosted:counter", "kind": "example.counter", "title": "Counter",
             "state": "running", "ended": null, "seq": 3, "views": 1, "calls_in_flight": 2,
             "last_update_at": "2026-11-29T20:59:48Z", "pid": 12, "argv": ["python3", "c.py"]},
            {"id": "shell:top", "kind": null, "title": "top", "state": "ended",
             "ended": {"reason": "exited with status 0", "kind": "exited", "at": "x"},
             "seq": null, "views": 0, "calls_in_flight": 0, "last_update_at": null},
            {"no": "id"},
        ]))
    }

    #[test]
    fn parses_list_entries() {
        let r = rows();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].seq, Some(3));
        assert_eq!(r[0].state_text(), "running");
        assert_eq!(r[1].state_text(), "ended: exited with status 0");
        assert_eq!(age(r[0].last_update_at, now()), "12s");
        assert_eq!(age(r[1].last_update_at, now()), "-");
        assert_eq!(
            detail(&r[1]),
            "shell:top ended (exited): exited with status 0"
        );
        assert_eq!(
            detail(&r[0]),
            "hosted:counter running · pid 12 · python3 c.py"
        );
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
    fn truncation_marks_the_cut() {
        assert_eq!(truncate("hello", 5), "hello");
        assert_eq!(truncate("hello world", 5), "hell…");
        assert_eq!(truncate("日本語", 4), "日…");
        assert_eq!(truncate("a\nb", 5), "a b");
        assert_eq!(fit("ab", 4), "ab  ");
    }

    #[test]
    fn layout_fits_every_width() {
        let mut r = rows();
        r[0].title = Some("A very long title that goes on and on and on".into());
        r[1].ended.as_mut().unwrap().reason = "x".repeat(200);
        for cols in [20, 40, 80, 100, 200, 400] {
            let w = layout(&r, cols, now());
            let total: usize = w.iter().sum::<usize>() + 7;
            if cols >= 80 {
                assert_eq!(total, cols, "{cols}: {w:?}");
            }
            for row in &r {
                let line = table_line(&row_fields(row, now()), &w, cols);
                assert_eq!(width(&line), cols, "{cols}: {line}");
            }
        }
        // At 80 columns the id is shown whole, the long title cut.
        let w = layout(&r, 80, now());
        let line = table_line(&row_fields(&r[0], now()), &w, 80);
        assert!(line.starts_with("hosted:counter "), "{line}");
        assert!(line.contains('…'), "{line}");
        assert!(line.contains("  3 "), "{line}");
    }

    #[test]
    fn draws_list_with_selection_detail_and_footer() {
        let r = rows();
        let view = ListView {
            rows: &r,
            selected: 1,
            top: 0,
            footer: "q quits",
            footer_alert: false,
            now: now(),
        };
        let s = draw(&view, 80, 24);
        let text = s.screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].contains("2 instances, 1 running"), "{text}");
        assert!(lines[1].starts_with("ID "), "{text}");
        assert!(lines[2].starts_with("hosted:counter"), "{text}");
        assert!(lines[3].starts_with("shell:top"), "{text}");
        assert!(lines[22].contains("exited with status 0"), "{text}");
        assert!(lines[23].starts_with("q quits"), "{text}");
        let cells = s.get_screen_cells();
        assert!(cells[3][0].attrs().reverse());
        assert!(!cells[2][0].attrs().reverse());
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
            let view = ListView {
                rows: &r,
                selected: 1,
                top: 0,
                footer: "q quits",
                footer_alert: true,
                now: now(),
            };
            draw(&view, cols, rows_n);
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
