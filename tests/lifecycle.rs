//! Ending sessions (spec 4.5; docs/cli.md `close`): a Tick that ignores
//! SIGTERM (and its child that does too) is gone after `close`; a Tick that
//! dies on its own is listed as ended, with `exited`.

mod common;

use common::*;

#[test]
fn close_kills_a_tick_that_ignores_sigterm_and_its_child() {
    let host = Host::new();
    let open = host.open_bad("stubborn", "ignores_sigterm");
    let data = host.read("stubborn")["data"].clone();
    let pid = int(&data["pid"], "pid") as i32;
    let child = int(&data["child_pid"], "child_pid") as i32;
    assert_eq!(open["pid"], pid, "open reports the Tick's own pid");
    assert!(alive(pid) && alive(child), "{data}");
    let v = host.ok(&["close", "stubborn"]);
    assert_eq!(v["ended"]["kind"], "closed", "{v}");
    assert!(
        !alive(pid),
        "close returned while the Tick (pid {pid}) still runs"
    );
    wait_gone(child, "the Tick's child that ignores SIGTERM");
    host.wait_nothing_left_but_tickhost();
}

#[test]
fn tick_killed_from_outside_is_listed_as_ended_exited() {
    let host = Host::new();
    let open = host.open_counter("victim");
    host.open_counter("other");
    let pid = int(&open["pid"], "pid") as i32;
    // SAFETY: kill(2) of the Tick this test opened.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let ended = host.wait_ended("hosted:victim");
    assert_eq!(ended["kind"], "exited", "{ended}");
    assert!(
        ended["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{ended}"
    );
    let last = host.run(&["read", "victim"]);
    assert_eq!(last.expect(0).json()["ended"], true, "{last:#?}");
    assert_eq!(host.read("other")["seq"], 0);
    let launcher = int(&open["launcher_pid"], "launcher_pid") as i32;
    wait_gone(launcher, "the ended instance's launcher");
}

#[test]
fn sigterm_to_a_launcher_whose_socket_is_gone_still_ends_its_tick() {
    let host = Host::new();
    let open = host.open_bad("orphaned", "ignores_sigterm");
    let data = host.read("orphaned")["data"].clone();
    let pid = int(&data["pid"], "pid") as i32;
    let child = int(&data["child_pid"], "child_pid") as i32;
    let launcher = int(&open["launcher_pid"], "launcher_pid") as i32;
    // Its runtime directory's files removed under it (as a cleanup of /tmp
    // would), the launcher cannot close itself through its socket.
    std::fs::remove_file(host.runtime().join("i/hosted-orphaned/sock")).expect("remove the socket");
    // SAFETY: kill(2) on the launcher this test started.
    assert_eq!(unsafe { libc::kill(launcher, libc::SIGTERM) }, 0);
    wait_gone(launcher, "the launcher after SIGTERM");
    wait_gone(pid, "the Tick of a launcher ended by SIGTERM");
    wait_gone(child, "the Tick's child that ignores SIGTERM");
}

/// Issue 10: opening a program that exits at once was a coin toss (a
/// connection error one time in three, else "running" for a dead program,
/// and its output never shown). A hundred opens: never an error, the
/// program's status and output are always kept, and whenever `open` says
/// it ended, it says why and shows what it printed.
#[test]
fn a_program_that_exits_during_its_start_never_makes_open_fail() {
    let host = Host::new();
    let mut said_ended = 0;
    for i in 0..100 {
        let name = format!("q{i}");
        let out = host.run(&[
            "open",
            "--shell",
            "--id",
            &name,
            "--",
            "sh",
            "-c",
            "echo hello; exit 7",
        ]);
        out.expect(0);
        let v = out.json();
        match v["state"].as_str() {
            Some("ended") => {
                said_ended += 1;
                assert_eq!(
                    v["ended"]["reason"], "the program exited with status 7",
                    "{v}"
                );
                assert_eq!(v["screen"], serde_json::json!(["hello"]), "{v}");
            }
            Some("running") => {}
            other => panic!("open said state {other:?}: {v}"),
        }
    }
    // Whatever `open` saw, every one of them is listed ended with its
    // status, and its screen is kept.
    for i in 0..100 {
        let id = format!("shell:q{i}");
        let ended = host.wait_ended(&id);
        assert_eq!(ended["reason"], "the program exited with status 7", "{id}");
    }
    let screen = host.run(&["screen", "shell:q99"]);
    screen.expect(0);
    assert!(screen.stdout.starts_with("hello"), "{screen:#?}");
    println!("open itself said `ended` {said_ended} times of 100");
}
