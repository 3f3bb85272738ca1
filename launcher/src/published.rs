//! What the launcher publishes to its connections (tickhost's and the
//! views'): the newest status and the catalog it names. Its own module so
//! that `socket` (which serves tickhost) and `views` (which serve the attach
//! protocol) both read it without depending on each other.

use std::sync::Arc;
use tickloop_proto::wire::{Catalog, LauncherStatus};

/// The launcher's newest status and the catalog that status's revision
/// names. The catalog is shared (one `Arc` per catalog) and written to
/// tickhost only when it changed, not with every status: a status goes out
/// on every update.
#[derive(Debug, Clone, Default)]
pub struct Published {
    pub status: LauncherStatus,
    pub catalog: Arc<Catalog>,
}
