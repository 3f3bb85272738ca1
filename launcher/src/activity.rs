//! The instance's activity record: what agents asked of it and how each
//! request ended, its updates, views attaching and detaching, clients
//! subscribing. Kept here, in the launcher, because the launcher lives
//! exactly as long as the instance (a restarted tickhost finds the record
//! intact); bounded per kind of entry (see [`ActivityRecord`]'s limits), and
//! written beside the last screen when the instance ends.
//!
//! Pure: times and instants are passed in.

use std::collections::VecDeque;
use std::time::{Duration, Instant};
use tickloop_proto::wire::{
    ActivityEntry, ActivityEvent, ActivityRecord, ClientKind, ConsentDecision, ReloadCause,
    RequestActivity, ToolSummary,
};

/// Updates closer together than this share one entry (a Tick updating 60
/// times a second leaves one entry a moment, not 50 entries of the last
/// second).
pub const UPDATE_MERGE_WINDOW: Duration = Duration::from_millis(250);

/// The record of one instance.
#[derive(Debug, Default)]
pub struct ActivityLog {
    last: u64,
    requests: VecDeque<ActivityEntry>,
    updates: VecDeque<ActivityEntry>,
    others: VecDeque<ActivityEntry>,
    /// When the newest update entry was started, if it is still the newest
    /// entry of all (only then can a new update merge into it).
    open_update: Option<Instant>,
}

impl ActivityLog {
    pub fn new() -> Self {
        ActivityLog::default()
    }

    /// The number of the newest entry (0: none yet).
    pub fn last(&self) -> u64 {
        self.last
    }

    fn push(&mut self, at: String, event: ActivityEvent) {
        self.last += 1;
        let (ring, limit) = match event {
            ActivityEvent::Request(_)
            | ActivityEvent::Consent(_)
            | ActivityEvent::Reload { .. } => (&mut self.requests, ActivityRecord::REQUESTS),
            ActivityEvent::Update { .. } => (&mut self.updates, ActivityRecord::UPDATES),
            ActivityEvent::View { .. }
            | ActivityEvent::Subscription { .. }
            | ActivityEvent::Recording { .. }
            | ActivityEvent::ImagesDropped { .. } => (&mut self.others, ActivityRecord::OTHERS),
        };
        if ring.len() == limit {
            ring.pop_front();
        }
        ring.push_back(ActivityEntry {
            n: self.last,
            at,
            event,
        });
        self.open_update = None;
    }

    pub fn request(&mut self, at: String, request: RequestActivity) {
        self.push(at, ActivityEvent::Request(request));
    }

    /// tickhost's consent gate held or decided an agent's action.
    pub fn consent(&mut self, at: String, decision: ConsentDecision) {
        self.push(at, ActivityEvent::Consent(decision));
    }

    /// A `tick/update` arrived (its state has `seq`, `bytes` of JSON). One
    /// within [`UPDATE_MERGE_WINDOW`] of the newest entry, when that entry is
    /// an update, replaces it with a count one higher and a new number, so a
    /// follower sees it again.
    pub fn update(&mut self, at: String, now: Instant, seq: u64, bytes: usize, budget: usize) {
        let mut count = 1;
        if let Some(started) = self.open_update {
            if now.saturating_duration_since(started) < UPDATE_MERGE_WINDOW {
                if let Some(previous) = self.updates.pop_back() {
                    if let ActivityEvent::Update { count: c, .. } = previous.event {
                        count += c;
                    }
                }
            }
        }
        let started = match (self.open_update, count) {
            (Some(started), c) if c > 1 => started,
            _ => now,
        };
        self.push(
            at,
            ActivityEvent::Update {
                seq,
                count,
                bytes,
                budget,
            },
        );
        self.open_update = Some(started);
    }

    pub fn view(&mut self, at: String, attached: bool, views: u32) {
        self.push(at, ActivityEvent::View { attached, views });
    }

    pub fn subscription(&mut self, at: String, client: Option<ClientKind>, started: bool) {
        self.push(at, ActivityEvent::Subscription { client, started });
    }

    /// An artifact's newest version starts: `client` asked, or its file
    /// changed.
    pub fn reload(&mut self, at: String, client: Option<ClientKind>, cause: ReloadCause) {
        self.push(at, ActivityEvent::Reload { client, cause });
    }

    /// A recording started or stopped; `recordings` run after it.
    pub fn recording(
        &mut self,
        at: String,
        client: Option<ClientKind>,
        started: bool,
        recordings: u32,
    ) {
        let event = ActivityEvent::Recording {
            client,
            started,
            recordings,
        };
        self.push(at, event);
    }

    /// Images were dropped to keep the image memory under `limit_mb`. When
    /// the newest entry is such a note too, this one replaces it, counts
    /// added and numbered anew (a loop drawing images is one entry, which
    /// a follower sees again), so the record's other entries stay.
    pub fn images_dropped(
        &mut self,
        at: String,
        dropped: crate::images::ImagesDropped,
        limit_mb: u64,
    ) {
        let mut total = dropped;
        if let Some(newest) = self.others.back().filter(|e| e.n == self.last) {
            if let ActivityEvent::ImagesDropped {
                images,
                bytes,
                too_large,
                ..
            } = newest.event
            {
                total = total.add(crate::images::ImagesDropped {
                    images,
                    bytes,
                    too_large,
                });
                self.others.pop_back();
            }
        }
        let event = ActivityEvent::ImagesDropped {
            images: total.images,
            bytes: total.bytes,
            too_large: total.too_large,
            limit_mb,
        };
        self.push(at, event);
    }

    /// The entries numbered above `after` (every kept one when `None`),
    /// oldest first.
    pub fn since(&self, after: Option<u64>) -> Vec<ActivityEntry> {
        let after = after.unwrap_or(0);
        let mut entries: Vec<ActivityEntry> = self
            .requests
            .iter()
            .chain(&self.updates)
            .chain(&self.others)
            .filter(|e| e.n > after)
            .cloned()
            .collect();
        entries.sort_by_key(|e| e.n);
        entries
    }

    /// The record as a reply, with the catalog `tools` and the pid of the
    /// launcher keeping it (`subscribers` is tickhost's to fill in).
    pub fn record(
        &self,
        (instance, launcher_pid): (&str, u32),
        after: Option<u64>,
        tools: Vec<ToolSummary>,
    ) -> ActivityRecord {
        ActivityRecord {
            instance: instance.to_string(),
            entries: self.since(after),
            last: self.last,
            subscribers: 0,
            tools,
            launcher_pid: Some(launcher_pid),
        }
    }
}

/// `value` as kept in the record: as it is when its JSON fits
/// [`RequestActivity::KEPT_BYTES`], else the start of its JSON as a string
/// ending in `…`.
pub fn kept(value: &serde_json::Value) -> serde_json::Value {
    let text = value.to_string();
    if text.len() <= RequestActivity::KEPT_BYTES {
        return value.clone();
    }
    let mut end = RequestActivity::KEPT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    serde_json::Value::String(format!("{}…", &text[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tickloop_proto::wire::ActivityOutcome;

    fn call(tool: &str) -> RequestActivity {
        RequestActivity {
            client: Some(ClientKind::Mcp),
            method: "tick/call".into(),
            tool: Some(tool.into()),
            args: Some(json!({"amount": 2})),
            echo_off: None,
            revision: Some("r1".into()),
            outcome: ActivityOutcome::Executed,
            error_code: None,
            error: None,
            result: Some(json!({"count": 2})),
            duration_ms: 3,
            terminal: None,
        }
    }

    #[test]
    fn each_kind_keeps_its_own_limit_and_numbers_keep_growing() {
        let mut log = ActivityLog::new();
        let t0 = Instant::now();
        for i in 0..250 {
            log.request(format!("r{i}"), call("increment"));
        }
        for i in 0..60u64 {
            // Far apart: nothing merges.
            log.update(format!("u{i}"), t0 + Duration::from_secs(i), i, 10, 16384);
        }
        for i in 0..70 {
            log.view(format!("v{i}"), i % 2 == 0, 1);
        }
        let all = log.since(None);
        let count = |f: fn(&ActivityEvent) -> bool| all.iter().filter(|e| f(&e.event)).count();
        assert_eq!(count(|e| matches!(e, ActivityEvent::Request(_))), 200);
        assert_eq!(count(|e| matches!(e, ActivityEvent::Update { .. })), 50);
        assert_eq!(count(|e| matches!(e, ActivityEvent::View { .. })), 50);
        assert_eq!(log.last(), 380);
        assert!(all.windows(2).all(|w| w[0].n < w[1].n));
        assert_eq!(all.last().map(|e| e.n), Some(380));
        // The oldest requests went first.
        assert_eq!(all.first().map(|e| e.at.as_str()), Some("r50"));
        assert_eq!(log.since(Some(379)).len(), 1);
        assert!(log.since(Some(380)).is_empty());
    }

    #[test]
    fn updates_in_quick_succession_share_one_entry_renumbered() {
        let mut log = ActivityLog::new();
        let t0 = Instant::now();
        log.update("a".into(), t0, 1, 10, 100);
        log.update("b".into(), t0 + Duration::from_millis(100), 2, 20, 100);
        log.update("c".into(), t0 + Duration::from_millis(200), 3, 30, 100);
        let all = log.since(None);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].n, 3);
        assert_eq!(
            all[0].event,
            ActivityEvent::Update {
                seq: 3,
                count: 3,
                bytes: 30,
                budget: 100
            }
        );
        // The window counts from the entry's first update, so a steady
        // stream still leaves an entry per window.
        log.update("d".into(), t0 + Duration::from_millis(300), 4, 40, 100);
        assert_eq!(log.since(None).len(), 2);
        // Something else in between ends the merging.
        log.view("e".into(), true, 1);
        log.update("f".into(), t0 + Duration::from_millis(310), 5, 50, 100);
        let all = log.since(None);
        assert_eq!(all.len(), 4);
        assert!(matches!(
            all.last().map(|e| &e.event),
            Some(ActivityEvent::Update {
                count: 1,
                seq: 5,
                ..
            })
        ));
    }

    #[test]
    fn big_arguments_are_kept_cut_at_a_character_boundary() {
        let small = json!({"a": 1});
        assert_eq!(kept(&small), small);
        let big = json!({"text": "é".repeat(3000)});
        let cut = kept(&big);
        let text = cut.as_str().expect("a string");
        assert!(text.ends_with('…'));
        assert!(text.len() <= RequestActivity::KEPT_BYTES + '…'.len_utf8());
    }
}
