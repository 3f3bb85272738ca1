//! Deterministic test input, made in memory from fixed seeds (no files).

/// xorshift64*: small, fast and the same everywhere.
pub struct XorShift(u64);

impl XorShift {
    pub fn new(seed: u64) -> Self {
        XorShift(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0; the tiny modulo bias does not matter here).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    pub fn range(&mut self, lo: u64, hi_inclusive: u64) -> u64 {
        lo + self.below(hi_inclusive - lo + 1)
    }

    /// True with probability `pct` percent.
    pub fn chance(&mut self, pct: u64) -> bool {
        self.below(100) < pct
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    pub fn fill(&mut self, out: &mut Vec<u8>, n: usize) {
        let mut left = n;
        while left > 0 {
            let bytes = self.next_u64().to_le_bytes();
            let take = left.min(8);
            out.extend_from_slice(&bytes[..take]);
            left -= take;
        }
    }
}

/// The three throughput corpora.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Corpus {
    Log,
    Tui,
    Random,
}

impl Corpus {
    pub const ALL: [Corpus; 3] = [Corpus::Log, Corpus::Tui, Corpus::Random];

    pub fn id(self) -> &'static str {
        match self {
            Corpus::Log => "log",
            Corpus::Tui => "tui",
            Corpus::Random => "random",
        }
    }

    pub fn from_id(id: &str) -> Option<Corpus> {
        Corpus::ALL.into_iter().find(|c| c.id() == id)
    }

    /// A stream of this corpus (unbounded; the caller takes what it needs).
    pub fn source(self) -> Box<dyn Source> {
        match self {
            Corpus::Log => Box::new(LogGen::new(0x5EED_0001)),
            Corpus::Tui => Box::new(TuiGen::new(0x5EED_0002)),
            Corpus::Random => Box::new(RandomGen(XorShift::new(0x5EED_0003))),
        }
    }
}

/// Something that appends the next piece of a byte stream.
pub trait Source {
    fn next_piece(&mut self, out: &mut Vec<u8>);
}

/// Takes exactly `total` bytes from a source in `chunk`-sized pieces without
/// holding more than about one chunk (used for the 50 and 64 MiB streams).
pub struct Chunker {
    source: Box<dyn Source>,
    pending: Vec<u8>,
    left: usize,
    chunk: usize,
}

impl Chunker {
    pub fn new(source: Box<dyn Source>, total: usize, chunk: usize) -> Self {
        Chunker {
            source,
            pending: Vec::with_capacity(chunk * 2),
            left: total,
            chunk,
        }
    }

    /// Writes the next chunk into `out` (cleared first); false at the end.
    pub fn next_chunk(&mut self, out: &mut Vec<u8>) -> bool {
        out.clear();
        if self.left == 0 {
            return false;
        }
        let want = self.chunk.min(self.left);
        while self.pending.len() < want {
            self.source.next_piece(&mut self.pending);
        }
        out.extend_from_slice(&self.pending[..want]);
        self.pending.drain(..want);
        self.left -= want;
        true
    }
}

/// `total` bytes of a corpus held in memory (for the timed runs).
pub fn generate(corpus: Corpus, total: usize) -> Vec<u8> {
    let mut source = corpus.source();
    let mut out = Vec::with_capacity(total + 64 * 1024);
    while out.len() < total {
        source.next_piece(&mut out);
    }
    out.truncate(total);
    out
}

// ------------------------------------------------------------------- random

pub struct RandomGen(XorShift);

impl Source for RandomGen {
    fn next_piece(&mut self, out: &mut Vec<u8>) {
        self.0.fill(out, 4096);
    }
}

/// The image sequences slipped into the robustness stream every MiB.
pub const SIXEL: &[u8] = b"\x1bPq#0;2;0;0;0#1~~@@vv@@~~$-\x1b\\";
pub const KITTY: &[u8] = b"\x1b_Gf=24,s=1,v=1;AAAA\x1b\\";
pub const ITERM: &[u8] = b"\x1b]1337;File=inline=1:AAAA\x07";

/// Random bytes; after every MiB a CAN (0x18, which ends whatever sequence the
/// random bytes left open) and the sixel, kitty and iTerm2 image sequences.
pub struct RobustGen {
    rng: XorShift,
    since_images: usize,
}

impl RobustGen {
    pub fn new() -> Self {
        RobustGen {
            rng: XorShift::new(0x5EED_0004),
            since_images: 0,
        }
    }
}

impl Source for RobustGen {
    fn next_piece(&mut self, out: &mut Vec<u8>) {
        if self.since_images >= 1 << 20 {
            out.push(0x18);
            out.extend_from_slice(SIXEL);
            out.extend_from_slice(KITTY);
            out.extend_from_slice(ITERM);
            self.since_images = 0;
        }
        self.rng.fill(out, 4096);
        self.since_images += 4096;
    }
}

// ---------------------------------------------------------------- coloured log

const WORDS: &[&str] = &[
    "request",
    "handled",
    "connection",
    "from",
    "upstream",
    "cache",
    "miss",
    "hit",
    "retrying",
    "after",
    "timeout",
    "worker",
    "spawned",
    "queue",
    "depth",
    "bytes",
    "ok",
    "status=200",
    "status=503",
    "latency_ms=12",
    "user_id=48213",
    "path=/api/v2/items",
    "GET",
    "POST",
    "checkpoint",
    "compaction",
    "finished",
    "in",
    "the",
    "of",
    "shard",
    "replica",
    "lease",
    "renewed",
    "résumé",
    "naïve",
    "✓",
    "→",
    "größe",
    "日本語",
    "テスト",
    "构建",
    "🚀",
    "0x7ffd3a2c",
    "Δt=3.2s",
];

const MODULES: &[&str] = &[
    "server::http",
    "db::pool",
    "scheduler",
    "auth::session",
    "storage::compaction",
    "net::tls",
    "worker::queue",
];

/// Timestamped log lines with 16-, 256- and truecolour SGR, varied lengths,
/// some longer than 120 columns (they wrap) and some UTF-8 (some wide).
pub struct LogGen {
    rng: XorShift,
    millis: u64,
}

impl LogGen {
    pub fn new(seed: u64) -> Self {
        LogGen {
            rng: XorShift::new(seed),
            millis: 0,
        }
    }
}

impl Source for LogGen {
    fn next_piece(&mut self, out: &mut Vec<u8>) {
        use std::io::Write;
        let r = &mut self.rng;
        self.millis += r.range(0, 40);
        let ms = self.millis;
        let (h, m, s, frac) = (
            (ms / 3_600_000) % 24,
            (ms / 60_000) % 60,
            (ms / 1000) % 60,
            ms % 1000,
        );
        // Timestamp, dim (256-colour grey).
        let _ = write!(
            out,
            "\x1b[38;5;244m2026-11-29T{h:02}:{m:02}:{s:02}.{frac:03}Z\x1b[0m "
        );
        // Level: 16 colours.
        let level = match r.below(20) {
            0 => "\x1b[1;31mERROR\x1b[0m",
            1..=2 => "\x1b[33mWARN \x1b[0m",
            3..=5 => "\x1b[36mDEBUG\x1b[0m",
            _ => "\x1b[32mINFO \x1b[0m",
        };
        out.extend_from_slice(level.as_bytes());
        // Module: 256 colours.
        let _ = write!(
            out,
            " \x1b[38;5;{}m{}\x1b[39m: ",
            r.range(17, 230),
            r.pick(MODULES)
        );
        // Message: mostly 20..100 columns, 15% long enough to wrap.
        let target = if r.chance(15) {
            r.range(130, 420)
        } else {
            r.range(10, 80)
        };
        let mut width = 0;
        while width < target {
            let word = *r.pick(WORDS);
            match r.below(12) {
                0 => {
                    let _ = write!(
                        out,
                        "\x1b[38;2;{};{};{}m{word}\x1b[39m",
                        r.below(256),
                        r.below(256),
                        r.below(256)
                    );
                }
                1 => {
                    let _ = write!(out, "\x1b[48;5;{}m{word}\x1b[49m", r.below(256));
                }
                2 => {
                    let _ = write!(out, "\x1b[1;{}m{word}\x1b[0m", 30 + r.below(8));
                }
                3 => {
                    let _ = write!(out, "\x1b[4;9{}m{word}\x1b[24;39m", r.below(8));
                }
                _ => out.extend_from_slice(word.as_bytes()),
            }
            out.push(b' ');
            width += word.chars().count() as u64 + 1;
        }
        out.extend_from_slice(b"\x1b[0m\r\n");
    }
}

// ------------------------------------------------------------- full-screen TUI

const COMMANDS: &[&str] = &[
    "/usr/lib/systemd/systemd --user",
    "cargo build --release",
    "target/release/tickloop launcher --id 7",
    "/usr/bin/python3 -m http.server 8080",
    "vim src/main.rs",
    "postgres: checkpointer",
    "node /srv/app/server.js --port=3000",
    "sshd: dev@pts/3",
    "[kworker/u4:2-events_unbound]",
    "htop",
];

const CODE: &[&str] = &[
    "fn main() {",
    "    let mut state = State::new(config);",
    "    for chunk in reader.chunks(65536) {",
    "        emulator.feed(&chunk);",
    "    }",
    "}",
    "",
    "impl Drop for Session {",
    "    // Ask the child to stop, then reap it.",
    "    match self.child.try_wait() {",
    "        Ok(Some(status)) => log::info!(\"exited {status}\"),",
    "        _ => unsafe { libc::kill(self.pid, libc::SIGTERM) },",
];

/// An htop/vim-like stream on the alternate screen: cursor addressing,
/// partial repaints of coloured rows, a scroll region, insert/delete line,
/// and now and then leaving and re-entering the alternate screen.
pub struct TuiGen {
    rng: XorShift,
    frame: u64,
}

impl TuiGen {
    pub fn new(seed: u64) -> Self {
        TuiGen {
            rng: XorShift::new(seed),
            frame: 0,
        }
    }
}

const COLS: u64 = 120;
const ROWS: u64 = 30;

impl TuiGen {
    fn process_row(&mut self, out: &mut Vec<u8>, row: u64, selected: bool) {
        use std::io::Write;
        let r = &mut self.rng;
        let _ = write!(out, "\x1b[{row};1H");
        if selected {
            out.extend_from_slice(b"\x1b[30;46m");
        }
        let cpu = r.below(1000);
        let _ = write!(
            out,
            "\x1b[38;5;{}m{:>7}\x1b[39m {:<9} \x1b[1m{:>3}\x1b[22m {:>4} {:>8} \x1b[38;2;{};{};80m{:>5}.{}\x1b[39m {:>4}.{} ",
            r.range(20, 230),
            r.range(1, 99_999),
            *r.pick(&["root", "dev", "postgres", "www-data"]),
            20,
            0,
            r.range(1000, 9_999_999),
            r.below(256),
            255 - r.below(128),
            cpu / 10,
            cpu % 10,
            r.below(100),
            r.below(10),
        );
        let cmd = *r.pick(COMMANDS);
        if r.chance(30) {
            let _ = write!(out, "\x1b[32m{cmd}\x1b[39m");
        } else {
            out.extend_from_slice(cmd.as_bytes());
        }
        if selected {
            // Selected row: paint the background to the last column.
            let used = 56 + cmd.len() as u64;
            out.extend(std::iter::repeat_n(
                b' ',
                COLS.saturating_sub(used) as usize,
            ));
            out.extend_from_slice(b"\x1b[0m");
        } else {
            out.extend_from_slice(b"\x1b[K");
        }
    }

    fn cpu_bar(&mut self, out: &mut Vec<u8>, row: u64) {
        use std::io::Write;
        let r = &mut self.rng;
        let used = r.below(51);
        let _ = write!(out, "\x1b[{row};1H\x1b[36m{:>3}\x1b[39m[", row - 1);
        let user = used * 2 / 3;
        out.extend_from_slice(b"\x1b[32m");
        out.extend(std::iter::repeat_n(b'|', user as usize));
        out.extend_from_slice(b"\x1b[31m");
        out.extend(std::iter::repeat_n(b'|', (used - user) as usize));
        out.extend_from_slice(b"\x1b[39m");
        out.extend(std::iter::repeat_n(b' ', (50 - used) as usize));
        let _ = write!(out, "{:>5.1}%]\x1b[K", used as f64 * 2.0);
    }

    fn code_line(&mut self, out: &mut Vec<u8>, row: u64) {
        use std::io::Write;
        let r = &mut self.rng;
        let line = *r.pick(CODE);
        let _ = write!(
            out,
            "\x1b[{row};1H\x1b[38;5;130m{:>4} \x1b[39m",
            r.range(1, 2000)
        );
        for (i, word) in line.split(' ').enumerate() {
            if i > 0 {
                out.push(b' ');
            }
            match word {
                "fn" | "let" | "mut" | "for" | "in" | "impl" | "match" | "unsafe" => {
                    let _ = write!(out, "\x1b[1;38;2;198;120;221m{word}\x1b[0m");
                }
                w if w.starts_with('"') || w.starts_with("//") => {
                    let _ = write!(out, "\x1b[38;2;152;195;121m{w}\x1b[39m");
                }
                w => out.extend_from_slice(w.as_bytes()),
            }
        }
        out.extend_from_slice(b"\x1b[K");
    }
}

impl Source for TuiGen {
    fn next_piece(&mut self, out: &mut Vec<u8>) {
        use std::io::Write;
        let frame = self.frame;
        self.frame += 1;
        if frame.is_multiple_of(400) {
            if frame > 0 {
                // The program quits to the shell and is started again.
                out.extend_from_slice(b"\x1b[?1049l\x1b[?25h\r\n$ htop\r\n");
            }
            out.extend_from_slice(b"\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J");
        }
        out.extend_from_slice(b"\x1b[?25l");
        let vim = (frame / 100) % 2 == 1;
        if vim {
            // vim-like: scroll the text area (rows 1..29) in a region and
            // draw the exposed lines, sometimes insert/delete lines.
            out.extend_from_slice(b"\x1b[1;29r");
            let n = self.rng.range(1, 4);
            if self.rng.chance(50) {
                let _ = write!(out, "\x1b[29;1H");
                for _ in 0..n {
                    out.push(b'\n');
                }
                for i in 0..n {
                    self.code_line(out, 29 - n + 1 + i);
                }
            } else {
                out.extend_from_slice(b"\x1b[1;1H");
                for _ in 0..n {
                    out.extend_from_slice(b"\x1bM");
                }
                for i in 0..n {
                    self.code_line(out, 1 + i);
                }
            }
            out.extend_from_slice(b"\x1b[r");
            if self.rng.chance(20) {
                let row = self.rng.range(2, 25);
                let _ = write!(out, "\x1b[{row};1H\x1b[2L");
                self.code_line(out, row);
                self.code_line(out, row + 1);
            } else if self.rng.chance(20) {
                let row = self.rng.range(2, 25);
                let _ = write!(out, "\x1b[{row};1H\x1b[M");
                self.code_line(out, 29);
            }
            let (l, c) = (self.rng.range(1, 2000), self.rng.range(1, 80));
            let _ = write!(
                out,
                "\x1b[30;1H\x1b[7m src/main.rs [+]{:>70}{l:>6},{c:<4} {:>3}% \x1b[27m\x1b[K",
                "",
                self.rng.below(101)
            );
            let _ = write!(
                out,
                "\x1b[{};{}H\x1b[?25h",
                self.rng.range(1, 29),
                self.rng.range(6, 60)
            );
        } else {
            // htop-like: CPU bars, a header, partial repaint of process rows.
            for row in 2..=3 {
                self.cpu_bar(out, row);
            }
            let _ = write!(
                out,
                "\x1b[4;1H  Tasks: \x1b[1m{}\x1b[22m, {} thr; \x1b[32m{}\x1b[39m running\x1b[K",
                self.rng.range(80, 200),
                self.rng.range(100, 900),
                self.rng.range(1, 4)
            );
            if frame.is_multiple_of(100) {
                out.extend_from_slice(
                    b"\x1b[6;1H\x1b[30;42m    PID USER      PRI  NI  VIRT      RES  CPU%  MEM% Command",
                );
                out.extend(std::iter::repeat_n(b' ', (COLS - 62) as usize));
                out.extend_from_slice(b"\x1b[0m");
            }
            let selected = 7 + (frame / 7) % 22;
            let repaint = self.rng.range(3, 12);
            for _ in 0..repaint {
                let row = self.rng.range(7, ROWS - 1);
                self.process_row(out, row, row == selected);
            }
            // A few in-place number updates.
            for _ in 0..self.rng.range(1, 5) {
                let (row, col) = (self.rng.range(7, ROWS - 1), self.rng.range(40, 50));
                let _ = write!(
                    out,
                    "\x1b[{row};{col}H\x1b[38;5;{}m{:>4}.{}\x1b[39m",
                    self.rng.range(1, 255),
                    self.rng.below(100),
                    self.rng.below(10)
                );
            }
            let _ = write!(
                out,
                "\x1b[30;1HF1\x1b[30;46mHelp  \x1b[0mF2\x1b[30;46mSetup \x1b[0mF10\x1b[30;46mQuit\x1b[K\x1b[0m"
            );
        }
    }
}
