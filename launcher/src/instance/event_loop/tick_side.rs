//! The Tick's side of the loop: its stdout fed to the session, its exit,
//! the session's actions (lines to write, replies, the end), its stdin
//! watched, and, until it first speaks, the signs that it is no Tick.

use super::asked::not_reading;
use super::Instance;
use crate::instance::generations::RELOADED;
use crate::instance::process::{StdoutEvent, TickEvent, STDIN_UNREAD_MAX};
use crate::instance::session::spec_limits;
use crate::instance::teardown::{end_info, program_exited};
use crate::socket::error;
use serde_json::json;
use tickloop_client::clock::{now_rfc3339, now_rfc3339_millis};
use tickloop_proto::core::{Action, ClientToken, EndKind, Reply};
use tickloop_proto::wire::{ClientReply, EndClass, EndInfo, ErrorKind};
use tokio::time::Instant;

impl Instance {
    pub(super) fn on_tick_event(&mut self, event: TickEvent) {
        let now = Instant::now().into_std();
        match event {
            TickEvent::Stdout(Some(StdoutEvent::Bytes(bytes))) => {
                self.term.recorder().from_tick(&bytes);
                if let Some(why) = self.probe.stdout(&bytes) {
                    return self.not_a_tick(&why);
                }
                if let Some(session) = self.session.get_mut() {
                    session.on_stdout(&bytes, now);
                }
            }
            TickEvent::Stdout(Some(StdoutEvent::Eof) | None) => {
                if let Some(session) = self.session.get_mut() {
                    session.on_stdout_eof(now);
                }
                self.deliver_exit();
            }
            TickEvent::Exit(status) => {
                if self.tick.on_exit(status) {
                    self.deliver_exit();
                }
            }
        }
    }

    /// Hands the Tick's exit to the session (after its stdout was drained).
    pub(super) fn deliver_exit(&mut self) {
        let Some(description) = self.tick.take_exit() else {
            return;
        };
        match self.session.get_mut() {
            Some(session) => session.on_exit(&description, Instant::now().into_std()),
            None => self.begin_end(program_exited(&description)),
        }
    }

    /// Holds the session's writes while the Tick leaves more than
    /// [`STDIN_UNREAD_MAX`] of its stdin untaken, refusing what waits to be
    /// written (so a Tick that stopped reading costs no more memory,
    /// however many requests come), and lets them go once it has taken
    /// half of that.
    pub(super) fn watch_stdin(&mut self) {
        let unread = self.tick.stdin_unread();
        let Some(session) = self.session.get_mut() else {
            return;
        };
        let now = Instant::now().into_std();
        if unread >= STDIN_UNREAD_MAX && !session.writes_held() {
            session.hold_writes(true, now);
            session.refuse_waiting(&not_reading(unread));
        } else if session.writes_held() && unread < STDIN_UNREAD_MAX / 2 {
            session.hold_writes(false, now);
        }
    }

    pub(super) fn drain_actions(&mut self) {
        loop {
            let Some(action) = self.session.get_mut().and_then(|s| s.poll_action()) else {
                return;
            };
            match action {
                Action::Write(bytes) => {
                    self.term.recorder().to_tick(&bytes);
                    self.probe.wrote(&bytes);
                    self.tick.write(bytes);
                }
                Action::Reply { client, reply } => self.on_reply(client, reply),
                Action::Initialized => {
                    if self.session.refresh_snapshot(true) {
                        self.publisher.mark_dirty();
                    }
                    self.initialized();
                }
                Action::Updated => {
                    self.session.refresh_snapshot(true);
                    self.record_update();
                    self.publisher.mark_dirty();
                }
                Action::CatalogChanged => self.publisher.mark_dirty(),
                Action::End(reason) => {
                    let mut info = end_info(&reason);
                    let reloading = self.generations.as_ref().is_some_and(|g| g.reload_wanted());
                    if reloading && !self.closing && reason.kind == EndKind::Closed {
                        info.reason = RELOADED.to_string();
                    }
                    self.begin_end(info);
                }
            }
        }
    }

    fn on_reply(&mut self, client: ClientToken, reply: Reply) {
        let Some(pending) = self.waiting.take(client) else {
            return;
        };
        let reply = match reply {
            Reply::Describe(descriptor) => ClientReply::Ok(descriptor),
            Reply::Read(state) => {
                if self.session.refresh_snapshot(false) {
                    self.publisher.mark_dirty();
                }
                ClientReply::Ok(json!({
                    "seq": state.seq,
                    "data": state.data,
                    "at": state.at.unwrap_or_else(now_rfc3339),
                }))
            }
            Reply::Call(outcome) => ClientReply::Call(outcome),
            // The Tick ended under the request: the instance ends with it
            // (an artifact's next version starts instead), and tickhost
            // answers from what it keeps.
            Reply::Failed(message) if self.ends_with_session() => error(ErrorKind::Ended, &message),
            Reply::Failed(message) => error(ErrorKind::TickFailed, &message),
        };
        self.publisher.mark_dirty();
        pending.answer(&mut self.activity, reply);
    }

    /// Whether the protocol session has ended and the instance with it (not
    /// an artifact, whose next version starts a new session).
    fn ends_with_session(&self) -> bool {
        self.generations.is_none()
            && self
                .session
                .get()
                .is_some_and(|session| session.end_reason().is_some())
    }

    /// Answers every request still waiting for the Tick: it ended, for
    /// `reason`.
    pub(super) fn end_waiting(&mut self, reason: &str) {
        for pending in self.waiting.drain() {
            pending.answer(&mut self.activity, error(ErrorKind::Ended, reason));
        }
    }

    /// Records the update just taken into the snapshot.
    fn record_update(&mut self) {
        let Some(snapshot) = self.session.snapshot() else {
            return;
        };
        let bytes = serde_json::to_vec(&snapshot.data).map_or(0, |v| v.len());
        let budget = spec_limits(&self.spec).delivery_budget;
        self.activity.update(
            now_rfc3339_millis(),
            Instant::now().into_std(),
            snapshot.seq,
            bytes,
            budget,
        );
    }

    /// The instance is up: report Ready and write the record.
    pub(super) fn initialized(&mut self) {
        self.probe.stop();
        self.announce();
    }

    /// While a Tick has not spoken yet: what its terminal shows, for the
    /// signs that it is none.
    pub(super) async fn probe_screen(&mut self) {
        if let Some(screen) = self.term.screen(0).await {
            self.probe.screen(&screen.lines, Instant::now());
        }
    }

    /// The program is no Tick (`why`: what it did): its open fails now
    /// rather than at the end of the initialization time.
    pub(super) fn not_a_tick(&mut self, why: &str) {
        self.probe.stop();
        let program = self.program_name();
        self.begin_end(EndInfo {
            reason: format!("{program} {why}"),
            kind: EndClass::InitFailed,
            offending: None,
            at: now_rfc3339(),
            not_saved: Vec::new(),
        });
    }
}
