//! What agents did, in words a person reads (issue 50): `tickloop activity
//! ID` on a terminal (`script`'s pty) names each `run`'s command, the keys
//! and the text typed, and says what each came to (`exited 1`, `still
//! running after 1 s`, `not typed: the prompt had text`, `refused by you`):
//! a failed command and a timed-out run never read `ok`. `tickloop
//! activity` with no ID lists two instances' agent actions in order, each
//! naming its instance, and not the person's; piped, one JSON entry a line;
//! `--since`, `--agent` and `--follow` keep and follow what they say.

mod common;

use common::*;
use serde_json::Value;

const AGENT: [(&str, &str); 1] = [("CLAUDECODE", "1")];

/// `tickloop ARGS` in a terminal of its own: its lines.
fn in_a_terminal(host: &Host, args: &str) -> Vec<String> {
    let out = run_prepared(host.in_a_terminal(args), &[args]);
    out.expect(0);
    out.stdout
        .replace("\r\n", "\n")
        .lines()
        .map(str::to_string)
        .collect()
}

/// `tickloop ARGS` as Claude Code's shell tool runs it; its exit code.
fn as_agent(host: &Host, args: &[&str]) -> i32 {
    host.spawn_with(&AGENT, args).finish().code
}

/// The one line of `lines` that holds `what`.
fn line_with<'a>(lines: &'a [String], what: &str) -> &'a str {
    let found: Vec<&String> = lines.iter().filter(|l| l.contains(what)).collect();
    assert_eq!(found.len(), 1, "one line with {what:?}: {lines:#?}");
    found[0]
}

#[test]
fn activity_on_a_terminal_names_each_command_the_keys_and_what_each_came_to() {
    let host = Host::new();
    let id = host.open_bash_agents_type_in("work");
    assert_eq!(as_agent(&host, &["run", &id, "--", "echo hi"]), 0);
    assert_eq!(as_agent(&host, &["run", &id, "--", "false"]), 1);
    assert_eq!(
        as_agent(&host, &["run", &id, "--timeout", "1", "--", "sleep 300"]),
        124
    );
    assert_eq!(as_agent(&host, &["keys", &id, "C-c"]), 0);
    host.ok(&["wait", &id, "--prompt"]);
    // The person's half-typed line: the agent's run is not typed.
    host.ok(&["input", &id, "abc"]);
    assert_eq!(as_agent(&host, &["run", &id, "--", "echo no"]), 125);
    host.ok(&["keys", &id, "C-u"]);
    // Typing the person is asked about, and refuses.
    host.ok(&["approve-policy", &id, "--input", "ask"]);
    let typing = host.spawn_with(&AGENT, &["input", &id, "rm -rf build\r"]);
    let call = host.the_waiting_one(WAIT)["call"]
        .as_str()
        .expect("a call id")
        .to_string();
    host.run(&["refuse", &id, &call]).expect(0);
    typing.finish().expect(3);

    let lines = in_a_terminal(&host, &format!("activity {id}"));
    let agent = "Claude Code (shell)";
    let hi = line_with(&lines, "`echo hi`");
    assert!(
        hi.contains(agent) && hi.contains("run `echo hi` → exited 0"),
        "{hi}"
    );
    let failed = line_with(&lines, "`false`");
    assert!(failed.contains("run `false` → exited 1"), "{failed}");
    let slow = line_with(&lines, "`sleep 300`");
    assert!(slow.contains("→ still running after 1 s"), "{slow}");
    let keys = lines
        .iter()
        .find(|l| l.contains(agent) && l.contains("keys C-c"))
        .unwrap_or_else(|| panic!("the agent's C-c: {lines:#?}"));
    assert!(!keys.contains("→ ok"), "{keys}");
    let not_typed = line_with(&lines, "`echo no`");
    assert!(
        not_typed.contains("→ not typed: the prompt had text"),
        "{not_typed}"
    );
    // Held (`waits for you`), then refused: the refusal is its own line.
    let refused = lines
        .iter()
        .find(|l| l.contains("input `rm -rf build` ⏎ → refused by you"))
        .unwrap_or_else(|| panic!("the refusal: {lines:#?}"));
    // A failed command, a timed-out run, a refusal: never `ok`.
    for line in [failed, slow, not_typed, refused.as_str()] {
        assert!(!line.contains("→ ok"), "{line}");
    }
    // The person's own typing says who: the CLI, not an agent.
    let person = line_with(&lines, "`abc`");
    assert!(!person.contains(agent), "{person}");
}

#[test]
fn the_timeline_lists_two_instances_agent_actions_in_order() {
    let host = Host::new();
    let a = host.open_bash_agents_type_in("alpha");
    let b = host.open_bash_agents_type_in("beta");
    assert_eq!(as_agent(&host, &["run", &a, "--", "echo one"]), 0);
    assert_eq!(as_agent(&host, &["run", &b, "--", "echo two"]), 0);
    // The person's own run: not an agent's, not listed.
    host.ok(&["run", &b, "--", "echo mine"]);
    assert_eq!(as_agent(&host, &["run", &a, "--", "echo three"]), 0);
    // One instance ends: its record is still in the timeline.
    host.ok(&["close", &b]);

    let lines = in_a_terminal(&host, "activity");
    assert_eq!(lines.len(), 3, "{lines:#?}");
    for (line, (id, command)) in
        lines
            .iter()
            .zip([(&a, "echo one"), (&b, "echo two"), (&a, "echo three")])
    {
        assert!(
            line.contains(&format!(
                " {id} Claude Code (shell) run `{command}` → exited 0"
            )),
            "{line}"
        );
    }

    // Piped: one JSON entry a line, oldest first.
    let out = host.run(&["activity"]);
    out.expect(0);
    let entries: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let seen: Vec<(&str, &str)> = entries
        .iter()
        .map(|e| {
            (
                e["instance"].as_str().unwrap_or_default(),
                e["entry"]["args"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (a.as_str(), "echo one"),
            (b.as_str(), "echo two"),
            (a.as_str(), "echo three")
        ]
    );
    let times: Vec<&str> = entries
        .iter()
        .map(|e| e["entry"]["at"].as_str().unwrap_or_default())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    // --since a while ago keeps them; --since now-ish (a time after the
    // last) has none, and says so.
    assert_eq!(
        host.run(&["activity", "--since", "10m"])
            .stdout
            .lines()
            .count(),
        3
    );
    let later = host.run(&["activity", "--since", "2999-01-01T00:00:00Z"]);
    later.expect(0);
    assert!(later.stdout.is_empty(), "{}", later.stdout);
    assert!(later.stderr.contains("nothing done"), "{}", later.stderr);
    // --agent: only that agent's; a name that is none is exit 2.
    assert_eq!(
        host.run(&["activity", "--agent", "claude-code"])
            .stdout
            .lines()
            .count(),
        3
    );
    let codex = host.run(&["activity", "--agent", "codex"]);
    codex.expect(0);
    assert!(codex.stdout.is_empty(), "{}", codex.stdout);
    let bad = host.run(&["activity", "--agent", "clippy"]);
    bad.expect(2);
    assert!(bad.stderr.contains("claude-code"), "{}", bad.stderr);
}

#[test]
fn the_timeline_follows_what_agents_do_next() {
    let host = Host::new();
    let id = host.open_bash_agents_type_in("next");
    assert_eq!(as_agent(&host, &["run", &id, "--", "echo before"]), 0);
    let mut follow = host
        .command(&["activity", "--follow"])
        .spawn()
        .expect("start activity --follow");
    let stdout = follow.stdout.take().expect("stdout");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let next = |what: &str| -> Value {
        let line = lines
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("activity --follow never printed {what}"));
        serde_json::from_str(&line).expect("a JSON line")
    };
    assert_eq!(next("the entry before")["entry"]["args"], "echo before");
    assert_eq!(as_agent(&host, &["run", &id, "--", "echo after"]), 0);
    let after = next("the entry after");
    assert_eq!(after["entry"]["args"], "echo after");
    assert_eq!(after["instance"], id.as_str());
    let _ = follow.kill();
    let _ = follow.wait();
}
