//! A keystroke's echo is written to a waiting view by the launcher's
//! terminal thread itself (`launcher/src/terminal/echo.rs`), and the rest
//! of the frames by the view's task: end to end with a real launcher, a
//! program in raw mode that echoes each byte on a line of its own (so the
//! screen scrolls), and two views speaking the attach protocol, one typing
//! and one watching, which scrolls back and returns while the other types.
//! Each view's copy of the screen, made only of what it was sent, must be
//! the launcher's own screen at every echo and at the end.

mod common;

use common::{wait_for, Host};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use tickloop_proto::attach::{Snapshot, TermCaps, ToView, ViewHello};
use tickloop_proto::wire::{Hello, HelloReply, Role};

/// The program the echo benchmarks run (`benches/echo_program.py`): in raw
/// mode, it prints `READY`, then echoes every byte as `<b>` on a line.
fn echo_program() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/echo_program.py")
        .to_string_lossy()
        .into_owned()
}

const COLS: u16 = 60;
const ROWS: u16 = 10;

/// A view of one launcher, its copy of the screen made of the frames it
/// was sent.
struct View {
    writer: UnixStream,
    reader: BufReader<UnixStream>,
    screen: Option<Snapshot>,
}

impl View {
    fn attach(host: &Host, id: &str) -> View {
        let (kind, name) = tickloop_client::paths::parse_id(id).expect("an id");
        let socket = tickloop_client::paths::RuntimeDir::at(host.runtime())
            .instance_files(kind, name)
            .expect("instance files")
            .socket;
        let stream = UnixStream::connect(&socket).expect("connect to the launcher");
        stream
            .set_read_timeout(Some(common::WAIT))
            .expect("timeout");
        let mut view = View {
            writer: stream.try_clone().expect("clone"),
            reader: BufReader::new(stream),
            screen: None,
        };
        view.send(&serde_json::to_string(&Hello::new(Role::View)).expect("hello"));
        let mut line = String::new();
        view.reader.read_line(&mut line).expect("hello reply");
        let reply: HelloReply = serde_json::from_str(&line).expect("hello reply JSON");
        assert!(reply.refused.is_none(), "{line}");
        let hello = ViewHello {
            cols: COLS,
            rows: ROWS,
            term: TermCaps::default(),
            client: Some("echo_frames test".into()),
            tty: None,
        };
        view.send(&serde_json::to_string(&hello).expect("view hello"));
        view
    }

    fn send(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the launcher");
    }

    /// Applies frames until the screen's rows, as text, satisfy `done`.
    fn until(&mut self, what: &str, done: impl Fn(&[String]) -> bool) -> Vec<String> {
        self.until_screen(what, |screen| done(&rows_of(screen)))
    }

    /// Applies frames until the screen satisfies `done`; its rows.
    fn until_screen(&mut self, what: &str, done: impl Fn(&Snapshot) -> bool) -> Vec<String> {
        let mut line = String::new();
        loop {
            if let Some(screen) = &self.screen {
                if screen.cols == COLS && screen.rows == ROWS && done(screen) {
                    return rows_of(screen);
                }
            }
            line.clear();
            let n = self.reader.read_line(&mut line).unwrap_or_else(|e| {
                panic!("waiting for {what}: {e}; last screen {:?}", self.rows())
            });
            assert!(n > 0, "the launcher hung up waiting for {what}");
            match serde_json::from_str::<ToView>(&line) {
                Ok(ToView::Snapshot(s)) => self.screen = Some(s),
                Ok(ToView::Rows(rows)) => {
                    let screen = self.screen.as_mut().expect("rows come after a snapshot");
                    screen
                        .apply(rows)
                        .unwrap_or_else(|e| panic!("a frame that does not apply: {e:?}: {line}"));
                }
                Ok(_) => {}
                Err(e) => panic!("not a frame ({e}): {line}"),
            }
        }
    }

    fn rows(&self) -> Vec<String> {
        self.screen.as_ref().map(rows_of).unwrap_or_default()
    }
}

fn rows_of(screen: &Snapshot) -> Vec<String> {
    screen
        .lines
        .iter()
        .map(|l| l.text().trim_end().to_string())
        .collect()
}

fn last_line(rows: &[String]) -> Option<&String> {
    rows.iter().rev().find(|r| !r.is_empty())
}

/// Rows without the blank ones at the end (`screen` leaves them out).
fn trimmed(mut rows: Vec<String>) -> Vec<String> {
    while rows.last().is_some_and(String::is_empty) {
        rows.pop();
    }
    rows
}

/// The launcher's own screen, row by row (its blank last rows left out).
fn launcher_rows(host: &Host, id: &str) -> Vec<String> {
    let screen = host.ok(&["screen", id, "--json"]);
    let lines = screen["lines"].as_array().expect("lines");
    lines
        .iter()
        .map(|l| l.as_str().unwrap_or_default().trim_end().to_string())
        .collect()
}

#[test]
fn echoes_written_by_the_terminal_thread_keep_every_view_the_launchers_screen() {
    let host = Host::new();
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "echo",
        "--",
        "python3",
        &echo_program(),
    ]);
    let id = "shell:echo";
    host.wait_screen(id, "READY");
    let mut typist = View::attach(&host, id);
    let mut watcher = View::attach(&host, id);
    typist.until("the first screen", |rows| rows.iter().any(|r| r == "READY"));
    watcher.until("the first screen", |rows| rows.iter().any(|r| r == "READY"));

    let keys: Vec<char> = ('a'..='z').chain('0'..='9').collect();
    for (i, key) in keys.iter().enumerate() {
        if i == 15 {
            // The watcher, lent to the terminal thread for the last echo,
            // looks back into the history: it is sent the screen 3 lines
            // back though nothing changed on the live one...
            watcher.send(r#"{"event":"scroll","offset":3}"#);
            watcher.until_screen("the watcher scrolled back", |s| s.scroll.offset == 3);
        }
        typist.send(&format!(r#"{{"event":"key","key":{{"char":"{key}"}}}}"#));
        let echo = format!("<{key}>");
        // The echo is the typist's last line.
        typist.until(&echo, |rows| last_line(rows) == Some(&echo));
        if i == 25 {
            // ... and returns to the live screen while keys come.
            watcher.send(r#"{"event":"scroll","offset":0}"#);
        }
        if !(15..=25).contains(&i) {
            watcher.until(&echo, |rows| last_line(rows) == Some(&echo));
        }
    }
    let last = format!("<{}>", keys[keys.len() - 1]);
    let shown = wait_for("the launcher's screen with the last echo", || {
        let rows = launcher_rows(&host, id);
        rows.contains(&last).then_some(rows)
    });
    assert_eq!(
        trimmed(typist.rows()),
        shown,
        "the typist's copy of the screen"
    );
    let watched = watcher.until("the watcher's live screen", |rows| {
        trimmed(rows.to_vec()) == shown
    });
    assert_eq!(trimmed(watched), shown);
}
