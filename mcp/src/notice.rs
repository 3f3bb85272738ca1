//! The notifications the bridge's parts raise for the client (tool list,
//! resource list, one resource's state); a forwarder task sends them, on
//! the connection (the revisions with `initialize`) and on the
//! `subscriptions/listen` streams that asked for them (2026-07-28).

use tokio::sync::mpsc::UnboundedSender;

/// A notification for the forwarder task to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// `notifications/resources/list_changed`.
    ResourcesChanged,
    /// `notifications/resources/updated` of this URI.
    Updated(String),
}

/// Where notices go: the forwarder task's queue.
#[derive(Debug, Clone)]
pub struct Notices {
    queue: UnboundedSender<Notice>,
}

impl Notices {
    pub fn new(queue: UnboundedSender<Notice>) -> Notices {
        Notices { queue }
    }

    /// Queues `notice`; once the session is over nobody listens, and that
    /// is fine.
    pub fn send(&self, notice: Notice) {
        let _ = self.queue.send(notice);
    }
}
