//! `tickloop call ID TOOL [ARGS_JSON] --revision R`: one call, waiting
//! through a person's approval; the exit code is the outcome's (0/3/4/5).

use crate::cli::CallArgs;
use crate::output::{show_pretty, CliError};
use crate::target::Target;
use anyhow::Result;
use serde_json::{json, Value};
use tickloop_proto::wire::{CallOutcome, ClientReply, ClientRequest, HeldCall};

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
    let request = ClientRequest::Call {
        instance: args.id,
        call: tickloop_proto::wire::CallRequest {
            tool: args.tool,
            args: arguments,
            revision: args.revision,
        },
    };
    let mut client = target.connect()?;
    let mut told = false;
    let waiting = |held: &HeldCall| {
        if !std::mem::replace(&mut told, true) {
            eprintln!(
                "tickloop: waiting for approval of {} (call {}): a person approves it in the Monitor, or with `tickloop approve {} {}`",
                held.tool, held.call, held.instance, held.call
            );
        }
    };
    let reply = match client.request_with_progress(request, waiting) {
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
    print_outcome(reply, json)
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
    match &outcome {
        CallOutcome::NotExecuted { error } => {
            eprintln!(
                "tickloop: call not executed: {} (code {})",
                error.message, error.code
            )
        }
        CallOutcome::Executed { error } => eprintln!(
            "tickloop: call executed with an error (it may have had effects): {} (code {})",
            error.message, error.code
        ),
        CallOutcome::Unknown { reason } => eprintln!(
            "tickloop: call outcome unknown (it may or may not have run; not retried): {reason}"
        ),
        CallOutcome::Result { .. } => {}
    }
    show_pretty(&value, json);
    Ok(code)
}
