//! The launcher end to end, in-process: real Ticks (Python standard library,
//! `tests/ticks/`), real PTYs, the real socket protocol.

mod common;

use common::*;
use launcher::RunOutcome;
use serde_json::json;
use tickloop_client::framing::read_text_line_blocking;
use tickloop_proto::wire::LaunchReport;
use tickloop_proto::wire::{
    CallOutcome, CallRequest, ClientReply, ErrorKind, Hello, HelloReply, LauncherMessage,
    LauncherRecord, LauncherRequest, Role,
};

fn ready_status(launched: &Launched) -> tickloop_proto::wire::LauncherStatus {
    ready(launched).0
}

/// The status and catalog the launcher reported ready with.
fn ready(
    launched: &Launched,
) -> (
    tickloop_proto::wire::LauncherStatus,
    Option<tickloop_proto::wire::Catalog>,
) {
    match &launched.report {
        LaunchReport::Ready {
            socket,
            status,
            catalog,
        } => {
            assert_eq!(socket, &launched.socket);
            ((**status).clone(), catalog.as_ref().map(|c| (**c).clone()))
        }
        LaunchReport::Failed { reason, screen } => {
            panic!("the launch failed: {reason}; screen: {screen}")
        }
    }
}

#[test]
fn note_tick_describe_read_call_and_close() {
    let launched = launch_tick("hosted:note", &["python3", &note_tick()]);
    let (status, catalog) = ready(&launched);
    assert_eq!(status.instance, "hosted:note");
    assert!(
        status.argv[0].starts_with('/'),
        "argv[0] resolved: {:?}",
        status.argv
    );
    let catalog = catalog.expect("a Tick reports its catalog with Ready");
    assert_eq!(
        catalog.descriptor.as_ref().map(|d| d["kind"].clone()),
        Some(json!("example.note"))
    );
    assert_eq!(status.revision, catalog.revision);
    assert!(status.revision.is_some());
    assert_eq!(status.state.as_ref().map(|s| s.seq), Some(0));
    assert!(status.ended.is_none());

    // The record file sits beside the socket, in the instance's folder.
    let record: LauncherRecord = serde_json::from_slice(
        &std::fs::read(tickloop_client::paths::InstanceFiles::of_socket(&launched.socket).record)
            .expect("the record file"),
    )
    .expect("a LauncherRecord");
    assert_eq!(record.instance, "hosted:note");
    assert!(record.status.ended.is_none());

    // Socket mode 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&launched.socket)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let mut host = Host::connect(&launched.socket);
    // The catalog, then the status, come right after the hello.
    match host.next_message() {
        Some(LauncherMessage::Catalog(sent)) => assert_eq!(*sent, catalog),
        other => panic!("expected the catalog first, got {other:?}"),
    }
    match host.next_message() {
        Some(LauncherMessage::Status(status)) => assert_eq!(status.pid, record.status.pid),
        other => panic!("expected a status next, got {other:?}"),
    }
    assert_eq!(
        record.catalog.as_ref(),
        Some(&catalog),
        "the record keeps the catalog"
    );

    let descriptor = host.ok(LauncherRequest::Describe);
    assert_eq!(descriptor["title"], "Note");
    let read = host.ok(LauncherRequest::Read);
    assert_eq!(read["seq"], 0);
    assert_eq!(read["data"], json!(null));
    assert!(read["at"].is_string());

    let result = host.call("set_note", json!({"text": "hello"}));
    assert_eq!(result, json!({"saved": true}));
    let status = host.wait_status(|s| s.updates_total >= 1);
    assert_eq!(
        status.state.as_ref().map(|s| s.data.clone()),
        Some(json!({"note": "hello"}))
    );

    // A host-side refusal: args failing the schema are never sent.
    match host.ask(LauncherRequest::Call(CallRequest {
        tool: "set_note".into(),
        args: json!({"text": 3}),
        revision: "1".into(),
    })) {
        ClientReply::Call(CallOutcome::NotExecuted { error }) => assert_eq!(error.code, -32602),
        other => panic!("expected not executed, got {other:?}"),
    }

    // A malformed line with an id gets an error; the connection goes on.
    host.send_line(r#"{"id":77,"request":{"op":"nonsense"}}"#);
    match host.wait_reply(77) {
        ClientReply::Error(e) => assert_eq!(e.kind, ErrorKind::BadRequest),
        other => panic!("expected bad_request, got {other:?}"),
    }

    let pid = status.pid as i32;
    let ended = host.ok(LauncherRequest::Close);
    assert_eq!(ended["kind"], "closed");
    assert_eq!(ended["reason"], "closed by the user");
    assert!(pid_gone(pid), "the Tick is gone when close answers");
    let final_status = host.wait_status(|s| s.ended.is_some());
    assert_eq!(
        final_status.ended.as_ref().map(|e| e.kind.as_str()),
        Some("closed")
    );
    // Then the launcher hangs up and returns.
    while host.next_message().is_some() {}
    match launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns")
    {
        RunOutcome::Ended(info) => assert_eq!(info.kind.as_str(), "closed"),
        other => panic!("{other:?}"),
    }
    let record: LauncherRecord = serde_json::from_slice(
        &std::fs::read(tickloop_client::paths::InstanceFiles::of_socket(&launched.socket).record)
            .expect("the record file"),
    )
    .expect("a LauncherRecord");
    assert_eq!(record.status.ended.map(|e| e.kind.as_str()), Some("closed"));
}

#[test]
fn probe_sees_its_terminal_environment_and_descriptors() {
    // The real interpreter (not a shim that edits the environment), and an
    // environment small enough to compare whole.
    let python = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    let python = String::from_utf8_lossy(&python.stdout).trim().to_string();
    let (dir, mut spec) = spec("hosted:probe", false, &[&python, "probe.py"]);
    spec.program.env = vec![
        ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".into(), "/nonexistent-home".into()),
        ("TICKLOOP_TEST_MARK".into(), "marked".into()),
        ("TERM".into(), "dumb".into()),
    ];
    let launched = launch(dir, spec);
    ready_status(&launched);
    let mut host = Host::connect(&launched.socket);
    let info = host.call("info", json!({}));
    assert_eq!(info["stty"], "30 120", "{info}");
    assert_eq!(info["instance"], "hosted:probe");
    assert_eq!(info["term"], "xterm-256color");
    assert_eq!(
        info["fds"],
        json!([0, 1, 2]),
        "no launcher descriptor leaks"
    );
    // Its own session and process group.
    assert_eq!(info["pid"], info["pgid"]);
    assert_eq!(info["pid"], info["sid"]);
    // The emulator answered CSI 6n (a position report: ESC [ row ; col R).
    let cpr = info["cpr"].as_str().expect("cpr");
    assert!(cpr.starts_with("\u{1b}[") && cpr.ends_with('R'), "{cpr:?}");
    // The environment is exactly the spec's plus ours (Python may add
    // LC_CTYPE when it coerces a C locale).
    let env = info["env"].as_object().expect("env");
    let mut keys: Vec<&str> = env
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "LC_CTYPE")
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "HOME",
            "PATH",
            "TERM",
            "TICKLOOP_INSTANCE_ID",
            "TICKLOOP_TEST_MARK"
        ]
    );
    assert_eq!(env["TICKLOOP_TEST_MARK"], "marked");
    assert_eq!(env["HOME"], "/nonexistent-home");

    // stderr text is on the screen, and typed input reaches the Tick.
    host.wait_screen("probe: stty size 30 120");
    let typed = host.ok(LauncherRequest::Input {
        text: "hello there\r".into(),
    });
    assert_eq!(typed, json!({"ok": true, "bytes": 12}));
    let screen = host.wait_screen("probe: typed hello there");
    assert_eq!(screen["rows"], 30);
    assert_eq!(screen["cols"], 120);
    assert!(screen["cursor"]["row"].is_u64());

    host.ok(LauncherRequest::Close);
    launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns");
}

#[test]
fn close_kills_a_stubborn_tick_and_its_children() {
    let launched = launch_tick("hosted:stubborn", &["python3", "probe.py", "--ignore-term"]);
    let status = ready_status(&launched);
    let mut host = Host::connect(&launched.socket);
    let child = host.call("spawn_child", json!({}))["pid"]
        .as_i64()
        .expect("child pid") as i32;
    assert!(!pid_gone(child));
    let ended = host.ok(LauncherRequest::Close);
    assert_eq!(ended["kind"], "closed");
    assert!(pid_gone(status.pid as i32), "the Tick was killed");
    assert!(wait_gone(child), "the Tick's child was killed");
    launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns");
}

#[test]
fn a_tick_that_exits_ends_the_session() {
    // Answers describe and read, then exits with status 3 at the first call.
    let script = r#"
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r["method"] == "tick/describe":
        res = {"protocol": 3, "kind": "t.exit", "title": "Exit", "description": "d", "revision": "1",
               "tools": [{"name": "quit", "description": "q", "mutates": True,
                          "input_schema": {"type": "object"}}]}
    elif r["method"] == "tick/read":
        res = {"seq": 0, "data": {}}
    else:
        sys.exit(3)
    print(json.dumps({"jsonrpc": "2.0", "id": r["id"], "result": res}), flush=True)
"#;
    let launched = launch_tick("hosted:exit", &["python3", "-c", script]);
    ready_status(&launched);
    let mut host = Host::connect(&launched.socket);
    match host.ask(LauncherRequest::Call(CallRequest {
        tool: "quit".into(),
        args: json!({}),
        revision: "1".into(),
    })) {
        ClientReply::Call(CallOutcome::Unknown { .. }) => {}
        other => panic!("expected an unknown outcome, got {other:?}"),
    }
    let status = host.wait_status(|s| s.ended.is_some());
    let ended = status.ended.expect("ended");
    assert_eq!(ended.kind.as_str(), "exited");
    assert!(ended.reason.contains("status 3"), "{}", ended.reason);
    match launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns")
    {
        RunOutcome::Ended(info) => assert_eq!(info.kind.as_str(), "exited"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_program_fails_to_open() {
    let launched = launch_tick("hosted:nothing", &["no-such-program-tickloop-test"]);
    match &launched.report {
        LaunchReport::Failed { reason, .. } => {
            assert!(reason.contains("no-such-program-tickloop-test"), "{reason}");
            assert!(reason.contains("no such program"), "{reason}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    assert!(!launched.socket.exists());
    assert!(
        !tickloop_client::paths::InstanceFiles::of_socket(&launched.socket)
            .record
            .exists()
    );
}

#[test]
fn non_protocol_output_fails_the_open_with_the_screen() {
    let script = "import sys\nsys.stderr.write('something went wrong here\\n')\nsys.stderr.flush()\nprint('hello, not json', flush=True)\nimport time\ntime.sleep(30)\n";
    let launched = launch_tick("hosted:chatty", &["python3", "-c", script]);
    match &launched.report {
        LaunchReport::Failed { reason, screen } => {
            assert!(!reason.is_empty());
            assert!(
                screen.contains("something went wrong here"),
                "screen: {screen:?}"
            );
            assert!(screen.chars().count() <= 256);
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    match launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns")
    {
        RunOutcome::Failed(_) => {}
        other => panic!("{other:?}"),
    }
    assert!(
        !tickloop_client::paths::InstanceFiles::of_socket(&launched.socket)
            .record
            .exists()
    );
}

#[test]
fn shell_program_has_a_screen_and_input_but_no_protocol() {
    let (dir, spec) = spec(
        "shell:sh",
        true,
        &[
            "sh",
            "-c",
            "echo shell says hi; read x; echo got $x; read y",
        ],
    );
    let launched = launch(dir, spec);
    let (status, catalog) = ready(&launched);
    assert!(status.revision.is_none() && catalog.is_none());
    let mut host = Host::connect(&launched.socket);
    host.wait_screen("shell says hi");
    // A plain sh: `describe` says what it is and what works with it.
    match host.ask(LauncherRequest::Describe) {
        ClientReply::Ok(described) => {
            assert_eq!(described["shell"], serde_json::Value::Null);
            assert_eq!(
                described["no_integration"],
                "sh is a plain shell; Tickloop's integration is for bash, zsh and fish"
            );
            assert_eq!(described["commands"][0], "screen", "{described}");
        }
        other => panic!("expected a description, got {other:?}"),
    }
    // `read` needs integration: what works instead is named, and why.
    match host.ask(LauncherRequest::Read) {
        ClientReply::Error(e) => {
            assert_eq!(e.kind, ErrorKind::NotATick);
            assert!(
                e.message
                    .starts_with("shell:sh (sh) has no shell integration (sh is a plain shell")
                    && e.message.contains("`screen`, `input`"),
                "{}",
                e.message
            );
        }
        other => panic!("expected not_a_tick, got {other:?}"),
    }
    host.ok(LauncherRequest::Input {
        text: "abc\r".into(),
    });
    host.wait_screen("got abc");
    host.ok(LauncherRequest::Input { text: "\r".into() });
    let status = host.wait_status(|s| s.ended.is_some());
    let ended = status.ended.expect("ended");
    assert_eq!(ended.kind.as_str(), "exited");
    assert_eq!(ended.reason, "the program exited with status 0");
    launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns");
}

#[test]
fn clients_are_refused_and_several_hosts_get_status() {
    let launched = launch_tick("hosted:note2", &["python3", &note_tick()]);
    ready_status(&launched);

    // A client (a role of tickhost's socket) is refused with a reason.
    let mut client = std::os::unix::net::UnixStream::connect(&launched.socket).expect("connect");
    client.set_read_timeout(Some(WAIT)).expect("timeout");
    use std::io::Write;
    writeln!(
        client,
        "{}",
        serde_json::to_string(&Hello::new(Role::Client)).expect("json")
    )
    .expect("write");
    let line = read_text_line_blocking(&mut std::io::BufReader::new(client), MAX_LINE)
        .expect("a reply")
        .expect("a reply line");
    let reply: HelloReply = serde_json::from_str(&line).expect("HelloReply");
    assert!(reply.refused.is_some_and(|r| r.contains("tickhost")));

    // Two hosts; an update reaches both.
    let mut a = Host::connect(&launched.socket);
    let mut b = Host::connect(&launched.socket);
    a.call("set_note", json!({"text": "both"}));
    a.wait_status(|s| s.updates_total == 1);
    b.wait_status(|s| s.updates_total == 1);

    // Garbage without an id closes that connection only.
    b.send_line("this is not json");
    while b.next_message().is_some() {}
    assert_eq!(a.ok(LauncherRequest::Read)["data"], json!({"note": "both"}));

    a.ok(LauncherRequest::Close);
    launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns");
}

/// A Tick that writes 2 MB to its terminal before it answers, then floods
/// 20,000 updates at its first call.
const LOUD: &str = r#"
import json, sys
sys.stderr.write(("x" * 99 + "\n") * 20000)
sys.stderr.write("loud: done drawing\n")
sys.stderr.flush()
seq = 0
for line in sys.stdin:
    r = json.loads(line)
    if r["method"] == "tick/describe":
        res = {"protocol": 3, "kind": "t.loud", "title": "Loud", "description": "d", "revision": "1",
               "tools": [{"name": "flood", "description": "f", "mutates": True,
                          "input_schema": {"type": "object"}}]}
    elif r["method"] == "tick/read":
        res = {"seq": seq, "data": {"n": seq}}
    else:
        out = []
        for _ in range(20000):
            seq += 1
            out.append(json.dumps({"jsonrpc": "2.0", "method": "tick/update",
                                   "params": {"seq": seq, "data": {"n": seq}}}))
        sys.stdout.write("\n".join(out) + "\n")
        res = {"sent": seq}
    print(json.dumps({"jsonrpc": "2.0", "id": r["id"], "result": res}), flush=True)
"#;

#[test]
fn terminal_output_is_drained_and_update_floods_coalesce() {
    let launched = launch_tick("hosted:loud", &["python3", "-c", LOUD]);
    ready_status(&launched);
    let mut host = Host::connect(&launched.socket);
    host.wait_screen("loud: done drawing");
    assert_eq!(host.call("flood", json!({})), json!({"sent": 20000}));
    // Count the status lines it took to see the last update: coalesced, so
    // (much) fewer than the updates.
    let mut statuses = 0;
    loop {
        match host.next_message() {
            Some(LauncherMessage::Status(status)) => {
                statuses += 1;
                if status.updates_total == 20000 {
                    assert_eq!(status.state.map(|s| s.seq), Some(20000));
                    break;
                }
            }
            Some(LauncherMessage::Reply(_)) => {}
            Some(LauncherMessage::Catalog(_)) => {}
            None => panic!("the launcher hung up"),
        }
    }
    // The catalog went out once, after the hello, not with every status.
    assert_eq!(
        host.catalogs_seen, 1,
        "the catalog is sent only when it changes"
    );
    // At most one status is published per turn of the launcher's loop, and a
    // turn takes in a whole read of the Tick's stdout (the 1.4 MB of updates
    // arrive in reads of pipe-sized pieces): a few hundred turns at most.
    // One status per update (no coalescing) would be 20000.
    println!("{statuses} statuses for 20000 updates");
    assert!(
        statuses <= 2000,
        "{statuses} statuses for 20000 updates: not coalesced"
    );
    host.ok(LauncherRequest::Close);
    launched
        .outcome
        .recv_timeout(WAIT)
        .expect("the run returns");
}

/// Issue 42: a Tick that stops reading its stdin, under a thousand calls.
/// What it was sent waits in a queue bounded in bytes: once more than
/// 256 KiB waits unread, writing is held, what waits is refused unwritten,
/// and every new call is refused at once, saying why. Every call gets an
/// answer; none is queued for without bound.
#[test]
fn a_tick_that_stops_reading_gets_refusals_not_a_growing_queue() {
    let deaf = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/ticks/deaf.py")
        .to_string_lossy()
        .into_owned();
    let (dir, mut spec) = spec("hosted:deaf", false, &[&python(), &deaf]);
    // Calls time out fast, so their slots free up and more is written.
    spec.call_timeout_ms = Some(200);
    let launched = launch(dir, spec);
    let mut host = Host::connect(&launched.socket);
    assert_eq!(host.call("note", json!({"text": "first"}))["deaf"], true);
    // It reads nothing more from here on.
    let text = "n".repeat(16 * 1024);
    let ids: Vec<u64> = (0..1000)
        .map(|_| {
            host.send(LauncherRequest::Call(CallRequest {
                tool: "note".into(),
                args: json!({ "text": text }),
                revision: "1".into(),
            }))
        })
        .collect();
    let (mut busy, mut unknown, mut not_reading) = (0, 0, Vec::new());
    for id in ids {
        match host.wait_reply(id) {
            ClientReply::Call(CallOutcome::NotExecuted { error }) => {
                if error.message.contains("not reading its stdin") {
                    not_reading.push(error.message);
                } else {
                    assert!(error.message.contains("already waiting"), "{error:?}");
                    busy += 1;
                }
            }
            ClientReply::Call(CallOutcome::Unknown { .. }) => unknown += 1,
            other => panic!("call {id} answered {other:?}"),
        }
    }
    // Some were written and timed out unanswered; how many were refused
    // as busy first depends on how fast they came.
    assert!(unknown > 0, "busy {busy}, unknown {unknown}");
    assert!(
        !not_reading.is_empty(),
        "no call was refused for the unread stdin"
    );
    // The queue's size, as each refusal reports it: never more than the
    // bound and what one turn of the loop writes (the 8 in flight).
    for message in &not_reading {
        let unread: usize = message
            .split("stdin: ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no byte count in {message}"));
        assert!(unread <= 256 * 1024 + 8 * 17 * 1024, "{message}");
    }
    // A new call is refused at once, and the instance still runs.
    let late = host.ask(LauncherRequest::Call(CallRequest {
        tool: "note".into(),
        args: json!({"text": "late"}),
        revision: "1".into(),
    }));
    assert!(
        matches!(&late, ClientReply::Call(CallOutcome::NotExecuted { error }) if error.message.contains("not reading")),
        "{late:?}"
    );
    let status = host.wait_status(|_| true);
    assert!(status.ended.is_none(), "{status:?}");
    host.ok(LauncherRequest::Close);
}
