//! A terminal's answers to a view's questions, picked out of its input,
//! where they come mixed with keystrokes: the one loop that both the colour
//! answers ([`crate::colors`]) and the graphics probe
//! ([`crate::graphics::probe`]) run, each with its own idea of what an
//! answer is. No I/O.

/// What the bytes from an ESC are.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Scan {
    /// An answer of this many bytes: taken out of the input.
    Answer(usize),
    /// An answer of this many bytes that a reader after this one needs
    /// too: read, and passed on.
    Seen(usize),
    /// Maybe an answer; its end has not come yet.
    Partial,
    /// Not an answer: the ESC is a key's.
    No,
}

/// What a filter of answers keeps between two reads of the terminal: the
/// start of an answer whose rest has not come, and whether answers are
/// still awaited (a lone ESC at the end of a read is held only then).
#[derive(Debug, Default)]
pub(crate) struct Pending {
    held: Vec<u8>,
    awaiting: bool,
}

impl Pending {
    /// For a terminal that was just asked its questions.
    pub(crate) fn asked() -> Self {
        Pending {
            held: Vec::new(),
            awaiting: true,
        }
    }

    /// [`split`] with what is held: the answers found, in order.
    pub(crate) fn split(
        &mut self,
        input: &[u8],
        scan: impl Fn(&[u8]) -> Scan,
        out: &mut Vec<u8>,
    ) -> Vec<Vec<u8>> {
        let mut answers = Vec::new();
        split(
            &mut self.held,
            input,
            self.awaiting,
            scan,
            |answer| answers.push(answer.to_vec()),
            out,
        );
        answers
    }

    /// No more answers are waited for: a lone ESC goes through at once.
    pub(crate) fn stop_awaiting(&mut self) {
        self.awaiting = false;
    }

    /// Something is held for the rest of an answer.
    pub(crate) fn holding(&self) -> bool {
        !self.held.is_empty()
    }

    /// The rest did not come: what was held goes out as it was.
    pub(crate) fn release(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.held);
    }
}

/// Goes through what was held and `input`: appends to `out` what is not an
/// answer, in order; gives each answer (`Answer` and `Seen` alike) to
/// `take`; keeps in `held` the start of an answer whose rest has not come
/// (a lone ESC at the end only while `awaiting`: else it is the Escape
/// key, and goes on at once).
fn split(
    held: &mut Vec<u8>,
    input: &[u8],
    awaiting: bool,
    scan: impl Fn(&[u8]) -> Scan,
    mut take: impl FnMut(&[u8]),
    out: &mut Vec<u8>,
) {
    let mut bytes = std::mem::take(held);
    bytes.extend_from_slice(input);
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 0x1b {
            let next = bytes[i..]
                .iter()
                .position(|b| *b == 0x1b)
                .map_or(bytes.len(), |p| i + p);
            out.extend_from_slice(&bytes[i..next]);
            i = next;
            continue;
        }
        match scan(&bytes[i..]) {
            Scan::Answer(len) => {
                take(&bytes[i..i + len]);
                i += len;
            }
            Scan::Seen(len) => {
                take(&bytes[i..i + len]);
                out.extend_from_slice(&bytes[i..i + len]);
                i += len;
            }
            Scan::Partial if awaiting || bytes.len() - i > 1 => {
                *held = bytes[i..].to_vec();
                break;
            }
            Scan::Partial | Scan::No => {
                out.push(0x1b);
                i += 1;
            }
        }
    }
}

/// The end of a string answer (OSC, APC) whose body starts at `from`: its
/// length through the string terminator `ESC \` (or BEL, when `bel` ends
/// it too); `No` past `max` bytes or at a control character.
pub(crate) fn until_terminator(bytes: &[u8], from: usize, max: usize, bel: bool) -> Scan {
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        match b {
            0x07 if bel => return Scan::Answer(i + 1),
            0x1b => {
                return match bytes.get(i + 1) {
                    Some(b'\\') => Scan::Answer(i + 2),
                    Some(_) => Scan::No,
                    None => Scan::Partial,
                }
            }
            _ if i >= max || b < 0x20 => return Scan::No,
            _ => {}
        }
    }
    Scan::Partial
}
