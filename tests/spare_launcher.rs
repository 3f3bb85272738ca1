//! The launcher started ahead of the next open (issue 51, open): tickhost
//! keeps one `tickloop __launcher` waiting for its spec; an open takes it
//! and another is started; one that was killed while it waited is replaced
//! at the open that finds it gone; it is no instance (`shutdown` counts
//! only instances) and it ends with tickhost.

mod common;

use common::*;
use serde_json::json;

/// The one spare launcher of `host`, once there is one.
fn the_spare(host: &Host) -> i32 {
    wait_for("tickhost's spare launcher", || {
        let spares = host.spare_launchers();
        assert!(spares.len() <= 1, "more than one spare: {spares:?}");
        spares.first().copied()
    })
}

#[test]
fn an_open_takes_the_launcher_started_before_it_and_another_is_started() {
    let host = Host::new();
    host.open_counter("a");
    let spare = the_spare(&host);
    let b = host.open_counter("b");
    assert_eq!(
        int(&b["launcher_pid"], "launcher_pid") as i32,
        spare,
        "the open took the spare: {b}"
    );
    let next = the_spare(&host);
    assert_ne!(next, spare, "a new spare, not the one taken");
    // The instance's launcher logs into the instance's own log, not
    // tickhost's (where a spare's stderr points until its spec comes).
    host.ok(&["close", "b"]);
    // Its last line, written as it exits (after `close` has answered).
    let log = host.runtime().join("i/hosted-b/launcher.log");
    wait_for("the launcher's last line in the instance's log", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|text| text.contains("launcher: ended"))
    });
    let tickhost_log =
        std::fs::read_to_string(host.runtime().join("tickhost.log")).unwrap_or_default();
    assert!(!tickhost_log.contains("launcher: ended"), "{tickhost_log}");
}

#[test]
fn a_spare_killed_while_it_waits_is_replaced_by_the_open_that_finds_it_gone() {
    let host = Host::new();
    host.open_counter("a");
    let spare = the_spare(&host);
    // SAFETY: kill(2) of this test's own spare launcher.
    assert_eq!(unsafe { libc::kill(spare, libc::SIGKILL) }, 0);
    wait_gone(spare, "the killed spare");
    let b = host.open_counter("b");
    let launcher = int(&b["launcher_pid"], "launcher_pid") as i32;
    assert_ne!(launcher, spare, "{b}");
    assert!(alive(launcher), "{b}");
    host.wait_value("hosted:b", 0);
    let log = std::fs::read_to_string(host.runtime().join("tickhost.log")).unwrap_or_default();
    assert!(
        log.contains(&format!("launcher {spare} did not take its spec")),
        "{log}"
    );
}

#[test]
fn the_spare_is_no_instance_and_ends_with_tickhost() {
    let host = Host::new();
    host.open_counter("a");
    host.ok(&["close", "a"]);
    let spare = the_spare(&host);
    assert_eq!(
        host.ok(&["shutdown"]),
        json!({"shutdown": true, "closed": 0})
    );
    wait_gone(spare, "the spare after shutdown");
    host.wait_nothing_left();

    // A tickhost killed outright: its spare sees its stdin close and ends.
    host.open_counter("b");
    let spare = the_spare(&host);
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: kill(2) on the tickhost of this test.
    assert_eq!(unsafe { libc::kill(tickhost, libc::SIGKILL) }, 0);
    wait_gone(spare, "the spare of a killed tickhost");
    assert!(host.entry("hosted:b").is_some(), "the instance goes on");
}
