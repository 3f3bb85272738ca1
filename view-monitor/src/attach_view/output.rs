//! The output side of an attach session: frames from the launcher taken
//! into the Tick's screen (snapshots, changed rows, the bell, clipboard
//! writes, the title, the end), drawn onto the user's terminal with the
//! last row's note and the overlays on top, and the terminal's resizes
//! followed (redrawn at once, sent to the launcher debounced).

use super::note::Turn;
use super::session::{Session, Shows};
use super::{AttachError, AttachOutcome, SessionEnd};
use crate::graphics::KeptImage;
use crate::render;
use crate::tty::clamp;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};
use termwiz::surface::Change;
use tickloop_proto::attach::{RowsChanged, ToView, ViewEvent};

/// A burst of resizes is sent as one, this long after the last.
const RESIZE_DEBOUNCE: Duration = Duration::from_millis(60);

impl Session<'_> {
    /// One message from the launcher.
    pub(super) fn on_frame(&mut self, frame: ToView) -> Turn {
        match frame {
            ToView::Snapshot(s) => {
                let last_row = usize::from(self.screen.view.1.saturating_sub(1));
                if s.lines.get(last_row) != self.screen.model.lines.get(last_row) {
                    self.last_row.tick_drew_on_it();
                }
                self.screen.model = s;
                self.images.due = true;
                self.dirty = true;
            }
            ToView::Rows(rows) => {
                let last_row = self.screen.view.1.saturating_sub(1);
                if rows.rows.iter().any(|(row, _)| *row >= last_row) {
                    self.last_row.tick_drew_on_it();
                }
                self.screen
                    .model
                    .apply(rows)
                    .map_err(|e| AttachError::Protocol(e.to_string()))?;
                self.dirty = true;
            }
            ToView::Drawn { rows, unwritten } => self.on_drawn(rows, &unwritten)?,
            ToView::KeysBack { lend, bytes } => return self.on_keys_back(lend, &bytes),
            ToView::Resized { .. } => {}
            ToView::Images { placements } => self.on_placements(placements),
            ToView::Image { index, data } => {
                let image = data.as_ref().and_then(KeptImage::from_wire);
                self.on_image(index, image);
            }
            ToView::Bell => {
                let _ = self.term.flush();
                self.guard.write_raw(b"\x07");
            }
            ToView::Clipboard { selection, text } => {
                if clipboard_allowed() {
                    let _ = self.term.flush();
                    self.guard.write_raw(&osc52(selection, &text));
                }
            }
            ToView::Ended { reason } => {
                return Ok(ControlFlow::Break(SessionEnd::Done(AttachOutcome::Ended {
                    reason,
                })))
            }
        }
        Ok(ControlFlow::Continue(()))
    }

    /// Rows the launcher drew on the lent terminal: what the terminal did
    /// not take written first, then the rows taken into the screen as
    /// drawn (the terminal showed the Tick's screen as it is when it was
    /// lent, with its attributes at their defaults, and the launcher left
    /// them so).
    fn on_drawn(&mut self, rows: RowsChanged, unwritten: &str) -> Result<(), AttachError> {
        if !unwritten.is_empty() {
            let _ = self.term.flush();
            self.guard.write_raw(unwritten.as_bytes());
        }
        if rows
            .rows
            .iter()
            .any(|(row, _)| *row >= self.screen.view.1.saturating_sub(1))
        {
            self.last_row.tick_drew_on_it();
        }
        self.screen
            .model
            .apply(rows)
            .map_err(|e| AttachError::Protocol(e.to_string()))?;
        // The frame the terminal shows now: the Tick's screen, under the
        // note the view kept on the last row when it lent the rest.
        let (lent_note, lent_force) = match &self.lent_note {
            Some(note) => (note.as_str(), true),
            None => (self.last_row.size_note.as_str(), false),
        };
        let screen = &mut self.screen;
        let mut frame = screen.composer.compose(
            &screen.model,
            screen.view.0,
            screen.view.1,
            lent_note,
            lent_force,
        );
        drop(screen.shown.changes_to(&mut frame));
        // What the view shows now besides, if it changed since, is drawn.
        let asking = self
            .overlays
            .asking(&self.prefix, usize::from(screen.view.0));
        let now = self.last_row.note(&asking, self.opts);
        if now != (lent_note, lent_force) || self.shows_the_screen() == Shows::More {
            self.dirty = true;
        }
        Ok(())
    }

    /// Passes the Tick's title on to the view's terminal when it changed.
    pub(super) fn follow_title(&mut self) {
        if self.screen.model.title != self.screen.title {
            self.screen.title.clone_from(&self.screen.model.title);
            let _ = self.term.flush();
            self.guard.write_raw(&osc_title(&self.screen.title));
        }
    }

    /// Draws the Tick's screen, the last row's note and the overlays; ends
    /// the session when the terminal is gone.
    pub(super) fn draw(&mut self) -> ControlFlow<SessionEnd> {
        if self.images.stale(self.screen.model.scroll.offset) {
            // Drawn whole again from a clear screen, images and all.
            self.screen.shown = render::Shown::new(
                usize::from(self.screen.view.0),
                usize::from(self.screen.view.1),
            );
            let _ = self.term.render(&[Change::ClearScreen(Default::default())]);
            self.images.due = true;
        }
        let screen = &mut self.screen;
        if screen.scroller.mouse_mode(&screen.model) != screen.mouse_mode {
            screen.mouse_mode = screen.scroller.mouse_mode(&screen.model);
            let _ = self.term.flush();
            self.guard.set_mouse(screen.mouse_mode);
        }
        let asking = self
            .overlays
            .asking(&self.prefix, usize::from(screen.view.0));
        let (note, force) = self.last_row.note(&asking, self.opts);
        let mut frame =
            screen
                .composer
                .compose(&screen.model, screen.view.0, screen.view.1, note, force);
        let offset = screen.model.scroll.offset;
        self.images.mark(&mut frame, offset);
        self.overlays.draw(&mut frame, &self.prefix);
        let covered = self.overlays.activity_open();
        let changes = screen.shown.changes_to(&mut frame);
        if self.term.render(&changes).is_err() || self.term.flush().is_err() {
            // The terminal is gone.
            return ControlFlow::Break(SessionEnd::Done(AttachOutcome::Hangup));
        }
        let images = self.images.after_draw(covered, offset, screen.view);
        if !images.is_empty() {
            self.guard.write_raw(&images);
        }
        ControlFlow::Continue(())
    }

    /// The user's terminal is now `cols` x `rows`: drawn again from a clear
    /// screen at once, sent to the launcher after [`RESIZE_DEBOUNCE`].
    pub(super) fn on_resized(&mut self, cols: usize, rows: usize) {
        self.screen.view = (clamp(cols), clamp(rows));
        self.screen.shown = render::Shown::new(cols, rows);
        let _ = self.term.render(&[Change::ClearScreen(Default::default())]);
        self.screen.pending_resize = Some(Instant::now() + RESIZE_DEBOUNCE);
        self.images.due = true;
        self.dirty = true;
    }

    /// Sends the view's size once the burst of resizes is over.
    pub(super) fn send_due_resize(&mut self) {
        if self
            .screen
            .pending_resize
            .is_some_and(|at| Instant::now() >= at)
        {
            self.screen.pending_resize = None;
            self.link.queue(&ViewEvent::Resize {
                cols: self.screen.view.0,
                rows: self.screen.view.1,
            });
        }
    }
}

/// Whether clipboard writes of the Tick reach the view's terminal (OSC 52):
/// `TICKLOOP_CLIPBOARD` (`off`/`on`), else `clipboard` in the config file,
/// else yes (as tmux's `set-clipboard external`).
fn clipboard_allowed() -> bool {
    match std::env::var("TICKLOOP_CLIPBOARD").as_deref() {
        Ok("off" | "0" | "false" | "no") => false,
        Ok("on" | "1" | "true" | "yes") => true,
        _ => tickloop_client::config::load()
            .ok()
            .and_then(|c| c.clipboard)
            .unwrap_or(true),
    }
}

/// OSC 52: put `text` on the terminal's clipboard (or primary selection).
fn osc52(selection: bool, text: &str) -> Vec<u8> {
    use base64::Engine;
    let target = if selection { "p" } else { "c" };
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\x1b]52;{target};{encoded}\x07").into_bytes()
}

/// OSC 2: the window title, escaped as everything a program sets is
/// shown ([`tickloop_proto::escape`]): no control character ends the
/// sequence early, and no bidi control turns the title around.
fn osc_title(title: &str) -> Vec<u8> {
    let shown = tickloop_proto::escape::escaped(title);
    format!("\x1b]2;{shown}\x07").into_bytes()
}
