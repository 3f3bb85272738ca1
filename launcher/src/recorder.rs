//! Recordings of a Tick's session as asciicast v2 (what `open --record FILE`
//! and `tickloop record ID` write): a header with the terminal's size, the
//! kept screen at the start as output that redraws it, then the PTY's
//! output with its timing (`o` events), resizes (`r` events), and the
//! protocol traffic as marker events (`m`) whose label is
//! `tickloop {"dir":"to_tick"|"from_tick"|"end","msg":...}`, which players
//! skip when drawing.
//!
//! The taps cost one atomic load when nothing records. Output is taken in
//! the terminal thread, in the order the screen applies it, so a recording
//! started mid-session continues exactly from the screen it starts with;
//! the terminal thread only timestamps and copies it: the recording's own
//! reader (a file's writer thread, a `record` connection) decodes and
//! encodes it, off the emulator's path. Each recording gets its events
//! through an unbounded channel; one whose reader falls more than
//! [`MAX_QUEUED`] bytes behind is ended.

use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;
use tickloop_proto::attach::{Attrs, Color, Snapshot, Underline};
use tokio::sync::mpsc;

/// The label prefix of Tickloop's marker events.
pub const MARKER_PREFIX: &str = "tickloop ";
/// How far a recording's reader may fall behind before it is ended.
pub const MAX_QUEUED: usize = 64 * 1024 * 1024;

/// A `tickloop record` connection started (after its screen was taken)
/// or stopped recording; `client` is who it said it is at hello.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecorderNote {
    pub client: Option<tickloop_proto::wire::ClientKind>,
    pub started: bool,
}

/// One event of a recording, as the taps hand it over.
enum Event {
    /// A whole line (the header).
    Line(Vec<u8>),
    /// PTY output at `t`, not yet decoded.
    Output(f64, Vec<u8>),
    /// `[t, code, data]` with `data` already JSON.
    Encoded(f64, &'static str, String),
}

impl Event {
    fn cost(&self) -> usize {
        match self {
            Event::Line(l) => l.len(),
            Event::Output(_, b) => b.len(),
            Event::Encoded(_, _, d) => d.len(),
        }
    }
}

/// Where one recording's events go.
pub struct RecordingSink {
    tx: mpsc::UnboundedSender<Event>,
    queued: Arc<AtomicUsize>,
}

/// The reading end of a recording: asciicast lines, each ending in `\n`.
pub struct RecordingStream {
    rx: mpsc::UnboundedReceiver<Event>,
    queued: Arc<AtomicUsize>,
    /// An incomplete UTF-8 sequence at the end of the last output.
    utf8_carry: Vec<u8>,
}

impl RecordingStream {
    /// The next line; `None` when the recording has ended.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let event = self.rx.recv().await?;
            if let Some(line) = self.encode(event) {
                return Some(line);
            }
        }
    }

    /// [`RecordingStream::recv`] for a thread outside the runtime.
    pub fn blocking_recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let event = self.rx.blocking_recv()?;
            if let Some(line) = self.encode(event) {
                return Some(line);
            }
        }
    }

    /// The next line if one is waiting.
    pub fn try_recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let event = self.rx.try_recv().ok()?;
            if let Some(line) = self.encode(event) {
                return Some(line);
            }
        }
    }

    /// Whether nothing is waiting.
    pub fn is_empty(&self) -> bool {
        self.rx.is_empty()
    }

    fn encode(&mut self, event: Event) -> Option<Vec<u8>> {
        self.queued.fetch_sub(event.cost(), Ordering::AcqRel);
        match event {
            Event::Line(line) => Some(line),
            Event::Output(t, bytes) => {
                let text = decode_utf8_stream(&mut self.utf8_carry, &bytes);
                (!text.is_empty()).then(|| event_line(t, "o", &json_string(&text)))
            }
            Event::Encoded(t, code, data) => Some(event_line(t, code, &data)),
        }
    }
}

fn event_line(t: f64, code: &str, data_json: &str) -> Vec<u8> {
    format!("[{t:.6}, \"{code}\", {data_json}]\n").into_bytes()
}

/// A new recording's two ends.
pub fn recording() -> (RecordingSink, RecordingStream) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Arc::new(AtomicUsize::new(0));
    (
        RecordingSink {
            tx,
            queued: queued.clone(),
        },
        RecordingStream {
            rx,
            queued,
            utf8_carry: Vec::new(),
        },
    )
}

struct Active {
    sink: RecordingSink,
    started: Instant,
    /// The last time written, so times never go backwards across taps.
    last: f64,
}

impl Active {
    /// The time of an event at `at`, never before the last one.
    fn time(&mut self, at: Instant) -> f64 {
        let t = at
            .saturating_duration_since(self.started)
            .as_secs_f64()
            .max(self.last);
        self.last = t;
        t
    }

    /// Hands `event` over; false when the recording is over.
    fn send(&mut self, event: Event) -> bool {
        let n = event.cost();
        if self.sink.queued.fetch_add(n, Ordering::AcqRel) + n > MAX_QUEUED {
            return false;
        }
        self.sink.tx.send(event).is_ok()
    }

    /// Sends `[t, code, data]`; false when the recording is over.
    fn event(&mut self, at: Instant, code: &'static str, data_json: &str) -> bool {
        let t = self.time(at);
        self.send(Event::Encoded(t, code, data_json.to_string()))
    }
}

#[derive(Default)]
struct Inner {
    active: Vec<Active>,
    /// The Tick's stdout since its last newline.
    stdout_partial: Vec<u8>,
}

/// The recordings of one instance.
pub struct Recorder {
    instance: String,
    recording: AtomicBool,
    inner: Mutex<Inner>,
}

impl Recorder {
    pub fn new(instance: &str) -> Recorder {
        Recorder {
            instance: instance.to_string(),
            recording: AtomicBool::new(false),
            inner: Mutex::new(Inner::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether anything records (one atomic load).
    pub fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Acquire)
    }

    /// Starts a recording of `screen` (called by the terminal thread, so
    /// no output falls between the screen and the first `o` event).
    pub fn start(&self, sink: RecordingSink, screen: &Snapshot) {
        let now = Instant::now();
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let header = json!({
            "version": 2,
            "width": screen.cols,
            "height": screen.rows,
            "timestamp": timestamp,
            "title": self.instance,
            "env": {"TERM": "xterm-256color"},
            "tickloop": {"instance": self.instance, "markers": "tickloop {\"dir\",\"msg\"}"},
        });
        let mut active = Active {
            sink,
            started: now,
            last: 0.0,
        };
        let mut line = header.to_string().into_bytes();
        line.push(b'\n');
        if !active.send(Event::Line(line)) {
            return;
        }
        let redraw = json_string(&redraw(screen));
        if !active.event(now, "o", &redraw) {
            return;
        }
        let mut inner = self.lock();
        inner.active.push(active);
        self.recording.store(true, Ordering::Release);
    }

    fn each(&self, inner: &mut Inner, at: Instant, code: &'static str, data_json: &str) {
        inner.active.retain_mut(|a| a.event(at, code, data_json));
        if inner.active.is_empty() {
            self.recording.store(false, Ordering::Release);
        }
    }

    /// PTY output read at `at` (terminal thread).
    pub fn output(&self, bytes: &[u8], at: Instant) {
        if !self.is_recording() {
            return;
        }
        let mut inner = self.lock();
        inner.active.retain_mut(|a| {
            let t = a.time(at);
            a.send(Event::Output(t, bytes.to_vec()))
        });
        if inner.active.is_empty() {
            self.recording.store(false, Ordering::Release);
        }
    }

    /// The terminal's new size.
    pub fn resize(&self, cols: u16, rows: u16) {
        if !self.is_recording() {
            return;
        }
        let mut inner = self.lock();
        let data = json_string(&format!("{cols}x{rows}"));
        self.each(&mut inner, Instant::now(), "r", &data);
    }

    /// Bytes written to the Tick's stdin (whole lines).
    pub fn to_tick(&self, bytes: &[u8]) {
        if !self.is_recording() {
            return;
        }
        let mut inner = self.lock();
        let now = Instant::now();
        for line in bytes.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            let data = marker("to_tick", line);
            self.each(&mut inner, now, "m", &data);
        }
    }

    /// Bytes read from the Tick's stdout (any chunking).
    pub fn from_tick(&self, bytes: &[u8]) {
        if !self.is_recording() {
            return;
        }
        let mut inner = self.lock();
        let now = Instant::now();
        inner.stdout_partial.extend_from_slice(bytes);
        while let Some(end) = inner.stdout_partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = inner.stdout_partial.drain(..=end).collect();
            let data = marker("from_tick", &line[..line.len() - 1]);
            self.each(&mut inner, now, "m", &data);
        }
    }

    /// Ends every recording with an `end` marker saying why.
    pub fn end(&self, reason: &str) {
        let mut inner = self.lock();
        if !inner.active.is_empty() {
            let data = json_string(&format!(
                "{MARKER_PREFIX}{}",
                json!({"dir": "end", "msg": {"reason": reason}})
            ));
            self.each(&mut inner, Instant::now(), "m", &data);
        }
        inner.active.clear();
        self.recording.store(false, Ordering::Release);
    }
}

/// A marker's data: the prefix and `{"dir", "msg"}`, `msg` the line's JSON
/// (or the line as a string when it is not JSON).
fn marker(dir: &str, line: &[u8]) -> String {
    let msg: Value = serde_json::from_slice(line)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(line).into_owned()));
    json_string(&format!(
        "{MARKER_PREFIX}{}",
        json!({"dir": dir, "msg": msg})
    ))
}

fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".to_string())
}

/// Decodes `bytes` after `carry` as UTF-8: invalid bytes become U+FFFD, an
/// incomplete sequence at the end waits in `carry` for the next chunk.
pub fn decode_utf8_stream(carry: &mut Vec<u8>, bytes: &[u8]) -> String {
    let mut input = std::mem::take(carry);
    input.extend_from_slice(bytes);
    let mut out = String::with_capacity(input.len());
    let mut rest: &[u8] = &input;
    loop {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.push_str(s);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // SAFETY-free: `good` was just validated.
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                match e.error_len() {
                    Some(n) => {
                        out.push('\u{fffd}');
                        rest = &bad[n..];
                    }
                    None => {
                        carry.extend_from_slice(bad);
                        break;
                    }
                }
            }
        }
    }
    out
}

/// Output that draws `screen` on a blank terminal of its size: the
/// alternate screen if it is on, each row's runs with their attributes,
/// then the cursor where it is and as visible as it is.
pub fn redraw(screen: &Snapshot) -> String {
    let mut out = String::new();
    if screen.alt_screen {
        out.push_str("\x1b[?1049h");
    }
    out.push_str("\x1b[0m\x1b[H\x1b[2J");
    for (y, line) in screen.lines.iter().enumerate() {
        if line.runs.is_empty() {
            continue;
        }
        out.push_str(&format!("\x1b[{};1H", y + 1));
        for run in &line.runs {
            out.push_str("\x1b[0");
            sgr(&mut out, &run.attrs);
            out.push('m');
            out.push_str(&run.text);
        }
        out.push_str("\x1b[0m");
    }
    out.push_str(&format!(
        "\x1b[{};{}H",
        screen.cursor.y + 1,
        screen.cursor.x + 1
    ));
    out.push_str(if screen.cursor.visible {
        "\x1b[?25h"
    } else {
        "\x1b[?25l"
    });
    out
}

fn color(out: &mut String, c: &Color, base: u8) {
    match c {
        Color::Index(i) => out.push_str(&format!(";{base};5;{i}")),
        Color::Rgb(r, g, b) => out.push_str(&format!(";{base};2;{r};{g};{b}")),
    }
}

fn sgr(out: &mut String, a: &Attrs) {
    for (on, code) in [
        (a.bold, "1"),
        (a.dim, "2"),
        (a.italic, "3"),
        (a.blink, "5"),
        (a.reverse, "7"),
        (a.invisible, "8"),
        (a.strikethrough, "9"),
        (a.overline, "53"),
    ] {
        if on {
            out.push(';');
            out.push_str(code);
        }
    }
    match a.underline {
        Underline::None => {}
        Underline::Double => out.push_str(";21"),
        _ => out.push_str(";4"),
    }
    if let Some(fg) = &a.fg {
        color(out, fg, 38);
    }
    if let Some(bg) = &a.bg {
        color(out, bg, 48);
    }
}

/// Writes a recording's lines to `file` on a thread of its own, flushing
/// whenever it has caught up; ends when the recording does.
/// The most bytes of lines written to a recording's file at once.
const BATCH: usize = 1 << 20;

pub fn spawn_file_writer(
    mut stream: RecordingStream,
    file: std::fs::File,
    path: &std::path::Path,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let mut out = tickloop_client::whole_file::LineFile::new(path, file)?;
    let path = path.to_path_buf();
    std::thread::Builder::new()
        .name("recorder".into())
        .spawn(move || {
            while let Some(line) = stream.blocking_recv() {
                let mut batch = line;
                while batch.len() < BATCH {
                    let Some(more) = stream.try_recv() else { break };
                    batch.extend_from_slice(&more);
                }
                if let Err(e) = out.append(&batch) {
                    // The disk is full or gone: the file keeps its whole
                    // lines (none, then it goes), the Tick goes on; the
                    // sender sees the recording stop.
                    let kept = if out.is_empty() {
                        let _ = std::fs::remove_file(&path);
                        "nothing was recorded, and the file was removed".to_string()
                    } else {
                        format!("{} holds what was recorded until then", path.display())
                    };
                    eprintln!("launcher: the recording stopped: {e}; {kept}");
                    return;
                }
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_split_across_chunks_is_kept_whole_and_invalid_bytes_replaced() {
        let mut carry = Vec::new();
        let euro = "€".as_bytes();
        assert_eq!(decode_utf8_stream(&mut carry, &[b'a', euro[0]]), "a");
        assert_eq!(carry, &euro[..1]);
        assert_eq!(decode_utf8_stream(&mut carry, &euro[1..]), "€");
        assert!(carry.is_empty());
        assert_eq!(decode_utf8_stream(&mut carry, b"x\xffy"), "x\u{fffd}y");
    }

    #[tokio::test]
    async fn events_are_timed_in_order_and_protocol_lines_become_markers() {
        let rec = Recorder::new("hosted:t");
        let (sink, mut stream) = recording();
        let screen = Snapshot::blank(80, 24);
        rec.start(sink, &screen);
        rec.output("héllo".as_bytes(), Instant::now());
        rec.to_tick(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tick/read\"}\n");
        rec.from_tick(b"{\"jsonrpc\":\"2.0\",\"id\":1,");
        rec.from_tick(b"\"result\":{}}\nnot json\n");
        rec.resize(100, 40);
        rec.end("closed");
        let mut lines = Vec::new();
        while let Some(line) = stream.recv().await {
            lines.push(String::from_utf8(line).unwrap());
        }
        let header: Value = serde_json::from_str(&lines[0]).unwrap();
        assert_eq!(
            (header["version"].clone(), header["width"].clone()),
            (json!(2), json!(80))
        );
        let events: Vec<Value> = lines[1..]
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let codes: Vec<&str> = events.iter().map(|e| e[1].as_str().unwrap()).collect();
        assert_eq!(codes, ["o", "o", "m", "m", "m", "r", "m"]);
        assert_eq!(events[1][2], "héllo");
        let times: Vec<f64> = events.iter().map(|e| e[0].as_f64().unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        let marker = |i: usize| -> Value {
            let data = events[i][2].as_str().unwrap();
            serde_json::from_str(data.strip_prefix(MARKER_PREFIX).unwrap()).unwrap()
        };
        assert_eq!(marker(2)["dir"], "to_tick");
        assert_eq!(marker(2)["msg"]["method"], "tick/read");
        assert_eq!(marker(3)["dir"], "from_tick");
        assert_eq!(marker(3)["msg"]["id"], 1);
        assert_eq!(marker(4)["msg"], "not json");
        assert_eq!(events[5][2], "100x40");
        assert_eq!(marker(6)["dir"], "end");
        assert!(!rec.is_recording());
    }
}
