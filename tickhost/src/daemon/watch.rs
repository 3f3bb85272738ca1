//! `watch`: one delivery per instance at once, then at each interval one per
//! instance whose update count grew since its previous delivery to this
//! watcher (the newest state, trimmed to the budget), and an `ended` line
//! when an instance ends. The stream ends with a final reply once every
//! watched instance has ended, or when the client hangs up.
//!
//! The counting is per watcher and only compares the launcher's running
//! total with what this watcher last saw, so nothing per update is stored.

use super::connection::ClientLines;
use super::registry::{Instance, Shared};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::outbox::Outbox;
use tickloop_client::paths::InstanceKind;
use tickloop_proto::core::delivery::budget_for;
use tickloop_proto::wire::{
    ClientError, ClientKind, ClientReply, Delivery, EndedNotice, ErrorKind, LauncherRequest,
    LauncherStatus, ServerMessage, WatchEvent,
};

/// The shortest interval accepted.
pub const MIN_INTERVAL_MS: u64 = 10;

/// What this watcher knows of one watched instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cursor {
    /// `updates_total` at this watcher's previous delivery.
    pub delivered_total: u64,
    /// The `ended` line was sent: nothing more for this instance.
    pub ended_sent: bool,
    /// The artifact generation of the previous delivery.
    pub generation: Option<u64>,
}

impl Cursor {
    /// The cursor after the first delivery, which reports every update
    /// since the start (`0` when nothing arrived yet).
    pub fn start() -> Self {
        Cursor {
            delivered_total: 0,
            ended_sent: false,
            generation: None,
        }
    }

    /// The new generation to mark on the next delivery: an artifact
    /// started another version since the previous one, and that version's
    /// first state is there (it has initialized).
    pub fn reloaded(&self, status: &LauncherStatus) -> Option<u64> {
        let now = status.generation?;
        let before = self.generation?;
        (now != before && status.state.is_some() && status.failed.is_none()).then_some(now)
    }

    /// How many updates a delivery now would report, or `None` when none
    /// arrived since the previous one (or the instance's `ended` was sent).
    pub fn due(&self, updates_total: u64) -> Option<u64> {
        (!self.ended_sent && updates_total > self.delivered_total)
            .then(|| updates_total - self.delivered_total)
    }

    /// Records a delivery at `updates_total`.
    pub fn delivered(&mut self, updates_total: u64) {
        self.delivered_total = self.delivered_total.max(updates_total);
    }
}

/// The delivery of `instance`'s `status` reporting `updates` updates, its
/// data trimmed to `budget` bytes keeping the declared series' newest ends
/// (trimmed once per status and budget, and shared by every watcher).
pub fn make_delivery(
    instance: &Instance,
    status: &Arc<LauncherStatus>,
    updates: u64,
    budget: usize,
) -> Delivery {
    let (seq, at) = match &status.state {
        Some(state) => (state.seq, state.at.clone()),
        None => (0, status.started_at.clone()),
    };
    let trimmed = instance.trimmed(status, budget);
    Delivery {
        instance: instance.id.clone(),
        seq,
        at,
        data: trimmed.data.clone(),
        updates,
        merged: updates.saturating_sub(1),
        trimmed: trimmed.trimmed,
        recover_with: instance.catalog().recover_with(),
        reloaded: None,
    }
}

/// Whether the client is still connected after a request (a watch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    HungUp,
}

struct Watched {
    instance: Arc<Instance>,
    cursor: Cursor,
}

/// Serves `watch` request `id` on a client connection.
pub async fn stream(
    shared: &Arc<Shared>,
    client: Option<ClientKind>,
    id: u64,
    names: Vec<String>,
    interval_ms: u64,
    reader: &mut ClientLines,
    out: &Outbox,
) -> std::io::Result<Flow> {
    let refuse = |kind, message: String| ServerMessage::Reply {
        id,
        reply: ClientReply::Error(ClientError {
            kind,
            message,
            data: None,
        }),
    };
    if names.is_empty() {
        let message = "watch needs at least one instance id: `tickloop watch ID...`".into();
        out.send(&refuse(ErrorKind::BadRequest, message)).await?;
        return Ok(Flow::Continue);
    }
    if interval_ms < MIN_INTERVAL_MS {
        let message = format!("the watch interval must be at least {MIN_INTERVAL_MS} ms");
        out.send(&refuse(ErrorKind::BadRequest, message)).await?;
        return Ok(Flow::Continue);
    }
    let mut watched: Vec<Watched> = Vec::new();
    for name in &names {
        let instance = match shared.resolve(name) {
            Ok(instance) => instance,
            Err(error) => {
                let reply = ServerMessage::Reply {
                    id,
                    reply: ClientReply::Error(error),
                };
                out.send(&reply).await?;
                return Ok(Flow::Continue);
            }
        };
        if instance.kind == InstanceKind::Shell && instance.status().shell.is_none() {
            let message = format!(
                "{} is a plain terminal program (opened with --shell) without shell integration: it has no state to watch (a bash, zsh or fish opened without --no-integration has: each command's start and end)",
                instance.id
            );
            out.send(&refuse(ErrorKind::NotATick, message)).await?;
            return Ok(Flow::Continue);
        }
        if !watched.iter().any(|w| Arc::ptr_eq(&w.instance, &instance)) {
            watched.push(Watched {
                instance,
                cursor: Cursor::start(),
            });
        }
    }

    // Each instance's activity records this subscription, and its end
    // however the stream ends.
    let _subscribed: Vec<Subscribed> = watched
        .iter()
        .map(|w| Subscribed::start(w.instance.clone(), client))
        .collect();
    let mut changes = shared.subscribe();
    // The first delivery of every instance, then what ended already.
    deliver(shared, id, &mut watched, out, true).await?;
    send_ends(shared, id, &mut watched, out).await?;

    let mut ticker = tokio::time::interval(Duration::from_millis(interval_ms));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        if watched.iter().all(|w| w.cursor.ended_sent) {
            let reply = ServerMessage::Reply {
                id,
                reply: ClientReply::Ok(json!({"watch": "ended"})),
            };
            out.send(&reply).await?;
            return Ok(Flow::Continue);
        }
        tokio::select! {
            _ = ticker.tick() => {
                deliver(shared, id, &mut watched, out, false).await?;
                send_ends(shared, id, &mut watched, out).await?;
            }
            _ = changes.changed() => {
                send_ends(shared, id, &mut watched, out).await?;
            }
            line = reader.next() => match line {
                Ok(Some(_)) => {
                    let message = "this connection is streaming a watch; send other requests on another connection".into();
                    let reply = ServerMessage::Reply {
                        id: 0,
                        reply: ClientReply::Error(ClientError { kind: ErrorKind::BadRequest, message, data: None }),
                    };
                    out.send(&reply).await?;
                }
                Ok(None) | Err(_) => return Ok(Flow::HungUp),
            },
        }
    }
}

/// One watched instance's count of subscribers, and its activity record,
/// while a watch follows it.
struct Subscribed {
    instance: Arc<Instance>,
    client: Option<ClientKind>,
}

impl Subscribed {
    fn start(instance: Arc<Instance>, client: Option<ClientKind>) -> Subscribed {
        instance.subscribers.fetch_add(1, Ordering::Relaxed);
        tell(&instance, client, true);
        Subscribed { instance, client }
    }
}

impl Drop for Subscribed {
    fn drop(&mut self) {
        self.instance.subscribers.fetch_sub(1, Ordering::Relaxed);
        tell(&self.instance, self.client, false);
    }
}

/// Records a subscription's start or end in the instance's activity, in
/// the background (an ended or unresponsive launcher just misses it).
fn tell(instance: &Instance, client: Option<ClientKind>, started: bool) {
    if instance.ended().is_some() {
        return;
    }
    if let Some(conn) = instance.conn() {
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                conn.request_for(LauncherRequest::Subscription { started }, client)
                    .await
            });
        }
    }
}

/// Sends the due deliveries (all of them when `first`), trimmed to the
/// budget of as many items.
async fn deliver(
    shared: &Shared,
    id: u64,
    watched: &mut [Watched],
    out: &Outbox,
    first: bool,
) -> std::io::Result<()> {
    let due: Vec<(usize, Arc<LauncherStatus>, u64)> = watched
        .iter()
        .enumerate()
        .filter_map(|(i, w)| {
            let status = w.instance.status();
            if first {
                if status.ended.is_some() {
                    return None;
                }
                let updates = status.updates_total;
                return Some((i, status, updates));
            }
            let updates = match w.cursor.due(status.updates_total) {
                Some(updates) => updates,
                // A new version's first state goes out with no update.
                None if !w.cursor.ended_sent && w.cursor.reloaded(&status).is_some() => 0,
                None => return None,
            };
            Some((i, status, updates))
        })
        .collect();
    let budget = budget_for(due.len(), &shared.limits);
    for (i, status, updates) in due {
        let w = &mut watched[i];
        let mut delivery = make_delivery(&w.instance, &status, updates, budget);
        delivery.reloaded = w.cursor.reloaded(&status);
        if status.state.is_some() || w.cursor.generation.is_none() {
            w.cursor.generation = status.generation;
        }
        w.cursor.delivered(status.updates_total);
        let event = ServerMessage::Event {
            id,
            event: WatchEvent::Delivery(delivery),
        };
        out.send(&event).await?;
    }
    Ok(())
}

/// For each watched instance that ended: its last updates (if any were not
/// delivered), then its `ended` line.
async fn send_ends(
    shared: &Shared,
    id: u64,
    watched: &mut [Watched],
    out: &Outbox,
) -> std::io::Result<()> {
    for w in watched.iter_mut() {
        if w.cursor.ended_sent {
            continue;
        }
        let status = w.instance.status();
        let Some(ended) = status.ended.clone() else {
            continue;
        };
        if let Some(updates) = w.cursor.due(status.updates_total) {
            let budget = budget_for(1, &shared.limits);
            let delivery = make_delivery(&w.instance, &status, updates, budget);
            w.cursor.delivered(status.updates_total);
            let event = ServerMessage::Event {
                id,
                event: WatchEvent::Delivery(delivery),
            };
            out.send(&event).await?;
        }
        w.cursor.ended_sent = true;
        let event = ServerMessage::Event {
            id,
            event: WatchEvent::Ended(EndedNotice {
                instance: w.instance.id.clone(),
                ended,
            }),
        };
        out.send(&event).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use tickloop_proto::wire::StateSnapshot;

    #[test]
    fn counting_reports_growth_since_the_previous_delivery() {
        let mut cursor = Cursor::start();
        assert_eq!(cursor.due(0), None);
        assert_eq!(cursor.due(3), Some(3));
        cursor.delivered(3);
        assert_eq!(cursor.due(3), None);
        assert_eq!(cursor.due(10), Some(7));
        cursor.delivered(10);
        // A smaller total (never expected) delivers nothing and moves nothing back.
        assert_eq!(cursor.due(4), None);
        cursor.delivered(4);
        assert_eq!(cursor.delivered_total, 10);
        cursor.ended_sent = true;
        assert_eq!(cursor.due(20), None);
    }

    fn status(updates_total: u64, data: Value) -> LauncherStatus {
        LauncherStatus {
            instance: "hosted:c".into(),
            launcher_pid: 1,
            pid: 2,
            argv: vec![],
            cwd: "/".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            revision: Some("1".into()),
            state: Some(StateSnapshot {
                seq: 7,
                data,
                at: "2026-01-01T00:00:01Z".into(),
            }),
            updates_total,
            calls_in_flight: 0,
            views: 0,
            ended: None,
            ..Default::default()
        }
    }

    #[test]
    fn deliveries_carry_counts_and_trim() {
        let files = tickloop_client::paths::InstanceFiles::in_folder(std::path::Path::new(
            "/nonexistent/c",
        ));
        let catalog = tickloop_proto::wire::Catalog {
            revision: Some("1".into()),
            descriptor: Some(json!({"recover_with": "history"})),
        };
        let limits = tickloop_proto::core::limits::Limits::default();
        let catalog = super::super::registry::CatalogFacts::new(catalog, &limits);
        let c = Instance::new(
            "hosted:c".into(),
            files,
            None,
            status(5, Value::Null),
            catalog,
        );
        let d = make_delivery(&c, &Arc::new(status(5, json!({"n": 1}))), 3, 16384);
        assert_eq!((d.seq, d.updates, d.merged, d.trimmed), (7, 3, 2, false));
        assert_eq!(d.recover_with.as_deref(), Some("history"));
        let d = make_delivery(&c, &Arc::new(status(5, json!({"n": 1}))), 0, 16384);
        assert_eq!(d.merged, 0);
        let big = Arc::new(status(1, json!({"log": "x".repeat(10_000)})));
        let d = make_delivery(&c, &big, 1, 4096);
        assert!(d.trimmed);
        assert!(
            serde_json::to_vec(&d.data)
                .map(|v| v.len())
                .unwrap_or(usize::MAX)
                <= 4096
        );
        // The same status and budget again: the trimmed data is shared, not
        // worked out anew.
        assert!(Arc::ptr_eq(&c.trimmed(&big, 4096), &c.trimmed(&big, 4096)));
        assert!(!Arc::ptr_eq(&c.trimmed(&big, 4096), &c.trimmed(&big, 2048)));
    }
}
