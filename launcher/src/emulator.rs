//! The terminal emulator behind one narrow API: feed the Tick's terminal
//! output, resize, read the screen as text with the cursor or as a view's
//! snapshot, and apply a view's input events.
//!
//! This is the only module that knows which emulator is used (`wezterm-term`
//! today), so the choice can be measured and swapped without touching the
//! rest of the launcher. The emulator answers the Tick's terminal queries
//! (cursor position, device attributes, modes) through the `answers` writer
//! given to [`Emulator::new`], which the launcher routes to the PTY master.

use crate::attach::{Snapshot, ViewEvent};
use crate::screen_model::{self, ModeTracker};
use std::io::Write;
use std::sync::Arc;
use wezterm_term::color::ColorPalette;
use wezterm_term::{Terminal, TerminalConfiguration, TerminalSize};

/// The screen as text: what `tickloop screen` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenText {
    pub rows: usize,
    pub cols: usize,
    /// Zero-based cursor row within the visible screen.
    pub cursor_row: usize,
    /// Zero-based cursor column.
    pub cursor_col: usize,
    /// One string per visible row, trailing blanks trimmed, trailing empty
    /// rows dropped.
    pub lines: Vec<String>,
}

impl ScreenText {
    /// The lines joined with `\n`, cut to the first `max_chars` characters
    /// (the failed-open report carries the first 256).
    pub fn head(&self, max_chars: usize) -> String {
        self.lines.join("\n").chars().take(max_chars).collect()
    }
}

#[derive(Debug)]
struct Config;

impl TerminalConfiguration for Config {
    fn color_palette(&self) -> ColorPalette {
        ColorPalette::default()
    }

    fn scrollback_size(&self) -> usize {
        // Views, `screen` and reports use only the visible screen: keeping no
        // history saves memory (about 1 MiB per 1,000 lines at 120 columns)
        // and the time spent storing lines nobody reads.
        0
    }
}

/// A headless terminal: one owner, fed from the PTY master's output.
pub struct Emulator {
    term: Terminal,
    /// The modes wezterm-term keeps private, followed from the same bytes.
    modes: ModeTracker,
}

impl Emulator {
    /// A blank screen of `rows` x `cols`; answers to terminal queries are
    /// written to `answers`.
    pub fn new(rows: usize, cols: usize, answers: Box<dyn Write + Send>) -> Self {
        let size = TerminalSize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
            dpi: 0,
        };
        let term = Terminal::new(
            size,
            Arc::new(Config),
            "tickloop",
            env!("CARGO_PKG_VERSION"),
            answers,
        );
        Emulator {
            term,
            modes: ModeTracker::new(),
        }
    }

    /// Apply output of the Tick's terminal (any chunking is fine).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.modes.observe(bytes);
        self.term.advance_bytes(bytes);
    }

    /// The whole screen for a view: text, colours, attributes, cursor, modes.
    pub fn snapshot(&self) -> Snapshot {
        screen_model::snapshot(&self.term, &self.modes)
    }

    /// Encode a view's key, paste, mouse or focus event for the Tick's
    /// current modes; it is written to the `answers` writer (the PTY).
    pub fn view_input(&mut self, event: &ViewEvent) -> Result<(), screen_model::InputError> {
        screen_model::apply_input(&mut self.term, event)
    }

    /// Change the screen size (the PTY itself is resized by the caller).
    pub fn resize(&mut self, rows: usize, cols: usize) {
        self.term.resize(TerminalSize {
            rows,
            cols,
            pixel_width: 0,
            pixel_height: 0,
            dpi: 0,
        });
    }

    /// The visible screen as text, with the cursor.
    pub fn text(&self) -> ScreenText {
        let size = self.term.get_size();
        let screen = self.term.screen();
        let rows = size.rows;
        let range = screen.phys_range(&(0..rows as i64));
        let mut lines: Vec<String> = screen
            .lines_in_phys_range(range)
            .iter()
            .map(|line| line.as_str().trim_end().to_string())
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let cursor = self.term.cursor_pos();
        ScreenText {
            rows,
            cols: size.cols,
            cursor_row: usize::try_from(cursor.y).unwrap_or(0),
            cursor_col: cursor.x,
            lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    struct ChanWriter(mpsc::Sender<Vec<u8>>);
    impl Write for ChanWriter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let _ = self.0.send(buf.to_vec());
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn text_trims_and_reports_cursor() {
        let (tx, _rx) = mpsc::channel();
        let mut emu = Emulator::new(30, 120, Box::new(ChanWriter(tx)));
        emu.feed(b"hello   \r\nworld");
        let text = emu.text();
        assert_eq!(text.rows, 30);
        assert_eq!(text.cols, 120);
        assert_eq!(text.lines, vec!["hello".to_string(), "world".to_string()]);
        assert_eq!((text.cursor_row, text.cursor_col), (1, 5));
        assert_eq!(text.head(7), "hello\nw");
    }

    #[test]
    fn snapshot_after_the_scrollback_ring_wraps() {
        // Regression: wezterm-term's `with_phys_lines` panicked once its
        // scrollback ring had wrapped; the view snapshot must not use it.
        let (tx, _rx) = mpsc::channel();
        let mut emu = Emulator::new(30, 120, Box::new(ChanWriter(tx)));
        for i in 0..5000 {
            emu.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
        }
        emu.feed(b"last");
        let snapshot = emu.snapshot();
        assert_eq!(snapshot.lines.len(), 30);
        assert_eq!(snapshot.lines[29].text(), "last");
        assert_eq!(snapshot.lines[28].text(), "line 4999");
        assert_eq!(emu.text().lines.last().map(String::as_str), Some("last"));
    }

    #[test]
    fn answers_cursor_position_query() {
        let (tx, rx) = mpsc::channel();
        let mut emu = Emulator::new(30, 120, Box::new(ChanWriter(tx)));
        emu.feed(b"\x1b[3;7H\x1b[6n");
        let answer = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("an answer");
        assert_eq!(answer, b"\x1b[3;7R");
    }
}
