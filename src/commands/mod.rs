//! One module per command or group of commands of docs/cli.md; `main`'s
//! `run` dispatches each [`crate::cli::Command`] to one function here (the
//! `loop` and `herdr` groups are [`crate::loop_cli`] and
//! [`crate::herdr_cli`]).

pub mod about;
pub mod activity;
pub mod approvals;
pub mod author;
pub mod call;
pub mod held;
pub mod instances;
pub mod internal;
pub mod mcp;
pub mod open;
pub mod packages;
pub mod recordings;
pub mod terminal;
pub mod timeline;
pub mod views;
pub mod web;

use crate::target::Target;
use anyhow::Result;
use serde_json::Value;
use tickloop_proto::wire::ClientRequest;

/// `describe`, `read`, `input`, `close`, `reload`, `approve`, `refuse`,
/// `approve-policy`: sends `request` and prints its answer, as JSON or, on
/// a terminal, as `human` makes it (the functions of [`crate::text`]).
/// While tickhost holds it for the person (an agent's `input` or
/// `close`), stderr says so ([`held`]); a refusal is the error `refused`,
/// exit 3.
pub fn answer_as(
    target: &Target,
    request: ClientRequest,
    json: bool,
    human: impl Fn(&Value) -> String,
) -> Result<i32> {
    let reply = target
        .connect()?
        .request_with_progress(request, held::tell_once(target))
        .map_err(|e| target.lost(e))?;
    let value = crate::target::value_of(reply)?;
    if json {
        crate::output::print_json(&value);
    } else {
        crate::output::out(&human(&value));
    }
    Ok(0)
}
