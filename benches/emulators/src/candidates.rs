//! The emulators under test, each behind one small adapter trait.

use std::io;
use std::num::NonZeroU16;
use std::sync::Arc;

/// The visible screen as text, as a launcher would read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScreenText {
    /// One string per visible row (not trimmed; callers trim).
    pub rows: Vec<String>,
    /// Zero-based (column, row) of the cursor.
    pub cursor: (usize, usize),
    pub alt_screen: bool,
}

/// What the bake-off needs from a headless terminal emulator.
pub trait Candidate {
    /// Apply terminal output (any chunking).
    fn feed(&mut self, bytes: &[u8]);
    /// Change the screen size.
    fn resize(&mut self, cols: usize, rows: usize);
    /// The visible rows as text, with the cursor.
    fn screen(&self) -> ScreenText;
    /// Rows in the history (scrollback) now.
    fn history_len(&self) -> usize;
    /// The normal screen's history rows as text, oldest first; `None` if it
    /// keeps none or cannot show it now (none of the three exposes the normal
    /// screen's history while the alternate screen is active).
    fn history(&mut self) -> Option<Vec<String>>;
}

/// The candidates, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Wezterm,
    Alacritty,
    Vt100,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Wezterm, Kind::Alacritty, Kind::Vt100];

    /// Short name used on the command line of child processes.
    pub fn id(self) -> &'static str {
        match self {
            Kind::Wezterm => "wezterm",
            Kind::Alacritty => "alacritty",
            Kind::Vt100 => "vt100",
        }
    }

    /// Name and version as shown in the report.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Wezterm => "wezterm-term (tattoy fork 0.1.0-fork.5)",
            Kind::Alacritty => "alacritty_terminal 0.26",
            Kind::Vt100 => "vt100 0.18",
        }
    }

    pub fn from_id(id: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.id() == id)
    }

    /// A blank terminal of `cols` x `rows` keeping up to `history` rows.
    pub fn build(self, cols: usize, rows: usize, history: usize) -> Box<dyn Candidate> {
        match self {
            Kind::Wezterm => Box::new(Wezterm::new(cols, rows, history)),
            Kind::Alacritty => Box::new(Alacritty::new(cols, rows, history)),
            Kind::Vt100 => Box::new(Vt100::new(cols, rows, history)),
        }
    }
}

// ---------------------------------------------------------------- wezterm-term

#[derive(Debug)]
struct WezConfig {
    scrollback: usize,
}

impl wezterm_term::TerminalConfiguration for WezConfig {
    fn color_palette(&self) -> wezterm_term::color::ColorPalette {
        wezterm_term::color::ColorPalette::default()
    }

    fn scrollback_size(&self) -> usize {
        self.scrollback
    }
}

/// `wezterm-term` constructed as the launcher does (answers to queries go to
/// a sink here instead of the PTY).
pub struct Wezterm {
    term: wezterm_term::Terminal,
}

fn wez_size(cols: usize, rows: usize) -> wezterm_term::TerminalSize {
    wezterm_term::TerminalSize {
        rows,
        cols,
        pixel_width: 0,
        pixel_height: 0,
        dpi: 0,
    }
}

impl Wezterm {
    pub fn new(cols: usize, rows: usize, history: usize) -> Self {
        Self::with_size(wez_size(cols, rows), history)
    }

    /// A variant that is not the launcher's: a non-zero pixel size (8x16
    /// pixel cells). With 0 x 0 pixels, as the launcher has it, an inline
    /// image divides by zero.
    pub fn with_pixels(cols: usize, rows: usize, history: usize) -> Self {
        let mut size = wez_size(cols, rows);
        size.pixel_width = cols * 8;
        size.pixel_height = rows * 16;
        Self::with_size(size, history)
    }

    fn with_size(size: wezterm_term::TerminalSize, history: usize) -> Self {
        let term = wezterm_term::Terminal::new(
            size,
            Arc::new(WezConfig {
                scrollback: history,
            }),
            "tickloop",
            "0.1.0",
            Box::new(io::sink()),
        );
        Wezterm { term }
    }
}

impl Candidate for Wezterm {
    fn feed(&mut self, bytes: &[u8]) {
        self.term.advance_bytes(bytes);
    }

    fn resize(&mut self, cols: usize, rows: usize) {
        self.term.resize(wez_size(cols, rows));
    }

    fn screen(&self) -> ScreenText {
        let rows = self.term.get_size().rows;
        let screen = self.term.screen();
        let range = screen.phys_range(&(0..rows as i64));
        let rows = screen
            .lines_in_phys_range(range)
            .iter()
            .map(|line| line.as_str().into_owned())
            .collect();
        let cursor = self.term.cursor_pos();
        ScreenText {
            rows,
            cursor: (cursor.x, usize::try_from(cursor.y).unwrap_or(0)),
            alt_screen: self.term.is_alt_screen_active(),
        }
    }

    fn history_len(&self) -> usize {
        let screen = self.term.screen();
        screen
            .scrollback_rows()
            .saturating_sub(screen.physical_rows)
    }

    fn history(&mut self) -> Option<Vec<String>> {
        if self.term.is_alt_screen_active() {
            return None;
        }
        let screen = self.term.screen();
        let n = screen
            .scrollback_rows()
            .saturating_sub(screen.physical_rows);
        Some(
            screen
                .lines_in_phys_range(0..n)
                .iter()
                .map(|line| line.as_str().into_owned())
                .collect(),
        )
    }
}

// ---------------------------------------------------------- alacritty_terminal

use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::{Column, Line};
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::TermMode;

/// Events (title changes, answers to queries, bell) are thrown away.
pub struct Discard;

impl alacritty_terminal::event::EventListener for Discard {
    fn send_event(&self, _event: alacritty_terminal::event::Event) {}
}

struct TermSize {
    columns: usize,
    screen_lines: usize,
}

impl Dimensions for TermSize {
    fn total_lines(&self) -> usize {
        self.screen_lines
    }

    fn screen_lines(&self) -> usize {
        self.screen_lines
    }

    fn columns(&self) -> usize {
        self.columns
    }
}

pub struct Alacritty {
    term: alacritty_terminal::Term<Discard>,
    processor: alacritty_terminal::vte::ansi::Processor,
}

impl Alacritty {
    pub fn new(cols: usize, rows: usize, history: usize) -> Self {
        let config = alacritty_terminal::term::Config {
            scrolling_history: history,
            ..Default::default()
        };
        let size = TermSize {
            columns: cols,
            screen_lines: rows,
        };
        Alacritty {
            term: alacritty_terminal::Term::new(config, &size, Discard),
            processor: alacritty_terminal::vte::ansi::Processor::new(),
        }
    }

    fn row_text(&self, line: Line) -> String {
        let grid = self.term.grid();
        let row = &grid[line];
        let mut s = String::with_capacity(grid.columns());
        for col in 0..grid.columns() {
            let cell = &row[Column(col)];
            if cell
                .flags
                .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
            {
                continue;
            }
            // A tab leaves '\t' in its first cell (for copying); it shows as blank.
            s.push(if cell.c == '\t' { ' ' } else { cell.c });
            if let Some(zw) = cell.zerowidth() {
                s.extend(zw.iter());
            }
        }
        s
    }
}

impl Candidate for Alacritty {
    fn feed(&mut self, bytes: &[u8]) {
        self.processor.advance(&mut self.term, bytes);
    }

    fn resize(&mut self, cols: usize, rows: usize) {
        self.term.resize(TermSize {
            columns: cols,
            screen_lines: rows,
        });
    }

    fn screen(&self) -> ScreenText {
        let grid = self.term.grid();
        let rows = (0..grid.screen_lines())
            .map(|i| self.row_text(Line(i as i32)))
            .collect();
        let point = grid.cursor.point;
        // Pending wrap (last column written): alacritty keeps the cursor on
        // the last column with a flag; report it as tmux does, x == cols.
        let x = point.column.0 + usize::from(grid.cursor.input_needs_wrap);
        ScreenText {
            rows,
            cursor: (x, usize::try_from(point.line.0).unwrap_or(0)),
            alt_screen: self.term.mode().contains(TermMode::ALT_SCREEN),
        }
    }

    fn history_len(&self) -> usize {
        self.term.grid().history_size()
    }

    fn history(&mut self) -> Option<Vec<String>> {
        if self.term.mode().contains(TermMode::ALT_SCREEN) {
            return None;
        }
        let n = self.term.grid().history_size() as i32;
        Some((1..=n).rev().map(|k| self.row_text(Line(-k))).collect())
    }
}

// ----------------------------------------------------------------------- vt100

pub struct Vt100 {
    parser: vt100::Parser,
}

fn nz(n: usize) -> NonZeroU16 {
    NonZeroU16::new(u16::try_from(n).unwrap_or(u16::MAX).max(1)).expect("non-zero")
}

impl Vt100 {
    pub fn new(cols: usize, rows: usize, history: usize) -> Self {
        Vt100 {
            parser: vt100::Parser::new(nz(rows), nz(cols), history),
        }
    }
}

impl Candidate for Vt100 {
    fn feed(&mut self, bytes: &[u8]) {
        self.parser.process(bytes);
    }

    fn resize(&mut self, cols: usize, rows: usize) {
        self.parser.set_size(nz(rows), nz(cols));
    }

    fn screen(&self) -> ScreenText {
        let screen = self.parser.screen();
        let (_, cols) = screen.size();
        let rows = screen.rows(0, cols.get()).collect();
        let (row, col) = screen.cursor_position();
        ScreenText {
            rows,
            cursor: (usize::from(col), usize::from(row)),
            alt_screen: screen.alternate_screen(),
        }
    }

    fn history_len(&self) -> usize {
        self.parser.screen().scrollback_len()
    }

    fn history(&mut self) -> Option<Vec<String>> {
        if self.parser.screen().alternate_screen() {
            return None;
        }
        // vt100 shows history by scrolling the view back; page through it.
        let screen = self.parser.screen_mut();
        let len = screen.scrollback_len();
        let (rows, cols) = screen.size();
        let rows = usize::from(rows.get());
        let mut out = Vec::with_capacity(len);
        let mut start = 0;
        while start < len {
            screen.set_scrollback(len - start);
            let take = rows.min(len - start);
            out.extend(screen.rows(0, cols.get()).take(take));
            start += take;
        }
        screen.set_scrollback(0);
        Some(out)
    }
}
