//! Snapshot tests of whole Monitor screens: the list with its preview at
//! 80x24, 120x30 and 200x50, a filtered narrow list, shells' rows with what
//! they reported escaped, and the overlay of a Tick that ended while shown. Each screen is rendered to text (the cells)
//! followed by its colours (runs of cells per row with their attributes) and
//! compared with `view-monitor/tests/snapshots/NAME.txt`. The clock is fixed,
//! so the ages are too.
//!
//! A change that alters a screen on purpose: run
//! `TICKLOOP_UPDATE_SNAPSHOTS=1 cargo test -p view-monitor snapshots`, read
//! the diff of the `.txt` files, and commit them.

use super::overlay::{self, Geometry, Overlay, Stop};
use super::row::Row;
use super::table::{self, Filter, ListView, Preview};
use serde_json::json;
use std::fmt::Write as _;
use std::path::PathBuf;
use termwiz::cell::CellAttributes;
use termwiz::surface::Surface;
use tickloop_proto::attach::{Attrs, Line, Run, Snapshot};
use tickloop_proto::wire::{ScreenCursor, ScreenReply};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

const UPDATE_ENV: &str = "TICKLOOP_UPDATE_SNAPSHOTS";

fn now() -> OffsetDateTime {
    OffsetDateTime::parse("2026-11-29T21:00:00Z", &Rfc3339).expect("a fixed time")
}

/// Six instances of every sort: a busy Tick, one waiting for approval, a
/// bash running vim (its title from the program), a zsh whose last command
/// failed in a deep directory, a plain program closed, a Tick that failed.
fn rows() -> Vec<Row> {
    Row::all_from_json(&json!([
        {"id": "hosted:counter", "kind": "example.counter", "title": "Counter",
         "state": "running", "ended": null, "seq": 42, "views": 1, "calls_in_flight": 2,
         "last_update_at": "2026-11-29T20:59:48Z", "last_output_at": "2026-11-29T20:59:58Z",
         "pid": 4242, "argv": ["/usr/bin/python3", "counter.py"]},
        {"id": "hosted:todo-list-for-the-week", "kind": "example.todo", "title": "Todo: 3 open",
         "state": "running", "ended": null, "seq": 7, "views": 0, "calls_in_flight": 0, "approvals_waiting": 1,
         "last_update_at": "2026-11-29T20:12:00Z", "last_output_at": "2026-11-29T20:12:00Z",
         "pid": 4300, "argv": ["/usr/bin/python3", "todo.py"]},
        {"id": "shell:bash", "kind": null, "title": "vim notes.md", "state": "running",
         "ended": null, "seq": null, "views": 0, "calls_in_flight": 0,
         "last_update_at": "2026-11-29T20:51:10Z", "last_output_at": "2026-11-29T20:59:59Z",
         "pid": 4400, "argv": ["bash"],
         "shell": {"shell": "bash", "kind": "injected", "active": true},
         "shell_state": {"seq": 11, "cwd": "/home/ada/notes", "at_prompt": false,
            "running": {"n": 6, "command": "vim notes.md", "started": "2026-11-29T20:51:10Z"},
            "last": {"n": 5, "command": "ls", "exit": 0, "started": "2026-11-29T20:51:02Z",
                "ended": "2026-11-29T20:51:02.012Z", "duration_ms": 12},
            "commands_total": 6}},
        {"id": "shell:build", "kind": null, "title": "zsh", "state": "running",
         "ended": null, "seq": null, "views": 1, "calls_in_flight": 0,
         "last_update_at": "2026-11-29T20:58:30Z", "last_output_at": "2026-11-29T20:58:30Z",
         "pid": 4450, "argv": ["zsh", "-l"],
         "shell": {"shell": "zsh", "kind": "injected", "active": true},
         "shell_state": {"seq": 4, "cwd": "/home/ada/src/tickloop/view-monitor/src/monitor",
            "at_prompt": true, "running": null,
            "last": {"n": 2, "command": "cargo test --workspace --all-targets -- --nocapture",
                "exit": 101, "started": "2026-11-29T20:57:48.800Z",
                "ended": "2026-11-29T20:58:30Z", "duration_ms": 41200},
            "commands_total": 2}},
        {"id": "shell:logs", "kind": null, "title": "tail", "state": "ended",
         "ended": {"reason": "closed by the user", "kind": "closed", "at": "x"},
         "seq": null, "views": 0, "calls_in_flight": 0, "last_update_at": null,
         "last_output_at": "2026-11-29T18:00:00Z", "pid": 4500, "argv": ["tail", "-f", "log"]},
        {"id": "hosted:weather", "kind": "example.weather", "title": "Weather",
         "state": "ended", "ended": {"reason": "the Tick sent a malformed tick/update: seq went backwards",
         "kind": "violation", "at": "x"}, "seq": 3, "views": 0, "calls_in_flight": 0,
         "last_update_at": "2026-11-28T09:00:00Z", "last_output_at": null,
         "pid": 4600, "argv": ["python3", "weather.py"]},
    ]))
}

/// The selected shell's screen, as `tickloop screen` gives it.
fn preview() -> Preview {
    let mut lines: Vec<String> = (1..=28)
        .map(|i| {
            format!(
                "{i:>3} line {i} of notes.md — the quick brown fox jumps over the lazy dog {}",
                "·".repeat(i % 7)
            )
        })
        .collect();
    lines
        .push("-- INSERT --                                              29,14         All".into());
    Preview {
        id: "shell:bash".into(),
        screen: ScreenReply {
            rows: 30,
            cols: 120,
            cursor: ScreenCursor { row: 28, col: 14 },
            lines,
            history: Vec::new(),
            history_len: 0,
            history_limit: 2000,
            memory_bytes: 0,
            images: Vec::new(),
            image_bytes: 0,
            ended: false,
        },
    }
}

/// The cells as text, then each row's runs of non-default attributes.
fn render(s: &Surface) -> String {
    let mut out = s.screen_chars_to_string();
    out.push_str("--- attributes: row: from-to fg/bg [bold] [reverse] ---\n");
    for (y, line) in s.screen_lines().iter().enumerate() {
        let mut runs: Vec<(usize, usize, String)> = Vec::new();
        for (x, cell) in line.visible_cells().map(|c| (c.cell_index(), c)) {
            let a = describe(cell.attrs());
            if a.is_empty() {
                continue;
            }
            match runs.last_mut() {
                Some((_, end, d)) if *end + 1 == x && *d == a => *end = x,
                _ => runs.push((x, x, a)),
            }
        }
        if runs.is_empty() {
            continue;
        }
        let _ = write!(out, "{y:>2}:");
        for (from, to, d) in runs {
            let _ = write!(out, " {from}-{to} {d};");
        }
        out.push('\n');
    }
    out
}

fn describe(a: &CellAttributes) -> String {
    let mut d = Vec::new();
    if a.foreground() != Default::default() || a.background() != Default::default() {
        d.push(format!("{:?}/{:?}", a.foreground(), a.background()));
    }
    if a.intensity() == termwiz::cell::Intensity::Bold {
        d.push("bold".into());
    }
    if a.intensity() == termwiz::cell::Intensity::Half {
        d.push("dim".into());
    }
    if a.reverse() {
        d.push("reverse".into());
    }
    d.join(" ")
}

fn check(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/snapshots")
        .join(format!("{name}.txt"));
    if std::env::var_os(UPDATE_ENV).is_some() {
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("the snapshot dir");
        std::fs::write(&path, actual).expect("writing the snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no snapshot {} ({e}); {UPDATE_ENV}=1 writes it",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(e, a)| e != a)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from {} from line {}:\n--- expected\n{}\n--- actual\n{}\n\
             ({UPDATE_ENV}=1 rewrites it when the change is meant)",
            path.display(),
            first + 1,
            expected
                .lines()
                .skip(first)
                .take(5)
                .collect::<Vec<_>>()
                .join("\n"),
            actual
                .lines()
                .skip(first)
                .take(5)
                .collect::<Vec<_>>()
                .join("\n"),
        );
    }
}

fn list_screen(cols: usize, rows_n: usize, filter: Option<Filter>, with_preview: bool) -> Surface {
    let all = rows();
    let shown: Vec<Row> = match filter {
        Some(f) => all.iter().filter(|r| r.matches(f.text)).cloned().collect(),
        None => all.clone(),
    };
    let p = preview();
    let selected = shown.iter().position(|r| r.id == "shell:bash").unwrap_or(0);
    let view = ListView {
        rows: &shown,
        total: all.len(),
        running: all.iter().filter(|r| r.ended.is_none()).count(),
        selected,
        top: 0,
        footer: super::LIST_KEYS,
        footer_alert: false,
        filter,
        preview: with_preview.then_some(Some(&p)),
        now: now(),
    };
    table::draw(&view, cols, rows_n)
}

#[test]
fn list_with_preview_at_80x24() {
    check("list-80x24", &render(&list_screen(80, 24, None, true)));
}

#[test]
fn list_with_preview_at_120x30() {
    check("list-120x30", &render(&list_screen(120, 30, None, true)));
}

#[test]
fn list_with_preview_at_200x50() {
    check("list-200x50", &render(&list_screen(200, 50, None, true)));
}

#[test]
fn list_without_preview_at_120x30() {
    check(
        "list-nopreview-120x30",
        &render(&list_screen(120, 30, None, false)),
    );
}

#[test]
fn narrow_list_filtered_while_typing_at_50x16() {
    let f = Filter {
        text: "sh",
        editing: true,
    };
    check(
        "list-filter-50x16",
        &render(&list_screen(50, 16, Some(f), true)),
    );
}

/// Shells only, as a person opens them: a bash whose directory and last
/// command hold what a program could hide (a newline, a right-to-left
/// override), shown escaped; a fish running a command; a REPL without
/// integration (`plain`). Their rows at 100 columns, the bash selected (its
/// whole command on the detail line).
#[test]
fn shell_rows_escaped_at_100x12() {
    let rows = Row::all_from_json(&json!([
        {"id": "shell:odd", "title": "bash", "state": "running", "views": 0,
         "last_update_at": "2026-11-29T20:59:50Z", "last_output_at": "2026-11-29T20:59:50Z",
         "pid": 5100, "argv": ["bash", "-i"],
         "shell": {"shell": "bash", "kind": "injected", "active": true},
         "shell_state": {"seq": 9, "cwd": "/tmp/x\u{202e}gpj.sh", "at_prompt": true,
            "running": null, "commands_total": 4,
            "last": {"n": 4, "command": "for f in *; do\n  echo $f\ndone", "exit": 0,
                "started": "2026-11-29T20:59:49.500Z", "ended": "2026-11-29T20:59:50Z",
                "duration_ms": 500}}},
        {"id": "shell:fish", "title": "fish", "state": "running", "views": 0,
         "last_update_at": "2026-11-29T20:59:00Z", "last_output_at": "2026-11-29T20:59:58Z",
         "pid": 5200, "argv": ["fish", "-l"],
         "shell": {"shell": "fish", "kind": "injected", "active": true},
         "shell_state": {"seq": 3, "cwd": "/srv/www", "at_prompt": false,
            "running": {"n": 2, "command": "rsync -a build/ web:/srv/www/",
                "started": "2026-11-29T20:59:00Z"},
            "last": null, "commands_total": 2}},
        {"id": "shell:python3", "title": "python3", "state": "running", "views": 0,
         "last_output_at": "2026-11-29T20:40:00Z", "pid": 5300, "argv": ["python3"],
         "no_integration": "python3 is not a shell Tickloop integrates"},
    ]));
    let view = ListView {
        rows: &rows,
        total: rows.len(),
        running: rows.len(),
        selected: 0,
        top: 0,
        footer: super::LIST_KEYS,
        footer_alert: false,
        filter: None,
        preview: None,
        now: now(),
    };
    check("list-shells-100x12", &render(&table::draw(&view, 100, 12)));
}

/// The overlay of a Tick that ended while shown: its last output stays,
/// with why it ended over it.
#[test]
fn overlay_of_an_ended_tick_at_80x24() {
    let mut snap = Snapshot::blank(74, 20);
    let text = |t: &str| Line {
        runs: vec![Run {
            text: t.to_string(),
            attrs: Attrs::default(),
        }],
    };
    snap.lines[0] = text("$ ./deploy.sh");
    snap.lines[1] = text("uploading… done");
    snap.lines[2] = text("last-words-42");
    let mut screen = list_screen(80, 24, None, false);
    let mut o = Overlay::detached(
        "shell:deploy",
        Some(snap),
        Some(Stop::Ended("exited with status 3".into())),
    );
    overlay::draw(&mut screen, &mut o, &Geometry::for_terminal(80, 24));
    check("overlay-ended-80x24", &render(&screen));
}

/// The activity an agent left on a Tick, as `tickloop activity --json`
/// gives it: calls of every outcome, a merged burst of updates, a view and
/// the Loop subscribing.
fn activity_view() -> crate::activity::ActivityView {
    let record: tickloop_proto::wire::ActivityRecord = serde_json::from_value(json!({
        "instance": "hosted:counter", "last": 9, "subscribers": 1,
        "tools": [
            {"name": "increment", "mutates": true, "description": "Add an integer to the counter."},
            {"name": "history", "mutates": false, "description": "Read the last 256 changes."},
            {"name": "reset", "mutates": true, "description": "Back to zero."}
        ],
        "entries": [
            {"n": 1, "at": "2026-11-29T20:58:01.100Z", "type": "request", "client": "mcp",
             "method": "tick/describe", "outcome": "ok", "duration_ms": 2},
            {"n": 2, "at": "2026-11-29T20:58:30.000Z", "type": "view", "attached": true, "views": 1},
            {"n": 3, "at": "2026-11-29T20:59:02.250Z", "type": "request", "client": "mcp",
             "method": "tick/call", "tool": "increment", "args": {"amount": 2}, "revision": "1",
             "outcome": "executed", "result": {"value": 42}, "duration_ms": 3},
            {"n": 4, "at": "2026-11-29T20:59:02.260Z", "type": "update", "seq": 42, "count": 1,
             "bytes": 212, "budget": 16384},
            {"n": 5, "at": "2026-11-29T20:59:10.000Z", "type": "request", "client": "cli",
             "method": "tick/call", "tool": "increment", "args": {"amount": "two"}, "revision": "1",
             "outcome": "not_executed", "error_code": -32602,
             "error": "amount: \"two\" is not of type \"integer\"", "duration_ms": 0},
            {"n": 6, "at": "2026-11-29T20:59:20.000Z", "type": "subscription", "client": "loop",
             "started": true},
            {"n": 7, "at": "2026-11-29T20:59:31.000Z", "type": "request", "client": "loop",
             "method": "tick/read", "outcome": "ok", "result": {"seq": 42}, "duration_ms": 1},
            {"n": 8, "at": "2026-11-29T20:59:40.500Z", "type": "request", "client": "mcp",
             "method": "tick/call", "tool": "reset", "args": {}, "revision": "1",
             "outcome": "unknown", "error": "the Tick exited before answering", "duration_ms": 5012},
            {"n": 9, "at": "2026-11-29T20:59:48.000Z", "type": "update", "seq": 57, "count": 15,
             "bytes": 3100, "budget": 16384}
        ]
    }))
    .expect("a record");
    let mut view = crate::activity::ActivityView::new("hosted:counter");
    view.offset = Some(time::UtcOffset::UTC);
    view.update(crate::activity::Fetched::Ok {
        entry: Some(
            json!({"id": "hosted:counter", "title": "Counter", "kind": "example.counter",
            "revision": "1", "seq": 57, "last_update_at": "2026-11-29T20:59:48Z", "views": 1,
            "state": "running"}),
        ),
        record,
    });
    view
}

/// A Tick's screen as a view shows it, the overlay over it.
fn tick_screen(cols: usize, rows_n: usize) -> Surface {
    let mut screen = Surface::new(cols, rows_n);
    screen.add_change(termwiz::surface::Change::Text(
        "Counter  (example.counter)\r\n\r\nvalue: 57\r\nseq: 57  revision: 1\r\n\r\nkeys: + increment   - decrement"
            .into(),
    ));
    screen
}

#[test]
fn activity_over_a_tick_at_80x24_and_120x30() {
    for (cols, rows_n) in [(80, 24), (120, 30)] {
        let mut screen = tick_screen(cols, rows_n);
        let view = activity_view();
        crate::activity::draw(&mut screen, &view, now(), "ctrl+\\ m closes", false);
        check(&format!("activity-{cols}x{rows_n}"), &render(&screen));
    }
}

#[test]
fn activity_request_shown_whole_at_80x24() {
    let mut view = activity_view();
    // The unknown outcome: second newest.
    view.selected = 1;
    view.opened = true;
    let mut screen = tick_screen(80, 24);
    crate::activity::draw(&mut screen, &view, now(), "ctrl+\\ m closes", false);
    check("activity-whole-80x24", &render(&screen));
}

#[test]
fn activity_on_a_terminal_too_small_is_one_line() {
    let mut screen = tick_screen(30, 6);
    crate::activity::draw(&mut screen, &activity_view(), now(), "", false);
    let text = screen.screen_chars_to_string();
    let last = text.lines().last().unwrap_or("");
    assert!(last.starts_with("too small for the activity"), "{text}");
}
