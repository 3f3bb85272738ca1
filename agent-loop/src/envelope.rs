//! The time-step message envelope, and the Loop subscription deliveries it
//! carries: the `watch` deliveries of each subscribed Tick since the previous
//! time step, merged per instance and appended as one data part each.
//!
//! Deliveries are data only: nothing here adds a goal, persona or instruction.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

use super::policy::CompiledPolicy;
use tickloop_proto::core::limits::Limits;
use tickloop_proto::wire::{Delivery, EndInfo};

/// The `source.plugin` of every time-step message this Loop creates. Time
/// steps are counted by this source, never by their text.
pub const PLUGIN_NAME: &str = "tickloop/loop";

/// The `source` of a time-step message.
pub fn plugin_source() -> Value {
    json!({"kind": "plugin", "plugin": PLUGIN_NAME})
}

/// Builds the time-step message: the policy text, then one data part per
/// pending delivery.
pub fn time_step_message(policy: &CompiledPolicy, parts: Vec<Value>) -> Value {
    let mut content = vec![json!({"type": "text", "text": policy.time_step_text})];
    content.extend(
        parts
            .into_iter()
            .map(|data| json!({"type": "data", "data": data})),
    );
    json!({
        "role": "user",
        "content": content,
        "source": plugin_source(),
    })
}

/// What arrived for one instance since the previous time step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pending {
    latest: Option<Delivery>,
    /// Sum of `updates` over every delivery merged here.
    updates: u64,
    /// Whether any merged delivery was trimmed.
    trimmed: bool,
    /// The newest generation of an `artifact:` Tick that started since the
    /// previous time step: its `seq` began again.
    reloaded: Option<u64>,
    ended: Option<EndInfo>,
}

/// Deliveries of the subscribed instances waiting for the next time step.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Inbox {
    pending: BTreeMap<String, Pending>,
}

impl Inbox {
    /// Merges one `watch` delivery into the instance's pending entry: the
    /// newest state wins, `updates` add up, `merged` is recomputed.
    pub fn push_delivery(&mut self, delivery: Delivery) {
        let entry = self.entry(&delivery.instance);
        entry.updates = entry.updates.saturating_add(delivery.updates);
        entry.trimmed |= delivery.trimmed;
        entry.reloaded = entry.reloaded.max(delivery.reloaded);
        entry.latest = Some(delivery);
    }

    /// Records that a subscribed instance ended.
    pub fn push_ended(&mut self, instance: &str, ended: EndInfo) {
        self.entry(instance).ended = Some(ended);
    }

    fn entry(&mut self, instance: &str) -> &mut Pending {
        self.pending
            .entry(instance.to_string())
            .or_insert_with(|| Pending {
                latest: None,
                updates: 0,
                trimmed: false,
                reloaded: None,
                ended: None,
            })
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Instances with something pending.
    pub fn instances(&self) -> impl Iterator<Item = &str> {
        self.pending.keys().map(String::as_str)
    }

    /// `tick/update`s of `instance` received since the previous time step
    /// (`None`: no delivery yet), and whether it ended.
    pub fn pending(&self, instance: &str) -> Option<(u64, bool)> {
        self.pending
            .get(instance)
            .map(|p| (p.updates, p.ended.is_some()))
    }

    /// Takes every pending entry as a data part (sorted by instance), each
    /// within its budget, and empties the inbox.
    pub fn drain_parts(&mut self) -> Vec<Value> {
        let pending = std::mem::take(&mut self.pending);
        // The `watch` budgets: 16 KiB alone, 4 KiB each when several share a step.
        let budget = tickloop_proto::core::delivery::budget_for(pending.len(), &Limits::default());
        pending
            .into_iter()
            .map(|(instance, p)| part(instance, p, budget))
            .collect()
    }
}

fn part(instance: String, p: Pending, budget: usize) -> Value {
    let mut obj = Map::new();
    obj.insert("instance".into(), Value::String(instance));
    if let Some(d) = p.latest {
        let (data, cut) = fit(d.data, budget);
        obj.insert("seq".into(), json!(d.seq));
        obj.insert("at".into(), json!(d.at));
        obj.insert("updates".into(), json!(p.updates));
        obj.insert("merged".into(), json!(p.updates.saturating_sub(1)));
        obj.insert("trimmed".into(), json!(p.trimmed || cut));
        obj.insert("recover_with".into(), json!(d.recover_with));
        obj.insert("data".into(), data);
    }
    if let Some(generation) = p.reloaded {
        obj.insert("reloaded".into(), json!(generation));
    }
    if let Some(ended) = p.ended {
        obj.insert("ended".into(), json!(ended));
    }
    Value::Object(obj)
}

/// Keeps `data` within `budget` encoded bytes. `watch` deliveries arrive
/// already trimmed to their own budget (with the Tick's declared series kept
/// at their newest end), so this only bites when several instances share one
/// step; it trims with the host core's rules (arrays keep their beginning and
/// end, every cut marked), and `recover_with` says how to fetch the rest.
fn fit(data: Value, budget: usize) -> (Value, bool) {
    let cut = tickloop_proto::core::delivery::trim(&data, &[], budget);
    (cut.data, cut.trimmed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::CompiledPolicy;

    fn delivery(instance: &str, seq: u64, updates: u64, data: Value) -> Delivery {
        Delivery {
            instance: instance.into(),
            seq,
            at: "2026-11-29T21:00:00Z".into(),
            data,
            updates,
            merged: updates.saturating_sub(1),
            trimmed: false,
            recover_with: Some("history".into()),
            reloaded: None,
        }
    }

    #[test]
    fn a_reload_is_marked_with_the_newest_generation() {
        let mut inbox = Inbox::default();
        let mut first = delivery("artifact:a", 7, 1, json!({"v": 1}));
        inbox.push_delivery(first.clone());
        first.seq = 1;
        first.reloaded = Some(2);
        inbox.push_delivery(first.clone());
        first.seq = 2;
        first.reloaded = None;
        inbox.push_delivery(first);
        let parts = inbox.drain_parts();
        assert_eq!(parts[0]["reloaded"], 2);
        assert_eq!(parts[0]["seq"], 2);
        inbox.push_delivery(delivery("artifact:a", 3, 1, json!({})));
        assert!(inbox.drain_parts()[0].get("reloaded").is_none());
    }

    #[test]
    fn envelope_shape() {
        let p = CompiledPolicy::compile("tick", "tick").unwrap();
        let m = time_step_message(&p, vec![]);
        assert_eq!(
            m,
            json!({"role":"user","content":[{"type":"text","text":"tick"}],
                   "source":{"kind":"plugin","plugin":PLUGIN_NAME}})
        );
    }

    #[test]
    fn merges_per_instance() {
        let mut inbox = Inbox::default();
        inbox.push_delivery(delivery("hosted:a", 0, 0, json!({"v": 0})));
        inbox.push_delivery(delivery("hosted:a", 3, 3, json!({"v": 3})));
        inbox.push_delivery(delivery("hosted:a", 5, 2, json!({"v": 5})));
        let parts = inbox.drain_parts();
        assert!(inbox.is_empty());
        assert_eq!(parts.len(), 1);
        let p = &parts[0];
        assert_eq!(p["instance"], "hosted:a");
        assert_eq!(p["seq"], 5);
        assert_eq!(p["updates"], 5);
        assert_eq!(p["merged"], 4);
        assert_eq!(p["trimmed"], false);
        assert_eq!(p["recover_with"], "history");
        assert_eq!(p["data"], json!({"v": 5}));
    }

    #[test]
    fn shared_steps_use_the_item_budget() {
        let mut inbox = Inbox::default();
        let big = json!({"s": "x".repeat(5000)});
        inbox.push_delivery(delivery("hosted:a", 1, 1, big.clone()));
        inbox.push_delivery(delivery("hosted:b", 1, 1, json!({})));
        inbox.push_ended(
            "hosted:b",
            EndInfo {
                reason: "closed".into(),
                kind: tickloop_proto::wire::EndClass::Closed,
                offending: None,
                at: "t".into(),
                not_saved: Vec::new(),
            },
        );
        let parts = inbox.drain_parts();
        assert_eq!(parts[0]["trimmed"], true);
        let kept = serde_json::to_vec(&parts[0]["data"]).unwrap();
        assert!(
            kept.len() <= Limits::default().delivery_item_budget,
            "{} bytes kept",
            kept.len()
        );
        let text = parts[0]["data"]["s"].as_str().unwrap();
        assert!(
            text.starts_with("xxx") && text.contains("$trimmed"),
            "{text:.40}"
        );
        assert_eq!(parts[1]["ended"]["kind"], "closed");
        // Alone, the same data fits.
        inbox.push_delivery(delivery("hosted:a", 1, 1, big.clone()));
        assert_eq!(inbox.drain_parts()[0]["data"], big);
    }
}
