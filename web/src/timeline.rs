//! The page's "what agents did": the timeline of agents' actions on every
//! instance (running, ended, and forgotten ones whose record is kept),
//! newest last, each entry in the words of `tickloop activity` (time,
//! instance, who acted, what was done and what it came to), sent on the
//! page's live socket as `{"type":"timeline"}` messages: every entry at
//! first (the newest [`KEPT`]), then, each time the live socket's clock
//! ticks, what came after. tickhost merges the records (`timeline`).

use crate::parts::shown_parts;
use crate::tickhost::Tickhost;
use crate::websocket::{send_json, Ws};
use serde_json::{json, Value};
use tickloop_proto::wire::{ClientReply, ClientRequest, TimelineCursor, TimelineReply};
use view_monitor::activity::{entry_client, entry_summary, timeline_text, Tone};

/// Entries a page is sent at first, and keeps at most.
pub const KEPT: u64 = 500;

/// One page's timeline: where it was read up to.
#[derive(Default)]
pub struct Feed {
    after: Option<TimelineCursor>,
}

impl Feed {
    /// Asks tickhost for what came after and sends it (the first time,
    /// even when empty, so the page can say so); false when the page is
    /// gone.
    pub async fn send(
        &mut self,
        ws: &mut Ws,
        tickhost: &Tickhost,
        offset: time::UtcOffset,
    ) -> bool {
        let first = self.after.is_none();
        let request = ClientRequest::Timeline {
            since: None,
            agent: None,
            after: self.after.clone(),
            limit: Some(KEPT),
        };
        let reply = match tickhost.request(request).await {
            Ok(ClientReply::Ok(value)) => serde_json::from_value::<TimelineReply>(value)
                .map_err(|e| format!("unreadable timeline: {e}")),
            Ok(ClientReply::Error(e)) => Err(e.message),
            Ok(ClientReply::Call(_)) => {
                Err("tickhost answered timeline with a call outcome".into())
            }
            Err(why) => Err(why),
        };
        let message = match reply {
            Ok(reply) => {
                self.after = Some(reply.next);
                if reply.entries.is_empty() && !first {
                    return true;
                }
                let entries: Vec<Value> = reply
                    .entries
                    .iter()
                    .map(|e| {
                        let (_, tone) = entry_summary(&e.entry, 200);
                        json!({
                            "instance": e.instance,
                            "at": e.entry.at,
                            "who": entry_client(&e.entry),
                            "parts": shown_parts(&timeline_text(e, offset)),
                            "tone": tone.map(tone_name),
                            "entry": e.entry,
                        })
                    })
                    .collect();
                json!({"type": "timeline", "reset": first, "entries": entries})
            }
            Err(why) => json!({"type": "timeline", "error": why}),
        };
        send_json(ws, &message).await
    }
}

/// A tone as the page's style names it.
fn tone_name(tone: Tone) -> &'static str {
    match tone {
        Tone::Done => "done",
        Tone::NotDone => "not-done",
        Tone::Failed => "failed",
    }
}
