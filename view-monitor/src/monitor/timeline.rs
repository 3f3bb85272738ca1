//! The Monitor's "what agents did" (`w`): one full-screen timeline of
//! agents' actions on every instance of every machine the Monitor shows
//! (running, ended, and forgotten ones whose record is kept), newest last,
//! each line naming its instance and who acted, in the words of `tickloop
//! activity` ([`crate::activity::timeline_text`]'s parts). It follows as
//! agents act while the newest line is selected; Enter shows an entry
//! whole; Esc, `q` or `w` goes back to the list.
//!
//! tickhost merges the records (`timeline`); a thread per machine asks it
//! every second for what came after ([`Fetcher`]), and [`Timeline`] keeps
//! the newest [`KEPT`] entries. Drawing is a pure function of it.

use super::{Event, Monitor, Source};
use crate::activity::{clock, entry_client, entry_summary};
use crate::cells::{at, draw_box, truncate, width};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::input::{KeyCode, KeyEvent, Modifiers};
use termwiz::surface::{Change, Surface};
use tickloop_proto::wire::{ClientReply, ClientRequest, TimelineCursor, TimelineEntry};
use time::UtcOffset;

/// Entries kept at most (the oldest go first).
pub const KEPT: usize = 1000;
/// How often each machine is asked for what came next.
const FETCH_EVERY: Duration = Duration::from_secs(1);

/// What a machine's fetcher heard.
pub(super) struct Fetched {
    source: usize,
    got: Result<Vec<TimelineEntry>, String>,
}

/// The timeline shown.
pub(super) struct Timeline {
    /// Oldest first, their ids as the Monitor shows them.
    entries: Vec<TimelineEntry>,
    /// Index into `entries`; `None`: the newest, followed.
    selected: Option<usize>,
    /// Enter: the selected entry whole.
    opened: bool,
    /// Why each machine could not be asked, when it could not.
    problems: Vec<Option<String>>,
    /// A machine answered at least once.
    answered: bool,
    offset: UtcOffset,
    _fetchers: Vec<Fetcher>,
}

/// What a key did to the timeline.
pub(super) enum TimelineKey {
    Consumed,
    Close,
}

impl Timeline {
    fn update(&mut self, fetched: Fetched) {
        match fetched.got {
            Ok(new) => {
                self.answered = true;
                if let Some(slot) = self.problems.get_mut(fetched.source) {
                    *slot = None;
                }
                for entry in new {
                    // Entries of several machines, each oldest first: in
                    // place by time (RFC 3339 UTC, to the millisecond).
                    let at = self
                        .entries
                        .partition_point(|e| e.entry.at <= entry.entry.at);
                    self.entries.insert(at, entry);
                }
                let over = self.entries.len().saturating_sub(KEPT);
                self.entries.drain(..over);
                self.selected = self.selected.map(|s| s.saturating_sub(over));
            }
            Err(why) => {
                if let Some(slot) = self.problems.get_mut(fetched.source) {
                    *slot = Some(why);
                }
            }
        }
    }

    /// The selected entry's index (the newest while following).
    fn selected(&self) -> usize {
        self.selected
            .unwrap_or(self.entries.len().saturating_sub(1))
            .min(self.entries.len().saturating_sub(1))
    }

    fn on_key(&mut self, key: &KeyEvent) -> TimelineKey {
        let plain = key.modifiers == Modifiers::NONE || key.modifiers == Modifiers::SHIFT;
        let last = self.entries.len().saturating_sub(1);
        let now = self.selected();
        let to = match key.key {
            KeyCode::Escape if self.opened => {
                self.opened = false;
                return TimelineKey::Consumed;
            }
            KeyCode::Escape => return TimelineKey::Close,
            KeyCode::Char('q' | 'w') if plain && !self.opened => return TimelineKey::Close,
            KeyCode::Enter => {
                self.opened = !self.opened && !self.entries.is_empty();
                return TimelineKey::Consumed;
            }
            KeyCode::UpArrow | KeyCode::Char('k') => now.saturating_sub(1),
            KeyCode::DownArrow | KeyCode::Char('j') => now + 1,
            KeyCode::PageUp => now.saturating_sub(10),
            KeyCode::PageDown => now + 10,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last,
            _ => return TimelineKey::Consumed,
        };
        // At the newest, it follows again.
        self.selected = (to < last).then_some(to);
        TimelineKey::Consumed
    }
}

impl Monitor {
    /// `w`: the timeline over everything, fetched from every machine.
    pub(super) fn open_timeline(&mut self) {
        let mut fetchers = Vec::new();
        for (index, source) in self.sources.iter().enumerate() {
            let (tx, waker) = (self.events_tx.clone(), self.waker.clone());
            fetchers.push(Fetcher::start(source.clone(), move |got| {
                let sent = tx
                    .send(Event::Timeline(Fetched { source: index, got }))
                    .is_ok();
                let _ = waker.wake();
                sent
            }));
        }
        self.timeline = Some(Timeline {
            entries: Vec::new(),
            selected: None,
            opened: false,
            problems: vec![None; self.sources.len()],
            answered: false,
            offset: crate::activity::local_offset(),
            _fetchers: fetchers,
        });
    }

    /// What the timeline's fetchers heard.
    pub(super) fn timeline_fetched(&mut self, fetched: Fetched) -> bool {
        match self.timeline.as_mut() {
            Some(timeline) => {
                timeline.update(fetched);
                true
            }
            None => false,
        }
    }

    /// A key while the timeline is shown; whether it took it.
    pub(super) fn timeline_key(&mut self, key: &KeyEvent) -> bool {
        let Some(timeline) = self.timeline.as_mut() else {
            return false;
        };
        if let TimelineKey::Close = timeline.on_key(key) {
            self.timeline = None;
        }
        true
    }

    /// Paints the timeline over the whole screen, when it is shown.
    pub(super) fn draw_timeline(&self, screen: &mut Surface) -> bool {
        match &self.timeline {
            Some(timeline) => {
                draw(screen, timeline);
                true
            }
            None => false,
        }
    }
}

/// Paints `timeline` over all of `screen`: a box titled "what agents
/// did", the entries (the selected one in reverse video, the outcome
/// coloured), or the selected one whole, and the keys.
fn draw(screen: &mut Surface, timeline: &Timeline) {
    let (cols, rows) = screen.dimensions();
    screen.add_change(Change::ClearScreen(ColorAttribute::Default));
    if cols < 20 || rows < 5 {
        screen.add_changes(vec![
            at(0, 0),
            Change::Text(truncate("what agents did: too small", cols)),
        ]);
        return;
    }
    draw_box(
        screen,
        0,
        " what agents did · every instance ",
        AnsiColor::Aqua,
    );
    let text_width = cols.saturating_sub(4);
    let body_rows = rows.saturating_sub(3);
    let mut changes = Vec::new();
    let mut dimmed = CellAttributes::default();
    dimmed.set_intensity(Intensity::Half);
    let help = if timeline.opened {
        "Esc or Enter: back to the timeline"
    } else {
        "↑↓ select · Enter whole · End follows the newest · Esc, q or w: back to the list"
    };
    line(&mut changes, rows - 2, help, dimmed.clone(), text_width);
    let problems: Vec<&String> = timeline.problems.iter().flatten().collect();
    let body_rows = if problems.is_empty() {
        body_rows
    } else {
        let mut red = CellAttributes::default();
        red.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Red as u8));
        let said: Vec<&str> = problems.iter().map(|p| p.as_str()).collect();
        line(&mut changes, rows - 3, &said.join(" · "), red, text_width);
        body_rows.saturating_sub(1)
    };
    if timeline.entries.is_empty() {
        let text = if timeline.answered {
            "nothing yet: no agent has done anything with an instance (kept records included)"
        } else {
            "asking tickhost…"
        };
        line(&mut changes, 1, text, dimmed, text_width);
        screen.add_changes(changes);
        return;
    }
    let selected = timeline.selected();
    if timeline.opened {
        let entry = &timeline.entries[selected];
        let mut lines = vec![format!(
            "instance {}",
            tickloop_proto::escape::escaped(&entry.instance)
        )];
        lines.extend(crate::activity::details(&entry.entry, timeline.offset));
        for (i, text) in lines.iter().take(body_rows).enumerate() {
            line(
                &mut changes,
                1 + i,
                text,
                CellAttributes::default(),
                text_width,
            );
        }
        screen.add_changes(changes);
        return;
    }
    // The selected row in sight, the newest at the bottom.
    let first = (selected + 1).saturating_sub(body_rows);
    for (row, (i, entry)) in timeline
        .entries
        .iter()
        .enumerate()
        .skip(first)
        .take(body_rows)
        .enumerate()
    {
        entry_row(
            &mut changes,
            1 + row,
            entry,
            i == selected,
            timeline.offset,
            text_width,
        );
    }
    screen.add_changes(changes);
}

/// `text` cut to `width` on `row`, in `attrs`.
fn line(changes: &mut Vec<Change>, row: usize, text: &str, attrs: CellAttributes, width: usize) {
    changes.push(at(2, row));
    changes.push(Change::AllAttributes(attrs));
    changes.push(Change::Text(truncate(text, width)));
    changes.push(Change::AllAttributes(CellAttributes::default()));
}

/// One entry on `row`: time, instance, who, what; the outcome after the
/// arrow in its tone's colour; the selected one in reverse video.
fn entry_row(
    changes: &mut Vec<Change>,
    row: usize,
    entry: &TimelineEntry,
    selected: bool,
    offset: UtcOffset,
    text_width: usize,
) {
    let prefix = format!(
        "{} {} {} ",
        clock(&entry.entry.at, offset),
        tickloop_proto::escape::escaped(&entry.instance),
        entry_client(&entry.entry)
    );
    let prefix = truncate(&prefix, text_width);
    let room = text_width.saturating_sub(width(&prefix));
    let (summary, tone) = entry_summary(&entry.entry, room.saturating_sub(24).max(8));
    let summary = truncate(&summary, room);
    let mut attrs = CellAttributes::default();
    attrs.set_reverse(selected);
    changes.push(at(2, row));
    changes.push(Change::AllAttributes(attrs.clone()));
    changes.push(Change::Text(prefix.clone()));
    match (tone, summary.rfind("→ ")) {
        (Some(tone), Some(arrow)) => {
            changes.push(Change::Text(summary[..arrow].to_string()));
            let mut coloured = attrs.clone();
            coloured.set_foreground(crate::activity::tone_color(tone));
            changes.push(Change::AllAttributes(coloured));
            changes.push(Change::Text(summary[arrow..].to_string()));
            changes.push(Change::AllAttributes(attrs));
        }
        _ => changes.push(Change::Text(summary.clone())),
    }
    if selected {
        let used = width(&prefix) + width(&summary);
        changes.push(Change::Text(" ".repeat(text_width.saturating_sub(used))));
    }
    changes.push(Change::AllAttributes(CellAttributes::default()));
}

/// A thread asking one machine's tickhost for the timeline: the newest
/// [`KEPT`] entries first, then every second what came after; it stops
/// when dropped.
struct Fetcher {
    stop: Arc<AtomicBool>,
}

impl Fetcher {
    fn start(
        source: Source,
        deliver: impl Fn(Result<Vec<TimelineEntry>, String>) -> bool + Send + 'static,
    ) -> Fetcher {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::spawn(move || {
            let mut client = None;
            let mut after: Option<TimelineCursor> = None;
            while !stopped.load(Ordering::Relaxed) {
                if client.is_none() {
                    client = source.endpoint.connect_running().ok();
                }
                let got = match client.as_mut() {
                    Some(c) => ask(c, &mut after),
                    None => Err("tickhost is not running".to_string()),
                };
                if got.is_err() {
                    client = None;
                }
                let got = got.map(|entries| {
                    entries
                        .into_iter()
                        .map(|mut e| {
                            e.instance = source.wrap(&e.instance);
                            e
                        })
                        .collect()
                });
                if stopped.load(Ordering::Relaxed) || !deliver(got) {
                    return;
                }
                std::thread::sleep(FETCH_EVERY);
            }
        });
        Fetcher { stop }
    }
}

/// One `timeline` request after `after`, which moves on.
fn ask(
    client: &mut tickloop_client::Client,
    after: &mut Option<TimelineCursor>,
) -> Result<Vec<TimelineEntry>, String> {
    let request = ClientRequest::Timeline {
        since: None,
        agent: None,
        after: after.clone(),
        limit: Some(KEPT as u64),
    };
    match client.request(request) {
        Ok(ClientReply::Ok(value)) => {
            let reply: tickloop_proto::wire::TimelineReply = serde_json::from_value(value)
                .map_err(|e| format!("tickhost sent an unreadable timeline: {e}"))?;
            *after = Some(reply.next);
            Ok(reply.entries)
        }
        Ok(ClientReply::Error(e)) => Err(e.message),
        Ok(other) => Err(format!("unexpected answer: {other:?}")),
        Err(e) => Err(format!("cannot reach tickhost: {e}")),
    }
}

impl Drop for Fetcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(instance: &str, at: &str, command: &str, status: i32) -> TimelineEntry {
        serde_json::from_value(json!({
            "instance": instance,
            "entry": {"n": 1, "at": at, "type": "request", "client": {"agent_cli": "claude-code"},
                "method": "run", "args": command, "outcome": "ok", "duration_ms": 4,
                "terminal": {"kind": "exited", "status": status}}
        }))
        .expect("an entry")
    }

    fn shown(timeline: &Timeline, cols: usize, rows: usize) -> String {
        let mut screen = Surface::new(cols, rows);
        draw(&mut screen, timeline);
        screen.screen_chars_to_string()
    }

    fn timeline() -> Timeline {
        Timeline {
            entries: Vec::new(),
            selected: None,
            opened: false,
            problems: vec![None, None],
            answered: false,
            offset: UtcOffset::UTC,
            _fetchers: Vec::new(),
        }
    }

    /// Two machines' entries land in time order, newest last, each naming
    /// its instance, who acted, the command and how it ended.
    #[test]
    fn entries_of_several_machines_are_merged_in_time_order() {
        let mut t = timeline();
        t.update(Fetched {
            source: 0,
            got: Ok(vec![
                entry("shell:a", "2026-12-02T07:00:01.000Z", "make", 0),
                entry("shell:a", "2026-12-02T07:00:03.000Z", "make test", 2),
            ]),
        });
        t.update(Fetched {
            source: 1,
            got: Ok(vec![entry(
                "box:shell:b",
                "2026-12-02T07:00:02.000Z",
                "ls",
                0,
            )]),
        });
        let said = shown(&t, 100, 10);
        let rows: Vec<&str> = said.lines().collect();
        assert!(rows[0].contains("what agents did"), "{said}");
        assert!(
            rows[1].contains("07:00:01 shell:a Claude Code (shell) run `make` → exited 0"),
            "{said}"
        );
        assert!(
            rows[2].contains("07:00:02 box:shell:b Claude Code (shell) run `ls` → exited 0"),
            "{said}"
        );
        assert!(
            rows[3].contains("07:00:03 shell:a Claude Code (shell) run `make test` → exited 2"),
            "{said}"
        );
        // Up selects the one before; Enter shows it whole; End follows again.
        let key = |k| KeyEvent {
            key: k,
            modifiers: Modifiers::NONE,
        };
        t.on_key(&key(KeyCode::UpArrow));
        assert_eq!(t.selected(), 1);
        t.on_key(&key(KeyCode::Enter));
        let whole = shown(&t, 100, 12);
        assert!(whole.contains("instance box:shell:b"), "{whole}");
        assert!(whole.contains("outcome exited 0"), "{whole}");
        t.on_key(&key(KeyCode::Escape));
        t.on_key(&key(KeyCode::End));
        assert_eq!(t.selected, None);
        assert!(matches!(
            t.on_key(&key(KeyCode::Char('w'))),
            TimelineKey::Close
        ));
    }

    #[test]
    fn an_empty_timeline_and_a_machine_that_cannot_be_asked_say_so() {
        let mut t = timeline();
        assert!(shown(&t, 80, 10).contains("asking tickhost"));
        t.update(Fetched {
            source: 0,
            got: Ok(Vec::new()),
        });
        t.update(Fetched {
            source: 1,
            got: Err("cannot reach tickhost: gone".into()),
        });
        let said = shown(&t, 100, 10);
        assert!(
            said.contains("nothing yet: no agent has done anything"),
            "{said}"
        );
        assert!(said.contains("cannot reach tickhost: gone"), "{said}");
    }
}
