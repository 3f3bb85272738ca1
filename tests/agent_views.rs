//! The person's views refuse an agent (issue 49): a `tickloop` run by an
//! agent host's shell tool (here with Claude Code's marker, `CLAUDECODE=1`,
//! left set as its Bash tool leaves it) may not start `tickloop web` or take
//! a login link into it, may not attach to an instance (a view's keys reach
//! the program as the person's), and its Monitor is read-only: it shows what
//! waits and answers nothing. Each runs in a real terminal, both a `script`
//! pty and tmux, as an agent could run it to get a terminal.
//!
//! Herdr's side is in tests/herdr.rs (`an_agents_herdr_commands_...`), the
//! launcher's refusal of an agent's raw view in tests/views.rs.

mod common;

use common::script_term::ScriptTerm;
use common::tmux::Tmux;
use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use tickloop_proto::wire::{AgentHost, ClientKind};

const CLAUDE: &[(&str, &str)] = &[("CLAUDECODE", "1")];

/// `tickloop ARGS` as the line an agent's shell runs (Claude Code's marker
/// set), for tmux.
fn agents_line(args: &str) -> String {
    format!("CLAUDECODE=1 {} {args}", tickloop_bin())
}

/// The shell's screen never showed `text` (typed by no one).
fn never_typed(host: &Host, id: &str, text: &str) {
    let screen = host.screen(id);
    assert!(!screen.contains(text), "{text:?} reached {id}:\n{screen}");
}

/// `id`'s activity entries of `kind` (`view`, `request`, `consent`).
fn activity_of(host: &Host, id: &str, kind: &str) -> Vec<Value> {
    host.ok(&["activity", id])["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["type"] == kind)
        .cloned()
        .collect()
}

/// The person's `tickloop web` on a free loopback port, and the login URL
/// it printed.
fn persons_web(host: &Host) -> (std::process::Child, String) {
    let mut web = host
        .command(&["web", "--listen", "127.0.0.1:0"])
        .stderr(Stdio::null())
        .spawn()
        .expect("starting tickloop web");
    let mut line = String::new();
    BufReader::new(web.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the started line");
    let started: Value = serde_json::from_str(&line).expect("started JSON");
    let url = started["login_url"]
        .as_str()
        .expect("a login URL")
        .to_string();
    (web, url)
}

#[test]
fn an_agents_web_and_web_login_are_refused_with_no_login_url() {
    let host = Host::new();
    let socket = host.runtime().join("web.sock");

    // In a script terminal: nothing serves, no link is minted.
    let agent = ScriptTerm::start(&host, CLAUDE, 120, 30, &format!("{} web", tickloop_bin()));
    let (code, screen) = agent.finish();
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("Claude Code (its shell tool) may not start `tickloop web`"),
        "{screen}"
    );
    assert!(!screen.contains("token="), "{screen}");
    assert!(!socket.exists(), "no server started");
    // In tmux too.
    let tmux = Tmux::start(&host, 120, 30, &agents_line("web --listen 127.0.0.1:0"));
    let screen = tmux.wait_text("ATTACH-EXIT 3");
    assert!(screen.contains("may not start `tickloop web`"), "{screen}");
    assert!(!screen.contains("token="), "{screen}");
    assert!(!socket.exists(), "no server started");
    drop(tmux);

    // The person's server runs; the agent asks it for a login link.
    let (mut web, _first) = persons_web(&host);
    let agent = ScriptTerm::start(
        &host,
        CLAUDE,
        120,
        30,
        &format!("{} web --login", tickloop_bin()),
    );
    let (code, screen) = agent.finish();
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("may not take a login link of the person's `tickloop web`"),
        "{screen}"
    );
    assert!(!screen.contains("token="), "{screen}");
    let tmux = Tmux::start(&host, 120, 30, &agents_line("web --login"));
    let screen = tmux.wait_text("ATTACH-EXIT 3");
    assert!(!screen.contains("token="), "{screen}");
    drop(tmux);
    // Piped, the error is JSON, with no URL either.
    let piped = host.spawn_with(CLAUDE, &["web", "--login"]).finish();
    let error = piped.expect_error(3, "refused");
    assert_eq!(error["data"]["client"]["agent_cli"], "claude-code");
    assert!(!piped.stdout.contains("token="), "{piped:#?}");

    // The server itself refuses a control request that says an agent asks,
    // whoever sends it; the person's works.
    let claude = ClientKind::AgentCli(AgentHost::ClaudeCode);
    match tickloop_web::login(host.runtime(), claude) {
        Err(tickloop_web::ControlError::Refused(why)) => {
            assert!(why.contains("login link"), "{why}")
        }
        other => panic!("the server gave an agent {other:?}"),
    }
    assert!(matches!(
        tickloop_web::revoke(host.runtime(), claude),
        Err(tickloop_web::ControlError::Refused(_))
    ));
    let persons = host.ok(&["web", "--login"]);
    assert!(
        persons["login_url"]
            .as_str()
            .is_some_and(|u| u.contains("/login?token=")),
        "{persons}"
    );
    let _ = web.kill();
    let _ = web.wait();
}

#[test]
fn an_agents_attach_is_refused_and_types_nothing() {
    let host = Host::new();
    let id = host.open_bash("mine");
    host.ok(&["input", &id, "echo ready-$((6*7))\r"]);
    host.wait_screen(&id, "ready-42");

    // In a script terminal, keys typed into it from the start.
    let mut agent = ScriptTerm::start(
        &host,
        CLAUDE,
        100,
        30,
        &format!("{} attach {id}", tickloop_bin()),
    );
    agent.type_text("echo typed-by-agent\r");
    let (code, screen) = agent.finish();
    assert_eq!(code, 3, "{screen}");
    assert!(
        screen.contains("Claude Code (its shell tool) may not attach to shell:mine")
            && screen.contains(&format!("tickloop screen {id}")),
        "{screen}"
    );

    // In tmux, keys typed once it ran.
    let tmux = Tmux::start(&host, 100, 30, &agents_line(&format!("attach {id}")));
    let screen = tmux.wait_text("ATTACH-EXIT 3");
    assert!(screen.contains("may not attach to shell:mine"), "{screen}");
    tmux.type_text("echo typed-in-tmux\r");

    // Nothing reached the shell; no view ever attached.
    host.ok(&["input", &id, "echo after-$((6*7))\r"]);
    host.wait_screen(&id, "after-42");
    never_typed(&host, &id, "typed-by-agent");
    never_typed(&host, &id, "typed-in-tmux");
    assert_eq!(host.entry(&id).expect("listed")["views"], 0);
    assert!(activity_of(&host, &id, "view").is_empty());
}

/// A close of the person's shell by the agent's CLI, held for the person:
/// the running command and the held call's id.
fn agents_held_close(host: &Host, id: &str) -> (Running, String) {
    let close = host.spawn_with(CLAUDE, &["close", id]);
    let held = host.the_waiting_one(WAIT);
    assert_eq!(held["action"], "close", "{held}");
    assert_eq!(held["client"]["agent_cli"], "claude-code", "{held}");
    let call = held["call"].as_str().expect("a call id").to_string();
    (close, call)
}

/// The close still waits: listed by `approvals`, the shell running, and no
/// decision in its activity.
fn still_held(host: &Host, id: &str, call: &str) {
    let waiting = host.the_waiting_one(WAIT);
    assert_eq!(waiting["call"], call, "{waiting}");
    assert_eq!(host.entry(id).expect("listed")["state"], "running");
    let decided: Vec<Value> = activity_of(host, id, "consent")
        .into_iter()
        .filter(|e| e["decision"] != "held")
        .collect();
    assert!(decided.is_empty(), "decided: {decided:?}");
}

/// The person refuses the agent's close: it exits 3, the shell runs on.
fn person_refuses(host: &Host, id: &str, call: &str, close: Running) {
    host.ok(&["refuse", id, call]);
    close.finish().expect(3);
    assert_eq!(host.entry(id).expect("listed")["state"], "running");
}

#[test]
fn an_agents_monitor_in_tmux_shows_everything_and_answers_nothing() {
    let host = Host::new();
    let id = host.open_bash("mine");
    let (close, call) = agents_held_close(&host, &id);

    let tmux = Tmux::start(&host, 120, 40, &agents_line("monitor"));
    tmux.wait_text(&format!("approve? {id} · call {call}"));
    tmux.wait_text("read-only: only the person answers · v whole arguments");
    tmux.send_keys(&["y"]);
    tmux.wait_text(&format!(
        "read-only: Claude Code (its shell tool) may not approve {call} on {id}; only the person does"
    ));
    tmux.send_keys(&["n"]);
    tmux.wait_text(&format!("may not refuse {call} on {id}"));
    still_held(&host, &id, &call);

    // The list's actions: none.
    tmux.send_keys(&["x"]);
    tmux.wait_text(&format!("may not close {id}"));
    tmux.send_keys(&["a"]);
    tmux.wait_text(&format!("may not attach to {id}"));

    // The overlay shows the shell; what is typed there reaches nothing
    // (nor would the launcher take it: the overlay said it is the agent's).
    tmux.send_keys(&["Enter"]);
    tmux.wait_text(&format!("{id} · ctrl+\\ d closes"));
    let log = host.runtime().join("i/shell-mine/launcher.log");
    wait_for("the launcher to note an agent's view", || {
        std::fs::read_to_string(&log)
            .ok()
            .filter(|l| l.contains("an agent's view attached (monitor)"))
    });
    tmux.type_text("echo 42");
    tmux.send_keys(&["Enter"]);
    tmux.wait_text(&format!("may not type into {id}"));
    tmux.send_keys(&["C-\\", "d"]);
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");

    never_typed(&host, &id, "echo 42");
    still_held(&host, &id, &call);
    person_refuses(&host, &id, &call, close);
}

#[test]
fn an_agents_monitor_in_a_script_terminal_cannot_approve_its_own_held_close() {
    let host = Host::new();
    let id = host.open_bash("mine");
    let (close, call) = agents_held_close(&host, &id);

    let mut agent = ScriptTerm::start(
        &host,
        CLAUDE,
        120,
        40,
        &format!("{} monitor", tickloop_bin()),
    );
    agent.wait_text(&format!("approve? {id} · call {call}"));
    agent.type_text("y");
    agent.wait_text(&format!("may not approve {call} on {id}"));
    agent.type_text("q");
    let (code, screen) = agent.finish();
    assert_eq!(code, 0, "{screen}");

    still_held(&host, &id, &call);
    person_refuses(&host, &id, &call, close);
}
