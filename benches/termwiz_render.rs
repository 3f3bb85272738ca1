//! Redraw cost of the views: what one frame costs, from a Tick's screen
//! model to the escape sequences written to the view's terminal. Each frame
//! goes the way `tickloop attach` and the Monitor's overlay draw it
//! (view-monitor's `render`): the screen model onto a termwiz `Surface`
//! (attach, the web page and the Monitor's overlay with a `Composer`, which
//! keeps the model drawn between frames; `row-monitor` with `compose`,
//! which draws it whole),
//! `frame_changes_keyed` or `frame_changes` (the changes against what the
//! terminal shows), then termwiz's terminfo renderer writes the escapes
//! into memory. Written to compare termwiz versions (benches/termwiz.md).
//!
//! Frames, all 200x50, every row coloured (palette and 24-bit colours, bold,
//! underline, a wide character and an accented one):
//!
//! - `full`: the whole screen drawn onto a blank terminal (attach, resize,
//!   the overlay opening).
//! - `row`: one row differs from the frame before (typing, a clock), the
//!   attach view's way (`frame_changes_keyed`).
//! - `row-monitor`: the same frames composed whole and compared cell by
//!   cell (`compose` and `frame_changes`, as the Monitor compares its
//!   whole screen).
//! - `scroll`: the screen scrolled up by one row (log output).
//!
//! The escapes are hashed (FNV-1a over every byte of a round), so two builds
//! that print the same digest wrote the same bytes. Last, one small frame
//! with the attributes the frames above leave out (curly, double and dotted
//! underlines, underline colours, overline, strikethrough, a hyperlink) is
//! printed as the escapes written, to show what a renderer keeps of them.
//!
//! Run: `cargo bench --bench termwiz_render` (options after `--`:
//! `--frames N` per round (default 2000), `--rounds N` (default 7)). Prints
//! the median ns/frame over the rounds, the lowest and highest, and bytes
//! per frame; the last line of stdout is one JSON object with every figure.

use std::time::Instant;

use serde_json::{json, Value};
use termwiz::caps::{Capabilities, ProbeHints};
use termwiz::render::terminfo::TerminfoRenderer;
use termwiz::render::RenderTty;
use termwiz::surface::Surface;
use tickloop_proto::attach::{Attrs, Color, Cursor, Line, Run, Snapshot, Underline};
use view_monitor::render::{compose, frame_changes, frame_changes_keyed, Composer};

const COLS: u16 = 200;
const ROWS: u16 = 50;

/// What the renderer writes to: memory, with the digest of what came.
struct Sink {
    bytes: Vec<u8>,
    digest: u64,
    total: usize,
}

impl Sink {
    fn new() -> Sink {
        Sink {
            bytes: Vec::with_capacity(1 << 16),
            digest: 0xcbf2_9ce4_8422_2325,
            total: 0,
        }
    }

    /// Folds what was written since the last call into the digest.
    fn settle(&mut self) {
        for &b in &self.bytes {
            self.digest = (self.digest ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.total += self.bytes.len();
        self.bytes.clear();
    }
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
        Ok((usize::from(COLS), usize::from(ROWS)))
    }
}

/// A 24-bit terminal of the xterm kind, the same on every run (not this
/// process's environment).
fn capabilities() -> Capabilities {
    let hints = ProbeHints::default()
        .term(Some("xterm-256color".to_string()))
        .colorterm(Some("truecolor".to_string()))
        .hyperlinks(Some(true))
        .mouse_reporting(Some(false));
    Capabilities::new_with_hints(hints).expect("capabilities for xterm-256color")
}

/// Row `n` of a log-like coloured screen: a timestamp, a level in a
/// palette colour, a 24-bit background badge, bold and underlined words,
/// a wide and an accented character; `salt` changes the text.
fn line(n: usize, salt: usize) -> Line {
    let palette = |i: usize| Some(Color::Index((i % 200) as u8 + 16));
    let rgb = |i: usize| Some(Color::Rgb((i * 37) as u8, (i * 91) as u8, (i * 53) as u8));
    let runs = vec![
        Run {
            text: format!(
                "12:{:02}:{:02}.{:03} ",
                n % 60,
                salt % 60,
                (n * 7 + salt) % 1000
            ),
            attrs: Attrs {
                fg: Some(Color::Index(8)),
                ..Attrs::default()
            },
        },
        Run {
            text: ["INFO ", "WARN ", "DEBUG", "ERROR"][(n + salt) % 4].to_string(),
            attrs: Attrs {
                fg: palette(n + salt),
                bold: true,
                ..Attrs::default()
            },
        },
        Run {
            text: format!(" worker-{:03} ", (n * 13 + salt) % 1000),
            attrs: Attrs {
                fg: Some(Color::Index(15)),
                bg: rgb(n + salt),
                ..Attrs::default()
            },
        },
        Run {
            text: format!(
                " request {} finished in {} ms, naïve cache 漢字 ",
                n * 31 + salt,
                (n * 17 + salt) % 900
            ),
            attrs: Attrs::default(),
        },
        Run {
            text: format!("status={}", 200 + (n + salt) % 5),
            attrs: Attrs {
                fg: rgb(n * 3 + salt),
                underline: Underline::Single,
                ..Attrs::default()
            },
        },
        Run {
            text: format!(
                " {:width$}",
                format!(
                    "path=/api/v1/items/{}/detail?page={}",
                    n * 101 + salt,
                    n % 9
                ),
                width = 90
            ),
            attrs: Attrs {
                fg: palette(n * 5 + salt),
                italic: n.is_multiple_of(3),
                ..Attrs::default()
            },
        },
    ];
    Line { runs }
}

/// The screen showing log lines `first..first + ROWS`, with row `changed`
/// (if any) drawn with `salt`.
fn snapshot(first: usize, changed: Option<(usize, usize)>) -> Snapshot {
    let lines = (0..usize::from(ROWS))
        .map(|y| match changed {
            Some((row, salt)) if row == y => line(first + y, salt),
            _ => line(first + y, 0),
        })
        .collect();
    Snapshot {
        cols: COLS,
        rows: ROWS,
        cursor: Cursor {
            x: 0,
            y: ROWS - 1,
            visible: true,
            shape: Default::default(),
        },
        alt_screen: false,
        modes: Default::default(),
        title: String::new(),
        scroll: Default::default(),
        lines,
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Full,
    Row,
    RowMonitor,
    Scroll,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Full => "full",
            Kind::Row => "row",
            Kind::RowMonitor => "row-monitor",
            Kind::Scroll => "scroll",
        }
    }

    fn what(self) -> &'static str {
        match self {
            Kind::Full => "full redraw 200x50, coloured",
            Kind::Row => "one row changed (attach, keyed)",
            Kind::RowMonitor => "one row changed (Monitor, cell diff)",
            Kind::Scroll => "scrolled up one row",
        }
    }

    /// The screens shown one after the other, cycled.
    fn screens(self) -> Vec<Snapshot> {
        match self {
            Kind::Full => vec![snapshot(0, None)],
            Kind::Row | Kind::RowMonitor => {
                (0..64).map(|i| snapshot(0, Some((20, i + 1)))).collect()
            }
            Kind::Scroll => (0..256).map(|i| snapshot(i, None)).collect(),
        }
    }
}

struct Round {
    ns_per_frame: f64,
    compose_ns: f64,
    emit_ns: f64,
    bytes: usize,
    digest: u64,
}

/// `frames` frames of `kind`: ns per frame in all, in `compose` + the diff,
/// and in the escape writer.
fn round(kind: Kind, screens: &[Snapshot], frames: usize) -> Round {
    let caps = capabilities();
    let mut renderer = TerminfoRenderer::new(caps);
    let mut sink = Sink::new();
    let (cols, rows) = (usize::from(COLS), usize::from(ROWS));
    let mut shown = Surface::new(cols, rows);
    let mut shown_keys = Vec::new();
    let mut composer = Composer::default();
    let (mut compose_ns, mut emit_ns) = (0u128, 0u128);
    let started = Instant::now();
    for i in 0..frames {
        let t0 = Instant::now();
        let screen = &screens[i % screens.len()];
        let frame = match kind {
            Kind::RowMonitor => compose(screen, COLS, ROWS, "", false),
            _ => composer.compose(screen, COLS, ROWS, "", false),
        };
        let changes = match kind {
            Kind::Full => {
                shown = Surface::new(cols, rows);
                shown_keys.clear();
                frame_changes(&mut shown, &frame)
            }
            Kind::Row | Kind::Scroll => frame_changes_keyed(&mut shown, &mut shown_keys, &frame),
            Kind::RowMonitor => frame_changes(&mut shown, &frame),
        };
        let t1 = Instant::now();
        renderer
            .render_to(&changes, &mut sink)
            .expect("rendering into memory");
        let t2 = Instant::now();
        compose_ns += (t1 - t0).as_nanos();
        emit_ns += (t2 - t1).as_nanos();
        sink.settle();
    }
    let total = started.elapsed().as_nanos() as f64;
    Round {
        ns_per_frame: total / frames as f64,
        compose_ns: compose_ns as f64 / frames as f64,
        emit_ns: emit_ns as f64 / frames as f64,
        bytes: sink.total,
        digest: sink.digest,
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn option(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The escapes of one full redraw of a small screen with the rarer
/// attributes, control bytes written as `\e` and `\xNN`.
fn attribute_sample() -> String {
    let run = |text: &str, attrs: Attrs| Run {
        text: text.to_string(),
        attrs,
    };
    let lines = vec![Line {
        runs: vec![
            run(
                "curly",
                Attrs {
                    underline: Underline::Curly,
                    underline_color: Some(Color::Index(196)),
                    ..Attrs::default()
                },
            ),
            run(" ", Attrs::default()),
            run(
                "double",
                Attrs {
                    underline: Underline::Double,
                    underline_color: Some(Color::Rgb(0, 128, 255)),
                    ..Attrs::default()
                },
            ),
            run(" ", Attrs::default()),
            run(
                "dotted",
                Attrs {
                    underline: Underline::Dotted,
                    ..Attrs::default()
                },
            ),
            run(" ", Attrs::default()),
            run(
                "over",
                Attrs {
                    overline: true,
                    strikethrough: true,
                    ..Attrs::default()
                },
            ),
            run(" ", Attrs::default()),
            run(
                "link",
                Attrs {
                    link: Some("http://example.invalid/".to_string()),
                    ..Attrs::default()
                },
            ),
        ],
    }];
    let snap = Snapshot {
        cols: 40,
        rows: 1,
        cursor: Cursor {
            x: 0,
            y: 0,
            visible: false,
            shape: Default::default(),
        },
        alt_screen: false,
        modes: Default::default(),
        title: String::new(),
        scroll: Default::default(),
        lines,
    };
    let frame = compose(&snap, 40, 1, "", false);
    let mut shown = Surface::new(40, 1);
    let changes = frame_changes(&mut shown, &frame);
    let mut renderer = TerminfoRenderer::new(capabilities());
    let mut sink = Sink::new();
    renderer
        .render_to(&changes, &mut sink)
        .expect("rendering into memory");
    sink.bytes
        .iter()
        .map(|&b| match b {
            0x1b => "\\e".to_string(),
            0x20..=0x7e => char::from(b).to_string(),
            _ => format!("\\x{b:02x}"),
        })
        .collect()
}

fn main() {
    let frames = option("--frames", 2000).max(1);
    let rounds = option("--rounds", 7).max(1);
    println!("termwiz_render: {frames} frames x {rounds} rounds per case, {COLS}x{ROWS}");
    println!(
        "{:<40} {:>12} {:>21} {:>11} {:>11} {:>9}  digest",
        "case", "ns/frame", "min-max", "compose+diff", "escapes", "B/frame"
    );
    let mut results = Vec::<Value>::new();
    for kind in [Kind::Full, Kind::Row, Kind::RowMonitor, Kind::Scroll] {
        let screens = kind.screens();
        // Warm-up: caches, the allocator, the CPU's clock.
        round(kind, &screens, frames.min(200));
        let runs: Vec<Round> = (0..rounds).map(|_| round(kind, &screens, frames)).collect();
        let digest = runs[0].digest;
        assert!(
            runs.iter()
                .all(|r| r.digest == digest && r.bytes == runs[0].bytes),
            "{}: rounds wrote different bytes",
            kind.name()
        );
        let per_frame: Vec<f64> = runs.iter().map(|r| r.ns_per_frame).collect();
        let (lo, hi) = per_frame
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &v| (lo.min(v), hi.max(v)));
        let ns = median(per_frame);
        let compose_ns = median(runs.iter().map(|r| r.compose_ns).collect());
        let emit_ns = median(runs.iter().map(|r| r.emit_ns).collect());
        let bytes = runs[0].bytes as f64 / frames as f64;
        println!(
            "{:<40} {:>12.0} {:>21} {:>11.0} {:>11.0} {:>9.0}  {:016x}",
            kind.what(),
            ns,
            format!("{lo:.0}-{hi:.0}"),
            compose_ns,
            emit_ns,
            bytes,
            digest
        );
        results.push(json!({
            "case": kind.name(),
            "ns_per_frame": ns.round(),
            "min": lo.round(),
            "max": hi.round(),
            "compose_diff_ns": compose_ns.round(),
            "escapes_ns": emit_ns.round(),
            "bytes_per_frame": bytes.round(),
            "digest": format!("{digest:016x}"),
        }));
    }
    let sample = attribute_sample();
    println!("rare attributes, one frame: {sample}");
    println!(
        "{}",
        json!({ "cols": COLS, "rows": ROWS, "frames": frames, "rounds": rounds, "cases": results, "attribute_sample": sample })
    );
}
