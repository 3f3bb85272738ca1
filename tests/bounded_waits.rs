//! No wait without a bound (issue 10): a stopped (SIGSTOP) launcher makes
//! its own instance's requests fail in bounded time with a reason that says
//! what to do, a call to it is an unknown outcome, and every other instance
//! goes on. tickhost's bound is shortened for the test through
//! `TICKLOOP_LAUNCHER_TIMEOUT_MS`, read by the tickhost the first command
//! starts.

mod common;

use common::*;

#[test]
fn a_stopped_launcher_fails_only_its_own_requests_and_in_bounded_time() {
    let host = Host::new();
    host.start_tickhost_with(&[("TICKLOOP_LAUNCHER_TIMEOUT_MS", "300")]);
    host.open_counter("stopped");
    host.open_counter("other");
    let pid = host.entry("hosted:stopped").expect("listed")["launcher_pid"]
        .as_i64()
        .expect("a launcher pid") as i32;
    // SAFETY: kill sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);

    let screen = host.run(&["screen", "hosted:stopped"]);
    let err = screen.expect_error(1, "unresponsive");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("kill -CONT"), "{err}");
    let read = host.run(&["read", "hosted:stopped"]);
    read.expect_error(1, "unresponsive");
    // A call is never guessed: its outcome is unknown (exit 5).
    let call = host.run(&[
        "call",
        "hosted:stopped",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(call.code, 5, "{call:?}");
    assert!(call.stdout.contains("did not answer"), "{call:?}");

    // Everything else goes on.
    assert_eq!(host.read("hosted:other")["seq"], 0);
    assert_eq!(host.list().len(), 2);
    host.ok(&[
        "call",
        "hosted:other",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);

    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    wait_for("the resumed launcher to answer again", || {
        let out = host.run(&["read", "hosted:stopped"]);
        (out.code == 0).then_some(())
    });
}

#[test]
fn a_stopped_tickhost_makes_clients_fail_in_bounded_time_not_hang() {
    let host = Host::new();
    host.open_counter("c");
    let daemon = std::fs::read_to_string(host.runtime().join("tickhost.pid"))
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok())
        .expect("tickhost.pid holds tickhost's pid");
    // SAFETY: kill sends a signal to the tickhost this test started.
    assert_eq!(unsafe { libc::kill(daemon, libc::SIGSTOP) }, 0);
    let out = host
        .command(&["list"])
        .env("TICKLOOP_CLIENT_TIMEOUT_MS", "300")
        .output()
        .expect("list");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(daemon, libc::SIGCONT) }, 0);
    assert!(!out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("did not answer within 0.3 s") && stderr.contains("kill -CONT"),
        "{stderr}"
    );
    // Resumed, it answers again.
    assert_eq!(host.list().len(), 1);
}

/// Issue 42: the bounds nest. A client's wait for a `call` is longer than
/// tickhost's worst case for one (a held call's latest progress, the
/// approval confirmed by a describe, the call's own 75 s, then the status
/// and the catalog it may have changed), so a slow or stopped launcher is
/// reported by tickhost as an unknown outcome naming the launcher, and the
/// client's own bound runs out only when tickhost itself is stopped.
#[test]
fn a_clients_wait_for_a_call_outlasts_tickhosts_worst_case() {
    let worst = tickhost::daemon::conn::call_worst_case();
    assert!(
        tickloop_client::CALL_TIMEOUT > worst,
        "the client gives up on a call after {:?}, tickhost may take {worst:?}",
        tickloop_client::CALL_TIMEOUT
    );
    // Every other request is answered well within the usual bound.
    assert!(
        tickloop_client::REQUEST_TIMEOUT
            > tickhost::daemon::conn::answer_limit(&tickloop_proto::wire::LauncherRequest::Reload)
    );
}
