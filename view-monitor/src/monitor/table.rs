//! The Monitor's list screen: rows parsed from `tickloop list`'s JSON,
//! columns fitted to the terminal (dropped by priority when narrow, never
//! ID or STATE; long ids, kinds, titles and end reasons cut with `…`,
//! numbers never), coloured by state, a full-width selection bar, and the
//! preview of the selected instance's screen under the list, all drawn on a
//! termwiz `Surface`. No I/O; time is an input, so a frame is a pure
//! function of its [`ListView`] (the snapshot tests rely on it).

use crate::cells::{age, at, fit, skip_cells, take_cells, truncate, width};
use serde_json::Value;
use termwiz::cell::{AttributeChange, CellAttributes, Intensity};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::surface::{Change, Surface};
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{InstanceState, ListEntry, ScreenReply};
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
    /// When the program last wrote to its terminal (launchers that publish it).
    pub last_output_at: Option<OffsetDateTime>,
    pub calls_in_flight: u64,
    /// Calls held for a person's approval (not yet sent to the Tick).
    pub approvals_waiting: u64,
    pub views: u64,
    /// Recordings of it running now (`tickloop record`, `open --record`).
    pub recordings: u64,
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
    /// One `list` entry as a row, what its program set (kind, title, end
    /// reason) escaped ([`tickloop_proto::escape`]); `None` when it has no
    /// id.
    pub fn from_entry(entry: &ListEntry) -> Option<Row> {
        if entry.id.is_empty() {
            return None;
        }
        let ended = match (&entry.ended, entry.state) {
            (Some(e), _) => Some(Ended {
                kind: e.kind.as_str().to_string(),
                reason: escaped(&e.reason),
            }),
            (None, InstanceState::Ended) => Some(Ended {
                kind: "ended".into(),
                reason: String::new(),
            }),
            (None, _) => None,
        };
        let time = |at: &Option<String>| {
            at.as_deref()
                .and_then(|t| OffsetDateTime::parse(t, &Rfc3339).ok())
        };
        Some(Row {
            id: entry.id.clone(),
            // What the program set, shown escaped.
            kind: entry.kind.as_deref().map(escaped),
            title: entry.title.as_deref().map(escaped),
            ended,
            seq: entry.seq,
            last_update_at: time(&entry.last_update_at),
            last_output_at: time(&entry.last_output_at),
            calls_in_flight: u64::from(entry.calls_in_flight),
            approvals_waiting: u64::try_from(entry.approvals_waiting).unwrap_or(u64::MAX),
            views: u64::from(entry.views),
            recordings: u64::from(entry.recordings),
            pid: (entry.pid != 0).then_some(u64::from(entry.pid)),
            argv: entry.argv.clone(),
        })
    }

    /// A `shell:` instance (no protocol session: no seq, no updates).
    pub fn is_shell(&self) -> bool {
        self.id.starts_with("shell:")
    }

    /// Whether `filter` (lower case) is in its id, kind, title or state.
    pub fn matches(&self, filter: &str) -> bool {
        if filter.is_empty() {
            return true;
        }
        [
            Some(self.id.as_str()),
            self.kind.as_deref(),
            self.title.as_deref(),
            Some(self.state_text().as_str()),
        ]
        .into_iter()
        .flatten()
        .any(|field| field.to_lowercase().contains(filter))
    }

    /// Every row of a `list` answer (entries without an id are skipped;
    /// an answer that is not a list has none).
    pub fn all_from_json(list: &Value) -> Vec<Row> {
        ListEntry::all(list)
            .unwrap_or_default()
            .iter()
            .filter_map(Row::from_entry)
            .collect()
    }

    /// `running` (`running · recorded` while a recording runs), or
    /// `ended: REASON` (the end's kind when it has no reason).
    pub fn state_text(&self) -> String {
        match &self.ended {
            None if self.recordings == 1 => "running · recorded".into(),
            None if self.recordings > 1 => format!("running · recorded ×{}", self.recordings),
            None => "running".into(),
            Some(e) if e.reason.is_empty() => format!("ended ({})", e.kind),
            Some(e) => format!("ended: {}", e.reason),
        }
    }
}

/// A column of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    Id,
    Kind,
    Title,
    Seq,
    /// Time since the Tick's last `tick/update` (`-` for shells).
    Updated,
    /// Time since the program last wrote to its terminal.
    Active,
    Calls,
    /// Calls waiting for a person's approval.
    Approve,
    Views,
    State,
}

/// The columns, left to right.
pub const COLUMNS: [Col; 10] = [
    Col::Id,
    Col::Kind,
    Col::Title,
    Col::Seq,
    Col::Updated,
    Col::Active,
    Col::Calls,
    Col::Approve,
    Col::Views,
    Col::State,
];

/// The order columns are dropped in when the terminal is too narrow for
/// them all; ID and STATE never are. APPROVE is not in it: see
/// [`drop_order`].
pub const DROP_ORDER: [Col; 7] = [
    Col::Views,
    Col::Calls,
    Col::Seq,
    Col::Kind,
    Col::Updated,
    Col::Title,
    Col::Active,
];

/// [`DROP_ORDER`] with APPROVE: first while no call waits for approval,
/// last (after ACTIVE) while one does, for the person looking.
pub fn drop_order(rows: &[Row]) -> Vec<Col> {
    let waiting = rows.iter().any(|r| r.approvals_waiting > 0);
    let mut order = DROP_ORDER.to_vec();
    if waiting {
        order.push(Col::Approve);
    } else {
        order.insert(0, Col::Approve);
    }
    order
}

/// Text columns never get narrower than this unless the terminal itself is.
const MIN_TEXT: usize = 5;

impl Col {
    pub fn header(self) -> &'static str {
        match self {
            Col::Id => "ID",
            Col::Kind => "KIND",
            Col::Title => "TITLE",
            Col::Seq => "SEQ",
            Col::Updated => "UPDATED",
            Col::Active => "ACTIVE",
            Col::Calls => "CALLS",
            Col::Approve => "APPROVE",
            Col::Views => "VIEWS",
            Col::State => "STATE",
        }
    }

    /// Numbers, aligned right and never cut.
    pub fn numeric(self) -> bool {
        matches!(
            self,
            Col::Seq | Col::Updated | Col::Active | Col::Calls | Col::Approve | Col::Views
        )
    }

    /// The cell of `r` in this column.
    pub fn field(self, r: &Row, now: OffsetDateTime) -> String {
        match self {
            Col::Id => r.id.clone(),
            Col::Kind => r.kind.clone().unwrap_or_else(|| "-".into()),
            Col::Title => r.title.clone().unwrap_or_default(),
            Col::Seq => r.seq.map(|s| s.to_string()).unwrap_or_else(|| "-".into()),
            Col::Updated if r.is_shell() => "-".into(),
            Col::Updated => age(r.last_update_at, now),
            Col::Active => age(r.last_output_at, now),
            // An ended instance has neither (its last status may still count them).
            Col::Calls => live(r, r.calls_in_flight),
            Col::Approve => live(r, r.approvals_waiting),
            Col::Views => live(r, r.views),
            Col::State => r.state_text(),
        }
    }

    /// The width this column should keep before columns are dropped: the
    /// content's, but at most this for text (the rest is cut with `…`).
    fn comfortable(self, need: usize) -> usize {
        match self {
            Col::Id => need.min(16),
            Col::Kind | Col::Title => need.min(10),
            // "running", or the end's kind (the detail line has the reason).
            Col::State => need.min(9),
            _ => need,
        }
    }
}

/// The columns shown and their widths, left to right.
pub type Layout = Vec<(Col, usize)>;

/// The columns for `rows` at a terminal `cols` wide. Every column first
/// gets what its content needs (numbers at least their header); while the
/// shown columns at their [`Col::comfortable`] widths do not fit, the next
/// of [`DROP_ORDER`] goes; then the text columns give way (STATE, TITLE,
/// KIND, ID, each to its comfortable width, then all to a minimum); what is
/// left over goes to STATE, the last.
pub fn layout(rows: &[Row], cols: usize, now: OffsetDateTime) -> Layout {
    let need = |c: Col| -> usize {
        rows.iter()
            .map(|r| width(&c.field(r, now)))
            .chain([c.header().len()])
            .max()
            .unwrap_or(0)
    };
    let mut shown: Layout = COLUMNS.iter().map(|&c| (c, need(c))).collect();
    let total = |l: &Layout, f: &dyn Fn(Col, usize) -> usize| -> usize {
        l.iter().map(|&(c, w)| f(c, w)).sum::<usize>() + l.len().saturating_sub(1)
    };
    for drop in drop_order(rows) {
        if total(&shown, &|c, w| c.comfortable(w)) <= cols {
            break;
        }
        shown.retain(|&(c, _)| c != drop);
    }
    let order = [Col::State, Col::Title, Col::Kind, Col::Id];
    for floor in [None, Some(MIN_TEXT)] {
        for col in order {
            let over = total(&shown, &|_, w| w).saturating_sub(cols);
            if over == 0 {
                break;
            }
            if let Some(entry) = shown.iter_mut().find(|(c, _)| *c == col) {
                let floor = floor.unwrap_or_else(|| col.comfortable(entry.1));
                entry.1 -= over.min(entry.1.saturating_sub(floor));
            }
        }
    }
    let left = cols.saturating_sub(total(&shown, &|_, w| w));
    if let Some(last) = shown.last_mut() {
        last.1 += left;
    }
    shown
}

/// One table line as text: the cells of `fields` (one per `layout` column)
/// separated by a space, cut or padded to `cols`.
pub fn table_line(fields: &[String], layout: &Layout, cols: usize) -> String {
    segments(fields, layout, cols)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

/// A line cut into its columns: `(column, text)`, the text of each padded to
/// its width with the separating space, the last padded to `cols`.
fn segments(fields: &[String], layout: &Layout, cols: usize) -> Vec<(Option<Col>, String)> {
    let mut out = Vec::new();
    let mut used = 0;
    for (i, (f, &(col, w))) in fields.iter().zip(layout).enumerate() {
        let mut text = String::new();
        if i > 0 {
            text.push(' ');
        }
        if col.numeric() {
            let t = truncate(f, w);
            text.push_str(&" ".repeat(w.saturating_sub(width(&t))));
            text.push_str(&t);
        } else {
            text.push_str(&fit(f, w));
        }
        let text = truncate(&text, cols.saturating_sub(used));
        used += width(&text);
        out.push((Some(col), text));
    }
    if used < cols {
        out.push((None, " ".repeat(cols - used)));
    }
    out
}

/// The fields of a row in `layout`'s columns. A STATE too wide for its
/// column says only how the instance ended (`closed`, `exited`,
/// `violation`…): the detail line has the whole reason.
pub fn row_fields(r: &Row, layout: &Layout, now: OffsetDateTime) -> Vec<String> {
    layout
        .iter()
        .map(|&(c, w)| {
            let full = c.field(r, now);
            match (&r.ended, c) {
                (Some(e), Col::State) if width(&full) > w => e.kind.clone(),
                _ => full,
            }
        })
        .collect()
}

/// The headers of `layout`'s columns.
pub fn header_fields(layout: &Layout) -> Vec<String> {
    layout
        .iter()
        .map(|&(c, _)| c.header().to_string())
        .collect()
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

/// How an instance's state is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    Running,
    /// Ended as asked or cleanly: closed, or exited with status 0.
    EndedClean,
    /// Ended otherwise: a failure, a violation, a lost launcher, a signal.
    EndedBadly,
}

impl Row {
    pub fn tone(&self) -> Tone {
        match &self.ended {
            None => Tone::Running,
            Some(e) if e.kind == "closed" || e.reason.ends_with("status 0") => Tone::EndedClean,
            Some(_) => Tone::EndedBadly,
        }
    }
}

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
            s.add_changes(text_at(rows - 2, attrs, fit(&detail(r), cols)));
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
    for (i, text) in p.screen.lines.iter().skip(y).take(inner).enumerate() {
        // Cropped, not cut: no `…` at the edge.
        let cropped = take_cells(&skip_cells(text, x), cols);
        s.add_changes(text_at(
            y0 + 1 + i,
            CellAttributes::default(),
            fit(&cropped, cols),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> OffsetDateTime {
        OffsetDateTime::parse("2026-11-29T21:00:00Z", &Rfc3339).unwrap()
    }

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
        let recorded = Row::all_from_json(&json!([
            {"id": "shell:bash", "state": "running", "recordings": 1},
            {"id": "shell:zsh", "state": "running", "recordings": 2},
        ]));
        let states: Vec<String> = recorded.iter().map(Row::state_text).collect();
        assert_eq!(states, ["running · recorded", "running · recorded ×2"]);
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
    fn layout_fits_every_width() {
        let mut r = rows();
        r[0].title = Some("A very long title that goes on and on and on".into());
        r[1].ended.as_mut().unwrap().reason = "x".repeat(200);
        for cols in [0, 1, 5, 20, 40, 80, 100, 200, 400] {
            let w = layout(&r, cols, now());
            let total: usize = w.iter().map(|(_, w)| w).sum::<usize>() + w.len() - 1;
            if cols >= 40 {
                assert_eq!(total, cols, "{cols}: {w:?}");
            }
            // ID and STATE are never dropped.
            assert_eq!(w.first().map(|c| c.0), Some(Col::Id), "{cols}");
            assert_eq!(w.last().map(|c| c.0), Some(Col::State), "{cols}");
            for row in &r {
                let line = table_line(&row_fields(row, &w, now()), &w, cols);
                assert_eq!(width(&line), cols, "{cols}: {line}");
            }
        }
        // At 80 columns the id is shown whole, the long title cut.
        let w = layout(&r, 80, now());
        let line = table_line(&row_fields(&r[0], &w, now()), &w, 80);
        assert!(line.starts_with("hosted:counter "), "{line}");
        assert!(line.contains('…'), "{line}");
        assert!(line.contains(" 3 "), "{line}");
    }

    #[test]
    fn narrow_terminals_drop_columns_by_priority() {
        let r = rows();
        let shown = |cols| -> Vec<Col> { layout(&r, cols, now()).iter().map(|c| c.0).collect() };
        assert_eq!(shown(200), COLUMNS.to_vec());
        let at60 = shown(60);
        assert!(
            !at60.contains(&Col::Views) && at60.contains(&Col::Active),
            "{at60:?}"
        );
        assert_eq!(shown(32), vec![Col::Id, Col::Active, Col::State]);
        assert_eq!(shown(24), vec![Col::Id, Col::State]);
        // Dropping follows DROP_ORDER as the terminal narrows.
        let mut dropped = Vec::new();
        for cols in (20..=200).rev() {
            for c in COLUMNS {
                if !shown(cols).contains(&c) && !dropped.contains(&c) {
                    dropped.push(c);
                }
            }
        }
        assert_eq!(dropped, drop_order(&r));
        assert_eq!(dropped[0], Col::Approve);
        // A call waiting for approval keeps its column to the last.
        let mut waiting = rows();
        waiting[0].approvals_waiting = 1;
        let shown =
            |cols| -> Vec<Col> { layout(&waiting, cols, now()).iter().map(|c| c.0).collect() };
        assert_eq!(shown(34), vec![Col::Id, Col::Approve, Col::State]);
        assert_eq!(drop_order(&waiting).last(), Some(&Col::Approve));
    }

    #[test]
    fn filter_matches_id_kind_title_and_state() {
        let r = rows();
        assert!(r[0].matches("counter"));
        assert!(r[0].matches("example"));
        assert!(r[1].matches("ended"));
        assert!(!r[0].matches("ended"));
        assert!(r[1].matches(""));
    }

    #[test]
    fn what_a_program_set_is_shown_escaped() {
        let r = Row::all_from_json(&json!([{"id": "shell:x", "kind": null,
            "title": "vim \u{9b}2J\u{202e}gnp.exe", "state": "ended",
            "ended": {"reason": "exit\u{2028}1", "kind": "exited", "at": "x"},
            "seq": null, "views": 0, "calls_in_flight": 0, "pid": 1, "argv": ["sh"]}]));
        assert_eq!(r[0].title.as_deref(), Some("vim \\u{9B}2J\\u{202E}gnp.exe"));
        assert_eq!(r[0].state_text(), "ended: exit\\u{2028}1");
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
            ended: false,
        };
        assert_eq!(preview_origin(&screen(3, 10), 80, 9), (0, 0));
        assert_eq!(preview_origin(&screen(29, 10), 80, 9), (0, 21));
        assert_eq!(preview_origin(&screen(0, 100), 80, 9), (21, 0));
        assert_eq!(skip_cells("日本語abc", 2), "本語abc");
        assert_eq!(take_cells("日本語abc", 5), "日本");
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
