//! The instance loop: the one task that owns the Tick's protocol session
//! (which is not `Sync`) and reacts to everything that happens to the
//! instance, one thing at a time: the Tick's output and exit, the
//! session's actions and deadlines, requests from the socket, the views,
//! the screen, the artifact's saves, and the end of the process group.
//!
//! The loop is here; what it does about each kind of event is a file of
//! its own, each an `impl Instance`: `asked` (requests from the socket,
//! dispatched), `tick_side` (the Tick's output, exit and the session's
//! actions), `versions` (an artifact's versions), `ending` (the end) and
//! `publishing` (the status, Ready, the record). What each concern keeps
//! lives beside this loop ([`super::process`], [`super::session`],
//! [`super::generations`], [`super::requests`], [`super::status`],
//! [`super::teardown`]), and the loop calls on it.

mod asked;
mod ending;
mod publishing;
mod tick_side;
mod versions;

use super::agent_terminal::EndWaits;
use super::generations::{next_change, Generations};
use super::not_a_tick::Probe;
use super::process::TickProcess;
use super::recordings::Recordings;
use super::rehome::Home;
use super::report::{ReportFn, RunOutcome};
use super::requests::{record, Asked, Waiting};
use super::session::TickSession;
use super::shell_side::ShellSide;
use super::start_settle::StartSettle;
use super::status::Publisher;
use super::teardown::{Ending, Farewell, TEARDOWN_POLL};
use crate::activity::ActivityLog;
use crate::socket::{self, Incoming, ServeContext};
use crate::spawn::Spawned;
use crate::terminal::TerminalHandle;
use crate::views::hub::ViewHub;
use std::sync::Arc;
use tickloop_proto::wire::{ClientReply, EndInfo, LaunchSpec};
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
    requests_rx: mpsc::Receiver<Box<Incoming>>,
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
    /// Images dropped for the image memory's limit, in all (and the limit
    /// in MB); what the activity has told of them so far.
    images_dropped: (watch::Receiver<crate::images::ImagesDropped>, u64),
    images_dropped_told: crate::images::ImagesDropped,
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
    /// Boxed: a channel keeps a block of 32 slots the size of its message.
    ran_tx: mpsc::UnboundedSender<Box<(Asked, ClientReply)>>,
    ran_rx: mpsc::UnboundedReceiver<Box<(Asked, ClientReply)>>,
    /// Bytes of requests received since the allocator last gave its free
    /// pages back (and the main thread's unused stack), and when it does
    /// next: a moment after the start, and a moment after the last request
    /// once they add up to [`asked::TRIM_AFTER_BYTES`] (parsed, answered, freed).
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
    /// The program's name as a person reads it in a refusal or an end
    /// reason (its argv[0], else "the program").
    fn program_name(&self) -> &str {
        self.spec
            .program
            .argv
            .first()
            .map_or("the program", String::as_str)
    }

    /// The instance of the `spawned` Tick, with its socket served. Boxed,
    /// as [`Instance::run`] keeps it: a value this large, moved through the
    /// frames of the future that runs it, would keep kilobytes of the main
    /// thread's stack in use for the launcher's whole life.
    pub(super) fn start(
        spec: LaunchSpec,
        spawned: Spawned,
        term: Arc<TerminalHandle>,
        listener: tokio::net::UnixListener,
        report: ReportFn,
        generations: Option<Generations>,
        record_writer: Option<std::thread::JoinHandle<()>>,
    ) -> Box<Instance> {
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
        let images_dropped = term.subscribe_images_dropped();
        let shell = ShellSide::new(
            started_shell,
            crate::shell_integration::folder(&spec.socket),
            term.subscribe_shell(),
        );
        let (ran_tx, ran_rx) = mpsc::unbounded_channel();
        let (rebinds_tx, rebinds_rx) = mpsc::channel(1);
        let home = Home::new(&spec.socket, rebinds_tx);
        let (recordings, recorders) = Recordings::new(record_writer.is_some());
        let mut instance = Box::new(Instance {
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
            images_dropped,
            images_dropped_told: crate::images::ImagesDropped::default(),
            generations,
            record_writer,
            recordings,
            probe,
            shell,
            end_waits: EndWaits::default(),
            ran_tx,
            ran_rx,
            received: 0,
            // Once started: what the start used and no longer needs.
            trim_due: Some(Instant::now() + asked::TRIM_AFTER),
            home,
            open_refused: None,
        });
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
    pub(super) async fn run(mut self: Box<Self>) -> RunOutcome {
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
                Some(incoming) = self.requests_rx.recv() => {
                    tickloop_client::idle::mark_busy();
                    self.on_request(*incoming)
                }
                _ = sleep_until(self.trim_due), if self.trim_due.is_some() => {
                    self.trim_due = None;
                    self.received = 0;
                    crate::terminal::return_free_memory();
                }
                event = self.tick.next_event(), if self.tick.listening() => {
                    tickloop_client::idle::mark_busy();
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
                Ok(()) = self.images_dropped.0.changed() => self.note_images_dropped(),
                Ok(()) = self.title_rx.changed() => self.publisher.mark_dirty(),
                Ok(()) = self.shell.rx.changed() => self.publisher.mark_dirty(),
                Some(ran) = self.ran_rx.recv() => {
                    let (asked, reply) = *ran;
                    record(&mut self.activity, asked, &reply);
                }
                // Not heard while a status for output is due (it takes the
                // time of the last output then), but while probing.
                Ok(()) = self.changes_rx.changed(),
                    if self.publisher.wants_changes() || self.probe.probing() =>
                {
                    self.publisher.on_output(self.term.last_output_at());
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
                    self.publisher.output_came_due(self.term.last_output_at());
                    // The status published now covers the changes so far.
                    self.changes_rx.borrow_and_update();
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
}

impl Instance {
    /// Images were dropped for the image memory's limit: said in the
    /// activity, once for each batch.
    fn note_images_dropped(&mut self) {
        let total = *self.images_dropped.0.borrow_and_update();
        let news = total.since(self.images_dropped_told);
        self.images_dropped_told = total;
        if news != crate::images::ImagesDropped::default() {
            self.activity.images_dropped(
                tickloop_client::clock::now_rfc3339_millis(),
                news,
                self.images_dropped.1,
            );
        }
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
