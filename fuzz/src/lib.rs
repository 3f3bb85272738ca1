//! tickloop-fuzz: every border where Tickloop reads bytes someone else
//! wrote, as one function taking any bytes, which panics when Tickloop
//! breaks a rule there (and, of course, when Tickloop itself panics):
//!
//! * [`tick_stdout`] — a Tick's stdout into the protocol session core;
//! * [`attach_lines`] — the attach protocol, both ways: a launcher's lines
//!   into a view (decoded, applied, drawn) and a view's lines into the
//!   launcher's keeper;
//! * [`pty_bytes`] — a program's terminal output into the screen keeper
//!   (the OSC limiter and the emulator), with resizes;
//! * [`config_toml`] — the person's `config.toml`;
//! * [`mcp_lines`] — an agent's JSON-RPC lines into `tickloop mcp`'s
//!   transport;
//! * [`herdr_answer`] — a line Herdr's socket answers.
//!
//! `cargo test -p tickloop-fuzz` runs each with proptest for a bounded
//! number of cases and replays the seed corpus (`fuzz/corpus/BORDER/`);
//! `fuzz/libfuzzer` runs them under libFuzzer for long runs
//! (`fuzz/README.md`).

use std::time::{Duration, Instant};
use tickloop_proto::attach::{Snapshot, ToView, ViewEvent};
use tickloop_proto::core::{Action, Limits, Session, SessionRequest};
use tickloop_proto::wire::CallRequest;

/// A border: the name of its corpus folder and libFuzzer target, and the
/// function that takes its bytes.
pub type Border = (&'static str, fn(&[u8]));

/// The borders, by the name of their corpus folder and libFuzzer target.
pub const BORDERS: &[Border] = &[
    ("tick_stdout", tick_stdout),
    ("attach_lines", attach_lines),
    ("pty_bytes", pty_bytes),
    ("config_toml", config_toml),
    ("mcp_lines", mcp_lines),
    ("herdr_answer", herdr_answer),
];

/// A Tick's stdout, any bytes: `data[0]` is the size of the chunks it
/// arrives in (1-256 bytes), `data[1]` which chunks a client request
/// follows (bit i: after chunk i, a `read` when i is even, a `call` when
/// odd), the rest is the stdout; 50 ms pass per chunk, then stdout ends,
/// the Tick exits and two minutes pass. The session never panics, writes
/// only whole JSON-RPC lines, ends at most once, and has answered every
/// client request by the end.
pub fn tick_stdout(data: &[u8]) {
    let (chunk, plan, stdout) = match data {
        [chunk, plan, rest @ ..] => (usize::from(*chunk) + 1, *plan, rest),
        _ => (64, 0, data),
    };
    let mut now = Instant::now();
    let mut session = Session::new(Limits::default(), now);
    let mut seen = Seen::default();
    seen.drain(&mut session);
    for (i, piece) in stdout.chunks(chunk).enumerate() {
        session.on_stdout(piece, now);
        seen.drain(&mut session);
        if i < 8 && plan & (1 << i) != 0 {
            let request = if i % 2 == 0 {
                SessionRequest::Read
            } else {
                SessionRequest::Call(CallRequest {
                    tool: "increment".into(),
                    args: serde_json::json!({"amount": 1}),
                    revision: "1".into(),
                })
            };
            session.request(seen.asked, request, now);
            seen.asked += 1;
            seen.drain(&mut session);
        }
        now += Duration::from_millis(50);
        session.on_time(now);
        seen.drain(&mut session);
    }
    session.on_stdout_eof(now);
    session.on_exit("exited with status 0", now);
    now += Duration::from_secs(120);
    session.on_time(now);
    seen.drain(&mut session);
    assert!(seen.ends <= 1, "the session ended {} times", seen.ends);
    assert_eq!(seen.ends, 1, "an exited Tick's session ends");
    assert_eq!(
        seen.replies, seen.asked,
        "every client request is answered exactly once"
    );
}

/// What a session did, as [`tick_stdout`] counts it.
#[derive(Default)]
struct Seen {
    asked: u64,
    replies: u64,
    ends: u32,
}

impl Seen {
    fn drain(&mut self, session: &mut Session) {
        while let Some(action) = session.poll_action() {
            match action {
                Action::Write(bytes) => {
                    assert!(bytes.ends_with(b"\n"), "a written line without its newline");
                    let line: serde_json::Value =
                        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                            panic!("the session wrote a line that is not JSON: {e}")
                        });
                    assert_eq!(line["jsonrpc"], "2.0", "{line}");
                    assert!(line["method"].is_string(), "{line}");
                }
                Action::Reply { .. } => self.replies += 1,
                Action::End(_) => self.ends += 1,
                _ => {}
            }
        }
    }
}

/// The attach protocol, any lines: each line is decoded as what a
/// launcher sends a view (a snapshot replaces the view's model, rows are
/// applied to it, and the model is drawn at a size taken from the line's
/// length), and as what a view sends a launcher (its input, encoded by the
/// keeper for the program). A line that does not decode is a protocol
/// error, never a panic; a model that is drawn keeps its shape.
pub fn attach_lines(data: &[u8]) {
    let mut model = Snapshot::blank(80, 24);
    let mut keeper = launcher::emulator::Emulator::new(24, 80, 100, Box::new(std::io::sink()));
    for line in data.split(|b| *b == b'\n') {
        if let Ok(message) = serde_json::from_slice::<ToView>(line) {
            match message {
                ToView::Snapshot(snapshot) if snapshot.check().is_ok() => model = snapshot,
                ToView::Rows(rows) | ToView::Drawn { rows, .. } => {
                    let before = model.clone();
                    if model.apply(rows).is_err() {
                        assert_eq!(model, before, "a refused frame changed the model");
                    }
                }
                _ => {}
            }
            let cols = 1 + (line.len() % 200) as u16;
            let rows = 1 + (line.len() % 60) as u16;
            let frame = view_monitor::render::compose(&model, cols, rows, "", false);
            drop(frame);
        }
        if let Ok(event) = serde_json::from_slice::<ViewEvent>(line) {
            let _ = keeper.view_input(&event);
        }
    }
}

/// A program's terminal output, any bytes: `data[0]` and `data[1]` size
/// the screen and its history; then each chunk starts with a byte saying
/// how long it is (its top bit set: a resize instead, to sizes taken from
/// the next two bytes). The output goes through the image filter as the
/// keeper's does (sixel and kitty images kept, kitty's answers written).
/// The screen always has its size, its cursor on it, and no more history
/// than its limit; the images kept stay under their bound, each with its
/// top-left cell on the screen or in the history held.
pub fn pty_bytes(data: &[u8]) {
    let (cols, rows, history, mut rest) = match data {
        [a, b, rest @ ..] => (
            2 + usize::from(*a % 200),
            1 + usize::from(*b % 60),
            usize::from(*b),
            rest,
        ),
        _ => (80, 24, 100, data),
    };
    let mut emulator =
        launcher::emulator::Emulator::new(rows, cols, history, Box::new(std::io::sink()));
    const IMAGE_BOUND: u64 = 64 * 1024;
    let mut images = launcher::images::Images::new(IMAGE_BOUND);
    let (mut cols, mut rows) = (cols, rows);
    while let Some((&head, tail)) = rest.split_first() {
        if head & 0x80 != 0 {
            let (c, r) = match tail {
                [c, r, ..] => (2 + usize::from(*c % 220), 1 + usize::from(*r % 70)),
                _ => (cols, rows),
            };
            emulator.resize(r, c);
            images.kept.refresh(&emulator, true);
            (cols, rows) = (c, r);
            rest = tail.get(2..).unwrap_or_default();
        } else {
            let len = usize::from(head).min(tail.len());
            images.feed(&tail[..len], &mut emulator, &mut std::io::sink());
            rest = &tail[len..];
        }
        images.kept.refresh(&emulator, false);
        assert!(images.kept.bytes() <= IMAGE_BOUND);
        for placed in images.kept.placements(emulator.alt_screen()) {
            assert!(placed.row < rows as i64 && placed.row >= -(emulator.history_len() as i64));
            assert!(usize::from(placed.col) < cols);
        }
        let snapshot = emulator.snapshot();
        assert_eq!(usize::from(snapshot.rows), rows);
        assert_eq!(usize::from(snapshot.cols), cols);
        assert_eq!(snapshot.lines.len(), rows);
        assert!(usize::from(snapshot.cursor.y) < rows && usize::from(snapshot.cursor.x) <= cols);
        assert!(emulator.history_len() <= history);
    }
    let _ = emulator.text(history);
    let _ = emulator.snapshot_scrolled(history / 2);
}

/// The person's `config.toml`, any text: it parses or is refused with a
/// message; what parses is used as every command uses it.
pub fn config_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match tickloop_client::config::parse(&text) {
        Ok(config) => {
            let _ = config.ask_in_host();
            for owner in [
                tickloop_proto::wire::Owner::Person,
                tickloop_proto::wire::Owner::Agent,
            ] {
                let _ = config.agent_policy(owner, true);
                let _ = config.agent_policy(owner, false);
            }
            if let Some(key) = &config.detach_key {
                let _ = view_monitor::prefix::PrefixKey::parse(key);
            }
        }
        Err(message) => assert!(!message.is_empty(), "a refusal without a reason"),
    }
}

/// An agent's lines to `tickloop mcp`, any bytes: each whole line is a
/// message handed to the MCP server or answered at once with a JSON-RPC
/// error (`-32700` not JSON, `-32600` not a message) whose id is null, a
/// string or an integer; nothing else is written.
pub fn mcp_lines(data: &[u8]) {
    use tickloop_mcp::transport::Gate;
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let written = runtime.block_on(async {
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read_back, write_back) = tokio::io::split(ours);
        let mut gate = Gate::new(std::io::Cursor::new(data.to_vec()), write_back);
        while rmcp_receive(&mut gate).await {}
        drop(gate);
        drop(theirs);
        let mut out = Vec::new();
        let mut read_back = read_back;
        let _ = tokio::time::timeout(
            Duration::from_secs(5),
            tokio::io::AsyncReadExt::read_to_end(&mut read_back, &mut out),
        )
        .await;
        out
    });
    for line in written.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let reply: serde_json::Value = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("the transport wrote a line that is not JSON: {e}"));
        assert_eq!(reply["jsonrpc"], "2.0", "{reply}");
        let code = reply["error"]["code"].as_i64();
        assert!(matches!(code, Some(-32700 | -32600)), "{reply}");
        let id = &reply["id"];
        assert!(
            id.is_null() || id.is_string() || id.is_i64() || id.is_u64(),
            "{reply}"
        );
    }
}

/// The next message of the transport; `false` at its end.
async fn rmcp_receive(gate: &mut tickloop_mcp::transport::Gate) -> bool {
    use rmcp::transport::Transport as _;
    gate.receive().await.is_some()
}

/// A line Herdr's socket answers, any text: a result or an error with a
/// message a person can read; a result is read as an opened pane and as a
/// pane's place.
pub fn herdr_answer(data: &[u8]) {
    use view_herdr::herdr::{opened_pane, parse_error, read_answer, PanePlace};
    let text = String::from_utf8_lossy(data);
    match read_answer(&text) {
        Ok(result) => {
            let _ = opened_pane(&result);
            let _ = PanePlace::from_info(&result);
        }
        Err(error) => assert!(!error.user_message().is_empty()),
    }
    if let Some(error) = parse_error(&text) {
        assert!(!error.user_message().is_empty());
    }
}
