//! tickhost restart (ARCHITECTURE.md): launchers outlive a tickhost killed
//! with SIGKILL; the next command starts a new tickhost, which finds every
//! instance again with its seq and its screen, and calls go on working.

mod common;

use common::*;
use serde_json::json;

#[test]
fn tickhost_killed_with_sigkill_is_restarted_and_finds_every_instance_again() {
    let host = Host::new();
    let a = host.open_counter("a");
    let b = host.open_counter("b");
    host.ok(&[
        "call",
        "a",
        "increment",
        r#"{"amount":3}"#,
        "--revision",
        "1",
    ]);
    host.wait_screen("b", "value: 0");
    host.ok(&["input", "b", "++"]);
    host.wait_value("b", 2);
    host.wait_screen("a", "value: 3");
    let before = wait_for("a and b listed with their updates", || {
        let list = host.list();
        (list.len() == 2 && list[0]["seq"] == 1 && list[1]["seq"] == 2).then_some(list)
    });

    let old = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: kill(2) of the tickhost this test started.
    assert_eq!(unsafe { libc::kill(old, libc::SIGKILL) }, 0);
    wait_gone(old, "the killed tickhost");

    let after = host.list();
    let new = host.tickhost_pid().expect("a new tickhost.pid");
    assert_ne!(new, old, "a new tickhost was started");
    assert!(alive(new));
    assert_eq!(after.len(), 2, "{after:#?}");
    for (was, now) in before.iter().zip(&after) {
        assert_eq!(now["id"], was["id"]);
        assert_eq!(now["state"], "running", "{now}");
        assert_eq!(now["seq"], was["seq"], "{now}");
        assert_eq!(now["pid"], was["pid"], "{now}");
        assert_eq!(now["launcher_pid"], was["launcher_pid"], "{now}");
    }
    assert!(host.screen("a").contains("value: 3"));
    assert!(host.screen("b").contains("value: 2"));
    assert_eq!(host.read("a")["seq"], 1);
    assert_eq!(
        host.ok(&[
            "call",
            "a",
            "increment",
            r#"{"amount":1}"#,
            "--revision",
            "1"
        ]),
        json!({"result":{"value":4}})
    );
    assert_eq!(host.read("b")["data"]["value"], 2);
    let _ = (a, b);
}

/// Issue 10: a stopped launcher cost a restarted tickhost its 5 s hello
/// before `ready` (every CLI waited), and was then listed as ended for
/// ever. Now every recorded instance is listed at once, the stopped one as
/// running but unresponsive, and it is connected when it resumes.
#[test]
fn a_stopped_launcher_neither_holds_up_a_restarted_tickhost_nor_ends() {
    let host = Host::new();
    host.open_counter("a");
    host.open_counter("b");
    let launcher = host.entry("hosted:a").expect("a")["launcher_pid"]
        .as_i64()
        .expect("a launcher pid") as i32;
    // SAFETY: kill(2) on processes this test started.
    assert_eq!(unsafe { libc::kill(launcher, libc::SIGSTOP) }, 0);
    let old = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(old, libc::SIGKILL) }, 0);
    wait_gone(old, "the killed tickhost");

    let list = host.list();
    assert_eq!(list.len(), 2, "{list:#?}");
    for entry in &list {
        assert_eq!(entry["state"], "running", "{entry}");
    }
    let read = host.run(&["read", "hosted:a"]);
    let err = read.expect_error(1, "unresponsive");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("kill -CONT {launcher}"))),
        "{err}"
    );
    assert_eq!(host.read("hosted:b")["seq"], 0);

    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(launcher, libc::SIGCONT) }, 0);
    wait_for("the resumed launcher to be connected", || {
        (host.run(&["read", "hosted:a"]).code == 0).then_some(())
    });
    assert_eq!(host.entry("hosted:a").expect("a")["state"], "running");
}
