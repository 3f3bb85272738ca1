//! An `artifact:` instance's versions as the loop runs them: a save
//! debounced into a reload, the running version ended, the next one
//! started on the same terminal, a failed one kept with its reason.

use super::Instance;
use crate::instance::generations::RELOADED;
use crate::instance::process::TickProcess;
use crate::instance::teardown::closed;
use crate::spawn::spawn;
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::wire::ReloadCause;
use tokio::time::Instant;

impl Instance {
    /// The artifact's file has been quiet for the debounce time since it
    /// changed: start its new version if it is one.
    pub(super) fn on_saved(&mut self) {
        let closing = self.closing;
        let Some(generations) = self.generations.as_mut() else {
            return;
        };
        if generations.saved(closing) {
            let at = now_rfc3339_millis();
            self.activity.reload(at, None, ReloadCause::FileChanged);
            self.reload(Instant::now().into_std());
        }
    }

    /// Ends the running version (the protocol's shutdown: the session
    /// closes, in-flight calls get the end's outcome, stdin closes, SIGTERM,
    /// SIGKILL after the grace) and starts the file's newest one once it is
    /// gone; at once when no version runs (the last one failed).
    pub(super) fn reload(&mut self, now: std::time::Instant) {
        let Some(generations) = self.generations.as_mut() else {
            return;
        };
        generations.want_reload();
        if self.ending.is_some() {
            // Started when the running version is gone.
            return;
        }
        if self.tick.gone() {
            self.start_generation(true);
            return;
        }
        match self.session.get_mut() {
            Some(session) if session.phase() != tickloop_proto::core::Phase::Ended => {
                session.close(RELOADED, now);
            }
            _ => self.begin_end(closed(RELOADED)),
        }
    }

    /// An artifact's version has ended and its process group is gone: start
    /// the next one if a reload is wanted, else keep its screen and reason
    /// (`failed`) and wait for the next save.
    pub(super) fn generation_over(&mut self) {
        let Some(ending) = self.ending.take() else {
            return;
        };
        self.end_waiting(&ending.info().reason);
        let reload = self.generations.as_ref().is_some_and(|g| g.reload_wanted());
        let had_started = self.session.get().is_some_and(|s| s.initialized());
        if reload {
            self.start_generation(true);
        } else if had_started {
            // It ran, then stopped: the same version again, throttled.
            if let Some(generations) = self.generations.as_mut() {
                generations.schedule_restart(&self.spec.instance, &ending.info().reason);
            }
            // Listed `starting` until then; calls are refused meanwhile.
            self.session.stop();
            self.publisher.mark_dirty();
        } else {
            self.generation_failed(ending.into_info().reason);
        }
    }

    /// This generation did not come up, or stopped: say so in the status,
    /// the record, on its terminal, and to whoever waits (the open, a
    /// `reload`); nothing is restarted until the file is saved again.
    fn generation_failed(&mut self, reason: String) {
        let Some(generations) = self.generations.as_mut() else {
            return;
        };
        generations.failed_with(&self.spec.instance, reason, self.term.tty_name());
        // An artifact that fails from the start is still opened (Ready): its
        // error is on its screen and in `list`, and a save fixes it.
        self.announce();
    }

    /// Starts the artifact file's newest version on the same terminal, with
    /// a fresh protocol session (its first describe is its initialization):
    /// the next generation, or (`new_version` false) the same one again
    /// after it stopped, counted in `restarts`.
    pub(super) fn start_generation(&mut self, new_version: bool) {
        let Some(generations) = self.generations.as_mut() else {
            return;
        };
        let mut spec = self.spec.clone();
        let spawned = generations.begin(new_version).and_then(|argv| {
            spec.program.argv = argv;
            spawn(&spec, self.term.tty_name()).map_err(|e| e.to_string())
        });
        // The old version's state and catalog are gone with it; its updates
        // stay counted, so `watch` (which follows the count) goes on.
        self.session.stop();
        self.session.forget_state();
        self.tick.forget_exit();
        match spawned {
            Ok(spawned) => {
                self.tick = TickProcess::start(spawned);
                self.session.restart(&self.spec);
                self.publisher.mark_dirty();
            }
            Err(reason) => {
                self.tick.not_replaced();
                self.generation_failed(reason);
            }
        }
    }
}
