//! `subscriptions/listen` (MCP 2026-07-28): the streams on which a client
//! hears that the tool list changed (Ticks opened, closed, or changed their
//! catalog), that the resource list changed, and that a `tick://NAME/state`
//! it named changed. rmcp sends the acknowledgement (with the accepted
//! filter) and stamps each notification with the stream's id; this module
//! chooses what is accepted, keeps the open streams, and hands each
//! [`Notice`] to the streams that asked for it.
//!
//! A state URI is accepted while its Tick runs; its watch has the state at
//! acknowledgement time, so every later change is announced. Other URIs are
//! left out of the acknowledgement (the client sees which were honoured).

use crate::names;
use crate::notice::Notice;
use crate::resources::Resources;
use rmcp::model::SubscriptionFilter;
use rmcp::service::{SubscriptionContext, SubscriptionSink};
use rmcp::ErrorData;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// One open stream: its sink and, for each state URI it named, the
/// instance id the URI resolved to.
struct Stream {
    sink: SubscriptionSink,
    states: Vec<(String, String)>,
}

#[derive(Default)]
struct Open {
    next: u64,
    streams: HashMap<u64, Stream>,
    /// How many open streams (or streams being opened) watch each instance.
    watching: HashMap<String, usize>,
}

/// The open `subscriptions/listen` streams of this connection.
pub struct Listeners {
    resources: Arc<Resources>,
    open: Mutex<Open>,
}

impl Listeners {
    pub fn new(resources: Arc<Resources>) -> Listeners {
        Listeners {
            resources,
            open: Mutex::new(Open::default()),
        }
    }

    fn open(&self) -> MutexGuard<'_, Open> {
        // A panic while holding the lock leaves plain data behind; go on with it.
        self.open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// What of `requested` is accepted: the list changes as asked, and the
    /// state URIs of running Ticks, whose watches start (and have their
    /// first delivery) before this returns. Prompts are not served.
    ///
    /// rmcp asks this synchronously before it acknowledges; the watches are
    /// started on this worker thread, the runtime's other threads go on.
    pub fn accept(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = requested.clone();
        accepted.prompts_list_changed = None;
        let uris = requested.resource_subscriptions.clone().unwrap_or_default();
        if uris.is_empty() {
            return accepted;
        }
        let resources = self.resources.clone();
        let handle = tokio::runtime::Handle::current();
        let watched: Vec<String> = tokio::task::block_in_place(|| {
            handle.block_on(async {
                let mut watched = Vec::new();
                for uri in uris {
                    if let Some(id) = resources.listen_to(&uri).await {
                        self.hold(&id);
                        watched.push(uri);
                    }
                }
                watched
            })
        });
        accepted.resource_subscriptions = Some(watched);
        accepted
    }

    fn hold(&self, id: &str) {
        *self.open().watching.entry(id.to_string()).or_default() += 1;
    }

    /// Releases one hold on the watch of `id`; the last one stops it.
    fn release(&self, id: &str) {
        let last = {
            let mut open = self.open();
            match open.watching.get_mut(id) {
                Some(n) if *n > 1 => {
                    *n -= 1;
                    false
                }
                Some(_) => {
                    open.watching.remove(id);
                    true
                }
                None => false,
            }
        };
        if last {
            self.resources.forget(id);
        }
    }

    /// Runs one acknowledged stream until the client cancels it (or the
    /// connection ends).
    pub async fn run(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let states: Vec<(String, String)> = context
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter_map(|uri| self.resources.instance_of(uri).map(|id| (uri.clone(), id)))
            .collect();
        let key = {
            let mut open = self.open();
            open.next += 1;
            let key = open.next;
            open.streams.insert(
                key,
                Stream {
                    sink: context.sink().clone(),
                    states: states.clone(),
                },
            );
            key
        };
        context.cancelled().await;
        self.open().streams.remove(&key);
        for (_, id) in states {
            self.release(&id);
        }
        Ok(())
    }

    /// Sends `notice` on every open stream that asked for it.
    pub async fn deliver(&self, notice: &Notice) {
        let targets: Vec<(SubscriptionSink, Option<String>)> = {
            let open = self.open();
            open.streams
                .values()
                .filter_map(|stream| {
                    let accepted = stream.sink.accepted();
                    match notice {
                        Notice::ToolsChanged => (accepted.tools_list_changed == Some(true))
                            .then(|| (stream.sink.clone(), None)),
                        Notice::ResourcesChanged => (accepted.resources_list_changed == Some(true))
                            .then(|| (stream.sink.clone(), None)),
                        // The client's own spelling of the URI.
                        Notice::Updated(uri) => stream
                            .states
                            .iter()
                            .find(|(_, id)| names::state_uri(id) == *uri)
                            .map(|(asked, _)| (stream.sink.clone(), Some(asked.clone()))),
                    }
                })
                .collect()
        };
        for (sink, uri) in targets {
            // A stream that ended meanwhile is gone; nothing to do about it.
            let _ = match (notice, uri) {
                (Notice::ToolsChanged, _) => sink.notify_tool_list_changed().await,
                (Notice::ResourcesChanged, _) => sink.notify_resource_list_changed().await,
                (Notice::Updated(_), Some(uri)) => sink.notify_resource_updated(uri).await,
                (Notice::Updated(_), None) => Ok(()),
            };
        }
    }
}
