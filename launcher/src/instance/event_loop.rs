//! The instance loop: the one task that owns the Tick's protocol session
//! (which is not `Sync`) and reacts to everything that happens to the
//! instance, one thing at a time: the Tick's output and exit, the
//! session's actions and deadlines, requests from the socket, the views,
//! the screen, the artifact's saves, and the end of the process group.
//!
//! Requests are dispatched here; what each concern keeps lives beside
//! this loop ([`super::process`], [`super::session`],
//! [`super::generations`], [`super::requests`], [`super::status`],
//! [`super::teardown`]), and the loop calls on it.

use super::agent_terminal::{self, EndWaits};
use super::generations::{next_change, Generations, RELOADED};
use super::not_a_tick::{with_hint, Probe};
use super::process::{StdoutEvent, TickEvent, TickProcess, STDIN_UNREAD_MAX};
use super::recordings::Recordings;
use super::rehome::{Home, Restored};
use super::report::{ReportFn, RunOutcome};
use super::requests::{answer, record, Asked, Waiting};
use super::screen::{history_limit, screen_reply};
use super::session::{spec_limits, TickSession};
use super::shell_side::ShellSide;
use super::start_settle::StartSettle;
use super::status::Publisher;
use super::teardown::{
    closed, closed_by, end_info, failed_open_screen, keep_activity, keep_last_screen,
    program_exited, Ending, Farewell, CLOSED_BY_USER, TEARDOWN_POLL,
};
use super::typing;
use crate::activity::ActivityLog;
use crate::socket::{self, error, Incoming, Peer, ServeContext};
use crate::spawn::{spawn, Spawned};
use crate::terminal::TerminalHandle;
use crate::views::hub::ViewHub;
use serde_json::json;
use std::sync::Arc;
use tickloop_client::clock::{now_rfc3339, now_rfc3339_millis};
use tickloop_proto::core::{Action, ClientToken, EndKind, Reply, SessionRequest};
use tickloop_proto::wire::{
    ApprovalPolicy, ClientKind, ClientReply, ConsentChange, EndClass, EndInfo, ErrorKind,
    LaunchReport, LaunchSpec, LauncherRequest, LauncherStatus, NotTypedWhy, ReloadCause,
    RunRequest, StateSnapshot, TerminalOutcome, WaitRequest,
};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// One running instance, as its loop holds it.
pub(super) struct Instance {
    spec: LaunchSpec,
    term: Arc<TerminalHandle>,
    /// The Tick's process (an artifact's current generation's).
    tick: TickProcess,
    /// Its protocol session (none for a `shell:` program).
    session: TickSession,
    requests_rx: mpsc::Receiver<Incoming>,
    /// Requests waiting for the Tick's answer.
    waiting: Waiting,
    /// What agents did with this instance (see [`crate::activity`]).
    activity: ActivityLog,
    /// Views attached at the last look, to record attach and detach.
    views_seen: u32,
    publisher: Publisher,
    report: Option<ReportFn>,
    /// The process group is being ended.
    ending: Option<Ending>,
    /// The instance has ended (for the status).
    ended: Option<EndInfo>,
    /// `close` was asked (or the launcher was signalled): the end is final.
    closing: bool,
    farewell: Farewell,
    /// A `shell:` program not yet reported up (it is, once it waits on
    /// something or has run a while, unless it ends first).
    starting: Option<StartSettle>,
    /// How many views are attached (see [`crate::views`]).
    views_rx: watch::Receiver<u32>,
    /// The title the program gave its terminal.
    title_rx: watch::Receiver<String>,
    /// Bumped when the screen may have changed: the program wrote output.
    changes_rx: watch::Receiver<u64>,
    /// `Some` for an `artifact:` instance.
    generations: Option<Generations>,
    /// The thread writing `open --record FILE`, joined at the end.
    record_writer: Option<std::thread::JoinHandle<()>>,
    /// The recordings running now.
    recordings: Recordings,
    /// Until a Tick first speaks the protocol: the signs that it is none.
    probe: Probe,
    /// A `shell:` program's integration and state.
    shell: ShellSide,
    /// `wait --ended` requests, answered at the end.
    end_waits: EndWaits,
    /// `run`s that ended, for the activity record.
    ran_tx: mpsc::UnboundedSender<(Asked, ClientReply)>,
    ran_rx: mpsc::UnboundedReceiver<(Asked, ClientReply)>,
    /// Bytes of requests received since the allocator last gave its free
    /// pages back, and when it does next: a moment after the last request,
    /// once they add up to [`TRIM_AFTER_BYTES`] (parsed, answered, freed).
    received: usize,
    trim_due: Option<Instant>,
    /// The folder, socket and record, made again when removed (SIGUSR1).
    home: Home,
    /// Set when the record of a Tick just up could not be written: the
    /// open fails with this (an instance no later tickhost could find is
    /// not opened).
    open_refused: Option<String>,
}

impl Instance {
    /// The instance of the `spawned` Tick, with its socket served.
    pub(super) fn start(
        spec: LaunchSpec,
        spawned: Spawned,
        term: Arc<TerminalHandle>,
        listener: tokio::net::UnixListener,
        report: ReportFn,
        generations: Option<Generations>,
        record_writer: Option<std::thread::JoinHandle<()>>,
    ) -> Instance {
        let started_shell = spawned.integration.clone();
        let tick = TickProcess::start(spawned);
        let session = TickSession::new(&spec);
        let probe = Probe::new(!spec.program.shell && spec.program.artifact.is_none());
        // A plain program is up once it waits on something, or has run
        // for SHELL_START_SETTLE.
        let starting = spec.program.shell.then(|| StartSettle::new(tick.pid()));

        let (requests_tx, requests_rx) = mpsc::channel(64);
        let (farewell, shutdown_rx, flushed) = Farewell::new();
        let views = ViewHub::start(term.clone());
        let title_rx = term.subscribe_title();
        let changes_rx = term.subscribe_changes();
        let shell = ShellSide::new(
            started_shell,
            crate::shell_integration::folder(&spec.socket),
            term.subscribe_shell(),
        );
        let (ran_tx, ran_rx) = mpsc::unbounded_channel();
        let (rebinds_tx, rebinds_rx) = mpsc::channel(1);
        let home = Home::new(&spec.socket, rebinds_tx);
        let (recordings, recorders) = Recordings::new(record_writer.is_some());
        let mut instance = Instance {
            spec,
            term,
            tick,
            session,
            requests_rx,
            waiting: Waiting::new(),
            activity: ActivityLog::new(),
            views_seen: 0,
            publisher: Publisher::new(),
            report: Some(report),
            ending: None,
            ended: None,
            closing: false,
            farewell,
            starting,
            views_rx: views.count(),
            title_rx,
            changes_rx,
            generations,
            record_writer,
            recordings,
            probe,
            shell,
            end_waits: EndWaits::default(),
            ran_tx,
            ran_rx,
            received: 0,
            trim_due: None,
            home,
            open_refused: None,
        };
        instance.recordings.note_file(&mut instance.activity);
        let status = instance.status();
        instance.publisher.first(status);
        tokio::spawn(socket::serve(
            listener,
            ServeContext {
                requests: requests_tx,
                status: instance.publisher.subscribe(),
                shutdown: shutdown_rx,
                flushed,
                views,
                term: instance.term.clone(),
                recorders,
            },
            rebinds_rx,
        ));
        instance
    }

    /// Runs the instance until it has ended (an artifact's generations
    /// end and start within this).
    pub(super) async fn run(mut self) -> RunOutcome {
        // The session queued its first request (tick/describe) at creation.
        self.drain_actions();
        loop {
            let now = Instant::now();
            let deadline = if self.ending.is_none() {
                self.session.next_deadline()
            } else {
                None
            };
            let exit_deadline = self.tick.exit_deadline();
            let reload_due = self.generations.as_ref().and_then(|g| g.reload_due());
            let restart_due = self.generations.as_ref().and_then(|g| g.restart_due());
            let output_due = self.publisher.output_due();
            let probe_due = self.probe.due().filter(|_| self.ending.is_none());
            tokio::select! {
                Some(change) = next_change(&mut self.generations) => {
                    if let Some(generations) = self.generations.as_mut() {
                        generations.changed(change);
                    }
                }
                _ = sleep_until(reload_due), if reload_due.is_some() => self.on_saved(),
                _ = sleep_until(restart_due), if restart_due.is_some() => {
                    if !self.closing {
                        self.start_generation(false);
                    }
                }
                () = settled(&mut self.starting), if self.starting.is_some() && self.ending.is_none() => {
                    self.starting = None;
                    self.initialized();
                }
                Some(incoming) = self.requests_rx.recv() => self.on_request(incoming),
                _ = sleep_until(self.trim_due), if self.trim_due.is_some() => {
                    self.trim_due = None;
                    self.received = 0;
                    crate::terminal::return_free_memory();
                }
                event = self.tick.next_event(), if self.tick.listening() => {
                    self.on_tick_event(event)
                }
                _ = sleep_until(exit_deadline), if exit_deadline.is_some() => {
                    self.deliver_exit();
                }
                _ = sleep_until(deadline), if deadline.is_some() => {
                    if let Some(session) = self.session.get_mut() {
                        session.on_time(now.max(Instant::now()).into_std());
                    }
                }
                _ = tokio::time::sleep(TEARDOWN_POLL), if self.ending.is_some() => {}
                Ok(()) = self.views_rx.changed() => self.on_views(),
                Some(note) = self.recordings.next() => {
                    self.recordings.note(note, &mut self.activity);
                    self.publisher.mark_dirty();
                }
                Ok(()) = self.title_rx.changed() => self.publisher.mark_dirty(),
                Ok(()) = self.shell.rx.changed() => self.publisher.mark_dirty(),
                Some((asked, reply)) = self.ran_rx.recv() => {
                    record(&mut self.activity, asked, &reply);
                }
                Ok(()) = self.changes_rx.changed() => {
                    self.publisher.on_output();
                    if self.probe.probing() && self.ending.is_none() {
                        self.probe_screen().await;
                    }
                }
                _ = sleep_until(probe_due), if probe_due.is_some() => {
                    if let Some(why) = self.probe.verdict(Instant::now()) {
                        self.not_a_tick(&why);
                    }
                }
                _ = sleep_until(output_due), if output_due.is_some() => {
                    self.publisher.output_came_due();
                }
                () = self.home.signalled() => self.rehome(),
            }
            self.drain_actions();
            self.watch_stdin();
            self.drain_actions();
            if self.teardown_step() {
                if self.generations.is_none() || self.closing {
                    return self.finish().await;
                }
                self.generation_over();
                self.drain_actions();
            }
            if self.publisher.take_dirty() {
                self.publish();
            }
        }
    }

    /// Dispatches a request from the socket: the launcher answers most
    /// itself; `describe`, `read` and `call` go to the Tick's session.
    fn on_request(&mut self, incoming: Incoming) {
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
            LauncherRequest::Screen { history } => return self.reply_screen(id, peer, history),
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

    /// The shell's integration now, if it has one.
    fn shell_integration(&self) -> Option<tickloop_proto::wire::ShellIntegration> {
        if !self.spec.program.shell {
            return None;
        }
        self.shell
            .integration(self.spec.program.argv.first().map(String::as_str))
    }

    /// Why a shell without integration cannot do `what`.
    fn no_integration(&self, what: &str) -> ClientReply {
        let program = self
            .spec
            .program
            .argv
            .first()
            .map_or("the program", String::as_str);
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
                let _ = ran.send((asked.came_to(came_to), reply));
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

    fn on_tick_event(&mut self, event: TickEvent) {
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
    fn deliver_exit(&mut self) {
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
    fn watch_stdin(&mut self) {
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

    fn drain_actions(&mut self) {
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
    fn end_waiting(&mut self, reason: &str) {
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

    /// The number of views changed: record who came or went.
    fn on_views(&mut self) {
        let views = *self.views_rx.borrow_and_update();
        let seen = self.views_seen;
        self.views_seen = views;
        if views != seen {
            self.activity
                .view(now_rfc3339_millis(), views > seen, views);
        }
        self.publisher.mark_dirty();
    }

    /// The instance is up: report Ready and write the record.
    fn initialized(&mut self) {
        self.probe.stop();
        self.announce();
    }

    /// While a Tick has not spoken yet: what its terminal shows, for the
    /// signs that it is none.
    async fn probe_screen(&mut self) {
        if let Some(screen) = self.term.screen(0).await {
            self.probe.screen(&screen.lines, Instant::now());
        }
    }

    /// The program is no Tick (`why`: what it did): its open fails now
    /// rather than at the end of the initialization time.
    fn not_a_tick(&mut self, why: &str) {
        self.probe.stop();
        let program = self
            .spec
            .program
            .argv
            .first()
            .map_or("the program", String::as_str);
        self.begin_end(EndInfo {
            reason: format!("{program} {why}"),
            kind: EndClass::InitFailed,
            offending: None,
            at: now_rfc3339(),
            not_saved: Vec::new(),
        });
    }

    /// `SIGUSR1`: the folder and the socket made again where they were
    /// removed, and the record rewritten (see [`super::rehome`]).
    fn rehome(&mut self) {
        if self.home.restore() == Restored::Ours && self.ending.is_none() {
            let _ = self.publisher.rewrite_record(&self.spec, &self.status());
        }
    }

    /// Publishes the status, then rewrites the record, answers the waiting
    /// `reload`s and reports Ready (once). Status and record first: whoever
    /// gets Ready may connect or look for the record at once, and must not
    /// see the status from before (no descriptor yet, or the old failure).
    fn announce(&mut self) {
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

    /// The artifact's file has been quiet for the debounce time since it
    /// changed: start its new version if it is one.
    fn on_saved(&mut self) {
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
    fn reload(&mut self, now: std::time::Instant) {
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
    fn generation_over(&mut self) {
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
    fn start_generation(&mut self, new_version: bool) {
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

    /// Starts ending the Tick's process group (SIGTERM now, SIGKILL later).
    fn begin_end(&mut self, info: EndInfo) {
        if self.ending.is_some() {
            return;
        }
        self.ending = Some(Ending::begin(info, &mut self.tick));
    }

    /// Advances the end of the process group; `true` when it is over.
    fn teardown_step(&mut self) -> bool {
        match self.ending.as_mut() {
            Some(ending) => ending.step(&self.tick),
            None => false,
        }
    }

    /// The process group is gone: answer what waits, keep the last screen
    /// and the activity, report, publish, record, and let the connections
    /// take the end.
    async fn finish(mut self) -> RunOutcome {
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

    fn status(&self) -> LauncherStatus {
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
    fn publish(&mut self) -> LauncherStatus {
        let status = self.status();
        let generation = self.generations.as_ref().map(|g| g.generation());
        let descriptor = self.session.descriptor();
        self.publisher.publish(status, generation, descriptor)
    }
}

/// Resolves once a starting `shell:` program counts as up; never without one.
async fn settled(starting: &mut Option<StartSettle>) {
    match starting {
        Some(starting) => starting.settled().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Why a request to a Tick that stopped reading its stdin was not sent.
fn not_reading(unread: usize) -> String {
    format!(
        "the Tick is not reading its stdin: {unread} bytes written to it are still unread (at most {STDIN_UNREAD_MAX} wait); this request was not sent: try again once it has read them"
    )
}

/// Requests adding up to this many bytes leave freed memory behind them ...
const TRIM_AFTER_BYTES: usize = 1024 * 1024;
/// ... which goes back to the system this long after the last one.
const TRIM_AFTER: std::time::Duration = std::time::Duration::from_secs(2);
