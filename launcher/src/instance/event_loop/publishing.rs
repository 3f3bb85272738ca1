//! What the instance tells: its status (published to every connection
//! and written to the record), Ready once it is up, the views that came
//! and went, and its files made again on `SIGUSR1`.

use super::Instance;
use crate::instance::rehome::Restored;
use crate::instance::teardown::closed;
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::wire::{ApprovalPolicy, LaunchReport, LauncherStatus, StateSnapshot};

impl Instance {
    /// The number of views changed: record who came or went.
    pub(super) fn on_views(&mut self) {
        let views = *self.views_rx.borrow_and_update();
        let seen = self.views_seen;
        self.views_seen = views;
        if views != seen {
            self.activity
                .view(now_rfc3339_millis(), views > seen, views);
        }
        self.publisher.mark_dirty();
    }

    /// `SIGUSR1`: the folder and the socket made again where they were
    /// removed, and the record rewritten (see [`crate::instance::rehome`]).
    pub(super) fn rehome(&mut self) {
        if self.home.restore() == Restored::Ours && self.ending.is_none() {
            let _ = self.publisher.rewrite_record(&self.spec, &self.status());
        }
    }

    /// Publishes the status, then rewrites the record, answers the waiting
    /// `reload`s and reports Ready (once). Status and record first: whoever
    /// gets Ready may connect or look for the record at once, and must not
    /// see the status from before (no descriptor yet, or the old failure).
    pub(super) fn announce(&mut self) {
        let status = self.publish();
        let recorded = self.publisher.rewrite_record(&self.spec, &status);
        if let (Err(not_saved), Some(_)) = (recorded, self.report.as_ref()) {
            // Up, but no later tickhost could find it: the open fails.
            let reason = format!("{not_saved}; free some space, then open it again");
            self.open_refused = Some(reason.clone());
            self.closing = true;
            self.begin_end(closed(&reason));
            return;
        }
        if let Some(generations) = self.generations.as_mut() {
            generations.answer_reloaders(&status);
        }
        if let Some(report) = self.report.take() {
            report(&LaunchReport::Ready {
                socket: self.spec.socket.clone(),
                status: Box::new(status),
                catalog: self.publisher.catalog_if_any(),
            });
        }
        self.publisher.mark_dirty();
    }

    pub(super) fn status(&self) -> LauncherStatus {
        let generations = self.generations.as_ref();
        let shell = self.shell_integration();
        let shell_now = self.shell.rx.borrow().clone();
        LauncherStatus {
            instance: self.spec.instance.clone(),
            launcher_pid: std::process::id(),
            pid: self.tick.pid(),
            argv: self.tick.argv().to_vec(),
            cwd: self.spec.program.cwd.clone(),
            started_at: self.tick.started_at().to_string(),
            revision: self.session.descriptor().map(|d| d.revision.clone()),
            state: match &shell {
                Some(_) => Some(StateSnapshot {
                    seq: shell_now.updates,
                    data: serde_json::to_value(&shell_now.state).unwrap_or_default(),
                    at: shell_now.at.clone(),
                }),
                None => self.session.snapshot().cloned(),
            },
            updates_total: match &shell {
                Some(_) => shell_now.updates,
                None => self.session.updates_total(),
            },
            calls_in_flight: self.session.calls_in_flight(),
            views: *self.views_rx.borrow(),
            ended: self.ended.clone(),
            terminal_title: Some(self.title_rx.borrow().clone()).filter(|t| !t.is_empty()),
            last_output_at: self.publisher.last_output_at(),
            program: match generations {
                Some(generations) => Some(generations.path().to_string_lossy().into_owned()),
                None => self.spec.program.argv.first().cloned(),
            },
            approve: self
                .spec
                .program
                .approve
                .filter(|p| *p != ApprovalPolicy::Auto),
            owner: self.spec.program.owner,
            agent_input: self.spec.program.agent_input,
            agent_close: self.spec.program.agent_close,
            shell,
            no_integration: self.shell.no_integration(),
            generation: generations.map(|g| g.generation()),
            failed: generations.and_then(|g| g.failed().map(str::to_string)),
            restarts: generations.map(|g| g.restarts()),
            echo_off: self.term.echo_off(),
            recordings: self.recordings.running(),
        }
    }

    /// Publishes the status (with the catalog it names) to every
    /// connection; returns it.
    pub(super) fn publish(&mut self) -> LauncherStatus {
        let status = self.status();
        let generation = self.generations.as_ref().map(|g| g.generation());
        let descriptor = self.session.descriptor();
        self.publisher.publish(status, generation, descriptor)
    }
}
