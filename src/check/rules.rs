//! The rules of `tickloop check`: a table ([`RULES`]) of one function per
//! rule, each checking the opened Tick ([`Probe`]) and giving one
//! [`Finding`]; the order they run in and the order they are reported in.

use super::finding::{fail, outcome_text, Finding};
use super::probe::{ask, entry, updates, Probe};
use super::rule::Rule;
use super::{termination, tool_calls};
use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::Path;
use std::time::{Duration, Instant};
use tickloop_proto::wire::{CallOutcome, ClientRequest, EndClass};

/// A read slower than this (host overhead included) fails read promptness
/// (spec 4.4: SHOULD answer within a few milliseconds; 4.2: MUST within 10 s).
const READ_PROMPT: Duration = Duration::from_secs(2);
/// The delivery budget of one subscription delivery (spec 6.4, spec-gaps).
const DELIVERY_BUDGET: usize = 16 * 1024;
/// Typical state should fit in about this much (spec 6.4).
const TYPICAL_STATE: usize = 4 * 1024;
/// Requests a Tick must accept in flight at once (spec 3.3).
const IN_FLIGHT: usize = 8;
/// How long updates are counted before and after a resize.
const RESIZE_WINDOW: Duration = Duration::from_secs(1);
/// The tool name no Tick declares.
const NO_SUCH_TOOL: &str = "__tickloop_check_no_such_tool";

/// Every rule, in the order they run (each may use what the earlier ones
/// learnt, and calls change the Tick's state); `describe` is first: when
/// the Tick does not initialize, the others are not checked.
pub const RULES: &[Rule] = &[
    rule("describe", "4.2, 5.3", describe_rule),
    rule("recover_with", "9", recover_with_rule),
    rule("read_prompt", "4.4", read_prompt_rule),
    rule("in_flight", "3.3", in_flight_rule),
    rule("unknown_tool", "7.2", unknown_tool_rule),
    rule("bad_args", "7.2", tool_calls::bad_args_rule),
    rule("stale_revision", "5.5, 7.2", stale_revision_rule),
    rule("calls", "7.2, 7.3", tool_calls::calls_rule),
    rule("state_size", "6.4", state_size_rule),
    rule("no_update_on_resize", "4.1, 8.3", resize_rule),
    rule("session", "3.6", session_rule),
    rule("seq", "6.3", seq_rule),
    rule("sigterm", "4.5", termination::sigterm_rule),
    rule("eof", "4.5", termination::eof_rule),
];

const fn rule(
    name: &'static str,
    section: &'static str,
    check: fn(&Rule, &mut Probe) -> Result<Finding>,
) -> Rule {
    Rule {
        name,
        section,
        check,
    }
}

/// The order the findings are reported in.
pub const REPORTED: &[&str] = &[
    "describe",
    "recover_with",
    "read_prompt",
    "state_size",
    "in_flight",
    "unknown_tool",
    "bad_args",
    "stale_revision",
    "calls",
    "seq",
    "no_update_on_resize",
    "session",
    "sigterm",
    "eof",
];

/// describe: it initialized, with a valid descriptor.
fn describe_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    Ok(rule.pass(format!(
        "initialized in {} ms; descriptor valid (kind {}, revision {:?}, {} tools)",
        probe.init_time.as_millis(),
        probe.descriptor["kind"],
        probe.revision,
        probe.tools.len()
    )))
}

/// recover_with: none, or a declared tool that does not mutate.
fn recover_with_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let Some(name) = probe.descriptor.get("recover_with").and_then(Value::as_str) else {
        return Ok(rule.pass("none declared"));
    };
    Ok(match probe.tools.iter().find(|t| t["name"] == name) {
        Some(t) if t["mutates"] == false => rule.pass(format!("{name:?} does not mutate")),
        Some(_) => rule.fail(
            format!("recover_with {name:?} is a mutating tool"),
            "name a tool with mutates: false",
        ),
        None => rule.fail(
            format!("recover_with {name:?} names no declared tool"),
            "name one of the declared tools",
        ),
    })
}

/// read_prompt: the first read is answered, and soon.
fn read_prompt_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let asked = Instant::now();
    probe.first_read = probe.read("first read")?;
    let took = asked.elapsed();
    Ok(if probe.first_read.is_none() {
        fail(
            rule.name,
            "4.4, 6.2",
            "tick/read got no valid answer",
            "answer tick/read at once with {\"seq\": N, \"data\": {...}}",
        )
    } else if took > READ_PROMPT {
        rule.fail(
            format!("tick/read took {} ms (host included)", took.as_millis()),
            "answer tick/read from state kept in memory, without blocking on work",
        )
    } else {
        rule.pass(format!("answered in {} ms", took.as_millis()))
    })
}

/// state_size: the data of every read made (the first, and one after each
/// call) within the delivery budget; runs after the calls.
fn state_size_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    if probe.first_read.is_none() {
        return Ok(rule.not_checked("no state was read"));
    }
    let Some((when, size)) = probe.largest_state.clone() else {
        return Ok(rule.not_checked("no state was read"));
    };
    let reads = probe.seqs.len();
    Ok(if size > DELIVERY_BUDGET {
        rule.fail(
            format!(
                "state data was {size} bytes at the read {when}, over the 16 KiB delivery budget: deliveries trim it"
            ),
            "keep the state a summary (recent items, counts); leave bulk to tools",
        )
    } else if size > TYPICAL_STATE {
        rule.pass(format!(
            "at most {size} bytes over {reads} reads (the read {when}): within 16 KiB, above the typical 4 KiB"
        ))
    } else {
        rule.pass(format!("at most {size} bytes over {reads} reads"))
    })
}

/// in_flight: 8 reads at once, each on its own connection, all answered.
fn in_flight_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let handles: Vec<_> = (0..IN_FLIGHT)
        .map(|_| {
            let dir = probe.dir.clone();
            let instance = probe.instance.clone();
            std::thread::spawn(move || {
                ask(&dir, ClientRequest::Read { instance })
                    .ok()
                    .and_then(|r| r.ok())
            })
        })
        .collect();
    let answered = handles
        .into_iter()
        .filter_map(|h| h.join().ok().flatten())
        .count();
    Ok(if answered == IN_FLIGHT {
        rule.pass(format!("{IN_FLIGHT} concurrent reads all answered"))
    } else {
        rule.fail(
            format!("{answered} of {IN_FLIGHT} concurrent reads answered"),
            "read requests as they come and answer each by id; do not wait for one before reading the next",
        )
    })
}

/// A refused call's finding: `code`, not executed.
fn refused(rule: &Rule, outcome: &CallOutcome, effect: &str, code: i64, fix: &str) -> Finding {
    match outcome {
        CallOutcome::NotExecuted { error } if error.code == code => {
            rule.pass(format!("answered {code}, not executed; {effect}"))
        }
        other => rule.fail(
            format!(
                "expected {code} not executed, got {}; {effect}",
                outcome_text(other)
            ),
            fix,
        ),
    }
}

/// unknown_tool: a call of an undeclared tool is refused with -32602.
fn unknown_tool_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let revision = probe.revision.clone();
    let (outcome, effect) =
        probe.call_between_reads("the unknown tool", NO_SUCH_TOOL, json!({}), &revision)?;
    Ok(refused(
        rule,
        &outcome,
        &effect,
        -32602,
        "answer a tick/call of an undeclared tool with -32602 and do nothing",
    ))
}

/// stale_revision: a call made against an old revision (with arguments its
/// schema accepts, so that only the revision is wrong) is refused with
/// -32004.
fn stale_revision_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let mut rng = super::args::Rng::new(probe.seed);
    let args_of = |tool: &Value, rng: &mut super::args::Rng| {
        super::args::valid_args(&tool["input_schema"], rng)
            .into_iter()
            .next()
    };
    let Some(tool) = pick_tool(&probe.tools, probe.allow_mutating, |t| {
        args_of(t, &mut super::args::Rng::new(probe.seed)).is_some()
    }) else {
        return Ok(rule.not_checked(
            "no non-mutating tool could be given valid arguments (use --allow-mutating to try a mutating one; the host refuses it before the Tick sees it)",
        ));
    };
    let name = tool["name"].as_str().unwrap_or_default().to_string();
    let args = args_of(tool, &mut rng).unwrap_or_else(|| json!({}));
    let stale = format!("{}-stale", probe.revision);
    let (outcome, effect) =
        probe.call_between_reads("a stale revision", &name, args.clone(), &stale)?;
    let mut finding = refused(
        rule,
        &outcome,
        &effect,
        -32004,
        "compare the call's revision with the current one first; answer -32004 without executing",
    );
    finding.detail = format!("{name} {args} with revision {stale:?}: {}", finding.detail);
    Ok(finding)
}

/// No update on a resize (4.1, 8.3): the updates counted over a quiet
/// window, then over the same window after the PTY was resized twice by a
/// view of the check's own on the launcher's socket (the attach protocol;
/// the PTY follows the latest view).
fn resize_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let (dir, instance) = (probe.dir.as_path(), probe.instance.as_str());
    if entry(dir, instance)?.is_some_and(|e| e["state"] == "ended") {
        return Ok(rule.not_checked("the session had ended (see the session rule)"));
    }
    let Some(start) = updates(dir, instance)? else {
        return Ok(rule.not_checked("the instance is not listed"));
    };
    std::thread::sleep(RESIZE_WINDOW);
    let Some(quiet) = updates(dir, instance)? else {
        return Ok(rule.not_checked("the instance is not listed"));
    };
    if quiet != start {
        return Ok(rule.not_checked(
            format!(
                "the Tick sent {} updates in {} ms with nothing happening, so updates after a resize would prove nothing",
                quiet - start,
                RESIZE_WINDOW.as_millis()
            ),
        ));
    }
    let sizes = match resize_pty(dir, instance) {
        Ok(sizes) => sizes,
        Err(e) => {
            return Ok(rule.not_checked(format!("could not resize the PTY through a view: {e:#}")))
        }
    };
    std::thread::sleep(RESIZE_WINDOW);
    let Some(after) = updates(dir, instance)? else {
        return Ok(rule.not_checked("the instance is not listed"));
    };
    Ok(if after > quiet {
        rule.fail(
            format!(
                "{} update(s) within {} ms of resizing the PTY ({sizes}), none in the same time before",
                after - quiet,
                RESIZE_WINDOW.as_millis()
            ),
            "send tick/update only when the state changes, never on SIGWINCH or a repaint",
        )
    } else {
        rule.pass(format!("no update after resizing the PTY ({sizes})"))
    })
}

/// Attaches as a view at another size, then resizes once more; returns the
/// sizes the PTY took. The view hangs up at the end (a detach).
fn resize_pty(dir: &Path, instance: &str) -> Result<String> {
    use std::io::BufReader;
    use tickloop_client::framing::read_text_line_blocking;
    use tickloop_proto::attach::MAX_VIEW_LINE;
    use tickloop_proto::attach::{TermCaps, ToView, ViewEvent, ViewHello};
    use tickloop_proto::wire::{Hello, HelloReply, Role};
    let (kind, name) =
        tickloop_client::paths::parse_id(instance).context("the instance id is not kind:name")?;
    let socket = tickloop_client::paths::RuntimeDir::at(dir)
        .instance_files(kind, name)
        .context("the launcher's socket")?
        .socket;
    let stream = std::os::unix::net::UnixStream::connect(&socket)
        .with_context(|| format!("cannot connect to {}", socket.display()))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .context("socket timeout")?;
    let mut writer = stream.try_clone().context("socket")?;
    let mut reader = BufReader::new(stream);
    send_line(&mut writer, &Hello::new(Role::View))?;
    let line = read_text_line_blocking(&mut reader, MAX_VIEW_LINE)
        .context("the launcher's hello")?
        .unwrap_or_default();
    let reply: HelloReply = serde_json::from_str(&line).context("the launcher's hello")?;
    if let Some(refused) = reply.refused {
        anyhow::bail!("the launcher refused the view: {refused}");
    }
    let next_size = |reader: &mut BufReader<std::os::unix::net::UnixStream>| -> Result<(u16, u16)> {
        loop {
            let Some(line) =
                read_text_line_blocking(reader, MAX_VIEW_LINE).context("the launcher's frames")?
            else {
                anyhow::bail!("the launcher hung up");
            };
            match serde_json::from_str::<ToView>(&line) {
                Ok(ToView::Snapshot(s)) => return Ok((s.cols, s.rows)),
                Ok(ToView::Ended { reason }) => anyhow::bail!("the session ended: {reason}"),
                _ => continue,
            }
        }
    };
    send_line(
        &mut writer,
        &ViewHello {
            cols: 100,
            rows: 40,
            term: TermCaps::default(),
            client: Some("check".into()),
            tty: None,
        },
    )?;
    let first = next_size(&mut reader)?;
    send_line(&mut writer, &ViewEvent::Resize { cols: 90, rows: 35 })?;
    let mut second = next_size(&mut reader)?;
    // A snapshot at the old size may come first.
    while second == first {
        second = next_size(&mut reader)?;
    }
    Ok(format!(
        "from {}x{} to {}x{}",
        first.0, first.1, second.0, second.1
    ))
}

/// Writes `value` as one JSON line.
fn send_line<T: Serialize>(writer: &mut impl std::io::Write, value: &T) -> Result<()> {
    let mut line = serde_json::to_vec(value).context("cannot encode a view message")?;
    line.push(b'\n');
    writer
        .write_all(&line)
        .context("cannot write to the launcher")
}

/// session: still running, not ended by the host for a violation; the
/// call made last is named, for the author to replay.
fn session_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let last = entry(&probe.dir, &probe.instance)?;
    probe.ended = last
        .as_ref()
        .filter(|e| e["state"] == "ended")
        .map(|e| e["ended"].clone());
    let Some(end) = &probe.ended else {
        return Ok(rule.pass("no violation; still running"));
    };
    let after = probe
        .last_call
        .as_ref()
        .map(|call| {
            format!(
                " (the last call made: {call}; the same arguments again: --seed {})",
                probe.seed
            )
        })
        .unwrap_or_default();
    if end["kind"] == "violation" && end["reason"].as_str().is_some_and(|r| r.contains(" seq ")) {
        probe.seq_violation = Some(format!(
            "the host ended the session: {}{after}; offending line: {:.200}",
            end["reason"].as_str().unwrap_or_default(),
            end["offending"].as_str().unwrap_or_default()
        ));
        return Ok(rule.not_checked("the session ended by a seq violation (see the seq rule)"));
    }
    let kind: Option<EndClass> = serde_json::from_value(end["kind"].clone()).ok();
    let reason = end["reason"].as_str().unwrap_or("ended");
    let offending = end["offending"]
        .as_str()
        .map(|o| format!("; offending line: {o:.200}"))
        .unwrap_or_default();
    Ok(match kind {
        Some(EndClass::Violation) => rule.fail(
            format!("the host ended the session: {reason}{after}{offending}"),
            "write only complete JSON-RPC 2.0 lines on stdout (logs to stderr), with valid ids, seq and sizes",
        ),
        _ => fail(
            rule.name,
            "4.5",
            format!("the Tick ended during the check: {reason}{after}"),
            "keep running until the host closes stdin or sends SIGTERM",
        ),
    })
}

/// seq: never down across the sequential reads; updates are checked by the
/// host as they come, and a seq violation ends the session.
fn seq_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    if probe.ended.is_none() {
        let _ = probe.read("last read")?;
    }
    let updates = updates(&probe.dir, &probe.instance)?
        .map(|n| n.to_string())
        .unwrap_or_else(|| "the".to_string());
    let seqs = &probe.seqs;
    // A read below the floor is refused by the host (6.3).
    let below_floor = probe
        .read_failures
        .iter()
        .find(|(_, why)| why.contains("read floor"))
        .map(|(when, why)| format!("the read {when} was refused: {why}"));
    let backwards = seqs
        .windows(2)
        .find(|w| w[1].1 < w[0].1)
        .map(|w| format!("{} seq {} then {} seq {}", w[0].0, w[0].1, w[1].0, w[1].1))
        .or(below_floor);
    Ok(match (probe.seq_violation.take(), backwards) {
        (Some(what), _) => fail(
            rule.name,
            "6.3, 8.2",
            what,
            "raise seq by at least one for every update and never answer a read below the last update's seq",
        ),
        (None, Some(what)) => rule.fail(
            format!("seq went down: {what}"),
            "keep one counter, raised on each state change, and answer reads with its current value",
        ),
        (None, None) if seqs.len() < 2 => rule.not_checked("fewer than two reads answered"),
        (None, None) => rule.pass(format!(
            "{} reads (one after every call), seq never went down; {updates} updates, each checked by the host as it came (seq above the last, data not null, at most 512 KiB)",
            seqs.len()
        )),
    })
}

/// A tool to make refused calls on: a non-mutating one, else (only with
/// `--allow-mutating`) a mutating one. `pred` picks among them.
fn pick_tool(
    tools: &[Value],
    allow_mutating: bool,
    pred: impl Fn(&Value) -> bool,
) -> Option<&Value> {
    let mutates = |t: &Value| t["mutates"].as_bool().unwrap_or(true);
    tools.iter().find(|t| !mutates(t) && pred(t)).or_else(|| {
        allow_mutating
            .then(|| tools.iter().find(|t| mutates(t) && pred(t)))
            .flatten()
    })
}
