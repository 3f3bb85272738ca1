//! `wait` and `watch` on a terminal (`script`'s pty), as a person reads
//! them (issue 50): `wait --text` prints what matched and the rows around
//! it, the whole screen only with `--screen`; `wait --ended` prints no
//! empty `screen:` header; `watch` names every command of a shell, also
//! when one delivery merged several.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc::{self, Receiver};

/// `tickloop ARGS` in a terminal of its own, run to its end: what it printed.
fn in_a_terminal(host: &Host, args: &str) -> Out {
    let out = run_prepared(host.in_a_terminal(args), &[args]);
    Out {
        stdout: out.stdout.replace("\r\n", "\n"),
        ..out
    }
}

#[test]
fn wait_prints_the_matched_row_and_those_around_it_the_screen_only_with_screen() {
    let host = Host::new();
    let id = host.open_bash("loop");
    // A line every 0.2 s: whenever the wait starts, a next one matches.
    host.ok(&[
        "input",
        &id,
        "i=0; while :; do i=$((i+1)); echo tick-$i; sleep 0.2; done\r",
    ]);
    // Ten rows and more on the screen from now on (the screen only grows,
    // then scrolls).
    host.wait_screen(&id, "tick-10");

    let out = in_a_terminal(&host, &format!("wait {id} --text 'tick-[0-9]+'"));
    out.expect(0);
    let said = &out.stdout;
    let lines: Vec<&str> = said.lines().collect();
    assert!(lines[0].starts_with("matched \"tick-"), "{said}");
    assert!(lines[1].starts_with("on row "), "{said}");
    let marked: Vec<&&str> = lines.iter().filter(|l| l.starts_with("> tick-")).collect();
    assert_eq!(marked.len(), 1, "one row marked as the match: {said}");
    // The row and at most two each side: not the screen.
    assert!(lines.len() <= 2 + 5, "{said}");
    assert!(!said.lines().any(|l| l == "screen:"), "{said}");
    // The marked row is what matched.
    let matched = lines[0]
        .trim_start_matches("matched \"")
        .split('"')
        .next()
        .unwrap_or_default();
    assert_eq!(marked[0].trim_start_matches("> "), matched, "{said}");

    // --screen: the whole screen, headed.
    let out = in_a_terminal(&host, &format!("wait {id} --text 'tick-[0-9]+' --screen"));
    out.expect(0);
    let said = &out.stdout;
    assert!(said.contains("\nscreen:\n"), "{said}");
    let shown = said.split("\nscreen:\n").nth(1).unwrap_or_default();
    // The screen's every row (eleven at least), not an excerpt of five.
    assert!(shown.lines().count() >= 11, "{said}");

    // Piped (JSON): the whole screen, as before.
    let piped = host.ok(&["wait", &id, "--text", "tick-[0-9]+"]);
    assert!(
        piped["screen"].as_array().is_some_and(|s| s.len() > 7),
        "{piped}"
    );
    host.ok(&["keys", &id, "C-c"]);
}

#[test]
fn wait_ended_prints_no_empty_screen_header() {
    let host = Host::new();
    host.ok(&[
        "open", "--shell", "--id", "brief", "--", "sh", "-c", "exit 0",
    ]);
    let id = "shell:brief";
    host.wait_ended(id);
    let out = in_a_terminal(&host, &format!("wait {id} --ended"));
    out.expect(0);
    let said = &out.stdout;
    assert!(said.starts_with(&format!("{id} ended: ")), "{said}");
    let lines: Vec<&str> = said.lines().collect();
    // A header is followed by what it heads.
    for (i, line) in lines.iter().enumerate() {
        if line.ends_with(':') {
            assert!(
                lines.get(i + 1).is_some_and(|next| next.starts_with("  ")),
                "a header over nothing: {said}"
            );
        }
    }
    assert!(!said.lines().any(|l| l == "screen:"), "{said}");
}

/// `tickloop watch ARGS` in a terminal; its lines as they come.
fn watch_in_a_terminal(host: &Host, args: &str) -> (Child, Receiver<String>) {
    let mut child = host.in_a_terminal(args).spawn().expect("start watch");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line.trim_end_matches('\r').to_string()).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

#[test]
fn watch_names_every_command_of_a_shell_also_when_deliveries_merge() {
    let host = Host::new();
    let id = host.open_bash("quick");
    // One delivery a second at most: quick commands merge.
    let (mut watch, lines) = watch_in_a_terminal(&host, &format!("watch {id} --interval 1000"));
    let first = lines.recv_timeout(WAIT).expect("watch's first line");
    assert!(first.contains(&id), "{first}");
    // Three commands typed at once, as a person pastes them.
    host.ok(&["input", &id, "echo one\r(exit 3)\recho three\r"]);
    let mut said = Vec::new();
    while !said.iter().any(|l: &String| l.contains("`echo three`")) {
        let line = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("watch never named `echo three`: {said:#?}"));
        said.push(line);
    }
    let _ = watch.kill();
    let _ = watch.wait();
    let all = said.join("\n");
    for (command, status) in [("echo one", 0), ("(exit 3)", 3)] {
        let merged = format!("`{command}` with status {status}");
        let alone = format!("ended with status {status}: `{command}`");
        assert!(
            all.contains(&merged) || all.contains(&alone),
            "watch dropped `{command}`: {all}"
        );
    }
    // Each named: either in a line of its own or in a merged one.
    for n in ["one", "three"] {
        assert!(all.contains(&format!("`echo {n}`")), "{all}");
    }
}
