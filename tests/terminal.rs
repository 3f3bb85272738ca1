//! The Tick's terminal (spec 3.1, 4.1; spec-gaps 3.1): the PTY is 120×30 at
//! start, the Tick's stderr lands on its screen, and `tickloop input` reaches
//! what the Tick reads from /dev/tty.

mod common;

use common::*;
use serde_json::json;

#[test]
fn tick_sees_a_120x30_terminal_at_start_and_its_stderr_appears_on_screen() {
    let host = Host::new();
    host.open_bad("sz", "stderr_and_size");
    let screen = host.wait_screen("sz", "stty size: 30 120");
    assert!(screen.contains("stderr hello from bad tick"), "{screen}");
    assert!(screen.contains("bad tick stderr_and_size"), "{screen}");
}

#[test]
fn input_reaches_the_tick_reading_its_terminal() {
    let host = Host::new();
    host.open_bad("echo", "echo_input");
    host.wait_screen("echo", "input:");
    let v = host.ok(&["input", "echo", "hello world"]);
    assert_eq!(v, json!({"ok":true,"bytes":11}));
    host.wait_screen("echo", "input: hello world");
    host.ok(&["input", "echo", "!"]);
    host.wait_screen("echo", "input: hello world!");
}

#[test]
fn counter_tui_redraws_with_the_value_changed_by_a_call() {
    let host = Host::new();
    host.open_counter("c");
    host.wait_screen("c", "size 120x30");
    host.ok(&[
        "call",
        "c",
        "increment",
        r#"{"amount":41}"#,
        "--revision",
        "1",
    ]);
    host.wait_screen("c", "value: 41");
}

#[test]
fn a_launcher_keeps_its_terminal_on_one_thread() {
    // Issue 40: one thread reads the PTY, applies the output to the screen,
    // answers snapshots and writes what may block; the other is the
    // runtime's (sockets, the protocol session). Typing and reading the
    // screen go through both.
    let host = Host::new();
    host.ok(&["open", "--shell", "--id", "t1", "--", "cat"]);
    host.ok(&["input", "shell:t1", "typed\r"]);
    host.wait_screen("shell:t1", "typed");
    let pid = host.entry("shell:t1").expect("listed")["launcher_pid"]
        .as_i64()
        .expect("a launcher pid");
    let threads: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("the launcher's threads")
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
        .map(|name| name.trim().to_string())
        .collect();
    assert!(
        threads.len() <= 2,
        "the launcher runs {} threads: {threads:?}",
        threads.len()
    );
}
