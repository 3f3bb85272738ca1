//! The Tick's protocol session as the instance keeps it: the session of
//! the running process (none for a `shell:` program, nor for an artifact
//! whose generation is not running), the Tick's state last taken from it,
//! and its updates counted on across an artifact's generations.

use tickloop_client::clock::now_rfc3339;
use tickloop_proto::core::{Descriptor, Limits, Session};
use tickloop_proto::wire::{LaunchSpec, StateSnapshot, ToolSummary};
use tokio::time::Instant;

/// The session, and what outlives it.
pub(super) struct TickSession {
    session: Option<Session>,
    /// The Tick's state as last taken from the session.
    snapshot: Option<StateSnapshot>,
    /// Updates of an artifact's earlier generations, counted on in
    /// [`Self::updates_total`].
    updates_before: u64,
}

impl TickSession {
    /// The session of the instance `spec` launches: none for a `shell:`
    /// program.
    pub(super) fn new(spec: &LaunchSpec) -> TickSession {
        TickSession {
            session: (!spec.program.shell).then(|| new_session(spec)),
            snapshot: None,
            updates_before: 0,
        }
    }

    pub(super) fn get(&self) -> Option<&Session> {
        self.session.as_ref()
    }

    pub(super) fn get_mut(&mut self) -> Option<&mut Session> {
        self.session.as_mut()
    }

    /// The session ends with its process: its updates stay counted (so
    /// `watch`, which follows the count, goes on); its state too, until
    /// [`Self::forget_state`].
    pub(super) fn stop(&mut self) {
        self.updates_before += self.session.as_ref().map_or(0, |s| s.updates_received());
        self.session = None;
    }

    /// The Tick's state is gone with its version.
    pub(super) fn forget_state(&mut self) {
        self.snapshot = None;
    }

    /// A fresh session for the next process of the instance `spec`
    /// launched (its first describe is its initialization).
    pub(super) fn restart(&mut self, spec: &LaunchSpec) {
        self.session = Some(new_session(spec));
    }

    /// Takes the session's latest state; `fresh` when it just arrived (an
    /// update), else only a changed state gets a new receipt time. `true`
    /// when the snapshot changed.
    pub(super) fn refresh_snapshot(&mut self, fresh: bool) -> bool {
        let Some(state) = self.session.as_ref().and_then(|s| s.state()) else {
            return false;
        };
        if !fresh {
            if let Some(old) = &self.snapshot {
                if old.seq == state.seq && old.data == state.data {
                    return false;
                }
            }
        }
        self.snapshot = Some(StateSnapshot {
            seq: state.seq,
            data: state.data.clone(),
            at: state.at.clone().unwrap_or_else(now_rfc3339),
        });
        true
    }

    /// The Tick's state as last taken.
    pub(super) fn snapshot(&self) -> Option<&StateSnapshot> {
        self.snapshot.as_ref()
    }

    /// The Tick's description, once it gave one.
    pub(super) fn descriptor(&self) -> Option<&Descriptor> {
        self.session.as_ref().and_then(|s| s.descriptor())
    }

    /// Updates received over all generations.
    pub(super) fn updates_total(&self) -> u64 {
        self.updates_before + self.session.as_ref().map_or(0, |s| s.updates_received())
    }

    /// Calls the Tick has not answered yet.
    pub(super) fn calls_in_flight(&self) -> u32 {
        self.session.as_ref().map_or(0, |s| {
            u32::try_from(s.calls_in_flight()).unwrap_or(u32::MAX)
        })
    }

    /// When the session is next due to act on time.
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.session
            .as_ref()
            .and_then(|s| s.next_deadline())
            .map(Instant::from_std)
    }

    /// The catalog as the activity overlay lists it.
    pub(super) fn tools(&self) -> Vec<ToolSummary> {
        let Some(descriptor) = self.descriptor() else {
            return Vec::new();
        };
        descriptor
            .tools
            .iter()
            .map(|t| ToolSummary {
                name: t.name.clone(),
                mutates: t.mutates,
                description: t.description.clone(),
            })
            .collect()
    }
}

fn new_session(spec: &LaunchSpec) -> Session {
    Session::new(spec_limits(spec), Instant::now().into_std())
}

/// The protocol limits of the session of the instance `spec` launches:
/// the defaults, with the initialization and call time limits tickhost
/// passed in the spec.
pub(super) fn spec_limits(spec: &LaunchSpec) -> Limits {
    let mut limits = Limits::default();
    if let Some(ms) = spec.init_timeout_ms {
        limits.init_request_timeout = std::time::Duration::from_millis(ms);
        limits.init_total_timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(ms) = spec.call_timeout_ms {
        limits.call_timeout = std::time::Duration::from_millis(ms);
    }
    limits
}
