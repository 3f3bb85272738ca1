//! Text and line edits made into lines, as a terminal would show one row:
//! a carriage return writes over the line from its start, a backspace or a
//! cursor move back writes over what is there, erase in line cuts it, a
//! line feed (or the cursor leaving the row) ends it.

use super::scan::Control;

/// The longest line kept; a longer one is ended there (a program that
/// writes megabytes without a line feed still makes lines).
pub const LINE_MAX: usize = 8192;

/// The line being written.
#[derive(Debug, Default)]
pub struct Lines {
    line: Vec<char>,
    col: usize,
}

impl Lines {
    pub fn new() -> Lines {
        Lines::default()
    }

    /// Writes `text` at the cursor; `done` gets each line ended because it
    /// grew past [`LINE_MAX`].
    pub fn text(&mut self, text: &str, done: &mut impl FnMut(String)) {
        for c in text.chars() {
            if self.col >= LINE_MAX {
                done(self.take());
            }
            if self.col < self.line.len() {
                self.line[self.col] = c;
            } else {
                self.line.resize(self.col, ' ');
                self.line.push(c);
            }
            self.col += 1;
        }
    }

    /// Applies `control`; `done` gets the line it ended, if it did.
    pub fn control(&mut self, control: Control, done: &mut impl FnMut(String)) {
        match control {
            Control::Newline => done(self.take()),
            Control::OtherRow => {
                if !self.line.is_empty() {
                    done(self.take());
                }
                self.col = 0;
            }
            Control::CarriageReturn => self.col = 0,
            Control::Backspace => self.col = self.col.saturating_sub(1),
            Control::Tab => self.col = ((self.col / 8) + 1) * 8,
            Control::Forward(n) => self.col = self.col.saturating_add(usize::from(n)),
            Control::Back(n) => self.col = self.col.saturating_sub(usize::from(n)),
            Control::Column(n) => self.col = usize::from(n).saturating_sub(1),
            Control::EraseLine(0) => self.line.truncate(self.col),
            Control::EraseLine(1) => {
                let end = (self.col + 1).min(self.line.len());
                self.line[..end].fill(' ');
            }
            Control::EraseLine(_) => self.line.clear(),
        }
        self.col = self.col.min(LINE_MAX);
    }

    /// The line so far, trailing blanks trimmed.
    pub fn partial(&self) -> String {
        let text: String = self.line.iter().collect();
        text.trim_end().to_string()
    }

    /// Whether nothing is written on the line.
    pub fn is_empty(&self) -> bool {
        self.line.iter().all(|c| *c == ' ')
    }

    /// The cursor's column on the line.
    pub fn col(&self) -> usize {
        self.col
    }

    /// How many characters the line holds.
    pub fn len(&self) -> usize {
        self.line.len()
    }

    /// Ends the line: its text (trailing blanks trimmed); the next starts
    /// empty at column 0.
    pub fn take(&mut self) -> String {
        let text: String = self.line.drain(..).collect();
        self.col = 0;
        text.trim_end().to_string()
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
        scanner.feed(bytes, &mut |e| match e {
            Event::Text(t) => lines.text(t, &mut |l| out.push(l)),
            Event::Control(c) => lines.control(c, &mut |l| out.push(l)),
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
