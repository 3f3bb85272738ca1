//! What the person opened stays the person's (issue 49), with the agent's
//! own `tickloop` CLI (the markers its host's shell tool sets left in
//! place, `CLAUDECODE=1`), real processes and real PTYs:
//!
//! * an agent's `close` of the person's ended instance, its `open --id`
//!   over it and its `shutdown` are refused (exit 3) and forget nothing
//!   (unless the person lets agents close it, `agent_close auto`);
//!   the person's own close forgets it, and its approval log and activity
//!   stay readable from the data directory;
//! * an agent's `reload` of the person's artifact waits for the person as
//!   a close does (saying so on stderr), the artifact's state is kept until
//!   the person approves, and every reload names its actor in the activity
//!   (a save: the file changed);
//! * an agent's `record` of the person's shell waits for the person and
//!   writes nothing meanwhile; a recording that runs shows in `list` and in
//!   the activity, naming who started it;
//! * recording options refuse Tickloop's own config and data folders and
//!   write nothing.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const CLAUDE: &[(&str, &str)] = &[("CLAUDECODE", "1")];

/// `tickloop ARGS` as Claude Code's shell tool runs it, to its end.
fn as_agent(host: &Host, args: &[&str]) -> Out {
    let mut cmd = host.command(args);
    cmd.envs(CLAUDE.iter().copied());
    run_prepared(cmd, args)
}

/// The entries of `id`'s activity record.
fn activity(host: &Host, id: &str) -> Vec<Value> {
    host.ok(&["activity", id])["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// The decisions of `id`'s approval log as (tool, decision).
fn decisions(host: &Host, id: &str) -> Vec<(String, String)> {
    let out = host.run(&["approvals", "--log", id]);
    out.expect(0);
    out.stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a log line"))
        .map(|e| {
            (
                e["tool"].as_str().unwrap_or("").to_string(),
                e["decision"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// `tickloop ARGS` started as Claude Code's shell tool runs it, once its
/// action of kind `action` waits for the person: the running command, the
/// action as `approvals` shows it, and its call id.
fn held_for_the_person(host: &Host, args: &[&str], action: &str) -> (Running, Value, String) {
    let running = host.spawn_with(CLAUDE, args);
    let waiting = host.the_waiting_one(WAIT);
    assert_eq!(waiting["action"], action, "{waiting}");
    assert_eq!(waiting["client"]["agent_cli"], "claude-code", "{waiting}");
    let call = waiting["call"].as_str().expect("a call id").to_string();
    (running, waiting, call)
}

/// Whether `stderr` says that action `tool` (`call`) waits, `plainly` as
/// the question puts it, and until when.
fn said_it_waits(stderr: &str, tool: &str, call: &str, plainly: &str) -> bool {
    stderr.contains(&format!(
        "waiting for approval of {tool} ({call}): {plainly}"
    )) && stderr.contains("not executed if nobody answers by")
}

/// An agent's typing into the person's `id`, refused by the person: the
/// approval log then holds it.
fn refused_typing(host: &Host, id: &str) {
    let (typing, _, call) = held_for_the_person(host, &["input", id, "echo unasked\r"], "input");
    host.ok(&["refuse", id, &call, "--reason", "not now"]);
    typing.finish().expect_error(3, "refused");
}

#[test]
fn an_agents_close_of_the_persons_ended_instance_leaves_its_approval_log_readable() {
    let host = Host::new();
    let id = host.open_bash("mine");
    refused_typing(&host, &id);
    // The person ends their shell.
    host.ok(&["input", &id, "exit\r"]);
    host.wait_ended(&id);
    let logged = decisions(&host, &id);
    assert_eq!(
        logged,
        [
            ("input".to_string(), "held".to_string()),
            ("input".to_string(), "refused".to_string())
        ]
    );

    // The agent may not forget it, nor open over it, nor shut down.
    let out = as_agent(&host, &["close", &id]);
    let error = out.expect_error(3, "refused");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("may not forget shell:mine")),
        "{error}"
    );
    let over = ["open", "--shell", "--id", "mine", "--", "bash", "--norc"];
    as_agent(&host, &over).expect_error(3, "refused");
    as_agent(&host, &["shutdown"]).expect_error(3, "refused");
    let entry = host.entry(&id).expect("still listed");
    assert_eq!(entry["state"], "ended", "the person's, untouched: {entry}");
    assert_eq!(entry["owner"], "person");
    assert_eq!(decisions(&host, &id), logged, "its log as it was");

    // The person forgets it: its log and activity outlive it, read from
    // the data directory.
    let forgotten = host.ok(&["close", &id]);
    assert_eq!(forgotten["forgotten"], true, "{forgotten}");
    assert!(host.entry(&id).is_none());
    assert_eq!(decisions(&host, &id), logged, "readable after the forget");
    let consents: Vec<String> = activity(&host, &id)
        .iter()
        .filter(|e| e["type"] == "consent")
        .map(|e| e["decision"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(consents, ["held", "refused"]);
    let kept = host.scratch().join("data/tickloop/kept");
    assert!(
        std::fs::read_dir(&kept).is_ok_and(|mut d| d.next().is_some()),
        "kept under {}",
        kept.display()
    );
}

/// A small artifact Tick: `bump` adds one to its count (`read` shows it).
const COUNTER: &str = r#"#!/usr/bin/env python3
import json, sys
count = 0
def send(**frame):
    sys.stdout.write(json.dumps(dict(jsonrpc="2.0", **frame)) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    request = json.loads(line)
    rid, method = request.get("id"), request.get("method")
    if method == "tick/describe":
        send(id=rid, result={"protocol": 3, "kind": "test.count", "title": "Count",
                             "revision": "1", "tools": [{"name": "bump", "description": "Add one.",
                             "mutates": True, "input_schema": {"type": "object"}}]})
    elif method == "tick/read":
        send(id=rid, result={"seq": 0, "data": {"count": count}})
    elif method == "tick/call":
        count += 1
        send(id=rid, result={"count": count})
"#;

fn count(host: &Host, id: &str) -> Value {
    host.read(id)["data"]["count"].clone()
}

/// The `reload` entries of `id`'s activity as (client, cause).
fn reloads(host: &Host, id: &str) -> Vec<(Value, String)> {
    activity(host, id)
        .iter()
        .filter(|e| e["type"] == "reload")
        .map(|e| {
            (
                e["client"].clone(),
                e["cause"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn an_agents_reload_of_the_persons_artifact_waits_and_its_state_is_kept() {
    let host = Host::new();
    let path: PathBuf = host.scratch().join("count.py");
    std::fs::write(&path, COUNTER).expect("the artifact");
    let opened = host.ok(&["open", "--artifact", &path.to_string_lossy()]);
    let id = opened["id"].as_str().expect("an id").to_string();
    for _ in 0..3 {
        host.ok(&["call", &id, "bump", "{}", "--revision", "1"]);
    }
    assert_eq!(count(&host, &id), 3);

    // Refused: nothing restarted, the count kept.
    let (reloading, _, call) = held_for_the_person(&host, &["reload", &id], "reload");
    assert_eq!(count(&host, &id), 3, "kept while it waits");
    host.ok(&["refuse", &id, &call]);
    let out = reloading.finish();
    out.expect_error(3, "refused");
    assert!(
        said_it_waits(&out.stderr, "reload", &call, &format!("Reload {id}")),
        "says on stderr what waits and until when: {}",
        out.stderr
    );
    assert_eq!(count(&host, &id), 3, "not reloaded");
    assert_eq!(host.entry(&id).expect("listed")["generation"], 1);

    // Approved: the newest version starts (its count from 0).
    let (reloading, _, call) = held_for_the_person(&host, &["reload", &id], "reload");
    host.ok(&["approve", &id, &call]);
    let reloaded = reloading.finish();
    reloaded.expect(0);
    assert_eq!(reloaded.json()["generation"], 2, "{}", reloaded.stdout);
    assert_eq!(count(&host, &id), 0);

    // The person's own reload asks nobody; a save reloads as designed.
    host.ok(&["reload", &id]);
    std::fs::write(&path, COUNTER.replace("\"Count\"", "\"Count two\"")).expect("a save");
    wait_for("the save's generation", || {
        (host.entry(&id)?["generation"] == 4).then_some(())
    });
    let claude = serde_json::json!({"agent_cli": "claude-code"});
    assert_eq!(
        reloads(&host, &id),
        [
            (claude, "asked".to_string()),
            (serde_json::json!("cli"), "asked".to_string()),
            (Value::Null, "file_changed".to_string()),
        ],
        "every reload names who asked, or that the file changed"
    );
    let decided: Vec<(String, String)> = decisions(&host, &id);
    assert_eq!(
        decided,
        [
            ("reload".to_string(), "held".to_string()),
            ("reload".to_string(), "refused".to_string()),
            ("reload".to_string(), "held".to_string()),
            ("reload".to_string(), "approved".to_string()),
        ]
    );
}

/// The `recording` entries of `id`'s activity as (client, started).
fn recordings(host: &Host, id: &str) -> Vec<(Value, bool)> {
    activity(host, id)
        .iter()
        .filter(|e| e["type"] == "recording")
        .map(|e| (e["client"].clone(), e["started"] == true))
        .collect()
}

fn recordings_listed(host: &Host, id: &str) -> u64 {
    host.entry(id).expect("listed")["recordings"]
        .as_u64()
        .unwrap_or(0)
}

#[test]
fn an_agents_record_of_the_persons_shell_waits_and_a_recording_shows_who_started_it() {
    let host = Host::new();
    let id = host.open_bash("watched");
    let file = host.scratch().join("rec.cast");
    let file_arg = file.to_string_lossy().into_owned();

    // Refused: nothing recorded, nothing written.
    let record = ["record", &id, "-o", &file_arg];
    let (recording, _, call) = held_for_the_person(&host, &record, "record");
    assert!(!file.exists(), "nothing written while it waits");
    assert_eq!(recordings_listed(&host, &id), 0);
    host.ok(&["refuse", &id, &call]);
    let out = recording.finish();
    out.expect_error(3, "refused");
    assert!(
        said_it_waits(&out.stderr, "record", &call, &format!("Record {id}")),
        "{}",
        out.stderr
    );
    assert!(!file.exists(), "a refused recording writes nothing");
    assert!(recordings(&host, &id).is_empty());

    // Approved: it records, listed and in the activity with its agent.
    let (recording, _, call) = held_for_the_person(&host, &record, "record");
    host.ok(&["approve", &id, &call]);
    wait_for("the recording to be listed", || {
        (recordings_listed(&host, &id) == 1).then_some(())
    });
    host.ok(&["input", &id, "echo recorded-$((6*7))\r"]);
    wait_for("the output in the recording", || {
        let text = std::fs::read_to_string(&file).ok()?;
        text.contains("recorded-42").then_some(())
    });
    // SAFETY: kill sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(recording.pid(), libc::SIGINT) }, 0);
    recording.finish().expect(0);
    wait_for("the recording to stop", || {
        (recordings_listed(&host, &id) == 0).then_some(())
    });
    let claude = serde_json::json!({"agent_cli": "claude-code"});
    assert_eq!(
        recordings(&host, &id),
        [(claude.clone(), true), (claude, false)]
    );

    // The person's own recording asks nobody and is named theirs.
    let mine = host.scratch().join("mine.cast");
    let recording = host.spawn(&["record", &id, "-o", &mine.to_string_lossy()]);
    wait_for("the person's recording to be listed", || {
        (recordings_listed(&host, &id) == 1).then_some(())
    });
    assert!(host.run(&["approvals"]).stdout.trim().is_empty());
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(recording.pid(), libc::SIGINT) }, 0);
    recording.finish().expect(0);
    assert_eq!(
        recordings(&host, &id).last(),
        Some(&(serde_json::json!("cli"), false))
    );
}

#[test]
fn recording_options_refuse_tickloops_own_folders_and_write_nothing() {
    let config = tempfile::tempdir().expect("a config dir");
    let host = Host::new().with_env(vec![(
        "XDG_CONFIG_HOME".to_string(),
        config.path().to_string_lossy().into_owned(),
    )]);
    let own = config.path().join("tickloop");
    std::fs::create_dir_all(&own).expect("the config folder");
    let id = host.open_bash("here");
    let into = |folder: &Path| folder.join("config.toml").to_string_lossy().into_owned();
    let data = host.scratch().join("data/tickloop");
    std::fs::create_dir_all(&data).expect("the data folder");
    for (folder, what) in [
        (own.as_path(), "config folder"),
        (data.as_path(), "data folder"),
    ] {
        let file = into(folder);
        let out = host.run(&["record", &id, "-o", &file]);
        let error = out.expect_error(2, "bad_request");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains(&format!("Tickloop's {what}"))),
            "{error}"
        );
        assert!(!Path::new(&file).exists(), "nothing written into {what}");
        let open = ["open", "--shell", "--record", &file, "--", "bash"];
        host.run(&open).expect_error(2, "bad_request");
        assert!(!Path::new(&file).exists());
    }
    assert_eq!(host.list().len(), 1, "nothing opened");
    assert_eq!(recordings_listed(&host, &id), 0);
}
