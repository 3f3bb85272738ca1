//! The screen keeper's history end to end (issue 11): `open --history`,
//! `screen --history N` (text and JSON), the last screen of an ended
//! instance with the program's final output, and scrolling back in a real
//! terminal (tmux) with shift+PageUp and the marker, any key back to live.

mod common;

use common::tmux::Tmux;
use common::*;

/// A shell program printing `count` numbered lines, then waiting.
fn numbered(count: usize) -> String {
    format!("for i in $(seq 1 {count}); do echo line-$i; done; echo done-printing; exec sleep 600")
}

#[test]
fn screen_prints_history_then_the_screen_and_json_has_a_history_array() {
    let host = Host::new();
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "h",
        "--history",
        "50",
        "--",
        "sh",
        "-c",
        &numbered(200),
    ]);
    host.wait_screen("shell:h", "done-printing");
    let json = host.ok(&["screen", "shell:h", "--history", "10", "--json"]);
    let history: Vec<&str> = json["history"]
        .as_array()
        .expect("a history array")
        .iter()
        .map(|l| l.as_str().expect("text"))
        .collect();
    assert_eq!(history.len(), 10, "{json}");
    assert_eq!(json["history_limit"], 50, "{json}");
    assert_eq!(json["history_len"], 50, "{json}");
    // Reported memory: the two screens' cells, and, once the output has
    // paused, the 50 lines held as text (far less than 50 rows of 24-byte
    // cells).
    let memory = |json: &serde_json::Value| json["memory_bytes"].as_u64().expect("memory_bytes");
    assert!(memory(&json) >= (30 + 30) * 120 * 24 + 50 * 8, "{json}");
    let compact = wait_for(
        "the history to be kept as text once the output paused",
        || {
            let json = host.ok(&["screen", "shell:h", "--json"]);
            (memory(&json) < (30 + 30 + 10) * 120 * 24).then_some(json)
        },
    );
    assert_eq!(compact["history_len"], 50, "{compact}");
    // 201 lines and the cursor row: the screen's 30 rows end at done-printing.
    let lines: Vec<&str> = json["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().expect("text"))
        .collect();
    let first_visible: usize = lines[0]
        .strip_prefix("line-")
        .and_then(|n| n.parse().ok())
        .expect("a numbered first row");
    assert_eq!(
        history.last().copied(),
        Some(format!("line-{}", first_visible - 1).as_str()),
        "history ends right above the screen"
    );
    assert_eq!(history[0], format!("line-{}", first_visible - 10));

    // As text: the history lines, then the screen.
    let out = host.run(&["screen", "shell:h", "--history", "3"]);
    let text = out.expect(0).stdout.clone();
    let printed: Vec<&str> = text.lines().collect();
    assert_eq!(printed[0], format!("line-{}", first_visible - 3));
    assert_eq!(printed[3], lines[0]);

    // More than is held: all of it, no more.
    let all = host.ok(&["screen", "shell:h", "--history", "100000", "--json"]);
    assert_eq!(all["history"].as_array().map(Vec::len), Some(50));

    // No history kept at all.
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "none",
        "--history",
        "0",
        "--",
        "sh",
        "-c",
        &numbered(100),
    ]);
    host.wait_screen("shell:none", "done-printing");
    let none = host.ok(&["screen", "shell:none", "--history", "10", "--json"]);
    assert_eq!(none["history"].as_array().map(Vec::len), Some(0), "{none}");
    assert_eq!(none["history_len"], 0);

    // A history larger than allowed is refused before anything starts.
    let refused = host.run(&["open", "--shell", "--history", "999999999", "--", "true"]);
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("--history"), "{}", refused.stderr);
    assert_eq!(host.list().len(), 2);
}

#[test]
fn an_ended_instance_keeps_its_last_screen_with_its_final_output() {
    let host = Host::new();
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "last",
        "--",
        "sh",
        "-c",
        "for i in $(seq 1 60); do echo out-$i; done; echo started; read x; printf 'final words\\n'; exit 3",
    ]);
    host.wait_screen("shell:last", "started");
    host.ok(&["input", "shell:last", "go\r"]);
    host.wait_ended("shell:last");
    let json = host.ok(&["screen", "shell:last", "--history", "100", "--json"]);
    assert_eq!(json["ended"], true, "{json}");
    let lines: Vec<&str> = json["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| l.as_str().unwrap_or(""))
        .collect();
    assert!(lines.contains(&"final words"), "{json}");
    let history = json["history"].as_array().expect("history");
    assert_eq!(history.first().and_then(|l| l.as_str()), Some("out-1"));
    // Forgetting the instance forgets its screen.
    host.ok(&["close", "shell:last"]);
    let gone = host.run(&["screen", "shell:last"]);
    gone.expect_error(1, "no_such_instance");
}

#[test]
fn attach_scrolls_back_with_shift_page_up_and_any_key_returns_to_live() {
    let host = Host::new();
    host.open_sh(
        "scroll",
        "for i in $(seq 1 100); do echo hist-$i; done; echo bottom-line; exec cat",
        "bottom-line",
    );
    let tmux = Tmux::attach(&host, "shell:scroll", 120, 30);
    tmux.wait_text("bottom-line");
    tmux.send_keys(&["S-PPage"]);
    let back = tmux.wait_text("/7");
    // Scrolled back one page (29 rows): the marker says how far, of how many.
    assert!(back.contains("[29/72]"), "{back}");
    assert!(!back.contains("bottom-line"), "{back}");
    assert!(
        back.lines()
            .next()
            .is_some_and(|row| row.starts_with("hist-44 ")),
        "{back}"
    );
    // The Tick is untouched: its own screen is still live.
    assert!(host.screen("shell:scroll").contains("bottom-line"));
    tmux.send_keys(&["S-PPage", "S-PPage", "S-PPage"]);
    let top = tmux.wait_text("[72/72]");
    assert!(
        top.lines()
            .next()
            .is_some_and(|row| row.starts_with("hist-1 ")),
        "{top}"
    );
    tmux.send_keys(&["S-NPage"]);
    tmux.wait_text("[43/72]");
    // A typed key returns to live and goes no further, as the key that
    // leaves tmux's copy mode; the next one reaches the program (cat
    // echoes it).
    tmux.type_text("q");
    let live = tmux.wait_text("bottom-line");
    assert!(!live.contains("/72]"), "{live}");
    tmux.type_text("x");
    let echoed = host.wait_screen("shell:scroll", "x");
    assert!(
        !echoed.lines().any(|l| l.contains('q')),
        "the key that left scrollback reached the program: {echoed}"
    );
    // At the live screen shift+PageDown is the view's too, as in xterm: it
    // does not reach the program (cat's terminal would echo `^[[6;2~`).
    tmux.send_keys(&["S-NPage"]);
    tmux.type_text("z");
    let after = host.wait_screen("shell:scroll", "xz");
    assert!(
        !after.contains('~') && !after.contains("[6"),
        "shift+PageDown at the live screen reached the program: {after}"
    );
}
