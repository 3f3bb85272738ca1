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

/// The launcher's threads by name.
fn thread_names(pid: i64) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .filter_map(|e| e.ok())
                .filter_map(|e| std::fs::read_to_string(e.path().join("comm")).ok())
                .map(|name| name.trim().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until the launcher runs without its terminal thread.
fn wait_dormant(pid: i64) {
    wait_for("the launcher's terminal thread to end while quiet", || {
        (thread_names(pid).len() == 1).then_some(())
    });
}

/// Waits until the launcher's terminal thread runs again (looking at
/// nothing of the terminal's meanwhile: `screen` would wake it itself).
fn wait_woken(pid: i64, by: &str) {
    wait_for(
        &format!("the terminal thread to start again for {by}"),
        || {
            thread_names(pid)
                .iter()
                .any(|name| name == "terminal")
                .then_some(())
        },
    );
}

#[test]
fn a_quiet_launcher_ends_its_terminal_thread_and_wakes_for_output_input_and_reads() {
    // Issue 51: a quiet terminal's loop waits on the runtime, with no
    // thread of its own (its stack is an idle launcher's private memory);
    // whatever comes first brings it back: the Tick's output, a person's
    // input, a read of the screen.
    let host = Host::new();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let fifo = dir.path().join("later");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let script = format!(
        "echo started; read line < '{}'; echo \"got $line\"; cat",
        fifo.display()
    );
    host.ok(&["open", "--shell", "--id", "q", "--", "sh", "-c", &script]);
    host.wait_screen("shell:q", "started");
    let pid = host.entry("shell:q").expect("listed")["launcher_pid"]
        .as_i64()
        .expect("a launcher pid");
    // Output while dormant.
    wait_dormant(pid);
    std::fs::write(&fifo, "from-the-fifo\n").expect("write the fifo");
    wait_woken(pid, "the Tick's output");
    host.wait_screen("shell:q", "got from-the-fifo");
    // Input while dormant (cat echoes it).
    wait_dormant(pid);
    host.ok(&["input", "shell:q", "typed-while-quiet\r"]);
    wait_woken(pid, "input");
    host.wait_screen("shell:q", "typed-while-quiet");
    // A read while dormant: the screen as it was.
    wait_dormant(pid);
    let screen = host.run(&["screen", "shell:q"]);
    assert_eq!(screen.code, 0, "{screen:?}");
    let text = screen.stdout;
    assert!(
        text.contains("got from-the-fifo") && text.contains("typed-while-quiet"),
        "{text}"
    );
    // And quiet again after it.
    wait_dormant(pid);
}
