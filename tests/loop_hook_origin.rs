//! A hook of the Loop is the agent host's to run (issue 49): `tickloop loop
//! AGENT hook EVENT` run from an agent's shell tool (the host's markers set,
//! crafted JSON piped in) neither arms a run nor subscribes the session nor
//! writes a ledger record, in each of the four hosts' shapes; the same JSON
//! handed over as a host hands it (a socket pair from a process with no
//! marker, the hook its child) is taken. The real hosts' own calls are the
//! trials of tests/claude_code.rs, codex.rs, gemini.rs and opencode.rs, and
//! the forged call from their real shell tools is
//! `agents::origin::a_forged_hook_neither_arms_nor_subscribes`.

mod common;

use common::{tickloop_bin, Host, MARK_VAR};
use serde_json::json;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// The markers each host's shell tool sets, as the trials saw them.
fn markers(agent: &str) -> Vec<(&'static str, &'static str)> {
    match agent {
        "claude-code" => vec![
            ("CLAUDECODE", "1"),
            ("AI_AGENT", "claude-code_2-1-332_agent"),
            ("TICKLOOP_AGENT", "claude-code"),
        ],
        "codex" => vec![
            ("CODEX_THREAD_ID", "01a24989-2770-7d31-9a4e-3c2f1d0e9b8a"),
            ("CODEX_CI", "1"),
            ("TICKLOOP_AGENT", "codex"),
        ],
        "gemini" => vec![("GEMINI_CLI", "1")],
        _ => vec![
            ("OPENCODE", "1"),
            ("AGENT", "1"),
            ("TICKLOOP_AGENT", "opencode"),
        ],
    }
}

/// Where a trial's Loop keeps its states and ledger.
struct Dirs {
    state: PathBuf,
    audit: PathBuf,
}

impl Dirs {
    fn new(host: &Host, agent: &str) -> Dirs {
        Dirs {
            state: host.scratch().join(format!("state-{agent}")),
            audit: host.scratch().join(format!("audit-{agent}")),
        }
    }

    /// Every file the Loop wrote (state files, ledgers; lock files aside).
    fn written(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for dir in [&self.state, &self.audit] {
            if let Ok(entries) = std::fs::read_dir(dir) {
                out.extend(
                    entries
                        .flatten()
                        .map(|e| e.path())
                        .filter(|p| p.extension().is_some_and(|e| e != "lock")),
                );
            }
        }
        out.sort();
        out
    }
}

fn hook_env(cmd: &mut Command, host: &Host, dirs: &Dirs) {
    common::as_the_person(cmd)
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("TICKLOOP_LOOP_STATE_DIR", &dirs.state)
        .env("TICKLOOP_LOOP_AUDIT_DIR", &dirs.audit)
        .env("TICKLOOP_LOOP_CONFIG", host.scratch().join("loop.json"))
        .env("TICKLOOP_LOOP_DELAY_MS", "0")
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
}

/// What an agent's shell tool runs: `printf JSON | tickloop loop AGENT
/// hook EVENT`, in a session of its own, with the host's markers.
fn forged(host: &Host, dirs: &Dirs, agent: &str, event: &str, input: &str) -> Output {
    let mut cmd = Command::new("setsid");
    cmd.args([
        "bash",
        "-c",
        r#"printf '%s' "$1" | "$0" loop "$2" hook "$3""#,
    ])
    .arg(tickloop_bin())
    .arg(input)
    .arg(agent)
    .arg(event)
    .stdin(Stdio::null());
    hook_env(&mut cmd, host, dirs);
    cmd.envs(markers(agent));
    cmd.output().expect("run the forged hook")
}

/// The host's way: a process with no marker hands the JSON on a socket
/// pair it made to the hook, its child (as Claude Code, Gemini CLI and
/// opencode do).
fn as_the_host(host: &Host, dirs: &Dirs, agent: &str, event: &str, input: &str) -> Output {
    let script = r#"
import socket, subprocess, sys
tickloop, agent, event, text = sys.argv[1:5]
mine, theirs = socket.socketpair()
child = subprocess.Popen([tickloop, "loop", agent, "hook", event], stdin=theirs,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
theirs.close()
mine.sendall(text.encode())
mine.shutdown(socket.SHUT_WR)
out, err = child.communicate()
sys.stdout.write(out.decode())
sys.stderr.write(err.decode())
sys.exit(child.returncode)
"#;
    let mut cmd = Command::new("python3");
    cmd.args(["-c", script, tickloop_bin(), agent, event, input])
        .stdin(Stdio::null());
    hook_env(&mut cmd, host, dirs);
    cmd.output().expect("run the hook as a host would")
}

/// The session's four calls: a natural prompt and its end, then a run of
/// 256 and a subscription to the person's shell.
fn calls() -> [(&'static str, String); 4] {
    let stop = json!({"session_id": SESSION, "hook_event_name": "Stop"}).to_string();
    [
        ("user-prompt-submit", prompt("hello", "p1")),
        ("stop", stop),
        ("user-prompt-submit", prompt("/tick 256", "p2")),
        (
            "user-prompt-submit",
            prompt("/tick subscribe shell:mine", "p3"),
        ),
    ]
}

const SESSION: &str = "9ec968c8-1d7c-4f55-8a2b-3c1f0e7b2a11";

fn prompt(text: &str, id: &str) -> String {
    json!({
        "session_id": SESSION,
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
        "prompt_id": id,
        "cwd": "/nowhere",
    })
    .to_string()
}

#[test]
fn a_forged_hook_call_from_a_shell_neither_arms_nor_subscribes() {
    let host = Host::new();
    std::fs::write(host.scratch().join("loop.json"), "{}").expect("loop.json");
    for agent in ["claude-code", "codex", "gemini", "opencode"] {
        let dirs = Dirs::new(&host, agent);
        for (event, input) in calls() {
            let out = forged(&host, &dirs, agent, event, &input);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{agent} {event}: {out:?}");
            assert!(
                stderr.contains("refused") && stderr.contains("did not come from"),
                "{agent} {event}: {stderr}"
            );
            assert!(
                out.stdout.is_empty(),
                "{agent} {event}: no decision printed"
            );
        }
        assert_eq!(
            dirs.written(),
            Vec::<PathBuf>::new(),
            "{agent}: no state, no ledger"
        );
    }
}

/// The same calls handed over as a host hands them are taken: the run is
/// armed (the ledger says by the person, through the agent's prompt hook)
/// and the session subscribed.
#[test]
fn the_same_calls_from_a_host_are_taken() {
    let host = Host::new();
    std::fs::write(host.scratch().join("loop.json"), "{}").expect("loop.json");
    let agent = "gemini";
    let dirs = Dirs::new(&host, agent);
    let mut replies = Vec::new();
    for (event, input) in calls() {
        let out = as_the_host(&host, &dirs, agent, event, &input);
        assert_eq!(out.status.code(), Some(0), "{event}: {out:?}");
        replies.push(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    assert!(replies[2].contains("armed run"), "{replies:?}");
    assert!(replies[3].contains("subscribed: shell:mine"), "{replies:?}");
    let ledger = std::fs::read_dir(&dirs.audit)
        .expect("a ledger")
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).expect("ledger"))
        .collect::<String>();
    let armed: serde_json::Value = ledger
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|r| r["type"] == "loop_armed")
        .expect("loop_armed");
    assert_eq!(armed["armedBy"], "person", "{armed}");
    assert_eq!(armed["armedVia"], "gemini prompt hook", "{armed}");
}

/// A subscription id with control or invisible characters, from the host's
/// own prompt hook (the person pasted it), is refused whole, escaped, and
/// `/tick status` shows none of it.
#[test]
fn a_subscription_with_controls_is_refused_escaped() {
    let host = Host::new();
    std::fs::write(host.scratch().join("loop.json"), "{}").expect("loop.json");
    let dirs = Dirs::new(&host, "claude-code");
    let bad = prompt(
        "/tick subscribe shell:a\u{1b}]0;x\u{7} hosted:b\u{202e}c",
        "p9",
    );
    let out = as_the_host(&host, &dirs, "claude-code", "user-prompt-submit", &bad);
    let reply = String::from_utf8_lossy(&out.stdout);
    assert!(
        reply.contains("refused") && reply.contains("not an instance id"),
        "{out:?}"
    );
    assert!(
        !reply.contains('\u{1b}') && !reply.contains('\u{202e}'),
        "{reply}"
    );
    let status = as_the_host(
        &host,
        &dirs,
        "claude-code",
        "user-prompt-submit",
        &prompt("/tick status", "p10"),
    );
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(!status.contains("subscribed"), "{status}");
}

/// TickManage `subscribe` with Codex's `_meta` session, through a bridge a
/// person's SDK application started (the host's own launch): a session id
/// no hook of Codex's ever started (made up, or with controls) reaches
/// nothing, and no state is written; the session the host's own hook call
/// started is subscribed.
#[test]
fn mcp_subscribe_reaches_only_a_session_its_hooks_started() {
    let host = Host::new();
    std::fs::write(host.scratch().join("loop.json"), "{}").expect("loop.json");
    let dirs = Dirs::new(&host, "codex");
    let subscribe = |session: &str| -> serde_json::Value {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mcp_python/subscribe_session.py");
        let mut cmd = Command::new(common::python_sdk::sdk_python());
        cmd.arg(script)
            .arg(tickloop_bin())
            .arg(session)
            .arg("hosted:counter")
            .stdin(Stdio::null());
        hook_env(&mut cmd, &host, &dirs);
        let out = cmd.output().expect("run the SDK client");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_str(stdout.lines().last().unwrap_or("")).expect("its JSON line")
    };
    for made_up in ["0199-made-up-session", "real\u{1b}[2J"] {
        let answer = subscribe(made_up);
        assert_eq!(answer["is_error"], true, "{answer}");
        assert!(
            answer["text"]
                .as_str()
                .is_some_and(|t| t.contains("has no Loop") || t.contains("control")),
            "{answer}"
        );
    }
    assert_eq!(dirs.written(), Vec::<PathBuf>::new(), "no state written");
    // Codex's own prompt hook starts the session's Loop; then it is reached.
    let out = as_the_host(
        &host,
        &dirs,
        "codex",
        "user-prompt-submit",
        &prompt("hello", "p1"),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let answer = subscribe(SESSION);
    assert_eq!(answer["is_error"], false, "{answer}");
    assert!(
        answer["text"]
            .as_str()
            .is_some_and(|t| t.contains("subscribed: hosted:counter")),
        "{answer}"
    );
}
