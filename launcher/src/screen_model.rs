//! Between the emulator and the attach protocol: pure functions that turn a
//! `wezterm_term::Terminal` into an [`attach::Snapshot`](crate::attach::Snapshot),
//! and a view's [`ViewEvent`]s into the Terminal's `key_down`, `send_paste`,
//! `mouse_event` and `focus_changed`, which encode them for the Tick's
//! current modes and write them to the PTY through the emulator's writer.
//!
//! wezterm-term keeps some of the modes a view needs to know about private
//! (application cursor keys and keypad, focus reporting, which mouse events
//! the Tick asked for); [`ModeTracker`] follows them by scanning the same
//! bytes the emulator is fed, which costs a byte scan, not a second parse.
//! Changed rows are found by comparing two snapshots
//! ([`Snapshot::diff`](crate::attach::Snapshot::diff)), which also covers
//! scrolling, where the emulator's per-line sequence numbers would not.

use crate::attach::{
    self, Attrs, Color, Cursor, CursorShape, Key, Line, Modes, Mods, MouseKind, MouseTracking, Run,
    Snapshot, ViewEvent,
};
use termwiz::surface::{CursorShape as WezShape, CursorVisibility};
use wezterm_term::color::ColorAttribute;
use wezterm_term::{
    Blink, CellAttributes, Intensity, KeyCode, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind, Terminal, Underline,
};

/// Writing an event to the Tick failed: the PTY's writer is gone (the Tick
/// is ending); the view's event is dropped.
#[derive(Debug, thiserror::Error)]
#[error("cannot send the view's {what} to the Tick: {source}")]
pub struct InputError {
    what: &'static str,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

/// Follows the terminal modes wezterm-term does not expose, by scanning the
/// Tick's output for `CSI ? Pm h/l`, `ESC =`, `ESC >`, `ESC c` and soft reset.
/// Feed it exactly the bytes the emulator gets, in order; sequences split
/// across chunks are handled.
#[derive(Debug, Default, Clone)]
pub struct ModeTracker {
    state: ScanState,
    params: Vec<u16>,
    current: Option<u32>,
    app_cursor_keys: bool,
    app_keypad: bool,
    focus_events: bool,
    mouse_click: bool,
    mouse_drag: bool,
    mouse_motion: bool,
    mouse_sgr: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum ScanState {
    #[default]
    Ground,
    Esc,
    /// `ESC [` seen; the next byte says whether it is private (`?`).
    Csi,
    /// Inside `ESC [ ?`, collecting parameters.
    Private,
    /// Inside `ESC [ !`.
    Bang,
    /// Inside some other CSI: skip to its final byte.
    OtherCsi,
}

impl ModeTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Scan a chunk of the Tick's output.
    pub fn observe(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.step(b);
        }
    }

    fn step(&mut self, b: u8) {
        use ScanState::*;
        // CAN and SUB abort a sequence; ESC starts a new one anywhere.
        if b == 0x18 || b == 0x1a {
            self.state = Ground;
            return;
        }
        if b == 0x1b {
            self.state = Esc;
            return;
        }
        match self.state {
            Ground => {}
            Esc => {
                self.state = Ground;
                match b {
                    b'[' => {
                        self.state = Csi;
                        self.params.clear();
                        self.current = None;
                    }
                    b'=' => self.app_keypad = true,
                    b'>' => self.app_keypad = false,
                    b'c' => self.reset(),
                    _ => {}
                }
            }
            Csi => match b {
                b'?' => self.state = Private,
                b'!' => self.state = Bang,
                0x40..=0x7e => self.state = Ground,
                _ => self.state = OtherCsi,
            },
            Bang => {
                if b == b'p' {
                    self.soft_reset();
                }
                if (0x40..=0x7e).contains(&b) {
                    self.state = Ground;
                }
            }
            OtherCsi => {
                if (0x40..=0x7e).contains(&b) {
                    self.state = Ground;
                }
            }
            Private => match b {
                b'0'..=b'9' => {
                    let digit = u32::from(b - b'0');
                    self.current = Some(
                        self.current
                            .unwrap_or(0)
                            .saturating_mul(10)
                            .saturating_add(digit),
                    );
                }
                b';' => self.push_param(),
                b'h' | b'l' => {
                    self.push_param();
                    let on = b == b'h';
                    for i in 0..self.params.len() {
                        self.set_private(self.params[i], on);
                    }
                    self.state = Ground;
                }
                0x40..=0x7e => self.state = Ground,
                _ => {}
            },
        }
    }

    fn push_param(&mut self) {
        let value = self.current.take().unwrap_or(0);
        // A runaway parameter list is not a mode change we care about.
        if self.params.len() < 32 {
            self.params.push(u16::try_from(value).unwrap_or(u16::MAX));
        }
    }

    fn set_private(&mut self, mode: u16, on: bool) {
        match mode {
            1 => self.app_cursor_keys = on,
            1000 => self.mouse_click = on,
            1002 => self.mouse_drag = on,
            1003 => self.mouse_motion = on,
            1004 => self.focus_events = on,
            1006 => self.mouse_sgr = on,
            _ => {}
        }
    }

    fn soft_reset(&mut self) {
        self.app_cursor_keys = false;
        self.app_keypad = false;
    }

    fn reset(&mut self) {
        *self = ModeTracker::default();
    }

    /// The modes as a view sees them. Bracketed paste and whether the mouse
    /// is reported at all come from the terminal itself; the tracker adds
    /// what wezterm-term keeps private.
    pub fn modes(&self, term: &Terminal) -> Modes {
        let mouse = if !term.is_mouse_grabbed() {
            MouseTracking::Off
        } else if self.mouse_motion {
            MouseTracking::Motion
        } else if self.mouse_drag {
            MouseTracking::Drag
        } else {
            MouseTracking::Click
        };
        Modes {
            bracketed_paste: term.bracketed_paste_enabled(),
            mouse,
            mouse_sgr: self.mouse_sgr,
            app_cursor_keys: self.app_cursor_keys,
            app_keypad: self.app_keypad,
            focus_events: self.focus_events,
        }
    }
}

/// The terminal's whole visible screen, cursor, modes and title.
pub fn snapshot(term: &Terminal, modes: &ModeTracker) -> Snapshot {
    let size = term.get_size();
    let cols = clamp_u16(size.cols);
    let rows = clamp_u16(size.rows);
    let screen = term.screen();
    let range = screen.phys_range(&(0..i64::from(rows)));
    // Not `Screen::with_phys_lines`: in this wezterm-term it indexes the
    // second half of the scrollback ring with absolute row numbers and panics
    // once the ring has wrapped (after a few thousand lines of output).
    let mut lines: Vec<Line> = screen
        .lines_in_phys_range(range)
        .iter()
        .map(|line| convert_line(line, size.cols))
        .collect();
    lines.resize(usize::from(rows), Line::default());
    let pos = term.cursor_pos();
    let cursor = Cursor {
        x: clamp_u16(pos.x.min(size.cols.saturating_sub(1))),
        y: clamp_u16(usize::try_from(pos.y.max(0)).unwrap_or(0)).min(rows.saturating_sub(1)),
        visible: pos.visibility == CursorVisibility::Visible,
        shape: convert_shape(pos.shape),
    };
    Snapshot {
        cols,
        rows,
        cursor,
        alt_screen: term.is_alt_screen_active(),
        modes: modes.modes(term),
        title: term.get_title().to_string(),
        lines,
    }
}

fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn convert_shape(shape: WezShape) -> CursorShape {
    use WezShape as W;
    match shape {
        W::Default => CursorShape::Default,
        W::BlinkingBlock => CursorShape::BlinkingBlock,
        W::SteadyBlock => CursorShape::SteadyBlock,
        W::BlinkingUnderline => CursorShape::BlinkingUnderline,
        W::SteadyUnderline => CursorShape::SteadyUnderline,
        W::BlinkingBar => CursorShape::BlinkingBar,
        W::SteadyBar => CursorShape::SteadyBar,
    }
}

/// One emulator line as runs, at most `cols` columns wide, trailing blanks
/// that look like nothing dropped.
pub fn convert_line(line: &wezterm_term::Line, cols: usize) -> Line {
    let mut runs: Vec<Run> = Vec::new();
    let mut col = 0usize;
    let mut push = |text: &str, attrs: Attrs| match runs.last_mut() {
        Some(last) if last.attrs == attrs => last.text.push_str(text),
        _ => runs.push(Run {
            text: text.to_string(),
            attrs,
        }),
    };
    for cell in line.visible_cells() {
        let at = cell.cell_index();
        let width = cell.width().max(1);
        if at + width > cols {
            break;
        }
        // A gap (should not happen after a wide cell) is blank.
        while col < at {
            push(" ", Attrs::default());
            col += 1;
        }
        if at < col {
            continue;
        }
        let text = cell.str();
        push(
            if text.is_empty() { " " } else { text },
            convert_attrs(cell.attrs()),
        );
        col = at + width;
    }
    trim_trailing_blanks(&mut runs);
    Line { runs }
}

/// Whether a blank cell with these attributes looks like an empty cell.
fn blank_is_invisible(attrs: &Attrs) -> bool {
    attrs.bg.is_none()
        && !attrs.reverse
        && attrs.underline == attach::Underline::None
        && !attrs.strikethrough
        && !attrs.overline
}

fn trim_trailing_blanks(runs: &mut Vec<Run>) {
    while let Some(last) = runs.last_mut() {
        if !blank_is_invisible(&last.attrs) {
            return;
        }
        let kept = last.text.trim_end_matches(' ').len();
        if kept == 0 {
            runs.pop();
        } else {
            last.text.truncate(kept);
            return;
        }
    }
}

fn convert_color(color: ColorAttribute) -> Option<Color> {
    match color {
        ColorAttribute::Default => None,
        ColorAttribute::PaletteIndex(i) => Some(Color::Index(i)),
        ColorAttribute::TrueColorWithPaletteFallback(rgb, _)
        | ColorAttribute::TrueColorWithDefaultFallback(rgb) => {
            let (r, g, b, _) = rgb.to_srgb_u8();
            Some(Color::Rgb(r, g, b))
        }
    }
}

fn convert_attrs(a: &CellAttributes) -> Attrs {
    Attrs {
        fg: convert_color(a.foreground()),
        bg: convert_color(a.background()),
        bold: a.intensity() == Intensity::Bold,
        dim: a.intensity() == Intensity::Half,
        italic: a.italic(),
        underline: match a.underline() {
            Underline::None => attach::Underline::None,
            Underline::Single => attach::Underline::Single,
            Underline::Double => attach::Underline::Double,
            Underline::Curly => attach::Underline::Curly,
            Underline::Dotted => attach::Underline::Dotted,
            Underline::Dashed => attach::Underline::Dashed,
        },
        underline_color: convert_color(a.underline_color()),
        blink: a.blink() != Blink::None,
        reverse: a.reverse(),
        invisible: a.invisible(),
        strikethrough: a.strikethrough(),
        overline: a.overline(),
    }
}

fn key_modifiers(mods: Mods) -> KeyModifiers {
    let mut out = KeyModifiers::NONE;
    if mods.shift {
        out |= KeyModifiers::SHIFT;
    }
    if mods.alt {
        out |= KeyModifiers::ALT;
    }
    if mods.ctrl {
        out |= KeyModifiers::CTRL;
    }
    if mods.super_ {
        out |= KeyModifiers::SUPER;
    }
    out
}

fn key_code(key: Key) -> KeyCode {
    match key {
        Key::Char(c) => KeyCode::Char(c),
        Key::Enter => KeyCode::Enter,
        Key::Tab => KeyCode::Tab,
        Key::Backspace => KeyCode::Backspace,
        Key::Escape => KeyCode::Escape,
        Key::Up => KeyCode::UpArrow,
        Key::Down => KeyCode::DownArrow,
        Key::Left => KeyCode::LeftArrow,
        Key::Right => KeyCode::RightArrow,
        Key::Home => KeyCode::Home,
        Key::End => KeyCode::End,
        Key::PageUp => KeyCode::PageUp,
        Key::PageDown => KeyCode::PageDown,
        Key::Insert => KeyCode::Insert,
        Key::Delete => KeyCode::Delete,
        Key::F(n) => KeyCode::Function(n),
    }
}

/// Apply a view's input event to the Tick: keys, paste, mouse and focus are
/// encoded for the Tick's current modes and written through the terminal's
/// writer (the PTY). `Resize` is the size policy's business, not the
/// terminal's: it is ignored here.
pub fn apply_input(term: &mut Terminal, event: &ViewEvent) -> Result<(), InputError> {
    fn fail<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
        what: &'static str,
    ) -> impl FnOnce(E) -> InputError {
        move |source| InputError {
            what,
            source: source.into(),
        }
    }
    match event {
        ViewEvent::Key { key, mods } => {
            let mut mods = *mods;
            // A character arrives with shift already applied ('A', '!'); a
            // SHIFT modifier on top would make some encodings send CSI u.
            if matches!(key, Key::Char(_)) && !mods.ctrl && !mods.alt && !mods.super_ {
                mods.shift = false;
            }
            term.key_down(key_code(*key), key_modifiers(mods))
                .map_err(fail("key"))
        }
        ViewEvent::Paste { text } => term.send_paste(text).map_err(fail("paste")),
        ViewEvent::Mouse {
            x,
            y,
            kind,
            button,
            mods,
        } => {
            if !term.is_mouse_grabbed() {
                return Ok(());
            }
            let button = match button {
                attach::MouseButton::Left => MouseButton::Left,
                attach::MouseButton::Middle => MouseButton::Middle,
                attach::MouseButton::Right => MouseButton::Right,
                attach::MouseButton::WheelUp => MouseButton::WheelUp(1),
                attach::MouseButton::WheelDown => MouseButton::WheelDown(1),
                attach::MouseButton::None => MouseButton::None,
            };
            let kind = match kind {
                MouseKind::Press => MouseEventKind::Press,
                MouseKind::Release => MouseEventKind::Release,
                MouseKind::Move => MouseEventKind::Move,
            };
            term.mouse_event(MouseEvent {
                kind,
                x: usize::from(*x),
                y: i64::from(*y),
                x_pixel_offset: 0,
                y_pixel_offset: 0,
                button,
                modifiers: key_modifiers(*mods),
            })
            .map_err(fail("mouse event"))
        }
        ViewEvent::Focus { focused } => {
            term.focus_changed(*focused);
            Ok(())
        }
        ViewEvent::Resize { .. } => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{mpsc, Arc};
    use std::time::Duration;
    use wezterm_term::color::ColorPalette;
    use wezterm_term::{TerminalConfiguration, TerminalSize};

    #[derive(Debug)]
    struct Config;
    impl TerminalConfiguration for Config {
        fn color_palette(&self) -> ColorPalette {
            ColorPalette::default()
        }
    }

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

    struct Fixture {
        term: Terminal,
        modes: ModeTracker,
        written: mpsc::Receiver<Vec<u8>>,
    }

    impl Fixture {
        fn new(cols: usize, rows: usize) -> Self {
            let (tx, rx) = mpsc::channel();
            let term = Terminal::new(
                TerminalSize {
                    rows,
                    cols,
                    pixel_width: 0,
                    pixel_height: 0,
                    dpi: 0,
                },
                Arc::new(Config),
                "tickloop",
                "test",
                Box::new(ChanWriter(tx)),
            );
            Fixture {
                term,
                modes: ModeTracker::new(),
                written: rx,
            }
        }

        fn feed(&mut self, bytes: &[u8]) {
            self.modes.observe(bytes);
            self.term.advance_bytes(bytes);
        }

        fn snap(&self) -> Snapshot {
            snapshot(&self.term, &self.modes)
        }

        /// What the terminal wrote towards the Tick for `event`.
        fn input(&mut self, event: ViewEvent) -> Vec<u8> {
            apply_input(&mut self.term, &event).unwrap();
            let mut out = self
                .written
                .recv_timeout(Duration::from_secs(10))
                .expect("the terminal writes the encoded event");
            while let Ok(more) = self.written.try_recv() {
                out.extend(more);
            }
            out
        }
    }

    fn run(text: &str, attrs: Attrs) -> Run {
        Run {
            text: text.into(),
            attrs,
        }
    }

    #[test]
    fn plain_text_and_cursor() {
        let mut f = Fixture::new(20, 4);
        f.feed(b"hello   \r\nworld");
        let s = f.snap();
        assert_eq!((s.cols, s.rows), (20, 4));
        assert_eq!(s.lines.len(), 4);
        assert_eq!(s.lines[0].runs, vec![run("hello", Attrs::default())]);
        assert_eq!(s.lines[1].text(), "world");
        assert!(s.lines[2].runs.is_empty());
        assert_eq!((s.cursor.x, s.cursor.y, s.cursor.visible), (5, 1, true));
        assert!(!s.alt_screen);
        f.feed(b"\x1b[?25l");
        assert!(!f.snap().cursor.visible);
    }

    #[test]
    fn colours_16_256_truecolor_and_attributes() {
        let mut f = Fixture::new(40, 2);
        f.feed(b"\x1b[31ma\x1b[92;44mb\x1b[0;38;5;196mc\x1b[38;2;1;2;3;48;2;250;128;0md\x1b[0m");
        f.feed(b"\x1b[1;3;4me\x1b[0;2;7;9mf\x1b[0m");
        let s = f.snap();
        let runs = &s.lines[0].runs;
        assert_eq!(
            runs[0],
            run(
                "a",
                Attrs {
                    fg: Some(Color::Index(1)),
                    ..Attrs::default()
                }
            )
        );
        assert_eq!(
            runs[1],
            run(
                "b",
                Attrs {
                    fg: Some(Color::Index(10)),
                    bg: Some(Color::Index(4)),
                    ..Attrs::default()
                }
            )
        );
        assert_eq!(
            runs[2],
            run(
                "c",
                Attrs {
                    fg: Some(Color::Index(196)),
                    ..Attrs::default()
                }
            )
        );
        assert_eq!(
            runs[3],
            run(
                "d",
                Attrs {
                    fg: Some(Color::Rgb(1, 2, 3)),
                    bg: Some(Color::Rgb(250, 128, 0)),
                    ..Attrs::default()
                }
            )
        );
        assert_eq!(
            runs[4],
            run(
                "e",
                Attrs {
                    bold: true,
                    italic: true,
                    underline: attach::Underline::Single,
                    ..Attrs::default()
                }
            )
        );
        assert_eq!(
            runs[5],
            run(
                "f",
                Attrs {
                    dim: true,
                    reverse: true,
                    strikethrough: true,
                    ..Attrs::default()
                }
            )
        );
        assert_eq!(runs.len(), 6);
    }

    #[test]
    fn coloured_blanks_are_kept_plain_blanks_trimmed() {
        let mut f = Fixture::new(10, 1);
        f.feed(b"x\x1b[41m  \x1b[0m   ");
        let s = f.snap();
        assert_eq!(
            s.lines[0].runs,
            vec![
                run("x", Attrs::default()),
                run(
                    "  ",
                    Attrs {
                        bg: Some(Color::Index(1)),
                        ..Attrs::default()
                    }
                )
            ]
        );
    }

    #[test]
    fn wide_and_combining_characters() {
        let mut f = Fixture::new(10, 2);
        f.feed("日本x\r\ne\u{301}!".as_bytes());
        let s = f.snap();
        assert_eq!(s.lines[0].text(), "日本x");
        assert_eq!(s.lines[1].text(), "e\u{301}!");
        assert_eq!(s.cursor.x, 2);
        // wezterm-term puts a wide character that does not fit into the
        // last column; the snapshot never lets a run overflow the row.
        let mut f = Fixture::new(3, 2);
        f.feed("ab日".as_bytes());
        let s = f.snap();
        assert_eq!(s.lines[0].text(), "ab");
    }

    #[test]
    fn alt_screen_and_back() {
        let mut f = Fixture::new(10, 3);
        f.feed(b"main");
        f.feed(b"\x1b[?1049h\x1b[Halt");
        let s = f.snap();
        assert!(s.alt_screen);
        assert_eq!(s.lines[0].text(), "alt");
        f.feed(b"\x1b[?1049l");
        let s = f.snap();
        assert!(!s.alt_screen);
        assert_eq!(s.lines[0].text(), "main");
    }

    #[test]
    fn title_and_modes() {
        let mut f = Fixture::new(10, 3);
        assert_eq!(f.snap().modes, Modes::default());
        f.feed(b"\x1b]2;My Tick\x07");
        f.feed(b"\x1b[?2004h\x1b[?1;1004h\x1b[?1002;1006h\x1b=");
        let s = f.snap();
        assert_eq!(s.title, "My Tick");
        assert_eq!(
            s.modes,
            Modes {
                bracketed_paste: true,
                mouse: MouseTracking::Drag,
                mouse_sgr: true,
                app_cursor_keys: true,
                app_keypad: true,
                focus_events: true,
            }
        );
        f.feed(b"\x1b[?1002l\x1b[?2004l\x1b>");
        let m = f.snap().modes;
        assert_eq!(m.mouse, MouseTracking::Off);
        assert!(!m.bracketed_paste && !m.app_keypad && m.app_cursor_keys);
        f.feed(b"\x1bc");
        assert_eq!(f.snap().modes, Modes::default());
    }

    #[test]
    fn modes_split_across_chunks() {
        let mut f = Fixture::new(10, 3);
        for b in b"\x1b[?100".iter().chain(b"3h") {
            f.feed(std::slice::from_ref(b));
        }
        assert_eq!(f.snap().modes.mouse, MouseTracking::Motion);
    }

    #[test]
    fn diff_finds_changed_rows_after_output_and_scroll() {
        let mut f = Fixture::new(10, 3);
        f.feed(b"a\r\nb\r\nc");
        let before = f.snap();
        f.feed(b"\r\nd");
        let after = f.snap();
        let frame = before.diff(&after).unwrap();
        // Everything scrolled up one row: all three rows changed.
        assert_eq!(frame.rows.len(), 3);
        let mut copy = before.clone();
        copy.apply(frame).unwrap();
        assert_eq!(copy, after);
    }

    #[test]
    fn keys_follow_application_cursor_mode() {
        let mut f = Fixture::new(10, 3);
        let up = ViewEvent::Key {
            key: Key::Up,
            mods: Mods::NONE,
        };
        assert_eq!(f.input(up.clone()), b"\x1b[A");
        f.feed(b"\x1b[?1h");
        assert_eq!(f.input(up), b"\x1bOA");
        let ctrl_c = ViewEvent::Key {
            key: Key::Char('c'),
            mods: Mods {
                ctrl: true,
                ..Mods::NONE
            },
        };
        assert_eq!(f.input(ctrl_c), b"\x03");
        let big_a = ViewEvent::Key {
            key: Key::Char('A'),
            mods: Mods {
                shift: true,
                ..Mods::NONE
            },
        };
        assert_eq!(f.input(big_a), b"A");
        let enter = ViewEvent::Key {
            key: Key::Enter,
            mods: Mods::NONE,
        };
        assert_eq!(f.input(enter), b"\r");
        let e_acute = ViewEvent::Key {
            key: Key::Char('é'),
            mods: Mods::NONE,
        };
        assert_eq!(f.input(e_acute), "é".as_bytes());
    }

    #[test]
    fn paste_is_bracketed_only_when_asked() {
        let mut f = Fixture::new(10, 3);
        let paste = ViewEvent::Paste {
            text: "one\ntwo".into(),
        };
        let plain = f.input(paste.clone());
        assert!(!plain.starts_with(b"\x1b[200~"), "{plain:?}");
        f.feed(b"\x1b[?2004h");
        assert!(f.snap().modes.bracketed_paste);
        assert_eq!(f.input(paste), b"\x1b[200~one\ntwo\x1b[201~");
    }

    #[test]
    fn mouse_is_reported_only_when_asked() {
        let mut f = Fixture::new(10, 3);
        let click = ViewEvent::Mouse {
            x: 2,
            y: 1,
            kind: MouseKind::Press,
            button: attach::MouseButton::Left,
            mods: Mods::NONE,
        };
        apply_input(&mut f.term, &click).unwrap();
        assert!(f.written.recv_timeout(Duration::from_millis(200)).is_err());
        f.feed(b"\x1b[?1000;1006h");
        assert_eq!(f.input(click), b"\x1b[<0;3;2M");
    }

    #[test]
    fn focus_is_reported_only_when_asked() {
        let mut f = Fixture::new(10, 3);
        f.feed(b"\x1b[?1004h");
        assert_eq!(f.input(ViewEvent::Focus { focused: false }), b"\x1b[O");
        assert_eq!(f.input(ViewEvent::Focus { focused: true }), b"\x1b[I");
    }
}
