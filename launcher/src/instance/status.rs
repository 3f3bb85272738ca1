//! The instance's status as every connection sees it: published through a
//! `watch` (a flood of changes is one pending status), with the catalog it
//! names made anew only when the generation or the Tick's revision
//! changed, and output alone republishing it at most every
//! [`OUTPUT_STATUS_EVERY`]; and the record file that carries it to
//! tickhost.

use crate::published::Published;
use crate::record::write_record;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tickloop_client::clock::rfc3339_at;
use tickloop_proto::core::Descriptor;
use tickloop_proto::wire::{Catalog, LaunchSpec, LauncherRecord, LauncherStatus};
use tokio::sync::watch;
use tokio::time::Instant;

/// Output alone republishes the status at most this often.
const OUTPUT_STATUS_EVERY: Duration = Duration::from_secs(1);

/// What is published, and when it is next due.
pub(super) struct Publisher {
    tx: watch::Sender<Published>,
    /// The catalog last published (shared with every connection), and
    /// which generation and revision it is of.
    catalog: Arc<Catalog>,
    catalog_key: (Option<u64>, Option<String>),
    /// Something in the status changed: publish it after this turn.
    dirty: bool,
    /// When the program last wrote output (RFC 3339), for the status.
    last_output_at: Option<String>,
    /// When `last_output_at` was last published, and when a newer one
    /// held back (at most one status a second for output) is due.
    output_published: Option<Instant>,
    output_due: Option<Instant>,
}

impl Publisher {
    /// A publisher with nothing published yet: set the first status with
    /// [`Self::first`] before anyone subscribes.
    pub(super) fn new() -> Publisher {
        Publisher {
            tx: watch::channel(Published::default()).0,
            catalog: Arc::new(Catalog::default()),
            catalog_key: (None, None),
            dirty: false,
            last_output_at: None,
            output_published: None,
            output_due: None,
        }
    }

    /// The first status, with no catalog yet.
    pub(super) fn first(&mut self, status: LauncherStatus) {
        self.tx.send_replace(Published {
            status,
            catalog: self.catalog.clone(),
        });
    }

    /// What is published, for a connection.
    pub(super) fn subscribe(&self) -> watch::Receiver<Published> {
        self.tx.subscribe()
    }

    /// Publishes `status`, with the catalog of `descriptor` (made anew
    /// only when `generation` or the revision changed), to every
    /// connection; returns the status.
    pub(super) fn publish(
        &mut self,
        status: LauncherStatus,
        generation: Option<u64>,
        descriptor: Option<&Descriptor>,
    ) -> LauncherStatus {
        let key = (generation, descriptor.map(|d| d.revision.clone()));
        if key != self.catalog_key {
            self.catalog = Arc::new(Catalog {
                revision: key.1.clone(),
                descriptor: descriptor.map(|d| d.raw.clone()),
            });
            self.catalog_key = key;
        }
        self.tx.send_replace(Published {
            status: status.clone(),
            catalog: self.catalog.clone(),
        });
        status
    }

    /// The published catalog, when the Tick has described one.
    pub(super) fn catalog_if_any(&self) -> Option<Box<Catalog>> {
        self.catalog
            .descriptor
            .is_some()
            .then(|| Box::new((*self.catalog).clone()))
    }

    /// The status changed: publish it after this turn of the loop.
    pub(super) fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Whether the status is to be published now; a status published for
    /// output, when none was held back, starts the next
    /// [`OUTPUT_STATUS_EVERY`].
    pub(super) fn take_dirty(&mut self) -> bool {
        if !self.dirty {
            return false;
        }
        self.dirty = false;
        if self.output_due.is_none() {
            self.output_published = Some(Instant::now());
        }
        true
    }

    /// The program wrote output (or the screen was resized): note when it
    /// last wrote (`last_output`, as the terminal stamped it), and publish
    /// it now if none was published in the last [`OUTPUT_STATUS_EVERY`],
    /// else when that has passed.
    pub(super) fn on_output(&mut self, last_output: Option<SystemTime>) {
        self.last_output_at = last_output.map(rfc3339_at);
        if self.output_due.is_some() {
            return;
        }
        let now = Instant::now();
        match self.output_published {
            Some(at) if now < at + OUTPUT_STATUS_EVERY => {
                self.output_due = Some(at + OUTPUT_STATUS_EVERY);
            }
            _ => self.dirty = true,
        }
    }

    /// When output held back is to be published.
    pub(super) fn output_due(&self) -> Option<Instant> {
        self.output_due
    }

    /// Whether the loop needs to hear of each change of the screen: not
    /// while a status for output is due, which takes the time of the
    /// program's last output when it comes due ([`Self::output_came_due`]).
    /// A flood then wakes the loop about once a second, not for every chunk.
    pub(super) fn wants_changes(&self) -> bool {
        self.output_due.is_none()
    }

    /// Output held back is due now: it is published with the time of the
    /// program's last output (`last_output`), changes the loop did not hear
    /// of included.
    pub(super) fn output_came_due(&mut self, last_output: Option<SystemTime>) {
        self.last_output_at = last_output.map(rfc3339_at);
        self.output_due = None;
        self.dirty = true;
    }

    /// When the program last wrote output (RFC 3339).
    pub(super) fn last_output_at(&self) -> Option<String> {
        self.last_output_at.clone()
    }

    /// Rewrites the record file of the instance `spec` launched with
    /// `status`. A failure is logged and returned, as the sentence saying
    /// what was not saved: the instance goes on.
    pub(super) fn rewrite_record(
        &self,
        spec: &LaunchSpec,
        status: &LauncherStatus,
    ) -> Result<(), String> {
        let record = LauncherRecord {
            instance: spec.instance.clone(),
            socket: spec.socket.clone(),
            launcher_pid: std::process::id(),
            status: status.clone(),
            catalog: self.catalog_if_any().map(|c| *c),
        };
        write_record(&record).map_err(|e| {
            let sentence = e.not_saved("the record");
            eprintln!("launcher: {sentence}");
            sentence
        })
    }
}
