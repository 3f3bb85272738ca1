//! A page's terminal as the server keeps it: the Tick's screen (the attach
//! protocol's snapshot, then changed rows) drawn for the page's xterm.js as
//! escape sequences, exactly as `tickloop attach` draws onto a terminal
//! (`view_monitor::render`: cropped or padded to the page's size, with a
//! status line saying so, only the cells that changed sent), and what
//! xterm.js sends back — keys, pastes and mouse reports, as a terminal
//! sends them — read into attach events with the same parser and
//! translation as `tickloop attach`. No I/O.

use termwiz::caps::{Capabilities, ProbeHints};
use termwiz::input::{InputEvent, InputParser};
use termwiz::render::terminfo::TerminfoRenderer;
use termwiz::render::RenderTty;
use termwiz::surface::{Change, Surface};
use tickloop_proto::attach::{MouseTracking, Snapshot, ToView, ViewEvent};
use view_monitor::render::{self, InputReader, MouseTranslator, ScrollAction, Scroller};

/// What one message from the launcher did to the page's terminal.
#[derive(Debug, PartialEq, Eq)]
pub enum Heard {
    /// The screen changed: draw.
    Changed,
    /// The Tick rang the bell.
    Bell,
    /// The Tick's session ended, for this reason.
    Ended(String),
    /// Nothing to draw.
    Nothing,
    /// Kept images' bytes to ask the launcher for (`ViewEvent::Image`),
    /// then draw.
    AskImages(Vec<u32>),
}

/// Escape sequences collected for the page (termwiz renders into it).
struct Sink {
    bytes: Vec<u8>,
    size: (usize, usize),
}

impl std::io::Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl RenderTty for Sink {
    fn get_size_in_cells(&mut self) -> termwiz::Result<(usize, usize)> {
        Ok(self.size)
    }
}

/// The capabilities of xterm.js: xterm-256color, 24-bit colour, links.
fn xterm_js() -> Option<Capabilities> {
    let hints = ProbeHints::default()
        .term(Some("xterm-256color".to_string()))
        .colorterm(Some("truecolor".to_string()))
        .hyperlinks(Some(true))
        .bracketed_paste(Some(true))
        .mouse_reporting(Some(false));
    Capabilities::new_with_hints(hints).ok()
}

/// One page's copy of a Tick's screen and of what its xterm.js shows.
pub struct PageScreen {
    model: Snapshot,
    composer: render::Composer,
    /// The page's terminal size, cells.
    view: (u16, u16),
    shown: Surface,
    shown_keys: Vec<Option<u64>>,
    renderer: TerminfoRenderer,
    /// The mouse reporting xterm.js has on (`None`: never set yet).
    mouse: Option<MouseTracking>,
    /// The title the page was told last.
    title: String,
    scroller: Scroller,
    parser: InputParser,
    reader: InputReader,
    translator: MouseTranslator,
    /// Said on the last row when the sizes differ.
    note: String,
    /// The first frame also turns on bracketed paste.
    started: bool,
    /// The images the Tick drew, drawn by xterm.js's image addon.
    images: crate::images::PageImages,
}

impl PageScreen {
    /// The screen of a page `view` cells large that attached and got
    /// `first`; `note` goes on the status line when the sizes differ.
    pub fn new(first: Snapshot, view: (u16, u16), note: String) -> Option<PageScreen> {
        Some(PageScreen {
            model: first,
            composer: render::Composer::default(),
            view,
            shown: Surface::new(usize::from(view.0), usize::from(view.1)),
            shown_keys: Vec::new(),
            renderer: TerminfoRenderer::new(xterm_js()?),
            mouse: None,
            title: String::new(),
            scroller: Scroller::default(),
            parser: InputParser::new(),
            reader: InputReader::default(),
            translator: MouseTranslator::default(),
            note,
            started: false,
            images: Default::default(),
        })
    }

    /// Takes one message of the launcher into the model.
    pub fn hear(&mut self, frame: ToView) -> Result<Heard, String> {
        Ok(match frame {
            ToView::Snapshot(s) => {
                self.model = s;
                Heard::Changed
            }
            // The page lends no terminal: drawn rows are rows.
            ToView::Rows(rows) | ToView::Drawn { rows, .. } => {
                self.model.apply(rows).map_err(|e| e.to_string())?;
                Heard::Changed
            }
            ToView::Bell => Heard::Bell,
            ToView::Ended { reason } => Heard::Ended(reason),
            ToView::Images { placements } => Heard::AskImages(self.images.listed(placements)),
            ToView::Image { index, data } => {
                let image = data
                    .as_ref()
                    .and_then(view_monitor::graphics::KeptImage::from_wire);
                self.images.answered(index, image);
                Heard::Changed
            }
            // The clipboard is the page's own (xterm.js has no OSC 52
            // without an addon, and a page should not write it unasked).
            // ... and it lends no keys.
            ToView::Resized { .. } | ToView::Clipboard { .. } | ToView::KeysBack { .. } => {
                Heard::Nothing
            }
        })
    }

    /// The page's terminal is now `cols` x `rows`: the next draw is whole.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.view = (cols.max(1), rows.max(1));
        self.shown = Surface::new(usize::from(self.view.0), usize::from(self.view.1));
        self.shown_keys.clear();
        self.started = false;
        self.images.redrawn();
    }

    /// The page's cell in pixels (`None`: not said): images are scaled to
    /// their cells at it.
    pub fn set_cell_px(&mut self, cell_px: Option<(u16, u16)>) {
        self.images.set_cell_px(cell_px);
    }

    /// The Tick's title, when it changed since the last call.
    pub fn new_title(&mut self) -> Option<String> {
        (self.model.title != self.title).then(|| {
            self.title.clone_from(&self.model.title);
            self.title.clone()
        })
    }

    /// The bytes that make the page's terminal show the model.
    pub fn draw(&mut self) -> Vec<u8> {
        let mut sink = Sink {
            bytes: Vec::new(),
            size: (usize::from(self.view.0), usize::from(self.view.1)),
        };
        let offset = self.model.scroll.offset;
        if self.images.stale(offset) {
            // An image the page shows moved or went: drawn whole again.
            self.shown = Surface::new(usize::from(self.view.0), usize::from(self.view.1));
            self.shown_keys.clear();
            sink.bytes.extend_from_slice(b"\x1b[H\x1b[2J");
            self.images.redrawn();
        }
        if !self.started {
            // A clean screen, and pastes reported as pastes.
            sink.bytes.extend_from_slice(b"\x1b[H\x1b[2J\x1b[?2004h");
            self.started = true;
            self.images.redrawn();
        }
        let mouse = self.scroller.mouse_mode(&self.model);
        if self.mouse != Some(mouse) {
            sink.bytes.extend_from_slice(render::mouse_reporting(mouse));
            self.mouse = Some(mouse);
        }
        let frame = self
            .composer
            .compose(&self.model, self.view.0, self.view.1, &self.note, false);
        let changes = render::frame_changes_keyed(&mut self.shown, &mut self.shown_keys, &frame);
        let mut changes = changes;
        // termwiz leaves the attributes as the last cell had them.
        changes.push(Change::AllAttributes(Default::default()));
        // Rendering into memory cannot fail.
        let _ = self.renderer.render_to(&changes, &mut sink);
        let images = self.images.after_draw(offset, self.view);
        sink.bytes.extend_from_slice(&images);
        sink.bytes
    }

    /// What the page's terminal sent (its keys, a paste, mouse reports, as
    /// one message of xterm.js's `onData`), as events for the launcher.
    pub fn input(&mut self, data: &[u8]) -> Vec<ViewEvent> {
        let mut parsed = Vec::new();
        // xterm.js sends each key's whole sequence at once: a lone ESC is
        // the Escape key, not the start of something more.
        self.parser.parse(data, |event| parsed.push(event), false);
        for event in parsed {
            self.reader.push(event);
        }
        let mut events = Vec::new();
        for event in self.reader.drain() {
            events.extend(self.translate(&event));
        }
        events
    }

    /// One input event, with scrolling back through history kept here.
    fn translate(&mut self, event: &InputEvent) -> Vec<ViewEvent> {
        match self.scroller.on_input(event, &self.model, self.view.1) {
            ScrollAction::Pass => render::input_events(event, &mut self.translator),
            ScrollAction::Scroll(offset) => vec![ViewEvent::Scroll { offset }],
            ScrollAction::Live => vec![ViewEvent::Scroll { offset: 0 }],
            ScrollAction::LiveThenPass => {
                let mut events = vec![ViewEvent::Scroll { offset: 0 }];
                events.extend(render::input_events(event, &mut self.translator));
                events
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::attach::{Attrs, Key, Line, Mods, Run};

    fn screen_with(text: &str) -> PageScreen {
        let mut snap = Snapshot::blank(20, 4);
        snap.lines[0] = Line {
            runs: vec![Run {
                text: text.into(),
                attrs: Attrs::default(),
            }],
        };
        PageScreen::new(snap, (20, 4), String::new()).expect("a renderer")
    }

    #[test]
    fn xterm_js_input_becomes_the_attach_protocols_events() {
        let mut screen = screen_with("");
        let key = |c| ViewEvent::Key {
            key: Key::Char(c),
            mods: Mods::NONE,
        };
        assert_eq!(screen.input(b"a"), vec![key('a')]);
        assert_eq!(
            screen.input(b"\x1b"),
            vec![ViewEvent::Key {
                key: Key::Escape,
                mods: Mods::NONE
            }]
        );
        assert_eq!(
            screen.input(b"\x1b[A"),
            vec![ViewEvent::Key {
                key: Key::Up,
                mods: Mods::NONE
            }]
        );
        assert_eq!(
            screen.input(b"\x1b[200~two\nlines\x1b[201~"),
            vec![ViewEvent::Paste {
                text: "two\nlines".into()
            }]
        );
        // shift+PageUp scrolls this view back; the next key returns it.
        let mut screen = screen_with("");
        screen.model.scroll.history = 50;
        assert!(matches!(
            screen.input(b"\x1b[5;2~").as_slice(),
            [ViewEvent::Scroll { offset }] if *offset > 0
        ));
    }

    #[test]
    fn the_first_draw_is_whole_and_the_next_sends_only_changes() {
        let mut screen = screen_with("hello");
        let first = String::from_utf8_lossy(&screen.draw()).into_owned();
        assert!(first.starts_with("\x1b[H\x1b[2J\x1b[?2004h"), "{first:?}");
        assert!(first.contains("hello"), "{first:?}");
        let same = screen.draw();
        assert!(!String::from_utf8_lossy(&same).contains("hello"));
        let frame = tickloop_proto::attach::RowsChanged {
            scrolled: 0,
            rows: vec![(
                1,
                Line {
                    runs: vec![Run {
                        text: "world".into(),
                        attrs: Attrs::default(),
                    }],
                },
            )],
            cursor: screen.model.cursor,
            alt_screen: false,
            modes: Default::default(),
            title: Some("t".into()),
            scroll: Default::default(),
        };
        assert_eq!(screen.hear(ToView::Rows(frame)), Ok(Heard::Changed));
        let next = String::from_utf8_lossy(&screen.draw()).into_owned();
        assert!(
            next.contains("world") && !next.contains("hello"),
            "{next:?}"
        );
        assert_eq!(screen.new_title(), Some("t".into()));
        assert_eq!(screen.new_title(), None);
    }
    #[test]
    fn a_kept_image_is_asked_for_once_and_drawn_as_sixel_at_its_cell() {
        use tickloop_proto::wire::{ImageData, ImageEncoding, ImageFormat, ImagePlacement};
        let mut screen = screen_with("hello");
        let _ = screen.draw();
        // A 2x1-cell sixel (one red sixel column pair), drawn at row 1, col 3.
        let sixel = b"\x1bPq\"1;1;20;6#0;2;100;0;0#0~~~~~~~~~~~~~~~~~~~~\x1b\\".to_vec();
        let placement = ImagePlacement {
            index: 7,
            row: 1,
            col: 3,
            rows: 1,
            cols: 2,
            width_px: 20,
            height_px: 6,
            format: ImageFormat::Sixel,
            bytes: sixel.len() as u64,
        };
        let listed = ToView::Images {
            placements: vec![placement.clone()],
        };
        assert_eq!(screen.hear(listed.clone()), Ok(Heard::AskImages(vec![7])));
        // Listed again: not asked twice.
        assert_eq!(screen.hear(listed), Ok(Heard::AskImages(vec![])));
        use base64::Engine;
        let data = ImageData {
            placement,
            encoding: ImageEncoding::Sixel,
            data: base64::engine::general_purpose::STANDARD.encode(&sixel),
        };
        let answer = ToView::Image {
            index: 7,
            data: Some(data),
        };
        assert_eq!(screen.hear(answer), Ok(Heard::Changed));
        let drawn = screen.draw();
        let at = b"\x1b7\x1b[2;4H\x1bPq";
        assert!(
            drawn.windows(at.len()).any(|w| w == at),
            "{:?}",
            String::from_utf8_lossy(&drawn)
        );
        // Drawn once: the next frame sends no image again.
        assert!(!screen.draw().windows(3).any(|w| w == b"\x1bPq"));
        // The image went: the page's screen is cleared and drawn whole.
        assert_eq!(
            screen.hear(ToView::Images { placements: vec![] }),
            Ok(Heard::AskImages(vec![]))
        );
        let again = String::from_utf8_lossy(&screen.draw()).into_owned();
        assert!(
            again.contains("\x1b[2J") && again.contains("hello"),
            "{again:?}"
        );
    }
}
