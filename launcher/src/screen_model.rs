//! Between the emulator and the attach protocol: pure functions that turn
//! `alacritty_terminal`'s grid into an [`attach::Snapshot`](tickloop_proto::attach::Snapshot)
//! (live, or scrolled back into history) and text rows, and that encode a
//! view's [`ViewEvent`]s for the Tick's current terminal modes: keys with
//! termwiz's xterm encoder, paste (bracketed or not), mouse (SGR or X10) and
//! focus reports.
//!
//! Changed rows are found by comparing two snapshots
//! ([`Snapshot::diff`](tickloop_proto::attach::Snapshot::diff)), which also covers
//! scrolling.
//!
//! What the grid cannot hold is lost here: `alacritty_terminal` keeps no
//! blink (SGR 5/6) and no overline (SGR 53) attribute, so views never show
//! them (see `benches/emulators.md`).

use crate::history::{self, History};
use alacritty_terminal::grid::{Dimensions, Row};
use alacritty_terminal::index::{Column, Line as GridLine};
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::{
    Color as CellColor, CursorShape as Shape, CursorStyle, NamedColor,
};
use termwiz::input::{KeyCode, KeyCodeEncodeModes, KeyboardEncoding, Modifiers};
use tickloop_proto::attach::{
    self, Attrs, Color, Cursor, CursorShape, Key, Line, Modes, Mods, MouseKind, MouseTracking, Run,
    Snapshot, ViewEvent,
};
use tickloop_proto::keys::Pressed;

/// Encoding a view's event for the Tick failed, or writing it did: the
/// PTY's writer is gone (the Tick is ending); the view's event is dropped.
#[derive(Debug, thiserror::Error)]
#[error("cannot send the view's {what} to the Tick: {source}")]
pub struct InputError {
    what: &'static str,
    #[source]
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl InputError {
    pub(crate) fn gone(what: &'static str) -> Self {
        InputError {
            what,
            source: "the terminal is gone".into(),
        }
    }

    pub(crate) fn write(what: &'static str, source: std::io::Error) -> Self {
        InputError {
            what,
            source: Box::new(source),
        }
    }
}

/// The modes a view needs to know, from the terminal's mode bits.
pub fn modes(mode: TermMode) -> Modes {
    let mouse = if mode.contains(TermMode::MOUSE_MOTION) {
        MouseTracking::Motion
    } else if mode.contains(TermMode::MOUSE_DRAG) {
        MouseTracking::Drag
    } else if mode.contains(TermMode::MOUSE_REPORT_CLICK) {
        MouseTracking::Click
    } else {
        MouseTracking::Off
    };
    Modes {
        bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
        mouse,
        mouse_sgr: mode.contains(TermMode::SGR_MOUSE),
        app_cursor_keys: mode.contains(TermMode::APP_CURSOR),
        app_keypad: mode.contains(TermMode::APP_KEYPAD),
        focus_events: mode.contains(TermMode::FOCUS_IN_OUT),
    }
}

/// The terminal's screen, cursor, modes and title, as a view `offset` lines
/// scrolled back into history sees it (0 is live). `default_cursor` is the
/// style the terminal was configured with, which stands for "default".
/// History comes from `history` (the normal screen's, which the alternate
/// screen does not show).
pub fn snapshot<T: alacritty_terminal::event::EventListener>(
    term: &Term<T>,
    history: &History,
    offset: usize,
    title: String,
    default_cursor: CursorStyle,
) -> Snapshot {
    let grid = term.grid();
    let cols = grid.columns();
    let rows = grid.screen_lines();
    let mode = *term.mode();
    let held = history::shown_len(term, history);
    let offset = offset.min(held);
    let lines: Vec<Line> = (0..rows)
        .map(|r| match r.checked_sub(offset) {
            Some(live) => convert_row(&grid[GridLine(live as i32)], cols),
            None => history::shown_row(term, history, held - offset + r, cols)
                .map_or_else(Line::default, |row| convert_row(&row, cols)),
        })
        .collect();
    let point = grid.cursor.point;
    let cursor_row = usize::try_from(point.line.0).unwrap_or(0) + offset;
    let style = term.cursor_style();
    Snapshot {
        cols: clamp_u16(cols),
        rows: clamp_u16(rows),
        cursor: Cursor {
            x: clamp_u16(point.column.0.min(cols.saturating_sub(1))),
            y: clamp_u16(cursor_row.min(rows.saturating_sub(1))),
            visible: offset == 0 && mode.contains(TermMode::SHOW_CURSOR),
            shape: if style == default_cursor {
                CursorShape::Default
            } else {
                convert_shape(style)
            },
        },
        alt_screen: mode.contains(TermMode::ALT_SCREEN),
        modes: modes(mode),
        title,
        scroll: attach::Scrollback {
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            history: u32::try_from(held).unwrap_or(u32::MAX),
        },
        lines,
    }
}

fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

fn convert_shape(style: CursorStyle) -> CursorShape {
    match (style.shape, style.blinking) {
        (Shape::Block, true) => CursorShape::BlinkingBlock,
        (Shape::Block, false) => CursorShape::SteadyBlock,
        (Shape::Underline, true) => CursorShape::BlinkingUnderline,
        (Shape::Underline, false) => CursorShape::SteadyUnderline,
        (Shape::Beam, true) => CursorShape::BlinkingBar,
        (Shape::Beam, false) => CursorShape::SteadyBar,
        (Shape::HollowBlock | Shape::Hidden, _) => CursorShape::Default,
    }
}

/// The character a cell shows (a tab's first cell holds `\t`).
fn cell_char(cell: &Cell) -> char {
    match cell.c {
        '\t' | '\0' => ' ',
        c => c,
    }
}

/// One grid row as text, trailing blanks trimmed: what `screen` prints.
pub fn row_text(row: &Row<Cell>, cols: usize) -> String {
    let mut text = String::with_capacity(cols);
    for c in 0..cols.min(row.len()) {
        let cell = &row[Column(c)];
        if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
            continue;
        }
        if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) {
            text.push(' ');
            continue;
        }
        text.push(cell_char(cell));
        if let Some(marks) = cell.zerowidth() {
            text.extend(marks);
        }
    }
    let kept = text.trim_end_matches(' ').len();
    text.truncate(kept);
    text
}

/// One grid row as runs, at most `cols` columns wide, trailing blanks that
/// look like nothing dropped.
pub fn convert_row(row: &Row<Cell>, cols: usize) -> Line {
    let mut runs: Vec<Run> = Vec::new();
    let mut push = |text: &str, attrs: Attrs| match runs.last_mut() {
        Some(last) if last.attrs == attrs => last.text.push_str(text),
        _ => runs.push(Run {
            text: text.to_string(),
            attrs,
        }),
    };
    // Trailing cells that are plain blanks convert to nothing (they would
    // be trimmed below): skip them, most rows are mostly empty.
    let mut width = cols.min(row.len());
    while width > 0 && is_plain_blank(&row[Column(width - 1)]) {
        width -= 1;
    }
    let mut buf = [0u8; 4];
    for c in 0..width {
        let cell = &row[Column(c)];
        if cell.flags.contains(Flags::WIDE_CHAR_SPACER) {
            continue;
        }
        let attrs = convert_attrs(cell);
        let wide = cell.flags.contains(Flags::WIDE_CHAR);
        if cell.flags.contains(Flags::LEADING_WIDE_CHAR_SPACER) || (wide && c + 1 >= width) {
            // A wide character that does not fit is drawn on the next row.
            push(" ", attrs);
            continue;
        }
        match cell.zerowidth() {
            Some(marks) => {
                let mut text = String::new();
                text.push(cell_char(cell));
                text.extend(marks);
                push(&text, attrs);
            }
            None => push(cell_char(cell).encode_utf8(&mut buf), attrs),
        }
    }
    trim_trailing_blanks(&mut runs);
    Line { runs }
}

/// A cell as a fresh screen holds it: a space with default colours, no
/// flags and nothing extra (marks, underline colour, hyperlink).
fn is_plain_blank(cell: &Cell) -> bool {
    cell.c == ' '
        && cell.flags.is_empty()
        && cell.extra.is_none()
        && cell.fg == CellColor::Named(NamedColor::Foreground)
        && cell.bg == CellColor::Named(NamedColor::Background)
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

fn convert_color(color: CellColor) -> Option<Color> {
    match color {
        CellColor::Indexed(i) => Some(Color::Index(i)),
        CellColor::Spec(rgb) => Some(Color::Rgb(rgb.r, rgb.g, rgb.b)),
        CellColor::Named(named) => {
            let n = named as usize;
            if n < 16 {
                Some(Color::Index(n as u8))
            } else if (NamedColor::DimBlack as usize..=NamedColor::DimWhite as usize).contains(&n) {
                Some(Color::Index((n - NamedColor::DimBlack as usize) as u8))
            } else {
                None
            }
        }
    }
}

fn convert_attrs(cell: &Cell) -> Attrs {
    let f = cell.flags;
    let underline = if f.contains(Flags::UNDERCURL) {
        attach::Underline::Curly
    } else if f.contains(Flags::DOUBLE_UNDERLINE) {
        attach::Underline::Double
    } else if f.contains(Flags::DOTTED_UNDERLINE) {
        attach::Underline::Dotted
    } else if f.contains(Flags::DASHED_UNDERLINE) {
        attach::Underline::Dashed
    } else if f.contains(Flags::UNDERLINE) {
        attach::Underline::Single
    } else {
        attach::Underline::None
    };
    Attrs {
        fg: convert_color(cell.fg),
        bg: convert_color(cell.bg),
        bold: f.contains(Flags::BOLD),
        dim: f.contains(Flags::DIM),
        italic: f.contains(Flags::ITALIC),
        underline,
        underline_color: cell.underline_color().and_then(convert_color),
        blink: false,
        reverse: f.contains(Flags::INVERSE),
        invisible: f.contains(Flags::HIDDEN),
        strikethrough: f.contains(Flags::STRIKEOUT),
        overline: false,
        // An image's space is marked with a link of its own: not a link.
        link: cell
            .hyperlink()
            .filter(|link| !crate::image_mark::is_mark(link))
            .map(|link| link.uri().to_string()),
    }
}

fn key_modifiers(mods: Mods) -> Modifiers {
    let mut out = Modifiers::NONE;
    if mods.shift {
        out |= Modifiers::SHIFT;
    }
    if mods.alt {
        out |= Modifiers::ALT;
    }
    if mods.ctrl {
        out |= Modifiers::CTRL;
    }
    if mods.super_ {
        out |= Modifiers::SUPER;
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

/// The bytes a view's input event becomes for a Tick whose terminal is in
/// `mode`: keys, paste, mouse and focus as xterm sends them. Events the Tick
/// did not ask for (mouse without a mouse mode, focus without 1004) and
/// `Resize` (the size policy's business) become nothing.
pub fn encode_input(mode: TermMode, event: &ViewEvent) -> Result<Vec<u8>, InputError> {
    match event {
        ViewEvent::Key { key, mods } => {
            let mut mods = *mods;
            // A character arrives with shift already applied ('A', '!'); a
            // SHIFT modifier on top would make the encoder send CSI u.
            if matches!(key, Key::Char(_)) && !mods.ctrl && !mods.alt && !mods.super_ {
                mods.shift = false;
            }
            // There is no F0: termwiz's encoder panics on it (found by
            // fuzzing the attach protocol, tickloop-fuzz attach_lines).
            if *key == Key::F(0) {
                return Err(InputError {
                    what: "key",
                    source: "there is no function key F0".into(),
                });
            }
            let modes = KeyCodeEncodeModes {
                encoding: KeyboardEncoding::Xterm,
                application_cursor_keys: mode.contains(TermMode::APP_CURSOR),
                newline_mode: mode.contains(TermMode::LINE_FEED_NEW_LINE),
                modify_other_keys: None,
            };
            key_code(*key)
                .encode(key_modifiers(mods), modes, true)
                .map(String::into_bytes)
                .map_err(|e| InputError {
                    what: "key",
                    source: e.to_string().into(),
                })
        }
        ViewEvent::Paste { text } => Ok(encode_paste(mode, text)),
        ViewEvent::Mouse {
            x,
            y,
            kind,
            button,
            mods,
        } => Ok(encode_mouse(mode, *x, *y, *kind, *button, *mods)),
        ViewEvent::Focus { focused } => Ok(if mode.contains(TermMode::FOCUS_IN_OUT) {
            if *focused {
                b"\x1b[I".to_vec()
            } else {
                b"\x1b[O".to_vec()
            }
        } else {
            Vec::new()
        }),
        ViewEvent::Resize { .. }
        | ViewEvent::Scroll { .. }
        | ViewEvent::Colors(_)
        | ViewEvent::Image { .. }
        | ViewEvent::LendKeys { .. }
        | ViewEvent::TakeKeys { .. }
        | ViewEvent::TakeRows => Ok(Vec::new()),
    }
}

/// The bytes `keys` (named by an agent, [`tickloop_proto::keys`]) become
/// for a program whose terminal is in `mode`: each as a view's key would
/// be (application cursor keys with DECCKM), keypad keys as SS3 sequences
/// in application keypad mode (DECKPAM) and as their characters otherwise,
/// with `M-` as an ESC before them, as xterm and tmux send them.
pub fn encode_keys(mode: TermMode, keys: &[Pressed]) -> Result<Vec<u8>, InputError> {
    let mut out = Vec::new();
    for pressed in keys {
        match *pressed {
            Pressed::Key { key, mods } => {
                out.extend(encode_input(mode, &ViewEvent::Key { key, mods })?);
            }
            Pressed::Keypad { key, mods } => {
                if mods.alt {
                    out.push(0x1b);
                }
                if mode.contains(TermMode::APP_KEYPAD) {
                    out.extend([0x1b, b'O', key.application()]);
                } else {
                    let mut buf = [0u8; 4];
                    out.extend(key.numeric().encode_utf8(&mut buf).as_bytes());
                }
            }
        }
    }
    Ok(out)
}

/// A paste: bracketed when the Tick asked (with any ESC taken out, so the
/// text cannot end the bracket early), else with line ends as Enter (CR).
fn encode_paste(mode: TermMode, text: &str) -> Vec<u8> {
    if mode.contains(TermMode::BRACKETED_PASTE) {
        let mut out = b"\x1b[200~".to_vec();
        out.extend(text.replace('\x1b', "").bytes());
        out.extend(b"\x1b[201~");
        out
    } else {
        text.replace("\r\n", "\r").replace('\n', "\r").into_bytes()
    }
}

/// A mouse event as the Tick's mouse mode wants it: SGR (1006) or the X10
/// byte encoding (positions past 223 cannot be said in it and are dropped).
fn encode_mouse(
    mode: TermMode,
    x: u16,
    y: u16,
    kind: MouseKind,
    button: attach::MouseButton,
    mods: Mods,
) -> Vec<u8> {
    if !mode.intersects(TermMode::MOUSE_MODE) {
        return Vec::new();
    }
    let held = button != attach::MouseButton::None;
    if kind == MouseKind::Move
        && !(mode.contains(TermMode::MOUSE_MOTION) || (held && mode.contains(TermMode::MOUSE_DRAG)))
    {
        return Vec::new();
    }
    let wheel = matches!(
        button,
        attach::MouseButton::WheelUp | attach::MouseButton::WheelDown
    );
    if wheel && kind == MouseKind::Release {
        return Vec::new();
    }
    let mut code: u32 = match button {
        attach::MouseButton::Left => 0,
        attach::MouseButton::Middle => 1,
        attach::MouseButton::Right => 2,
        attach::MouseButton::None => 3,
        attach::MouseButton::WheelUp => 64,
        attach::MouseButton::WheelDown => 65,
    };
    if kind == MouseKind::Move {
        code += 32;
    }
    if mods.shift {
        code += 4;
    }
    if mods.alt {
        code += 8;
    }
    if mods.ctrl {
        code += 16;
    }
    let (col, row) = (u32::from(x) + 1, u32::from(y) + 1);
    if mode.contains(TermMode::SGR_MOUSE) {
        let end = if kind == MouseKind::Release { 'm' } else { 'M' };
        return format!("\x1b[<{code};{col};{row}{end}").into_bytes();
    }
    if kind == MouseKind::Release {
        // X10 says which button went up with "3".
        code = (code & !3) | 3;
    }
    let (Ok(c), Ok(cx), Ok(cy)) = (
        u8::try_from(32 + code),
        u8::try_from(32 + col),
        u8::try_from(32 + row),
    ) else {
        return Vec::new();
    };
    vec![0x1b, b'[', b'M', c, cx, cy]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::Emulator;
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;

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
        emu: Emulator,
        written: mpsc::Receiver<Vec<u8>>,
    }

    impl Fixture {
        fn new(cols: usize, rows: usize) -> Self {
            let (tx, rx) = mpsc::channel();
            Fixture {
                emu: Emulator::new(rows, cols, 100, Box::new(ChanWriter(tx))),
                written: rx,
            }
        }

        fn feed(&mut self, bytes: &[u8]) {
            self.emu.feed(bytes);
        }

        fn snap(&mut self) -> Snapshot {
            self.emu.snapshot()
        }

        /// What the terminal wrote towards the Tick for `event`.
        fn input(&mut self, event: ViewEvent) -> Vec<u8> {
            self.emu.view_input(&event).unwrap();
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

    /// What `names` become once the program set its modes with `modes`
    /// (bytes it wrote to its terminal), as the emulator reads them.
    fn keys_after(modes: &[u8], names: &[&str]) -> Vec<u8> {
        let mut f = Fixture::new(80, 24);
        f.feed(modes);
        let mode = TermMode::from_bits_truncate(f.emu.input_modes());
        let pressed = tickloop_proto::keys::parse_all(names).expect("known names");
        encode_keys(mode, &pressed).expect("encodable")
    }

    #[test]
    fn named_keys_are_encoded_for_the_programs_modes_as_xterm_sends_them() {
        // Cursor keys: CSI normally, SS3 once the program asks for
        // application cursor keys (DECCKM, as less and vim do).
        assert_eq!(keys_after(b"", &["Down", "Up"]), b"\x1b[B\x1b[A");
        assert_eq!(keys_after(b"\x1b[?1h", &["Down", "Up"]), b"\x1bOB\x1bOA");
        assert_eq!(keys_after(b"\x1b[?1h\x1b[?1l", &["Down"]), b"\x1b[B");
        // Keypad keys: their characters, or SS3 in application keypad mode.
        assert_eq!(keys_after(b"", &["KP5", "KPEnter", "KP+"]), b"5\r+");
        assert_eq!(
            keys_after(b"\x1b=", &["KP5", "KPEnter", "KP+"]),
            b"\x1bOu\x1bOM\x1bOk"
        );
        // Controls, meta, shifted and modified keys.
        let cases: &[(&str, &[u8])] = &[
            ("C-c", b"\x03"),
            ("C-a", b"\x01"),
            ("C-Space", b"\x00"),
            ("M-x", b"\x1bx"),
            ("Enter", b"\r"),
            ("Tab", b"\t"),
            ("BTab", b"\x1b[Z"),
            ("BSpace", b"\x7f"),
            ("Escape", b"\x1b"),
            ("Space", b" "),
            ("S-Up", b"\x1b[1;2A"),
            ("C-Left", b"\x1b[1;5D"),
            ("Home", b"\x1b[H"),
            ("End", b"\x1b[F"),
            ("PageUp", b"\x1b[5~"),
            ("NPage", b"\x1b[6~"),
            ("IC", b"\x1b[2~"),
            ("DC", b"\x1b[3~"),
            ("F1", b"\x1bOP"),
            ("F5", b"\x1b[15~"),
            ("F12", b"\x1b[24~"),
        ];
        for (name, bytes) in cases {
            assert_eq!(keys_after(b"", &[name]), bytes.to_vec(), "{name}");
        }
    }

    /// Every modifier a key name is accepted with reaches the program:
    /// with C- the character becomes a control code, with M- an ESC comes
    /// first, and S- on a letter makes it a capital; a modifier the
    /// encoder would drop is refused by the name (`C-é`, `S-1`).
    #[test]
    fn no_modifier_a_key_name_is_accepted_with_is_dropped() {
        let chars = ('!'..='~').chain([' ', 'é', 'ß', '日']);
        let mut accepted = 0;
        for c in chars {
            for (ctrl, alt, shift) in (0..8).map(|m| (m & 1 != 0, m & 2 != 0, m & 4 != 0)) {
                let name = format!(
                    "{}{}{}{c}",
                    if ctrl { "C-" } else { "" },
                    if alt { "M-" } else { "" },
                    if shift { "S-" } else { "" }
                );
                let Ok(pressed) = tickloop_proto::keys::parse(&name) else {
                    continue;
                };
                accepted += 1;
                let bytes = encode_keys(TermMode::empty(), &[pressed]).expect("encodable");
                let text = String::from_utf8_lossy(&bytes);
                let body = if alt {
                    assert!(bytes.first() == Some(&0x1b), "{name:?}: {bytes:?}");
                    &bytes[1..]
                } else {
                    &bytes[..]
                };
                if ctrl {
                    assert!(
                        body.len() == 1 && (body[0] < 0x20 || body[0] == 0x7f),
                        "{name:?} sends a control code: {bytes:?}"
                    );
                } else if shift {
                    assert_eq!(
                        text.trim_start_matches('\x1b'),
                        c.to_ascii_uppercase().to_string(),
                        "{name:?}"
                    );
                }
            }
        }
        assert!(accepted > 300, "{accepted} names accepted");
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
        // A wide character that does not fit at the right margin wraps
        // whole to the next row, as in xterm and tmux.
        let mut f = Fixture::new(3, 2);
        f.feed("ab日X".as_bytes());
        let s = f.snap();
        assert_eq!(s.lines[0].text(), "ab");
        assert_eq!(s.lines[1].text(), "日X");
        assert_eq!((s.cursor.x, s.cursor.y), (2, 1));
    }

    #[test]
    fn hyperlinks_are_kept_on_their_text() {
        let mut f = Fixture::new(40, 2);
        f.feed(b"\x1b]8;;http://example.invalid/x\x1b\\link\x1b]8;;\x1b\\ plain");
        let s = f.snap();
        assert_eq!(
            s.lines[0].runs,
            vec![
                run(
                    "link",
                    Attrs {
                        link: Some("http://example.invalid/x".into()),
                        ..Attrs::default()
                    }
                ),
                run(" plain", Attrs::default())
            ]
        );
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
        // Everything scrolled up one row: the frame says so, and sends the
        // one new row.
        assert_eq!(frame.scrolled, 1);
        assert_eq!(frame.rows.len(), 1);
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
        f.emu.view_input(&click).unwrap();
        assert!(f.written.try_recv().is_err());
        assert!(encode_input(TermMode::default(), &click)
            .unwrap()
            .is_empty());
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
