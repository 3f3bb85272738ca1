//! The input side of an attach session: each input from the user's
//! terminal goes to one place. The prefix key and the key after it
//! ([`crate::prefix`]) act on the view; while the activity overlay is open,
//! keys go to it (y/n/v to the approval prompt) and mouse and paste go
//! nowhere; a resize goes to [`super::output`]; everything else scrolls the
//! view or reaches the Tick (mouse only over the part showing the Tick).

use super::note::Turn;
use super::screen::FLASH;
use super::session::Session;
use super::{AttachOutcome, SessionEnd};
use crate::activity::PanelKey;
use crate::prefix::PrefixAction;
use crate::render;
use std::ops::ControlFlow;
use std::time::Duration;
use termwiz::input::{InputEvent, KeyEvent};
use tickloop_proto::attach::ViewEvent;

impl Session<'_> {
    /// One input (`None`: a deadline passed).
    pub(super) fn on_input(&mut self, input: Option<InputEvent>) -> Turn {
        let overlay_open = self.overlays.activity_open();
        match input {
            None | Some(InputEvent::Wake) => {}
            Some(InputEvent::Key(key))
                if self.prefix.pending() || self.prefix.key.matches(&key) =>
            {
                return Ok(self.on_prefix_key(&key))
            }
            Some(InputEvent::Key(key)) if self.overlays.prompts_for(&key) => {
                self.overlays.on_prompt_key(&key);
                self.dirty = true;
            }
            Some(InputEvent::Key(key)) if overlay_open => {
                match self.overlays.on_panel_key(&key) {
                    PanelKey::Consumed => {}
                    PanelKey::Close => self.overlays.close_activity(),
                    PanelKey::Monitor => return Ok(ControlFlow::Break(SessionEnd::Monitor)),
                }
                self.dirty = true;
            }
            // Mouse and paste stay out of the Tick while the overlay is up.
            Some(InputEvent::Mouse(_) | InputEvent::Paste(_)) if overlay_open => {}
            Some(InputEvent::Resized { cols, rows }) => self.on_resized(cols, rows),
            Some(event) => return self.pass_to_tick(&event),
        }
        Ok(ControlFlow::Continue(()))
    }

    /// The prefix key, or the key after it; the last row says what it did.
    fn on_prefix_key(&mut self, key: &KeyEvent) -> ControlFlow<SessionEnd> {
        let name = self.prefix.key.name();
        let (text, lasts): (Option<String>, Duration) = match self.prefix.on_key(key) {
            PrefixAction::Detach => {
                return ControlFlow::Break(SessionEnd::Done(AttachOutcome::Detached))
            }
            PrefixAction::Monitor if self.overlays.activity_open() => {
                self.overlays.close_activity();
                (None, FLASH)
            }
            PrefixAction::Monitor => {
                self.overlays.open_activity();
                (None, FLASH)
            }
            PrefixAction::SendPrefix if self.overlays.activity_open() => (None, FLASH),
            PrefixAction::SendPrefix => {
                self.link.queue(&self.prefix.key.as_view_key());
                (None, FLASH)
            }
            PrefixAction::Started => (
                Some(format!(
                    "{name} … d detach · {name} send it · m activity · ? keys"
                )),
                Duration::from_secs(3600),
            ),
            PrefixAction::Help => (Some(self.prefix.help()), FLASH * 2),
            PrefixAction::Unknown => (
                Some(format!(
                    "that key means nothing after {name}; {name} ? lists the keys"
                )),
                FLASH,
            ),
            PrefixAction::Pass => (None, FLASH),
        };
        self.last_row.show(text, lasts);
        self.dirty = true;
        ControlFlow::Continue(())
    }

    /// An input for the Tick: scrolling the view back (or back to live),
    /// else keys, paste and mouse sent to the launcher.
    fn pass_to_tick(&mut self, event: &InputEvent) -> Turn {
        let screen = &mut self.screen;
        match screen
            .scroller
            .on_input(event, &screen.model, screen.view.1)
        {
            render::ScrollAction::Pass => {}
            render::ScrollAction::Scroll(offset) => {
                self.link.queue(&ViewEvent::Scroll { offset });
                self.dirty = true;
                return Ok(ControlFlow::Continue(()));
            }
            render::ScrollAction::Live => {
                self.link.queue(&ViewEvent::Scroll { offset: 0 });
                self.dirty = true;
                return Ok(ControlFlow::Continue(()));
            }
            render::ScrollAction::LiveThenPass => {
                self.link.queue(&ViewEvent::Scroll { offset: 0 });
                self.dirty = true;
            }
        }
        // Typing ends the note of the moment (the keys after attaching or
        // after `?`, how a decision went), as a key ends tmux's message:
        // the person sees the row they type on.
        if matches!(event, InputEvent::Key(_) | InputEvent::Paste(_))
            && self.last_row.flash.is_some()
        {
            self.last_row.show(None, FLASH);
            self.dirty = true;
        }
        for ev in render::input_events(event, &mut self.mouse) {
            if let ViewEvent::Mouse { x, y, .. } = ev {
                // Only the part of the view that shows the Tick.
                let screen = &self.screen;
                if x >= screen.model.cols.min(screen.view.0)
                    || y >= screen.model.rows.min(screen.view.1)
                {
                    continue;
                }
            }
            self.link.queue(&ev);
        }
        Ok(ControlFlow::Continue(()))
    }
}
