//! The background task that keeps the catalog current: it refreshes at the
//! delivery interval (slower while the client is idle, at once when woken),
//! describes every Tick again now and then (catalog changes a person makes
//! at the Tick's screen show nowhere else), and announces list changes.

use crate::catalog::Catalog;
use crate::notice::{Notice, Notices};
use crate::pace::Pace;
use crate::resources::Resources;
use std::sync::Arc;
use std::time::Instant;

/// Polls until the task is aborted.
pub async fn poll(
    pace: Arc<Pace>,
    catalog: Arc<Catalog>,
    resources: Arc<Resources>,
    notices: Notices,
) {
    let mut described = Instant::now();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(pace.poll_period()) => {}
            _ = catalog.woken() => {}
        }
        let describe_all = described.elapsed() >= pace.describe_every();
        if describe_all {
            described = Instant::now();
        }
        let Some(changes) = resources.refresh(describe_all).await else {
            continue;
        };
        if changes.tools {
            notices.send(Notice::ToolsChanged);
        }
        if changes.resources {
            notices.send(Notice::ResourcesChanged);
        }
    }
}
