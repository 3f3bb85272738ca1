//! A request tickhost may hold for the person (a call of a mutating tool
//! under `--approve ask`; an agent's typing into or closing of the person's
//! instance): the CLI says on stderr, once, what waits, where the person
//! answers and by when, and a refusal exits 3 (not executed), as a refused
//! `call` does.

use crate::output::print_json;
use crate::target::Target;
use anyhow::Result;
use serde_json::Value;
use tickloop_proto::wire::{ClientRequest, HeldCall};

/// The line that says `held` waits: what, its id, where the person
/// answers, by when.
pub fn waiting_line(held: &HeldCall) -> String {
    format!(
        "tickloop: waiting for approval of {} ({}): {} The person answers in the Monitor, the Tick's view, Herdr or with `tickloop approve {} {}`; not executed if nobody answers by {}",
        held.tool,
        held.call,
        held.plainly(),
        held.instance,
        held.call,
        held.deadline_text()
    )
}

/// A closure for [`tickloop_client::Client::request_with_progress`] that
/// prints [`waiting_line`] on stderr the first time tickhost says the
/// request waits (it says so again every 30 s).
pub fn tell_once() -> impl FnMut(&HeldCall) {
    let mut told = false;
    move |held| {
        if !std::mem::replace(&mut told, true) {
            eprintln!("{}", waiting_line(held));
        }
    }
}

/// `input` and `close`: sends `request`, saying on stderr while it waits
/// for the person, and prints its answer as JSON or, on a terminal, as
/// `human` makes it; refused, exit 3.
pub fn answer(
    target: &Target,
    request: ClientRequest,
    json: bool,
    human: impl Fn(&Value) -> String,
) -> Result<i32> {
    let mut client = target.connect()?;
    let reply = client
        .request_with_progress(request, tell_once())
        .map_err(|e| target.lost(e))?;
    // A refusal is the error `refused`, exit 3.
    let value = crate::target::value_of(reply)?;
    if json {
        print_json(&value);
    } else {
        crate::output::out(&human(&value));
    }
    Ok(0)
}
