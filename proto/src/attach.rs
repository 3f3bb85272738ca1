//! The attach protocol: what a view (a plain `tickloop attach`, the Monitor's
//! overlay, a Herdr pane) and a launcher say to each other on the launcher's
//! socket. Plain serde types, no transport.
//!
//! # Conversation
//!
//! One JSON value per line (`\n`-terminated) each way, on the launcher's Unix
//! socket (`RUNTIME/l/<kind>-<name>.sock`):
//!
//! 1. view → launcher: [`crate::wire::Hello`] with role `view` (its
//!    `client` says whom the view shows the screen to: an agent's view is
//!    served read-only, its keys, sizes and focus not taken);
//!    launcher → view: [`crate::wire::HelloReply`] (a refusal closes).
//! 2. view → launcher: one [`ViewHello`]: the view's size (cells) and what its
//!    terminal supports. The size is taken at once (no resize burst on attach).
//! 3. launcher → view: [`ToView::Snapshot`]: the whole current screen from
//!    the emulator (text with colours and attributes, wide and combining
//!    characters, cursor, alternate screen, the modes the Tick set, title).
//! 4. Then, until either side hangs up:
//!    * launcher → view: [`ToView::Rows`] (the rows that changed since the
//!      previous frame, with cursor and modes), at a bounded frame rate: a
//!      flood of output is coalesced into at most one frame per interval, so
//!      a slow view sees fewer frames, never a backlog;
//!      [`ToView::Resized`] when the PTY changes size, always followed by a
//!      [`ToView::Snapshot`] at the new size;
//!      [`ToView::Ended`] when the Tick's session ended (then the launcher
//!      closes the connection); [`ToView::Images`], the placements of the
//!      images the program drew, after a snapshot or frame that changed
//!      them; [`ToView::Drawn`] instead of rows when the view lent its
//!      terminal ([`ViewTty`]) and the launcher drew a keystroke's echo on
//!      it itself.
//!    * view → launcher: [`ViewEvent`]s: keys, paste, mouse and focus, which
//!      the launcher encodes for the Tick's *current* modes (application
//!      cursor keys, bracketed paste, mouse encoding), and its new size after
//!      the view's terminal was resized; [`ViewEvent::Colors`] once its
//!      terminal answered the view's colour questions (views ask at attach
//!      and never wait for the answers); [`ViewEvent::Image`] to get one
//!      kept image's bytes ([`ToView::Image`]).
//!
//! Views never see the raw PTY byte stream: their terminal would answer the
//! Tick's queries a second time. Hanging up is a detach; it never touches the
//! Tick or its protocol session.
//!
//! # Sizes
//!
//! The PTY follows the most recently active view (tmux's `latest` policy): a
//! view becomes the most recently active one when it attaches, sends a key,
//! paste or mouse event, or resizes. The launcher debounces resizes; each one
//! resizes the PTY (so the Tick gets SIGWINCH) and then the emulator. A view
//! whose size differs from the PTY's pads or crops the screen and says so.
//! With no view, the size stays. No view takes the PTY past
//! [`MAX_SCREEN_CELLS`] ([`fit_size`]).
//!
//! # Example
//!
//! ```text
//! → {"hello":{"version":"tickloop-0.1.0+5c2e9a0d41b7","role":"view"}}
//! ← {"version":"tickloop-0.1.0+5c2e9a0d41b7"}
//! → {"cols":100,"rows":30,"term":{"truecolor":true,"colors":256,"mouse":true,"bracketed_paste":true,"focus_events":false}}
//! ← {"type":"snapshot","cols":120,"rows":30,"cursor":{"x":0,"y":1,"visible":true},"alt_screen":false,
//!    "modes":{"bracketed_paste":true},"title":"","lines":[{"runs":[{"text":"hi","fg":1,"bold":true}]},{"runs":[]}]}
//! → {"event":"key","key":{"char":"a"}}
//! → {"event":"paste","text":"two\nlines"}
//! ← {"type":"rows","rows":[[1,{"runs":[{"text":"a"}]}]],"cursor":{"x":1,"y":1,"visible":true},"alt_screen":false,"modes":{"bracketed_paste":true}}
//! ```

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod decode;

/// The largest line either side accepts on a view connection (a full
/// 500x200 screen of styled runs fits well within it).
pub const MAX_VIEW_LINE: usize = 8 * 1024 * 1024;

/// The view's second line (after `wire::Hello`): its size and terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewHello {
    /// The view's size in cells (the area it shows the Tick's screen in).
    pub cols: u16,
    pub rows: u16,
    #[serde(default)]
    pub term: TermCaps,
    /// A short name for logs and status ("attach", "monitor", "herdr").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    /// The view's own terminal, which the launcher may draw a keystroke's
    /// echo on itself ([`ToView::Drawn`]); none: every frame is the view's
    /// to draw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tty: Option<ViewTty>,
}

/// A view's terminal lent to the launcher for echoes: a local view on a
/// terminal device. The two take turns with write locks on the device's
/// rows (open-file-description locks, byte `r` for row `r`;
/// `tickloop_client::tty_turns`): the view holds every row whenever it
/// draws, or shows anything that is not the Tick's screen cell for cell
/// (an overlay, history, images, another size), and the last row while a
/// note covers it; the launcher draws only on rows it locks at once, and
/// only when the view has read every line it was sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ViewTty {
    /// The device's path (`/dev/pts/3`).
    pub path: String,
    /// Its device number (`st_rdev`): the launcher draws on it only when
    /// the path opens that device.
    pub dev: u64,
}

/// What the view's own terminal supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TermCaps {
    /// 24-bit colour (`COLORTERM=truecolor`).
    #[serde(default)]
    pub truecolor: bool,
    /// Palette size: 8, 16 or 256.
    #[serde(default = "default_colors")]
    pub colors: u16,
    /// The view can report mouse events.
    #[serde(default)]
    pub mouse: bool,
    /// The view reports pastes as pastes (its terminal has bracketed paste).
    #[serde(default)]
    pub bracketed_paste: bool,
    /// The view can report focus in/out.
    #[serde(default)]
    pub focus_events: bool,
}

fn default_colors() -> u16 {
    256
}

impl Default for TermCaps {
    fn default() -> Self {
        TermCaps {
            truecolor: false,
            colors: default_colors(),
            mouse: false,
            bracketed_paste: false,
            focus_events: false,
        }
    }
}

/// A line from the launcher to a view.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToView {
    /// The whole screen: first after [`ViewHello`], and after every resize.
    Snapshot(Snapshot),
    /// The rows that changed since the previous frame.
    Rows(RowsChanged),
    /// The rows that changed, which the launcher has drawn on the view's
    /// terminal itself ([`ViewHello::tty`]): the view takes them into its
    /// screen as drawn, after writing `unwritten` (what the terminal did
    /// not take at once) to its terminal. The terminal's attributes are
    /// left at their defaults and its cursor where `rows.cursor` says.
    /// Echoes drawn one after the other are told as one, before the
    /// launcher lets go of the rows: when the view asks for them
    /// ([`ViewEvent::TakeRows`]), before any other line to the view, or
    /// at once when the terminal did not take all.
    Drawn {
        rows: RowsChanged,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        unwritten: String,
    },
    /// The view's terminal's keys are the view's again
    /// ([`ViewEvent::LendKeys`] number `lend`): the launcher reads them no
    /// more. `bytes`: what it read and did not type for the Tick (from the
    /// first byte that is not [`typed_as_is`] on), for the view to take
    /// as read from its terminal, first. Sent when such a byte came, when
    /// the view asked ([`ViewEvent::TakeKeys`]), or at once when the
    /// launcher cannot read that terminal (the view lends it no more).
    KeysBack {
        lend: u64,
        #[serde(default, skip_serializing_if = "Vec::is_empty", with = "byte_chars")]
        #[schemars(with = "String")]
        bytes: Vec<u8>,
    },
    /// The PTY changed size; a [`ToView::Snapshot`] at that size follows.
    Resized { cols: u16, rows: u16 },
    /// The Tick's session ended; the launcher closes the connection after it.
    Ended { reason: String },
    /// The Tick rang the bell: the view rings its terminal's.
    Bell,
    /// The Tick wrote to the clipboard (OSC 52); the view passes it on to
    /// its terminal (`selection`: the primary selection).
    Clipboard {
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        selection: bool,
        text: String,
    },
    /// The images the program drew that are on the screen or in its
    /// history now (sixel, kitty graphics; [`crate::wire::ImagePlacement`],
    /// rows counted from the live screen's top whatever the view's scroll):
    /// sent after every [`ToView::Snapshot`] when the screen holds any, and
    /// after a frame whenever the list changed (an image drawn, moved by
    /// scrolling or a resize, dropped); an empty list once the last one is
    /// dropped. The list carries no pixels: a view that can draw images
    /// asks for each one's bytes once ([`ViewEvent::Image`]; an image's
    /// bytes never change while its index lives).
    Images {
        placements: Vec<crate::wire::ImagePlacement>,
    },
    /// The answer to [`ViewEvent::Image`]: the image's bytes in the
    /// encoding the program sent (a sixel as its whole sequence; a kitty
    /// image's decoded data), or `data: null` when that image is no longer
    /// kept.
    Image {
        index: u32,
        data: Option<crate::wire::ImageData>,
    },
}

/// The current screen of the Tick, as the emulator holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Snapshot {
    /// The PTY's (and emulator's) size.
    pub cols: u16,
    pub rows: u16,
    pub cursor: Cursor,
    /// The Tick switched to the alternate screen (full-screen TUI).
    #[serde(default)]
    pub alt_screen: bool,
    #[serde(default)]
    pub modes: Modes,
    /// The window title the Tick set (OSC 0/2); empty when none.
    #[serde(default)]
    pub title: String,
    /// How far back into history this view is scrolled, and how much
    /// history there is.
    #[serde(default, skip_serializing_if = "Scrollback::is_live_and_empty")]
    pub scroll: Scrollback,
    /// Exactly `rows` lines, top to bottom.
    pub lines: Vec<Line>,
}

/// A view's position in the screen's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Scrollback {
    /// Lines scrolled back from the live screen (0: live).
    #[serde(default)]
    pub offset: u32,
    /// Lines of history the screen holds.
    #[serde(default)]
    pub history: u32,
}

impl Scrollback {
    fn is_live_and_empty(&self) -> bool {
        *self == Scrollback::default()
    }
}

/// Rows that changed since the previous frame, with the cursor and modes as
/// they are now. Sizes never change in a `Rows` frame (see [`ToView::Resized`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RowsChanged {
    /// Output scrolled the screen: its lines move up by this many rows
    /// first (blank lines come in at the bottom), then `rows` apply. The
    /// lines that only moved are not sent again, as tmux scrolls a client's
    /// terminal rather than drawing it again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub scrolled: u16,
    /// `(row index from the top, its new content)`, ascending.
    pub rows: Vec<(u16, Line)>,
    pub cursor: Cursor,
    #[serde(default)]
    pub alt_screen: bool,
    #[serde(default)]
    pub modes: Modes,
    /// The new title, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Scrollback::is_live_and_empty")]
    pub scroll: Scrollback,
}

/// Cursor position (zero-based cells within the visible screen) and looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Cursor {
    pub x: u16,
    pub y: u16,
    pub visible: bool,
    #[serde(default, skip_serializing_if = "CursorShape::is_default")]
    pub shape: CursorShape,
}

/// The cursor shape the Tick asked for (DECSCUSR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CursorShape {
    #[default]
    Default,
    BlinkingBlock,
    SteadyBlock,
    BlinkingUnderline,
    SteadyUnderline,
    BlinkingBar,
    SteadyBar,
}

impl CursorShape {
    fn is_default(&self) -> bool {
        *self == CursorShape::Default
    }
}

/// The terminal modes the Tick set. A view mirrors the ones that change
/// what its own terminal must report (mouse); the launcher applies the rest
/// when it encodes the view's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Modes {
    /// `CSI ?2004h`: pastes arrive bracketed.
    #[serde(default, skip_serializing_if = "is_false")]
    pub bracketed_paste: bool,
    /// Which mouse events the Tick asked for (`CSI ?1000/1002/1003h`).
    #[serde(default, skip_serializing_if = "MouseTracking::is_off")]
    pub mouse: MouseTracking,
    /// `CSI ?1006h`: SGR mouse encoding.
    #[serde(default, skip_serializing_if = "is_false")]
    pub mouse_sgr: bool,
    /// `CSI ?1h` (DECCKM): cursor keys send `ESC O A` instead of `ESC [ A`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub app_cursor_keys: bool,
    /// `ESC =` (DECKPAM): application keypad.
    #[serde(default, skip_serializing_if = "is_false")]
    pub app_keypad: bool,
    /// `CSI ?1004h`: the Tick wants focus in/out reports.
    #[serde(default, skip_serializing_if = "is_false")]
    pub focus_events: bool,
}

fn is_zero(n: &u16) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Mouse reporting the Tick asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseTracking {
    #[default]
    Off,
    /// 1000: presses and releases.
    Click,
    /// 1002: also motion while a button is down.
    Drag,
    /// 1003: all motion.
    Motion,
}

impl MouseTracking {
    fn is_off(&self) -> bool {
        *self == MouseTracking::Off
    }
}

/// One row of the screen: runs of text sharing attributes, left to right from
/// column 0. Trailing blank cells with default attributes are dropped; the
/// rest of the row is blank. A wide character occupies two columns (its run
/// text holds it once); combining characters stay with their base character.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Line {
    #[serde(default)]
    pub runs: Vec<Run>,
}

impl Line {
    /// The row's text (what `tickloop screen` shows for it, before trimming).
    pub fn text(&self) -> String {
        self.runs.iter().map(|r| r.text.as_str()).collect()
    }
}

/// Text with one set of attributes.
// Read by hand, without serde's buffering: `decode`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, JsonSchema)]
pub struct Run {
    pub text: String,
    #[serde(flatten)]
    pub attrs: Attrs,
}

/// Cell attributes; every field absent means the terminal's default.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Attrs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fg: Option<Color>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg: Option<Color>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub bold: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub dim: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub italic: bool,
    #[serde(default, skip_serializing_if = "Underline::is_none")]
    pub underline: Underline,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub underline_color: Option<Color>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub blink: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub reverse: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub invisible: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub strikethrough: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub overline: bool,
    /// The hyperlink the text is part of (OSC 8), its URI.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

impl Attrs {
    /// No attribute set: the terminal's defaults.
    pub fn is_default(&self) -> bool {
        *self == Attrs::default()
    }
}

/// Underline style (SGR 4, 4:x, 21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Underline {
    #[default]
    None,
    Single,
    Double,
    Curly,
    Dotted,
    Dashed,
}

impl Underline {
    fn is_none(&self) -> bool {
        *self == Underline::None
    }
}

/// A colour: a palette index (0-15 the ANSI colours, 16-255 the xterm cube
/// and greys) as a number, or 24-bit colour as `"#rrggbb"`.
// Read by hand, without serde's buffering: `decode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Color {
    Index(u8),
    #[serde(serialize_with = "hex_rgb::serialize")]
    #[schemars(with = "String")]
    Rgb(u8, u8, u8),
}

/// The RGB value of entry `index` of xterm's default 256-colour palette.
pub fn xterm_rgb(index: u8) -> (u8, u8, u8) {
    const ANSI: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (205, 0, 0),
        (0, 205, 0),
        (205, 205, 0),
        (0, 0, 238),
        (205, 0, 205),
        (0, 205, 205),
        (229, 229, 229),
        (127, 127, 127),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (92, 92, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match index {
        0..=15 => ANSI[usize::from(index)],
        16..=231 => {
            let i = index - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + v * 40 };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        232..=255 => {
            let v = 8 + (index - 232) * 10;
            (v, v, v)
        }
    }
}

/// Bytes as a string of the characters U+0000 to U+00FF, one a byte:
/// the text as typed, its controls escaped by JSON, any byte possible.
mod byte_chars {
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&bytes.iter().map(|&b| char::from(b)).collect::<String>())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        String::deserialize(d)?
            .chars()
            .map(|c| {
                u8::try_from(u32::from(c)).map_err(|_| {
                    D::Error::custom(format!("{c:?} is not a byte (U+0000 to U+00FF)"))
                })
            })
            .collect()
    }
}

mod hex_rgb {
    use serde::Serializer;

    pub fn serialize<S: Serializer>(r: &u8, g: &u8, b: &u8, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("#{r:02x}{g:02x}{b:02x}"))
    }

    /// `"#rrggbb"` as its three parts.
    pub fn parse(text: &str) -> Result<(u8, u8, u8), String> {
        let refused = || format!("colour {text:?} is not #rrggbb");
        let hex = text
            .strip_prefix('#')
            .filter(|h| h.len() == 6 && h.is_ascii())
            .ok_or_else(refused)?;
        let part = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| refused());
        Ok((part(0)?, part(2)?, part(4)?))
    }
}

/// A line from a view to the launcher, after its [`ViewHello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ViewEvent {
    /// A key press, encoded by the launcher for the Tick's current modes.
    Key {
        key: Key,
        #[serde(default, skip_serializing_if = "Mods::is_empty")]
        mods: Mods,
    },
    /// Pasted text: bracketed when the Tick enabled bracketed paste.
    Paste { text: String },
    /// A mouse event at a cell of the Tick's screen (zero-based); sent to the
    /// Tick only when it enabled mouse reporting.
    Mouse {
        x: u16,
        y: u16,
        kind: MouseKind,
        button: MouseButton,
        #[serde(default, skip_serializing_if = "Mods::is_empty")]
        mods: Mods,
    },
    /// The view's terminal gained (`true`) or lost focus.
    Focus { focused: bool },
    /// The view's new size in cells.
    Resize { cols: u16, rows: u16 },
    /// Show this view the screen `offset` lines back into history (0: live;
    /// clamped to the history held). Only this view scrolls; the Tick and
    /// other views are untouched. A key or paste returns the view to live.
    Scroll { offset: u32 },
    /// The view's terminal's own colours, as it answered the view's
    /// questions (sent once they arrived, any time after the hello): the
    /// launcher answers the Tick's OSC 10/11/4 queries with the colours of
    /// the most recently active view that sent them.
    Colors(TermColors),
    /// Send me the bytes of the kept image `index` (from
    /// [`ToView::Images`]); answered with [`ToView::Image`].
    Image { index: u32 },
    /// The view reads its terminal no more: the launcher reads the keys
    /// typed there ([`ViewHello::tty`]) and types for the Tick what is
    /// [`typed_as_is`] (`prefix`: the view's prefix key's byte, which is
    /// the view's), as tmux's server reads its client's terminal, until it
    /// gives them back ([`ToView::KeysBack`] with the same `lend`). Sent
    /// by a local view while it shows the Tick's screen cell for cell and
    /// holds no part of a key; the two take turns with the lock on the
    /// device's byte [`KEYS_LOCK_BYTE`] as well, which the launcher holds
    /// while it reads and the view takes before it lets go of its
    /// terminal.
    LendKeys { lend: u64, prefix: u8 },
    /// Give the keys of lending `lend` back ([`ToView::KeysBack`]).
    TakeKeys { lend: u64 },
    /// The view wants its terminal's rows back: the launcher, which keeps
    /// the rows it drew an echo on until it is asked (so that the view is
    /// not woken by every echo), tells what it drew ([`ToView::Drawn`])
    /// and lets go of them. Sent by a view that holds the lock on
    /// [`ROWS_WANTED_LOCK_BYTE`] (the launcher draws no more while it
    /// does) and found a row taken.
    TakeRows,
}

/// The byte of the view's terminal device whose lock stands for reading
/// its keys ([`ViewEvent::LendKeys`]); the bytes below it stand for the
/// screen's rows.
pub const KEYS_LOCK_BYTE: u16 = u16::MAX - 1;

/// The byte of the view's terminal device whose lock says that the view
/// wants its rows back ([`ViewEvent::TakeRows`]): held by the view
/// whenever it holds its rows, and while it waits for them.
pub const ROWS_WANTED_LOCK_BYTE: u16 = u16::MAX;

/// Whether a byte the view's terminal sent reaches the Tick as it is, the
/// same as the view would type it after reading it as a key (checked
/// against the view's reading and the launcher's encoding in
/// `view-monitor`'s tests): printable ASCII, Backspace (DEL), Tab, Enter
/// (CR, but not where the Tick asked Enter to send CR LF:
/// `newline_mode`), and the control characters of ctrl+A to ctrl+Z but
/// ctrl+H, ctrl+J and ctrl+M's others; never ESC, the view's `prefix`, or
/// a byte of a longer character.
pub fn typed_as_is(byte: u8, prefix: Option<u8>, newline_mode: bool) -> bool {
    if Some(byte) == prefix {
        return false;
    }
    match byte {
        b'\r' => !newline_mode,
        b'\t' | 0x7f | 0x20..=0x7e => true,
        0x01..=0x07 | 0x0b | 0x0c | 0x0e..=0x1a => true,
        _ => false,
    }
}

/// A terminal's colours as `#rrggbb`; what it did not say is left out.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct TermColors {
    /// Default foreground (OSC 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fg: Option<String>,
    /// Default background (OSC 11).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bg: Option<String>,
    /// Palette entries (OSC 4) as `(index, colour)`, ascending: the views
    /// ask for the 16 ANSI colours.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub palette: Vec<(u8, String)>,
}

impl TermColors {
    /// The terminal said nothing.
    pub fn is_empty(&self) -> bool {
        self.fg.is_none() && self.bg.is_none() && self.palette.is_empty()
    }
}

/// A key, independent of how the view's terminal encoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Key {
    /// A character key (with shift already applied: `A`, not `a` + shift).
    Char(char),
    Enter,
    Tab,
    Backspace,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// Function key F1..F24.
    F(u8),
}

/// Modifier keys held with a key or mouse event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct Mods {
    #[serde(default, skip_serializing_if = "is_false")]
    pub shift: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub alt: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ctrl: bool,
    #[serde(default, skip_serializing_if = "is_false", rename = "super")]
    pub super_: bool,
}

impl Mods {
    pub const NONE: Mods = Mods {
        shift: false,
        alt: false,
        ctrl: false,
        super_: false,
    };

    pub fn is_empty(&self) -> bool {
        *self == Mods::NONE
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseKind {
    Press,
    Release,
    Move,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    Left,
    Middle,
    Right,
    WheelUp,
    WheelDown,
    /// Motion with no button held.
    None,
}

/// Why a view's frame could not be applied to its copy of the screen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApplyError {
    #[error("row {row} is outside the {rows}-row screen")]
    RowOutOfRange { row: u16, rows: u16 },
    #[error("a scroll of {scrolled} rows is more than the {rows}-row screen")]
    ScrollOutOfRange { scrolled: u16, rows: u16 },
    #[error("a snapshot of {cols}x{rows} cells with {lines} lines is no screen a view draws (at most {MAX_SCREEN_CELLS} cells, one line per row)")]
    BadShape { cols: u16, rows: u16, lines: usize },
}

/// The most cells a screen sent to a view may have (2048 x 2048): a
/// launcher's PTY is the size of a person's terminal, far below; a
/// snapshot above it is refused rather than drawn.
pub const MAX_SCREEN_CELLS: u32 = 1 << 22;

/// The size a view of `cols` x `rows` cells gets: its own when it holds at
/// most [`MAX_SCREEN_CELLS`], else the largest size allowed at its width
/// (as many rows as fit; a width of 65535 still has 64). A launcher never
/// takes more, whatever a view asks.
pub fn fit_size(cols: u16, rows: u16) -> (u16, u16) {
    if u32::from(cols) * u32::from(rows) <= MAX_SCREEN_CELLS {
        return (cols, rows);
    }
    let fitting = MAX_SCREEN_CELLS / u32::from(cols.max(1));
    (cols, u16::try_from(fitting).unwrap_or(u16::MAX).min(rows))
}

/// Whether a view of `cols` x `rows` asks for more than a Tick's screen may
/// have ([`fit_size`] makes it smaller).
pub fn too_large(cols: u16, rows: u16) -> bool {
    fit_size(cols, rows) != (cols, rows)
}

impl Snapshot {
    /// A blank screen of the given size, cursor at the origin.
    pub fn blank(cols: u16, rows: u16) -> Self {
        Snapshot {
            cols,
            rows,
            cursor: Cursor {
                x: 0,
                y: 0,
                visible: true,
                shape: CursorShape::Default,
            },
            alt_screen: false,
            modes: Modes::default(),
            title: String::new(),
            scroll: Scrollback::default(),
            lines: vec![Line::default(); usize::from(rows)],
        }
    }

    /// Whether this is a screen a view can keep and draw: at least one
    /// cell, at most [`MAX_SCREEN_CELLS`], one line per row.
    pub fn check(&self) -> Result<(), ApplyError> {
        let cells = u32::from(self.cols) * u32::from(self.rows);
        if cells == 0 || cells > MAX_SCREEN_CELLS || self.lines.len() != usize::from(self.rows) {
            return Err(ApplyError::BadShape {
                cols: self.cols,
                rows: self.rows,
                lines: self.lines.len(),
            });
        }
        Ok(())
    }

    /// Apply a [`RowsChanged`] frame to this copy of the screen (what a view
    /// does to keep its model current). Refuses rows outside the screen and
    /// then changes nothing.
    pub fn apply(&mut self, frame: RowsChanged) -> Result<(), ApplyError> {
        if let Some((row, _)) = frame.rows.iter().find(|(row, _)| *row >= self.rows) {
            return Err(ApplyError::RowOutOfRange {
                row: *row,
                rows: self.rows,
            });
        }
        if frame.scrolled > self.rows {
            return Err(ApplyError::ScrollOutOfRange {
                scrolled: frame.scrolled,
                rows: self.rows,
            });
        }
        self.lines.resize(usize::from(self.rows), Line::default());
        if frame.scrolled > 0 {
            self.lines.drain(..usize::from(frame.scrolled));
            self.lines.resize(usize::from(self.rows), Line::default());
        }
        for (row, line) in frame.rows {
            self.lines[usize::from(row)] = line;
        }
        self.cursor = frame.cursor;
        self.alt_screen = frame.alt_screen;
        self.modes = frame.modes;
        self.scroll = frame.scroll;
        if let Some(title) = frame.title {
            self.title = title;
        }
        Ok(())
    }

    /// The frame that turns `self` into `next`, or `None` when `next` cannot
    /// be reached by changing rows (a different size: send `next` whole).
    /// An empty frame (nothing changed) is `Some` with no rows.
    pub fn diff(&self, next: &Snapshot) -> Option<RowsChanged> {
        if self.cols != next.cols || self.rows != next.rows || self.lines.len() != next.lines.len()
        {
            return None;
        }
        let scrolled = scrolled_by(&self.lines, &next.lines);
        let blank = Line::default();
        let rows = next
            .lines
            .iter()
            .enumerate()
            .filter(|(i, new)| self.lines.get(i + scrolled).unwrap_or(&blank) != *new)
            .filter_map(|(i, new)| Some((u16::try_from(i).ok()?, new.clone())))
            .collect();
        Some(RowsChanged {
            scrolled: u16::try_from(scrolled).ok()?,
            rows,
            cursor: next.cursor,
            alt_screen: next.alt_screen,
            modes: next.modes,
            title: (self.title != next.title).then(|| next.title.clone()),
            scroll: next.scroll,
        })
    }
}

/// By how many rows output scrolled the screen `old` to make `new` (0: it
/// did not): the count that leaves the fewest rows to send, when that is
/// fewer than without scrolling. The counts tried are those that bring one
/// of `old`'s lines onto `new`'s first non-blank line (at most
/// [`SCROLLS_TRIED`] of them), so a frame costs a few passes over its rows.
fn scrolled_by(old: &[Line], new: &[Line]) -> usize {
    let Some(first) = new.iter().position(|line| !line.runs.is_empty()) else {
        return 0;
    };
    let blank = Line::default();
    let to_send = |count: usize| {
        new.iter()
            .enumerate()
            .filter(|(i, line)| old.get(i + count).unwrap_or(&blank) != *line)
            .count()
    };
    let mut best = (to_send(0), 0);
    let candidates = (first + 1..old.len())
        .filter(|&at| old[at] == new[first])
        .map(|at| at - first)
        .take(SCROLLS_TRIED);
    for count in candidates {
        let sent = to_send(count);
        if sent < best.0 {
            best = (sent, count);
        }
    }
    best.1
}

/// How many scroll counts [`scrolled_by`] tries at most (a screen of equal
/// lines matches at every count).
const SCROLLS_TRIED: usize = 4;

impl RowsChanged {
    /// Nothing at all changed: no need to send this frame.
    pub fn is_noop(&self, prev: &Snapshot) -> bool {
        self.scrolled == 0
            && self.rows.is_empty()
            && self.title.is_none()
            && self.cursor == prev.cursor
            && self.alt_screen == prev.alt_screen
            && self.modes == prev.modes
            && self.scroll == prev.scroll
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Keys given back are any bytes, written as one character a byte; a
    /// character past U+00FF is refused.
    #[test]
    fn keys_given_back_carry_any_byte() {
        let back = ToView::KeysBack {
            lend: 3,
            bytes: vec![0x1b, b'[', b'A', 0xc3, 0xa9, 0xff, 0],
        };
        let line = serde_json::to_string(&back).unwrap();
        assert_eq!(
            line,
            r#"{"type":"keys_back","lend":3,"bytes":"\u001b[AÃ©ÿ\u0000"}"#
        );
        assert_eq!(serde_json::from_str::<ToView>(&line).unwrap(), back);
        let wide = r#"{"type":"keys_back","lend":3,"bytes":"é€"}"#;
        let refused = serde_json::from_str::<ToView>(wide).unwrap_err();
        assert!(refused.to_string().contains("is not a byte"), "{refused}");
    }

    #[test]
    fn colours_serialize_as_index_or_hex() {
        let run = Run {
            text: "x".into(),
            attrs: Attrs {
                fg: Some(Color::Index(196)),
                bg: Some(Color::Rgb(0x12, 0xab, 0xff)),
                bold: true,
                ..Attrs::default()
            },
        };
        let value = serde_json::to_value(&run).unwrap();
        assert_eq!(
            value,
            json!({"text":"x","fg":196,"bg":"#12abff","bold":true})
        );
        let back: Run = serde_json::from_value(value).unwrap();
        assert_eq!(back, run);
        assert!(serde_json::from_value::<Color>(json!("#12ab")).is_err());
        assert!(serde_json::from_value::<Color>(json!(300)).is_err());
    }

    #[test]
    fn events_round_trip() {
        let events = vec![
            ViewEvent::Key {
                key: Key::Char('a'),
                mods: Mods {
                    ctrl: true,
                    ..Mods::NONE
                },
            },
            ViewEvent::Key {
                key: Key::F(5),
                mods: Mods::NONE,
            },
            ViewEvent::Paste {
                text: "a\nb".into(),
            },
            ViewEvent::Mouse {
                x: 3,
                y: 4,
                kind: MouseKind::Press,
                button: MouseButton::Left,
                mods: Mods::NONE,
            },
            ViewEvent::Focus { focused: false },
            ViewEvent::Resize { cols: 80, rows: 24 },
            ViewEvent::Colors(TermColors {
                fg: Some("#101010".into()),
                bg: None,
                palette: vec![(1, "#cd0000".into())],
            }),
        ];
        for event in events {
            let line = serde_json::to_string(&event).unwrap();
            let back: ViewEvent = serde_json::from_str(&line).unwrap();
            assert_eq!(back, event, "{line}");
        }
        let key: ViewEvent = serde_json::from_str(r#"{"event":"key","key":"enter"}"#).unwrap();
        assert_eq!(
            key,
            ViewEvent::Key {
                key: Key::Enter,
                mods: Mods::NONE
            }
        );
    }

    #[test]
    fn a_size_past_the_limit_keeps_its_width_and_gets_the_rows_that_fit() {
        assert_eq!(fit_size(100, 30), (100, 30));
        assert_eq!(fit_size(2048, 2048), (2048, 2048));
        assert!(!too_large(2048, 2048));
        // 2100 x 2000 is 4,200,000 cells: 1997 rows of 2100 fit.
        assert_eq!(fit_size(2100, 2000), (2100, 1997));
        assert!(too_large(2100, 2000));
        assert_eq!(fit_size(u16::MAX, u16::MAX), (u16::MAX, 64));
        for (cols, rows) in [(2100, 2000), (u16::MAX, u16::MAX), (3000, 1500)] {
            let (c, r) = fit_size(cols, rows);
            assert!(u32::from(c) * u32::from(r) <= MAX_SCREEN_CELLS);
            assert!(u32::from(c) * (u32::from(r) + 1) > MAX_SCREEN_CELLS);
        }
        assert_eq!(fit_size(0, 0), (0, 0));
    }

    #[test]
    fn view_hello_defaults() {
        let hello: ViewHello = serde_json::from_str(r#"{"cols":80,"rows":24}"#).unwrap();
        assert_eq!(hello.term, TermCaps::default());
        assert_eq!(hello.term.colors, 256);
    }

    #[test]
    fn diff_and_apply_reach_the_next_screen() {
        let mut a = Snapshot::blank(10, 3);
        let mut b = a.clone();
        b.lines[1] = Line {
            runs: vec![Run {
                text: "hi".into(),
                attrs: Attrs::default(),
            }],
        };
        b.cursor.x = 2;
        b.title = "t".into();
        let frame = a.diff(&b).unwrap();
        assert_eq!(frame.rows.len(), 1);
        assert!(!frame.is_noop(&a));
        a.apply(frame).unwrap();
        assert_eq!(a, b);
        let again = a.diff(&b).unwrap();
        assert!(again.is_noop(&a));
        assert!(a.diff(&Snapshot::blank(11, 3)).is_none());
        let bad = RowsChanged {
            scrolled: 0,
            rows: vec![(3, Line::default())],
            ..again
        };
        assert_eq!(
            a.apply(bad),
            Err(ApplyError::RowOutOfRange { row: 3, rows: 3 })
        );
    }

    /// A screen whose rows hold `texts` ("" for a blank row).
    fn screen_of(texts: &[&str]) -> Snapshot {
        let rows = u16::try_from(texts.len()).unwrap();
        let mut snap = Snapshot::blank(10, rows);
        for (line, text) in snap.lines.iter_mut().zip(texts) {
            if !text.is_empty() {
                line.runs = vec![Run {
                    text: (*text).into(),
                    attrs: Attrs::default(),
                }];
            }
        }
        snap
    }

    #[test]
    fn scrolled_output_sends_only_the_rows_that_did_not_just_move() {
        let mut a = screen_of(&["$ ls", "a", "b", "c", "", ""]);
        let b = screen_of(&["b", "c", "d", "e", "$", ""]);
        let frame = a.diff(&b).unwrap();
        assert_eq!(frame.scrolled, 2);
        let sent: Vec<u16> = frame.rows.iter().map(|(row, _)| *row).collect();
        assert_eq!(sent, [2, 3, 4]);
        let wire = serde_json::to_value(ToView::Rows(frame.clone())).unwrap();
        assert_eq!(wire["scrolled"], 2);
        let back: ToView = serde_json::from_value(wire).unwrap();
        assert_eq!(back, ToView::Rows(frame.clone()));
        a.apply(frame).unwrap();
        assert_eq!(a, b);
        // Without a scroll, the field is not on the wire.
        let still = a.diff(&a.clone()).unwrap();
        assert!(!serde_json::to_string(&still).unwrap().contains("scrolled"));
    }

    #[test]
    fn a_scroll_past_the_screen_is_refused_and_changes_nothing() {
        let mut a = screen_of(&["a", "b", "c"]);
        let before = a.clone();
        let mut frame = a.diff(&a.clone()).unwrap();
        frame.scrolled = 4;
        assert_eq!(
            a.apply(frame),
            Err(ApplyError::ScrollOutOfRange {
                scrolled: 4,
                rows: 3
            })
        );
        assert_eq!(a, before);
    }

    proptest::proptest! {
        /// Whatever two screens of one size hold (lines from a small set,
        /// so that scrolls, repeats and blanks are common), the frame
        /// between them brings the first to the second, and sends no more
        /// rows than the rows that differ in place.
        #[test]
        fn any_frame_reaches_the_next_screen_with_no_more_rows_than_in_place(
            old in proptest::collection::vec(0usize..6, 1..12),
            shift in 0usize..12,
            edits in proptest::collection::vec((0usize..12, 0usize..6), 0..4),
        ) {
            let texts = ["", "a", "b", "c", "$ ls", "\u{1b}x"];
            let rows = old.len();
            let mut new: Vec<usize> = old.iter().skip(shift).copied().collect();
            new.resize(rows, 0);
            for (row, text) in edits {
                new[row % rows] = text;
            }
            let old_texts: Vec<&str> = old.iter().map(|&i| texts[i]).collect();
            let new_texts: Vec<&str> = new.iter().map(|&i| texts[i]).collect();
            let mut a = screen_of(&old_texts);
            let b = screen_of(&new_texts);
            let frame = a.diff(&b).unwrap();
            let in_place = old_texts.iter().zip(&new_texts).filter(|(o, n)| o != n).count();
            proptest::prop_assert!(frame.rows.len() <= in_place);
            a.apply(frame).unwrap();
            proptest::prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn to_view_is_tagged() {
        let ended = serde_json::to_value(ToView::Ended {
            reason: "exited".into(),
        })
        .unwrap();
        assert_eq!(ended, json!({"type":"ended","reason":"exited"}));
        let snap = serde_json::to_string(&ToView::Snapshot(Snapshot::blank(2, 1))).unwrap();
        let back: ToView = serde_json::from_str(&snap).unwrap();
        assert_eq!(back, ToView::Snapshot(Snapshot::blank(2, 1)));
    }
}
