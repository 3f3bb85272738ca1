//! Unit and property tests of the Loop's state machine.

use super::*;
use crate::policy::PolicySet;
use proptest::prelude::*;
use std::path::Path;

fn core() -> LoopCore {
    core_with(PolicySet::builtin())
}

fn core_with(policies: PolicySet) -> LoopCore {
    LoopCore::new(
        LoopSettings {
            session_id: "s1".into(),
            delay_ms: 10,
            run_id_prefix: "r".into(),
            first_step_after_next_turn: false,
            command_plane: "test".into(),
        },
        policies,
    )
}

fn msg(role: &str, source: Source) -> Input {
    Input::Message(TranscriptMessage {
        role: role.into(),
        source,
    })
}

fn user() -> Input {
    msg("user", Source::user())
}

fn plugin() -> Input {
    msg("user", Source::loop_plugin())
}

fn end(status: &str) -> Input {
    Input::TurnEnd(TurnStatus::parse(status))
}

fn cmd(text: &str) -> Input {
    Input::Command(text.into())
}

/// A user turn that ended with `status`.
fn turn(c: &mut LoopCore, status: &str) {
    assert!(c.handle(user()).is_empty());
    c.handle(msg(
        "assistant",
        Source {
            kind: "assistant".into(),
            plugin: None,
        },
    ));
    c.handle(end(status));
}

fn reply(effects: &[Effect]) -> (bool, String) {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Reply { ok, text } => Some((*ok, text.clone())),
            _ => None,
        })
        .expect("a reply")
}

fn audits(effects: &[Effect]) -> Vec<&'static str> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Audit(r) => Some(r.kind.as_str()),
            _ => None,
        })
        .collect()
}

fn fire(c: &mut LoopCore) -> Vec<Effect> {
    let token = c.timer().expect("a timer is armed");
    c.handle(Input::TimerFired(token))
}

fn enqueued(effects: &[Effect]) -> Option<&Value> {
    effects.iter().find_map(|e| match e {
        Effect::Enqueue { message, .. } => Some(message),
        _ => None,
    })
}

#[test]
fn admission_refusals() {
    let mut c = core();
    let (ok, text) = reply(&c.handle(cmd("/tick")));
    assert!(!ok && text.contains("no user message"), "{text}");
    c.handle(user());
    let (ok, text) = reply(&c.handle(cmd("/tick")));
    assert!(!ok && text.contains("no turn has ended"), "{text}");
    c.handle(end("error"));
    let (ok, text) = reply(&c.handle(cmd("/tick")));
    assert!(!ok && text.contains("ended error"), "{text}");
    let (ok, _) = reply(&c.handle(cmd("/tick --resume")));
    assert!(!ok, "--resume only covers an interrupted boundary");
    turn(&mut c, "interrupted");
    let (ok, text) = reply(&c.handle(cmd("/tick")));
    assert!(!ok && text.contains("--resume"), "{text}");
    let (ok, text) = reply(&c.handle(cmd("/tick 2 --policy nope")));
    assert!(!ok && text.contains("unknown policy"), "{text}");
    turn(&mut c, "completed");
    let e = c.handle(cmd("/tick 2"));
    assert!(reply(&e).0);
    let (ok, text) = reply(&c.handle(cmd("/tick")));
    assert!(!ok && text.contains("already active"), "{text}");
    // Refusals never create a message nor touch the ledger.
    assert!(c.run().is_some());
}

#[test]
fn a_whole_run_and_its_records() {
    let mut c = core();
    turn(&mut c, "completed");
    let mut all = c.handle(cmd("/tick 2"));
    assert_eq!(c.run().unwrap().phase, RunPhase::Scheduled { token: 1 });
    for step in 1..=2u32 {
        let e = fire(&mut c);
        let m = enqueued(&e).expect("a time step").clone();
        assert_eq!(m["source"]["plugin"], PLUGIN_NAME);
        assert_eq!(m["content"][0]["text"], "tick");
        assert_eq!(c.run().unwrap().enqueued, step);
        all.extend(e);
        all.extend(c.handle(plugin()));
        all.extend(c.handle(end("completed")));
    }
    assert!(c.run().is_none());
    assert_eq!(
        audits(&all),
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
}

#[test]
fn non_completed_terminal_stops() {
    for status in ["interrupted", "error", "weird"] {
        let mut c = core();
        turn(&mut c, "completed");
        c.handle(cmd("/tick 3"));
        fire(&mut c);
        c.handle(plugin());
        let e = c.handle(end(status));
        assert_eq!(audits(&e), ["tick_terminal", "loop_stopped"], "{status}");
        assert!(c.run().is_none() && c.timer().is_none());
    }
}

#[test]
fn resume_is_allowed_once_at_one_interrupted_boundary() {
    let mut c = core();
    turn(&mut c, "completed");
    turn(&mut c, "interrupted");
    let e = c.handle(cmd("/tick 2 --resume"));
    assert!(reply(&e).0, "{:?}", reply(&e));
    // The same boundary again (after a stop) is refused.
    c.handle(cmd("/tick stop"));
    let (ok, text) = reply(&c.handle(cmd("/tick 2 --resume")));
    assert!(!ok && text.contains("already resumed"), "{text}");
    // A new interrupted boundary admits a new resume, which enqueues once.
    turn(&mut c, "interrupted");
    assert!(reply(&c.handle(cmd("/tick 2 --resume"))).0);
    assert!(enqueued(&fire(&mut c)).is_some());
    c.handle(plugin());
    // The step's own interruption is not the authorized boundary.
    let e = c.handle(end("interrupted"));
    assert_eq!(audits(&e), ["tick_terminal", "loop_stopped"]);
}

#[test]
fn state_change_during_delay_cancels_before_enqueue() {
    let mut c = core();
    turn(&mut c, "completed");
    c.handle(cmd("/tick 2"));
    c.handle(user()); // a person typed during the delay
    let e = fire(&mut c);
    assert!(enqueued(&e).is_none());
    assert_eq!(audits(&e), ["tick_cancelled_before_enqueue"]);
    assert!(c.run().is_none());
    // A turn that opened and closed during the delay changes the state too.
    c.handle(end("completed"));
    c.handle(cmd("/tick 2"));
    turn(&mut c, "completed");
    assert_eq!(audits(&fire(&mut c)), ["tick_cancelled_before_enqueue"]);
}

#[test]
fn a_stale_timer_does_nothing() {
    let mut c = core();
    turn(&mut c, "completed");
    c.handle(cmd("/tick 2"));
    let token = c.timer().unwrap();
    assert!(c.handle(Input::TimerFired(token + 7)).is_empty());
    let e = c.handle(cmd("/tick stop"));
    assert!(e.contains(&Effect::CancelTimer { token }));
    assert_eq!(
        audits(&e),
        ["tick_cancelled_before_enqueue", "loop_stopped"]
    );
    assert!(c.handle(Input::TimerFired(token)).is_empty());
}

#[test]
fn human_tick_is_not_a_time_step() {
    let mut c = core();
    c.handle(msg("user", Source::user())); // text "tick": irrelevant
    c.handle(end("completed"));
    c.handle(cmd("/tick 2"));
    assert!(enqueued(&fire(&mut c)).is_some());
    // Instead of the time step, a person's "tick" reaches the transcript.
    c.handle(user());
    let e = c.handle(end("completed"));
    assert_eq!(audits(&e), ["tick_terminal", "loop_stopped"]);
}

#[test]
fn waits_for_an_open_turn() {
    let mut c = core();
    turn(&mut c, "completed");
    c.handle(user());
    let e = c.handle(cmd("/tick 1"));
    assert!(reply(&e).1.contains("waiting"));
    assert_eq!(c.run().unwrap().phase, RunPhase::Waiting);
    assert!(c.timer().is_none());
    let e = c.handle(end("completed"));
    assert_eq!(audits(&e), ["tick_scheduled"]);
    assert!(enqueued(&fire(&mut c)).is_some());
    c.handle(plugin());
    assert_eq!(
        audits(&c.handle(end("completed"))),
        ["tick_terminal", "loop_complete"]
    );
}

#[test]
fn policies_are_frozen_per_run() {
    let path = Path::new("loop.json");
    let set = PolicySet::from_json(path, r#"{"policies":{"calm":"Continue calmly."}}"#).unwrap();
    let mut c = core_with(set);
    turn(&mut c, "completed");
    let e = c.handle(cmd("/tick 1 --policy calm"));
    let Some(Effect::Audit(r)) = e.first() else {
        panic!("{e:?}")
    };
    assert_eq!(r.policy.time_step_text, "Continue calmly.");
    let m = enqueued(&fire(&mut c)).unwrap().clone();
    assert_eq!(m["content"][0]["text"], "Continue calmly.");
    let (_, text) = reply(&c.handle(cmd("/tick policies")));
    assert!(text.contains("calm: 16 bytes"), "{text}");
    assert!(text.contains("tick (default)"), "{text}");
}

#[test]
fn subscriptions_ride_on_time_steps() {
    let mut c = core();
    let e = c.handle(Input::Subscribe(vec!["hosted:a".into()]));
    assert!(e.contains(&Effect::Watch {
        instances: vec!["hosted:a".into()]
    }));
    let d = |seq, updates| Delivery {
        instance: "hosted:a".into(),
        seq,
        at: "t".into(),
        data: json!({"value": seq}),
        updates,
        merged: 0,
        trimmed: false,
        recover_with: None,
        reloaded: None,
    };
    c.handle(Input::Delivery(d(0, 0)));
    c.handle(Input::Delivery(d(2, 2)));
    let mut other = d(9, 9);
    other.instance = "hosted:other".into();
    c.handle(Input::Delivery(other));
    turn(&mut c, "completed");
    c.handle(cmd("/tick 2"));
    let m = enqueued(&fire(&mut c)).unwrap().clone();
    let content = m["content"].as_array().unwrap();
    assert_eq!(content.len(), 2);
    assert_eq!(content[1]["type"], "data");
    assert_eq!(content[1]["data"]["instance"], "hosted:a");
    assert_eq!(content[1]["data"]["updates"], 2);
    assert_eq!(content[1]["data"]["merged"], 1);
    assert_eq!(content[1]["data"]["data"], json!({"value": 2}));
    c.handle(plugin());
    c.handle(end("completed"));
    // Nothing new: the next step carries the text alone.
    let m = enqueued(&fire(&mut c)).unwrap().clone();
    assert_eq!(m["content"].as_array().unwrap().len(), 1);
}

#[test]
fn dispose_cancels() {
    let mut c = core();
    turn(&mut c, "completed");
    c.handle(cmd("/tick"));
    let e = c.handle(Input::Dispose);
    assert_eq!(
        audits(&e),
        ["tick_cancelled_before_enqueue", "loop_stopped"]
    );
    assert!(c.run().is_none());
}

#[derive(Debug, Clone)]
enum Ev {
    User,
    Assistant,
    Plugin,
    /// Echo the pending time step, as a harness does.
    Echo,
    End(&'static str),
    Cmd(&'static str),
    FireArmed,
    FireStale(u64),
    Dispose,
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        3 => Just(Ev::User),
        1 => Just(Ev::Assistant),
        1 => Just(Ev::Plugin),
        4 => Just(Ev::Echo),
        4 => prop::sample::select(vec!["completed", "completed", "interrupted", "error"]).prop_map(Ev::End),
        3 => prop::sample::select(vec![
            "/tick", "/tick 1", "/tick 2", "/tick 5", "/tick 2 --resume", "/tick --resume",
            "/tick stop", "/tick status", "/tick policies", "/tick 0", "/tick --policy x",
        ]).prop_map(Ev::Cmd),
        5 => Just(Ev::FireArmed),
        1 => (0u64..20).prop_map(Ev::FireStale),
        1 => Just(Ev::Dispose),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]
    #[test]
    fn invariants_hold_for_any_event_sequence(events in prop::collection::vec(ev(), 0..120)) {
        let mut c = core();
        // The harness's own view, built only from what it sends and receives.
        let mut armed: Option<u64> = None;
        let mut turn_open = false;
        let mut pending_echo = false;
        let mut run: Option<(String, u64, u64)> = None; // id, count, enqueued
        for e in events {
            let input = match e {
                Ev::User => { turn_open = true; user() }
                Ev::Assistant => msg("assistant", Source { kind: "assistant".into(), plugin: None }),
                Ev::Plugin => { turn_open = true; plugin() }
                Ev::Echo => {
                    if !pending_echo { continue; }
                    pending_echo = false;
                    turn_open = true;
                    plugin()
                }
                Ev::End(s) => { turn_open = false; end(s) }
                Ev::Cmd(t) => cmd(t),
                Ev::FireArmed => match armed.take() { Some(t) => Input::TimerFired(t), None => continue },
                Ev::FireStale(t) => {
                    if Some(t) == armed { continue; }
                    Input::TimerFired(t)
                }
                Ev::Dispose => Input::Dispose,
            };
            for effect in c.handle(input) {
                match effect {
                    Effect::ArmTimer { token, .. } => {
                        prop_assert!(armed.is_none(), "a second timer");
                        armed = Some(token);
                    }
                    Effect::CancelTimer { token } => {
                        prop_assert_eq!(armed, Some(token));
                        armed = None;
                    }
                    Effect::Enqueue { run_id, .. } => {
                        prop_assert!(!turn_open, "a message while a turn is active");
                        let r = run.as_mut().expect("an enqueue belongs to a run");
                        prop_assert_eq!(&r.0, &run_id);
                        r.2 += 1;
                        prop_assert!(r.2 <= r.1, "more messages than the count");
                        pending_echo = true;
                    }
                    Effect::Audit(rec) => match rec.kind {
                        AuditKind::LoopArmed => {
                            prop_assert!(run.is_none(), "a second run");
                            let count = rec.details["count"].as_u64().unwrap_or(0);
                            run = Some((rec.run_id.clone(), count, 0));
                        }
                        AuditKind::LoopStopped | AuditKind::LoopComplete => {
                            prop_assert_eq!(run.as_ref().map(|r| r.0.clone()), Some(rec.run_id.clone()));
                            run = None;
                        }
                        _ => prop_assert!(run.as_ref().map(|r| &r.0) == Some(&rec.run_id)),
                    },
                    Effect::Reply { .. } | Effect::Watch { .. } => {}
                }
            }
            // A step cancelled before enqueue ends its run without a stop record.
            if c.run().is_none() {
                run = None;
            }
            prop_assert_eq!(c.timer(), armed);
            prop_assert_eq!(c.run().map(|r| r.id), run.as_ref().map(|r| r.0.clone()));
        }
    }
}

/// An agent that starts no turn after a consumed command (Codex, Gemini
/// CLI): the run waits for the next turn's terminal, and its first step is
/// scheduled from that terminal; a natural message meanwhile is context,
/// not a step.
#[test]
fn first_step_after_the_next_turn() {
    let mut c = core();
    c.settings.first_step_after_next_turn = true;
    turn(&mut c, "completed");
    let armed = c.handle(cmd("/tick 1"));
    assert_eq!(audits(&armed), ["loop_armed"]);
    assert!(!armed.iter().any(|e| matches!(e, Effect::ArmTimer { .. })));
    assert!(reply(&armed).1.contains("next turn"), "{:?}", reply(&armed));
    assert_eq!(c.run().unwrap().phase, RunPhase::Waiting);
    assert!(c.handle(user()).is_empty());
    let ended = c.handle(end("completed"));
    assert_eq!(audits(&ended), ["tick_scheduled"]);
    let fired = fire(&mut c);
    assert_eq!(audits(&fired), ["tick_enqueued"]);
    c.handle(plugin());
    assert_eq!(
        audits(&c.handle(end("completed"))),
        ["tick_terminal", "loop_complete"]
    );
}

#[test]
fn the_ledger_says_who_armed_a_run_and_an_agent_never_does() {
    let mut c = core();
    turn(&mut c, "completed");
    let (ok, text) = reply(&c.handle(Input::AgentCommand("/tick 256".into())));
    assert!(!ok && text.contains("only the person arms"), "{text}");
    assert!(c.run().is_none(), "nothing armed");
    let (ok, _) = reply(&c.handle(Input::AgentCommand("/tick status".into())));
    assert!(ok, "an agent may ask the status");
    let effects = c.handle(cmd("/tick 2"));
    let armed = effects
        .iter()
        .find_map(|e| match e {
            Effect::Audit(r) if r.kind == crate::audit::AuditKind::LoopArmed => Some(r),
            _ => None,
        })
        .expect("loop_armed");
    assert_eq!(armed.details["armedBy"], "person");
    assert_eq!(armed.details["armedVia"], "test");
}

#[test]
fn a_subscription_of_an_id_with_controls_is_refused_whole() {
    let mut c = core();
    for bad in ["shell:x\u{1b}[2J", "hosted:a\u{202E}b", "\u{200B}"] {
        let effects = c.handle(Input::Subscribe(vec!["hosted:a".into(), bad.into()]));
        let (ok, text) = reply(&effects);
        assert!(!ok, "{text}");
        assert!(
            !text.chars().any(crate::ids::hides_or_controls),
            "escaped: {text}"
        );
        assert!(c.subscriptions().is_empty(), "nothing subscribed");
    }
    let (ok, text) = reply(&c.handle(cmd("/tick subscribe shell:\u{1b}]0;owned\u{7}")));
    assert!(!ok && text.contains("not an instance id"), "{text}");
    assert!(c.subscriptions().is_empty());
}
