//! A request tickhost may hold for the person (a call of a mutating tool
//! under `--approve ask`; an agent's typing into, running a command in,
//! recording or closing the person's instance): the CLI says on stderr,
//! once, what waits, every place the person answers (the Monitor, the
//! Tick's view, Herdr, the web page when one runs for this machine,
//! `tickloop approve`) and by when.

use crate::target::Target;
use tickloop_proto::wire::HeldCall;

/// The line that says `held` waits: what, its id, every place the person
/// answers (`web`: the page's URL, when a `tickloop web` runs), by when.
pub fn waiting_line(held: &HeldCall, web: Option<&str>) -> String {
    let web = match web {
        Some(url) => format!("the web page ({url}), "),
        None => String::new(),
    };
    format!(
        "tickloop: waiting for approval of {} ({}): {} The person answers in the Monitor, the Tick's view, Herdr, {web}or with `tickloop approve {} {}`; not executed if nobody answers by {}",
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
/// request waits (it says so again every 30 s), naming the web page when
/// a `tickloop web` serves `target`'s machine (asked then, of this
/// machine's; over `--host` the page would be the other machine's).
pub fn tell_once(target: &Target) -> impl FnMut(&HeldCall) {
    let mut told = false;
    let web = match (&target.host, &target.actor) {
        (None, Ok(asker)) => Some((target.runtime.clone(), *asker)),
        _ => None,
    };
    move |held| {
        if !std::mem::replace(&mut told, true) {
            let url = web
                .as_ref()
                .and_then(|(runtime, asker)| tickloop_web::page_url(runtime, *asker));
            eprintln!("{}", waiting_line(held, url.as_deref()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tickloop_proto::wire::HeldAction;

    #[test]
    fn the_wait_names_every_place_to_answer_and_the_deadline() {
        let held = HeldCall {
            action: HeldAction::Input,
            call: "%3".into(),
            instance: "shell:build".into(),
            tool: "run".into(),
            description: String::new(),
            args: json!({"command": "make test"}),
            echo_off: None,
            revision: String::new(),
            client: None,
            since: "2026-12-03T08:42:05.000Z".into(),
            waited_ms: 0,
            timeout_ms: 600_000,
        };
        let line = waiting_line(&held, Some("http://127.0.0.1:8080/"));
        for place in [
            "the Monitor",
            "the Tick's view",
            "Herdr",
            "the web page (http://127.0.0.1:8080/)",
            "`tickloop approve shell:build %3`",
            "by 08:52:05 UTC (10 min)",
            "Run `make test` at the prompt of shell:build?",
        ] {
            assert!(line.contains(place), "{place}: {line}");
        }
        assert!(!waiting_line(&held, None).contains("web page"));
    }
}
