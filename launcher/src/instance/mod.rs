//! One instance's life, from its launch to its end.
//!
//! [`run`] opens what the instance needs (the socket, the terminal, the
//! recording, an artifact's watch) and spawns the Tick, or reports
//! `Failed` leaving nothing behind; then the instance loop takes over.
//! Everything that touches the protocol session (not `Sync`) runs in that
//! one task; the Tick's pipes, its exit, the socket's connections and the
//! terminal threads all talk to it through channels.
//!
//! * `event_loop`: the loop and the dispatch of requests;
//! * `typing`: an agent's `input` and `keys`, kept as how much at a prompt
//!   with echo off;
//! * `agent_terminal`: keys, waits and `run`;
//! * `shell_side`: a `shell:` program's integration, `describe` and `read`;
//! * `process`: the Tick's process, its pipes and its exit;
//! * `session`: its protocol session, and the state taken from it;
//! * `requests`: requests waiting for the Tick, and their activity;
//! * `status`: the published status and the record file;
//! * `generations`: an `artifact:` instance's generations;
//! * `teardown`: ending the process group, and what is left after it;
//! * `rehome`: the folder, socket and record made again when removed;
//! * `not_a_tick`: the signs that a program opened as a Tick is none;
//! * `screen`: the screen's wire form; `report`: the launch report.

mod agent_terminal;
mod event_loop;
mod generations;
pub mod not_a_tick;
mod process;
mod recordings;
mod rehome;
mod report;
mod requests;
mod screen;
mod session;
mod shell_side;
mod start_settle;
mod status;
mod teardown;
mod typing;

pub use report::{ReportFn, RunOutcome};
pub use start_settle::SHELL_START_SETTLE;
pub use teardown::TERM_GRACE;

use crate::recorder::Recorder;
use crate::socket;
use crate::spawn::spawn;
use crate::terminal::TerminalHandle;
use crate::LauncherError;
use event_loop::Instance;
use generations::Generations;
use screen::history_limit;
use std::sync::Arc;
use tickloop_proto::wire::{LaunchReport, LaunchSpec};

/// Runs one instance to its end: reports `Ready` or `Failed` through
/// `report` (exactly once), serves `spec.socket`, and returns when the Tick's
/// process group is gone and connected peers have the final status.
///
/// Setup errors (socket, PTY, spawn) are reported as `Failed` and returned
/// as `Ok(RunOutcome::Failed)`; nothing is left running.
pub async fn run(spec: LaunchSpec, report: ReportFn) -> Result<RunOutcome, LauncherError> {
    // While the instance runs, the code it no longer runs is let go of
    // each time the launcher is quiet.
    let _code_release = EndsWithRun(tokio::spawn(crate::terminal::release_code_when_quiet()));
    let mut report = Some(report);
    let mut fail = |reason: String, screen: String| {
        if let Some(report) = report.take() {
            report(&LaunchReport::Failed {
                reason: reason.clone(),
                screen,
            });
        }
        Ok(RunOutcome::Failed(reason))
    };

    // A shell or interpreter that would run the protocol's lines as its
    // commands never starts.
    let probed = !spec.program.shell && spec.program.artifact.is_none();
    if let Some(why) = probed
        .then(|| not_a_tick::reads_commands_from_stdin(&spec.program.argv))
        .flatten()
    {
        return fail(
            not_a_tick::open_as_shell(&why, &spec.program.argv),
            String::new(),
        );
    }
    let listener = match socket::bind(&spec.socket) {
        Ok(listener) => listener,
        Err(e) => return fail(e.to_string(), String::new()),
    };
    let recorder = Arc::new(Recorder::new(&spec.instance));
    let term = match TerminalHandle::open(history_limit(&spec), recorder, spec.program.shell) {
        Ok(term) => term,
        Err(e) => {
            let _ = std::fs::remove_file(&spec.socket);
            return fail(e.to_string(), String::new());
        }
    };
    // `open --record FILE`: recorded from before the Tick starts.
    let record_writer = match &spec.program.record {
        None => None,
        Some(path) => match start_file_recording(&term, path).await {
            Ok(writer) => Some(writer),
            Err(e) => {
                let _ = std::fs::remove_file(&spec.socket);
                return fail(e, String::new());
            }
        },
    };
    // Watched before it is read: a save in between is not missed.
    let mut generations = match &spec.program.artifact {
        None => None,
        Some(path) => match Generations::watch(path, &spec.program.watch) {
            Ok(generations) => Some(generations),
            Err(e) => {
                let _ = std::fs::remove_file(&spec.socket);
                return fail(e, String::new());
            }
        },
    };
    // The spec as the first run is started (an artifact's first version):
    // a copy dropped once started, not kept for the launcher's life.
    let spawned = {
        let mut first = spec.clone();
        if let Some(generations) = generations.as_mut() {
            match generations.first_version() {
                Ok(argv) => first.program.argv = argv,
                Err(e) => {
                    let _ = std::fs::remove_file(&spec.socket);
                    return fail(e, String::new());
                }
            }
        }
        spawn(&first, term.tty_name())
    };
    let spawned = match spawned {
        Ok(spawned) => spawned,
        Err(e) => {
            let _ = std::fs::remove_file(&spec.socket);
            return fail(e.to_string(), String::new());
        }
    };
    let Some(report) = report.take() else {
        return Err(LauncherError::Internal(
            "the report was already sent".into(),
        ));
    };
    let instance = Instance::start(
        spec,
        spawned,
        term,
        listener,
        report,
        generations,
        record_writer,
    );
    Ok(running(instance).await)
}

/// The future of [`Instance::run`], on the heap: made in a call of its own,
/// so that no frame the launcher keeps for its whole life holds one (its
/// pages of the main thread's stack would stay dirty).
#[inline(never)]
fn running(
    instance: Box<Instance>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = RunOutcome> + Send>> {
    Box::pin(instance.run())
}

/// Creates `path` (never over an existing file) and records into it.
async fn start_file_recording(
    term: &TerminalHandle,
    path: &std::path::Path,
) -> Result<std::thread::JoinHandle<()>, String> {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| format!("cannot create the recording {}: {e}", path.display()))?;
    let (sink, stream) = crate::recorder::recording();
    let writer = crate::recorder::spawn_file_writer(stream, file, path)
        .map_err(|e| format!("cannot start the recording thread: {e}"))?;
    if !term.start_recording(sink).await {
        return Err("the terminal's thread is gone".to_string());
    }
    Ok(writer)
}

/// A task of [`run`]'s that ends when `run` returns.
struct EndsWithRun(tokio::task::JoinHandle<()>);

impl Drop for EndsWithRun {
    fn drop(&mut self) {
        self.0.abort();
    }
}
