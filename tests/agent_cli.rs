//! An agent's own `tickloop` commands (issue 37): a `tickloop` run by an
//! agent host's tool (its shell tool) is that agent, client kind
//! `agent_cli` named by host, told from its environment
//! (`TICKLOOP_ACTOR`, then `TICKLOOP_AGENT`, which `tickloop loop AGENT
//! install` adds to the host's tools, then the hosts' own markers such as
//! `CLAUDECODE=1`). Its typing into and closing of the person's instances
//! wait for the person like an MCP agent's, saying so on stderr; refused, it
//! exits 3 and nothing happened; the activity and the end reason name the
//! host. It may not answer for the person, change the person's policies or
//! shut tickhost down over the person's instances. The person's own CLI, with
//! none of the markers, never waits.
//!
//! The agent here is the real `tickloop` CLI with the variables a host's
//! shell tool carries (tests/codex.rs, gemini.rs, opencode.rs and
//! claude_code_consent.rs run it through the real hosts' shell tools).

mod common;

use common::*;
use serde_json::Value;

/// The one action waiting now (from `tickloop approvals`).
fn the_waiting_one(host: &Host) -> Value {
    host.the_waiting_one(WAIT)
}

/// `id`'s activity entries of type consent: (tool, decision, client).
fn consents(host: &Host, id: &str) -> Vec<(String, String, Value)> {
    host.ok(&["activity", id])["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["type"] == "consent")
        .map(|e| {
            (
                e["tool"].as_str().unwrap_or("").to_string(),
                e["decision"].as_str().unwrap_or("").to_string(),
                e["client"].clone(),
            )
        })
        .collect()
}

const CLAUDE: &[(&str, &str)] = &[("CLAUDECODE", "1")];

#[test]
fn an_agents_shell_typing_waits_for_the_person_and_names_its_host() {
    let host = Host::new();
    let id = host.open_bash("mine");
    let typing = host.spawn_with(CLAUDE, &["input", &id, "echo typed-$((6*7))\r"]);
    let waiting = the_waiting_one(&host);
    assert_eq!(waiting["action"], "input");
    assert_eq!(waiting["client"]["agent_cli"], "claude-code", "{waiting}");
    let call = waiting["call"].as_str().expect("an id").to_string();
    // Nothing was typed while it waits.
    assert!(!host.screen(&id).contains("typed-42"));
    host.ok(&["approve", &id, &call]);
    let out = typing.finish();
    out.expect(0);
    assert!(
        out.stderr.contains(&format!(
            "waiting for approval of input ({call}): Type `echo typed-$((6*7))` ⏎ into {id}?"
        )) && out.stderr.contains("not executed if nobody answers by"),
        "says on stderr what waits and until when: {}",
        out.stderr
    );
    let screen = host.wait_screen(&id, "typed-42");
    assert_eq!(
        screen.matches("typed-42").count(),
        1,
        "typed once: {screen}"
    );
    let claude = serde_json::json!({"agent_cli": "claude-code"});
    assert_eq!(
        consents(&host, &id),
        [
            ("input".into(), "held".into(), claude.clone()),
            ("input".into(), "approved".into(), claude)
        ]
    );
}

/// A host's shell tool gives up on a command that runs too long (Claude
/// Code's Bash tool after its timeout, Esc): the `tickloop input` it ran
/// ends while held, and the input is withdrawn: never typed, even when the
/// person approves afterwards, and the activity says why.
#[test]
fn an_agents_held_input_whose_command_is_stopped_is_withdrawn_and_never_typed() {
    let host = Host::new();
    let id = host.open_bash("stopped");
    let typing = host.spawn_with(CLAUDE, &["input", &id, "echo late-$((6*7))\r"]);
    let call = the_waiting_one(&host)["call"]
        .as_str()
        .expect("an id")
        .to_string();
    // SAFETY: kill sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(typing.pid(), libc::SIGTERM) }, 0);
    drop(typing);
    wait_for("the stopped input to leave the approvals", || {
        host.run(&["approvals"])
            .stdout
            .trim()
            .is_empty()
            .then_some(())
    });
    host.run(&["approve", &id, &call])
        .expect_error(3, "withdrawn");
    // The shell runs what is typed at once: anything typed shows before this.
    host.ok(&["input", &id, "echo after-$((6*7))\r"]);
    let screen = host.wait_screen(&id, "after-42");
    assert!(!screen.contains("late-42"), "never typed: {screen}");
    let claude = serde_json::json!({"agent_cli": "claude-code"});
    assert_eq!(
        consents(&host, &id),
        [
            ("input".into(), "held".into(), claude.clone()),
            ("input".into(), "withdrawn".into(), claude)
        ]
    );
}

#[test]
fn a_refused_close_exits_3_and_the_instance_runs_on_and_an_approved_one_names_the_host() {
    let host = Host::new();
    let id = host.open_bash("kept");
    // Install's variable names the host.
    let codex = [("TICKLOOP_AGENT", "codex")];
    let closing = host.spawn_with(&codex, &["close", &id]);
    let waiting = the_waiting_one(&host);
    assert_eq!(waiting["action"], "close");
    assert_eq!(waiting["client"]["agent_cli"], "codex");
    host.ok(&[
        "refuse",
        &id,
        waiting["call"].as_str().unwrap(),
        "--reason",
        "not now",
    ]);
    let out = closing.finish();
    let error = out.expect_error(3, "refused");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("refused by the person (cli): not now")),
        "{error}"
    );
    // It said, while it waited, what waits and until when.
    assert!(
        out.stderr.contains(&format!(
            "waiting for approval of close ({}): Close {id} (its program ends)?",
            waiting["call"].as_str().unwrap_or_default()
        )) && out.stderr.contains("not executed if nobody answers by"),
        "{}",
        out.stderr
    );
    assert!(host.entry(&id).expect("listed")["ended"].is_null());
    let decisions = consents(&host, &id);
    assert!(
        decisions.contains(&(
            "close".into(),
            "refused".into(),
            serde_json::json!({"agent_cli": "codex"})
        )),
        "{decisions:?}"
    );
    // Approved: the end reason names the host's shell tool.
    let closing = host.spawn_with(&[("GEMINI_CLI", "1")], &["close", &id]);
    let call = the_waiting_one(&host)["call"].as_str().unwrap().to_string();
    host.ok(&["approve", &id, &call]);
    closing.finish().expect(0);
    assert_eq!(
        host.wait_ended(&id)["reason"],
        "closed by an agent (gemini, shell tool)"
    );
}

#[test]
fn the_persons_own_cli_never_waits_and_says_who_it_is_when_asked() {
    let host = Host::new();
    let id = host.open_bash("own");
    // None of the markers: the person's, at once.
    host.ok(&["input", &id, "echo own-$((6*7))\r"]);
    host.wait_screen(&id, "own-42");
    // In a host's tool, but the person says it is them.
    let out = run_prepared(
        {
            let mut cmd = host.command(&["input", &id, "echo said-$((6*7))\r"]);
            cmd.envs([("TICKLOOP_ACTOR", "person"), ("CLAUDECODE", "1")]);
            cmd
        },
        &["input"],
    );
    out.expect(0);
    host.wait_screen(&id, "said-42");
    assert!(consents(&host, &id).is_empty(), "nothing waited");
    // A word that is neither: a usage error, nothing typed.
    let out = run_prepared(
        {
            let mut cmd = host.command(&["input", &id, "echo robot-$((6*7))\r"]);
            cmd.env("TICKLOOP_ACTOR", "robot");
            cmd
        },
        &["input"],
    );
    out.expect_error(2, "bad_request");
    assert!(out.stderr.contains("TICKLOOP_ACTOR"), "{out:?}");
    assert!(!host.screen(&id).contains("robot-42"));
}

#[test]
fn an_agents_cli_may_not_answer_for_the_person_nor_loosen_their_policies() {
    let host = Host::new();
    let id = host.open_bash("guarded");
    let typing = host.spawn_with(&[("OPENCODE", "1")], &["input", &id, "echo x-$((6*7))\r"]);
    let call = the_waiting_one(&host)["call"].as_str().unwrap().to_string();
    let as_agent = |args: &[&str]| {
        let mut cmd = host.command(args);
        cmd.env("OPENCODE", "1");
        run_prepared(cmd, args)
    };
    let out = as_agent(&["approve", &id, &call]);
    let error = out.expect_error(3, "refused");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("may not answer for the person")),
        "{error}"
    );
    as_agent(&["approve-policy", &id, "--input", "auto"]).expect_error(3, "refused");
    as_agent(&["shutdown"]).expect_error(3, "refused");
    // Still waiting, and the policy as it was.
    assert_eq!(the_waiting_one(&host)["call"], call.as_str());
    assert_eq!(host.entry(&id).expect("listed")["agent_input"], "ask");
    host.ok(&["refuse", &id, &call]);
    typing.finish().expect_error(3, "refused");
    assert!(!host.screen(&id).contains("x-42"));
}

#[test]
fn what_an_agents_cli_opens_is_the_agents_and_nothing_waits_there() {
    let host = Host::new();
    let mut cmd = host.command(&[
        "open",
        "--shell",
        "--id",
        "agents",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ]);
    cmd.env("CLAUDECODE", "1");
    run_prepared(cmd, &["open"]).expect(0);
    let id = "shell:agents";
    assert_eq!(host.entry(id).expect("listed")["owner"], "agent");
    let mut cmd = host.command(&["input", id, "echo agents-$((6*7))\r"]);
    cmd.env("CLAUDECODE", "1");
    run_prepared(cmd, &["input"]).expect(0);
    host.wait_screen(id, "agents-42");
    let mut cmd = host.command(&["close", id]);
    cmd.env("CLAUDECODE", "1");
    run_prepared(cmd, &["close"]).expect(0);
    assert_eq!(
        host.wait_ended(id)["reason"],
        "closed by an agent (claude-code, shell tool)"
    );
}
