//! The activity overlay: what agents have done with one instance, popped
//! over its screen from any view (the prefix key, then `m`) and shown for
//! the selected instance in the Monitor (`i`). The Tick stays drawn beneath,
//! dimmed; the overlay takes the lower two thirds of the screen at most.
//!
//! Pure: [`ActivityView`] holds what was fetched and what is selected,
//! [`draw`] paints it on a surface, [`entry_text`] is the one-line form
//! `tickloop activity` prints. Fetching lives with the views
//! ([`Fetcher`]: a thread asking tickhost twice a second).

mod words;

pub use words::{
    clock, entry_client, entry_summary, entry_text, local_offset, timeline_text, Tone,
};

use crate::cells::{age, at, draw_box, last_row_note, truncate, width};
use serde_json::Value;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::input::{KeyCode, KeyEvent, Modifiers};
use termwiz::surface::{Change, Surface};
use tickloop_proto::escape::escaped;
use tickloop_proto::wire::{
    ActivityEntry, ActivityEvent, ActivityOutcome, ActivityRecord, ClientReply, ClientRequest,
};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// The smallest terminal the overlay draws in; below it, one line says so.
pub const MIN_COLS: usize = 40;
pub const MIN_ROWS: usize = 8;

/// What the overlay shows of one instance.
#[derive(Debug, Clone, Default)]
pub struct ActivityView {
    pub id: String,
    /// The instance's `list` entry (title, kind, revision, seq, views).
    pub entry: Option<Value>,
    pub record: Option<ActivityRecord>,
    /// Why the last fetch failed, when it did.
    pub error: Option<String>,
    /// Index into [`ActivityView::rows`] (newest first).
    pub selected: usize,
    /// Enter: the selected entry shown whole.
    pub opened: bool,
    /// Offset of local time, for the times shown.
    pub offset: Option<UtcOffset>,
}

/// What a key did to the overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PanelKey {
    /// Handled; draw again.
    Consumed,
    /// Esc (or `q`): close the overlay.
    Close,
    /// Tab: go to the full Monitor list.
    Monitor,
}

impl ActivityView {
    pub fn new(id: &str) -> Self {
        ActivityView {
            id: id.to_string(),
            offset: Some(local_offset()),
            ..ActivityView::default()
        }
    }

    /// The entries, newest first.
    pub fn rows(&self) -> Vec<&ActivityEntry> {
        self.record
            .as_ref()
            .map(|r| r.entries.iter().rev().collect())
            .unwrap_or_default()
    }

    /// A fetch arrived.
    pub fn update(&mut self, fetched: Fetched) {
        match fetched {
            Fetched::Ok { entry, record } => {
                // Keep the same entry selected as new ones arrive on top.
                let selected_n = self.rows().get(self.selected).map(|e| e.n);
                self.entry = entry;
                self.record = Some(record);
                self.error = None;
                if let Some(n) = selected_n {
                    if let Some(i) = self.rows().iter().position(|e| e.n == n) {
                        self.selected = i;
                    }
                }
            }
            Fetched::Failed(why) => self.error = Some(why),
        }
        self.selected = self.selected.min(self.rows().len().saturating_sub(1));
    }

    pub fn on_key(&mut self, key: &KeyEvent) -> PanelKey {
        let len = self.rows().len();
        let plain = key.modifiers == Modifiers::NONE || key.modifiers == Modifiers::SHIFT;
        match key.key {
            KeyCode::Escape if self.opened => self.opened = false,
            KeyCode::Escape => return PanelKey::Close,
            KeyCode::Char('q') if plain && !self.opened => return PanelKey::Close,
            KeyCode::Tab => return PanelKey::Monitor,
            KeyCode::Enter => self.opened = !self.opened && len > 0,
            KeyCode::UpArrow | KeyCode::Char('k') => {
                self.selected = self.selected.saturating_sub(1)
            }
            KeyCode::DownArrow | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(len.saturating_sub(1))
            }
            KeyCode::PageUp => self.selected = self.selected.saturating_sub(10),
            KeyCode::PageDown => self.selected = (self.selected + 10).min(len.saturating_sub(1)),
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = len.saturating_sub(1),
            _ => {}
        }
        PanelKey::Consumed
    }
}

pub(crate) fn tone_color(tone: Tone) -> ColorAttribute {
    ColorAttribute::PaletteIndex(match tone {
        Tone::Done => AnsiColor::Green,
        Tone::NotDone => AnsiColor::Olive,
        Tone::Failed => AnsiColor::Red,
    } as u8)
}

/// Dims every cell of `screen` (the Tick beneath the overlay).
pub fn dim(screen: &mut Surface) {
    for line in screen.screen_cells() {
        for cell in line.iter_mut() {
            cell.attrs_mut().set_intensity(Intensity::Half);
        }
    }
}

/// The header line: title, kind, revision, seq, last update, views,
/// subscribers.
fn header(view: &ActivityView, now: OffsetDateTime) -> String {
    let field = |k: &str| {
        view.entry
            .as_ref()
            .and_then(|e| e.get(k))
            .filter(|v| !v.is_null())
    };
    let text = |k: &str| field(k).and_then(Value::as_str).map(str::to_string);
    let mut parts = vec![text("title").unwrap_or_else(|| view.id.clone())];
    if let Some(kind) = text("kind") {
        parts.push(kind);
    }
    if let Some(revision) = text("revision") {
        parts.push(format!("rev {revision}"));
    }
    // Whose it is: an agent's own instance is said; the person's is the
    // usual case, said only when agents may type or close without asking.
    match text("owner").as_deref() {
        Some("agent") => parts.push("an agent's".to_string()),
        _ => {
            let free: Vec<&str> = [("agent_input", "typing"), ("agent_close", "closing")]
                .iter()
                .filter(|(k, _)| text(k).is_some_and(|p| p != "ask"))
                .map(|(_, what)| *what)
                .collect();
            if !free.is_empty() {
                parts.push(format!("agents' {} not asked", free.join(", ")));
            }
        }
    }
    if let Some(seq) = field("seq").and_then(Value::as_u64) {
        parts.push(format!("seq {seq}"));
    }
    let updated = text("last_update_at").and_then(|t| OffsetDateTime::parse(&t, &Rfc3339).ok());
    if updated.is_some() {
        parts.push(format!("updated {} ago", age(updated, now)));
    }
    let views = field("views").and_then(Value::as_u64).unwrap_or(0);
    parts.push(format!("{views} view{}", if views == 1 { "" } else { "s" }));
    let subs = view.record.as_ref().map_or(0, |r| r.subscribers);
    parts.push(format!(
        "{subs} subscriber{}",
        if subs == 1 { "" } else { "s" }
    ));
    if let Some(state) = text("state").filter(|s| s == "ended") {
        parts.push(state);
    }
    parts.join(" · ")
}

/// The selected entry, whole: one line a field, JSON pretty-printed.
pub(crate) fn details(entry: &ActivityEntry, offset: UtcOffset) -> Vec<String> {
    let mut lines = vec![format!(
        "#{} at {} ({})",
        entry.n,
        clock(&entry.at, offset),
        entry.at
    )];
    match &entry.event {
        ActivityEvent::Request(r) => {
            lines.push(format!(
                "client {} · {}{}",
                r.client.map_or("?", |c| c.label()),
                r.method,
                r.tool
                    .as_ref()
                    .map(|t| format!(" · tool {}", escaped(t)))
                    .unwrap_or_default()
            ));
            if let Some(revision) = &r.revision {
                lines.push(format!("revision {}", escaped(revision)));
            }
            lines.push(format!("outcome {}", r.came_to()));
            // A failure's message ends the outcome's line already.
            if let Some(error) = r
                .error
                .as_ref()
                .filter(|_| r.outcome != ActivityOutcome::Failed)
            {
                lines.push(format!("error: {}", escaped(error)));
            }
            if let Some(typing) = &r.echo_off {
                lines.push(typing.said());
            }
            for (name, value) in [("arguments", &r.args), ("result", &r.result)] {
                if let Some(value) = value {
                    lines.push(format!("{name}:"));
                    let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
                    lines.extend(pretty.lines().map(|l| format!("  {}", escaped(l))));
                }
            }
        }
        _ => lines.push(entry_summary(entry, 200).0),
    }
    lines
}

/// Paints `view` over `screen`: the screen dimmed, a box over its lower two
/// thirds (all of it when `full`), or one line when the terminal is too
/// small. `close_hint` ends the help line (`ctrl+\ m closes` in a view).
pub fn draw(
    screen: &mut Surface,
    view: &ActivityView,
    now: OffsetDateTime,
    close_hint: &str,
    full: bool,
) {
    let (cols, rows) = screen.dimensions();
    dim(screen);
    if cols < MIN_COLS || rows < MIN_ROWS {
        last_row_note(
            screen,
            &format!("too small for the activity ({MIN_COLS}×{MIN_ROWS} at least) · Esc closes"),
        );
        return;
    }
    let height = if full {
        rows
    } else {
        (rows * 2 / 3).max(MIN_ROWS)
    };
    let top = rows - height;
    let inner = cols - 2;
    let offset = view.offset.unwrap_or(UtcOffset::UTC);
    draw_box(
        screen,
        top,
        &format!(" activity · {} ", view.id),
        AnsiColor::Aqua,
    );

    // Inside: header, body, help line.
    let body_top = top + 2;
    let help_row = rows - 2;
    let body_rows = help_row.saturating_sub(body_top);
    let text_width = inner.saturating_sub(2);
    let mut bold = CellAttributes::default();
    bold.set_intensity(Intensity::Bold);
    let mut changes = vec![
        at(2, top + 1),
        Change::AllAttributes(bold),
        Change::Text(truncate(&header(view, now), text_width)),
        Change::AllAttributes(CellAttributes::default()),
    ];
    let mut dimmed = CellAttributes::default();
    dimmed.set_intensity(Intensity::Half);
    let help = if view.opened {
        "Esc or Enter: back to the list"
    } else {
        "↑↓ select · Enter whole request · Tab Monitor · Esc closes"
    };
    let help = if close_hint.is_empty() {
        help.to_string()
    } else {
        format!("{help} · {close_hint}")
    };
    changes.push(at(2, help_row));
    changes.push(Change::AllAttributes(dimmed));
    changes.push(Change::Text(truncate(&help, text_width)));
    changes.push(Change::AllAttributes(CellAttributes::default()));

    let inside = Inside {
        body_top,
        text_width,
    };
    body(&mut changes, view, &inside, body_rows, offset);
    screen.add_changes(changes);
}

/// The inside of the activity's box: its first body row and the width of
/// its text (a margin of one cell each side).
struct Inside {
    body_top: usize,
    text_width: usize,
}

impl Inside {
    /// `text` cut to the width, on body row `row`, in `attrs`.
    fn line(&self, changes: &mut Vec<Change>, row: usize, text: &str, attrs: CellAttributes) {
        changes.push(at(2, self.body_top + row));
        changes.push(Change::AllAttributes(attrs));
        changes.push(Change::Text(truncate(text, self.text_width)));
        changes.push(Change::AllAttributes(CellAttributes::default()));
    }
}

/// The body: the error, or the selected entry whole, or the entries (the
/// selected one in sight) with the tool catalog under them.
fn body(
    changes: &mut Vec<Change>,
    view: &ActivityView,
    inside: &Inside,
    body_rows: usize,
    offset: UtcOffset,
) {
    let rows_list = view.rows();
    if let Some(error) = &view.error {
        let mut red = CellAttributes::default();
        red.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Red as u8));
        inside.line(changes, 0, error, red);
        return;
    }
    if view.opened {
        if let Some(entry) = rows_list.get(view.selected) {
            for (i, text) in details(entry, offset).iter().take(body_rows).enumerate() {
                inside.line(changes, i, text, CellAttributes::default());
            }
        }
        return;
    }
    // The catalog takes the last rows of the body (a third at most).
    let tools = view
        .record
        .as_ref()
        .map(|r| r.tools.as_slice())
        .unwrap_or(&[]);
    let tool_rows = if tools.is_empty() {
        0
    } else {
        (tools.len() + 1).min(body_rows / 3)
    };
    let list_rows = body_rows - tool_rows;
    if rows_list.is_empty() {
        let text = if view.record.is_none() {
            "asking tickhost…"
        } else {
            "nothing yet: no agent has used this instance since it started"
        };
        let mut dimmed = CellAttributes::default();
        dimmed.set_intensity(Intensity::Half);
        inside.line(changes, 0, text, dimmed);
    }
    // Scroll so the selected row shows.
    let first = view.selected.saturating_sub(list_rows.saturating_sub(1));
    for (i, entry) in rows_list.iter().skip(first).take(list_rows).enumerate() {
        let selected = first + i == view.selected;
        entry_line(changes, inside, i, entry, selected, offset);
    }
    if tool_rows > 0 {
        tool_lines(changes, inside, view, list_rows, tool_rows);
    }
}

/// Entry `entry` on body row `row`: time, client, summary with its outcome
/// coloured after the arrow; the selected one in reverse video, full width.
fn entry_line(
    changes: &mut Vec<Change>,
    inside: &Inside,
    row: usize,
    entry: &ActivityEntry,
    selected: bool,
    offset: UtcOffset,
) {
    let text_width = inside.text_width;
    let prefix = format!("{} {:<7} ", clock(&entry.at, offset), entry_client(entry));
    let room = text_width.saturating_sub(width(&prefix));
    let (summary, outcome) = entry_summary(entry, room.saturating_sub(24).max(8));
    let summary = truncate(&summary, room);
    let mut attrs = CellAttributes::default();
    if selected {
        attrs.set_reverse(true);
    }
    changes.push(at(2, inside.body_top + row));
    changes.push(Change::AllAttributes(attrs.clone()));
    changes.push(Change::Text(prefix.clone()));
    // The outcome after the arrow, coloured.
    match (outcome, summary.rfind("→ ")) {
        (Some(outcome), Some(arrow)) => {
            changes.push(Change::Text(summary[..arrow].to_string()));
            let mut coloured = attrs.clone();
            coloured.set_foreground(tone_color(outcome));
            changes.push(Change::AllAttributes(coloured));
            changes.push(Change::Text(summary[arrow..].to_string()));
            changes.push(Change::AllAttributes(attrs.clone()));
        }
        _ => changes.push(Change::Text(summary.clone())),
    }
    if selected {
        let used = width(&prefix) + width(&summary);
        changes.push(Change::Text(" ".repeat(text_width.saturating_sub(used))));
    }
    changes.push(Change::AllAttributes(CellAttributes::default()));
}

/// The tool catalog from body row `list_rows` on: a heading, then one tool
/// a row (those that mutate in olive), `tool_rows` rows in all.
fn tool_lines(
    changes: &mut Vec<Change>,
    inside: &Inside,
    view: &ActivityView,
    list_rows: usize,
    tool_rows: usize,
) {
    let tools = view
        .record
        .as_ref()
        .map(|r| r.tools.as_slice())
        .unwrap_or(&[]);
    let mut heading = CellAttributes::default();
    heading.set_intensity(Intensity::Bold);
    inside.line(
        changes,
        list_rows,
        &format!("tools (revision {})", tool_revision(view)),
        heading,
    );
    for (i, tool) in tools.iter().take(tool_rows - 1).enumerate() {
        let text = format!(
            "{:<20} {:<8} {}",
            tool.name,
            if tool.mutates { "mutates" } else { "reads" },
            tool.description
        );
        let mut attrs = CellAttributes::default();
        if tool.mutates {
            attrs.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Olive as u8));
        }
        inside.line(changes, list_rows + 1 + i, &text, attrs);
    }
}

fn tool_revision(view: &ActivityView) -> String {
    view.entry
        .as_ref()
        .and_then(|e| e.get("revision"))
        .and_then(Value::as_str)
        .unwrap_or("-")
        .to_string()
}

/// One fetch of the overlay's data.
#[derive(Debug, Clone)]
pub enum Fetched {
    Ok {
        entry: Option<Value>,
        record: ActivityRecord,
    },
    Failed(String),
}

/// Asks tickhost for an instance's list entry and activity, once.
pub fn fetch(client: &mut tickloop_client::Client, id: &str) -> Fetched {
    let entry = match client.request(ClientRequest::List) {
        Ok(ClientReply::Ok(Value::Array(entries))) => entries
            .into_iter()
            .find(|e| e.get("id").and_then(Value::as_str) == Some(id)),
        _ => None,
    };
    let request = ClientRequest::Activity {
        instance: id.to_string(),
        after: None,
    };
    match client.request(request) {
        Ok(ClientReply::Ok(value)) => match serde_json::from_value::<ActivityRecord>(value) {
            Ok(record) => Fetched::Ok { entry, record },
            Err(e) => Fetched::Failed(format!("tickhost sent an unreadable activity record: {e}")),
        },
        Ok(ClientReply::Error(e)) => Fetched::Failed(e.message),
        Ok(other) => Fetched::Failed(format!("unexpected answer: {other:?}")),
        Err(e) => Fetched::Failed(format!("cannot reach tickhost: {e}")),
    }
}

/// How often an open overlay asks again.
pub const FETCH_EVERY: Duration = Duration::from_millis(500);

/// A thread fetching the overlay's data every [`FETCH_EVERY`] while it is
/// open; it stops when dropped.
pub struct Fetcher {
    stop: Arc<AtomicBool>,
}

impl Fetcher {
    /// Starts fetching `id` from the tickhost of `endpoint`; each result goes
    /// to `deliver` (which wakes the view), until it returns `false`.
    pub fn start(
        endpoint: tickloop_client::Endpoint,
        id: String,
        deliver: impl Fn(Fetched) -> bool + Send + 'static,
    ) -> Fetcher {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut client = None;
            while !stopped.load(Ordering::Relaxed) {
                if client.is_none() {
                    client = endpoint.connect_running().ok();
                }
                let fetched = match client.as_mut() {
                    Some(c) => fetch(c, &id),
                    None => Fetched::Failed("tickhost is not running".into()),
                };
                if matches!(fetched, Fetched::Failed(_)) {
                    client = None;
                }
                if stopped.load(Ordering::Relaxed) || !deliver(fetched) {
                    return;
                }
                std::thread::sleep(FETCH_EVERY);
            }
        });
        Fetcher { stop }
    }
}

impl Fetcher {
    /// Starts asking the tickhost of `endpoint`, every second, which calls
    /// of `id` wait for approval; `deliver` gets the list when it changed
    /// (and returns `false` to stop). It only asks tickhost for the calls
    /// when `list` says some wait.
    pub fn start_approvals(
        endpoint: tickloop_client::Endpoint,
        id: String,
        deliver: impl Fn(Vec<tickloop_proto::wire::HeldCall>) -> bool + Send + 'static,
    ) -> Fetcher {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut client = None;
            let mut last: Vec<tickloop_proto::wire::HeldCall> = Vec::new();
            while !stopped.load(Ordering::Relaxed) {
                if client.is_none() {
                    client = endpoint.connect_running().ok();
                }
                if let Some(c) = client.as_mut() {
                    match c.request(ClientRequest::Approvals) {
                        Ok(ClientReply::Ok(value)) => {
                            let all: Vec<tickloop_proto::wire::HeldCall> =
                                serde_json::from_value(value).unwrap_or_default();
                            let mine: Vec<_> = all
                                .into_iter()
                                .filter(|h| {
                                    h.instance == id || h.instance.ends_with(&format!(":{id}"))
                                })
                                .collect();
                            let changed = mine.len() != last.len()
                                || mine.iter().zip(&last).any(|(a, b)| a.call != b.call)
                                || (!mine.is_empty()
                                    && mine[0].waited_ms / 1000 != last[0].waited_ms / 1000);
                            if changed {
                                last.clone_from(&mine);
                                if !deliver(mine) {
                                    return;
                                }
                            }
                        }
                        _ => client = None,
                    }
                }
                std::thread::sleep(APPROVALS_EVERY);
            }
        });
        Fetcher { stop }
    }
}

/// How often a view asks which calls wait for approval.
pub const APPROVALS_EVERY: Duration = Duration::from_secs(1);

impl Drop for Fetcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
