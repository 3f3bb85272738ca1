//! A request tickhost may hold for the person (a call of a mutating tool
//! under `--approve ask`; an agent's typing into or closing of the person's
//! instance): the CLI says on stderr, once, what waits, where the person
//! answers and by when.

use tickloop_proto::wire::HeldCall;

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
