//! What the emulator reports besides the screen: the answers to the Tick's
//! queries (written straight to the PTY), the title, bells and clipboard
//! writes ([`TermEvent`]), and the colours the colour queries are answered
//! with ([`AnswerColors`]).

use super::GridSize;
use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::vte::ansi::Rgb;
use std::io::Write;
use std::sync::{Arc, Mutex};
use tickloop_proto::attach::TermColors;

/// What the Tick said to its terminal that is not on the screen and that a
/// person's terminal should hear too (views pass it on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermEvent {
    /// The bell (BEL).
    Bell,
    /// A clipboard write (OSC 52); `selection` is the primary selection
    /// rather than the clipboard. Reads are refused by the keeper.
    Clipboard { selection: bool, text: String },
}

/// The most [`TermEvent`]s held between two [`Emulator::take_events`].
pub(super) const MAX_EVENTS: usize = 64;

/// What the emulator reports besides the screen: answers to the Tick's
/// queries go straight to the PTY; the title is kept for snapshots; bells
/// and clipboard writes wait for [`Emulator::take_events`].
pub(super) struct Reports {
    pub(super) answers: Box<dyn Write + Send>,
    pub(super) title: String,
    /// The title changed since [`Emulator::take_title_change`] last looked.
    pub(super) title_changed: bool,
    pub(super) size: GridSize,
    pub(super) events: Vec<TermEvent>,
    /// What the Tick's colour queries are answered with.
    pub(super) colors: AnswerColors,
}

/// The colours the Tick's colour queries (OSC 10, 11 and 4) are answered
/// with: the person's terminal's own, as the most recently active view that
/// knew them reported them, kept when views leave. Shared between the
/// launcher, which sets them as views report and become active, and the
/// emulator, which reads them when the Tick asks; what no view said is
/// answered with the defaults of [`default_color`].
#[derive(Clone, Default)]
pub struct AnswerColors(Arc<Mutex<ColorSet>>);

#[derive(Default)]
struct ColorSet {
    fg: Option<Rgb>,
    bg: Option<Rgb>,
    /// The 16 ANSI colours.
    palette: [Option<Rgb>; 16],
}

impl AnswerColors {
    /// Takes what `colors` says; an unreadable colour keeps the one before.
    /// Whether anything changed.
    pub fn set(&self, colors: &TermColors) -> bool {
        let Ok(mut set) = self.0.lock() else {
            return false;
        };
        let before = (set.fg, set.bg, set.palette);
        if let Some(fg) = colors.fg.as_deref().and_then(parse_hex) {
            set.fg = Some(fg);
        }
        if let Some(bg) = colors.bg.as_deref().and_then(parse_hex) {
            set.bg = Some(bg);
        }
        for (index, color) in &colors.palette {
            if let (Some(slot), Some(rgb)) =
                (set.palette.get_mut(usize::from(*index)), parse_hex(color))
            {
                *slot = Some(rgb);
            }
        }
        before != (set.fg, set.bg, set.palette)
    }

    /// The answer for palette entry `index` (256 the foreground, 257 the
    /// background, as alacritty numbers them).
    fn get(&self, index: usize) -> Rgb {
        let known = self.0.lock().ok().and_then(|set| match index {
            256 => set.fg,
            257 => set.bg,
            _ => set.palette.get(index).copied().flatten(),
        });
        known.unwrap_or_else(|| default_color(index))
    }
}

/// The emulator's event sink, shared with [`Emulator`].
#[derive(Clone)]
pub(super) struct Listener(pub(super) Arc<Mutex<Reports>>);

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        let Ok(mut reports) = self.0.lock() else {
            return;
        };
        // Writes go to a queue that never blocks (see terminal.rs); a full
        // queue drops the answer, which a Tick survives.
        match event {
            Event::PtyWrite(text) => {
                let _ = reports.answers.write_all(text.as_bytes());
            }
            Event::Title(title) => {
                reports.title_changed |= reports.title != title;
                reports.title = title;
            }
            Event::Bell if reports.events.len() < MAX_EVENTS => {
                reports.events.push(TermEvent::Bell);
            }
            Event::ClipboardStore(kind, text) if reports.events.len() < MAX_EVENTS => {
                let selection = matches!(kind, alacritty_terminal::term::ClipboardType::Selection);
                reports
                    .events
                    .push(TermEvent::Clipboard { selection, text });
            }
            Event::ResetTitle => {
                reports.title_changed |= !reports.title.is_empty();
                reports.title.clear();
            }
            Event::ColorRequest(index, format) => {
                let answer = format(reports.colors.get(index));
                let _ = reports.answers.write_all(answer.as_bytes());
            }
            Event::TextAreaSizeRequest(format) => {
                let size = reports.size;
                let answer = format(WindowSize {
                    num_lines: u16::try_from(size.rows).unwrap_or(u16::MAX),
                    num_cols: u16::try_from(size.cols).unwrap_or(u16::MAX),
                    cell_width: 0,
                    cell_height: 0,
                });
                let _ = reports.answers.write_all(answer.as_bytes());
            }
            _ => {}
        }
    }
}

/// The colour answered for a query of palette entry `index` (256 is the
/// foreground, 257 the background, 258 the cursor) when no view said it:
/// xterm's default palette (XTerm's `XTerm-col.ad`: `#cd0000` for red and
/// so on, the 6x6x6 cube and the greys above 15), a light grey `#e5e5e5`
/// foreground and cursor and a black background.
fn default_color(index: usize) -> Rgb {
    let (r, g, b) = match index {
        0..=255 => tickloop_proto::attach::xterm_rgb(index as u8),
        257 => (0, 0, 0),
        _ => (229, 229, 229),
    };
    Rgb { r, g, b }
}

/// `#rrggbb` as a colour.
fn parse_hex(text: &str) -> Option<Rgb> {
    let hex = text
        .strip_prefix('#')
        .filter(|h| h.len() == 6 && h.is_ascii())?;
    let channel = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some(Rgb {
        r: channel(0)?,
        g: channel(2)?,
        b: channel(4)?,
    })
}
