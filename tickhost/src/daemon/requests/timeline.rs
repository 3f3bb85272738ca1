//! `timeline`: what agents did on every instance, merged here once for
//! every front end (`tickloop activity` with no ID, the Monitor's "what
//! agents did", the web page's pane): the activity records of the running
//! instances (asked of their launchers at once), of the ended ones (kept
//! beside their last screen) and of the forgotten ones the data directory
//! keeps ([`tickloop_client::kept`]), each entry an agent's (a request, a
//! decision on its action, a reload, recording or subscription it asked
//! for), oldest first.
//!
//! A record is known by its key, `ID#LAUNCHER_PID` (the same while it
//! runs, once it ended and once it is kept), and the cursor an answer
//! ends with ([`TimelineCursor`]) holds the newest entry read of each: the
//! next request with it gets only what came after. Kept records forgotten
//! well before the cursor's time were read then, and are not read again.

use super::forward::error;
use super::reads::{kept_activity, record_of};
use crate::daemon::registry::Shared;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tickloop_client::clock::{now_rfc3339_millis, unix_millis};
use tickloop_proto::wire::{
    ActivityRecord, ClientKind, ClientReply, ErrorKind, TimelineCursor, TimelineEntry,
    TimelineReply,
};

/// Kept records forgotten this long before a cursor's time are read
/// again (a record kept while the answer before was being made).
const KEPT_MARGIN_MS: i128 = 10_000;

/// What a `timeline` request asks for.
pub struct Asked {
    pub since: Option<String>,
    pub agent: Option<ClientKind>,
    pub after: Option<TimelineCursor>,
    /// The newest this many entries at most (older ones are counted).
    pub limit: Option<u64>,
}

/// One record read, by its key, with the entry number read before.
struct Read {
    key: String,
    instance: String,
    record: ActivityRecord,
}

/// `timeline`.
pub async fn timeline(shared: &Arc<Shared>, asked: Asked) -> ClientReply {
    let now = now_rfc3339_millis();
    let since = match asked.since.as_deref().map(|t| (t, unix_millis(t))) {
        Some((text, None)) => {
            return bad(format!(
                "since {text:?} is not an RFC 3339 time (2026-12-02T07:00:00Z)"
            ))
        }
        Some((_, at)) => at,
        None => None,
    };
    if let Some(kind) = asked.agent.filter(|k| !k.is_agent()) {
        return bad(format!(
            "agent {:?} is the person's client, not an agent's: name an agent (mcp, loop, or an agent host's shell tool)",
            kind.as_str()
        ));
    }
    let cursor = asked.after.unwrap_or_default();
    let cursor_at = match (cursor.at.is_empty(), unix_millis(&cursor.at)) {
        (true, _) => None,
        (false, Some(at)) => Some(at),
        (false, None) => {
            return bad("the cursor's time is unreadable: pass `next` back as it came".into())
        }
    };
    let (mut reads, mut unread) = running_and_ended(shared, &cursor.records).await;
    // Kept records forgotten before either bound hold nothing wanted.
    let from = [since, cursor_at.map(|at| at - KEPT_MARGIN_MS)]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(0);
    let seen: BTreeSet<String> = reads.iter().map(|r| r.key.clone()).collect();
    let (kept, kept_unread) = kept_records(shared, from, seen, cursor.records.clone()).await;
    reads.extend(kept);
    unread.extend(kept_unread);

    let mut next = TimelineCursor {
        at: now,
        records: BTreeMap::new(),
    };
    let mut entries: Vec<(i128, String, TimelineEntry)> = Vec::new();
    for read in reads {
        next.records.insert(read.key.clone(), read.record.last);
        let after = cursor.records.get(&read.key).copied().unwrap_or(0);
        for entry in read.record.entries {
            let Some(agent) = entry.agent() else { continue };
            let at = unix_millis(&entry.at).unwrap_or(0);
            let wanted = entry.n > after
                && asked.agent.is_none_or(|a| a == agent)
                && since.is_none_or(|since| at >= since);
            if wanted {
                let instance = read.instance.clone();
                entries.push((at, read.key.clone(), TimelineEntry { instance, entry }));
            }
        }
    }
    entries.sort_by(|a, b| (a.0, &a.1, a.2.entry.n).cmp(&(b.0, &b.1, b.2.entry.n)));
    let limit = asked
        .limit
        .and_then(|l| usize::try_from(l).ok())
        .unwrap_or(usize::MAX);
    let left_out = entries.len().saturating_sub(limit);
    ClientReply::typed(&TimelineReply {
        entries: entries
            .into_iter()
            .skip(left_out)
            .map(|(_, _, e)| e)
            .collect(),
        next,
        unread,
        left_out: u64::try_from(left_out).unwrap_or(u64::MAX),
    })
}

fn bad(message: String) -> ClientReply {
    error(ErrorKind::BadRequest, message)
}

/// The records of the instances tickhost knows, running (asked of their
/// launchers at once) or ended, each after its cursor's entry; and why
/// any could not be read.
async fn running_and_ended(
    shared: &Arc<Shared>,
    cursor: &BTreeMap<String, u64>,
) -> (Vec<Read>, Vec<String>) {
    let mut asks = tokio::task::JoinSet::new();
    for instance in shared.all() {
        let key = format!("{}#{}", instance.id, instance.status().launcher_pid);
        let after = cursor.get(&key).copied();
        let shared = shared.clone();
        asks.spawn(async move {
            let got = record_of(&shared, &instance, after).await;
            (key, instance.id.clone(), got)
        });
    }
    let mut reads = Vec::new();
    let mut unread = Vec::new();
    while let Some(done) = asks.join_next().await {
        match done {
            Ok((key, instance, Ok(record))) => reads.push(Read {
                key,
                instance,
                record,
            }),
            Ok((_, instance, Err(reply))) => unread.push(format!(
                "{instance}: {}",
                match reply {
                    ClientReply::Error(e) => e.message,
                    other => format!("{other:?}"),
                }
            )),
            Err(e) => unread.push(format!("an instance's record: {e}")),
        }
    }
    (reads, unread)
}

/// The records the data directory keeps of forgotten instances, forgotten
/// at `from` (ms) or later, but those `seen` already; read off the
/// runtime's threads.
async fn kept_records(
    shared: &Arc<Shared>,
    from: i128,
    mut seen: BTreeSet<String>,
    cursor: BTreeMap<String, u64>,
) -> (Vec<Read>, Vec<String>) {
    let Some(kept) = shared.kept.clone() else {
        return (Vec::new(), Vec::new());
    };
    let from = u128::try_from(from).unwrap_or(0);
    let read = tokio::task::spawn_blocking(move || {
        let mut reads = Vec::new();
        let mut unread = Vec::new();
        for (millis, instance) in kept.forgotten_since(from) {
            if !instance.activity.is_file() {
                continue;
            }
            // Read whole first: its key is in it.
            let record = match kept_activity(&instance.activity, None) {
                Ok(record) => record,
                Err(why) => {
                    unread.push(format!("{}: {why}", instance.id));
                    continue;
                }
            };
            let key = match record.launcher_pid {
                Some(pid) => format!("{}#{pid}", instance.id),
                None => format!("{}#kept-{millis}", instance.id),
            };
            if !seen.insert(key.clone()) {
                continue;
            }
            let after = cursor.get(&key).copied().unwrap_or(0);
            let mut record = record;
            record.entries.retain(|e| e.n > after);
            reads.push(Read {
                key,
                instance: instance.id,
                record,
            });
        }
        (reads, unread)
    });
    read.await
        .unwrap_or_else(|e| (Vec::new(), vec![format!("the kept records: {e}")]))
}
