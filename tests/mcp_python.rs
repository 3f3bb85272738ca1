//! `tickloop mcp` driven by a second real client: the official Python MCP
//! SDK (`mcp` from PyPI, pinned).
//!
//! * `tests/mcp_python/client.py`, the handshake revisions (`initialize`,
//!   what the SDK's `mode="legacy"` does): the SDK rejected the whole
//!   `tools/list` when one Tick declared a `{"type":"string"}` schema
//!   (issue 14), so the script lists tools with such a Tick and one with a
//!   top-level `oneOf` running, calls tools, and follows a state resource
//!   across close, forget and reopen.
//! * `tests/mcp_python/client_2026.py`, MCP 2026-07-28 (issue 28): tools,
//!   TickRead, a per-Tick call and the state resource with
//!   `mode="2026-07-28"`; `subscriptions/listen` hearing a change made with
//!   `tickloop call` and a Tick opening; the default mode negotiating
//!   2026-07-28 (and 2025-11-25 under `--max-protocol`); a held call asked
//!   about in the host (input required) and run once on accept, never on
//!   decline, and the CLI's answer standing when it came first; without
//!   elicitation, or with `[approval] ask_in_host = false`, the call waits
//!   for the CLI as before.
//!
//! The SDK is installed by the test itself into a virtual environment cached
//! in the target directory (`CARGO_TARGET_TMPDIR`), built in a temporary
//! directory and renamed into place so parallel runs do not race. When pip
//! cannot fetch it the test FAILS, saying so: it is never skipped.

mod common;

use common::python_sdk::sdk_python;
use common::{tick, tickloop_bin, wait_for, Host, MARK_VAR};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn the_python_sdk_lists_calls_and_follows_a_resource_with_strict_schemas() {
    let python = sdk_python();
    let host = Host::new();
    host.open("schemas", &tick("schemas.py"), &[]);
    // The person opens the counter and lets agents close it (the client
    // closes it below; by default an agent's close would wait for the
    // person: tests/consent.rs).
    host.ok(&[
        "open",
        "--id",
        "counter",
        "--agent-close",
        "auto",
        "--",
        &tick("counter.py"),
    ]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/client.py");
    let out = common::as_the_person(&mut Command::new(&python))
        .arg(&script)
        .arg(tickloop_bin())
        .arg(tick("counter.py"))
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP SDK client failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    let findings: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line:\n{stdout}\n{stderr}"));
    // `initialize` agrees on the newest handshake revision.
    assert_eq!(findings["protocol"], "2025-11-25", "{findings}");
    assert!(
        findings["unknown_tool_error"]
            .as_str()
            .is_some_and(|e| e.contains("Unknown tool")),
        "{findings}"
    );
}

/// The findings line of `client_2026.py SCENARIO` run to its end, with
/// `mcp_args` after `tickloop mcp --interval 200` and `home` as the
/// server's HOME (its config file) when given.
fn run_2026(host: &Host, scenario: &str, mcp_args: &[&str], home: Option<&Path>) -> Value {
    let child = client_2026(host, scenario, mcp_args, home)
        .spawn()
        .expect("run the Python MCP client");
    findings_of(child)
}

fn client_2026(host: &Host, scenario: &str, mcp_args: &[&str], home: Option<&Path>) -> Command {
    let python = sdk_python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/client_2026.py");
    let mut command = Command::new(&python);
    common::as_the_person(&mut command)
        .arg(&script)
        .arg(tickloop_bin())
        .arg(tick("counter.py"))
        .arg(scenario)
        .args(mcp_args)
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(home) = home {
        command.env("HOME", home);
    }
    command
}

fn findings_of(child: std::process::Child) -> Value {
    let out = child
        .wait_with_output()
        .expect("the Python MCP client ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP SDK client failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line:\n{stdout}\n{stderr}"))
}

#[test]
fn the_python_sdk_at_2026_07_28_calls_reads_and_listens() {
    let host = Host::new();
    host.open_counter("counter");
    let findings = run_2026(&host, "modern", &[], None);
    assert_eq!(findings["protocol"], "2026-07-28", "{findings}");
    assert_eq!(findings["tools_cache_scope"], "private", "{findings}");
    assert_eq!(findings["state_ttl_ms"], 200, "{findings}");
    assert_eq!(
        findings["resource_event"], "tick://counter/state",
        "{findings}"
    );
    assert_eq!(findings["tools_event"], true, "{findings}");
    assert_eq!(host.read("counter")["data"]["value"], 5);
}

#[test]
fn the_default_mode_negotiates_2026_07_28_and_max_protocol_makes_it_fall_back() {
    let host = Host::new();
    host.open_counter("counter");
    let findings = run_2026(&host, "auto", &[], None);
    assert_eq!(findings["protocol"], "2026-07-28", "{findings}");
    let capped = run_2026(&host, "auto", &["--max-protocol", "2025-11-25"], None);
    assert_eq!(capped["protocol"], "2025-11-25", "{capped}");
    let bad = host.run(&["mcp", "--max-protocol", "2025-13-01"]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("2026-07-28"), "{}", bad.stderr);
}

/// An instance `ask` whose mutating calls wait for approval.
fn open_asking(host: &Host) {
    host.open_asking_counter("ask");
}

#[test]
fn a_held_call_is_asked_about_in_the_host_and_runs_once_on_accept_never_on_decline() {
    let host = Host::new();
    open_asking(&host);
    let accepted = run_2026(&host, "accept", &[], None);
    let question = accepted["asked"][0].as_str().unwrap_or_default();
    // What happens in plain words, who asks, the deadline, the details.
    for part in [
        "Add an integer to the counter? · hosted:ask",
        "Asked by ",
        "Answer by ",
        "increment {\"amount\":4} rev 1",
    ] {
        assert!(question.contains(part), "{part}: {accepted}");
    }
    assert_eq!(
        accepted["asked"].as_array().map(Vec::len),
        Some(1),
        "{accepted}"
    );
    assert_eq!(accepted["structured"]["outcome"], "result", "{accepted}");
    assert_eq!(host.logged_calls("ask", "increment"), 1);

    let declined = run_2026(&host, "decline", &[], None);
    assert_eq!(declined["is_error"], true, "{declined}");
    assert_eq!(
        declined["structured"]["outcome"], "not_executed",
        "{declined}"
    );
    assert_eq!(
        declined["structured"]["error"]["code"], -32010,
        "{declined}"
    );
    assert_eq!(
        declined["structured"]["error"]["data"]["by"], "mcp-host",
        "{declined}"
    );
    assert_eq!(host.logged_calls("ask", "increment"), 1);
    assert_eq!(host.read("ask")["data"]["value"], 4);
}

/// Approves the one call of `ask` that waits, with the CLI.
fn approve_with_the_cli(host: &Host) {
    let call = wait_for("a call of ask to wait for approval", || {
        let out = host.run(&["approvals"]);
        out.stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|h| h["instance"] == "hosted:ask")
            .and_then(|h| h["call"].as_str().map(str::to_string))
    });
    host.ok(&["approve", "ask", &call]);
}

#[test]
fn without_elicitation_or_with_ask_in_host_off_a_held_call_waits_for_the_cli() {
    let host = Host::new();
    open_asking(&host);
    // No elicitation declared: the call waits, as in the older revisions.
    let child = client_2026(&host, "plain", &[], None)
        .spawn()
        .expect("run the Python MCP client");
    approve_with_the_cli(&host);
    let plain = findings_of(child);
    assert_eq!(plain["structured"]["outcome"], "result", "{plain}");

    // Elicitation declared, but the config says not to ask in the host.
    let home = host.scratch().join("home");
    std::fs::create_dir_all(home.join(".config/tickloop")).expect("config dir");
    std::fs::write(
        home.join(".config/tickloop/config.toml"),
        "[approval]\nask_in_host = false\n",
    )
    .expect("config file");
    let child = client_2026(&host, "accept", &[], Some(&home))
        .spawn()
        .expect("run the Python MCP client");
    approve_with_the_cli(&host);
    let quiet = findings_of(child);
    assert_eq!(quiet["asked"], serde_json::json!([]), "{quiet}");
    assert_eq!(quiet["structured"]["outcome"], "result", "{quiet}");
    assert_eq!(host.logged_calls("ask", "increment"), 2);
}

#[test]
fn an_answer_given_elsewhere_first_stands_and_the_retry_gets_the_outcome() {
    use std::io::{BufRead, BufReader, Write};
    let host = Host::new();
    open_asking(&host);
    let mut child = client_2026(&host, "elsewhere", &[], None)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("run the Python MCP client");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    while line.trim() != "ASKED" {
        line.clear();
        let read = stdout.read_line(&mut line).expect("read the client");
        if read == 0 {
            let out = child.wait_with_output().expect("the client ends");
            panic!(
                "the client ended before the question: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    approve_with_the_cli(&host);
    let mut stdin = child.stdin.take().expect("stdin");
    writeln!(stdin, "APPROVED").expect("tell the client");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).expect("read the client");
    let out = child.wait_with_output().expect("the client ends");
    assert!(
        out.status.success(),
        "the Python MCP SDK client failed ({}):\nstdout: {rest}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let findings: Value = rest
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line: {rest}"));
    assert!(
        findings["question"]
            .as_str()
            .is_some_and(|q| q.contains("· increment {")),
        "{findings}"
    );
    assert!(
        findings["made_up_state"]
            .as_str()
            .is_some_and(|e| e.contains("requestState")),
        "{findings}"
    );
    // The CLI approved first: the host's decline came too late.
    assert_eq!(findings["structured"]["outcome"], "result", "{findings}");
    assert_eq!(host.logged_calls("ask", "increment"), 1);
}

/// Issue 27 in MCP 2026-07-28: an agent's TickManage `input` into a shell
/// the person opened waits for the person, is asked in the host through
/// `input_required`, and is typed only once accepted.
#[test]
fn an_agents_typing_into_the_persons_shell_is_asked_in_the_host_in_2026() {
    let host = Host::new();
    host.open_bash("mine");
    let typed = run_2026(&host, "typing", &[], None);
    assert_eq!(typed["is_error"], false, "{typed}");
    let question = typed["asked"][0].as_str().unwrap_or_default();
    assert!(
        question.contains("into shell:mine?") && question.contains("typed-"),
        "{typed}"
    );
    host.wait_screen("shell:mine", "typed-42");
    let log = host.run(&["approvals", "--log", "shell:mine"]);
    assert!(log.stdout.contains("\"by\":\"mcp-host\""), "{}", log.stdout);
}

/// Issue 38: TickManage `run`, `wait` and `input` with `keys` on a bash
/// through the Python SDK, TickRead of the shell's state, its state
/// resource followed by a subscription, and a wait the client abandons
/// ending in tickhost.
#[test]
fn the_python_sdk_runs_waits_and_presses_keys_in_a_shell() {
    let python = sdk_python();
    let host = Host::new();
    let home = host.scratch().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/client_shell.py");
    let out = common::as_the_person(&mut Command::new(&python))
        .arg(&script)
        .arg(tickloop_bin())
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env(MARK_VAR, host.runtime())
        .env("HOME", &home)
        .current_dir(host.scratch())
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP SDK client failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    let findings: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line:\n{stdout}\n{stderr}"));
    assert!(
        findings["run_text"]
            .as_str()
            .is_some_and(|t| t.starts_with("`echo from-mcp; false` EXITED 1")),
        "{findings}"
    );
    assert_eq!(findings["words_output"], "a b|c|", "{findings}");
    assert_eq!(
        findings["read_commands"],
        serde_json::json!(["echo from-mcp; false", "printf '%s|' 'a b' c"]),
        "{findings}"
    );
    assert_eq!(findings["matched"], "keyed", "{findings}");
    assert!(
        findings["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|u| u == "tick://shell:sh/state")),
        "{findings}"
    );
    assert_eq!(findings["subscribed_exit"], 3, "{findings}");
    assert!(findings["abandoned"].is_string(), "{findings}");
    assert_eq!(findings["quiet"], false, "{findings}");
    // The abandoned wait's connection was dropped by tickhost.
    wait_for("tickhost to drop the abandoned wait", || {
        let log = std::fs::read_to_string(host.runtime().join("tickhost.log")).ok()?;
        log.contains("shell:sh: the client of a wait went away")
            .then_some(())
    });
}
