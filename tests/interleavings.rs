//! The consent gate and the links when two things happen at once (issue
//! 42), each case driven by events, never by sleeps: a caller killed while
//! its action is held, a client withdrawing one of its held requests and
//! keeping its connection, a request cut by a timeout on a stopped
//! launcher and the launcher resumed, and a Tick that stops reading its
//! stdin under a thousand calls.

mod common;

use common::*;
use serde_json::Value;
use tickloop_client::Client;
use tickloop_proto::wire::{CallOutcome, CallRequest, ClientKind, ClientReply, ClientRequest};

/// The actions `tickloop approvals` lists.
fn waiting(host: &Host) -> Vec<Value> {
    let out = host.run(&["approvals"]);
    out.expect(0);
    out.stdout
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn log_of(host: &Host, id: &str) -> Vec<Value> {
    let out = host.run(&["approvals", "--log", id]);
    out.expect(0);
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a log line"))
        .collect()
}

/// The consent entries of `id`'s activity record: (decision, reason).
fn consent_activity(host: &Host, id: &str) -> Vec<(String, String)> {
    let record = host.ok(&["activity", id]);
    record["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "consent")
        .map(|e| {
            (
                e["decision"].as_str().unwrap_or_default().to_string(),
                e["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Issue 42, case 1, as reported: a counter opened with `--approve ask`, a
/// `tickloop call c increment '{"amount":5}' --revision 1` held, and that
/// CLI killed with SIGKILL. The call is withdrawn at once, not six seconds
/// (or thirty) later; `approve` then answers that it was withdrawn, and
/// the Tick never sees the increment.
#[test]
fn a_caller_killed_during_a_hold_withdraws_its_call() {
    let host = Host::new();
    host.open_asking_counter("c");
    let caller = host.spawn(&[
        "call",
        "c",
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        "1",
    ]);
    let held = wait_for("the call to wait for approval", || {
        waiting(&host).into_iter().next()
    });
    let call = held["call"].as_str().expect("a call id").to_string();
    // SAFETY: kill sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(caller.pid(), libc::SIGKILL) }, 0);
    drop(caller);

    wait_for("the killed caller's call to leave the approvals", || {
        waiting(&host).is_empty().then_some(())
    });
    let late = host.run(&["approve", "c", &call]);
    let error = late.expect_error(3, "withdrawn");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("withdrawn")),
        "{error}"
    );
    assert_eq!(error["data"]["decision"], "withdrawn");
    // Nothing reached the Tick, and its value never moved.
    assert_eq!(host.logged_calls("c", "increment"), 0);
    assert_eq!(host.read("c")["data"]["value"], 0);

    let decisions: Vec<(String, String, String)> = log_of(&host, "c")
        .iter()
        .map(|e| {
            (
                e["decision"].as_str().unwrap_or_default().to_string(),
                e["by"].as_str().unwrap_or_default().to_string(),
                e["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("held".into(), "tickhost".into(), String::new()),
            (
                "withdrawn".into(),
                "caller".into(),
                "the caller stopped waiting".into()
            ),
        ]
    );
    let activity = consent_activity(&host, "c");
    assert_eq!(
        activity.last(),
        Some(&("withdrawn".to_string(), "the caller stopped waiting".into())),
        "{activity:?}"
    );
}

/// A client that keeps its connection (an MCP bridge with several requests
/// on it, say) withdraws one of its held requests: the request is answered
/// as refused (`withdrawn`), the connection goes on serving, and a later
/// `approve` answers that it was withdrawn.
#[test]
fn a_client_withdraws_its_held_request_and_keeps_its_connection() {
    let host = Host::new();
    host.open_asking_counter("c");
    let mut client = Client::connect(host.runtime(), ClientKind::Mcp).expect("connected");
    let withdrawer = client.withdrawer();
    assert!(!withdrawer.withdraw(None).expect("nothing in flight"));
    let (held_tx, held_rx) = std::sync::mpsc::channel();
    let asking = std::thread::spawn(move || {
        let call = ClientRequest::Call {
            instance: "hosted:c".into(),
            call: CallRequest {
                tool: "increment".into(),
                args: serde_json::json!({"amount": 5}),
                revision: "1".into(),
            },
        };
        let reply = client.request_with_progress(call, |held| {
            let _ = held_tx.send(held.call.clone());
        });
        (client, reply)
    });
    let call = held_rx
        .recv_timeout(WAIT)
        .expect("the call waits for approval");
    assert!(withdrawer
        .withdraw(Some("cancelled by the MCP client"))
        .expect("sent"));
    let (mut client, reply) = asking.join().expect("the asking thread");
    match reply.expect("a reply") {
        ClientReply::Call(CallOutcome::NotExecuted { error }) => {
            let data = error.data.unwrap_or_default();
            assert_eq!(data["approval"], "withdrawn", "{}", error.message);
            assert_eq!(data["by"], "caller");
        }
        other => panic!("the withdrawn call answered {other:?}"),
    }
    // The same connection serves on.
    let list = client.request(ClientRequest::List).expect("list");
    assert!(
        matches!(list, ClientReply::Ok(Value::Array(ref a)) if a.len() == 1),
        "{list:?}"
    );
    assert!(waiting(&host).is_empty());
    host.run(&["refuse", "c", &call])
        .expect_error(3, "withdrawn");
    let last = log_of(&host, "c").pop().expect("a log entry");
    assert_eq!(last["decision"], "withdrawn");
    assert_eq!(
        last["reason"],
        "the agent stopped waiting: cancelled by the MCP client"
    );
    assert_eq!(host.logged_calls("c", "increment"), 0);
}

/// The launcher pid of `id`.
fn launcher_pid(host: &Host, id: &str) -> i32 {
    host.entry(id).expect("listed")["launcher_pid"]
        .as_i64()
        .expect("a launcher pid") as i32
}

fn signal(pid: i32, signal: libc::c_int) {
    // SAFETY: kill sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill {pid}");
}

/// Issue 42, case 2, as reported: with `TICKLOOP_LAUNCHER_TIMEOUT_MS=1500`,
/// a shell instance whose launcher is stopped (SIGSTOP) gets a 3 MB
/// `input`, which times out while its line is half written; the launcher
/// is resumed (SIGCONT). The link is whole: the next `input` is typed, the
/// instance still runs, and nothing was left unreachable.
#[test]
fn a_write_cut_by_a_timeout_on_a_stopped_launcher_leaves_the_link_whole() {
    let host = Host::new();
    host.start_tickhost_with(&[("TICKLOOP_LAUNCHER_TIMEOUT_MS", "1500")]);
    // A shell that reads lines and answers `hi`, echo off (3 MB echoed
    // would only slow the test).
    let id = host.open_sh(
        "s",
        r#"stty -echo; echo READY; exec awk '$0 == "hi" { print "GOT-HI"; fflush() }'"#,
        "READY",
    );
    let launcher = launcher_pid(&host, &id);
    signal(launcher, libc::SIGSTOP);

    // 3 MB in lines of 100 bytes: far more than the socket holds, so the
    // line is cut when tickhost stops waiting.
    let big = format!("#{}\n", "x".repeat(98)).repeat(30_000);
    let mut client = Client::connect(host.runtime(), ClientKind::Cli).expect("connected");
    let reply = client
        .request(ClientRequest::Input {
            instance: id.clone(),
            text: big,
        })
        .expect("tickhost answers");
    match &reply {
        ClientReply::Error(e) => assert_eq!(
            e.kind,
            tickloop_proto::wire::ErrorKind::Unresponsive,
            "{}",
            e.message
        ),
        other => panic!("the input to a stopped launcher answered {other:?}"),
    }
    signal(launcher, libc::SIGCONT);

    let out = host.run(&["input", "s", "hi\r"]);
    out.expect(0);
    let entry = host.entry(&id).expect("listed");
    assert_eq!(entry["state"], "running", "{entry}");
    assert!(entry["ended"].is_null(), "{entry}");
    host.wait_screen(&id, "GOT-HI");
    // Still reachable: it closes as usual, and nothing is left behind.
    host.ok(&["close", &id]);
    wait_gone(launcher, "the launcher, after close");
}

/// Issue 42, case 6: `close` kills what its launcher did not end, taking
/// the pids from a status that may be stale. Here the status names, as
/// the Tick, a process that is not (its pid given to another program): a
/// stopped launcher, a tickhost killed and restarted, and the record's
/// Tick pid pointing at an unrelated process group. That group is left
/// alone; the launcher, still the launcher, is killed.
#[test]
fn close_never_kills_a_process_that_a_stale_status_names() {
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    let host = Host::new();
    host.open_counter("c");
    let launcher = launcher_pid(&host, "hosted:c");
    // Someone else's program, leading its own process group.
    let mut stranger = std::process::Command::new("sleep");
    stranger.arg("600").process_group(0);
    let mut stranger = stranger.spawn().expect("sleep runs");
    let stranger_pid = stranger.id() as i32;

    signal(launcher, libc::SIGSTOP);
    let old = host.tickhost_pid().expect("tickhost.pid");
    signal(old, libc::SIGKILL);
    wait_gone(old, "the killed tickhost");
    // The record the next tickhost adopts now names the stranger as the Tick.
    let record_path = host.runtime().join("i/hosted-c/record.json");
    let mut record: Value =
        serde_json::from_str(&std::fs::read_to_string(&record_path).expect("the record"))
            .expect("a JSON record");
    record["status"]["pid"] = Value::from(stranger_pid);
    std::fs::write(&record_path, record.to_string()).expect("the record rewritten");
    host.start_tickhost_with(&[("TICKLOOP_LAUNCHER_TIMEOUT_MS", "300")]);
    assert_eq!(host.entry("hosted:c").expect("listed")["pid"], stranger_pid);

    let closed = host.ok(&["close", "hosted:c"]);
    assert!(
        closed["ended"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("killed")),
        "{closed}"
    );
    wait_gone(launcher, "the stuck launcher, killed");
    // Whatever tickhost sent it was sent before `close` answered: a SIGTERM
    // now ends the stranger, unless a SIGKILL did first.
    signal(stranger_pid, libc::SIGTERM);
    let status = stranger.wait().expect("the stranger's end");
    assert_eq!(
        status.signal(),
        Some(libc::SIGTERM),
        "the stranger was killed by tickhost: {status:?}"
    );
}
