//! The Monitor's overlay: one instance's live screen in a bordered box over
//! the list. It is a view like `tickloop attach` (same connection code,
//! `launcher_link`'s `send_hellos`, `read_start` and `spawn_link`, and the same renderer,
//! [`crate::render`]); its size is the box's inner size, so resizing the
//! Monitor's terminal resizes the Tick. Closing it is a detach: the Tick
//! goes on.

use crate::cells::{self, at, truncate};
use crate::graphics::{mark_boxes, ImagePlacement};
use crate::launcher_link::{self, LinkNote, Start};
use crate::render::{self, MouseTranslator};
use std::sync::mpsc;
use std::time::Instant;
use termwiz::cell::CellAttributes;
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::input::{InputEvent, MouseEvent};
use termwiz::surface::{Change, Surface};
use termwiz::terminal::TerminalWaker;
use tickloop_proto::attach::{Snapshot, ToView, ViewEvent, ViewHello};

/// Where the box goes on a `cols` x `rows` terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Geometry {
    /// The border's top-left corner.
    pub x: usize,
    pub y: usize,
    /// The inside of the border: the Tick's view.
    pub inner_cols: u16,
    pub inner_rows: u16,
}

impl Geometry {
    /// A box leaving two columns of the list visible left and right, its
    /// title row above and its footer below; on tiny terminals, no margins.
    pub fn for_terminal(cols: u16, rows: u16) -> Geometry {
        let mx: u16 = if cols >= 40 { 2 } else { 0 };
        let (top, bottom): (u16, u16) = if rows >= 10 { (1, 1) } else { (0, 0) };
        let inner_cols = cols.saturating_sub(2 * mx + 2).max(1);
        let inner_rows = rows.saturating_sub(top + bottom + 2).max(1);
        Geometry {
            x: usize::from(mx),
            y: usize::from(top),
            inner_cols,
            inner_rows,
        }
    }

    /// The inner area's top-left cell.
    pub fn inner_origin(&self) -> (usize, usize) {
        (self.x + 1, self.y + 1)
    }
}

/// How an overlay stopped showing live output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// The Tick's session ended; the launcher's reason.
    Ended(String),
    /// The connection failed or was lost.
    Lost(String),
}

/// An open overlay.
pub struct Overlay {
    pub id: String,
    /// The Tick's screen; `None` until the first snapshot.
    pub model: Option<Snapshot>,
    /// The images the Tick drew: a marked box in their cells (the overlay
    /// draws no image).
    pub images: Vec<ImagePlacement>,
    /// Makes the frames, keeping the model drawn between them.
    composer: render::Composer,
    /// Set once the overlay shows why it stopped (then any key closes it).
    pub stopped: Option<Stop>,
    notes: mpsc::Receiver<LinkNote>,
    /// Dropping it hangs up (a detach).
    events: Option<mpsc::Sender<ViewEvent>>,
    pub mouse: MouseTranslator,
    /// A resize to send once the burst is over.
    pub pending_resize: Option<Instant>,
    /// The size the overlay last told the launcher.
    pub size: (u16, u16),
    /// How far back into the Tick's history the overlay shows.
    pub scroller: render::Scroller,
    /// The prefix key's name, for the overlay's title.
    pub prefix_name: String,
    /// The ssh process when the instance is on another machine (set by the
    /// connecting thread; let go of off the drawing thread).
    ssh: std::sync::Arc<std::sync::Mutex<Option<tickloop_client::ssh::SshLink>>>,
}

impl Drop for Overlay {
    fn drop(&mut self) {
        // Waiting for ssh to exit must not hold up the Monitor.
        let link = self.ssh.lock().ok().and_then(|mut l| l.take());
        if let Some(link) = link {
            std::thread::spawn(move || drop(link));
        }
    }
}

impl Overlay {
    /// Starts attaching to the launcher `to` names as a view of `hello`'s
    /// size, on a thread: the overlay shows "connecting" until the snapshot
    /// arrives, and the Monitor stays responsive if the launcher is slow.
    /// `id` is shown; `to.instance` is its id on its machine.
    pub(crate) fn open(
        id: String,
        to: launcher_link::Dial,
        hello: ViewHello,
        waker: TerminalWaker,
        prefix_name: String,
    ) -> Overlay {
        let (note_tx, notes) = mpsc::channel();
        let (event_tx, events) = mpsc::channel();
        let size = (hello.cols, hello.rows);
        let ssh_slot: std::sync::Arc<std::sync::Mutex<Option<tickloop_client::ssh::SshLink>>> =
            Default::default();
        let slot = ssh_slot.clone();
        std::thread::spawn(move || {
            let started = launcher_link::dial(&to).and_then(|(stream, link)| {
                if let (Some(link), Ok(mut slot)) = (link, slot.lock()) {
                    *slot = Some(link);
                }
                let writer = launcher_link::send_hellos(&stream, to.kind, &hello)?;
                launcher_link::read_start(stream, writer)
            });
            let (reader, writer, first) = match started {
                Ok((reader, writer, Start::Snapshot(s))) => {
                    (reader, writer, LinkNote::Frame(ToView::Snapshot(s)))
                }
                Ok((_, _, Start::Ended(reason))) => {
                    let _ = note_tx.send(LinkNote::Frame(ToView::Ended { reason }));
                    let _ = waker.wake();
                    return;
                }
                Err(e) => {
                    let _ = note_tx.send(LinkNote::Lost(e.to_string()));
                    let _ = waker.wake();
                    return;
                }
            };
            if note_tx.send(first).is_err() {
                // Closed while connecting: dropping the stream hangs up.
                return;
            }
            let _ = waker.wake();
            launcher_link::spawn_link(reader, writer, note_tx, waker, events);
        });
        Overlay {
            composer: render::Composer::default(),
            id,
            model: None,
            images: Vec::new(),
            stopped: None,
            notes,
            events: Some(event_tx),
            mouse: MouseTranslator::default(),
            pending_resize: None,
            size,
            scroller: render::Scroller::default(),
            prefix_name,
            ssh: ssh_slot,
        }
    }

    /// An overlay connected to nothing, showing `model` (tests and
    /// snapshots).
    #[cfg(test)]
    pub(crate) fn detached(id: &str, model: Option<Snapshot>, stopped: Option<Stop>) -> Overlay {
        let (_tx, notes) = mpsc::channel();
        let size = model.as_ref().map_or((74, 20), |m| (m.cols, m.rows));
        Overlay {
            composer: render::Composer::default(),
            id: id.to_string(),
            model,
            images: Vec::new(),
            stopped,
            notes,
            events: None,
            mouse: MouseTranslator::default(),
            pending_resize: None,
            size,
            scroller: render::Scroller::default(),
            prefix_name: "ctrl+\\".to_string(),
            ssh: Default::default(),
        }
    }

    /// Takes in what the launcher sent since the last call; whether anything
    /// changed on screen.
    pub fn pump(&mut self) -> bool {
        let mut dirty = false;
        while self.stopped.is_none() {
            let note = match self.notes.try_recv() {
                Ok(note) => note,
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    LinkNote::Lost("the launcher connection ended".into())
                }
            };
            dirty = true;
            match note {
                LinkNote::Frame(ToView::Snapshot(s)) => self.model = Some(s),
                // The overlay lends no terminal: drawn rows are rows.
                LinkNote::Frame(ToView::Rows(rows) | ToView::Drawn { rows, .. }) => {
                    let applied = match self.model.as_mut() {
                        Some(model) => model.apply(rows).map_err(|e| e.to_string()),
                        None => Err("changed rows before a snapshot".into()),
                    };
                    if let Err(e) = applied {
                        self.stop(Stop::Lost(format!(
                            "the launcher broke the attach protocol: {e}"
                        )));
                    }
                }
                // Images are boxes here: their bytes are never asked for.
                LinkNote::Frame(ToView::Images { placements }) => self.images = placements,
                // The Monitor keeps its own title; a bell or clipboard
                // write of a Tick shown small is not passed on.
                LinkNote::Frame(
                    ToView::Resized { .. }
                    | ToView::Bell
                    | ToView::Clipboard { .. }
                    | ToView::Image { .. }
                    // It lends no keys either.
                    | ToView::KeysBack { .. },
                ) => {}
                LinkNote::Frame(ToView::Ended { reason }) => self.stop(Stop::Ended(reason)),
                LinkNote::Lost(why) => self.stop(Stop::Lost(why)),
                LinkNote::Broken(why) => self.stop(Stop::Lost(format!(
                    "the launcher broke the attach protocol: {why}"
                ))),
            }
        }
        dirty
    }

    fn stop(&mut self, why: Stop) {
        self.stopped = Some(why);
        self.pending_resize = None;
        // Hang up: nothing more is sent.
        self.events = None;
    }

    /// Sends an event to the Tick (dropped once stopped).
    /// Scrolls through history when `event` asks to (shift+PageUp/Down,
    /// the wheel); returns whether the event was used up. Any other key
    /// while scrolled back returns to live and is used up; a paste returns
    /// to live and is passed on.
    pub fn scroll(&mut self, event: &InputEvent) -> bool {
        let Some(model) = self.model.as_ref() else {
            return false;
        };
        match self.scroller.on_input(event, model, self.size.1) {
            render::ScrollAction::Pass => false,
            render::ScrollAction::Scroll(offset) => {
                self.send(ViewEvent::Scroll { offset });
                true
            }
            render::ScrollAction::Live => {
                self.send(ViewEvent::Scroll { offset: 0 });
                true
            }
            render::ScrollAction::LiveThenPass => {
                self.send(ViewEvent::Scroll { offset: 0 });
                false
            }
        }
    }

    pub fn send(&mut self, event: ViewEvent) {
        let failed = match &self.events {
            Some(tx) => tx.send(event).is_err(),
            None => false,
        };
        if failed {
            self.stop(Stop::Lost("cannot send to the launcher".into()));
        }
    }

    /// The box changed size: tell the launcher after the debounce.
    pub fn resized(&mut self, size: (u16, u16), at: Instant) {
        if self.stopped.is_none() && size != self.size {
            self.size = size;
            self.pending_resize = Some(at);
        }
    }

    /// Sends the pending resize when its time has come.
    pub fn flush_resize(&mut self, now: Instant) {
        if self.pending_resize.is_some_and(|at| now >= at) {
            self.pending_resize = None;
            let (cols, rows) = self.size;
            self.send(ViewEvent::Resize { cols, rows });
        }
    }

    /// A mouse report of the Monitor's terminal as events for the Tick:
    /// only inside the box's inner area, in the Tick's coordinates.
    pub fn mouse_events(&mut self, event: &MouseEvent, geo: &Geometry) -> Vec<ViewEvent> {
        let Some(model) = &self.model else {
            return Vec::new();
        };
        let (ox, oy) = geo.inner_origin();
        // termwiz's mouse coordinates are one-based.
        let (x, y) = (usize::from(event.x), usize::from(event.y));
        let (Some(x), Some(y)) = (x.checked_sub(1 + ox), y.checked_sub(1 + oy)) else {
            return Vec::new();
        };
        let cols = usize::from(model.cols.min(geo.inner_cols));
        let rows = usize::from(model.rows.min(geo.inner_rows));
        if x >= cols || y >= rows {
            return Vec::new();
        }
        let mut shifted = event.clone();
        // x < cols <= u16::MAX: these fit.
        shifted.x = u16::try_from(x + 1).unwrap_or(u16::MAX);
        shifted.y = u16::try_from(y + 1).unwrap_or(u16::MAX);
        self.mouse.translate(&shifted)
    }
}

/// Draws `overlay` in `geo` over `screen` (the list); returns where the
/// terminal's cursor goes and its shape.
pub fn draw(
    screen: &mut Surface,
    overlay: &mut Overlay,
    geo: &Geometry,
) -> (Option<(usize, usize)>, tickloop_proto::attach::CursorShape) {
    let (w, h) = (
        usize::from(geo.inner_cols) + 2,
        usize::from(geo.inner_rows) + 2,
    );
    let (screen_cols, screen_rows) = screen.dimensions();
    if geo.x + w > screen_cols || geo.y + h > screen_rows {
        // Too small for a box: the list's footer says what is shown.
        return (None, tickloop_proto::attach::CursorShape::Default);
    }
    let (ox, oy) = geo.inner_origin();
    let mut border = CellAttributes::default();
    border.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Aqua as u8));
    // The border, its title on the top edge.
    let title = match &overlay.stopped {
        None => format!(" {} · {} d closes ", overlay.id, overlay.prefix_name),
        Some(_) => format!(" {} · any key closes ", overlay.id),
    };
    let title = truncate(&title, w.saturating_sub(4));
    let top_fill = w.saturating_sub(2).saturating_sub(cells::width(&title) + 1);
    let mut changes = vec![
        at(geo.x, geo.y),
        Change::AllAttributes(border.clone()),
        Change::Text(format!("┌─{title}{}┐", "─".repeat(top_fill))),
    ];
    for row in 1..h.saturating_sub(1) {
        changes.push(at(geo.x, geo.y + row));
        changes.push(Change::Text("│".into()));
        changes.push(at(geo.x + w - 1, geo.y + row));
        changes.push(Change::Text("│".into()));
    }
    if h >= 2 {
        changes.push(at(geo.x, geo.y + h - 1));
        changes.push(Change::Text(format!(
            "└{}┘",
            "─".repeat(w.saturating_sub(2))
        )));
    }
    changes.push(Change::AllAttributes(CellAttributes::default()));
    screen.add_changes(changes);

    let mut cursor = (None, tickloop_proto::attach::CursorShape::Default);
    let inner = match &overlay.model {
        Some(model) => {
            let note = format!("{} d closes", overlay.prefix_name);
            let mut frame =
                overlay
                    .composer
                    .compose(model, geo.inner_cols, geo.inner_rows, &note, false);
            mark_boxes(frame.surface.to_mut(), &overlay.images, model.scroll.offset);
            if overlay.stopped.is_none() {
                cursor = (
                    frame.cursor.map(|(x, y)| (x + ox, y + oy)),
                    frame.cursor_shape,
                );
            }
            frame.surface.into_owned()
        }
        None => {
            let mut s = Surface::new(usize::from(geo.inner_cols), usize::from(geo.inner_rows));
            if overlay.stopped.is_none() {
                s.add_change(Change::Text(truncate(
                    &format!("connecting to {}…", overlay.id),
                    usize::from(geo.inner_cols),
                )));
            }
            s
        }
    };
    screen.draw_from_screen(&inner, ox, oy);

    if let Some(stop) = &overlay.stopped {
        let message = match stop {
            Stop::Ended(reason) if reason.is_empty() => format!("{} ended", overlay.id),
            Stop::Ended(reason) => format!("{} ended: {reason}", overlay.id),
            Stop::Lost(why) => format!("{}: {why}", overlay.id),
        };
        banner(screen, geo, &[&message, "press any key to close"]);
    }
    cursor
}

/// Lines of text centred in the box's inner area, in reverse video, each
/// wrapped to the inner width.
fn banner(screen: &mut Surface, geo: &Geometry, lines: &[&str]) {
    let width = usize::from(geo.inner_cols).saturating_sub(2).max(1);
    let mut wrapped: Vec<String> = Vec::new();
    for line in lines {
        let mut current = String::new();
        for word in line.split(' ') {
            let extra = usize::from(!current.is_empty());
            if !current.is_empty() && cells::width(&current) + extra + cells::width(word) > width {
                wrapped.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(word);
        }
        wrapped.push(current);
    }
    let inner_rows = usize::from(geo.inner_rows);
    wrapped.truncate(inner_rows);
    let (ox, oy) = geo.inner_origin();
    let first = oy + inner_rows.saturating_sub(wrapped.len()) / 2;
    let mut attrs = CellAttributes::default();
    attrs.set_reverse(true);
    let mut changes = Vec::new();
    for (i, line) in wrapped.iter().enumerate() {
        let text = format!(" {:width$} ", truncate(line, width), width = width);
        let text = truncate(&text, usize::from(geo.inner_cols));
        changes.push(at(ox, first + i));
        changes.push(Change::AllAttributes(attrs.clone()));
        changes.push(Change::Text(text));
    }
    changes.push(Change::AllAttributes(CellAttributes::default()));
    screen.add_changes(changes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::attach::{Attrs, Line, Run};

    #[test]
    fn geometry_leaves_the_list_at_the_edges() {
        let g = Geometry::for_terminal(80, 24);
        assert_eq!((g.x, g.y, g.inner_cols, g.inner_rows), (2, 1, 74, 20));
        let g = Geometry::for_terminal(100, 30);
        assert_eq!((g.inner_cols, g.inner_rows), (94, 26));
        let g = Geometry::for_terminal(10, 4);
        assert_eq!((g.x, g.y, g.inner_cols, g.inner_rows), (0, 0, 8, 2));
        let g = Geometry::for_terminal(1, 1);
        assert_eq!((g.inner_cols, g.inner_rows), (1, 1));
    }

    fn overlay_with(model: Option<Snapshot>, stopped: Option<Stop>) -> Overlay {
        let (_tx, notes) = mpsc::channel();
        Overlay {
            composer: render::Composer::default(),
            id: "hosted:counter".into(),
            model,
            images: Vec::new(),
            stopped,
            notes,
            events: None,
            mouse: MouseTranslator::default(),
            pending_resize: None,
            size: (74, 20),
            scroller: render::Scroller::default(),
            prefix_name: "ctrl+\\".to_string(),
            ssh: Default::default(),
        }
    }

    #[test]
    fn an_image_in_the_overlay_is_a_marked_box() {
        let mut overlay = overlay_with(Some(Snapshot::blank(74, 20)), None);
        overlay.images = vec![ImagePlacement {
            index: 3,
            row: 2,
            col: 1,
            rows: 3,
            cols: 24,
            width_px: 240,
            height_px: 60,
            format: tickloop_proto::wire::ImageFormat::Sixel,
            bytes: 5000,
        }];
        let mut screen = Surface::new(80, 24);
        draw(&mut screen, &mut overlay, &Geometry::for_terminal(80, 24));
        let text = screen.screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        // Inside the border (x 3, y 2 on the list's screen).
        assert!(lines[4].starts_with("  │ ┌─────"), "{text}");
        assert!(lines[5].contains("[image 240×60 sixel]"), "{text}");
        assert!(lines[6].starts_with("  │ └─────"), "{text}");
    }

    #[test]
    fn draws_the_tick_inside_a_border_over_the_list() {
        let mut snap = Snapshot::blank(74, 20);
        snap.lines[0] = Line {
            runs: vec![Run {
                text: "Counter 5".into(),
                attrs: Attrs::default(),
            }],
        };
        let mut screen = Surface::new(80, 24);
        screen.add_change(Change::Text("list".into()));
        let geo = Geometry::for_terminal(80, 24);
        let (cursor, _) = draw(&mut screen, &mut overlay_with(Some(snap), None), &geo);
        let text = screen.screen_chars_to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("list"), "{text}");
        assert!(lines[1].starts_with("  ┌─ hosted:counter · ctrl+\\ d closes ─"));
        assert!(lines[2].starts_with("  │Counter 5 "), "{text}");
        assert!(lines[2].ends_with("│  "), "{text}");
        assert!(lines[22].starts_with("  └──"), "{text}");
        assert_eq!(cursor, Some((3, 2)));
    }

    #[test]
    fn a_stopped_overlay_says_why() {
        let mut screen = Surface::new(80, 24);
        let geo = Geometry::for_terminal(80, 24);
        let mut overlay = overlay_with(
            Some(Snapshot::blank(74, 20)),
            Some(Stop::Ended("closed by tickloop close".into())),
        );
        let (cursor, _) = draw(&mut screen, &mut overlay, &geo);
        let text = screen.screen_chars_to_string();
        assert!(
            text.contains("hosted:counter ended: closed by tickloop close"),
            "{text}"
        );
        assert!(text.contains("press any key to close"), "{text}");
        assert_eq!(cursor, None);
    }

    #[test]
    fn tiny_and_huge_terminals_draw_without_panicking() {
        for (cols, rows) in [(0, 0), (1, 1), (2, 3), (3, 2), (5, 5), (39, 9), (400, 120)] {
            let mut screen = Surface::new(usize::from(cols), usize::from(rows));
            let geo = Geometry::for_terminal(cols, rows);
            for stopped in [None, Some(Stop::Lost("gone ".repeat(50)))] {
                let mut o = overlay_with(Some(Snapshot::blank(120, 30)), stopped);
                draw(&mut screen, &mut o, &geo);
            }
            let mut o = overlay_with(None, None);
            draw(&mut screen, &mut o, &geo);
        }
    }

    #[test]
    fn mouse_events_outside_the_box_are_dropped() {
        let geo = Geometry::for_terminal(80, 24);
        let mut o = overlay_with(Some(Snapshot::blank(74, 20)), None);
        let ev = |x, y| MouseEvent {
            x,
            y,
            mouse_buttons: termwiz::input::MouseButtons::LEFT,
            modifiers: termwiz::input::Modifiers::NONE,
        };
        assert!(o.mouse_events(&ev(1, 1), &geo).is_empty());
        match o.mouse_events(&ev(4, 3), &geo).as_slice() {
            [ViewEvent::Mouse { x: 0, y: 0, .. }] => {}
            other => panic!("{other:?}"),
        }
    }
}
