//! Requests from the socket, dispatched: the launcher answers most
//! itself (status, screen, typing, waits, `run`, activity, policies, close,
//! reload); `describe`, `read` and `call` go to the Tick's session.

use super::Instance;
use crate::instance::agent_terminal::{self};
use crate::instance::process::STDIN_UNREAD_MAX;
use crate::instance::requests::{answer, Asked};
use crate::instance::screen::{history_limit, screen_reply};
use crate::instance::teardown::{closed, closed_by, CLOSED_BY_USER};
use crate::instance::typing;
use crate::socket::{error, Incoming, Peer};
use serde_json::json;
use tickloop_client::clock::now_rfc3339_millis;
use tickloop_proto::core::SessionRequest;
use tickloop_proto::wire::{
    ClientKind, ClientReply, ConsentChange, ErrorKind, LauncherRequest, NotTypedWhy, ReloadCause,
    RunRequest, TerminalOutcome, WaitRequest,
};
use tokio::time::Instant;

impl Instance {
    /// Dispatches a request from the socket: the launcher answers most
    /// itself; `describe`, `read` and `call` go to the Tick's session.
    pub(super) fn on_request(&mut self, incoming: Incoming) {
        let Incoming {
            id,
            request,
            client,
            peer,
            bytes,
        } = incoming;
        self.received = self.received.saturating_add(bytes);
        if self.received >= TRIM_AFTER_BYTES {
            self.trim_due = Some(Instant::now() + TRIM_AFTER);
        }
        let now = Instant::now().into_std();
        let protocol = match request {
            LauncherRequest::Status => return self.reply_status(id, &peer),
            LauncherRequest::Screen {
                image: Some(index), ..
            } => return self.reply_image(id, peer, index),
            LauncherRequest::Screen { history, .. } => return self.reply_screen(id, peer, history),
            LauncherRequest::Input { text } => {
                let asked = (id, &peer, client);
                return typing::input(&self.term, &mut self.activity, asked, text);
            }
            LauncherRequest::Keys { text, keys } => {
                let asked = (id, &peer, client);
                return typing::keys(&self.term, &mut self.activity, asked, text, keys);
            }
            LauncherRequest::Wait(wait) => return self.wait(id, peer, wait),
            LauncherRequest::Run(run) => return self.run_command(id, peer, client, run),
            LauncherRequest::Describe | LauncherRequest::Read if self.spec.program.shell => {
                let read = matches!(request, LauncherRequest::Read);
                return self.shell_asked(id, &peer, client, read);
            }
            LauncherRequest::Activity { after } => return self.reply_activity(id, &peer, after),
            LauncherRequest::SetApproval(change) => return self.set_approval(id, &peer, change),
            LauncherRequest::Consent(decision) => {
                self.activity.consent(now_rfc3339_millis(), decision);
                peer.reply(id, ClientReply::Ok(json!({"ok": true})));
                return;
            }
            LauncherRequest::Subscription { started } => {
                self.activity
                    .subscription(now_rfc3339_millis(), client, started);
                peer.reply(id, ClientReply::Ok(json!({"ok": true})));
                return;
            }
            LauncherRequest::Close => return self.close(id, peer, client, now),
            LauncherRequest::Reload => return self.reload_asked(id, peer, client, now),
            LauncherRequest::Describe => SessionRequest::Describe,
            LauncherRequest::Read => SessionRequest::Read,
            LauncherRequest::Call(call) => SessionRequest::Call(call),
        };
        let asked = Asked::of(client, &protocol);
        if self.session.get().is_none() {
            if let Some(generations) = &self.generations {
                let message = generations.not_running(&self.spec.instance);
                let reply = error(ErrorKind::TickFailed, &message);
                answer(&mut self.activity, asked, id, &peer, reply);
                return;
            }
        }
        let Some(session) = self.session.get_mut() else {
            let name = self
                .spec
                .instance
                .strip_prefix("shell:")
                .unwrap_or(&self.spec.instance);
            let message =
                format!("shell:{name} is not a Tick: it has no protocol; use screen and input");
            let reply = error(ErrorKind::NotATick, &message);
            answer(&mut self.activity, asked, id, &peer, reply);
            return;
        };
        let token = self.waiting.add(id, peer, asked);
        let unread = self.tick.stdin_unread();
        if session.writes_held() || unread >= STDIN_UNREAD_MAX {
            // A Tick that stopped reading: what it was sent waits, and
            // nothing more is queued for it.
            session.refuse_request(token, protocol, not_reading(unread));
        } else {
            session.request(token, protocol, now);
        }
        // calls_in_flight may have changed.
        self.publisher.mark_dirty();
    }

    /// `status`: the status as it is now.
    fn reply_status(&self, id: u64, peer: &Peer) {
        let reply = match serde_json::to_value(self.status()) {
            Ok(value) => ClientReply::Ok(value),
            Err(e) => error(ErrorKind::Internal, &e.to_string()),
        };
        peer.reply(id, reply);
    }

    /// `screen`: read from the emulator on a task of its own.
    fn reply_screen(&self, id: u64, peer: Peer, history: usize) {
        let term = self.term.clone();
        let limit = history_limit(&self.spec);
        tokio::spawn(async move {
            let reply = match term.screen(history).await {
                Some(text) => match serde_json::to_value(screen_reply(text, limit, false)) {
                    Ok(value) => ClientReply::Ok(value),
                    Err(e) => error(ErrorKind::Internal, &e.to_string()),
                },
                None => error(ErrorKind::Internal, "the terminal emulator is gone"),
            };
            peer.reply(id, reply);
        });
    }

    /// `screen --image N`: the kept image's bytes as the program sent them.
    fn reply_image(&self, id: u64, peer: Peer, index: u32) {
        let term = self.term.clone();
        let instance = self.spec.instance.clone();
        tokio::spawn(async move {
            let reply = match term.image(index).await {
                Some(data) => ClientReply::typed(&data),
                None => error(
                    ErrorKind::BadRequest,
                    &format!(
                        "{instance} keeps no image {index}: `tickloop screen {instance} --json` lists the images it keeps (`images`, each with its `index`)"
                    ),
                ),
            };
            peer.reply(id, reply);
        });
    }

    /// The shell's integration now, if it has one.
    pub(super) fn shell_integration(&self) -> Option<tickloop_proto::wire::ShellIntegration> {
        if !self.spec.program.shell {
            return None;
        }
        self.shell
            .integration(self.spec.program.argv.first().map(String::as_str))
    }

    /// Why a shell without integration cannot do `what`.
    fn no_integration(&self, what: &str) -> ClientReply {
        let program = self.program_name();
        self.shell.refusal(&self.spec.instance, program, what)
    }

    /// `describe` and `read` of a `shell:` instance: what it is and what
    /// works with it; its state, when it has integration.
    fn shell_asked(&mut self, id: u64, peer: &Peer, client: Option<ClientKind>, read: bool) {
        let asked = Asked::new(client, if read { "read" } else { "describe" });
        let reply = match self.shell_integration() {
            Some(_) if read => self.shell.read(),
            None if read => self.no_integration("`read`"),
            _ => self
                .shell
                .describe(&self.spec.instance, &self.spec.program.argv),
        };
        answer(&mut self.activity, asked, id, peer, reply);
    }

    /// `wait`: answered when what it waits for happens, or at its timeout.
    fn wait(&mut self, id: u64, peer: Peer, wait: WaitRequest) {
        if let Some(problem) = wait.problem() {
            return peer.reply(id, error(ErrorKind::BadRequest, &problem));
        }
        if wait.prompt && self.shell.injected().is_none() && !self.shell.rx.borrow().marked {
            return peer.reply(id, self.no_integration("`wait --prompt`"));
        }
        agent_terminal::start_wait(self.term.clone(), wait, id, peer, &mut self.end_waits);
    }

    /// `run`: a command typed at the shell's prompt, answered at its end.
    fn run_command(&mut self, id: u64, peer: Peer, client: Option<ClientKind>, run: RunRequest) {
        let asked = Asked::new(client, "run").with_args(&agent_terminal::run_args(&run));
        if let Some(problem) = run.problem() {
            let reply = error(ErrorKind::BadRequest, &problem);
            return answer(&mut self.activity, asked, id, &peer, reply);
        }
        if self.shell_integration().is_none() {
            let reply = self.no_integration("`run`");
            let asked = asked.came_to(Some(TerminalOutcome::NotTyped {
                why: NotTypedWhy::NoIntegration,
            }));
            return answer(&mut self.activity, asked, id, &peer, reply);
        }
        let ran = self.ran_tx.clone();
        let at = agent_terminal::RunIn {
            instance: self.spec.instance.clone(),
            shell_pid: self.tick.pid(),
            first_prompt: self.shell.injected().is_some(),
            marker: self.shell.run_file(),
        };
        agent_terminal::start_run(
            self.term.clone(),
            at,
            run,
            id,
            peer,
            move |reply, came_to| {
                let _ = ran.send(Box::new((asked.came_to(came_to), reply)));
            },
        );
    }

    /// `activity`: the record, from after entry `after`.
    fn reply_activity(&self, id: u64, peer: &Peer, after: Option<u64>) {
        let record = self.activity.record(
            (&self.spec.instance, std::process::id()),
            after,
            self.session.tools(),
        );
        let reply = match serde_json::to_value(record) {
            Ok(value) => ClientReply::Ok(value),
            Err(e) => error(ErrorKind::Internal, &e.to_string()),
        };
        peer.reply(id, reply);
    }

    /// `approve-policy`: who approves what agents do changes (each part
    /// given).
    /// A change that cannot be recorded (a full disk) is not made: a
    /// tickhost started later would not know it.
    fn set_approval(&mut self, id: u64, peer: &Peer, change: ConsentChange) {
        let before = self.spec.program.clone();
        let program = &mut self.spec.program;
        program.approve = change.policy.or(program.approve);
        program.agent_input = change.input.or(program.agent_input);
        program.agent_close = change.close.or(program.agent_close);
        let reply = json!({
            "instance": self.spec.instance,
            "approve": program.approve.unwrap_or_default().as_str(),
            "agent_input": program.agent_input.unwrap_or_default().as_str(),
            "agent_close": program.agent_close.unwrap_or_default().as_str(),
        });
        if let Err(not_saved) = self.publisher.rewrite_record(&self.spec, &self.status()) {
            self.spec.program = before;
            let message = format!("{not_saved}; the policy is unchanged");
            peer.reply(id, error(ErrorKind::NotSaved, &message));
            return;
        }
        self.publisher.mark_dirty();
        peer.reply(id, ClientReply::Ok(reply));
    }

    /// `close`: the session closes (the protocol's shutdown), or the
    /// process group ends at once when there is no session; answered at
    /// the end.
    fn close(&mut self, id: u64, peer: Peer, client: Option<ClientKind>, now: std::time::Instant) {
        let reason = closed_by(client);
        let reason = reason.as_str();
        self.farewell.add_closer(id, peer);
        self.closing = true;
        if let Some(generations) = self.generations.as_mut() {
            generations.closing();
        }
        if self.ending.is_none() && self.tick.gone() {
            // A failed artifact version: nothing runs, nothing to end.
            self.begin_end(closed(reason));
        } else if self.ending.is_none() {
            match self.session.get_mut() {
                Some(session) => session.close(reason, now),
                None => self.begin_end(closed(reason)),
            }
        }
    }

    /// `reload`: an artifact's newest version starts; answered when it is
    /// up or failed. The activity names who asked.
    fn reload_asked(
        &mut self,
        id: u64,
        peer: Peer,
        client: Option<ClientKind>,
        now: std::time::Instant,
    ) {
        match self.generations.as_mut() {
            Some(generations) if !self.closing => {
                let at = now_rfc3339_millis();
                self.activity.reload(at, client, ReloadCause::Asked);
                generations.add_reloader(id, peer);
                self.reload(now);
            }
            Some(_) => peer.reply(id, error(ErrorKind::Ended, CLOSED_BY_USER)),
            None => peer.reply(
                id,
                error(
                    ErrorKind::BadRequest,
                    &format!(
                        "{} is not an artifact; only an artifact reloads",
                        self.spec.instance
                    ),
                ),
            ),
        }
    }
}

/// Why a request to a Tick that stopped reading its stdin was not sent.
pub(super) fn not_reading(unread: usize) -> String {
    format!(
        "the Tick is not reading its stdin: {unread} bytes written to it are still unread (at most {STDIN_UNREAD_MAX} wait); this request was not sent: try again once it has read them"
    )
}

/// Requests adding up to this many bytes leave freed memory behind them ...
pub(super) const TRIM_AFTER_BYTES: usize = 1024 * 1024;
/// ... which goes back to the system this long after the last one.
pub(super) const TRIM_AFTER: std::time::Duration = std::time::Duration::from_secs(2);
