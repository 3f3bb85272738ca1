//! The end of an instance: its process group ended step by step, then
//! what waits answered, the last screen and activity kept, the launch
//! report owed and the final status published and recorded.

use super::Instance;
use crate::instance::not_a_tick::with_hint;
use crate::instance::report::RunOutcome;
use crate::instance::screen::history_limit;
use crate::instance::teardown::{failed_open_screen, keep_activity, keep_last_screen, Ending};
use tickloop_proto::wire::{EndClass, EndInfo, LaunchReport, LauncherStatus};

impl Instance {
    /// Starts ending the Tick's process group (SIGTERM now, SIGKILL later).
    pub(super) fn begin_end(&mut self, info: EndInfo) {
        if self.ending.is_some() {
            return;
        }
        self.ending = Some(Ending::begin(info, &mut self.tick));
    }

    /// Advances the end of the process group; `true` when it is over.
    pub(super) fn teardown_step(&mut self) -> bool {
        match self.ending.as_mut() {
            Some(ending) => ending.step(&self.tick),
            None => false,
        }
    }

    /// The process group is gone: answer what waits, keep the last screen
    /// and the activity, report, publish, record, and let the connections
    /// take the end.
    pub(super) async fn finish(mut self) -> RunOutcome {
        let Some(ending) = self.ending.take() else {
            return RunOutcome::Failed("internal: finished without an end".into());
        };
        // Answer what the session still holds (it answers at its end; this
        // covers anything left).
        self.drain_actions();
        self.end_waiting(&ending.info().reason);
        let mut info = ending.into_info();
        // A Tick that never came up is a failed open: nothing of it stays
        // (its screen goes with the report), so no file outlives it.
        let came_up =
            self.open_refused.is_none() && (self.report.is_none() || self.spec.program.shell);
        let last_screen = if came_up {
            let (lines, not_saved) =
                keep_last_screen(&self.term, &self.spec.socket, history_limit(&self.spec)).await;
            info.not_saved.extend(not_saved);
            lines
        } else {
            // Settled all the same, for the recordings below.
            let settled = self.term.settled_screen(history_limit(&self.spec)).await;
            settled.map(|s| s.lines).unwrap_or_default()
        };
        self.end_waits.ended(&info, &last_screen);
        if let Some(folder) = self.shell.folder() {
            let _ = std::fs::remove_dir_all(folder);
        }
        // The screen is settled: every recording has all the output.
        self.term.recorder().end(&info.reason);
        if let Some(writer) = self.record_writer.take() {
            let _ = tokio::task::spawn_blocking(move || writer.join()).await;
        }
        let activity = self.activity.record(
            (&self.spec.instance, std::process::id()),
            None,
            self.session.tools(),
        );
        if came_up {
            info.not_saved
                .extend(keep_activity(&self.spec.socket, &activity));
        }
        let outcome = self.final_report(&info).await;
        self.farewell
            .finish(&info, &mut self.requests_rx, &self.spec.socket)
            .await;
        outcome
    }

    /// The launch report still owed at the end, the final status, and the
    /// run's outcome.
    async fn final_report(&mut self, info: &EndInfo) -> RunOutcome {
        if let Some(reason) = self.open_refused.take() {
            if let Some(report) = self.report.take() {
                report(&LaunchReport::Failed {
                    reason: reason.clone(),
                    screen: String::new(),
                });
                return RunOutcome::Failed(reason);
            }
        }
        let shell_report = if self.spec.program.shell {
            self.report.take()
        } else {
            None
        };
        if let Some(report) = shell_report {
            // A plain program that ended before it was reported up: it did
            // run, so it is reported as ended (status, record and last
            // screen kept), not as a failed open. Nobody can connect now.
            let status = self.record_the_end(info);
            report(&LaunchReport::Ready {
                socket: self.spec.socket.clone(),
                status: Box::new(status),
                catalog: self.publisher.catalog_if_any(),
            });
            RunOutcome::Ended(info.clone())
        } else if let Some(report) = self.report.take() {
            // Never came up: a failed open, with what the Tick showed, and
            // how to open a terminal program when it never spoke.
            let screen = failed_open_screen(&self.term).await;
            let exited = info.kind == EndClass::Exited && !self.probe.saw_sign();
            let hint = self.probe.never_spoke() && !exited;
            let reason = if hint && self.spec.program.artifact.is_none() {
                with_hint(&info.reason, &self.spec.program.argv)
            } else {
                info.reason.clone()
            };
            report(&LaunchReport::Failed { reason, screen });
            RunOutcome::Failed(info.reason.clone())
        } else {
            self.record_the_end(info);
            RunOutcome::Ended(info.clone())
        }
    }

    /// The end goes into the record, then out to every connection, with
    /// what could not be saved (the record itself included: the status
    /// still says so); returns the status published.
    fn record_the_end(&mut self, info: &EndInfo) -> LauncherStatus {
        self.ended = Some(info.clone());
        if let Err(not_saved) = self.publisher.rewrite_record(&self.spec, &self.status()) {
            if let Some(ended) = self.ended.as_mut() {
                ended.not_saved.push(not_saved);
            }
        }
        self.publish()
    }
}
