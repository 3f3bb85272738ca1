//! `tickloop call ID TOOL [ARGS_JSON] --revision R`: one call, waiting
//! through a person's approval; the exit code is the outcome's (0/3/4/5).
//! A call is bound to the catalog revision its caller read: without
//! `--revision` it is refused with the current one and how to pass it,
//! and a tool the Tick does not have gets its nearest name suggested.

use crate::cli::CallArgs;
use crate::output::{out, print_json, CliError};
use crate::target::Target;
use anyhow::Result;
use serde_json::{json, Value};
use tickloop_proto::wire::{CallOutcome, ClientReply, ClientRequest};

/// Sends the call and prints its outcome.
pub fn run(target: &Target, args: CallArgs, json: bool) -> Result<i32> {
    let arguments: Value = match args.args {
        None => json!({}),
        Some(text) => serde_json::from_str(&text).map_err(|e| {
            CliError::new(
                "bad_request",
                format!("ARGS_JSON is not JSON ({e}); pass an object like '{{\"amount\":1}}'"),
                2,
            )
        })?,
    };
    let Some(revision) = args.revision else {
        return Err(missing_revision(target, &args.id, &args.tool));
    };
    let (id, tool) = (args.id.clone(), args.tool.clone());
    let request = ClientRequest::Call {
        instance: args.id,
        call: tickloop_proto::wire::CallRequest {
            tool: args.tool,
            args: arguments,
            revision,
        },
    };
    let mut client = target.connect()?;
    let reply = match client.request_with_progress(request, super::held::tell_once(target)) {
        Ok(reply) => reply,
        // Sent, and then tickhost went away or stopped answering: the call
        // may or may not have run. Never guessed, never retried.
        Err(e) => ClientReply::Call(CallOutcome::Unknown {
            reason: match &target.host {
                Some(host) => format!("the ssh connection to {host} was lost: {e}"),
                None => format!("tickhost: {e}"),
            },
        }),
    };
    let near = match &reply {
        ClientReply::Call(CallOutcome::NotExecuted { error })
            if error.code == UNKNOWN_TOOL && error.message.contains("no tool named") =>
        {
            nearest_tool(target, &id, &tool)
        }
        _ => None,
    };
    let code = print_outcome(reply, json)?;
    if let Some(near) = near {
        eprintln!("tickloop: did you mean {near}? (`tickloop describe {id}` lists the tools)");
    }
    Ok(code)
}

/// The code of a call to a tool the Tick does not have (or with bad
/// arguments).
const UNKNOWN_TOOL: i64 = -32602;

/// `call` without `--revision`: the error names the current revision, and
/// where it comes from, rather than guessing it for the caller.
fn missing_revision(target: &Target, id: &str, tool: &str) -> anyhow::Error {
    let current = target.simple(ClientRequest::List).ok().and_then(|list| {
        let entries = tickloop_proto::wire::ListEntry::all(&list)?;
        entries
            .into_iter()
            .find(|e| e.id == id || e.id.split_once(':').is_some_and(|(_, name)| name == id))
            .and_then(|e| e.revision)
    });
    let now = match &current {
        Some(revision) => format!(
            "; {id} is at revision {revision} now: tickloop call {id} {tool} '{{...}}' --revision {revision}"
        ),
        None => String::new(),
    };
    CliError::new(
        "bad_request",
        format!(
            "call needs --revision REV, the revision of the catalog you read the tool in \
             (`tickloop describe {id}` shows it and the tools), so a call made against another \
             catalog is refused rather than run{now}"
        ),
        2,
    )
    .into()
}

/// The tool of `id` nearest to `typed` (a typo: `incremnt`), from a
/// fresh describe.
fn nearest_tool(target: &Target, id: &str, typed: &str) -> Option<String> {
    let descriptor = target
        .simple(ClientRequest::Describe {
            instance: id.to_string(),
        })
        .ok()?;
    descriptor["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["name"].as_str())
        .map(|name| (strsim::jaro_winkler(typed, name), name))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, name)| name.to_string())
}

/// Prints a call's outcome; the exit code is the outcome's.
fn print_outcome(reply: ClientReply, json: bool) -> Result<i32> {
    let outcome = match reply {
        ClientReply::Call(outcome) => outcome,
        ClientReply::Error(e) => return Err(CliError::from_reply(e).into()),
        ClientReply::Ok(result) => CallOutcome::Result { result },
    };
    let code = outcome.exit_code();
    let value = match &outcome {
        CallOutcome::Result { result } => json!({ "result": result }),
        CallOutcome::NotExecuted { error } => json!({ "error": error, "executed": false }),
        CallOutcome::Executed { error } => json!({ "error": error, "executed": true }),
        CallOutcome::Unknown { reason } => json!({ "unknown": { "reason": reason } }),
    };
    // The error once, on stderr; on a terminal stdout has the result only.
    match &outcome {
        CallOutcome::NotExecuted { error } => eprintln!(
            "tickloop: call not executed: {} (code {})",
            error.message, error.code
        ),
        CallOutcome::Executed { error } => eprintln!(
            "tickloop: call executed with an error (it may have had effects): {} (code {})",
            error.message, error.code
        ),
        CallOutcome::Unknown { reason } => eprintln!(
            "tickloop: call outcome unknown (it may or may not have run; not retried): {reason}"
        ),
        CallOutcome::Result { .. } => {}
    }
    match (&outcome, json) {
        (_, true) => {
            print_json(&value);
        }
        (CallOutcome::Result { result }, false) => out(&crate::text::call_result(result)),
        (_, false) => {}
    }
    Ok(code)
}
