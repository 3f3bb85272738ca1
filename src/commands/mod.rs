//! One module per command or group of commands of docs/cli.md; `main`'s
//! `run` dispatches each [`crate::cli::Command`] to one function here (the
//! `loop` and `herdr` groups are [`crate::loop_cli`] and
//! [`crate::herdr_cli`]).

pub mod about;
pub mod activity;
pub mod approvals;
pub mod author;
pub mod call;
pub mod instances;
pub mod internal;
pub mod mcp;
pub mod open;
pub mod packages;
pub mod recordings;
pub mod views;

use crate::output::show_pretty;
use crate::target::Target;
use anyhow::Result;
use tickloop_proto::wire::ClientRequest;

/// `describe`, `read`, `input`, `close`, `reload`, `approve`, ...: sends
/// `request` and prints its answer (indented on a terminal).
pub fn answer(target: &Target, request: ClientRequest, json: bool) -> Result<i32> {
    let value = target.simple(request)?;
    show_pretty(&value, json);
    Ok(0)
}
