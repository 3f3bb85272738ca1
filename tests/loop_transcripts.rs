//! Transcript tests of the Loop through the real `tickloop loop run` process:
//! one test per rule of the seed (grammar and refusals, admission, completion,
//! stopping, `--resume`, cancellation during the delay, counting by source,
//! policy freezing, the ledger of a whole run).

mod loop_support;

use loop_support::{write_config, LoopHarness};
use serde_json::json;

const PLUGIN: &str = "tickloop/loop";

fn assert_refused(h: &mut LoopHarness, command: &str, needle: &str) {
    let (ok, text) = h.command(command);
    assert!(!ok, "`{command}` must be refused, got: {text}");
    assert!(
        text.contains(needle),
        "`{command}`: reply `{text}` should mention `{needle}`"
    );
}

#[test]
fn grammar_and_each_refusal() {
    let mut h = LoopHarness::start("grammar");
    h.turn("hello", "completed");
    for (command, needle) in [
        ("/tick 0", "invalid count"),
        ("/tick 257", "invalid count"),
        ("/tick -3", "invalid count"),
        ("/tick three", "invalid count"),
        ("/tick 2 3", "unexpected argument"),
        ("/tick --forever", "unknown option"),
        ("/tick --policy=tick", "unknown option"),
        ("/tick --resume --resume", "duplicated option"),
        ("/tick --policy tick --policy tick", "duplicated option"),
        ("/tick --policy", "needs a policy id"),
        ("/tick --policy 9lives", "invalid policy id"),
        ("/tick --policy nope", "unknown policy"),
        ("/tick status please", "takes no arguments"),
        ("/tick stop now", "takes no arguments"),
        ("/ticks", "not a /tick command"),
    ] {
        assert_refused(&mut h, command, needle);
    }
    // Control operations answer, and never become model input.
    let (ok, text) = h.command("/tick policies");
    assert!(
        ok && text.contains("tick (default): 4 bytes, sha256 "),
        "{text}"
    );
    assert_eq!(h.status(), "inactive");
    let (ok, text) = h.command("/tick stop");
    assert!(ok && text.contains("no run"), "{text}");
    // No refusal created a message or a ledger record.
    assert!(h.ledger().is_empty());
    // The grammar's accepted forms.
    let (ok, text) = h.command("/tick 1 --policy tick");
    assert!(ok, "{text}");
    let e = h.expect_enqueue();
    assert_eq!(
        e["message"],
        json!({"role":"user","content":[{"type":"text","text":"tick"}],
               "source":{"kind":"plugin","plugin":PLUGIN}})
    );
    let (code, rest, stderr) = h.finish();
    assert_eq!(code, 0, "{stderr}");
    assert!(rest.is_empty(), "{rest:?}");
}

#[test]
fn admission_predicates() {
    // A long delay: no step is enqueued while the refusals are checked.
    let mut h = LoopHarness::start_with("admission", None, &["--delay-ms", "60000"], true);
    // 1. no natural user message.
    assert_refused(&mut h, "/tick", "no user message");
    // 2. no closed turn.
    h.user("hi");
    assert_refused(&mut h, "/tick", "no turn has ended");
    // 3. a non-completed terminal.
    h.turn_end("error");
    assert_refused(&mut h, "/tick", "ended error");
    h.turn("again", "interrupted");
    assert_refused(&mut h, "/tick", "interrupted");
    // Admitted after a completed terminal.
    h.turn("once more", "completed");
    let (ok, text) = h.command("/tick 2");
    assert!(ok, "{text}");
    // 4. a second run.
    assert_refused(&mut h, "/tick 1", "already active");
    assert_eq!(h.ledger_types()[0], "loop_armed");
    assert_eq!(
        h.ledger().len(),
        2,
        "armed + scheduled, nothing for refusals"
    );
}

#[test]
fn count_exhaustion_completes() {
    let mut h = LoopHarness::start("complete");
    h.turn("work on it", "completed");
    let (ok, _) = h.command("/tick 3");
    assert!(ok);
    for step in 1..=3 {
        let e = h.expect_enqueue();
        assert_eq!(e["step"], step);
        h.step_turn(&e["message"], "completed");
    }
    let ledger = h.wait_ledger("loop_complete");
    assert_eq!(ledger.last().unwrap()["enqueued"], 3);
    assert_eq!(h.status(), "inactive");
    // Exactly three enqueues: nothing else came before the status reply.
}

#[test]
fn interrupted_or_error_terminal_stops() {
    for status in ["interrupted", "error"] {
        let mut h = LoopHarness::start(&format!("stop-{status}"));
        h.turn("go", "completed");
        assert!(h.command("/tick 3").0);
        let e = h.expect_enqueue();
        h.step_turn(&e["message"], status);
        let ledger = h.wait_ledger("loop_stopped");
        let terminal = &ledger[ledger.len() - 2];
        assert_eq!(terminal["type"], "tick_terminal");
        assert_eq!(terminal["status"], status);
        assert_eq!(h.status(), "inactive", "no further step after {status}");
    }
}

#[test]
fn resume_once_at_one_interrupted_boundary() {
    let mut h = LoopHarness::start_with("resume", None, &["--delay-ms", "500"], true);
    h.turn("go", "completed");
    h.turn("and this", "interrupted");
    assert_refused(&mut h, "/tick 2", "--resume");
    let (ok, text) = h.command("/tick 2 --resume");
    assert!(ok && text.contains("resuming"), "{text}");
    assert_eq!(h.ledger()[0]["resume"], true);
    // The boundary admits the first new message ...
    let first = h.expect_enqueue();
    assert_eq!(first["step"], 1);
    // ... once: the step's own interruption stops the run.
    h.step_turn(&first["message"], "interrupted");
    h.wait_ledger("loop_stopped");
    // The step's interruption is a new boundary, which may be resumed.
    let (ok, text) = h.command("/tick 2 --resume");
    assert!(ok, "{text}");
    let second = h.expect_enqueue();
    h.step_turn(&second["message"], "completed");
    let third = h.expect_enqueue();
    assert_eq!(third["step"], 2);
    assert!(h.command("/tick stop").0);
    // Resuming the very same boundary twice is refused.
    h.turn("more", "interrupted");
    h.send_command("/tick 1 --resume");
    h.send_command("/tick stop");
    assert!(h.expect_reply().0);
    let (ok, text) = h.expect_reply();
    assert!(ok && text.starts_with("stopped run"), "{text}");
    assert_refused(&mut h, "/tick 1 --resume", "already resumed");
    // And --resume does not admit an error terminal.
    h.turn("x", "error");
    assert_refused(&mut h, "/tick 1 --resume", "ended error");
}

#[test]
fn state_change_during_the_delay_cancels_before_enqueue() {
    let mut h = LoopHarness::start_with("cancel", None, &["--delay-ms", "2000"], true);
    h.turn("go", "completed");
    // A person types during the delay (sent right behind the command).
    h.send_command("/tick 2");
    h.user("wait, one more thing");
    assert!(h.expect_reply().0);
    let ledger = h.wait_ledger("tick_cancelled_before_enqueue");
    let types: Vec<&str> = ledger.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "loop_armed",
            "tick_scheduled",
            "tick_cancelled_before_enqueue"
        ]
    );
    assert!(ledger[2]["reason"].as_str().unwrap().contains("changed"));
    // No enqueue came out: the next line is the status reply.
    assert_eq!(h.status(), "inactive");
}

#[test]
fn a_human_typing_tick_is_not_counted() {
    let mut h = LoopHarness::start("human");
    // A person types "tick" before the run: natural context, not a time step.
    h.turn("tick", "completed");
    assert!(h.command("/tick 2").0);
    assert_eq!(h.ledger()[0]["startCount"], 0);
    let e = h.expect_enqueue();
    // The harness wrongly lets a person's "tick" stand in for the time step:
    // same text, wrong source, so it is not counted and the run stops as
    // inconsistent instead of scheduling step 2.
    h.turn("tick", "completed");
    let ledger = h.wait_ledger("loop_stopped");
    assert!(
        ledger.last().unwrap()["reason"]
            .as_str()
            .unwrap()
            .contains("inconsistent"),
        "{ledger:?}"
    );
    // Counted by source: the real time step, echoed, counts.
    assert!(h.command("/tick 1").0);
    let e2 = h.expect_enqueue();
    assert_eq!(e2["message"]["content"], e["message"]["content"]);
    h.step_turn(&e2["message"], "completed");
    h.wait_ledger("loop_complete");
}

#[test]
fn a_policy_edited_mid_run_does_not_change_the_run() {
    let original = "Take the next step.";
    let config = json!({"defaultTicks": 3, "defaultPolicyId": "steady",
                        "policies": {"steady": original}});
    let mut h = LoopHarness::start_with("freeze", Some(&config), &["--delay-ms", "20"], true);
    h.turn("go", "completed");
    let (ok, text) = h.command("/tick");
    assert!(
        ok && text.contains("3 time steps with policy steady"),
        "{text}"
    );
    let mut texts = Vec::new();
    for step in 1..=3 {
        let e = h.expect_enqueue();
        texts.push(e["message"]["content"][0]["text"].clone());
        if step == 1 {
            write_config(
                &h.config_home,
                &json!({"defaultTicks": 3, "defaultPolicyId": "steady",
                        "policies": {"steady": "Do something else entirely."}}),
            );
        }
        h.step_turn(&e["message"], "completed");
    }
    assert!(texts.iter().all(|t| t == original), "{texts:?}");
    let ledger = h.wait_ledger("loop_complete");
    let sha = ledger[0]["timeStepSha256"].clone();
    assert_eq!(sha.as_str().unwrap().len(), 64);
    for r in &ledger {
        assert_eq!(r["timeStepSha256"], sha, "{r}");
        assert_eq!(r["timeStepBytes"], original.len());
        assert_eq!(r["policyId"], "steady");
    }
}

#[test]
fn a_broken_config_is_reported() {
    let mut h = LoopHarness::start_with(
        "badconfig",
        Some(&json!({"policies": {"blank": "   "}})),
        &[],
        true,
    );
    let (code, stderr) = h.wait_exit();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("loop.json") && stderr.contains("blank"),
        "{stderr}"
    );
}

#[test]
fn the_ledger_of_a_whole_run() {
    let mut h = LoopHarness::start("ledger");
    h.turn("go", "completed");
    assert!(h.command("/tick 2").0);
    for _ in 0..2 {
        let e = h.expect_enqueue();
        h.step_turn(&e["message"], "completed");
    }
    let ledger = h.wait_ledger("loop_complete");
    let types: Vec<&str> = ledger.iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "loop_armed",
            "tick_scheduled",
            "tick_enqueued",
            "tick_terminal",
            "tick_scheduled",
            "tick_enqueued",
            "tick_terminal",
            "loop_complete"
        ]
    );
    let run_id = ledger[0]["runId"].clone();
    for r in &ledger {
        assert_eq!(r["schema"], "pulse.tick-loop.audit.v1");
        assert_eq!(r["sessionId"], h.session.as_str());
        assert_eq!(r["runId"], run_id);
        assert_eq!(r["policyId"], "tick");
        assert_eq!(r["timeStepBytes"], 4);
        assert_eq!(
            r["timeStepSha256"],
            "55a4bc5be68ea5c30cbe4d07e3bf951163b5a207dfd628ea53a2eb21072a9f3b"
        );
        let at = r["recordedAt"].as_str().unwrap();
        assert!(at.len() >= 20 && at.ends_with('Z'), "{at}");
    }
    assert_eq!(ledger[0]["count"], 2);
    assert_eq!(ledger[1]["step"], 1);
    assert_eq!(ledger[3]["status"], "completed");
    assert_eq!(ledger[6]["step"], 2);
    // One file, named from the sanitised session id ("session/ledger").
    let name = h
        .ledger_path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(
        name.starts_with("session_ledger-") && name.ends_with(".jsonl"),
        "{name}"
    );
}

#[test]
fn the_default_ledger_directory_is_under_the_working_directory() {
    let mut h = LoopHarness::start_with("defaultdir", None, &["--delay-ms", "20"], false);
    h.turn("go", "completed");
    assert!(h.command("/tick 1").0);
    let e = h.expect_enqueue();
    h.step_turn(&e["message"], "completed");
    assert!(h.audit_dir.starts_with(&h.cwd));
    h.wait_ledger("loop_complete");
}
