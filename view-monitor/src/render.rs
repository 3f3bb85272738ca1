//! Drawing a Tick's screen in a view: turns the attach protocol's
//! [`Snapshot`] into termwiz [`Surface`]s cropped or padded to the view's
//! size (with a status line saying so), and the view terminal's input events
//! into attach-protocol [`ViewEvent`]s. No I/O: the plain `tickloop attach`
//! view and the Monitor's overlay both draw with it, then send
//! `Surface::diff_screens` to their terminal so an update costs a few bytes.

use std::hash::{Hash, Hasher};

use termwiz::cell::{Blink, CellAttributes, Intensity, Underline};
use termwiz::color::{ColorAttribute, SrgbaTuple};
use termwiz::input::{InputEvent, KeyCode, KeyEvent, Modifiers, MouseButtons, MouseEvent};
use termwiz::surface::{Change, CursorVisibility, Position, Surface};
use tickloop_proto::attach::{self, Color, CursorShape, Key, Mods, MouseKind, Snapshot, ViewEvent};

/// How long the start of a split-up key sequence is held for the rest.
const KEY_HOLD: std::time::Duration = std::time::Duration::from_millis(15);

/// Reads input events from the view's terminal, and puts back together the
/// xterm sequences for modified Insert/Delete/Home/End/PageUp/PageDown
/// (`ESC [ 5 ; 2 ~` is shift+PageUp), which termwiz's parser does not know
/// and hands over as alt+`[` followed by plain characters.
///
/// Either it polls a termwiz terminal ([`InputReader::poll`], the Monitor),
/// or its owner reads the terminal and feeds the bytes
/// ([`InputReader::feed`], then [`InputReader::next_event`]; the attach view's
/// one loop), with termwiz's `InputParser` used as a parser only.
#[derive(Debug, Default)]
pub struct InputReader {
    queue: std::collections::VecDeque<InputEvent>,
    held: Vec<char>,
    /// When the start of a split-up sequence began to be held.
    held_since: Option<std::time::Instant>,
    parser: termwiz::input::InputParser,
}

impl InputReader {
    /// Parses `bytes` read from the terminal (`maybe_more`: the read may
    /// have stopped inside a sequence); the events wait for
    /// [`InputReader::next_event`].
    pub fn feed(&mut self, bytes: &[u8], maybe_more: bool) {
        let mut parsed = Vec::new();
        self.parser
            .parse(bytes, |event| parsed.push(event), maybe_more);
        for event in parsed {
            self.push(event);
        }
        if self.held.is_empty() {
            self.held_since = None;
        } else if self.held_since.is_none() {
            self.held_since = Some(std::time::Instant::now());
        }
    }

    /// The next event parsed.
    pub fn next_event(&mut self) -> Option<InputEvent> {
        self.queue.pop_front()
    }

    /// When what is held must go on as the keys it was, if anything is.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.held_since.map(|since| since + KEY_HOLD)
    }

    /// The deadline passed: what was held goes on as the keys it was.
    pub fn on_deadline(&mut self, now: std::time::Instant) {
        if self.deadline().is_some_and(|at| at <= now) {
            self.release();
        }
    }

    /// The next event, waiting at most `wait` (`None`: until one comes). An
    /// error is the terminal gone.
    pub fn poll(
        &mut self,
        term: &mut impl termwiz::terminal::Terminal,
        wait: Option<std::time::Duration>,
    ) -> std::io::Result<Option<InputEvent>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Ok(Some(event));
            }
            let holding = !self.held.is_empty();
            let wait = if holding {
                Some(wait.map_or(KEY_HOLD, |w| w.min(KEY_HOLD)))
            } else {
                wait
            };
            let polled = term
                .poll_input(wait)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            match polled {
                Some(event) => self.push(event),
                None if holding => self.release(),
                None => return Ok(None),
            }
        }
    }

    /// Takes one event from the terminal's parser.
    pub fn push(&mut self, event: InputEvent) {
        let key = match &event {
            InputEvent::Key(KeyEvent {
                key: KeyCode::Char(c),
                modifiers,
            }) => Some((*c, *modifiers)),
            _ => None,
        };
        match key {
            Some(('[', m)) if self.held.is_empty() && m == Modifiers::ALT => self.held.push('['),
            Some((c, m)) if !self.held.is_empty() && m == Modifiers::NONE => {
                if c.is_ascii_digit() || c == ';' {
                    self.held.push(c);
                    if self.held.len() > 8 {
                        self.release();
                    }
                } else if let Some(decoded) =
                    (c == '~').then(|| decode_tilde(&self.held[1..])).flatten()
                {
                    self.held.clear();
                    self.queue.push_back(InputEvent::Key(decoded));
                } else {
                    self.release();
                    self.queue.push_back(event);
                }
            }
            _ => {
                self.release();
                self.queue.push_back(event);
            }
        }
    }

    /// Every event pushed so far, with what was held handed on: for a view
    /// whose input comes in whole messages (a page's xterm.js), after which
    /// nothing more of a sequence follows.
    pub fn drain(&mut self) -> Vec<InputEvent> {
        self.release();
        self.queue.drain(..).collect()
    }

    /// Hands on what was held, as the keys they were.
    fn release(&mut self) {
        self.held_since = None;
        for (i, c) in self.held.drain(..).enumerate() {
            let modifiers = if i == 0 {
                Modifiers::ALT
            } else {
                Modifiers::NONE
            };
            self.queue.push_back(InputEvent::Key(KeyEvent {
                key: KeyCode::Char(c),
                modifiers,
            }));
        }
    }
}

/// The key of `ESC [ N ; M ~` (params `N;M`), xterm's modified keys.
fn decode_tilde(params: &[char]) -> Option<KeyEvent> {
    let text: String = params.iter().collect();
    let (n, m) = text.split_once(';')?;
    let key = match n {
        "2" => KeyCode::Insert,
        "3" => KeyCode::Delete,
        "1" | "7" => KeyCode::Home,
        "4" | "8" => KeyCode::End,
        "5" => KeyCode::PageUp,
        "6" => KeyCode::PageDown,
        _ => return None,
    };
    let bits = m.parse::<u8>().ok()?.checked_sub(1)?;
    let mut modifiers = Modifiers::NONE;
    if bits & 1 != 0 {
        modifiers |= Modifiers::SHIFT;
    }
    if bits & 2 != 0 {
        modifiers |= Modifiers::ALT;
    }
    if bits & 4 != 0 {
        modifiers |= Modifiers::CTRL;
    }
    Some(KeyEvent { key, modifiers })
}

/// Lines one turn of the mouse wheel scrolls through history.
pub const WHEEL_LINES: u32 = 3;

/// What a view does with an input event, given its place in history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScrollAction {
    /// Not about history: send the event to the Tick as usual.
    Pass,
    /// Show the screen this many lines back (send `ViewEvent::Scroll`);
    /// the event is used up.
    Scroll(u32),
    /// Back to the live screen (send `ViewEvent::Scroll { offset: 0 }`);
    /// the key is used up, as tmux's copy mode uses the `q` that leaves
    /// it: it does not reach the program (a `q`, an `r` would act there).
    Live,
    /// Back to the live screen, then send the event to the Tick: a paste
    /// while scrolled back is not lost.
    LiveThenPass,
}

/// A view's position in the Tick's history: shift+PageUp/PageDown page
/// through it, the mouse wheel scrolls it when the Tick does not take the
/// mouse (or while already scrolled back), any other key returns to live
/// (and goes no further), a paste returns to live and goes to the Tick.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Scroller {
    pub offset: u32,
}

impl Scroller {
    /// Whether the view is showing history (not the live screen).
    pub fn scrolled(&self) -> bool {
        self.offset > 0
    }

    /// The mouse tracking the view's terminal needs: the Tick's, or clicks
    /// (for the wheel) while scrolled back.
    pub fn mouse_mode(&self, model: &Snapshot) -> attach::MouseTracking {
        if self.scrolled() && model.modes.mouse == attach::MouseTracking::Off {
            attach::MouseTracking::Click
        } else {
            model.modes.mouse
        }
    }

    /// Decide what `event` does; `page` is how many rows a page is.
    pub fn on_input(&mut self, event: &InputEvent, model: &Snapshot, page: u16) -> ScrollAction {
        let history = model.scroll.history;
        let page = u32::from(page.max(2) - 1);
        let current = self.offset;
        let scrolled = self.scrolled();
        let target = match event {
            InputEvent::Key(KeyEvent {
                key: KeyCode::PageUp,
                modifiers,
            }) if modifiers.contains(Modifiers::SHIFT) && !model.alt_screen => {
                Some(current.saturating_add(page))
            }
            InputEvent::Key(KeyEvent {
                key: KeyCode::PageDown,
                modifiers,
            }) if modifiers.contains(Modifiers::SHIFT) && scrolled => {
                Some(current.saturating_sub(page))
            }
            InputEvent::Mouse(m)
                if m.mouse_buttons.contains(MouseButtons::VERT_WHEEL)
                    && !model.alt_screen
                    && (scrolled || model.modes.mouse == attach::MouseTracking::Off) =>
            {
                if m.mouse_buttons.contains(MouseButtons::WHEEL_POSITIVE) {
                    Some(current.saturating_add(WHEEL_LINES))
                } else {
                    Some(current.saturating_sub(WHEEL_LINES))
                }
            }
            // While scrolled back, the mouse belongs to the history view.
            InputEvent::Mouse(_) if scrolled => Some(current),
            _ => None,
        };
        if let Some(offset) = target {
            self.offset = offset.min(history);
            return ScrollAction::Scroll(self.offset);
        }
        match event {
            InputEvent::Key(_) if scrolled => {
                self.offset = 0;
                ScrollAction::Live
            }
            InputEvent::Paste(_) if scrolled => {
                self.offset = 0;
                ScrollAction::LiveThenPass
            }
            _ => ScrollAction::Pass,
        }
    }
}
/// What turns a view's terminal's mouse reporting to `mode` (SGR
/// coordinates), so it reports what the Tick asked for.
pub fn mouse_reporting(mode: attach::MouseTracking) -> &'static [u8] {
    match mode {
        attach::MouseTracking::Off => b"\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1006l",
        attach::MouseTracking::Click => b"\x1b[?1003l\x1b[?1002l\x1b[?1000h\x1b[?1006h",
        attach::MouseTracking::Drag => b"\x1b[?1003l\x1b[?1002h\x1b[?1006h",
        attach::MouseTracking::Motion => b"\x1b[?1003h\x1b[?1006h",
    }
}

/// The marker a view scrolled back into history shows at its top right,
/// as tmux's copy mode does: `[back/held]`.
pub fn scroll_marker(scroll: attach::Scrollback) -> Option<String> {
    (scroll.offset > 0).then(|| format!("[{}/{}]", scroll.offset, scroll.history))
}

/// The xterm 256-colour palette entry nearest to an RGB colour (the 6x6x6
/// cube or the grey ramp), for terminals without 24-bit colour.
pub fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| -> usize {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, l)| (i32::from(**l) - i32::from(v)).abs())
            .map_or(0, |(i, _)| i)
    };
    let dist = |a: (u8, u8, u8)| -> i32 {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a.0, r) + d(a.1, g) + d(a.2, b)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    // ri, gi, bi < 6: the index fits in a u8.
    let cube_index = 16 + 36 * ri as u8 + 6 * gi as u8 + bi as u8;
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_step = (avg.saturating_sub(8) / 10).min(23) as u8;
    let grey = 8 + 10 * grey_step;
    if dist((grey, grey, grey)) < dist(cube) {
        232 + grey_step
    } else {
        cube_index
    }
}

fn color_attr(color: Option<Color>) -> ColorAttribute {
    match color {
        None => ColorAttribute::Default,
        Some(Color::Index(i)) => ColorAttribute::PaletteIndex(i),
        Some(Color::Rgb(r, g, b)) => ColorAttribute::TrueColorWithPaletteFallback(
            SrgbaTuple::from((r, g, b)),
            nearest_256(r, g, b),
        ),
    }
}

/// termwiz cell attributes for a run's attributes.
pub fn cell_attributes(attrs: &attach::Attrs) -> CellAttributes {
    let mut out = CellAttributes::default();
    out.set_foreground(color_attr(attrs.fg));
    out.set_background(color_attr(attrs.bg));
    out.set_intensity(if attrs.bold {
        Intensity::Bold
    } else if attrs.dim {
        Intensity::Half
    } else {
        Intensity::Normal
    });
    out.set_italic(attrs.italic);
    out.set_underline(match attrs.underline {
        attach::Underline::None => Underline::None,
        attach::Underline::Single => Underline::Single,
        attach::Underline::Double => Underline::Double,
        attach::Underline::Curly => Underline::Curly,
        attach::Underline::Dotted => Underline::Dotted,
        attach::Underline::Dashed => Underline::Dashed,
    });
    if let Some(color) = attrs.underline_color {
        // Always as 24-bit: termwiz's renderer writes a palette underline
        // colour with the terminal's set-foreground capability, which
        // colours the text instead. A terminal without 24-bit colour then
        // gets the default underline colour, never a recoloured text.
        let (r, g, b) = match color {
            Color::Index(i) => attach::xterm_rgb(i),
            Color::Rgb(r, g, b) => (r, g, b),
        };
        out.set_underline_color(ColorAttribute::TrueColorWithDefaultFallback(
            SrgbaTuple::from((r, g, b)),
        ));
    }
    out.set_blink(if attrs.blink {
        Blink::Slow
    } else {
        Blink::None
    });
    out.set_reverse(attrs.reverse);
    out.set_invisible(attrs.invisible);
    out.set_strikethrough(attrs.strikethrough);
    out.set_overline(attrs.overline);
    if let Some(uri) = &attrs.link {
        out.set_hyperlink(Some(std::sync::Arc::new(
            termwiz::hyperlink::Hyperlink::new(uri.clone()),
        )));
    }
    out
}

/// The Tick's screen at its own size.
pub fn model_surface(snap: &Snapshot) -> Surface {
    let mut surface = Surface::new(usize::from(snap.cols), usize::from(snap.rows));
    for (y, line) in snap.lines.iter().enumerate().take(usize::from(snap.rows)) {
        if !line.runs.is_empty() {
            surface.add_changes(line_changes(y, line, usize::from(snap.cols)));
        }
    }
    surface
}

/// The changes that draw `line` on row `y` of a surface `cols` wide whose
/// row is blank. A line wider than the row is cut at its end: a surface
/// would carry the rest over onto the next row (or scroll, on the last).
fn line_changes(y: usize, line: &tickloop_proto::attach::Line, cols: usize) -> Vec<Change> {
    let mut changes = vec![Change::CursorPosition {
        x: Position::Absolute(0),
        y: Position::Absolute(y),
    }];
    let mut room = cols;
    for run in &line.runs {
        let text = within(&run.text, &mut room);
        changes.push(Change::AllAttributes(cell_attributes(&run.attrs)));
        push_cells(&mut changes, text);
        if text.len() < run.text.len() {
            break;
        }
    }
    changes
}

/// The start of `text` that fits in `room` cells, each cell as wide as
/// [`push_cells`] draws it, and the room left after it.
fn within<'a>(text: &'a str, room: &mut usize) -> &'a str {
    use unicode_width::UnicodeWidthChar;
    let mut after_base = false;
    for (i, c) in text.char_indices() {
        let joins = after_base && !c.is_control() && c.width() == Some(0);
        let width = match (joins, c.is_control()) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => c.width().unwrap_or(1).max(1),
        };
        if width > *room {
            return &text[..i];
        }
        *room -= width;
        after_base = true;
    }
    text
}

/// A fingerprint of a line as the Tick's screen has it (`None`: blank).
fn line_key(line: &tickloop_proto::attach::Line) -> Option<u64> {
    (!line.runs.is_empty()).then(|| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        for run in &line.runs {
            run.text.hash(&mut hasher);
            run.attrs.hash(&mut hasher);
        }
        hasher.finish()
    })
}

/// Composes frames for one view, keeping the Tick's screen as a surface
/// from frame to frame: only the lines that changed since the frame before
/// are drawn into it again (a keystroke's echo changes one), where
/// [`compose`] draws every line of the screen for each frame.
#[derive(Default)]
pub struct Composer {
    model: Surface,
    /// Each row's [`line_key`] as `model` has it.
    keys: Vec<Option<u64>>,
}

impl Composer {
    /// [`compose`], from the kept surface.
    pub fn compose(
        &mut self,
        snap: &Snapshot,
        cols: u16,
        rows: u16,
        note: &str,
        force_status: bool,
    ) -> Frame {
        self.update(snap);
        let model = self.model.clone();
        compose_on(model, &self.keys, snap, cols, rows, note, force_status)
    }

    fn update(&mut self, snap: &Snapshot) {
        let size = (usize::from(snap.cols), usize::from(snap.rows));
        if self.model.dimensions() != size || self.keys.len() != size.1 {
            self.model = Surface::new(size.0, size.1);
            self.keys = vec![None; size.1];
        }
        let lines = &snap.lines[..size.1.min(snap.lines.len())];
        let keys: Vec<Option<u64>> = lines.iter().map(line_key).collect();
        let mut changes = Vec::new();
        // Output that scrolled the Tick's screen moves the kept rows up
        // rather than drawing every row again.
        if let Some(count) = scroll_count(&self.keys, &keys, size.1) {
            changes.push(Change::ScrollRegionUp {
                first_row: 0,
                region_size: size.1,
                scroll_count: count,
            });
            self.keys.drain(..count);
            self.keys.resize(size.1, None);
        }
        for (y, (line, key)) in lines.iter().zip(keys).enumerate() {
            if self.keys[y] == key {
                continue;
            }
            self.keys[y] = key;
            changes.push(Change::CursorPosition {
                x: Position::Absolute(0),
                y: Position::Absolute(y),
            });
            changes.push(Change::ClearToEndOfLine(Default::default()));
            if key.is_some() {
                changes.extend(line_changes(y, line, size.0));
            }
        }
        if !changes.is_empty() {
            show(&mut self.model, changes);
        }
    }
}

/// The text of a run as surface changes whose cells sit in the columns the
/// screen keeper gave them. The keeper gives each character its own width
/// (a combining mark or joiner joins the cell before it), as tmux does;
/// termwiz measures whole graphemes, which differ for emoji sequences. So
/// ASCII goes as it is, every other cell goes as its own text (adjacent
/// cells must not merge into one grapheme), and a cell termwiz would draw
/// at another width is drawn as its base character, or blanks.
fn push_cells(changes: &mut Vec<Change>, text: &str) {
    use unicode_width::UnicodeWidthChar;
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        // Cells never hold control characters; make sure a stray one cannot
        // move the surface's cursor.
        let c = if c.is_control() { ' ' } else { c };
        if c.is_ascii() && chars.peek().is_none_or(|n| n.width() != Some(0)) {
            plain.push(c);
            continue;
        }
        let mut cell = c.to_string();
        while let Some(&next) = chars.peek() {
            if next.width() != Some(0) || next.is_control() {
                break;
            }
            // Invisible format characters (zero-width space, joiners, word
            // joiner, BOM) draw nothing; termwiz would give them a cell.
            if !matches!(next as u32, 0x200b..=0x200f | 0x2060..=0x2064 | 0xfeff) {
                cell.push(next);
            }
            chars.next();
        }
        let width = c.width().unwrap_or(1).max(1);
        if !plain.is_empty() {
            changes.push(Change::Text(std::mem::take(&mut plain)));
        }
        let drawn = if termwiz::cell::unicode_column_width(&cell, None) == width {
            cell
        } else if termwiz::cell::unicode_column_width(&c.to_string(), None) == width {
            c.to_string()
        } else {
            " ".repeat(width)
        };
        changes.push(Change::Text(drawn));
    }
    if !plain.is_empty() {
        changes.push(Change::Text(plain));
    }
}

/// How the view's size relates to the PTY's, as the status line says it;
/// `None` when they are the same. The status line itself takes the view's
/// last row, which counts as cropping when the PTY needs it.
pub fn size_status(pty: (u16, u16), view: (u16, u16)) -> Option<String> {
    if pty == view {
        return None;
    }
    let (pc, pr) = pty;
    let (vc, vr) = view;
    let shown_rows = if vr > 1 { vr - 1 } else { vr };
    let crop = pc > vc || pr > shown_rows;
    let pad = pc < vc || pr < shown_rows;
    let how = match (crop, pad) {
        (true, true) => "cropped and padded",
        (true, false) => "cropped",
        _ => "padded",
    };
    // The launcher gives a view no more than the limit (`fit_size`).
    let limit = if tickloop_proto::attach::too_large(vc, vr) {
        format!(
            " (a Tick's screen has at most {} cells)",
            tickloop_proto::attach::MAX_SCREEN_CELLS
        )
    } else {
        String::new()
    };
    Some(format!("PTY {pc}x{pr}, view {vc}x{vr}: {how}{limit}"))
}

/// What a view shows: the Tick's screen cropped or padded to `cols` x `rows`,
/// and on the last row a status line when the sizes differ or `note` is set.
pub struct Frame {
    pub surface: Surface,
    /// Where the terminal's cursor goes, `None` to hide it.
    pub cursor: Option<(usize, usize)>,
    pub cursor_shape: CursorShape,
    /// The top rows that show the Tick's screen, which [`frame_changes`] may
    /// scroll as a whole when the Tick's output scrolled (0: never scroll).
    pub scroll_rows: usize,
    /// A fingerprint of each of those rows as the Tick's screen has it
    /// (`None`: blank), so [`frame_changes_keyed`] compares rows without
    /// going through their cells; empty when not known.
    pub row_keys: Vec<Option<u64>>,
}

/// Compose the view of `snap` at the view's size. `note` (for example how to
/// detach) is appended to the status line, which only shows when the sizes
/// differ or `force_status` is set.
pub fn compose(snap: &Snapshot, cols: u16, rows: u16, note: &str, force_status: bool) -> Frame {
    let line_keys: Vec<Option<u64>> = snap.lines.iter().map(line_key).collect();
    compose_on(
        model_surface(snap),
        &line_keys,
        snap,
        cols,
        rows,
        note,
        force_status,
    )
}

/// [`compose`], with `model`, the Tick's screen drawn on a surface, and
/// `line_keys`, each of its lines' [`line_key`].
fn compose_on(
    model: Surface,
    line_keys: &[Option<u64>],
    snap: &Snapshot,
    cols: u16,
    rows: u16,
    note: &str,
    force_status: bool,
) -> Frame {
    let (cols_u, rows_u) = (usize::from(cols), usize::from(rows));
    let status = size_status((snap.cols, snap.rows), (cols, rows))
        .or_else(|| force_status.then(String::new));
    let status_rows = usize::from(status.is_some() && rows > 1);
    let tick_rows = rows_u.saturating_sub(status_rows);
    let width = cols_u.min(usize::from(snap.cols));
    let height = tick_rows.min(usize::from(snap.rows));
    let mut view = if (cols, rows) == (snap.cols, snap.rows) && status_rows == 0 {
        // The common case: the view is the Tick's screen as it is.
        model
    } else {
        let mut view = Surface::new(cols_u, rows_u);
        let changes = view.diff_region(0, 0, width, height, &model, 0, 0);
        view.add_changes(changes);
        view
    };
    if let (Some(status), 1) = (status, status_rows) {
        let mut text = status;
        if !note.is_empty() {
            if !text.is_empty() {
                text.push_str(" — ");
            }
            text.push_str(note);
        }
        let text: String = text.chars().take(cols_u).collect();
        let mut attrs = CellAttributes::default();
        attrs.set_reverse(true);
        view.add_changes(vec![
            Change::CursorPosition {
                x: Position::Absolute(0),
                y: Position::Absolute(rows_u - 1),
            },
            Change::AllAttributes(attrs),
            Change::Text(format!("{text:cols_u$}")),
            Change::AllAttributes(CellAttributes::default()),
        ]);
    }
    if let Some(marker) = scroll_marker(snap.scroll) {
        let len = marker.chars().count();
        if len <= cols_u && rows_u > 0 {
            let mut attrs = CellAttributes::default();
            attrs.set_reverse(true);
            view.add_changes(vec![
                Change::CursorPosition {
                    x: Position::Absolute(cols_u - len),
                    y: Position::Absolute(0),
                },
                Change::AllAttributes(attrs),
                Change::Text(marker),
                Change::AllAttributes(CellAttributes::default()),
            ]);
        }
    }
    let (cx, cy) = (usize::from(snap.cursor.x), usize::from(snap.cursor.y));
    let cursor = (snap.cursor.visible && cx < width && cy < height).then_some((cx, cy));
    // A row draws the same when its line and the crop are the same.
    let row_keys = line_keys
        .iter()
        .take(height)
        .map(|key| {
            key.map(|key| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                (snap.cols, snap.rows, width, key).hash(&mut hasher);
                hasher.finish()
            })
        })
        .collect();
    Frame {
        surface: view,
        cursor,
        cursor_shape: snap.cursor.shape,
        scroll_rows: height,
        row_keys,
    }
}

/// [`frame_changes`] for a terminal showing `shown`, whose Tick rows had
/// the fingerprints `shown_keys` (from the frame drawn before; both are
/// updated): rows are compared by fingerprint, and only the rows that
/// differ (and the first row and the rows under the Tick's, which notes and
/// markers use) are compared cell by cell. Without fingerprints on both
/// sides, the same as [`frame_changes`].
pub fn frame_changes_keyed(
    shown: &mut Surface,
    shown_keys: &mut Vec<Option<u64>>,
    frame: &Frame,
) -> Vec<Change> {
    let region = frame.scroll_rows;
    if frame.row_keys.len() != region
        || shown_keys.len() != region
        || shown.dimensions() != frame.surface.dimensions()
    {
        shown_keys.clone_from(&frame.row_keys);
        return frame_changes(shown, frame);
    }
    let (cols, rows) = shown.dimensions();
    let mut changes = Vec::new();
    if let Some(count) = scroll_count(shown_keys, &frame.row_keys, region) {
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: region,
            scroll_count: count,
        });
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: rows,
            scroll_count: 0,
        });
        show(shown, changes.clone());
        shown_keys.drain(..count);
        shown_keys.resize(region, None);
    }
    for row in 0..rows {
        let same = row > 0 && row < region && shown_keys.get(row) == frame.row_keys.get(row);
        if same {
            continue;
        }
        let diff = shown.diff_region(0, row, cols, 1, &frame.surface, 0, row);
        show(shown, diff.clone());
        changes.extend(diff);
    }
    shown_keys.clone_from(&frame.row_keys);
    changes.extend(cursor_changes(frame));
    changes
}

/// The changes that make the terminal showing `shown` show `frame`, cursor
/// included; `shown` is updated to match.
pub fn frame_changes(shown: &mut Surface, frame: &Frame) -> Vec<Change> {
    let mut changes = Vec::new();
    // When the Tick's screen scrolled, scroll the terminal too (as tmux
    // does): the rows that moved are not sent again, and the new rows are
    // drawn whole rather than as scattered cell differences.
    if let Some(count) = scrolled_up_by(shown, &frame.surface, frame.scroll_rows) {
        let (_, rows) = shown.dimensions();
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: frame.scroll_rows,
            scroll_count: count,
        });
        // The scroll region back to the whole screen, without scrolling.
        changes.push(Change::ScrollRegionUp {
            first_row: 0,
            region_size: rows,
            scroll_count: 0,
        });
        show(shown, changes.clone());
    }
    let diff = shown.diff_screens(&frame.surface);
    show(shown, diff.clone());
    changes.extend(diff);
    changes.extend(cursor_changes(frame));
    changes
}

/// Applies `changes` to `shown`, the surface that stands for what a
/// terminal shows, which lives as long as its view. A surface also logs
/// every change for a later `get_changes`; nothing here asks, so the log is
/// dropped at once: kept, it grew by every frame drawn for as long as the
/// view was open (a megabyte a second under a busy Tick).
fn show(shown: &mut Surface, changes: Vec<Change>) {
    shown.add_changes(changes);
    shown.flush_changes_older_than(shown.current_seqno());
}

/// Where the cursor goes and how it looks, after a frame.
fn cursor_changes(frame: &Frame) -> Vec<Change> {
    match frame.cursor {
        Some((x, y)) => vec![
            Change::CursorPosition {
                x: Position::Absolute(x),
                y: Position::Absolute(y),
            },
            Change::CursorShape(cursor_shape(frame.cursor_shape)),
            Change::CursorVisibility(CursorVisibility::Visible),
        ],
        None => vec![Change::CursorVisibility(CursorVisibility::Hidden)],
    }
}

/// By how many rows the top `region` rows of `old` moved up to become those
/// of `new`: the count (at most half the region) under which the most
/// non-blank rows of `new` are found in `old`, when that is at least half the
/// region and more than without scrolling. The rows that still differ (the
/// new ones at the bottom) are left to `diff_screens`.
fn scrolled_up_by(old: &Surface, new: &Surface, region: usize) -> Option<usize> {
    if region < 4 || old.dimensions() != new.dimensions() || region > old.dimensions().1 {
        return None;
    }
    // One fingerprint per row, of its text, so that the search below compares
    // numbers, not cells; `None` for a blank row. Attributes are left out:
    // the scroll only has to be worth it, `diff_screens` then fixes any cell
    // that still differs.
    let fingerprints = |surface: &Surface| -> Vec<Option<u64>> {
        surface
            .screen_lines()
            .iter()
            .take(region)
            .map(|line| {
                // The text without trailing blanks, hashed cell by cell
                // (no string built: this runs for every row of every frame).
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                let (mut blanks, mut any) = (0usize, false);
                for cell in line.visible_cells() {
                    let text = cell.str();
                    if text == " " || text.is_empty() {
                        blanks += 1;
                        continue;
                    }
                    if blanks > 0 {
                        blanks.hash(&mut hasher);
                        blanks = 0;
                    }
                    text.hash(&mut hasher);
                    any = true;
                }
                any.then(|| hasher.finish())
            })
            .collect()
    };
    scroll_count(&fingerprints(old), &fingerprints(new), region)
}

/// By how many rows the top `region` rows fingerprinted `old_rows` moved up
/// to become `new_rows` (see [`scrolled_up_by`]).
fn scroll_count(
    old_rows: &[Option<u64>],
    new_rows: &[Option<u64>],
    region: usize,
) -> Option<usize> {
    if region < 4 || old_rows.len() < region || new_rows.len() < region {
        return None;
    }
    let matches = |count: usize| {
        (0..region - count)
            .filter(|&row| new_rows[row].is_some() && old_rows[row + count] == new_rows[row])
            .count()
    };
    let unscrolled = matches(0);
    let (best, count) = (1..=region / 2)
        .map(|count| (matches(count), count))
        .max_by_key(|&(found, count)| (found, std::cmp::Reverse(count)))?;
    (best > unscrolled && best * 2 >= region).then_some(count)
}

fn cursor_shape(shape: CursorShape) -> termwiz::surface::CursorShape {
    use termwiz::surface::CursorShape as T;
    match shape {
        CursorShape::Default => T::Default,
        CursorShape::BlinkingBlock => T::BlinkingBlock,
        CursorShape::SteadyBlock => T::SteadyBlock,
        CursorShape::BlinkingUnderline => T::BlinkingUnderline,
        CursorShape::SteadyUnderline => T::SteadyUnderline,
        CursorShape::BlinkingBar => T::BlinkingBar,
        CursorShape::SteadyBar => T::SteadyBar,
    }
}

fn mods(m: Modifiers) -> Mods {
    Mods {
        shift: m.contains(Modifiers::SHIFT),
        alt: m.contains(Modifiers::ALT),
        ctrl: m.contains(Modifiers::CTRL),
        super_: m.contains(Modifiers::SUPER),
    }
}

/// A key from the view's terminal as an attach-protocol key; `None` for keys
/// the protocol does not carry.
pub fn key_event(event: &KeyEvent) -> Option<ViewEvent> {
    let key = match event.key {
        KeyCode::Char(c) => match c {
            '\r' | '\n' => Key::Enter,
            '\t' => Key::Tab,
            '\x7f' | '\x08' => Key::Backspace,
            '\x1b' => Key::Escape,
            // Other control characters: their ctrl+letter form.
            '\x00'..='\x1f' => {
                let letter = char::from(u8::try_from(u32::from(c)).ok()? | 0x40);
                return Some(ViewEvent::Key {
                    key: Key::Char(letter.to_ascii_lowercase()),
                    mods: Mods {
                        ctrl: true,
                        ..mods(event.modifiers)
                    },
                });
            }
            c => Key::Char(c),
        },
        KeyCode::Enter => Key::Enter,
        KeyCode::Tab => Key::Tab,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Escape => Key::Escape,
        KeyCode::UpArrow | KeyCode::ApplicationUpArrow => Key::Up,
        KeyCode::DownArrow | KeyCode::ApplicationDownArrow => Key::Down,
        KeyCode::LeftArrow | KeyCode::ApplicationLeftArrow => Key::Left,
        KeyCode::RightArrow | KeyCode::ApplicationRightArrow => Key::Right,
        KeyCode::Home | KeyCode::KeyPadHome => Key::Home,
        KeyCode::End | KeyCode::KeyPadEnd => Key::End,
        KeyCode::PageUp | KeyCode::KeyPadPageUp => Key::PageUp,
        KeyCode::PageDown | KeyCode::KeyPadPageDown => Key::PageDown,
        KeyCode::Insert => Key::Insert,
        KeyCode::Delete => Key::Delete,
        KeyCode::Function(n) => Key::F(n),
        _ => return None,
    };
    Some(ViewEvent::Key {
        key,
        mods: mods(event.modifiers),
    })
}

/// Turns the view terminal's mouse reports (which carry the buttons held,
/// not presses and releases) into press / release / move events.
#[derive(Debug, Default, Clone)]
pub struct MouseTranslator {
    held: Option<attach::MouseButton>,
}

impl MouseTranslator {
    /// The events for one report; coordinates are zero-based cells of the
    /// view, which are the Tick's cells (the view draws from the top left).
    pub fn translate(&mut self, event: &MouseEvent) -> Vec<ViewEvent> {
        let (x, y) = (event.x.saturating_sub(1), event.y.saturating_sub(1));
        let m = mods(event.modifiers);
        let b = event.mouse_buttons.clone();
        let ev = |kind, button| ViewEvent::Mouse {
            x,
            y,
            kind,
            button,
            mods: m,
        };
        if b.contains(MouseButtons::VERT_WHEEL) {
            let button = if b.contains(MouseButtons::WHEEL_POSITIVE) {
                attach::MouseButton::WheelUp
            } else {
                attach::MouseButton::WheelDown
            };
            return vec![ev(MouseKind::Press, button)];
        }
        let now = if b.contains(MouseButtons::LEFT) {
            Some(attach::MouseButton::Left)
        } else if b.contains(MouseButtons::MIDDLE) {
            Some(attach::MouseButton::Middle)
        } else if b.contains(MouseButtons::RIGHT) {
            Some(attach::MouseButton::Right)
        } else {
            None
        };
        let out = match (self.held, now) {
            (None, None) => vec![ev(MouseKind::Move, attach::MouseButton::None)],
            (None, Some(n)) => vec![ev(MouseKind::Press, n)],
            (Some(h), None) => vec![ev(MouseKind::Release, h)],
            (Some(h), Some(n)) if h == n => vec![ev(MouseKind::Move, n)],
            (Some(h), Some(n)) => vec![ev(MouseKind::Release, h), ev(MouseKind::Press, n)],
        };
        self.held = now;
        out
    }
}

/// An input event of the view's terminal as attach-protocol events (none for
/// resizes and wake-ups, which the view handles itself).
pub fn input_events(event: &InputEvent, mouse: &mut MouseTranslator) -> Vec<ViewEvent> {
    match event {
        InputEvent::Key(key) => key_event(key).into_iter().collect(),
        InputEvent::Paste(text) => vec![ViewEvent::Paste { text: text.clone() }],
        InputEvent::Mouse(m) => mouse.translate(m),
        InputEvent::PixelMouse(_) | InputEvent::Resized { .. } | InputEvent::Wake => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::attach::{Attrs, Line, Run};

    fn snap_with(lines: &[&str], cols: u16, rows: u16) -> Snapshot {
        let mut s = Snapshot::blank(cols, rows);
        for (i, l) in lines.iter().enumerate() {
            s.lines[i] = Line {
                runs: vec![Run {
                    text: (*l).to_string(),
                    attrs: Attrs::default(),
                }],
            };
        }
        s
    }

    #[test]
    fn scrolled_output_scrolls_the_terminal_and_draws_new_rows_whole() {
        let before = ["<a>", "<b>", "<c>", "<d>", "<e>", ""];
        let after = ["<b>", "<c>", "<d>", "<e>", "<f>", ""];
        let mut shown = Surface::new(10, 6);
        let first = compose(&snap_with(&before, 10, 6), 10, 6, "", false);
        frame_changes(&mut shown, &first);
        let second = compose(&snap_with(&after, 10, 6), 10, 6, "", false);
        let changes = frame_changes(&mut shown, &second);
        assert!(
            matches!(
                changes[0],
                Change::ScrollRegionUp {
                    first_row: 0,
                    region_size: 6,
                    scroll_count: 1
                }
            ),
            "{changes:?}"
        );
        let texts: Vec<&str> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        assert!(texts.iter().any(|t| t.contains("<f>")), "{texts:?}");
        assert_eq!(
            shown.screen_chars_to_string(),
            second.surface.screen_chars_to_string()
        );
        // An unrelated change is not taken for a scroll.
        let other = compose(&snap_with(&["x", "y"], 10, 6), 10, 6, "", false);
        let changes = frame_changes(&mut shown, &other);
        assert!(!changes.iter().any(|c| matches!(
            c,
            Change::ScrollRegionUp {
                scroll_count: 1..,
                ..
            }
        )));
    }

    /// The composer keeps the model between frames and draws only the
    /// lines that changed; each of its frames must be the frame `compose`
    /// makes from scratch, whatever the lines hold: wide characters,
    /// combining marks, emoji, control characters, lines wider than the
    /// screen, lines that go blank, runs with other attributes, output that
    /// scrolls, and a change of the screen's size.
    #[test]
    fn the_composer_makes_the_frames_compose_makes() {
        let pieces = [
            "ab",
            "中文",
            "e\u{301}",
            "👍🏽",
            "\u{200d}",
            "\t",
            "x",
            "",
            "wide line ",
            "\u{301}",
            "ｶﾀｶﾅ",
            "😀😀😀😀",
        ];
        // A small deterministic generator: the same frames on every run.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % n as u64).expect("small")
        };
        let mut composer = Composer::default();
        let (mut cols, mut rows) = (12u16, 5u16);
        let mut snap = Snapshot::blank(cols, rows);
        for frame_no in 0..400 {
            if frame_no % 97 == 96 {
                (cols, rows) = (
                    8 + u16::try_from(next(10)).expect("small"),
                    3 + u16::try_from(next(4)).expect("small"),
                );
                snap = Snapshot::blank(cols, rows);
            }
            if next(4) == 0 {
                // Output scrolled the screen up by one or two rows.
                let count = 1 + next(2);
                snap.lines.rotate_left(count);
                for line in snap.lines.iter_mut().rev().take(count) {
                    *line = Line { runs: Vec::new() };
                }
            }
            for _ in 0..=next(3) {
                let row = next(usize::from(rows));
                let runs = (0..next(4))
                    .map(|_| Run {
                        text: (0..=next(4)).map(|_| pieces[next(pieces.len())]).collect(),
                        attrs: Attrs {
                            bold: next(2) == 0,
                            ..Attrs::default()
                        },
                    })
                    .collect();
                snap.lines[row] = Line { runs };
            }
            let kept = composer.compose(&snap, cols, rows, "", false);
            let fresh = compose(&snap, cols, rows, "", false);
            assert!(
                kept.surface.diff_screens(&fresh.surface).is_empty()
                    && fresh.surface.diff_screens(&kept.surface).is_empty(),
                "frame {frame_no}:\n{}\n--- from scratch:\n{}",
                kept.surface.screen_chars_to_string(),
                fresh.surface.screen_chars_to_string()
            );
            assert_eq!(kept.row_keys, fresh.row_keys, "frame {frame_no}");
        }
    }

    /// A view's shown surface lives as long as the view: if it kept its
    /// log of changes, a view left open on a busy Tick grew without end.
    #[test]
    fn a_views_shown_surface_keeps_no_log_of_the_frames_drawn() {
        // A surface with its log answers "what changed since the last
        // change" with that change alone; without it, with a whole repaint.
        let logs_changes = |shown: &Surface| {
            let last = shown.current_seqno().saturating_sub(1);
            matches!(shown.get_changes(last).1, std::borrow::Cow::Borrowed(_))
        };
        let mut logged = Surface::new(10, 6);
        logged.add_changes(vec![Change::Text("x".into()), Change::Text("y".into())]);
        assert!(logs_changes(&logged), "the check itself sees a log");
        let mut plain = Surface::new(10, 6);
        let mut keyed = Surface::new(10, 6);
        let mut keys = Vec::new();
        for i in 0..50 {
            let line = format!("<{i}>");
            let lines = ["top", line.as_str(), "", "", "", ""];
            let frame = compose(&snap_with(&lines, 10, 6), 10, 6, "", false);
            frame_changes(&mut plain, &frame);
            frame_changes_keyed(&mut keyed, &mut keys, &frame);
            assert!(!logs_changes(&plain), "frame_changes, frame {i}");
            assert!(!logs_changes(&keyed), "frame_changes_keyed, frame {i}");
            assert_eq!(
                keyed.screen_chars_to_string(),
                frame.surface.screen_chars_to_string()
            );
        }
    }

    #[test]
    fn fingerprinted_frames_reach_the_same_screen_with_fewer_changes() {
        let frames = [
            (vec!["<a>", "<b>", "<c>", "<d>", "<e>", ""], "", false),
            // Scrolled by one.
            (vec!["<b>", "<c>", "<d>", "<e>", "<f>", ""], "", false),
            // One row changed.
            (vec!["<b>", "<c>", "<D>", "<e>", "<f>", ""], "", false),
            // A note on a status line, then gone again.
            (vec!["<b>", "<c>", "<D>", "<e>", "<f>", ""], "note", true),
            (vec!["<b>", "<c>", "<D>", "<e>", "<f>", "g"], "", false),
            (vec!["x"], "", false),
        ];
        let mut keyed = Surface::new(10, 6);
        let mut keys = Vec::new();
        let mut plain = Surface::new(10, 6);
        for (i, (lines, note, force)) in frames.iter().enumerate() {
            let frame = compose(&snap_with(lines, 10, 6), 10, 6, note, *force);
            let changes = frame_changes_keyed(&mut keyed, &mut keys, &frame);
            frame_changes(&mut plain, &frame);
            assert!(keyed.diff_screens(&frame.surface).is_empty(), "frame {i}");
            assert_eq!(
                keyed.screen_chars_to_string(),
                plain.screen_chars_to_string(),
                "frame {i}"
            );
            if i == 2 {
                // Only the changed row is drawn again.
                let texts: Vec<&str> = changes
                    .iter()
                    .filter_map(|c| match c {
                        Change::Text(t) => Some(t.as_str()),
                        _ => None,
                    })
                    .collect();
                assert_eq!(texts.concat().trim(), "D", "{changes:?}");
            }
            if i == 1 {
                assert!(
                    matches!(
                        changes[0],
                        Change::ScrollRegionUp {
                            scroll_count: 1,
                            ..
                        }
                    ),
                    "{changes:?}"
                );
            }
        }
    }

    #[test]
    fn same_size_has_no_status() {
        let snap = snap_with(&["hello", "world"], 10, 3);
        let frame = compose(&snap, 10, 3, "ctrl+\\ detaches", false);
        assert_eq!(
            frame.surface.screen_chars_to_string(),
            "hello     \nworld     \n          \n"
        );
        assert_eq!(frame.cursor, Some((0, 0)));
    }

    #[test]
    fn smaller_view_crops_and_says_so() {
        let snap = snap_with(&["0123456789", "abcdefghij", "ABCDEFGHIJ"], 10, 3);
        let frame = compose(&snap, 6, 3, "", false);
        let text = frame.surface.screen_chars_to_string();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0], "012345");
        assert_eq!(rows[1], "abcdef");
        assert_eq!(rows[2], "PTY 10");
        let wide = compose(&snap, 40, 3, "", false);
        let text = wide.surface.screen_chars_to_string();
        assert!(
            text.lines()
                .nth(2)
                .unwrap()
                .starts_with("PTY 10x3, view 40x3: cropped and padded"),
            "{text}"
        );
    }

    #[test]
    fn a_view_past_the_limit_is_told_why_the_tick_is_smaller() {
        assert_eq!(
            size_status((2100, 1997), (2100, 2000)).as_deref(),
            Some(
                "PTY 2100x1997, view 2100x2000: padded (a Tick's screen has at most 4194304 cells)"
            )
        );
        assert_eq!(
            size_status((80, 24), (100, 30)).as_deref(),
            Some("PTY 80x24, view 100x30: padded")
        );
    }

    #[test]
    fn larger_view_pads() {
        let snap = snap_with(&["hi"], 4, 2);
        let frame = compose(&snap, 60, 4, "ctrl+\\ detaches", false);
        let text = frame.surface.screen_chars_to_string();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows[0].trim_end(), "hi");
        assert_eq!(rows[1].trim_end(), "");
        assert_eq!(rows[2].trim_end(), "");
        assert_eq!(
            rows[3].trim_end(),
            "PTY 4x2, view 60x4: padded — ctrl+\\ detaches"
        );
    }

    #[test]
    fn wide_and_combining_characters_keep_their_columns() {
        let snap = snap_with(&["日本x", "e\u{301}!"], 6, 2);
        let frame = compose(&snap, 6, 2, "", false);
        let cells = frame.surface.get_screen_cells();
        assert_eq!(cells[0][0].str(), "日");
        assert_eq!(cells[0][2].str(), "本");
        assert_eq!(cells[0][4].str(), "x");
        assert_eq!(cells[1][0].str(), "e\u{301}");
        assert_eq!(cells[1][1].str(), "!");
    }

    #[test]
    fn colours_reach_the_cells() {
        let mut snap = Snapshot::blank(4, 1);
        snap.lines[0] = Line {
            runs: vec![
                Run {
                    text: "a".into(),
                    attrs: Attrs {
                        fg: Some(Color::Index(1)),
                        bold: true,
                        ..Attrs::default()
                    },
                },
                Run {
                    text: "b".into(),
                    attrs: Attrs {
                        bg: Some(Color::Rgb(255, 0, 0)),
                        ..Attrs::default()
                    },
                },
            ],
        };
        let frame = compose(&snap, 4, 1, "", false);
        let cells = frame.surface.get_screen_cells();
        assert_eq!(
            cells[0][0].attrs().foreground(),
            ColorAttribute::PaletteIndex(1)
        );
        assert_eq!(cells[0][0].attrs().intensity(), Intensity::Bold);
        assert_eq!(
            cells[0][1].attrs().background(),
            ColorAttribute::TrueColorWithPaletteFallback(SrgbaTuple::from((255, 0, 0)), 196)
        );
    }

    #[test]
    fn diffs_are_small() {
        let snap = snap_with(&["hello", "world"], 10, 3);
        let mut shown = Surface::new(10, 3);
        let first = frame_changes(&mut shown, &compose(&snap, 10, 3, "", false));
        assert!(!first.is_empty());
        let again = frame_changes(&mut shown, &compose(&snap, 10, 3, "", false));
        // Nothing changed: only the cursor is placed again.
        assert!(again.iter().all(|c| matches!(
            c,
            Change::CursorPosition { .. } | Change::CursorShape(_) | Change::CursorVisibility(_)
        )));
    }

    #[test]
    fn nearest_palette_colours() {
        assert_eq!(nearest_256(255, 0, 0), 196);
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(128, 128, 128), 244);
        assert_eq!(nearest_256(255, 255, 255), 231);
    }

    #[test]
    fn keys_translate() {
        let k = |key, modifiers| KeyEvent { key, modifiers };
        assert_eq!(
            key_event(&k(KeyCode::Char('a'), Modifiers::CTRL)),
            Some(ViewEvent::Key {
                key: Key::Char('a'),
                mods: Mods {
                    ctrl: true,
                    ..Mods::NONE
                }
            })
        );
        assert_eq!(
            key_event(&k(KeyCode::Char('\r'), Modifiers::NONE)),
            Some(ViewEvent::Key {
                key: Key::Enter,
                mods: Mods::NONE
            })
        );
    }

    #[test]
    fn mouse_reports_become_press_move_release() {
        let mut t = MouseTranslator::default();
        let report = |b| MouseEvent {
            x: 3,
            y: 2,
            mouse_buttons: b,
            modifiers: Modifiers::NONE,
        };
        let kinds = |evs: Vec<ViewEvent>| -> Vec<(MouseKind, attach::MouseButton)> {
            evs.into_iter()
                .map(|e| match e {
                    ViewEvent::Mouse {
                        kind, button, x, y, ..
                    } => {
                        assert_eq!((x, y), (2, 1));
                        (kind, button)
                    }
                    other => panic!("{other:?}"),
                })
                .collect()
        };
        use attach::MouseButton as B;
        assert_eq!(
            kinds(t.translate(&report(MouseButtons::LEFT))),
            vec![(MouseKind::Press, B::Left)]
        );
        assert_eq!(
            kinds(t.translate(&report(MouseButtons::LEFT))),
            vec![(MouseKind::Move, B::Left)]
        );
        assert_eq!(
            kinds(t.translate(&report(MouseButtons::NONE))),
            vec![(MouseKind::Release, B::Left)]
        );
        assert_eq!(
            kinds(t.translate(&report(
                MouseButtons::VERT_WHEEL | MouseButtons::WHEEL_POSITIVE
            ))),
            vec![(MouseKind::Press, B::WheelUp)]
        );
    }
}

#[cfg(test)]
mod input_reader_tests {
    use super::*;

    fn keys(bytes: &[u8]) -> Vec<InputEvent> {
        let mut parser = termwiz::input::InputParser::new();
        let mut reader = InputReader::default();
        for event in parser.parse_as_vec(bytes, false) {
            reader.push(event);
        }
        reader.release();
        reader.queue.into_iter().collect()
    }

    fn key(key: KeyCode, modifiers: Modifiers) -> InputEvent {
        InputEvent::Key(KeyEvent { key, modifiers })
    }

    #[test]
    fn modified_page_and_edit_keys_are_put_back_together() {
        assert_eq!(
            keys(b"\x1b[5;2~"),
            vec![key(KeyCode::PageUp, Modifiers::SHIFT)]
        );
        assert_eq!(
            keys(b"\x1b[6;2~x"),
            vec![
                key(KeyCode::PageDown, Modifiers::SHIFT),
                key(KeyCode::Char('x'), Modifiers::NONE)
            ]
        );
        assert_eq!(
            keys(b"\x1b[3;5~"),
            vec![key(KeyCode::Delete, Modifiers::CTRL)]
        );
    }

    #[test]
    fn alt_bracket_typed_alone_stays_what_it_was() {
        assert_eq!(
            keys(b"\x1b[x"),
            vec![
                key(KeyCode::Char('['), Modifiers::ALT),
                key(KeyCode::Char('x'), Modifiers::NONE)
            ]
        );
        assert_eq!(
            keys(b"\x1b[9;2~"),
            vec![
                key(KeyCode::Char('['), Modifiers::ALT),
                key(KeyCode::Char('9'), Modifiers::NONE),
                key(KeyCode::Char(';'), Modifiers::NONE),
                key(KeyCode::Char('2'), Modifiers::NONE),
                key(KeyCode::Char('~'), Modifiers::NONE)
            ]
        );
    }
}

#[cfg(test)]
mod width_agreement_tests {
    use super::*;
    use launcher::emulator::Emulator;

    /// The column of `|` on row 0 of what a view draws.
    fn view_column(surface: &Surface) -> Option<usize> {
        let lines = surface.screen_lines();
        let mut col = 0;
        for cell in lines[0].visible_cells() {
            if cell.str() == "|" {
                return Some(col);
            }
            col = cell.cell_index() + cell.width();
        }
        None
    }

    #[test]
    fn the_keeper_and_the_views_agree_on_character_widths() {
        // Each text is followed by `|`: the keeper's cursor and the view's
        // surface must put it in the same column, or every cell after a
        // wide character would be drawn shifted.
        let texts = [
            "plain",
            "漢字かな",
            "e\u{301}x",
            "👍",
            "👍🏽",
            "❤️",
            "✔️",
            "🇫🇷",
            "한국어",
            "ｆｕｌｌ",
            "a\u{200b}b",
            "👨\u{200d}👩\u{200d}👧",
        ];
        let mut disagree = Vec::new();
        for text in texts {
            let mut emu = Emulator::new(3, 40, 0, Box::new(std::io::sink()));
            emu.feed(format!("{text}|").as_bytes());
            let snap = emu.snapshot();
            let keeper = usize::from(snap.cursor.x) - 1;
            let view = view_column(&model_surface(&snap));
            if view != Some(keeper) {
                disagree.push(format!("{text:?}: keeper column {keeper}, view {view:?}"));
            }
        }
        assert!(disagree.is_empty(), "{}", disagree.join("\n"));
    }
}
