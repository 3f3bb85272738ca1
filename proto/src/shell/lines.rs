//! Text and line edits made into lines, as a terminal would show one row:
//! a carriage return writes over the line from its start, a backspace or a
//! cursor move back writes over what is there, erase in line cuts it, a
//! line feed (or the cursor leaving the row) ends it.

use super::scan::Control;

/// The longest line kept; a longer one is ended there (a program that
/// writes megabytes without a line feed still makes lines).
pub const LINE_MAX: usize = 8192;

/// The line being written: its text, and the cursor's column on it. Text
/// written at the end of the line (nearly all of it) is appended as it is;
/// only a write over what is there already edits characters.
#[derive(Debug, Default)]
pub struct Lines {
    line: String,
    /// Characters in `line`.
    chars: usize,
    col: usize,
}

impl Lines {
    pub fn new() -> Lines {
        Lines::default()
    }

    /// Writes `text` at the cursor; `done` gets each line ended because it
    /// grew past [`LINE_MAX`].
    pub fn text(&mut self, text: &str, done: &mut impl FnMut(&str)) {
        let n = if text.is_ascii() {
            text.len()
        } else {
            text.chars().count()
        };
        if self.col == self.chars && self.col + n <= LINE_MAX {
            self.line.push_str(text);
            self.chars += n;
            self.col += n;
            return;
        }
        for c in text.chars() {
            if self.col >= LINE_MAX {
                self.end(done);
            }
            self.put(c);
        }
    }

    /// One character at the cursor: over what is there, or after it.
    fn put(&mut self, c: char) {
        if self.col < self.chars {
            let at = self.byte_of(self.col);
            let old = self.line[at..].chars().next().map_or(0, char::len_utf8);
            let mut buf = [0u8; 4];
            self.line
                .replace_range(at..at + old, c.encode_utf8(&mut buf));
        } else {
            for _ in self.chars..self.col {
                self.line.push(' ');
            }
            self.line.push(c);
            self.chars = self.col + 1;
        }
        self.col += 1;
    }

    /// The byte where character `col` starts (the end when past it).
    fn byte_of(&self, col: usize) -> usize {
        if self.line.len() == self.chars {
            return col.min(self.line.len());
        }
        self.line
            .char_indices()
            .nth(col)
            .map_or(self.line.len(), |(i, _)| i)
    }

    /// Applies `control`; `done` gets the line it ended, if it did.
    pub fn control(&mut self, control: Control, done: &mut impl FnMut(&str)) {
        match control {
            Control::Newline => self.end(done),
            Control::OtherRow => {
                if self.chars > 0 {
                    self.end(done);
                }
                self.col = 0;
            }
            Control::CarriageReturn => self.col = 0,
            Control::Backspace => self.col = self.col.saturating_sub(1),
            Control::Tab => self.col = ((self.col / 8) + 1) * 8,
            Control::Forward(n) => self.col = self.col.saturating_add(usize::from(n)),
            Control::Back(n) => self.col = self.col.saturating_sub(usize::from(n)),
            Control::Column(n) => self.col = usize::from(n).saturating_sub(1),
            Control::EraseLine(0) => {
                if self.col < self.chars {
                    let at = self.byte_of(self.col);
                    self.line.truncate(at);
                    self.chars = self.col;
                }
            }
            Control::EraseLine(1) => {
                let end = (self.col + 1).min(self.chars);
                let at = self.byte_of(end);
                self.line.replace_range(..at, &" ".repeat(end));
            }
            Control::EraseLine(_) => {
                self.line.clear();
                self.chars = 0;
            }
        }
        self.col = self.col.min(LINE_MAX);
    }

    /// The line so far, trailing blanks trimmed.
    pub fn partial(&self) -> String {
        self.line.trim_end().to_string()
    }

    /// Whether nothing is written on the line.
    pub fn is_empty(&self) -> bool {
        self.line.trim().is_empty()
    }

    /// The cursor's column on the line.
    pub fn col(&self) -> usize {
        self.col
    }

    /// How many characters the line holds.
    pub fn len(&self) -> usize {
        self.chars
    }

    /// Ends the line, handing `done` its text (trailing blanks trimmed);
    /// the next starts empty at column 0, in the same buffer.
    fn end(&mut self, done: &mut impl FnMut(&str)) {
        let kept = self.line.trim_end().len();
        done(&self.line[..kept]);
        self.line.clear();
        self.chars = 0;
        self.col = 0;
    }

    /// Ends the line: its text (trailing blanks trimmed); the next starts
    /// empty at column 0.
    pub fn take(&mut self) -> String {
        let mut text = std::mem::take(&mut self.line);
        self.chars = 0;
        self.col = 0;
        let kept = text.trim_end().len();
        text.truncate(kept);
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::scan::{Event, Scanner};

    /// The lines `bytes` makes, the unfinished one last.
    fn lines(bytes: &[u8]) -> Vec<String> {
        let mut scanner = Scanner::new();
        let mut lines = Lines::new();
        let mut out = Vec::new();
        scanner.feed(bytes, &mut |e: Event<'_>| match e {
            Event::Text(t) => lines.text(t, &mut |l| out.push(l.to_string())),
            Event::Control(c) => lines.control(c, &mut |l| out.push(l.to_string())),
            Event::Mark(_) => {}
        });
        out.push(lines.partial());
        out
    }

    #[test]
    fn a_line_reads_as_the_row_would_show_it() {
        assert_eq!(lines(b"abc\r\ndef"), ["abc", "def"]);
        // A progress bar: each frame writes over the one before.
        assert_eq!(lines(b" 10%\r 50%\r100%\r\n"), ["100%", ""]);
        assert_eq!(lines(b"abcdef\rXY"), ["XYcdef"]);
        assert_eq!(lines(b"abcdef\r\x1b[Kxy"), ["xy"]);
        // readline erasing a typed character, and moving back two.
        assert_eq!(lines(b"lsx\x08 \x08 -l"), ["ls -l"]);
        assert_eq!(lines(b"echo hi\x1b[2Dxx"), ["echo xx"]);
        assert_eq!(lines(b"a\tb"), ["a       b"]);
        assert_eq!(lines(b"a\x1b[5Gb"), ["a   b"]);
        assert_eq!(lines(b"top\x1b[2;1Hnext"), ["top", "next"]);
        // Writing over characters of several bytes.
        assert_eq!(lines("é€😀x\r\x1b[2Ca".as_bytes()), ["é€ax"]);
        assert_eq!(lines("aé\x08\x08bc\x1b[1K".as_bytes()), [""]);
        assert_eq!(lines("aéz\x08\x08\x1b[1Kq".as_bytes()), [" qz"]);
    }

    #[test]
    fn a_line_without_end_is_cut_at_the_bound() {
        let long = vec![b'x'; LINE_MAX * 2 + 5];
        let got = lines(&long);
        assert_eq!(got.len(), 3);
        assert_eq!(got[0].len(), LINE_MAX);
        assert_eq!(got[2].len(), 5);
    }
}
