//! Reading the view's terminal: its input events, with the xterm sequences
//! for modified edit and page keys put back together. No I/O of its own
//! beyond polling the termwiz terminal it is given.

use termwiz::input::{InputEvent, KeyCode, KeyEvent, Modifiers};

/// How long the start of a split-up key sequence is held for the rest.
const KEY_HOLD: std::time::Duration = std::time::Duration::from_millis(15);

/// Reads input events from the view's terminal, and puts back together the
/// xterm sequences for modified Insert/Delete/Home/End/PageUp/PageDown
/// (`ESC [ 5 ; 2 ~` is shift+PageUp), which termwiz's parser does not know
/// and hands over as alt+`[` followed by plain characters.
///
/// Either it polls a termwiz terminal ([`InputReader::poll`], the Monitor),
/// or its owner reads the terminal and feeds the bytes
/// ([`InputReader::feed`], then [`InputReader::next_event`]; the attach view's
/// one loop), with termwiz's `InputParser` used as a parser only.
#[derive(Debug, Default)]
pub struct InputReader {
    queue: std::collections::VecDeque<InputEvent>,
    held: Vec<char>,
    /// When the start of a split-up sequence began to be held.
    held_since: Option<std::time::Instant>,
    /// Built at the first [`InputReader::feed`] or [`InputReader::prepare`]:
    /// its keymap takes about a millisecond to build, which a view need not
    /// pay before its first frame.
    parser: Option<termwiz::input::InputParser>,
}

impl InputReader {
    /// Parses `bytes` read from the terminal (`maybe_more`: the read may
    /// have stopped inside a sequence); the events wait for
    /// [`InputReader::next_event`].
    pub fn feed(&mut self, bytes: &[u8], maybe_more: bool) {
        let mut parsed = Vec::new();
        self.parser
            .get_or_insert_with(termwiz::input::InputParser::new)
            .parse(bytes, |event| parsed.push(event), maybe_more);
        for event in parsed {
            self.push(event);
        }
        if self.held.is_empty() {
            self.held_since = None;
        } else if self.held_since.is_none() {
            self.held_since = Some(std::time::Instant::now());
        }
    }

    /// Builds the parser [`InputReader::feed`] needs, if it is not built
    /// yet: for a view with nothing better to do, so that its first key
    /// does not wait for it.
    pub fn prepare(&mut self) {
        self.parser
            .get_or_insert_with(termwiz::input::InputParser::new);
    }

    /// The next event parsed.
    pub fn next_event(&mut self) -> Option<InputEvent> {
        self.queue.pop_front()
    }

    /// When what is held must go on as the keys it was, if anything is.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.held_since.map(|since| since + KEY_HOLD)
    }

    /// The deadline passed: what was held goes on as the keys it was.
    pub fn on_deadline(&mut self, now: std::time::Instant) {
        if self.deadline().is_some_and(|at| at <= now) {
            self.release();
        }
    }

    /// The next event, waiting at most `wait` (`None`: until one comes). An
    /// error is the terminal gone.
    pub fn poll(
        &mut self,
        term: &mut impl termwiz::terminal::Terminal,
        wait: Option<std::time::Duration>,
    ) -> std::io::Result<Option<InputEvent>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Ok(Some(event));
            }
            let holding = !self.held.is_empty();
            let wait = if holding {
                Some(wait.map_or(KEY_HOLD, |w| w.min(KEY_HOLD)))
            } else {
                wait
            };
            let polled = term
                .poll_input(wait)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            match polled {
                Some(event) => self.push(event),
                None if holding => self.release(),
                None => return Ok(None),
            }
        }
    }

    /// Takes one event from the terminal's parser.
    pub fn push(&mut self, event: InputEvent) {
        let key = match &event {
            InputEvent::Key(KeyEvent {
                key: KeyCode::Char(c),
                modifiers,
            }) => Some((*c, *modifiers)),
            _ => None,
        };
        match key {
            Some(('[', m)) if self.held.is_empty() && m == Modifiers::ALT => self.held.push('['),
            Some((c, m)) if !self.held.is_empty() && m == Modifiers::NONE => {
                if c.is_ascii_digit() || c == ';' {
                    self.held.push(c);
                    if self.held.len() > 8 {
                        self.release();
                    }
                } else if let Some(decoded) =
                    (c == '~').then(|| decode_tilde(&self.held[1..])).flatten()
                {
                    self.held.clear();
                    self.queue.push_back(InputEvent::Key(decoded));
                } else {
                    self.release();
                    self.queue.push_back(event);
                }
            }
            _ => {
                self.release();
                self.queue.push_back(event);
            }
        }
    }

    /// Every event pushed so far, with what was held handed on: for a view
    /// whose input comes in whole messages (a page's xterm.js), after which
    /// nothing more of a sequence follows.
    pub fn drain(&mut self) -> Vec<InputEvent> {
        self.release();
        self.queue.drain(..).collect()
    }

    /// Hands on what was held, as the keys they were.
    fn release(&mut self) {
        self.held_since = None;
        for (i, c) in self.held.drain(..).enumerate() {
            let modifiers = if i == 0 {
                Modifiers::ALT
            } else {
                Modifiers::NONE
            };
            self.queue.push_back(InputEvent::Key(KeyEvent {
                key: KeyCode::Char(c),
                modifiers,
            }));
        }
    }
}

/// The key of `ESC [ N ; M ~` (params `N;M`), xterm's modified keys.
fn decode_tilde(params: &[char]) -> Option<KeyEvent> {
    let text: String = params.iter().collect();
    let (n, m) = text.split_once(';')?;
    let key = match n {
        "2" => KeyCode::Insert,
        "3" => KeyCode::Delete,
        "1" | "7" => KeyCode::Home,
        "4" | "8" => KeyCode::End,
        "5" => KeyCode::PageUp,
        "6" => KeyCode::PageDown,
        _ => return None,
    };
    let bits = m.parse::<u8>().ok()?.checked_sub(1)?;
    let mut modifiers = Modifiers::NONE;
    if bits & 1 != 0 {
        modifiers |= Modifiers::SHIFT;
    }
    if bits & 2 != 0 {
        modifiers |= Modifiers::ALT;
    }
    if bits & 4 != 0 {
        modifiers |= Modifiers::CTRL;
    }
    Some(KeyEvent { key, modifiers })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<InputEvent> {
        let mut parser = termwiz::input::InputParser::new();
        let mut reader = InputReader::default();
        for event in parser.parse_as_vec(bytes, false) {
            reader.push(event);
        }
        reader.release();
        reader.queue.into_iter().collect()
    }

    fn key(key: KeyCode, modifiers: Modifiers) -> InputEvent {
        InputEvent::Key(KeyEvent { key, modifiers })
    }

    #[test]
    fn modified_page_and_edit_keys_are_put_back_together() {
        assert_eq!(
            keys(b"\x1b[5;2~"),
            vec![key(KeyCode::PageUp, Modifiers::SHIFT)]
        );
        assert_eq!(
            keys(b"\x1b[6;2~x"),
            vec![
                key(KeyCode::PageDown, Modifiers::SHIFT),
                key(KeyCode::Char('x'), Modifiers::NONE)
            ]
        );
        assert_eq!(
            keys(b"\x1b[3;5~"),
            vec![key(KeyCode::Delete, Modifiers::CTRL)]
        );
    }

    #[test]
    fn alt_bracket_typed_alone_stays_what_it_was() {
        assert_eq!(
            keys(b"\x1b[x"),
            vec![
                key(KeyCode::Char('['), Modifiers::ALT),
                key(KeyCode::Char('x'), Modifiers::NONE)
            ]
        );
        assert_eq!(
            keys(b"\x1b[9;2~"),
            vec![
                key(KeyCode::Char('['), Modifiers::ALT),
                key(KeyCode::Char('9'), Modifiers::NONE),
                key(KeyCode::Char(';'), Modifiers::NONE),
                key(KeyCode::Char('2'), Modifiers::NONE),
                key(KeyCode::Char('~'), Modifiers::NONE)
            ]
        );
    }
}
