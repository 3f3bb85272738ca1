//! The CLI contract (docs/cli.md), row by row: `open` (Ticks and `--shell`),
//! `list`, `describe`, `read`, `call` (exit 0), `watch`, `screen`, `input`,
//! `close`, `shutdown`, ids and bare names, usage errors (exit 2), and the
//! JSON error object of exit 1 — driven through the real `tickloop` binary.

mod common;

use common::*;
use serde_json::{json, Value};

#[test]
fn open_prints_the_instance_with_the_contract_fields() {
    let host = Host::new();
    let log = host.log_path("counter");
    let v = host.ok(&["open", "--", &tick("counter.py"), "--log", &log]);
    assert_eq!(v["id"], "hosted:counter", "{v}");
    assert_eq!(v["kind"], "example.counter", "{v}");
    assert_eq!(v["title"], "Counter", "{v}");
    assert_eq!(v["revision"], "1", "{v}");
    assert_eq!(v["seq"], 0, "{v}");
    assert_eq!(v["state"], "running", "{v}");
    let pid = int(&v["pid"], "pid");
    let launcher_pid = int(&v["launcher_pid"], "launcher_pid");
    assert!(pid > 0 && launcher_pid > 0 && pid != launcher_pid, "{v}");
    assert!(alive(pid as i32), "the Tick's pid {pid} is not running");
    assert!(
        alive(launcher_pid as i32),
        "the launcher pid {launcher_pid} is not running"
    );
}

#[test]
fn open_without_id_names_instances_after_the_program_made_unique() {
    let host = Host::new();
    let a = host.ok(&["open", "--", &tick("counter.py")]);
    let b = host.ok(&["open", "--", &tick("counter.py")]);
    let c = host.ok(&["open", "--", &tick("note.py")]);
    assert_eq!(a["id"], "hosted:counter");
    assert_eq!(b["id"], "hosted:counter-2");
    assert_eq!(c["id"], "hosted:note");
}

#[test]
fn open_with_an_id_already_in_use_fails_with_bad_request() {
    let host = Host::new();
    host.open_counter("dup");
    let out = host.run(&["open", "--id", "dup", "--", &tick("counter.py")]);
    out.expect_error(1, "bad_request");
    assert_eq!(host.list().len(), 1, "the refused open left an instance");
}

#[test]
fn open_of_a_program_that_does_not_exist_fails_with_open_failed() {
    let host = Host::new();
    let out = host.run(&["open", "--id", "ghost", "--", "/nonexistent/tick-program"]);
    out.expect_error(1, "open_failed");
    assert!(host.list().is_empty(), "failed open is listed");
}

#[test]
fn a_mistyped_open_option_is_refused_not_run_as_the_program() {
    let host = Host::new();
    let out = host.run(&["open", "--aproove", "ask", "--", "sh"]);
    let err = out.expect_error(2, "bad_request");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("unknown option --aproove"), "{err}");
    assert!(host.list().is_empty(), "the refused open left an instance");
    // A typo of a known option names the one meant.
    let out = host.run(&["open", "--histroy", "5", "--", "sh"]);
    let err = out.expect_error(2, "bad_request");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("did you mean --history?"), "{err}");
    assert!(host.list().is_empty(), "the refused open left an instance");
}

#[test]
fn list_shows_every_instance_sorted_by_id_with_the_contract_fields() {
    let host = Host::new();
    let b = host.open_counter("b");
    host.open_counter("a");
    host.ok(&[
        "call",
        "b",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    let list = wait_for("b's update to be listed", || {
        let list = host.list();
        (list.len() == 2 && list[1]["seq"] == 1).then_some(list)
    });
    let ids: Vec<&str> = list.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["hosted:a", "hosted:b"]);
    let e = &list[1];
    assert_eq!(e["kind"], "example.counter");
    assert_eq!(e["title"], "Counter");
    assert_eq!(e["state"], "running");
    assert_eq!(e["ended"], Value::Null);
    assert_eq!(e["seq"], 1);
    assert_eq!(e["pid"], b["pid"]);
    assert_eq!(e["launcher_pid"], b["launcher_pid"]);
    assert_eq!(e["views"], 0);
    assert_eq!(e["calls_in_flight"], 0);
    assert_eq!(e["updates"], 1);
    assert!(e["last_update_at"].is_string(), "last_update_at: {e}");
    assert_eq!(e["revision"], "1");
    let argv = e["argv"].as_array().expect("argv is an array");
    assert!(
        argv.iter()
            .any(|a| a.as_str().is_some_and(|a| a.ends_with("counter.py"))),
        "{e}"
    );
    assert!(
        argv[0].as_str().is_some_and(|a| a.starts_with('/')),
        "argv[0] not absolute: {e}"
    );
    assert_eq!(
        e["cwd"],
        host.scratch().to_str().unwrap(),
        "cwd defaults to the CLI's"
    );
    assert!(e["started_at"].is_string(), "started_at: {e}");
    assert_eq!(
        list[0]["last_update_at"],
        Value::Null,
        "no update yet: {}",
        list[0]
    );
}

#[test]
fn open_with_cwd_starts_the_tick_there() {
    let host = Host::new();
    let dir = host.scratch().join("elsewhere");
    std::fs::create_dir(&dir).unwrap();
    let dir = dir.to_str().unwrap();
    host.ok(&["open", "--id", "c", "--cwd", dir, "--", &tick("counter.py")]);
    assert_eq!(host.entry("hosted:c").unwrap()["cwd"], dir);
}

#[test]
fn describe_prints_the_validated_descriptor_as_the_tick_sent_it() {
    let host = Host::new();
    host.open_counter("c");
    let d = host.ok(&["describe", "hosted:c"]);
    assert_eq!(d["protocol"], 3);
    assert_eq!(d["kind"], "example.counter");
    assert_eq!(d["title"], "Counter");
    assert_eq!(d["description"], "Keyboard and tool calls share one value.");
    assert_eq!(d["revision"], "1");
    assert_eq!(d["recover_with"], "history");
    assert_eq!(
        d["state"],
        json!({"series":[{"path":"/recent","newest":"last"}]})
    );
    let tools = d["tools"].as_array().expect("tools");
    let increment = tools
        .iter()
        .find(|t| t["name"] == "increment")
        .expect("increment");
    assert_eq!(
        *increment,
        json!({"name":"increment","description":"Add an integer to the counter.",
               "input_schema":{"type":"object","properties":{"amount":{"type":"integer"}},
                               "required":["amount"],"additionalProperties":false},
               "mutates":true})
    );
    assert!(tools
        .iter()
        .any(|t| t["name"] == "history" && t["mutates"] == false));
}

#[test]
fn read_prints_seq_data_and_at() {
    let host = Host::new();
    host.open_counter("c");
    let r = host.read("hosted:c");
    assert_eq!(r["seq"], 0);
    assert_eq!(r["data"], json!({"value":0,"recent":[]}));
    assert!(
        r["at"].is_string(),
        "at is the receipt time when the Tick sent none: {r}"
    );
}

#[test]
fn call_prints_the_result_and_the_change_shows_in_read() {
    let host = Host::new();
    host.open_counter("c");
    let v = host.ok(&[
        "call",
        "hosted:c",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(v, json!({"result":{"value":2}}));
    let r = host.read("hosted:c");
    assert_eq!(r["seq"], 1);
    assert_eq!(r["data"], json!({"value":2,"recent":[{"seq":1,"value":2}]}));
}

#[test]
fn call_without_args_json_sends_an_empty_object() {
    let host = Host::new();
    host.open_counter("c");
    let v = host.ok(&["call", "c", "history", "--revision", "1"]);
    assert_eq!(v, json!({"result":{"changes":[]}}));
    let logged = logged_requests(&host.log_path("c"));
    let call = logged
        .iter()
        .find(|r| r["method"] == "tick/call")
        .expect("logged call");
    assert_eq!(call["params"]["args"], json!({}));
    assert_eq!(call["params"]["revision"], "1");
}

#[test]
fn a_bare_name_works_as_the_id_when_unambiguous() {
    let host = Host::new();
    host.open_counter("solo");
    assert_eq!(host.read("solo")["seq"], 0);
    host.ok(&[
        "call",
        "solo",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(host.ok(&["describe", "solo"])["kind"], "example.counter");
}

#[test]
fn an_unknown_instance_exits_1_with_no_such_instance() {
    let host = Host::new();
    host.open_counter("c");
    for args in [
        vec!["read", "hosted:nope"],
        vec!["describe", "nope"],
        vec![
            "call",
            "nope",
            "increment",
            r#"{"amount":1}"#,
            "--revision",
            "1",
        ],
        vec!["screen", "nope"],
        vec!["input", "nope", "x"],
        vec!["close", "nope"],
    ] {
        host.run(&args).expect_error(1, "no_such_instance");
    }
}

#[test]
fn usage_errors_exit_2() {
    let host = Host::new();
    host.open_counter("c");
    for args in [
        vec!["frobnicate"],
        vec!["call", "c"],
        vec!["call", "c", "increment", r#"{"amount":1}"#],
        vec!["watch", "c", "--interval", "soon"],
        vec!["open"],
    ] {
        let out = host.run(&args);
        out.expect(2);
        assert!(
            !out.stderr.trim().is_empty(),
            "usage error without a reason: {out:#?}"
        );
    }
}

#[test]
fn args_json_that_is_not_json_is_a_usage_error_and_nothing_is_sent() {
    let host = Host::new();
    host.open_counter("c");
    let out = host.run(&["call", "c", "increment", "{amount: 1", "--revision", "1"]);
    out.expect(2);
    assert!(!out.stderr.trim().is_empty(), "{out:#?}");
    if !out.stdout.trim().is_empty() {
        assert!(out.json()["error"]["kind"].is_string(), "{out:#?}");
    }
    host.ok(&["call", "c", "history", "--revision", "1"]);
    assert_eq!(
        host.logged_call_count("c"),
        1,
        "only the history call reached the Tick"
    );
}

#[test]
fn screen_shows_the_tick_tui_as_text_and_as_json() {
    let host = Host::new();
    host.open_counter("c");
    let text = host.wait_screen("c", "value: 0");
    assert!(text.contains("Counter  (example.counter)"), "{text}");
    assert!(text.contains("size 120x30"), "{text}");
    assert!(
        text.lines().all(|l| l == l.trim_end()),
        "trailing blanks are trimmed: {text:?}"
    );
    assert!(
        !text.ends_with("\n\n"),
        "trailing empty rows are dropped: {text:?}"
    );
    let v = host.ok(&["screen", "c", "--json"]);
    assert_eq!(v["rows"], 30);
    assert_eq!(v["cols"], 120);
    assert!(
        v["cursor"]["row"].is_u64() && v["cursor"]["col"].is_u64(),
        "{v}"
    );
    let lines = v["lines"].as_array().expect("lines");
    assert!(lines.len() <= 30, "{v}");
    assert!(lines.iter().any(|l| l == "value: 0"), "{v}");
}

#[test]
fn tick_sees_its_instance_id_in_the_environment() {
    let host = Host::new();
    host.open_counter("envy");
    host.wait_screen("envy", "instance: hosted:envy");
}

#[test]
fn input_types_into_the_tick_and_keys_emit_updates() {
    let host = Host::new();
    host.open_counter("c");
    host.wait_screen("c", "value: 0");
    let v = host.ok(&["input", "c", "++"]);
    assert_eq!(v, json!({"ok":true,"bytes":2}));
    let r = host.wait_value("hosted:c", 2);
    assert_eq!(r["seq"], 2);
    host.wait_screen("c", "value: 2");
    let v = host.ok(&["input", "c", "é+"]);
    assert_eq!(v["bytes"], 3, "TEXT is sent as UTF-8 bytes: {v}");
    host.wait_value("hosted:c", 3);
}

#[test]
fn watch_delivers_the_current_state_first_then_each_change() {
    let host = Host::new();
    host.open_counter("c");
    let mut w = host.watch(&["hosted:c", "--interval", "100"]);
    let first = w.next();
    assert_eq!(first["instance"], "hosted:c", "{first}");
    assert_eq!(first["seq"], 0);
    assert_eq!(first["updates"], 0);
    assert_eq!(first["data"], json!({"value":0,"recent":[]}));
    assert_eq!(first["trimmed"], false);
    assert_eq!(first["recover_with"], "history");
    assert!(first["at"].is_string(), "{first}");
    host.ok(&[
        "call",
        "c",
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        "1",
    ]);
    let next = w.next();
    assert_eq!(next["instance"], "hosted:c");
    assert_eq!(next["seq"], 1);
    assert_eq!(next["updates"], 1);
    assert_eq!(next["merged"], 0);
    assert_eq!(
        next["data"],
        json!({"value":5,"recent":[{"seq":1,"value":5}]})
    );
}

#[test]
fn watch_reports_the_end_of_each_instance_and_exits_0_when_all_ended() {
    let host = Host::new();
    host.open_counter("a");
    host.open_counter("b");
    let mut w = host.watch(&["a", "b", "--interval", "50"]);
    let mut firsts = [w.next(), w.next()];
    firsts.sort_by_key(|v| v["instance"].as_str().unwrap_or("").to_string());
    assert_eq!(firsts[0]["instance"], "hosted:a");
    assert_eq!(firsts[1]["instance"], "hosted:b");
    host.ok(&["close", "a"]);
    let ended = w.next();
    assert_eq!(ended["instance"], "hosted:a", "{ended}");
    assert_eq!(ended["ended"]["kind"], "closed", "{ended}");
    host.ok(&["close", "b"]);
    let ended = w.next();
    assert_eq!(ended["instance"], "hosted:b", "{ended}");
    assert!(ended["ended"].is_object(), "{ended}");
    w.expect_end();
    assert_eq!(w.exit_code(), 0);
}

#[test]
fn close_ends_the_session_and_a_second_close_forgets_it() {
    let host = Host::new();
    let open = host.open_counter("c");
    let pid = int(&open["pid"], "pid") as i32;
    let v = host.ok(&["close", "c"]);
    assert_eq!(v["id"], "hosted:c");
    assert_eq!(v["ended"]["kind"], "closed", "{v}");
    assert!(
        v["ended"]["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{v}"
    );
    assert!(v["ended"]["at"].is_string(), "{v}");
    assert!(!alive(pid), "close waits until the Tick is gone");
    let e = host.entry("hosted:c").expect("ended instances stay listed");
    assert_eq!(e["state"], "ended");
    assert_eq!(e["ended"]["kind"], "closed");

    // An ended Tick reads as its last state, said so on stderr.
    let last = host.run(&["read", "c"]);
    last.expect(0);
    assert_eq!(
        last.json(),
        json!({"seq": 0, "data": {"value": 0, "recent": []}, "at": last.json()["at"], "ended": true})
    );
    assert!(
        last.stderr.contains(
            "tickloop: c has ended; this is its last state (`tickloop close c` forgets it)"
        ),
        "{last:#?}"
    );
    host.run(&["describe", "c"]).expect_error(1, "ended");
    let call = host.run(&[
        "call",
        "c",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    match call.code {
        1 => assert_eq!(call.json()["error"]["kind"], "ended", "{call:#?}"),
        3 => assert_eq!(call.json()["error"]["code"], -32600, "{call:#?}"),
        _ => panic!("call on an ended instance: {call:#?}"),
    }

    host.ok(&["close", "c"]);
    assert!(
        host.entry("hosted:c").is_none(),
        "second close forgets the instance"
    );
    host.run(&["read", "c"]).expect_error(1, "no_such_instance");
}

#[test]
fn shutdown_closes_every_instance_and_ends_tickhost() {
    let host = Host::new();
    let a = host.open_counter("a");
    let b = host.open_counter("b");
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    let v = host.ok(&["shutdown"]);
    assert_eq!(v["shutdown"], true, "{v}");
    assert_eq!(v["closed"], 2, "{v}");
    for (what, pid) in [
        ("Tick a", &a["pid"]),
        ("Tick b", &b["pid"]),
        ("launcher a", &a["launcher_pid"]),
        ("launcher b", &b["launcher_pid"]),
    ] {
        wait_gone(int(pid, what) as i32, what);
    }
    wait_gone(tickhost, "tickhost");
    let again = host.ok(&["shutdown"]);
    assert_eq!(
        again,
        json!({"shutdown":true,"closed":0,"was_running":false})
    );
    // shutdown when not running starts nothing (the spare launcher of the
    // tickhost that was shut down ends as its stdin closes).
    host.wait_nothing_left();
}

#[test]
fn open_shell_hosts_a_plain_program_with_screen_and_input() {
    let host = Host::new();
    let v = host.ok(&["open", "--shell", "--", "sh"]);
    assert_eq!(v["id"], "shell:sh", "{v}");
    assert_eq!(v["kind"], Value::Null);
    assert_eq!(v["title"], "sh");
    assert_eq!(v["revision"], Value::Null);
    assert_eq!(v["seq"], Value::Null);
    assert_eq!(v["state"], "running");
    assert!(v["pid"].is_i64() && v["launcher_pid"].is_i64(), "{v}");
    host.ok(&["input", "shell:sh", "echo $((6*7))\r"]);
    host.wait_screen("shell:sh", "42");
    let e = host.entry("shell:sh").expect("listed");
    assert_eq!(e["kind"], Value::Null);
    assert_eq!(e["state"], "running");
}

#[test]
fn read_and_call_on_a_shell_instance_exit_1_not_a_tick_and_describe_says_what_works() {
    let host = Host::new();
    host.ok(&["open", "--shell", "--id", "cat", "--", "cat"]);
    let described = host.ok(&["describe", "shell:cat"]);
    assert_eq!(
        described["no_integration"], "cat is not bash, zsh or fish",
        "{described}"
    );
    assert!(
        described["commands"]
            .as_array()
            .is_some_and(|c| c.contains(&Value::from("keys")) && !c.contains(&Value::from("read"))),
        "{described}"
    );
    host.run(&["read", "shell:cat"])
        .expect_error(1, "not_a_tick");
    host.run(&["call", "shell:cat", "x", "{}", "--revision", "1"])
        .expect_error(1, "not_a_tick");
    host.ok(&["input", "cat", "meow\r"]);
    // The terminal echoes the line, then cat prints it again.
    wait_for("cat to echo the line back", || {
        let s = host.screen("shell:cat");
        (s.lines().filter(|l| l.trim() == "meow").count() >= 2).then_some(())
    });
    let v = host.ok(&["close", "shell:cat"]);
    assert_eq!(v["id"], "shell:cat");
}

#[test]
fn the_appendix_b_note_tick_works_end_to_end() {
    let host = Host::new();
    let v = host.ok(&["open", "--", &tick("note.py")]);
    assert_eq!(v["id"], "hosted:note", "{v}");
    assert_eq!(v["kind"], "example.note", "{v}");
    let r = host.read("note");
    assert_eq!(r["seq"], 0);
    assert_eq!(r["data"], Value::Null);
    let mut w = host.watch(&["note", "--interval", "50"]);
    let first = w.next();
    assert_eq!(first["recover_with"], Value::Null, "{first}");
    let out = host.ok(&[
        "call",
        "note",
        "set_note",
        r#"{"text":"hello"}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(out, json!({"result":{"saved":true}}));
    let next = w.next();
    assert_eq!(next["seq"], 1);
    assert_eq!(next["data"], json!({"note":"hello"}));
    assert_eq!(host.read("note")["data"], json!({"note":"hello"}));
}
