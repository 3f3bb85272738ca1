//! The agent host asks the person too (issue 27, item 3), with the official
//! Python MCP SDK as the host (`tests/consent_in_host/client.py`), in MCP
//! revision 2025-11-25 (the SDK's initialize handshake): while tickhost holds
//! a call to a `mutates: true` tool of an `ask` counter, `tickloop mcp` puts
//! the question to the SDK with `elicitation/create`. Accept runs the call
//! once; Decline and a dismissed dialog run nothing (not executed, -32010,
//! `by: "mcp-host"`); an answer given elsewhere first (`tickloop approve`,
//! which is what the Monitor sends too) withdraws the question. Without an
//! elicitation callback, with `[approval] ask_in_host = false`, or with a
//! config file that cannot be read, nothing is asked in the host and the call waits for a person as before. The counter's
//! own log proves what reached it; the approval log names the host.
//!
//! And only a bridge the host started asks (issue 49): an agent's own
//! client, started from its shell tool with the markers set
//! (`tests/consent_in_host/own_client.py`), is asked nothing, whatever it
//! declares and however it names itself; its held input waits for the
//! person elsewhere, and nothing is decided `by: "mcp-host"`.

mod common;

use common::python_sdk::sdk_python;
use common::{tickloop_bin, Host, MARK_VAR};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The host an `ask` counter runs in.
fn asking_counter() -> Host {
    let host = Host::new();
    host.open_asking_counter("counter");
    host
}

/// Runs the SDK client in `mode` with `config` (the text of
/// `config.toml`, if any); returns its findings and `tickloop mcp`'s stderr.
fn run_client(host: &Host, mode: &str, config: Option<&str>) -> (Value, String) {
    let config_home = host.scratch().join("config");
    std::fs::create_dir_all(config_home.join("tickloop")).expect("config dir");
    if let Some(text) = config {
        std::fs::write(config_home.join("tickloop/config.toml"), text).expect("config.toml");
    }
    let server_stderr = host.scratch().join("mcp-stderr.txt");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consent_in_host/client.py");
    let out = common::as_the_person(&mut Command::new(sdk_python()))
        .arg(&script)
        .arg(tickloop_bin())
        .arg(mode)
        .arg(&server_stderr)
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("XDG_CONFIG_HOME", &config_home)
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let server = std::fs::read_to_string(&server_stderr).unwrap_or_default();
    assert!(
        out.status.success(),
        "the SDK client ({mode}) failed ({}):\nstdout: {stdout}\nstderr: {stderr}\ntickloop mcp's stderr: {server}",
        out.status
    );
    let findings = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line:\n{stdout}\n{stderr}"));
    (findings, server)
}

/// The `increment` amounts that reached the counter, in order.
fn increments(host: &Host) -> Vec<i64> {
    std::fs::read_to_string(host.log_path("counter"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "tick/call" && m["params"]["tool"] == "increment")
        .filter_map(|m| m["params"]["args"]["amount"].as_i64())
        .collect()
}

fn approval_log(host: &Host) -> Vec<Value> {
    let out = host.run(&["approvals", "--log", "hosted:counter"]);
    out.expect(0);
    out.stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a log line"))
        .collect()
}

#[test]
fn the_agent_host_asks_and_its_answer_or_another_place_s_decides() {
    let host = asking_counter();
    let (findings, server) = run_client(&host, "elicit", None);
    assert_eq!(findings["protocol"], "2025-11-25", "{findings}");
    assert_eq!(findings["questions"], 4, "{findings}");
    assert_eq!(findings["withdrawn"], 1, "{findings}");
    assert!(
        findings["decline"]
            .as_str()
            .is_some_and(|m| m.contains("declined in sdk-consent-test 1.0")),
        "{findings}"
    );
    // Accept ran its call, Decline and cancel nothing, the one approved
    // elsewhere ran once.
    assert_eq!(increments(&host), [2, 10], "{server}");
    let decided: Vec<(String, String, Option<String>)> = approval_log(&host)
        .into_iter()
        .filter(|e| e["decision"] != "held")
        .map(|e| {
            (
                e["decision"].as_str().unwrap_or("?").to_string(),
                e["by"].as_str().unwrap_or("?").to_string(),
                e["host"].as_str().map(str::to_string),
            )
        })
        .collect();
    let from_host = Some("sdk-consent-test 1.0".to_string());
    assert_eq!(
        decided,
        [
            ("approved".into(), "mcp-host".into(), from_host.clone()),
            ("refused".into(), "mcp-host".into(), from_host.clone()),
            ("refused".into(), "mcp-host".into(), from_host),
            ("approved".into(), "cli".into(), None),
        ]
    );
}

#[test]
fn a_host_without_elicitation_or_with_questions_off_is_not_asked() {
    // (the client's mode, config.toml, what `tickloop mcp` says on stderr)
    let cases = [
        ("plain", None, None),
        ("off", Some("[approval]\nask_in_host = false\n"), None),
        // A config file that cannot be read may have turned it off: no
        // question, and the reason on stderr.
        (
            "off",
            Some("[approval]\nask_in_host = \"maybe\"\n"),
            Some("not asking in the agent host"),
        ),
    ];
    for (mode, config, says) in cases {
        let host = asking_counter();
        let (findings, server) = run_client(&host, mode, config);
        assert!(findings["approved_from_cli"].is_string(), "{findings}");
        assert_eq!(increments(&host), [4], "{mode}: {server}");
        match says {
            Some(text) => assert!(server.contains(text), "{mode} {config:?}: {server}"),
            None => assert!(
                !server.contains("agent host"),
                "{mode}: tickloop mcp tried the host: {server}"
            ),
        }
        let by: Vec<Value> = approval_log(&host)
            .into_iter()
            .filter(|e| e["decision"] == "approved")
            .map(|e| e["by"].clone())
            .collect();
        assert_eq!(by, ["cli"], "{mode}");
    }
}

/// What the host asks is what will run: an agent's input with Trojan
/// Source's bidi controls and a zero-width space is asked about with each
/// escaped (the SDK's elicitation callback gets the question), and an
/// input too long for a host's dialog is not asked there at all: the
/// agent is told why, and the person answers where it shows whole.
#[test]
fn the_host_question_shows_controls_escaped_and_a_long_input_is_asked_elsewhere() {
    let host = Host::new();
    let id = host.open_bash("mine");
    let (findings, server) = run_client(&host, "shown", None);
    // Folded at 76 characters for the dialog: whole once put together.
    let question = findings["question"]
        .as_str()
        .unwrap_or_default()
        .replace('\n', "");
    assert!(
        question.starts_with(
            "Type `echo safe \\u{202E}\\u{2066}; touch F\\u{2069} \\u{2066}#\\u{2069}\\u{202C}\\u{200B}` ⏎ into shell:mine?"
        ),
        "{question}\n{server}"
    );
    for raw in ['\u{202e}', '\u{2066}', '\u{2069}', '\u{202c}', '\u{200b}'] {
        assert!(
            !question.contains(raw),
            "U+{:04X} raw: {question}",
            u32::from(raw)
        );
    }
    let long = findings["long_result"].as_str().unwrap_or_default();
    assert!(
        long.contains("not in the agent host: the question is")
            && long.contains("so it is asked only where it shows whole"),
        "{long}"
    );
    assert!(findings["refused_from_cli"].is_string(), "{findings}");
    // Neither was typed.
    let screen = host.screen(&id);
    assert!(
        !screen.contains("safe") && !screen.contains("xxxx"),
        "{screen}"
    );
}

/// An answer in the Monitor (its `y`, in a real terminal) wins over the
/// host's open question, which is withdrawn.
#[test]
fn an_answer_in_the_monitor_withdraws_the_hosts_question() {
    let host = asking_counter();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consent_in_host/client.py");
    let server_stderr = host.scratch().join("mcp-stderr.txt");
    let client = common::as_the_person(&mut Command::new(sdk_python()))
        .arg(&script)
        .arg(tickloop_bin())
        .arg("monitor")
        .arg(&server_stderr)
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("XDG_CONFIG_HOME", host.scratch().join("no-config"))
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the Python MCP client");
    let tmux = common::tmux::Tmux::start(
        &host,
        120,
        30,
        &format!("trap '' QUIT INT; {} monitor", tickloop_bin()),
    );
    tmux.wait_text("approve? hosted:counter");
    tmux.send_keys(&["y"]);
    let out = client.wait_with_output().expect("the client ends");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let findings: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line: {stdout}"));
    assert_eq!(findings["questions"], 1, "{findings}");
    assert_eq!(findings["withdrawn"], 1, "{findings}");
    assert_eq!(increments(&host), [6]);
    let approved: Vec<Value> = approval_log(&host)
        .into_iter()
        .filter(|e| e["decision"] == "approved")
        .map(|e| e["by"].clone())
        .collect();
    assert_eq!(approved, ["monitor"]);
}

/// What an agent's shell tool would run: `own_client.py` as `name`, with
/// `markers` set, in a session of its own (`setsid`, as every host runs its
/// shell tool's commands). Returns the client, and where it writes.
fn start_own_client(
    host: &Host,
    name: &str,
    markers: &[(&str, &str)],
) -> (std::process::Child, std::path::PathBuf) {
    let out = host.scratch().join(format!("own-{name}"));
    std::fs::create_dir_all(&out).expect("the client's folder");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/consent_in_host/own_client.py");
    let mut cmd = Command::new("setsid");
    common::as_the_person(&mut cmd)
        .arg(sdk_python())
        .arg(&script)
        .arg(tickloop_bin())
        .arg(name)
        .arg(&out)
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("XDG_CONFIG_HOME", host.scratch().join("no-config"))
        .env(MARK_VAR, host.runtime())
        .envs(markers.iter().copied())
        .current_dir(host.scratch())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    (cmd.spawn().expect("start the agent's own client"), out)
}

/// The markers Claude Code's Bash tool sets (interactive: the entrypoint
/// a host-started bridge is asked in), as the trials saw them.
const CLAUDE_BASH: [(&str, &str); 5] = [
    ("CLAUDECODE", "1"),
    ("AI_AGENT", "claude-code_2-1-332_agent"),
    ("CLAUDE_CODE_ENTRYPOINT", "cli"),
    (
        "CLAUDE_CODE_SESSION_ID",
        "07e5a8da-a01a-48f8-894c-1553da1d1817",
    ),
    ("TICKLOOP_AGENT", "claude-code"),
];

/// An agent's own MCP client, started from its shell with the markers set,
/// named as a generic client and as `claude-code`, cannot answer its own
/// question: it is asked nothing (the progress says why and where the
/// person is asked), the input stays held until the person refuses it,
/// nothing is typed, and nothing is decided `by: "mcp-host"`.
#[test]
fn an_agents_own_client_cannot_answer_its_own_question() {
    for name in ["sdk-agent", "claude-code"] {
        let host = Host::new();
        let id = host.open_bash("mine");
        let (client, out) = start_own_client(&host, name, &CLAUDE_BASH);
        let progress: Value = common::wait_for("the held input's progress", || {
            let text = std::fs::read_to_string(out.join("progress.json")).ok()?;
            serde_json::from_str(&text).ok()
        });
        let message = progress["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("not in the agent host")
                && message.contains("not started by the agent host itself")
                && message.contains("the Monitor"),
            "{name}: the agent is told why and where: {message}"
        );
        let waiting = host.the_waiting_one(common::COMMAND_DEADLINE);
        assert_eq!(waiting["action"], "input", "{waiting}");
        let call = waiting["call"].as_str().expect("a call id").to_string();
        host.ok(&["refuse", &id, &call, "--reason", "not now"]);
        let done = client.wait_with_output().expect("the client ends");
        assert!(
            done.status.success(),
            "{name}: {}\n{}",
            String::from_utf8_lossy(&done.stdout),
            String::from_utf8_lossy(&done.stderr)
        );
        let findings: Value = serde_json::from_str(
            &std::fs::read_to_string(out.join("findings.json")).expect("findings"),
        )
        .expect("findings JSON");
        assert_eq!(
            findings["questions"],
            serde_json::json!([]),
            "{name}: {findings}"
        );
        assert_eq!(findings["is_error"], true, "{name}: {findings}");
        // What the person types shows; the agent's text never did.
        host.ok(&["input", &id, "echo person-$((6*7))\r"]);
        let screen = host.wait_screen(&id, "person-42");
        assert!(!screen.contains("own-42"), "{name}: never typed: {screen}");
        assert_eq!(
            host.decisions(&id),
            [
                ("held".into(), "tickhost".into()),
                ("refused".into(), "cli".into())
            ],
            "{name}"
        );
    }
}
