//! A view's place in the Tick's history: shift+PageUp/PageDown and the
//! mouse wheel scroll it, any other key returns to the live screen, and the
//! marker the view shows at its top right while scrolled back.

use termwiz::input::{InputEvent, KeyCode, KeyEvent, Modifiers, MouseButtons};
use tickloop_proto::attach::{self, Snapshot};

/// Lines one turn of the mouse wheel scrolls through history.
pub const WHEEL_LINES: u32 = 3;

/// What a view does with an input event, given its place in history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScrollAction {
    /// Not about history: send the event to the Tick as usual.
    Pass,
    /// Show the screen this many lines back (send `ViewEvent::Scroll`);
    /// the event is used up.
    Scroll(u32),
    /// Back to the live screen (send `ViewEvent::Scroll { offset: 0 }`);
    /// the key is used up, as tmux's copy mode uses the `q` that leaves
    /// it: it does not reach the program (a `q`, an `r` would act there).
    Live,
    /// Back to the live screen, then send the event to the Tick: a paste
    /// while scrolled back is not lost.
    LiveThenPass,
}

/// A view's position in the Tick's history: shift+PageUp/PageDown page
/// through it (on the main screen both are the view's, at the live screen
/// too, as in xterm; on the alternate screen, which has no history, they go
/// to the Tick), the mouse wheel scrolls it when the Tick does not take the
/// mouse (or while already scrolled back), any other key returns to live
/// (and goes no further), a paste returns to live and goes to the Tick.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Scroller {
    pub offset: u32,
}

impl Scroller {
    /// Whether the view is showing history (not the live screen).
    pub fn scrolled(&self) -> bool {
        self.offset > 0
    }

    /// The mouse tracking the view's terminal needs: the Tick's, or clicks
    /// (for the wheel) while scrolled back.
    pub fn mouse_mode(&self, model: &Snapshot) -> attach::MouseTracking {
        if self.scrolled() && model.modes.mouse == attach::MouseTracking::Off {
            attach::MouseTracking::Click
        } else {
            model.modes.mouse
        }
    }

    /// Decide what `event` does; `page` is how many rows a page is.
    pub fn on_input(&mut self, event: &InputEvent, model: &Snapshot, page: u16) -> ScrollAction {
        let history = model.scroll.history;
        let page = u32::from(page.max(2) - 1);
        let current = self.offset;
        let scrolled = self.scrolled();
        let target = match event {
            InputEvent::Key(KeyEvent {
                key: KeyCode::PageUp,
                modifiers,
            }) if modifiers.contains(Modifiers::SHIFT) && !model.alt_screen => {
                Some(current.saturating_add(page))
            }
            // At the live screen too, as xterm keeps it: passed on, a
            // program that does not know the key (bash) would print the
            // end of its sequence (`2~`).
            InputEvent::Key(KeyEvent {
                key: KeyCode::PageDown,
                modifiers,
            }) if modifiers.contains(Modifiers::SHIFT) && (scrolled || !model.alt_screen) => {
                Some(current.saturating_sub(page))
            }
            InputEvent::Mouse(m)
                if m.mouse_buttons.contains(MouseButtons::VERT_WHEEL)
                    && !model.alt_screen
                    && (scrolled || model.modes.mouse == attach::MouseTracking::Off) =>
            {
                if m.mouse_buttons.contains(MouseButtons::WHEEL_POSITIVE) {
                    Some(current.saturating_add(WHEEL_LINES))
                } else {
                    Some(current.saturating_sub(WHEEL_LINES))
                }
            }
            // While scrolled back, the mouse belongs to the history view.
            InputEvent::Mouse(_) if scrolled => Some(current),
            _ => None,
        };
        if let Some(offset) = target {
            self.offset = offset.min(history);
            return ScrollAction::Scroll(self.offset);
        }
        match event {
            InputEvent::Key(_) if scrolled => {
                self.offset = 0;
                ScrollAction::Live
            }
            InputEvent::Paste(_) if scrolled => {
                self.offset = 0;
                ScrollAction::LiveThenPass
            }
            _ => ScrollAction::Pass,
        }
    }
}

/// The marker a view scrolled back into history shows at its top right,
/// as tmux's copy mode does: `[back/held]`.
pub fn scroll_marker(scroll: attach::Scrollback) -> Option<String> {
    (scroll.offset > 0).then(|| format!("[{}/{}]", scroll.offset, scroll.history))
}
