//! The keys of the view's terminal lent to the launcher
//! ([`ViewEvent::LendKeys`]): while the view shows the Tick's screen cell
//! for cell and holds no part of an input, the launcher's terminal thread
//! reads the terminal itself and types what is typed as it is for the
//! Tick, as tmux's server reads its client's terminal, so the view is not
//! woken on a keystroke's way. Anything else it reads (an escape sequence,
//! the prefix key, a longer character) comes back with the keys
//! ([`tickloop_proto::attach::ToView::KeysBack`]) and is read here as if from the terminal; for a
//! moment after that the view keeps its keys (a person on the arrow keys
//! is not sent back and forth). The view asks for them back
//! ([`ViewEvent::TakeKeys`]) as soon as it shows anything else, and
//! reads its terminal again only once they came back, so no key is read
//! twice or out of turn. A view that is leaving takes the keys' lock
//! before it lets go of its terminal ([`super::lend::TtyLend::take_keys`]).

use super::lend::{Keys, KEEP_AFTER_GIVEN_BACK};
use super::note::Turn;
use super::session::{Session, Shows};
use std::ops::ControlFlow;
use std::time::Instant;
use tickloop_proto::attach::ViewEvent;

impl Session<'_> {
    /// Lends the terminal's keys when the view shows the Tick's screen
    /// alone and holds no part of an input, and asks for them back when
    /// it shows anything else.
    pub(super) fn follow_keys(&mut self, now: Instant) {
        let state = &self.input.lent_keys;
        let want = !state.refused
            && state.not_before.is_none_or(|at| at <= now)
            && !self.input.graphics.holding()
            && !self.input.answers.holding()
            && self.input.keys.deadline().is_none()
            && self.shows_the_screen() == Shows::Alone;
        let prefix = self.opts.prefix.byte();
        let (Some(lock), state) = (self.input.lend.as_mut(), &mut self.input.lent_keys) else {
            return;
        };
        match state.keys {
            Keys::Held if want => {
                // Let go first: the launcher reads only under the lock.
                lock.give_keys();
                let n = state.next;
                state.next += 1;
                state.keys = Keys::Lent(n);
                state.not_before = None;
                self.link.queue(&ViewEvent::LendKeys { lend: n, prefix });
            }
            Keys::Lent(n) if !want => {
                state.keys = Keys::Asked(n);
                self.link.queue(&ViewEvent::TakeKeys { lend: n });
            }
            _ => {}
        }
    }

    /// The keys came back ([`tickloop_proto::attach::ToView::KeysBack`]): the view reads its
    /// terminal again, `bytes` (read by the launcher, not typed) first.
    /// Keys given back unasked with nothing in them are not lent again:
    /// the launcher cannot read this terminal.
    pub(super) fn on_keys_back(&mut self, lend: u64, bytes: &[u8]) -> Turn {
        let state = &mut self.input.lent_keys;
        let asked = match state.keys {
            Keys::Lent(n) if n == lend => false,
            Keys::Asked(n) if n == lend => true,
            // An earlier lending's, answered already.
            _ => return Ok(ControlFlow::Continue(())),
        };
        if let Some(lock) = self.input.lend.as_mut() {
            lock.take_keys();
        }
        state.keys = Keys::Held;
        let now = Instant::now();
        if bytes.is_empty() {
            state.refused |= !asked;
            return Ok(ControlFlow::Continue(()));
        }
        state.not_before = Some(now + KEEP_AFTER_GIVEN_BACK);
        self.take_typed(bytes, now, false)
    }
}

#[cfg(test)]
mod tests {
    use crate::render::{input_events, InputReader, MouseTranslator};
    use launcher::emulator::Emulator;
    use std::sync::{Arc, Mutex};
    use tickloop_proto::attach::typed_as_is;

    /// What the launcher's emulator writes to the Tick.
    #[derive(Clone, Default)]
    struct ToTheTick(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for ToTheTick {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("not poisoned").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// What the view would have the Tick sent for `byte` read from its
    /// terminal: parsed as a key, made an event, encoded by the launcher
    /// for a Tick that asked Enter to send CR LF (`newline_mode`) or not.
    fn through_the_view(byte: u8, newline_mode: bool) -> Vec<u8> {
        let tick = ToTheTick::default();
        let mut emulator = Emulator::new(5, 20, 0, Box::new(tick.clone()));
        if newline_mode {
            emulator.feed(b"\x1b[20h");
        }
        let mut reader = InputReader::default();
        reader.prepare();
        reader.feed(&[byte], false);
        reader.on_deadline(std::time::Instant::now() + std::time::Duration::from_secs(1));
        while let Some(event) = reader.next_event() {
            for event in input_events(&event, &mut MouseTranslator::default()) {
                let _ = emulator.view_input(&event);
            }
        }
        let sent = tick.0.lock().expect("not poisoned").clone();
        sent
    }

    /// Every byte the launcher types as it is reaches the Tick as it would
    /// through the view, in either mode of Enter; the prefix key never.
    #[test]
    fn what_the_launcher_types_as_it_is_is_what_the_view_would_type() {
        for newline_mode in [false, true] {
            let mut typed = 0;
            for byte in 0..=u8::MAX {
                if typed_as_is(byte, None, newline_mode) {
                    typed += 1;
                    assert_eq!(
                        through_the_view(byte, newline_mode),
                        [byte],
                        "byte {byte:#04x}, newline mode {newline_mode}"
                    );
                }
            }
            assert!(typed >= 95 + 20, "{typed} bytes typed as they are");
        }
        assert!(!typed_as_is(0x1c, Some(0x1c), false), "the prefix");
        assert!(
            !typed_as_is(0x01, Some(0x01), false),
            "ctrl+a as the prefix"
        );
        assert!(!typed_as_is(0x1b, None, false), "ESC");
        assert!(!typed_as_is(0xc3, None, false), "a longer character");
    }
}
