//! The screen keeper: the terminal emulator behind one narrow API. Feed it
//! the Tick's terminal output, resize it, read the screen (as text with the
//! cursor, or as a view's snapshot, live or scrolled back into history), and
//! apply a view's input events.
//!
//! This is the only module (with [`crate::screen_model`], its converter) that
//! knows which emulator is used: `alacritty_terminal`, chosen on the figures
//! in `benches/emulators.md` (fastest of the candidates, no panic under
//! random bytes and image protocols, reflow on resize that matches tmux).
//! It answers the Tick's terminal queries (cursor position, device
//! attributes, colours, text area size) through the `answers` writer given to
//! [`Emulator::new`], which the launcher routes to the PTY master.
//!
//! So that memory stays bounded whatever a program prints, the payload of an
//! OSC string longer than [`MAX_OSC_PAYLOAD`] (an inline image, say) is
//! dropped past that length before the parser sees it (the parser would
//! otherwise buffer all of it). Image protocols (sixel in DCS, kitty
//! graphics in APC, iTerm2's OSC 1337) are ignored by the parser itself.
//!
//! One job a file: `limiter` cuts what the parser is given, `reports` is
//! what the emulator tells besides the screen (answers, title, bells,
//! clipboard writes, the colours it answers with), `image_cells` gives a
//! kept image its cells.

pub mod image_cells;
mod limiter;
mod parked;
mod reports;

use crate::history::handler::{compact, move_all, trim, Feeding};
use crate::history::{self, History};
use crate::screen_model;
use alacritty_terminal::grid::{Cursor, Dimensions, Grid, Row};
use alacritty_terminal::index::Line as GridLine;
use alacritty_terminal::term::cell::Cell;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{Color, CursorShape, CursorStyle, Processor};
use limiter::OscLimiter;
pub use limiter::MAX_MARKS;
pub use reports::{AnswerColors, TermEvent};
use reports::{Listener, Reports};
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tickloop_proto::attach::{Snapshot, ViewEvent};

/// History kept by default, in lines (tmux's `history-limit`).
pub const DEFAULT_HISTORY: usize = 2000;
/// The largest history a Tick may ask for.
pub const MAX_HISTORY: usize = 100_000;
/// The longest OSC payload passed to the parser; the rest is dropped.
pub const MAX_OSC_PAYLOAD: usize = 1024 * 1024;

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
    /// Lines that scrolled off the top, oldest first, trailing blanks
    /// trimmed (only as many as were asked for).
    pub history: Vec<String>,
    /// How many lines of history the screen holds in all.
    pub history_len: usize,
    /// Bytes the screen and its history hold ([`Footprint::cell_bytes`]).
    pub cell_bytes: usize,
    /// The images on the screen shown and in its history (filled in by
    /// the terminal thread, which keeps them: [`crate::images`]).
    pub images: Vec<tickloop_proto::wire::ImagePlacement>,
    /// Bytes the kept images hold.
    pub image_bytes: u64,
}

impl ScreenText {
    /// The lines joined with `\n`, cut to the first `max_chars` characters
    /// (the failed-open report carries the first 256).
    pub fn head(&self, max_chars: usize) -> String {
        self.lines.join("\n").chars().take(max_chars).collect()
    }
}

/// What the emulator knows about its memory: for `tickloop screen --json`
/// and the benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Footprint {
    /// Lines of history held now.
    pub history_len: usize,
    /// The most it will hold.
    pub history_limit: usize,
    /// Bytes held by the screen's cells (both grids, 24 bytes a cell;
    /// combining characters and hyperlinks add to it) and by the compact
    /// history.
    pub cell_bytes: usize,
}

/// The size of the screen, as the emulator's grid wants it.
#[derive(Debug, Clone, Copy)]
struct GridSize {
    rows: usize,
    cols: usize,
}

impl Dimensions for GridSize {
    fn total_lines(&self) -> usize {
        self.rows
    }
    fn screen_lines(&self) -> usize {
        self.rows
    }
    fn columns(&self) -> usize {
        self.cols
    }
}

/// A headless terminal: one owner, fed from the PTY master's output.
///
/// The history lives beside alacritty's grid, compact ([`crate::history`]):
/// rows that scroll off land in alacritty's own history and are moved into
/// the compact one by [`Emulator::release_spare_rows`] (when the output
/// pauses) and [`Emulator::compact`] (once a second while it does not).
pub struct Emulator {
    term: Term<Listener>,
    parser: Processor,
    reports: Arc<Mutex<Reports>>,
    osc: OscLimiter,
    /// The parts of a chunk the OSC limiter passes on (kept between feeds).
    parts: Vec<std::ops::Range<usize>>,
    /// Printable ASCII held back while the parser runs (see
    /// `history::handler`; kept between feeds, always empty there).
    printable: Vec<u8>,
    /// The rows that scrolled off the normal screen, but the newest
    /// (alacritty's own history holds those).
    history: History,
    /// The normal screen's DECSC point while the alternate screen is shown
    /// after a resize there (see [`Emulator::resize`]).
    normal_saved: Option<Cursor<Cell>>,
    /// Rows pushed into the history when spare rows were last given back.
    pushed_at_release: u64,
    /// The cells put away while the screen is quiet ([`Emulator::park`]).
    parked: Option<parked::Parked>,
}

/// Puts `rows` (oldest first) back into `grid`'s history, older than what
/// it holds, leaving the screen as it was: each chunk is written over the
/// top of the screen and scrolled up into history, then the screen's rows
/// are put back. The grid's history limit must have room for them.
fn put_back(grid: &mut Grid<Cell>, rows: Vec<Row<Cell>>) {
    if rows.is_empty() {
        return;
    }
    let height = grid.screen_lines();
    let screen: Vec<_> = (0..height)
        .map(|r| grid[GridLine(r as i32)].clone())
        .collect();
    let region = GridLine(0)..GridLine(height as i32);
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut n = 0;
        for row in rows.by_ref().take(height) {
            grid[GridLine(n as i32)] = row;
            n += 1;
        }
        grid.scroll_up::<Color>(&region, n);
    }
    for (r, row) in screen.into_iter().enumerate() {
        grid[GridLine(r as i32)] = row;
    }
}

/// The cursor style that stands for "the terminal's default" (DECSCUSR 0):
/// one no DECSCUSR can set, so it is told apart from an explicit block.
const DEFAULT_CURSOR: CursorStyle = CursorStyle {
    shape: CursorShape::HollowBlock,
    blinking: false,
};

impl Emulator {
    /// A blank screen of `rows` x `cols` keeping up to `history` lines that
    /// scrolled off; answers to terminal queries are written to `answers`.
    pub fn new(rows: usize, cols: usize, history: usize, answers: Box<dyn Write + Send>) -> Self {
        let size = GridSize {
            rows: rows.max(1),
            cols: cols.max(2),
        };
        let history_limit = history.min(MAX_HISTORY);
        let reports = Arc::new(Mutex::new(Reports {
            answers,
            title: String::new(),
            title_changed: false,
            size,
            events: Vec::new(),
            colors: AnswerColors::default(),
        }));
        let config = Config {
            scrolling_history: history_limit,
            default_cursor_style: DEFAULT_CURSOR,
            ..Config::default()
        };
        let term = Term::new(config, &size, Listener(reports.clone()));
        Emulator {
            term,
            parser: Processor::new(),
            reports,
            osc: OscLimiter::default(),
            parts: Vec::new(),
            printable: Vec::new(),
            history: History::new(history_limit),
            normal_saved: None,
            pushed_at_release: 0,
            parked: None,
        }
    }

    /// Moves the rows that scrolled off into the compact history (but the
    /// newest), keeping the memory alacritty holds for them for more: for
    /// the middle of a flood of output, where rows scroll off by the
    /// thousand a second and only the last of them stay.
    pub fn compact(&mut self) {
        self.unpark();
        compact(&mut self.term, &mut self.history);
    }

    /// [`Emulator::compact`], then gives back the rows alacritty keeps for
    /// history and the compact history's spare room: an idle instance keeps
    /// only what it shows and holds, compact. True when there may have been
    /// some (rows scrolled off since the last time); what is held is kept
    /// as it is.
    pub fn release_spare_rows(&mut self) -> bool {
        self.compact();
        if self.history.pushed() == self.pushed_at_release {
            return false;
        }
        self.pushed_at_release = self.history.pushed();
        if !self.term.mode().contains(TermMode::ALT_SCREEN) {
            self.term.grid_mut().truncate();
        }
        self.history.shrink_to_fit();
        true
    }

    /// Puts the cells of both screens (and of the rows alacritty holds
    /// for history) away as compact rows while the screen is quiet: an
    /// idle shell's screen is mostly blank rows of 24-byte cells. Whatever
    /// reads or writes the screen next puts them back first
    /// ([`Emulator::unpark`]); the methods of this type that do so call it
    /// themselves, and a caller that reads the grid through a shared
    /// reference ([`Emulator::image_marks`]) calls it before.
    pub fn park(&mut self) {
        if self.parked.is_some() {
            return;
        }
        let shown = parked::park(self.term.grid_mut());
        let other = parked::park(self.term.inactive_grid_mut());
        self.parked = Some(parked::Parked { shown, other });
    }

    /// Puts back the cells [`Emulator::park`] put away; nothing when none
    /// are.
    pub fn unpark(&mut self) {
        if let Some(parked::Parked { shown, other }) = self.parked.take() {
            parked::unpark(self.term.grid_mut(), shown);
            parked::unpark(self.term.inactive_grid_mut(), other);
        }
    }

    /// Whether the cells are put away now ([`Emulator::park`]).
    pub fn is_parked(&self) -> bool {
        self.parked.is_some()
    }

    /// Apply output of the Tick's terminal (any chunking is fine).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.unpark();
        let mut parts = std::mem::take(&mut self.parts);
        parts.clear();
        self.osc.filter(bytes, &mut parts);
        for part in &parts {
            let mut feeding = Feeding {
                term: &mut self.term,
                history: &mut self.history,
                normal_saved: &mut self.normal_saved,
                printable: &mut self.printable,
            };
            self.parser.advance(&mut feeding, &bytes[part.clone()]);
        }
        self.parts = parts;
        self.end_stale_sync();
        trim(&self.term, &mut self.history);
    }

    /// A synchronized update (mode 2026) holds output back until it ends or
    /// times out (150 ms); a Tick that never ends it must not freeze its
    /// screen, so the timeout is honoured whenever the screen is read.
    fn end_stale_sync(&mut self) {
        if self
            .parser
            .sync_timeout()
            .sync_timeout()
            .is_some_and(|deadline| deadline <= Instant::now())
        {
            let mut feeding = Feeding {
                term: &mut self.term,
                history: &mut self.history,
                normal_saved: &mut self.normal_saved,
                printable: &mut self.printable,
            };
            self.parser.stop_sync(&mut feeding);
        }
    }

    /// The whole screen for a view: text, colours, attributes, cursor, modes.
    pub fn snapshot(&mut self) -> Snapshot {
        self.snapshot_scrolled(0)
    }

    /// The screen as a view scrolled `offset` lines back into history sees
    /// it (clamped to the history held). The cursor is hidden when scrolled.
    pub fn snapshot_scrolled(&mut self, offset: usize) -> Snapshot {
        self.unpark();
        self.end_stale_sync();
        let title = self
            .reports
            .lock()
            .map(|r| r.title.clone())
            .unwrap_or_default();
        screen_model::snapshot(&self.term, &self.history, offset, title, DEFAULT_CURSOR)
    }

    /// Answer the Tick's colour queries from `colors` (shared: whoever
    /// holds a clone sets them).
    pub fn answer_colors_from(&mut self, colors: AnswerColors) {
        if let Ok(mut reports) = self.reports.lock() {
            reports.colors = colors;
        }
    }

    /// The bells and clipboard writes since the last call, oldest first
    /// (at most 64 are kept between two calls).
    pub fn take_events(&mut self) -> Vec<TermEvent> {
        self.reports
            .lock()
            .map(|mut r| std::mem::take(&mut r.events))
            .unwrap_or_default()
    }

    /// The title the program gave its terminal (OSC 0/2), when it changed
    /// since the last call (cheap when it did not: this runs after every
    /// chunk of output).
    pub fn take_title_change(&mut self) -> Option<String> {
        let mut reports = self.reports.lock().ok()?;
        if !std::mem::take(&mut reports.title_changed) {
            return None;
        }
        Some(reports.title.clone())
    }

    /// Lines of history held now (as views and `screen` see them: none on
    /// the alternate screen).
    pub fn history_len(&self) -> usize {
        history::shown_len(&self.term, &self.history)
    }

    /// Memory held by the screen and its history.
    pub fn footprint(&self) -> Footprint {
        let grid = self.term.grid();
        let cells = (grid.total_lines() + grid.screen_lines()) * grid.columns();
        Footprint {
            history_len: self.history_len(),
            history_limit: self.history.limit(),
            cell_bytes: cells * std::mem::size_of::<alacritty_terminal::term::cell::Cell>()
                + self.history.bytes(),
        }
    }

    /// The Tick's terminal modes (alacritty's `TermMode` bits), which
    /// views' input is encoded for.
    pub fn input_modes(&self) -> u32 {
        self.term.mode().bits()
    }

    /// Encode a view's key, paste, mouse or focus event for the Tick's
    /// current modes; it is written to the `answers` writer (the PTY).
    pub fn view_input(&mut self, event: &ViewEvent) -> Result<(), screen_model::InputError> {
        let bytes = screen_model::encode_input(*self.term.mode(), event)?;
        if bytes.is_empty() {
            return Ok(());
        }
        let mut reports = self
            .reports
            .lock()
            .map_err(|_| screen_model::InputError::gone("input"))?;
        reports
            .answers
            .write_all(&bytes)
            .map_err(|e| screen_model::InputError::write("input", e))
    }

    /// Change the screen size (the PTY itself is resized by the caller).
    /// Lines are re-wrapped to the new width, as tmux does, history
    /// included: the compact history goes back into alacritty's grid for
    /// the resize (which then reflows it and pulls lines back onto a taller
    /// screen exactly as it would have kept them) and comes out again.
    pub fn resize(&mut self, rows: usize, cols: usize) {
        self.unpark();
        let size = GridSize {
            rows: rows.max(1),
            cols: cols.max(2),
        };
        if let Ok(mut reports) = self.reports.lock() {
            reports.size = size;
        }
        let (old_rows, old_cols) = (self.term.screen_lines(), self.term.columns());
        if (old_rows, old_cols) == (size.rows, size.cols) {
            return;
        }
        // Only a width change reflows the history; a taller screen pulls
        // up to the added lines back from it; a shorter one pushes lines in.
        let back = if old_cols != size.cols {
            usize::MAX
        } else {
            size.rows.saturating_sub(old_rows)
        };
        // On the alternate screen the history belongs to the normal one,
        // which alacritty keeps out of reach: swap to it for the resize and
        // back, keeping the alternate screen as it was (see below).
        let alt = self
            .term
            .mode()
            .contains(TermMode::ALT_SCREEN)
            .then(|| self.term.grid().clone());
        if alt.is_some() {
            self.term.swap_alt();
            if let Some(saved) = self.normal_saved.take() {
                self.term.grid_mut().saved_cursor = saved;
            }
        }
        move_all(&mut self.term, &mut self.history);
        let grid = self.term.grid_mut();
        let rows_back = self.history.take_newest(back, old_cols);
        put_back(grid, rows_back);
        self.term.resize(size);
        compact(&mut self.term, &mut self.history);
        if back > 0 {
            self.term.grid_mut().truncate();
        }
        if let Some(mut alt_grid) = alt {
            // Swapping into the alternate screen clears it (put back here,
            // resized as alacritty resizes an inactive screen: no reflow)
            // and makes the normal screen's cursor its DECSC point, as
            // entering it does; alacritty's resize moved that point apart
            // from the cursor, so it is kept aside and put back when the
            // normal screen is shown again (or here, at the next resize).
            self.normal_saved = Some(self.term.grid().saved_cursor.clone());
            self.term.swap_alt();
            alt_grid.resize(false, size.rows, size.cols);
            *self.term.grid_mut() = alt_grid;
        }
    }

    /// The visible screen as text, with the cursor and up to `history`
    /// lines of history.
    pub fn text(&mut self, history: usize) -> ScreenText {
        self.unpark();
        self.end_stale_sync();
        let grid = self.term.grid();
        let rows = grid.screen_lines();
        let cols = grid.columns();
        let mut lines: Vec<String> = (0..rows)
            .map(|r| screen_model::row_text(&grid[GridLine(r as i32)], cols))
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        let held = history::shown_len(&self.term, &self.history);
        let take = history.min(held);
        let history = (held - take..held)
            .filter_map(|i| history::shown_row(&self.term, &self.history, i, cols))
            .map(|row| screen_model::row_text(&row, cols))
            .collect();
        let cursor = grid.cursor.point;
        let cell_bytes = self.footprint().cell_bytes;
        ScreenText {
            rows,
            cols,
            cursor_row: usize::try_from(cursor.line.0).unwrap_or(0),
            cursor_col: cursor.column.0.min(cols.saturating_sub(1)),
            lines,
            history,
            history_len: held,
            cell_bytes,
            images: Vec::new(),
            image_bytes: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reports::MAX_EVENTS;
    use super::*;
    use std::sync::mpsc;
    use tickloop_proto::attach::TermColors;

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

    fn emulator(rows: usize, cols: usize, history: usize) -> (Emulator, mpsc::Receiver<Vec<u8>>) {
        let (tx, rx) = mpsc::channel();
        (
            Emulator::new(rows, cols, history, Box::new(ChanWriter(tx))),
            rx,
        )
    }

    #[test]
    fn text_trims_and_reports_cursor() {
        let (mut emu, _rx) = emulator(30, 120, DEFAULT_HISTORY);
        emu.feed(b"hello   \r\nworld");
        let text = emu.text(0);
        assert_eq!(text.rows, 30);
        assert_eq!(text.cols, 120);
        assert_eq!(text.lines, vec!["hello".to_string(), "world".to_string()]);
        assert_eq!((text.cursor_row, text.cursor_col), (1, 5));
        assert_eq!(text.head(7), "hello\nw");
        assert!(text.history.is_empty());
    }

    #[test]
    fn history_keeps_what_scrolled_off_up_to_the_limit() {
        let (mut emu, _rx) = emulator(5, 20, 10);
        for i in 0..30 {
            emu.feed(format!("line {i}\r\n").as_bytes());
        }
        let text = emu.text(100);
        // 30 lines and an empty last row: 26 scrolled off, 10 are kept.
        assert_eq!(text.history_len, 10);
        assert_eq!(text.history.len(), 10);
        assert_eq!(text.history[0], "line 16");
        assert_eq!(text.history[9], "line 25");
        assert_eq!(text.lines[0], "line 26");
        assert_eq!(emu.text(3).history, vec!["line 23", "line 24", "line 25"]);
        let (mut none, _rx) = emulator(5, 20, 0);
        for i in 0..30 {
            none.feed(format!("line {i}\r\n").as_bytes());
        }
        assert_eq!(none.text(100).history_len, 0);
        let footprint = emu.footprint();
        assert_eq!((footprint.history_len, footprint.history_limit), (10, 10));
        assert!(footprint.cell_bytes >= 15 * 20);
    }

    /// Two emulators fed the same output, one of them parked before each
    /// chunk and after each read: every frame, scrolled or not, and every
    /// text is the same, and so is what later output does to the screen
    /// (a reset after a coloured erase, a resize while parked, the
    /// alternate screen's own parked cells).
    #[test]
    fn a_parked_screen_reads_and_goes_on_as_one_never_parked() {
        let (mut parked, _a) = emulator(12, 40, DEFAULT_HISTORY);
        let (mut plain, _b) = emulator(12, 40, DEFAULT_HISTORY);
        let mut chunks: Vec<Vec<u8>> = vec![
            b"plain \x1b[1;31mbold red\x1b[0m \x1b[4:3m\x1b[58;2;10;20;30mcurly\x1b[0m\r\n".to_vec(),
            "wide \u{4e16}\u{754c} e\u{301} \u{1f469}\u{200d}\u{1f52c}\r\n"
                .as_bytes()
                .to_vec(),
            b"\x1b]8;id=x;https://example.com\x07link\x1b]8;;\x07 \x1b]8;;https://a.b\x07anon\x1b]8;;\x07\r\n".to_vec(),
            b"\x1b[44m\x1b[2J\x1b[Hblue erase\x1b[0m\r\n".to_vec(),
            b"\x1b7\x1b[5;20Hsaved\x1b8tab\there\r\n".to_vec(),
            b"\x1b[3;8r\x1b[8;1Hregion\n\n\n\x1b[r".to_vec(),
            b"\x1b[?1049h\x1b[48;5;200malt \x1b[Kscreen\x1b[0m".to_vec(),
            b"\x1b[?1049l after alt\r\n".to_vec(),
            b"\x1b[?1049h\x1b[Hsecond alt".to_vec(),
        ];
        for i in 0..30 {
            chunks.push(format!("\x1b[3{}mscroll {i} {}\x1b[0m\r\n", i % 8, "x".repeat(i)).into());
        }
        chunks.push(b"\x1b[?1049l\x1b[2J\x1b[Hreset\x1bc after".to_vec());
        let mut sizes = [(8, 30), (14, 50), (12, 40)].into_iter().cycle();
        for (n, chunk) in chunks.iter().enumerate() {
            parked.park();
            assert!(parked.is_parked());
            if n % 7 == 3 {
                // A resize while parked.
                let (rows, cols) = sizes.next().unwrap_or((12, 40));
                parked.resize(rows, cols);
                plain.resize(rows, cols);
                parked.park();
            }
            parked.feed(chunk);
            plain.feed(chunk);
            assert!(!parked.is_parked());
            for offset in [0, 3, 100] {
                parked.park();
                assert_eq!(
                    parked.snapshot_scrolled(offset),
                    plain.snapshot_scrolled(offset),
                    "chunk {n}, {offset} lines back"
                );
            }
            parked.park();
            assert_eq!(parked.text(100), plain.text(100), "chunk {n}");
        }
    }

    /// Parked, an idle screen's cells take a few bytes a row.
    #[test]
    fn a_parked_screen_holds_its_rows_compact() {
        let (mut emu, _rx) = emulator(30, 120, DEFAULT_HISTORY);
        emu.feed(b"user@host:~$ ");
        emu.park();
        let shown_cells = (0..30)
            .map(|r| emu.term.grid()[GridLine(r)].len())
            .sum::<usize>();
        assert_eq!(shown_cells, 0, "alacritty's rows are empty while parked");
        let Some((shown, other)) = emu.parked.as_ref().map(|p| (p.shown.len(), p.other.len()))
        else {
            panic!("not parked");
        };
        // 30 rows of 8 bytes of framing, one byte each when blank, and the
        // prompt's few: against 86,400 bytes of cells.
        assert!(shown < 400, "{shown} bytes for a prompt and blank rows");
        assert!(other < 16, "{other} bytes for the unused alternate screen");
        emu.unpark();
        assert_eq!(emu.text(0).lines, vec!["user@host:~$".to_string()]);
    }

    #[test]
    fn giving_back_spare_rows_keeps_the_history_and_the_screen() {
        let (mut emu, _rx) = emulator(30, 120, DEFAULT_HISTORY);
        assert!(!emu.release_spare_rows(), "no history yet");
        for i in 0..40 {
            emu.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
        }
        let (text, snapshot) = (emu.text(100), emu.snapshot_scrolled(5));
        assert_eq!(text.history_len, 11);
        assert!(emu.release_spare_rows());
        assert!(!emu.release_spare_rows(), "nothing new to give back");
        // The same screen and history, in less memory.
        let after = emu.text(100);
        assert!(after.cell_bytes < text.cell_bytes);
        assert_eq!(
            ScreenText {
                cell_bytes: text.cell_bytes,
                ..after
            },
            text
        );
        assert_eq!(emu.snapshot_scrolled(5), snapshot);
        // History grows again past the rows it gave back.
        for i in 40..3000 {
            emu.feed(format!("line {i}\r\n").as_bytes());
        }
        let text = emu.text(1);
        assert_eq!(text.history_len, DEFAULT_HISTORY);
        assert_eq!(text.history, vec!["line 2970"]);
        assert!(emu.release_spare_rows());
        let after = emu.text(1);
        assert_eq!(
            (after.history, after.history_len),
            (text.history, text.history_len)
        );
        assert_eq!(after.lines, text.lines);
    }

    #[test]
    fn a_reset_clears_a_row_widened_by_a_resize() {
        // Rows cleared with a background colour, then widened: alacritty
        // 0.26 alone left the coloured cells behind after RIS.
        let (mut emu, _rx) = emulator(2, 10, 100);
        emu.feed(b"\x1b[44m\x1b[2J\x1b[0m");
        emu.resize(2, 24);
        emu.feed(b"\x1bc");
        let snapshot = emu.snapshot();
        assert!(
            snapshot.lines.iter().all(|line| line.runs.is_empty()),
            "{:?}",
            snapshot.lines
        );
    }

    #[test]
    fn history_is_kept_compact_and_read_back_whole() {
        let (mut emu, _rx) = emulator(5, 20, 100);
        for i in 0..30 {
            emu.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
        }
        let text = emu.text(100);
        assert_eq!(text.history_len, 26);
        assert_eq!(text.history[0], "line 0");
        assert_eq!(text.history[25], "line 25");
        // Scrolled back, the colours come back too.
        let back = emu.snapshot_scrolled(26);
        assert_eq!(back.lines[0].text(), "line 0");
        assert_eq!(
            back.lines[1].runs[0].attrs.fg,
            Some(tickloop_proto::attach::Color::Index(1))
        );
        // Once compacted, far less than alacritty's cells (24 bytes x 20
        // columns a line).
        emu.release_spare_rows();
        assert!(emu.footprint().cell_bytes < (5 + 6) * 20 * 24 + 26 * 40);
        // Narrower: history is reflowed with the screen.
        emu.resize(5, 4);
        let narrow = emu.text(200);
        assert_eq!(narrow.history[0..2], ["line".to_string(), " 0".to_string()]);
    }

    #[test]
    fn snapshot_after_a_long_run_of_output() {
        let (mut emu, _rx) = emulator(30, 120, DEFAULT_HISTORY);
        for i in 0..5000 {
            emu.feed(format!("\x1b[3{}mline {i}\x1b[0m\r\n", i % 8).as_bytes());
        }
        emu.feed(b"last");
        let snapshot = emu.snapshot();
        assert_eq!(snapshot.lines.len(), 30);
        assert_eq!(snapshot.lines[29].text(), "last");
        assert_eq!(snapshot.lines[28].text(), "line 4999");
        assert_eq!(emu.text(0).lines.last().map(String::as_str), Some("last"));
        // Scrolled back 100 lines: the bottom row is 100 lines earlier.
        let back = emu.snapshot_scrolled(100);
        assert_eq!(back.lines[29].text(), "line 4900");
        assert!(!back.cursor.visible);
        // Past the history, the top row is its oldest line.
        let top = emu.snapshot_scrolled(1_000_000);
        assert_eq!(top.lines[0].text(), "line 2971");
    }

    #[test]
    fn answers_cursor_position_query() {
        let (mut emu, rx) = emulator(30, 120, 0);
        emu.feed(b"\x1b[3;7H\x1b[6n");
        let answer = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("an answer");
        assert_eq!(answer, b"\x1b[3;7R");
    }

    #[test]
    fn image_protocols_are_dropped_and_text_survives() {
        let (mut emu, _rx) = emulator(5, 40, 0);
        emu.feed(b"a\x1bPq#0;2;0;0;0#1~~@@vv@@~~$-\x1b\\b");
        emu.feed(b"\x1b_Gf=24,s=1,v=1;AAAA\x1b\\c");
        emu.feed(b"\x1b]1337;File=inline=1:AAAA\x07d");
        assert_eq!(emu.text(0).lines, vec!["abcd".to_string()]);
    }

    #[test]
    fn a_huge_osc_payload_does_not_reach_the_screen() {
        let mut stream = b"x\x1b]1337;File=".to_vec();
        stream.extend(std::iter::repeat_n(b'A', MAX_OSC_PAYLOAD * 2));
        stream.extend(b"\x07y");
        let (mut emu, _rx) = emulator(3, 20, 0);
        emu.feed(&stream);
        assert_eq!(emu.text(0).lines, vec!["xy".to_string()]);
    }

    #[test]
    fn title_changes_are_told_once() {
        let (mut emu, _rx) = emulator(3, 20, 0);
        assert_eq!(emu.take_title_change(), None);
        emu.feed(b"\x1b]2;one\x07");
        assert_eq!(emu.take_title_change().as_deref(), Some("one"));
        assert_eq!(emu.take_title_change(), None);
        emu.feed(b"\x1b]2;one\x07text");
        assert_eq!(emu.take_title_change(), None, "the same title again");
        emu.feed(b"\x1b]0;two\x07");
        assert_eq!(emu.take_title_change().as_deref(), Some("two"));
    }

    #[test]
    fn bells_and_clipboard_writes_are_events_and_reads_are_refused() {
        let (mut emu, rx) = emulator(3, 20, 0);
        // "copied" in base64, to the clipboard; then a read request.
        emu.feed(b"a\x07b\x1b]52;c;Y29waWVk\x07\x1b]52;c;?\x07");
        assert_eq!(
            emu.take_events(),
            vec![
                TermEvent::Bell,
                TermEvent::Clipboard {
                    selection: false,
                    text: "copied".into()
                }
            ]
        );
        assert!(emu.take_events().is_empty());
        assert!(rx.try_recv().is_err(), "a clipboard read is not answered");
        for _ in 0..100 {
            emu.feed(b"\x07");
        }
        assert_eq!(emu.take_events().len(), MAX_EVENTS);
    }

    #[test]
    fn combining_marks_in_a_row_are_bounded() {
        let (mut emu, _rx) = emulator(3, 20, 0);
        let mut text = String::from("e");
        for _ in 0..1000 {
            // Marks, with cursor moves between them that must not reset.
            text.push_str("\u{301}\x1b[1;2H");
        }
        text.push_str("\x1b[1;3Hx\u{301}");
        emu.feed(text.as_bytes());
        let line = emu.text(0).lines[0].clone();
        let marks = line.chars().filter(|c| *c == '\u{301}').count();
        assert_eq!(marks, MAX_MARKS + 1, "{line:?}");
        assert!(
            line.starts_with('e') && line.ends_with("x\u{301}"),
            "{line:?}"
        );
    }

    #[test]
    fn answers_colour_queries_with_the_views_colours() {
        let (mut emu, rx) = emulator(3, 20, 0);
        emu.feed(b"\x1b]11;?\x07");
        let first = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("an answer");
        assert_eq!(first, b"\x1b]11;rgb:0000/0000/0000\x07");
        let colors = AnswerColors::default();
        emu.answer_colors_from(colors.clone());
        colors.set(&TermColors {
            fg: Some("#101010".into()),
            bg: Some("#ffffff".into()),
            palette: vec![(1, "#123456".into())],
        });
        emu.feed(b"\x1b]10;?\x1b\\\x1b]11;?\x1b\\\x1b]4;1;?\x07\x1b]4;2;?\x07");
        let mut got = Vec::new();
        while let Ok(bytes) = rx.recv_timeout(std::time::Duration::from_secs(1)) {
            got.extend(bytes);
            if got.windows(4).filter(|w| *w == b"rgb:").count() == 4 {
                break;
            }
        }
        let got = String::from_utf8(got).expect("text");
        assert!(got.contains("]10;rgb:1010/1010/1010"), "{got:?}");
        assert!(got.contains("]11;rgb:ffff/ffff/ffff"), "{got:?}");
        // The view's palette entry, and xterm's for one no view said.
        assert!(got.contains("]4;1;rgb:1212/3434/5656"), "{got:?}");
        assert!(got.contains("]4;2;rgb:0000/cdcd/0000"), "{got:?}");
        // A colour that is not #rrggbb changes nothing.
        assert!(!colors.set(&TermColors {
            fg: Some("white".into()),
            ..TermColors::default()
        }));
        emu.feed(b"\x1b]10;?\x07");
        let again = String::from_utf8(
            rx.recv_timeout(std::time::Duration::from_secs(10))
                .expect("an answer"),
        )
        .expect("text");
        assert!(again.contains("]10;rgb:1010/1010/1010"), "{again:?}");
    }
}
