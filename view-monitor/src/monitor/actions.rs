//! What the Monitor's keys do to instances, in the background, the footer
//! saying how it went: `y`/`n` answer a held action, `x` closes (or
//! forgets), `r` reloads. An agent's Monitor (run by an agent host's tool,
//! `src/actor.rs`) is read-only: it shows everything and does none of
//! these, saying why; tickhost refuses its answers too (its hello names
//! the agent).

use super::{Event, Monitor};
use crate::approval_prompt;
use serde_json::Value;
use tickloop_proto::wire::{ClientReply, ClientRequest};

impl Monitor {
    /// Whether this Monitor is an agent's and so may not `what`; then the
    /// footer says so (and why), and nothing is sent.
    pub(super) fn refused(&mut self, what: &str) -> bool {
        let Some(who) = &self.read_only else {
            return false;
        };
        self.message = Some(read_only_note(who, what));
        true
    }

    /// Approves or refuses `held` (in the background; the footer says how
    /// it went). A read-only Monitor sends nothing and says why.
    pub(super) fn decide(&mut self, held: tickloop_proto::wire::HeldCall, approve: bool) {
        let verb = if approve { "approve" } else { "refuse" };
        if self.refused(&format!("{verb} {} on {}", held.call, held.instance)) {
            return;
        }
        self.waiting.retain(|w| w.call != held.call);
        self.prompt_step = 0;
        let Some((endpoint, raw)) = self.route(&held.instance) else {
            return;
        };
        let shown = held.instance.clone();
        self.in_background(move || {
            let mut asked = held;
            asked.instance = raw;
            approval_prompt::decide(&endpoint, &asked, approve, "monitor")
                .replace(&asked.instance, &shown)
        });
    }

    /// Runs `work` on a thread: what it says goes to the footer, then the
    /// list is asked for again.
    fn in_background(&self, work: impl FnOnce() -> String + Send + 'static) {
        let tx = self.events_tx.clone();
        let waker = self.waker.clone();
        let poke = self.poke.clone();
        std::thread::spawn(move || {
            let _ = tx.send(Event::Message(work()));
            let _ = poke.send(());
            let _ = waker.wake();
        });
    }

    /// `r`: `tickloop reload ID` for an `artifact:` instance (its file's
    /// current version starts), in the background; for any other, the
    /// footer says what it can do instead.
    pub(super) fn reload_selected(&mut self) {
        let Some(row) = self.rows.get(self.selected) else {
            return;
        };
        let id = row.id.clone();
        if self.refused(&format!("reload {id}")) {
            return;
        }
        let Some((endpoint, raw)) = self.route(&id) else {
            return;
        };
        let artifact = tickloop_client::paths::parse_id(&raw)
            .is_some_and(|(kind, _)| kind == tickloop_client::paths::InstanceKind::Artifact);
        if !artifact {
            self.message = Some(format!(
                "r reloads an artifact: instance (a Tick written as a file); {id} is not one: \
                 x closes it, `tickloop open` starts another"
            ));
            return;
        }
        self.message = Some(format!("reloading {id}…"));
        self.in_background(move || {
            match endpoint
                .connect_running()
                .and_then(|mut c| c.request(ClientRequest::Reload { instance: raw }))
            {
                Ok(ClientReply::Ok(v)) => match v.get("generation").and_then(Value::as_u64) {
                    Some(generation) => format!("{id} reloaded: generation {generation}"),
                    None => format!("{id} reloaded"),
                },
                Ok(ClientReply::Error(e)) => format!("cannot reload {id}: {}", e.message),
                Ok(ClientReply::Call(_)) => format!("cannot reload {id}: an unexpected answer"),
                Err(e) => format!("cannot reload {id}: {e}"),
            }
        });
    }

    /// `tickloop close ID` in the background; the footer says how it went.
    pub(super) fn close_instance(&mut self, id: String, ended: bool) {
        if self.refused(&format!("close {id}")) {
            return;
        }
        self.message = Some(format!("closing {id}…"));
        let Some((endpoint, raw)) = self.route(&id) else {
            return;
        };
        self.in_background(move || {
            match endpoint
                .connect_running()
                .and_then(|mut c| c.request(ClientRequest::Close { instance: raw }))
            {
                Ok(ClientReply::Ok(_)) if ended => format!("{id} forgotten"),
                Ok(ClientReply::Ok(_)) => format!("{id} closed"),
                Ok(ClientReply::Error(e)) => format!("cannot close {id}: {}", e.message),
                Ok(ClientReply::Call(_)) => format!("cannot close {id}: an unexpected answer"),
                Err(e) => format!("cannot close {id}: {e}"),
            }
        });
    }
}

/// What a read-only Monitor says when asked to `what`: who it runs as, and
/// where the person does it.
pub(super) fn read_only_note(who: &str, what: &str) -> String {
    format!(
        "read-only: {who} may not {what}; only the person does (their own Monitor or \
         view, `tickloop approve`)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_who_what_and_where_the_person_does_it() {
        let note = read_only_note("Claude Code (its shell tool)", "approve %1 on shell:sh");
        assert!(
            note.starts_with(
                "read-only: Claude Code (its shell tool) may not approve %1 on shell:sh;"
            ),
            "{note}"
        );
        assert!(note.contains("tickloop approve"), "{note}");
    }
}
