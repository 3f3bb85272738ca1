//! `tickloop activity [--follow] [--since WHEN] [--agent NAME]` with no
//! ID: what agents did on every instance (running, ended, and forgotten
//! ones whose record the data directory keeps), newest last, each entry
//! naming its instance and who acted. tickhost merges the records
//! (`timeline`); this prints them: a line of words each on a terminal,
//! one JSON entry a line piped. With `--follow` it asks again twice a
//! second for what came after, until interrupted.

use super::activity::Only;
use crate::output::{exit_0_at_interrupt, print_json, print_line, CliError};
use crate::target::Target;
use anyhow::{Context, Result};
use tickloop_proto::wire::{ClientReply, ClientRequest, TimelineCursor, TimelineReply};

/// How often `--follow` asks again.
const FOLLOW_EVERY: std::time::Duration = std::time::Duration::from_millis(500);

pub fn run(target: &Target, follow: bool, only: &Only, json: bool) -> Result<i32> {
    let mut client = target.connect()?;
    let offset = view_monitor::activity::local_offset();
    if follow {
        exit_0_at_interrupt();
    }
    let mut after: Option<TimelineCursor> = None;
    let mut told_unread = std::collections::BTreeSet::new();
    let mut printed_any = false;
    loop {
        let request = ClientRequest::Timeline {
            since: only.since.as_ref().map(|(_, text)| text.clone()),
            agent: only.agent,
            after: after.clone(),
            limit: None,
        };
        let reply: TimelineReply = match client.request(request).map_err(|e| target.lost(e))? {
            ClientReply::Ok(value) => {
                serde_json::from_value(value).context("tickhost sent an unreadable timeline")?
            }
            ClientReply::Error(e) => return Err(CliError::from_reply(e).into()),
            ClientReply::Call(_) => anyhow::bail!("tickhost answered timeline with a call outcome"),
        };
        for why in reply.unread {
            if told_unread.insert(why.clone()) {
                eprintln!("tickloop: not read: {why}");
            }
        }
        for entry in &reply.entries {
            let printed = if json {
                print_json(&serde_json::to_value(entry).context("cannot encode an entry")?)
            } else {
                print_line(&view_monitor::activity::timeline_text(entry, offset))
            };
            if !printed {
                return Ok(0);
            }
            printed_any = true;
        }
        if !follow {
            if !printed_any {
                eprintln!("tickloop: {}", nothing_yet(only));
            }
            return Ok(0);
        }
        after = Some(reply.next);
        std::thread::sleep(FOLLOW_EVERY);
    }
}

/// What an empty timeline says.
fn nothing_yet(only: &Only) -> String {
    let who = match only.agent {
        Some(agent) => agent.label(),
        None => "agents",
    };
    let when = if only.since.is_some() {
        " since then"
    } else {
        ""
    };
    format!("nothing done by {who} with any instance is recorded{when}")
}
