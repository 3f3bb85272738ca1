//! The rules of `tickloop check` that call the Tick's tools with arguments
//! made from their `input_schema` ([`super::args`]): `bad_args` (argument
//! objects the schema refuses are refused, not executed) and `calls`
//! (every tool answers every valid argument object it is given, without an
//! internal error and without ending the session). Each failure names the
//! tool and the exact arguments, and the seed that made them.

use super::args::{invalid_args, valid_args};
use super::finding::{call_text, outcome_text, Finding};
use super::probe::{entry, wait_ended, Probe, END_VISIBLE};
use super::rule::Rule;
use anyhow::Result;
use serde_json::Value;
use tickloop_proto::core::codes;
use tickloop_proto::wire::CallOutcome;

/// A tool's name and whether it mutates (`true` when it does not say).
fn name_and_mutates(tool: &Value) -> (String, bool) {
    (
        tool["name"].as_str().unwrap_or_default().to_string(),
        tool["mutates"].as_bool().unwrap_or(true),
    )
}

/// bad_args: every argument object the generator makes that a tool's
/// schema refuses is answered -32602, not executed (the host refuses it
/// before the Tick sees it, so mutating tools are safe here too; they are
/// still used only with `--allow-mutating`).
pub fn bad_args_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let tools = probe.tools.clone();
    let mut tried = 0;
    let mut tools_tried = Vec::new();
    for tool in &tools {
        let (name, mutates) = name_and_mutates(tool);
        if mutates && !probe.allow_mutating {
            continue;
        }
        let cases = invalid_args(&tool["input_schema"], &mut probe.rng);
        if !cases.is_empty() {
            tools_tried.push(name.clone());
        }
        for (args, why) in cases {
            tried += 1;
            let revision = probe.revision.clone();
            let label = format!("bad args {}", call_text(&name, &args));
            let (outcome, effect) =
                probe.call_between_reads(&label, &name, args.clone(), &revision)?;
            match outcome {
                CallOutcome::NotExecuted { error } if error.code == codes::INVALID_PARAMS => {}
                other => {
                    return Ok(rule.fail(
                        format!(
                            "{} ({why}): expected -32602 not executed, got {}; {effect}",
                            call_text(&name, &args),
                            outcome_text(&other)
                        ),
                        "validate args against input_schema and answer -32602 without executing",
                    ))
                }
            }
        }
    }
    Ok(if tried == 0 {
        rule.not_checked(if probe.allow_mutating {
            "no tool's input_schema refuses any object the generator makes"
        } else {
            "no non-mutating tool's input_schema refuses any object the generator makes; --allow-mutating lets mutating tools be used (the host refuses the call before the Tick sees it)"
        })
    } else {
        rule.pass(format!(
            "{tried} argument objects outside the schema refused with -32602, not executed ({})",
            tools_tried.join(", ")
        ))
    })
}

/// What the calls of one run came to.
#[derive(Default)]
struct Tally {
    answered: usize,
    tools: Vec<String>,
    refused: Vec<String>,
    errors: Vec<String>,
    skipped: Vec<String>,
    not_generated: Vec<String>,
}

/// calls: every tool is called with each valid argument object made for it
/// (non-mutating tools always; mutating ones only with `--allow-mutating`,
/// said first). An internal error (-32603), or a session that ended during
/// or after a call, fails the rule with that call.
pub fn calls_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let tools = probe.tools.clone();
    let mut tally = Tally::default();
    let mut plan = Vec::new();
    for tool in &tools {
        let (name, mutates) = name_and_mutates(tool);
        if mutates && !probe.allow_mutating {
            tally.skipped.push(name);
            continue;
        }
        let made = valid_args(&tool["input_schema"], &mut probe.rng);
        if made.is_empty() {
            tally.not_generated.push(name);
            continue;
        }
        plan.extend(made.into_iter().map(|args| (name.clone(), mutates, args)));
    }
    let mutating: Vec<&str> = plan
        .iter()
        .filter(|(_, mutates, _)| *mutates)
        .map(|(name, _, _)| name.as_str())
        .collect();
    if !mutating.is_empty() {
        let mut names = mutating.clone();
        names.dedup();
        eprintln!(
            "tickloop check: --allow-mutating: calling the mutating tools {} with generated arguments",
            names.join(", ")
        );
    }
    for (name, _, args) in plan {
        if let Some(failed) = call_once(rule, probe, &name, args, &mut tally)? {
            return Ok(failed);
        }
    }
    Ok(summary(rule, probe.seed, &tally))
}

/// One call and the read after it; `Some(finding)` when it failed the rule.
fn call_once(
    rule: &Rule,
    probe: &mut Probe,
    name: &str,
    args: Value,
    tally: &mut Tally,
) -> Result<Option<Finding>> {
    let text = call_text(name, &args);
    probe.last_call = Some(text.clone());
    let outcome = super::probe::call(&probe.dir, &probe.instance, name, args, &probe.revision)?;
    let _ = probe.read(&format!("after {text}"))?;
    let replay = format!("(the same arguments again: --seed {})", probe.seed);
    match outcome {
        CallOutcome::Result { .. } => {}
        CallOutcome::Executed { error } if error.code == codes::INTERNAL => {
            return Ok(Some(rule.fail(
                format!("{text}: internal error -32603 {} {replay}", error.message),
                "these arguments fit the tool's input_schema: handle every value it allows (or narrow the schema)",
            )))
        }
        CallOutcome::Executed { error } => tally.errors.push(format!("{text}: {}", error.code)),
        CallOutcome::NotExecuted { error } => {
            tally.refused.push(format!("{text}: {}", error.code))
        }
        CallOutcome::Unknown { reason } => {
            return Ok(Some(unanswered(rule, probe, &text, &reason, &replay)?));
        }
    }
    tally.answered += 1;
    if !tally.tools.iter().any(|t| t == name) {
        tally.tools.push(name.to_string());
    }
    Ok(None)
}

/// The finding for a call with no answer: the session ended by a
/// violation (the seq and session rules say which, naming this call), by
/// the Tick's exit (a crash on these arguments), or not at all (no answer).
fn unanswered(
    rule: &Rule,
    probe: &Probe,
    text: &str,
    reason: &str,
    replay: &str,
) -> Result<Finding> {
    if !wait_ended(&probe.dir, &probe.instance, END_VISIBLE)? {
        return Ok(rule.fail(
            format!("no answer to {text}: {reason} {replay}"),
            "answer every tick/call; run work longer than 60 s in the background and report it by tick/update",
        ));
    }
    let end = entry(&probe.dir, &probe.instance)?
        .map(|e| e["ended"].clone())
        .unwrap_or_default();
    Ok(if end["kind"] == "violation" {
        rule.not_checked(format!(
            "the host ended the session for a violation during {text}; see the seq and session rules"
        ))
    } else {
        rule.fail(
            format!("the Tick exited during {text} ({reason}) {replay}"),
            "these arguments fit the tool's input_schema: handle every value it allows without crashing",
        )
    })
}

fn summary(rule: &Rule, seed: u64, tally: &Tally) -> Finding {
    let mut notes = String::new();
    let mut note = |label: &str, items: &[String]| {
        if !items.is_empty() {
            notes.push_str(&format!("; {label}: {}", items.join(", ")));
        }
    };
    note("answered with an error", &tally.errors);
    note("refused (not executed)", &tally.refused);
    note("no valid arguments could be made for", &tally.not_generated);
    note("not called (mutating, no --allow-mutating)", &tally.skipped);
    if tally.answered == 0 {
        rule.not_checked(format!("no tool was called (seed {seed}){notes}"))
    } else {
        rule.pass(format!(
            "answered: {} ({} calls, seed {seed}){notes}",
            tally.tools.join(", "),
            tally.answered
        ))
    }
}
