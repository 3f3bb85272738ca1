//! What a key does in the Monitor: a call waiting for approval takes y, n
//! and v first, then the help, what agents did, the activity, the overlay (every key to the
//! Tick but the prefix key; an agent's read-only Monitor types nothing),
//! the filter being typed, or the list's keys.

use super::help;
use super::overlay::Geometry;
use super::{table, Flow, Monitor};
use crate::prefix::PrefixAction;
use crate::render;
use termwiz::input::{InputEvent, KeyCode, KeyEvent, Modifiers};

impl Monitor {
    /// One input: a call waiting for approval takes y, n and v first,
    /// wherever the person is; then the activity, the overlay, or the list
    /// (a close to confirm, the filter being typed, or the list's keys).
    pub(super) fn input(&mut self, event: InputEvent) -> Flow {
        if let InputEvent::Key(key) = &event {
            if self.approval_key(key) {
                return Flow::Go;
            }
            if self.help.take().is_some() || self.timeline_key(key) {
                return Flow::Go;
            }
        }
        if let Some((view, _)) = self.activity.as_mut() {
            if let InputEvent::Key(key) = &event {
                match view.on_key(key) {
                    crate::activity::PanelKey::Consumed => {}
                    // Tab leads to the Monitor list, which is here.
                    crate::activity::PanelKey::Close | crate::activity::PanelKey::Monitor => {
                        self.activity = None
                    }
                }
            }
            return Flow::Go;
        }
        if self.overlay.is_some() {
            self.overlay_input(event);
            return Flow::Go;
        }
        let InputEvent::Key(KeyEvent { key, modifiers }) = event else {
            return Flow::Go;
        };
        self.message = None;
        let ctrl = modifiers.contains(Modifiers::CTRL);
        if let Some((id, ended)) = self.confirm.take() {
            if matches!(key, KeyCode::Char('y') | KeyCode::Char('Y')) {
                self.close_instance(id, ended);
            } else {
                self.message = Some(format!("{id} left as it is"));
            }
            return Flow::Go;
        }
        if self.filter_editing {
            return self.filter_key(key, ctrl);
        }
        self.list_key(key, ctrl)
    }

    /// y approves the first waiting call, n refuses it, v shows it whole;
    /// whether `key` was one of them (and a call waits).
    fn approval_key(&mut self, key: &KeyEvent) -> bool {
        let Some(held) = self.waiting.first().cloned() else {
            return false;
        };
        let plain = key.modifiers == termwiz::input::Modifiers::NONE
            || key.modifiers == termwiz::input::Modifiers::SHIFT;
        match key.key {
            KeyCode::Char('y' | 'Y') if plain => self.decide(held, true),
            KeyCode::Char('n' | 'N') if plain => self.decide(held, false),
            KeyCode::Char('v' | 'V') if plain => {
                self.prompt_step = self.prompt_step.wrapping_add(1)
            }
            _ => return false,
        }
        true
    }

    /// An input while the overlay is open: every key goes to the Tick but
    /// the prefix key; once the Tick ended, any key closes the overlay.
    fn overlay_input(&mut self, event: InputEvent) {
        let Some(overlay) = self.overlay.as_mut() else {
            return;
        };
        if overlay.stopped.is_some() {
            if matches!(event, InputEvent::Key(_)) {
                self.close_overlay(None);
            }
            return;
        }
        if matches!(event, InputEvent::Key(_)) {
            self.message = None;
        }
        match event {
            InputEvent::Key(key) if self.prefix.pending() || self.prefix.key.matches(&key) => {
                match self.prefix.on_key(&key) {
                    PrefixAction::Detach | PrefixAction::Monitor => {
                        let id = overlay.id.clone();
                        self.close_overlay(Some(format!("detached from {id}; it goes on")));
                    }
                    PrefixAction::SendPrefix => overlay.send(self.prefix.key.as_view_key()),
                    PrefixAction::Help => {
                        let keys = help::overlay_keys(&self.prefix.key.name());
                        self.help = Some(("keys of the overlay", keys));
                    }
                    PrefixAction::Started | PrefixAction::Unknown | PrefixAction::Pass => {}
                }
            }
            other if overlay.scroll(&other) => {}
            // Nothing typed reaches the Tick from an agent's Monitor (nor
            // would the launcher take it).
            InputEvent::Key(_) | InputEvent::Paste(_) if self.read_only.is_some() => {
                let what = format!("type into {}", overlay.id);
                self.refused(&what);
            }
            InputEvent::Mouse(_) if self.read_only.is_some() => {}
            InputEvent::Mouse(m) => {
                let geo = Geometry::for_terminal(self.size.0, self.size.1);
                for ev in overlay.mouse_events(&m, &geo) {
                    overlay.send(ev);
                }
            }
            other => {
                for ev in render::input_events(&other, &mut overlay.mouse) {
                    overlay.send(ev);
                }
            }
        }
    }

    /// A key while the filter is typed (after `/`).
    fn filter_key(&mut self, key: KeyCode, ctrl: bool) -> Flow {
        match key {
            KeyCode::Char('c') if ctrl => return Flow::Quit,
            KeyCode::Escape => {
                self.filter.clear();
                self.filter_editing = false;
            }
            KeyCode::Enter | KeyCode::Char('\r') | KeyCode::Char('\n') => {
                self.filter_editing = false
            }
            KeyCode::Backspace | KeyCode::Char('\x7f') | KeyCode::Char('\x08') => {
                self.filter.pop();
            }
            KeyCode::Char(c) if !ctrl && !c.is_control() => self.filter.push(c),
            KeyCode::UpArrow | KeyCode::ApplicationUpArrow => {
                self.select(self.selected.saturating_sub(1))
            }
            KeyCode::DownArrow | KeyCode::ApplicationDownArrow => self.select(self.selected + 1),
            _ => {}
        }
        self.refilter();
        Flow::Go
    }

    /// A key in the list.
    fn list_key(&mut self, key: KeyCode, ctrl: bool) -> Flow {
        let page =
            table::body_rows(usize::from(self.size.1), self.preview_on, self.rows.len()).max(1);
        match key {
            KeyCode::Char('q') if !ctrl => return Flow::Quit,
            KeyCode::Char('c') if ctrl => return Flow::Quit,
            KeyCode::Char('\x03') => return Flow::Quit,
            KeyCode::UpArrow | KeyCode::ApplicationUpArrow | KeyCode::Char('k') => {
                self.select(self.selected.saturating_sub(1))
            }
            KeyCode::DownArrow | KeyCode::ApplicationDownArrow | KeyCode::Char('j') => {
                self.select(self.selected + 1)
            }
            KeyCode::Home | KeyCode::Char('g') => self.select(0),
            KeyCode::End | KeyCode::Char('G') => self.select(usize::MAX),
            KeyCode::PageUp => self.select(self.selected.saturating_sub(page)),
            KeyCode::PageDown => self.select(self.selected.saturating_add(page)),
            KeyCode::Enter | KeyCode::Char('\r') | KeyCode::Char('\n') => self.open_overlay(),
            KeyCode::Char('/') => self.filter_editing = true,
            KeyCode::Escape => {
                self.filter.clear();
                self.refilter();
            }
            KeyCode::Char('p') if !ctrl => {
                self.preview_on = !self.preview_on;
                self.retarget();
            }
            KeyCode::Char('?') => {
                let title = if self.read_only.is_some() {
                    "keys of the list · read-only: y n x r a only say why"
                } else {
                    "keys of the list"
                };
                self.help = Some((title, help::list_keys()));
            }
            KeyCode::Char('i') if !ctrl => self.open_activity(),
            KeyCode::Char('w') if !ctrl => self.open_timeline(),
            KeyCode::Char('r') if !ctrl => self.reload_selected(),
            KeyCode::Char('x') if !ctrl => {
                let id = self.rows.get(self.selected).map(|r| r.id.clone());
                if id.is_some_and(|id| self.refused(&format!("close {id}"))) {
                    return Flow::Go;
                }
                if let Some(row) = self.rows.get(self.selected) {
                    let what = if row.ended.is_some() {
                        "forget (it has ended)"
                    } else {
                        "close (it ends)"
                    };
                    self.message = Some(format!("{what} {}? y: yes · any other key: no", row.id));
                    self.confirm = Some((row.id.clone(), row.ended.is_some()));
                }
            }
            KeyCode::Char('a') if !ctrl => match self.rows.get(self.selected) {
                Some(row) if row.ended.is_some() => {
                    self.message = Some(format!("{} has ended: nothing to attach to", row.id))
                }
                Some(row) => {
                    let id = row.id.clone();
                    if !self.refused(&format!("attach to {id} (a view types as the person)")) {
                        return Flow::Attach(id);
                    }
                }
                None => {}
            },
            _ => {}
        }
        Flow::Go
    }
}
