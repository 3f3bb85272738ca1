//! The terminal tells where a program's output stopped (issue 51, item 6):
//! after a flood through a real PTY, the change the terminal thread had
//! applied when it ran out of output is told, and it is the latest change,
//! the one whose screen shows the flood's last line. A view draws that
//! frame at once instead of waiting for its pacer (views/serve.rs).

use launcher::recorder::Recorder;
use launcher::terminal::TerminalHandle;
use std::io::Write;
use std::sync::Arc;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_end_of_a_flood_is_told_at_its_last_change() {
    let recorder = Arc::new(Recorder::new("hosted:end-of-output"));
    let term = TerminalHandle::open(100, recorder, false).expect("a PTY opens");
    let mut changes = term.subscribe_changes();
    let mut drained = term.subscribe_drained();
    // The program's side of the PTY: a flood of lines (more than the
    // terminal thread reads ahead), then its last line.
    let slave = std::fs::OpenOptions::new()
        .write(true)
        .open(term.tty_name())
        .expect("the PTY's slave opens");
    let writer = tokio::task::spawn_blocking(move || {
        let mut slave = slave;
        let line = "a line of a flood, long enough to take some room\n";
        for _ in 0..(1 << 20) / line.len() {
            slave.write_all(line.as_bytes())?;
        }
        slave.write_all(b"the last line")?;
        slave.flush()
    });
    // Each time the thread says the output stopped at the latest change,
    // the screen is read; the last line ends the wait.
    loop {
        drained.changed().await.expect("the terminal thread runs");
        let stopped_at = *drained.borrow_and_update();
        let latest = *changes.borrow_and_update();
        assert!(
            stopped_at <= latest,
            "told {stopped_at}, a change not made yet (latest {latest})"
        );
        if stopped_at != latest {
            continue;
        }
        let screen = term.screen(0).await.expect("the terminal thread answers");
        if screen.lines.iter().any(|l| l.contains("the last line")) {
            break;
        }
    }
    writer
        .await
        .expect("the writer ran")
        .expect("the flood was written");
}
