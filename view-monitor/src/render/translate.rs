//! The view terminal's input events as attach-protocol [`ViewEvent`]s
//! (keys, pastes, mouse reports as presses, moves and releases), and what
//! turns the terminal's mouse reporting to the mode the Tick asked for.

use termwiz::input::{InputEvent, KeyCode, KeyEvent, Modifiers, MouseButtons, MouseEvent};
use tickloop_proto::attach::{self, Key, Mods, MouseKind, ViewEvent};

/// What turns a view's terminal's mouse reporting to `mode` (SGR
/// coordinates), so it reports what the Tick asked for.
pub fn mouse_reporting(mode: attach::MouseTracking) -> &'static [u8] {
    match mode {
        attach::MouseTracking::Off => b"\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1006l",
        attach::MouseTracking::Click => b"\x1b[?1003l\x1b[?1002l\x1b[?1000h\x1b[?1006h",
        attach::MouseTracking::Drag => b"\x1b[?1003l\x1b[?1002h\x1b[?1006h",
        attach::MouseTracking::Motion => b"\x1b[?1003h\x1b[?1006h",
    }
}

fn mods(m: Modifiers) -> Mods {
    Mods {
        shift: m.contains(Modifiers::SHIFT),
        alt: m.contains(Modifiers::ALT),
        ctrl: m.contains(Modifiers::CTRL),
        super_: m.contains(Modifiers::SUPER),
    }
}

/// A key from the view's terminal as an attach-protocol key; `None` for keys
/// the protocol does not carry.
pub fn key_event(event: &KeyEvent) -> Option<ViewEvent> {
    let key = match event.key {
        KeyCode::Char(c) => match c {
            '\r' | '\n' => Key::Enter,
            '\t' => Key::Tab,
            '\x7f' | '\x08' => Key::Backspace,
            '\x1b' => Key::Escape,
            // Other control characters: their ctrl+letter form.
            '\x00'..='\x1f' => {
                let letter = char::from(u8::try_from(u32::from(c)).ok()? | 0x40);
                return Some(ViewEvent::Key {
                    key: Key::Char(letter.to_ascii_lowercase()),
                    mods: Mods {
                        ctrl: true,
                        ..mods(event.modifiers)
                    },
                });
            }
            c => Key::Char(c),
        },
        KeyCode::Enter => Key::Enter,
        KeyCode::Tab => Key::Tab,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Escape => Key::Escape,
        KeyCode::UpArrow | KeyCode::ApplicationUpArrow => Key::Up,
        KeyCode::DownArrow | KeyCode::ApplicationDownArrow => Key::Down,
        KeyCode::LeftArrow | KeyCode::ApplicationLeftArrow => Key::Left,
        KeyCode::RightArrow | KeyCode::ApplicationRightArrow => Key::Right,
        KeyCode::Home | KeyCode::KeyPadHome => Key::Home,
        KeyCode::End | KeyCode::KeyPadEnd => Key::End,
        KeyCode::PageUp | KeyCode::KeyPadPageUp => Key::PageUp,
        KeyCode::PageDown | KeyCode::KeyPadPageDown => Key::PageDown,
        KeyCode::Insert => Key::Insert,
        KeyCode::Delete => Key::Delete,
        KeyCode::Function(n) => Key::F(n),
        _ => return None,
    };
    Some(ViewEvent::Key {
        key,
        mods: mods(event.modifiers),
    })
}

/// Turns the view terminal's mouse reports (which carry the buttons held,
/// not presses and releases) into press / release / move events.
#[derive(Debug, Default, Clone)]
pub struct MouseTranslator {
    held: Option<attach::MouseButton>,
}

impl MouseTranslator {
    /// The events for one report; coordinates are zero-based cells of the
    /// view, which are the Tick's cells (the view draws from the top left).
    pub fn translate(&mut self, event: &MouseEvent) -> Vec<ViewEvent> {
        let (x, y) = (event.x.saturating_sub(1), event.y.saturating_sub(1));
        let m = mods(event.modifiers);
        let b = event.mouse_buttons.clone();
        let ev = |kind, button| ViewEvent::Mouse {
            x,
            y,
            kind,
            button,
            mods: m,
        };
        if b.contains(MouseButtons::VERT_WHEEL) {
            let button = if b.contains(MouseButtons::WHEEL_POSITIVE) {
                attach::MouseButton::WheelUp
            } else {
                attach::MouseButton::WheelDown
            };
            return vec![ev(MouseKind::Press, button)];
        }
        let now = if b.contains(MouseButtons::LEFT) {
            Some(attach::MouseButton::Left)
        } else if b.contains(MouseButtons::MIDDLE) {
            Some(attach::MouseButton::Middle)
        } else if b.contains(MouseButtons::RIGHT) {
            Some(attach::MouseButton::Right)
        } else {
            None
        };
        let out = match (self.held, now) {
            (None, None) => vec![ev(MouseKind::Move, attach::MouseButton::None)],
            (None, Some(n)) => vec![ev(MouseKind::Press, n)],
            (Some(h), None) => vec![ev(MouseKind::Release, h)],
            (Some(h), Some(n)) if h == n => vec![ev(MouseKind::Move, n)],
            (Some(h), Some(n)) => vec![ev(MouseKind::Release, h), ev(MouseKind::Press, n)],
        };
        self.held = now;
        out
    }
}

/// An input event of the view's terminal as attach-protocol events (none for
/// resizes and wake-ups, which the view handles itself).
pub fn input_events(event: &InputEvent, mouse: &mut MouseTranslator) -> Vec<ViewEvent> {
    match event {
        InputEvent::Key(key) => key_event(key).into_iter().collect(),
        InputEvent::Paste(text) => vec![ViewEvent::Paste { text: text.clone() }],
        InputEvent::Mouse(m) => mouse.translate(m),
        InputEvent::PixelMouse(_) | InputEvent::Resized { .. } | InputEvent::Wake => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_translate() {
        let k = |key, modifiers| KeyEvent { key, modifiers };
        assert_eq!(
            key_event(&k(KeyCode::Char('a'), Modifiers::CTRL)),
            Some(ViewEvent::Key {
                key: Key::Char('a'),
                mods: Mods {
                    ctrl: true,
                    ..Mods::NONE
                }
            })
        );
        assert_eq!(
            key_event(&k(KeyCode::Char('\r'), Modifiers::NONE)),
            Some(ViewEvent::Key {
                key: Key::Enter,
                mods: Mods::NONE
            })
        );
    }

    #[test]
    fn mouse_reports_become_press_move_release() {
        let mut t = MouseTranslator::default();
        let report = |b| MouseEvent {
            x: 3,
            y: 2,
            mouse_buttons: b,
            modifiers: Modifiers::NONE,
        };
        let kinds = |evs: Vec<ViewEvent>| -> Vec<(MouseKind, attach::MouseButton)> {
            evs.into_iter()
                .map(|e| match e {
                    ViewEvent::Mouse {
                        kind, button, x, y, ..
                    } => {
                        assert_eq!((x, y), (2, 1));
                        (kind, button)
                    }
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        use attach::MouseButton as B;
        assert_eq!(
            kinds(t.translate(&report(MouseButtons::LEFT))),
            vec![(MouseKind::Press, B::Left)]
        );
        assert_eq!(
            kinds(t.translate(&report(MouseButtons::LEFT))),
            vec![(MouseKind::Move, B::Left)]
        );
        assert_eq!(
            kinds(t.translate(&report(MouseButtons::NONE))),
            vec![(MouseKind::Release, B::Left)]
        );
        assert_eq!(
            kinds(t.translate(&report(
                MouseButtons::VERT_WHEEL | MouseButtons::WHEEL_POSITIVE
            ))),
            vec![(MouseKind::Press, B::WheelUp)]
        );
    }
}
