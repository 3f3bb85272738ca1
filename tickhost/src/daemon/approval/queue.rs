//! The actions waiting for a person, and the one decision each gets.
//!
//! Every decision on a held action — a person's, its caller's withdrawal,
//! its policy turned off, its deadline, its instance's end, a catalog
//! change — is first a claim on it here: whoever takes it off the waiting
//! list, under the lock, decides, and nobody else can. A claim made outside
//! the hold (a person, a withdrawal) is handed to the hold, which works out
//! the final decision (an approved call still has to find its revision)
//! and tells the claimant that: what a person is told is what happened.
//! The newest [`SETTLED_KEPT`] final decisions are kept, so a late
//! `approve` hears what became of the action.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tickloop_proto::wire::HeldCall;
use tokio::sync::oneshot;

/// How long an action waits for a person by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// How many final decisions are kept for late answers.
pub const SETTLED_KEPT: usize = 1024;

/// An answer to a held action from outside its hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approved {
        by: String,
        host: Option<String>,
    },
    Refused {
        by: String,
        reason: Option<String>,
        host: Option<String>,
    },
    /// Its caller stopped waiting for it, or withdrew it.
    Withdrawn {
        reason: String,
    },
}

impl Decision {
    fn word(&self) -> &'static str {
        match self {
            Decision::Approved { .. } => "approved",
            Decision::Refused { .. } => "refused",
            Decision::Withdrawn { .. } => "withdrawn",
        }
    }

    fn by(&self) -> &str {
        match self {
            Decision::Approved { by, .. } | Decision::Refused { by, .. } => by,
            Decision::Withdrawn { .. } => "caller",
        }
    }
}

/// The one decision a held action got, as every party hears it and the
/// approval log keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    pub instance: String,
    pub call: String,
    /// `approved`, `refused`, `withdrawn`, `timed_out`, `ended` or
    /// `revision_changed`.
    pub decision: String,
    pub by: String,
    pub reason: Option<String>,
    pub host: Option<String>,
}

impl Settled {
    pub fn new(held: &HeldCall, decision: &str, by: &str) -> Settled {
        Settled {
            instance: held.instance.clone(),
            call: held.call.clone(),
            decision: decision.to_string(),
            by: by.to_string(),
            reason: None,
            host: None,
        }
    }
}

/// Why [`Approvals::decide`] decided nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Undecided {
    /// No such action waits, and none was decided lately.
    NotHeld,
    /// It was decided already, like this.
    Already(Settled),
    /// Its hold ended without a decision (tickhost is stopping).
    Dropped,
}

/// A claim handed to the hold: the decision, and who wants to hear the
/// final one.
pub(super) struct Claim {
    pub decision: Decision,
    pub told: oneshot::Sender<Settled>,
}

struct Waiting {
    held: HeldCall,
    since: Instant,
    claim: oneshot::Sender<Claim>,
}

#[derive(Default)]
struct Queue {
    waiting: Vec<Waiting>,
    /// The newest final decisions, oldest first, and the claimed ones
    /// whose hold is still working out the final one (`true`).
    settled: VecDeque<(Settled, bool)>,
}

impl Queue {
    fn take(&mut self, call: &str) -> Option<Waiting> {
        let at = self.waiting.iter().position(|w| w.held.call == call)?;
        Some(self.waiting.remove(at))
    }

    fn remember(&mut self, settled: Settled, provisional: bool) {
        if let Some(known) = self.settled.iter_mut().find(|s| s.0.call == settled.call) {
            *known = (settled, provisional);
            return;
        }
        if self.settled.len() >= SETTLED_KEPT {
            self.settled.pop_front();
        }
        self.settled.push_back((settled, provisional));
    }

    /// How `call` of `instance` was decided: `Some((settled, provisional))`.
    fn decided(&self, instance: &str, call: &str) -> Option<(Settled, bool)> {
        self.settled
            .iter()
            .find(|s| s.0.call == call && s.0.instance == instance)
            .cloned()
    }
}

/// The actions waiting now, the decisions made lately, and the settings.
pub struct Approvals {
    next: AtomicU64,
    queue: Mutex<Queue>,
    /// Bumped whenever a final decision is kept.
    finals: tokio::sync::watch::Sender<u64>,
    pub timeout: Duration,
    /// Run `notify-send` when an action starts waiting.
    pub notify: bool,
}

/// `%3` for `3` or `%3`.
pub fn call_id(call: &str) -> String {
    format!("%{}", call.trim_start_matches('%'))
}

impl Approvals {
    pub fn new(timeout: Duration, notify: bool) -> Self {
        Approvals {
            next: AtomicU64::new(1),
            queue: Mutex::default(),
            finals: tokio::sync::watch::Sender::new(0),
            timeout,
            notify,
        }
    }

    /// The settings this user chose (see [`configured_timeout`] and
    /// [`notify_configured`]).
    pub fn configured() -> Self {
        Approvals::new(configured_timeout(), notify_configured())
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A fresh id for a held action (`%7`).
    pub(super) fn next_call(&self) -> String {
        format!("%{}", self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Lists `held` as waiting; a claim on it arrives on the receiver.
    pub(super) fn push(&self, held: HeldCall) -> oneshot::Receiver<Claim> {
        let (claim, claimed) = oneshot::channel();
        self.queue().waiting.push(Waiting {
            held,
            since: Instant::now(),
            claim,
        });
        claimed
    }

    /// The waiting actions, oldest first, with how long each has waited.
    pub fn list(&self) -> Vec<HeldCall> {
        self.queue()
            .waiting
            .iter()
            .map(|w| {
                let mut held = w.held.clone();
                held.waited_ms = u64::try_from(w.since.elapsed().as_millis()).unwrap_or(u64::MAX);
                held
            })
            .collect()
    }

    /// The tools of the actions of `instance` that wait, oldest first.
    pub fn tools_for(&self, instance: &str) -> Vec<String> {
        self.queue()
            .waiting
            .iter()
            .filter(|w| w.held.instance == instance)
            .map(|w| w.held.tool.clone())
            .collect()
    }

    /// How action `call` of `instance` was decided lately, if it was (the
    /// decision claimed, while its hold still works out the final one).
    pub fn settled(&self, instance: &str, call: &str) -> Option<Settled> {
        self.queue()
            .decided(instance, &call_id(call))
            .map(|(settled, _)| settled)
    }

    /// Decides action `call` (`%3`, or `3`) of `instance` from outside its
    /// hold, when it still waits; the final decision (an approval of a
    /// call whose catalog changed meanwhile is not one), or why nothing
    /// was decided.
    pub async fn decide(
        &self,
        instance: &str,
        call: &str,
        decision: Decision,
    ) -> Result<Settled, Undecided> {
        let call = call_id(call);
        let (told, hear) = oneshot::channel();
        loop {
            let mut finals = self.finals.subscribe();
            {
                let mut queue = self.queue();
                let mine = queue
                    .waiting
                    .iter()
                    .any(|w| w.held.call == call && w.held.instance == instance);
                if let Some(waiting) = mine.then(|| queue.take(&call)).flatten() {
                    let mut claimed = Settled::new(&waiting.held, decision.word(), decision.by());
                    if let Decision::Withdrawn { reason } = &decision {
                        claimed.reason = Some(reason.clone());
                    }
                    queue.remember(claimed, true);
                    if waiting.claim.send(Claim { decision, told }).is_err() {
                        return Err(Undecided::Dropped);
                    }
                    break;
                }
                match queue.decided(instance, &call) {
                    None => return Err(Undecided::NotHeld),
                    Some((settled, false)) => return Err(Undecided::Already(settled)),
                    // Claimed by someone else, its final decision being
                    // worked out: wait for it.
                    Some((_, true)) => {}
                }
            }
            if finals.changed().await.is_err() {
                return Err(Undecided::Dropped);
            }
        }
        hear.await.map_err(|_| Undecided::Dropped)
    }

    /// The hold's own claim on `claimed`'s action (its deadline, its end,
    /// its caller gone, ...): `true` when nobody decided it first.
    pub(super) fn claim(&self, claimed: Settled) -> bool {
        let mut queue = self.queue();
        if queue.take(&claimed.call).is_none() {
            return false;
        }
        queue.remember(claimed, true);
        true
    }

    /// Keeps the final decision of an action.
    pub(super) fn settle(&self, settled: Settled) {
        self.queue().remember(settled, false);
        self.finals.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// Its hold has ended (decided or not): `call` is off the list, and a
    /// claim it never concluded (tickhost is stopping) counts as final.
    pub(super) fn unlist(&self, call: &str) {
        let mut queue = self.queue();
        queue.take(call);
        let unconcluded = queue.settled.iter_mut().find(|s| s.0.call == call && s.1);
        if let Some(entry) = unconcluded {
            entry.1 = false;
            drop(queue);
            self.finals.send_modify(|n| *n = n.wrapping_add(1));
        }
    }
}

/// How long an action waits for approval: `TICKLOOP_APPROVAL_TIMEOUT_MS`,
/// else `approval_timeout_secs` in the config file, else
/// [`DEFAULT_TIMEOUT`].
pub fn configured_timeout() -> Duration {
    std::env::var("TICKLOOP_APPROVAL_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(Duration::from_millis)
        .or_else(|| {
            tickloop_client::config::load()
                .ok()
                .and_then(|c| c.approval_timeout_secs)
                .map(Duration::from_secs)
        })
        .unwrap_or(DEFAULT_TIMEOUT)
}

/// Whether a held action pops a desktop notification: `TICKLOOP_NOTIFY`
/// (`1`/`0`), else `notify` in the config file, else no.
pub fn notify_configured() -> bool {
    match std::env::var("TICKLOOP_NOTIFY").as_deref() {
        Ok("1" | "true" | "on" | "yes") => true,
        Ok(_) => false,
        Err(_) => tickloop_client::config::load()
            .ok()
            .and_then(|c| c.notify)
            .unwrap_or(false),
    }
}
