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
