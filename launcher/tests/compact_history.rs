//! The compact history (issue 40) changes nothing anyone can see: the
//! launcher's keeper, which moves rows that scrolled off into its own
//! compact store (when asked: here at random points, in the launcher when
//! output pauses and once a second) and puts them back for resizes, is
//! compared with a bare
//! `alacritty_terminal` screen keeping the same history itself (the keeper
//! as it was), over the fidelity corpus and over random output laced with
//! scrolling, clearing, the alternate screen, wide characters, marks,
//! colours, hyperlinks and resizes. After every step: the screen, every line
//! of history as a view scrolled back sees it (text, colours, attributes),
//! `screen --history`'s text, the cursor.

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Line as GridLine;
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::Processor;
use launcher::emulator::Emulator;
use launcher::screen_model::{convert_row, row_text};
use proptest::prelude::*;
use serde::Deserialize;
use tickloop_proto::attach::Line;

/// The keeper as it was: alacritty keeping its own history.
struct Reference {
    term: Term<VoidListener>,
    parser: Processor,
}

#[derive(Debug, Clone, Copy)]
struct Size {
    rows: usize,
    cols: usize,
}

impl Dimensions for Size {
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

impl Reference {
    fn new(rows: usize, cols: usize, history: usize) -> Self {
        let config = Config {
            scrolling_history: history,
            ..Config::default()
        };
        Reference {
            term: Term::new(config, &Size { rows, cols }, VoidListener),
            parser: Processor::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut self.term, bytes);
    }

    fn resize(&mut self, rows: usize, cols: usize) {
        self.term.resize(Size {
            rows: rows.max(1),
            cols: cols.max(2),
        });
    }

    /// The screen, then every line of history, oldest first.
    fn seen(&self) -> Seen {
        let grid = self.term.grid();
        let cols = grid.columns();
        let history = grid.history_size();
        let alt = self.term.mode().contains(TermMode::ALT_SCREEN);
        let point = grid.cursor.point;
        Seen {
            screen: (0..grid.screen_lines())
                .map(|r| convert_row(&grid[GridLine(r as i32)], cols))
                .collect(),
            history: (1..=history)
                .rev()
                .map(|back| convert_row(&grid[GridLine(-(back as i32))], cols))
                .collect(),
            history_text: (1..=history)
                .rev()
                .map(|back| row_text(&grid[GridLine(-(back as i32))], cols))
                .collect(),
            cursor: (point.line.0 as usize, point.column.0.min(cols - 1)),
            alt,
        }
    }
}

/// What a person or an agent can see of a screen.
#[derive(Debug, PartialEq)]
struct Seen {
    screen: Vec<Line>,
    history: Vec<Line>,
    history_text: Vec<String>,
    cursor: (usize, usize),
    alt: bool,
}

/// The keeper's screen and history, read the ways views and `screen` do.
fn seen(emu: &mut Emulator) -> Seen {
    let live = emu.snapshot();
    let rows = usize::from(live.rows);
    let held = emu.history_len();
    let text = emu.text(usize::MAX);
    // A view scrolled all the way back sees the oldest lines on top; then
    // a screen's height at a time towards the live screen.
    let mut history = Vec::new();
    let mut offset = held;
    while offset > 0 {
        let snap = emu.snapshot_scrolled(offset);
        let take = offset.min(rows);
        history.extend(snap.lines.into_iter().take(take));
        offset -= take;
    }
    Seen {
        screen: live.lines,
        history,
        history_text: text.history,
        cursor: (text.cursor_row, text.cursor_col),
        alt: live.alt_screen,
    }
}

#[derive(Debug, Clone)]
enum Op {
    Feed(Vec<u8>),
    Resize(usize, usize),
    /// The keeper moves what scrolled off into its compact history (as
    /// during a flood), or also gives back the memory (as when it pauses).
    Compact {
        release: bool,
    },
}

/// Both keepers, fed the same.
struct Pair {
    ours: Emulator,
    reference: Reference,
}

impl Pair {
    fn new(rows: usize, cols: usize, history: usize) -> Self {
        Pair {
            ours: Emulator::new(rows, cols, history, Box::new(std::io::sink())),
            reference: Reference::new(rows, cols, history),
        }
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Feed(bytes) => {
                self.ours.feed(bytes);
                self.reference.feed(bytes);
            }
            Op::Resize(rows, cols) => {
                self.ours.resize(*rows, *cols);
                self.reference.resize(*rows, *cols);
            }
            Op::Compact { release: true } => {
                self.ours.release_spare_rows();
            }
            Op::Compact { release: false } => self.ours.compact(),
        }
    }

    fn check(&mut self, what: &str) -> Result<(), String> {
        let ours = seen(&mut self.ours);
        let reference = self.reference.seen();
        if ours == reference {
            return Ok(());
        }
        let first = |a: &[Line], b: &[Line]| {
            a.iter()
                .zip(b)
                .position(|(x, y)| x != y)
                .map(|i| format!("{i}: {:?} vs {:?}", a[i].text(), b[i].text()))
        };
        Err(format!(
            "{what}: screen {:?}; history {} vs {} lines, first difference {:?}; history text equal {}; cursor {:?} vs {:?}; alt {} vs {}",
            first(&ours.screen, &reference.screen),
            ours.history.len(),
            reference.history.len(),
            first(&ours.history, &reference.history),
            ours.history_text == reference.history_text,
            ours.cursor,
            reference.cursor,
            ours.alt,
            reference.alt,
        ))
    }
}

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    cols: usize,
    rows: usize,
    #[serde(default = "default_history")]
    history: usize,
    steps: Vec<Step>,
}

fn default_history() -> usize {
    2000
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Step {
    Feed { feed: String },
    FeedHex { feed_hex: String },
    Resize { resize: (usize, usize) },
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex"))
        .collect()
}

#[test]
fn the_fidelity_corpus_looks_the_same() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fidelity/cases.json");
    let cases: Vec<Case> =
        serde_json::from_slice(&std::fs::read(path).expect("cases.json")).expect("cases parse");
    let mut failures = Vec::new();
    for case in &cases {
        let mut pair = Pair::new(case.rows, case.cols, case.history);
        for (i, step) in case.steps.iter().enumerate() {
            let op = match step {
                Step::Feed { feed } => Op::Feed(feed.as_bytes().to_vec()),
                Step::FeedHex { feed_hex } => Op::Feed(hex(feed_hex)),
                Step::Resize { resize } => Op::Resize(resize.1, resize.0),
            };
            pair.apply(&op);
            // Every other step, what scrolled off goes compact.
            if i % 2 == 1 {
                pair.apply(&Op::Compact {
                    release: i % 4 == 3,
                });
            }
            if let Err(e) = pair.check(&format!("{} step {i}", case.name)) {
                failures.push(e);
                break;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Pieces of output that scroll, clear, switch screens and style text.
const PIECES: &[&[u8]] = &[
    b"\r\n",
    b"\n",
    b"\x1bD",
    b"\x1bE",
    b"\x1bM",
    b"\x1b[3S",
    b"\x1b[2T",
    b"\x1b[2L",
    b"\x1b[2M",
    b"\x1b[H\x1b[2M",
    b"\x1b[2J",
    b"\x1b[3J",
    b"\x1b[J",
    b"\x1b[1J",
    b"\x1bc",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b7",
    b"\x1b8",
    b"\x1b[2;4r",
    b"\x1b[r",
    b"\x1b[1;1H",
    b"\x1b[99;1H",
    b"\x1b[5;10H",
    b"\x1b[31;44m",
    b"\x1b[1;3;4m",
    b"\x1b[38;2;10;20;30m",
    b"\x1b[4:3m\x1b[58;5;3m",
    b"\x1b[0m",
    b"\x1b[7m \x1b[0m",
    b"\x1b]8;id=x;http://example.invalid\x1b\\link\x1b]8;;\x1b\\",
    "漢字の行".as_bytes(),
    "e\u{301}\u{302} a\u{308}".as_bytes(),
    b"\t|",
    b"\x1b[K",
    b"\x1b[4@\x1b[2P\x1b[3X",
    b"\x1b#8",
    // Where printable ASCII is not written a run at a time (alacritty
    // patch 5): the insert mode, the line-drawing charset (designated, and
    // shifted in and out), no autowrap; and REP, which repeats the last
    // character.
    b"\x1b[4h",
    b"\x1b[4l",
    b"\x1b(0",
    b"\x1b(B",
    b"\x1b)0\x0e",
    b"\x0f",
    b"\x1b[?7l",
    b"\x1b[?7h",
    b"\x1b[3b",
];

fn text_piece() -> impl Strategy<Value = Vec<u8>> {
    "[a-z0-9 ]{0,50}".prop_map(String::into_bytes)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => proptest::collection::vec(
            prop_oneof![
                2 => text_piece(),
                3 => (0..PIECES.len()).prop_map(|i| PIECES[i].to_vec()),
            ],
            1..30,
        )
        .prop_map(|pieces| Op::Feed(pieces.concat())),
        1 => proptest::collection::vec(any::<u8>(), 0..200).prop_map(Op::Feed),
        2 => (1usize..40, 2usize..90).prop_map(|(r, c)| Op::Resize(r, c)),
        2 => any::<bool>().prop_map(|release| Op::Compact { release }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn random_output_and_resizes_look_the_same(
        ops in proptest::collection::vec(op(), 1..30),
        rows in 2usize..20,
        cols in 10usize..60,
        history in prop_oneof![Just(0usize), 1usize..8, 20usize..60],
    ) {
        let mut pair = Pair::new(rows, cols, history);
        for (i, op) in ops.iter().enumerate() {
            pair.apply(op);
            if let Err(e) = pair.check(&format!("op {i} {op:?}")) {
                return Err(TestCaseError::fail(e));
            }
        }
    }
}
