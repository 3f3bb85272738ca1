//! A ratatui terminal on `/dev/tty` (feature `tui`): stdin and stdout carry
//! the protocol, so the interface is drawn on the controlling terminal and
//! crossterm reads keys from it (crossterm opens `/dev/tty` itself when
//! stdin is not a terminal, which under a host it never is).
//!
//! [`Tui::open`] enters raw mode and the alternate screen; dropping the
//! [`Tui`] leaves them. Resizes arrive as [`Event::Resize`] (SIGWINCH):
//! redraw, but send no update for them (section 8.3).

pub use crossterm;
pub use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
pub use ratatui;

use crossterm::{cursor, execute, terminal};
use ratatui::backend::CrosstermBackend;
use ratatui::{Frame, Terminal};
use std::fs::File;
use std::time::Duration;

/// Why the terminal could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    #[error("cannot open the controlling terminal /dev/tty: {0}")]
    Open(std::io::Error),
    #[error("cannot set up the terminal: {0}")]
    Setup(std::io::Error),
    #[error("cannot draw on the terminal: {0}")]
    Draw(std::io::Error),
    #[error("cannot read the terminal's keys: {0}")]
    Read(std::io::Error),
}

/// A full-screen ratatui terminal on `/dev/tty`.
pub struct Tui {
    terminal: Terminal<CrosstermBackend<File>>,
}

impl Tui {
    /// Opens `/dev/tty`, enters raw mode and the alternate screen and hides
    /// the cursor.
    pub fn open() -> Result<Tui, TuiError> {
        let mut tty = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(TuiError::Open)?;
        terminal::enable_raw_mode().map_err(TuiError::Setup)?;
        execute!(tty, terminal::EnterAlternateScreen, cursor::Hide).map_err(TuiError::Setup)?;
        let terminal = Terminal::new(CrosstermBackend::new(tty)).map_err(TuiError::Setup)?;
        Ok(Tui { terminal })
    }

    /// Draws a frame (ratatui sends only the cells that changed).
    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) -> Result<(), TuiError> {
        self.terminal
            .draw(render)
            .map(|_| ())
            .map_err(TuiError::Draw)
    }

    /// The next key, resize or other terminal event, or `None` after
    /// `timeout` without one (so the caller can redraw for other reasons).
    pub fn next_event(&mut self, timeout: Duration) -> Result<Option<Event>, TuiError> {
        if crossterm::event::poll(timeout).map_err(TuiError::Read)? {
            crossterm::event::read().map(Some).map_err(TuiError::Read)
        } else {
            Ok(None)
        }
    }

    /// The ratatui terminal, for what [`Tui::draw`] does not cover.
    pub fn terminal(&mut self) -> &mut Terminal<CrosstermBackend<File>> {
        &mut self.terminal
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = execute!(
            self.terminal.backend_mut(),
            terminal::LeaveAlternateScreen,
            cursor::Show
        );
        let _ = terminal::disable_raw_mode();
    }
}

/// Whether `event` is a key press (not a release or repeat report).
pub fn key_press(event: &Event) -> Option<&KeyEvent> {
    match event {
        Event::Key(key) if key.kind == KeyEventKind::Press => Some(key),
        _ => None,
    }
}
