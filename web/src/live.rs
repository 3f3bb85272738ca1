//! A page's live WebSocket: the overview every page shows (every instance,
//! the held actions with the Monitor's own prompt text), and for the
//! instance the page has open, its newest state and its activity (with
//! its tools); and what agents did on every instance ([`crate::timeline`]). The overview is the one [`Tickhost`] asks for all pages;
//! the open instance's state is a `watch` of this page's, ended when the
//! page looks elsewhere.
//!
//! Page → server: `{"type":"auth","csrf":...}` first, then
//! `{"type":"select","instance":ID|null}`. Server → page: `hello`,
//! `overview`, `state`, `activity`, `timeline`, `closed` (see docs/web.md).

use crate::tickhost::{Overview, StateWatch, Tickhost};
use crate::websocket::{self, send_json, Ws};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;
use tickloop_proto::wire::{
    ActivityEntry, ActivityEvent, ActivityRecord, ClientReply, ClientRequest, ShellState,
    WatchEvent,
};
use time::format_description::well_known::Rfc3339;
use tokio_tungstenite::tungstenite::Message;
use view_monitor::shell_row::{ShellRow, Status};

/// How often the open instance's activity is asked for.
const ACTIVITY_INTERVAL: Duration = Duration::from_secs(1);

/// What a page's live socket needs from the server.
pub struct LiveContext {
    pub tickhost: Tickhost,
    pub auth: Arc<crate::auth::Auth>,
    pub session: crate::auth::Session,
    pub read_only: bool,
    /// The local time offset, for the activity's clock.
    pub offset: time::UtcOffset,
}

// The parts of escaped text live in their own module; these names stay
// here too, for the callers that took them from this one.
pub use crate::parts::{raw_parts, shown_parts};

/// A `shell:` entry's row as the page shows it, in the words of `tickloop
/// list` and the Monitor ([`ShellRow`]): its KIND, its state's `seq`, its
/// directory and command escaped (whole, and as [`shown_parts`]), and the
/// command's status (`exit 2 · 3.1s`; a running one says since when, for
/// the page's clock).
pub fn shell_row_message(shell: &ShellRow) -> Value {
    let command = shell.command.as_ref();
    let (status, running_since) = match command.map(|c| c.status) {
        Some(Status::Running { started }) => (
            Some("running".to_string()),
            started.and_then(|at| at.format(&Rfc3339).ok()),
        ),
        Some(ended) => (Some(ended.words(time::OffsetDateTime::now_utc())), None),
        None => (None, None),
    };
    json!({
        "kind": shell.kind,
        "seq": shell.seq,
        "cwd": shell.cwd,
        "cwd_parts": shell.cwd.as_deref().map(shown_parts),
        "command": command.map(|c| c.line.as_str()),
        "command_parts": command.map(|c| shown_parts(&c.line)),
        "status": status,
        "running_since": running_since,
        "failed": command.is_some_and(|c| c.status.failed()),
    })
}

/// The overview as the page reads it: the list, each entry with its title
/// escaped (`title_parts`) and a shell's row ([`shell_row_message`],
/// `shell_row`); each held action with its question, as the Monitor words
/// it (`question`, escaped; `question_parts`, a line's parts each,
/// [`shown_parts`]).
pub fn overview_message(overview: &Overview) -> Value {
    let held: Vec<Value> = overview
        .held
        .iter()
        .map(|held| {
            let question = view_monitor::approval_prompt::question(held, 0, true, usize::MAX);
            let parts: Vec<Value> = question.iter().map(|l| shown_parts(l)).collect();
            json!({
                "held": held,
                "question": question,
                "question_parts": parts,
                "notice": held.plainly_within(200),
            })
        })
        .collect();
    let mut list = overview.list.clone();
    for entry in list.as_array_mut().into_iter().flatten() {
        let title = entry["title"].as_str().map(raw_parts);
        let shell = ShellRow::of_json(entry).map(|shell| shell_row_message(&shell));
        if let Some(entry) = entry.as_object_mut() {
            if let Some(title) = title {
                entry.insert("title_parts".into(), title);
            }
            if let Some(shell) = shell {
                entry.insert("shell_row".into(), shell);
            }
        }
    }
    json!({
        "type": "overview",
        "list": list,
        "held": held,
        "problem": overview.problem,
    })
}

/// The instance the page has open.
struct Open {
    id: String,
    state: Option<StateWatch>,
    /// The newest activity entry sent (0: none yet).
    last: u64,
}

/// What woke the page's loop.
enum Woke {
    Page(Option<Message>),
    Overview,
    State(Option<Result<WatchEvent, String>>),
    Activity,
    Revoked,
}

/// Serves one page's live socket until it closes or its session is revoked.
pub async fn serve(mut ws: Ws, ctx: LiveContext) {
    if let Err(why) = websocket::authenticate(&mut ws, &ctx.session.csrf).await {
        return websocket::close_with(&mut ws, &why).await;
    }
    let hello = json!({"type": "hello", "read_only": ctx.read_only, "session": ctx.session.number});
    let mut overview = ctx.tickhost.overview();
    let first = overview_message(&overview.borrow_and_update());
    if !send_json(&mut ws, &hello).await || !send_json(&mut ws, &first).await {
        return;
    }
    let mut revocations = ctx.auth.revocations();
    let mut open: Option<Open> = None;
    let mut activity = tokio::time::interval(ACTIVITY_INTERVAL);
    let mut timeline = crate::timeline::Feed::default();
    loop {
        let woke = tokio::select! {
            message = ws.next() => Woke::Page(message.and_then(Result::ok)),
            changed = overview.changed() => match changed {
                Ok(()) => Woke::Overview,
                Err(_) => Woke::Page(None),
            },
            event = next_state(&mut open) => Woke::State(event),
            _ = activity.tick() => Woke::Activity,
            _ = revocations.changed() => Woke::Revoked,
        };
        let go_on = match woke {
            Woke::Page(Some(Message::Text(text))) => {
                on_page(&mut ws, &ctx, &mut open, text.as_str()).await
            }
            Woke::Page(Some(Message::Close(_)) | None) => false,
            Woke::Page(Some(_)) => true,
            Woke::Overview => {
                let message = overview_message(&overview.borrow_and_update());
                send_json(&mut ws, &message).await
            }
            Woke::State(event) => on_state(&mut ws, &mut open, event, ctx.offset).await,
            Woke::Activity => {
                send_activity(&mut ws, &ctx, &mut open).await
                    && timeline.send(&mut ws, &ctx.tickhost, ctx.offset).await
            }
            Woke::Revoked if !ctx.auth.is_open(&ctx.session) => {
                websocket::close_with(&mut ws, "revoked: log in again").await;
                false
            }
            Woke::Revoked => true,
        };
        if !go_on {
            return;
        }
    }
}

/// The next event of the open instance's watch; never, when there is none.
async fn next_state(open: &mut Option<Open>) -> Option<Result<WatchEvent, String>> {
    match open.as_mut().and_then(|o| o.state.as_mut()) {
        Some(watch) => watch.events.recv().await,
        None => std::future::pending().await,
    }
}

/// A message from the page.
async fn on_page(ws: &mut Ws, ctx: &LiveContext, open: &mut Option<Open>, text: &str) -> bool {
    let Ok(message) = serde_json::from_str::<Value>(text) else {
        return send_json(ws, &json!({"type": "error", "message": "not JSON"})).await;
    };
    if message.get("type").and_then(Value::as_str) != Some("select") {
        return send_json(ws, &json!({"type": "error", "message": "unknown message"})).await;
    }
    // The old watch ends here (its drop closes its connection).
    *open = None;
    let Some(id) = message.get("instance").and_then(Value::as_str) else {
        return true;
    };
    let state = match ctx.tickhost.watch(id).await {
        Ok(watch) => Some(watch),
        Err(why) => {
            let sent = json!({"type": "state", "instance": id, "error": why});
            if !send_json(ws, &sent).await {
                return false;
            }
            None
        }
    };
    *open = Some(Open {
        id: id.to_string(),
        state,
        last: 0,
    });
    send_activity(ws, ctx, open).await
}

/// A delivery (or the end) of the open instance's state; a shell's comes
/// with its commands as a person reads them ([`shell_view`]).
async fn on_state(
    ws: &mut Ws,
    open: &mut Option<Open>,
    event: Option<Result<WatchEvent, String>>,
    offset: time::UtcOffset,
) -> bool {
    let Some(current) = open.as_mut() else {
        return true;
    };
    let message = match event {
        Some(Ok(WatchEvent::Delivery(delivery))) => {
            let shell = shell_state(&current.id, &delivery.data)
                .map(|state| crate::shell_view::shell_view(&state, offset));
            json!({"type": "state", "instance": current.id, "delivery": delivery, "shell": shell})
        }
        Some(Ok(WatchEvent::Ended(notice))) => {
            json!({"type": "state", "instance": current.id, "ended": notice.ended})
        }
        Some(Err(why)) => json!({"type": "state", "instance": current.id, "error": why}),
        None => {
            // The watch is over (the instance ended, or not a Tick).
            current.state = None;
            return true;
        }
    };
    send_json(ws, &message).await
}

/// The state of a `shell:` instance as its commands, when `data` is one
/// (not when it was trimmed to the delivery budget past reading).
fn shell_state(id: &str, data: &Value) -> Option<ShellState> {
    let (kind, _) = tickloop_client::paths::parse_id(id)?;
    if kind != tickloop_client::paths::InstanceKind::Shell {
        return None;
    }
    serde_json::from_value(data.clone()).ok()
}

/// Whether the page's activity pane shows `entry`: what agents and views
/// did, not each state update a Tick or a shell published (the state pane
/// shows the newest; `tickloop activity` keeps them all).
fn in_the_page(entry: &ActivityEntry) -> bool {
    !matches!(entry.event, ActivityEvent::Update { .. })
}

/// Asks for the open instance's activity after what was sent; sends what
/// is new.
async fn send_activity(ws: &mut Ws, ctx: &LiveContext, open: &mut Option<Open>) -> bool {
    let Some(current) = open.as_mut() else {
        return true;
    };
    let request = ClientRequest::Activity {
        instance: current.id.clone(),
        after: (current.last > 0).then_some(current.last),
    };
    let record = match ctx.tickhost.request(request).await {
        Ok(ClientReply::Ok(value)) => serde_json::from_value::<ActivityRecord>(value)
            .map_err(|e| format!("unreadable activity: {e}")),
        Ok(ClientReply::Error(e)) => Err(e.message),
        Ok(ClientReply::Call(_)) => Err("tickhost answered activity with a call outcome".into()),
        Err(why) => Err(why),
    };
    let message = match record {
        Ok(record) => {
            // A record that went back (the instance was opened again):
            // the page starts over, and the next ask takes it whole.
            if record.last < current.last {
                current.last = 0;
                let reset = json!({"type": "activity", "instance": current.id, "reset": true, "entries": []});
                return send_json(ws, &reset).await;
            }
            if record.last == current.last && current.last > 0 {
                return true;
            }
            let reset = current.last == 0;
            current.last = record.last;
            let entries: Vec<Value> = record
                .entries
                .iter()
                .filter(|entry| in_the_page(entry))
                .map(|entry| {
                    json!({
                        "n": entry.n,
                        "text": view_monitor::activity::entry_text(entry, ctx.offset),
                        "entry": entry,
                    })
                })
                .collect();
            json!({
                "type": "activity",
                "instance": current.id,
                "reset": reset,
                "tools": record.tools,
                "subscribers": record.subscribers,
                "entries": entries,
            })
        }
        Err(why) => json!({"type": "activity", "instance": current.id, "error": why}),
    };
    send_json(ws, &message).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shell's row reaches the page in the CLI's words, what the shell
    /// reported escaped and in parts; a Tick's entry gets none.
    #[test]
    fn the_overview_gives_a_shells_row_in_the_clis_words() {
        let overview = Overview {
            list: json!([
                {"id": "shell:work", "title": "bash",
                 "shell": {"shell": "bash", "kind": "injected", "active": true},
                 "shell_state": {"seq": 4, "cwd": "/srv/x\u{202e}y", "at_prompt": true,
                    "running": null, "commands_total": 2,
                    "last": {"n": 2, "command": "make test", "exit": 2,
                        "started": "2026-12-01T00:00:01Z", "ended": "2026-12-01T00:00:04.1Z",
                        "duration_ms": 3100}}},
                {"id": "shell:build", "title": "zsh",
                 "shell": {"shell": "zsh", "kind": "injected", "active": true},
                 "shell_state": {"seq": 5, "cwd": null, "at_prompt": false,
                    "running": {"n": 3, "command": "sleep 600",
                        "started": "2026-12-01T00:00:48Z"},
                    "last": null, "commands_total": 3}},
                {"id": "shell:py", "title": "python3"},
                {"id": "hosted:c", "title": "C", "kind": "k", "seq": 1},
            ]),
            ..Overview::default()
        };
        let message = overview_message(&overview);
        let row = |i: usize| message["list"][i]["shell_row"].clone();
        assert_eq!(row(0)["kind"], "bash");
        assert_eq!(row(0)["seq"], 4);
        assert_eq!(row(0)["cwd"], "/srv/x\\u{202E}y");
        assert_eq!(
            row(0)["cwd_parts"],
            json!([{"text": "/srv/x"}, {"escape": "\\u{202E}"}, {"text": "y"}])
        );
        assert_eq!(row(0)["command"], "make test");
        assert_eq!(row(0)["status"], "exit 2 · 3.1s");
        assert_eq!(row(0)["failed"], true);
        assert_eq!(row(1)["status"], "running");
        assert_eq!(row(1)["running_since"], "2026-12-01T00:00:48Z");
        assert_eq!(row(1)["failed"], false);
        assert_eq!(row(2)["kind"], "plain");
        assert_eq!(row(2)["command"], Value::Null);
        assert_eq!(row(3), Value::Null);
    }
}
