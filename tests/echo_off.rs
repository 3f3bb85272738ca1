//! Nothing typed with echo off is kept (issue 49): at a prompt that does
//! not echo what is typed (`read -s` in a real bash, as sudo, ssh and gpg
//! ask for passwords), what the person or an agent types is kept, shown and
//! answered only as how much was typed. The secret is in no file under the
//! runtime directory (the activity and approval log kept at the end
//! included), in no `activity` answer (the CLI's, run as the agent, and
//! MCP's), not in the recording, and the person approving an agent's typing
//! there is told how much will be typed at a prompt with echo off.
//!
//! The prompt's echo is waited for on the terminal itself (the shell's
//! stdin, its termios polled until ECHO is off), never by sleeping.

mod common;

use common::*;
use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use serde_json::{json, Value};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

const PERSONS_SECRET: &str = "Hunter2Secret!";
const AGENTS_SECRET: &str = "AgentSecret99";
const CLAUDE: &[(&str, &str)] = &[("CLAUDECODE", "1")];

/// Whether the terminal on process `pid`'s stdin does not echo typing: ECHO
/// off in canonical mode, a password prompt's modes.
fn prompt_hides_typing(pid: i64) -> bool {
    let Ok(tty) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOCTTY)
        .open(format!("/proc/{pid}/fd/0"))
    else {
        return false;
    };
    // SAFETY: an all-zero termios is a valid value for tcgetattr to fill.
    let mut modes: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: tcgetattr writes one termios through a pointer to ours, on a
    // descriptor open for the call.
    let read = unsafe { libc::tcgetattr(tty.as_raw_fd(), &mut modes) } == 0;
    read && modes.c_lflag & libc::ECHO == 0 && modes.c_lflag & libc::ICANON != 0
}

/// Types `command` (and Enter) at the shell as the person, then waits until
/// the shell's terminal hides typing.
fn start_hidden_prompt(host: &Host, id: &str, command: &str) {
    host.ok(&["input", id, &format!("{command}\r")]);
    let pid = host.entry(id).expect("listed")["pid"]
        .as_i64()
        .expect("the shell's pid");
    wait_for("the prompt to turn echo off", || {
        prompt_hides_typing(pid).then_some(())
    });
}

/// Every file under `dir` that holds `needle` (`grep -rlF`).
fn files_holding(dir: &Path, needle: &str) -> Vec<String> {
    let out = std::process::Command::new("grep")
        .arg("-rlF")
        .arg("--")
        .arg(needle)
        .arg(dir)
        .output()
        .expect("grep runs");
    // 0: found, 1: found nowhere; anything else is grep failing.
    assert!(matches!(out.status.code(), Some(0 | 1)), "grep: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The `input` and `keys` entries of an activity record.
fn typing_entries(record: &Value) -> Vec<Value> {
    record["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["method"] == "input" || e["method"] == "keys")
        .cloned()
        .collect()
}

/// An MCP client of `tickloop mcp` on `host` (no elicitation: the person
/// answers elsewhere).
async fn mcp_client(host: &Host) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut command = tokio::process::Command::new(tickloop_bin());
    command
        .arg("mcp")
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch());
    for marker in AGENT_MARKERS {
        command.env_remove(marker);
    }
    let transport = rmcp::transport::TokioChildProcess::new(command).expect("start tickloop mcp");
    ().serve(transport).await.expect("initialize tickloop mcp")
}

/// TickManage with `arguments`: its result as JSON text.
async fn manage(
    client: &rmcp::service::RunningService<rmcp::RoleClient, ()>,
    arguments: Value,
) -> String {
    let Value::Object(arguments) = arguments else {
        panic!("arguments are an object")
    };
    let result = client
        .call_tool(CallToolRequestParams::new("TickManage").with_arguments(arguments))
        .await
        .expect("tools/call TickManage");
    serde_json::to_string(&result).expect("a result as JSON")
}

#[tokio::test(flavor = "multi_thread")]
#[allow(clippy::too_many_lines)] // one scenario: two prompts, every place typing is kept
async fn typing_at_a_prompt_with_echo_off_is_kept_as_how_much_never_what() {
    let host = Host::new();
    let cast = host.scratch().join("pw.cast");
    let cast_arg = cast.to_string_lossy().into_owned();
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "pw",
        "--record",
        &cast_arg,
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ]);
    let id = "shell:pw";

    // The person types a password at `read -s`.
    start_hidden_prompt(
        &host,
        id,
        "read -s -p 'Pass''word: ' first; echo \"first ${#first} echo-on-marker\"",
    );
    let typed = host.ok(&["input", id, PERSONS_SECRET]);
    assert_eq!(typed["echo_off"], true, "{typed}");
    let pressed = host.ok(&["keys", id, "Enter"]);
    assert_eq!(pressed["echo_off"], true, "{pressed}");
    host.wait_screen(id, "first 14 echo-on-marker");

    // An agent types one through MCP: held, the person asked how much.
    start_hidden_prompt(&host, id, "read -s second; echo \"second ${#second}\"");
    let agent = mcp_client(&host).await;
    let typing = tokio::spawn({
        let agent = agent.peer().clone();
        async move {
            let arguments = json!({"action": "input", "instance": id,
                "text": AGENTS_SECRET, "keys": ["Enter"]});
            let Value::Object(arguments) = arguments else {
                unreachable!()
            };
            agent
                .call_tool(CallToolRequestParams::new("TickManage").with_arguments(arguments))
                .await
                .map(|r| serde_json::to_string(&r).unwrap_or_default())
        }
    });
    let held = host.the_waiting_one(WAIT);
    assert_eq!(held["action"], "input", "{held}");
    assert_eq!(held["args"], json!({}), "{held}");
    assert_eq!(
        held["echo_off"],
        json!({"characters": 13, "keys": 1}),
        "{held}"
    );
    let approvals = host.run(&["approvals"]);
    assert!(!approvals.stdout.contains(AGENTS_SECRET), "{approvals:?}");
    let call = held["call"].as_str().expect("its id");
    host.ok(&["approve", id, call]);
    let answered = typing
        .await
        .expect("the MCP call's task")
        .expect("TickManage input");
    assert!(answered.contains("echo_off"), "{answered}");
    assert!(!answered.contains(AGENTS_SECRET), "{answered}");
    host.wait_screen(id, "second 13");

    // What the agent can read: its CLI's `activity`, and MCP's.
    let read = host
        .spawn_with(CLAUDE, &["activity", id, "--json"])
        .finish();
    read.expect(0);
    let over_mcp = manage(&agent, json!({"action": "activity", "instance": id})).await;
    for answer in [&read.stdout, &over_mcp] {
        for secret in [PERSONS_SECRET, AGENTS_SECRET] {
            assert!(!answer.contains(secret), "{secret} in {answer}");
        }
    }
    let record: Value = serde_json::from_str(&read.stdout).expect("activity JSON");
    let typing = typing_entries(&record);
    let kept = |e: &Value| e["echo_off"].clone();
    // Typed at the shell's own prompt (its line editor shows it): as is.
    assert!(
        typing.iter().any(|e| e["args"]
            .as_str()
            .is_some_and(|a| a.contains("echo-on-marker"))),
        "{typing:#?}"
    );
    let hidden: Vec<Value> = typing
        .iter()
        .filter(|e| !e["echo_off"].is_null())
        .map(kept)
        .collect();
    assert_eq!(
        hidden,
        [
            json!({"characters": 14}),
            json!({"keys": 1, "characters": 0}),
            json!({"characters": 13, "keys": 1}),
        ],
        "{typing:#?}"
    );
    assert!(typing
        .iter()
        .filter(|e| !e["echo_off"].is_null())
        .all(|e| e["args"].is_null()));
    assert!(over_mcp.contains("echo_off"), "{over_mcp}");
    let log = host.run(&["approvals", "--log", id]);
    assert!(!log.stdout.contains(AGENTS_SECRET), "{log:?}");
    assert!(log.stdout.contains("echo_off"), "{log:?}");
    drop(agent);

    // Ended: its activity and last screen are kept on disk, the recording
    // is whole. The secrets are in none of them; what was typed with echo
    // on is (the search finds what is there).
    host.ok(&["close", id]);
    host.wait_ended(id);
    let runtime = host.runtime();
    assert!(
        !files_holding(runtime, "echo-on-marker").is_empty(),
        "the kept activity holds the typing done with echo on"
    );
    for secret in [PERSONS_SECRET, AGENTS_SECRET] {
        assert_eq!(files_holding(runtime, secret), Vec::<String>::new());
        let recording = std::fs::read_to_string(&cast).expect("the recording");
        assert!(recording.contains("second 13"), "the recording is whole");
        assert!(!recording.contains(secret), "{secret} in the recording");
    }
}
