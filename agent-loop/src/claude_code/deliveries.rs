//! Where a hook call's subscription deliveries come from: a trait, and
//! tickhost's `watch` behind it ([`ClientDeliveries`]).

use std::path::PathBuf;
use std::time::Duration;
use tickloop_proto::wire::{Delivery, EndInfo};

/// How long a time step waits for the first delivery of a subscribed Tick.
const DELIVERY_WAIT: Duration = Duration::from_secs(3);

/// Where subscription deliveries come from in a hook call.
pub trait Deliveries {
    /// The current state of each instance (`watch`'s first delivery), or its
    /// end; instances that cannot be reached are left out (and reported).
    fn fetch(&self, instances: &[String]) -> Vec<Fetched>;
}

/// One instance's answer to [`Deliveries::fetch`].
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    State(Delivery),
    Ended { instance: String, ended: EndInfo },
}

/// Deliveries through tickhost's `watch` (the first delivery of a new watch
/// is the current state). tickhost is not started for this: a subscribed
/// Tick lives in a running tickhost or nowhere.
#[derive(Debug, Clone)]
pub struct ClientDeliveries {
    pub runtime_dir: PathBuf,
}

impl Deliveries for ClientDeliveries {
    fn fetch(&self, instances: &[String]) -> Vec<Fetched> {
        let (tx, rx) = std::sync::mpsc::channel();
        for instance in instances {
            let tx = tx.clone();
            let instance = instance.clone();
            let runtime_dir = self.runtime_dir.clone();
            // The reader thread may outlive a late answer: the process ends soon.
            std::thread::spawn(move || {
                let result = (|| {
                    let mut client = tickloop_client::Client::connect(
                        &runtime_dir,
                        tickloop_proto::wire::ClientKind::Loop,
                    )
                    .map_err(|e| format!("cannot reach tickhost: {e}"))?;
                    client
                        .watch(vec![instance.clone()], 1000)
                        .map_err(|e| format!("watch: {e}"))?;
                    match client
                        .next_watch_item()
                        .map_err(|e| format!("watch: {e}"))?
                    {
                        tickloop_client::WatchItem::Event(
                            tickloop_proto::wire::WatchEvent::Delivery(d),
                        ) => Ok(Fetched::State(d)),
                        tickloop_client::WatchItem::Event(
                            tickloop_proto::wire::WatchEvent::Ended(n),
                        ) => Ok(Fetched::Ended {
                            instance: n.instance,
                            ended: n.ended,
                        }),
                        tickloop_client::WatchItem::Done(reply) => {
                            Err(format!("watch refused: {reply:?}"))
                        }
                    }
                })();
                let _ = tx.send((instance, result));
            });
        }
        drop(tx);
        let deadline = std::time::Instant::now() + DELIVERY_WAIT;
        let mut out = Vec::new();
        for _ in instances {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok((_, Ok(f))) => out.push(f),
                Ok((instance, Err(e))) => {
                    eprintln!("tickloop: subscription {instance}: {e}")
                }
                Err(_) => {
                    eprintln!("tickloop: a subscribed Tick sent no state within {DELIVERY_WAIT:?}");
                    break;
                }
            }
        }
        out
    }
}
