//! What an agent does with the program's terminal beyond typing text:
//! keys by name, waits (for text in the output, quiet, the shell's prompt,
//! the end), `run` (a command typed at the shell's prompt and waited for),
//! with what holds the terminal when it outlives its timeout.
//!
//! Waits and runs are tasks of their own that answer their request
//! directly; the output they wait for is watched on the emulator thread
//! ([`crate::shell_watch`]), the end by the instance loop ([`EndWaits`]).
//! Nothing is polled.

use crate::shell_watch::{NotTyped, Run, ShellMsg, Waited};
use crate::socket::{error, Peer};
use crate::terminal::TerminalHandle;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tickloop_proto::wire::{
    ClientReply, EndInfo, ErrorKind, Foreground, NotTypedWhy, RunReply, RunRequest,
    TerminalOutcome, WaitReply, WaitRequest,
};
use tokio::sync::oneshot;
use tokio::time::Instant;

/// The most a `--text` expression may compile to.
const REGEX_SIZE: usize = 1 << 20;
/// The most a `run` waits for the shell to answer keys typed just before
/// it (the line redrawn after `C-u`) before the prompt's state decides;
/// and the most a `wait --prompt` waits for the shell to take a line an
/// Enter typed before it ended.
const ANSWER_LIMIT: Duration = Duration::from_secs(2);
/// How long the screen must be quiet after the first output that answered
/// typed keys: a shell redraws its line in more than one write.
const ANSWER_QUIET: Duration = Duration::from_millis(50);

/// `keys`: every name checked before anything is typed; `text` first.
pub(super) fn keys(term: &TerminalHandle, text: Option<String>, names: &[String]) -> ClientReply {
    let pressed = match tickloop_proto::keys::parse_all(names) {
        Ok(pressed) => pressed,
        Err(e) => return error(ErrorKind::BadRequest, &e.to_string()),
    };
    match term.type_keys(text.map(String::into_bytes), &pressed) {
        Ok(bytes) => ClientReply::Ok(json!({"ok": true, "keys": names.len(), "bytes": bytes})),
        Err(e) => error(ErrorKind::Internal, &e.to_string()),
    }
}

/// How long ago `started` was, in ms.
fn waited(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

fn reply_of<T: serde::Serialize>(answer: &T) -> ClientReply {
    match serde_json::to_value(answer) {
        Ok(value) => ClientReply::Ok(value),
        Err(e) => error(ErrorKind::Internal, &e.to_string()),
    }
}

/// The screen now, as waits answer with it.
async fn screen_lines(term: &TerminalHandle) -> Vec<String> {
    term.screen(0).await.map(|s| s.lines).unwrap_or_default()
}

/// Starts the wait `wait` (checked already) of request `id`; `integrated`
/// says whether `prompt` can be waited for.
pub(super) fn start_wait(
    term: Arc<TerminalHandle>,
    wait: WaitRequest,
    id: u64,
    peer: Peer,
    end_waits: &mut EndWaits,
) {
    let started = Instant::now();
    let timeout = Duration::from_millis(wait.timeout_ms);
    if wait.ended {
        end_waits.add(term, id, peer, started, timeout);
        return;
    }
    if let Some(text) = &wait.text {
        let regex = match regex::RegexBuilder::new(text)
            .size_limit(REGEX_SIZE)
            .build()
        {
            Ok(regex) => regex,
            Err(e) => {
                let message = format!("--text is not a regular expression: {e}");
                peer.reply(id, error(ErrorKind::BadRequest, &message));
                return;
            }
        };
        let (reply, answer) = oneshot::channel();
        let msg = ShellMsg::Text {
            regex,
            screen: wait.screen,
            reply,
        };
        tokio::spawn(wait_output(term, msg, answer, timeout, started, id, peer));
        return;
    }
    if wait.prompt {
        tokio::spawn(wait_prompt(term, timeout, started, id, peer));
        return;
    }
    if let Some(quiet) = wait.quiet_ms {
        tokio::spawn(wait_quiet(
            term,
            Duration::from_millis(quiet),
            timeout,
            started,
            id,
            peer,
        ));
    }
}

/// A wait answered on the emulator thread, or its timeout.
async fn wait_output(
    term: Arc<TerminalHandle>,
    msg: ShellMsg,
    answer: oneshot::Receiver<Waited>,
    timeout: Duration,
    started: Instant,
    id: u64,
    peer: Peer,
) {
    if !term.ask_shell(msg).await {
        peer.reply(id, emulator_gone());
        return;
    }
    let got = tokio::time::timeout(timeout, answer).await;
    reply_waited(&term, got, started, id, &peer).await;
}

/// `prompt`: the shell at its prompt. A prompt the shell showed before the
/// last Enter typed (`keys ... Enter`, then at once `wait --prompt`) is not
/// the answer: the shell has not taken that line yet, and a mark of its
/// after the Enter is waited for. That holds for [`ANSWER_LIMIT`] at most:
/// an Enter the shell answers with no mark (a key bound to nothing, a
/// menu's choice) holds the wait no longer.
async fn wait_prompt(
    term: Arc<TerminalHandle>,
    timeout: Duration,
    started: Instant,
    id: u64,
    peer: Peer,
) {
    let Some(answer) = ask_prompt(&term, true).await else {
        peer.reply(id, emulator_gone());
        return;
    };
    let got = match tokio::time::timeout(ANSWER_LIMIT.min(timeout), answer).await {
        Err(_) if ANSWER_LIMIT < timeout => {
            let Some(answer) = ask_prompt(&term, false).await else {
                peer.reply(id, emulator_gone());
                return;
            };
            let left = timeout.saturating_sub(started.elapsed());
            tokio::time::timeout(left, answer).await
        }
        got => got,
    };
    reply_waited(&term, got, started, id, &peer).await;
}

/// Asks the terminal thread for the prompt; `None` when it is gone.
async fn ask_prompt(
    term: &TerminalHandle,
    hold_for_enter: bool,
) -> Option<oneshot::Receiver<Waited>> {
    let (reply, answer) = oneshot::channel();
    let msg = ShellMsg::Prompt {
        hold_for_enter,
        reply,
    };
    term.ask_shell(msg).await.then_some(answer)
}

/// Replies to wait `id` with what it got, or with its timeout.
async fn reply_waited(
    term: &TerminalHandle,
    got: Result<Result<Waited, oneshot::error::RecvError>, tokio::time::error::Elapsed>,
    started: Instant,
    id: u64,
    peer: &Peer,
) {
    let reply = match got {
        Ok(Ok(got)) => WaitReply {
            waited_ms: waited(started),
            line: got.matched.as_ref().map(|(_, line)| line.clone()),
            matched: got.matched.map(|(m, _)| m),
            shell: got.shell,
            screen: got.screen,
            ..WaitReply::default()
        },
        Ok(Err(_)) => {
            peer.reply(
                id,
                error(
                    ErrorKind::Ended,
                    "the terminal went away while the wait ran",
                ),
            );
            return;
        }
        Err(_) => WaitReply {
            timed_out: true,
            waited_ms: waited(started),
            screen: screen_lines(term).await,
            ..WaitReply::default()
        },
    };
    peer.reply(id, reply_of(&reply));
}

/// `quiet`: no output for `quiet` (each change of the screen starts it
/// again), or the timeout.
async fn wait_quiet(
    term: Arc<TerminalHandle>,
    quiet: Duration,
    timeout: Duration,
    started: Instant,
    id: u64,
    peer: Peer,
) {
    let mut changes = term.subscribe_changes();
    changes.borrow_and_update();
    let deadline = started + timeout;
    let mut timed_out = false;
    loop {
        let quiet_until = (Instant::now() + quiet).min(deadline);
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    break;
                }
            }
            _ = tokio::time::sleep_until(quiet_until) => {
                timed_out = quiet_until == deadline && Instant::now() >= deadline;
                break;
            }
        }
        if Instant::now() >= deadline {
            timed_out = true;
            break;
        }
    }
    let reply = WaitReply {
        timed_out,
        waited_ms: waited(started),
        screen: screen_lines(&term).await,
        ..WaitReply::default()
    };
    peer.reply(id, reply_of(&reply));
}

/// Waits for the instance's end, each answered once: by the instance when
/// it has ended, or by its own timer.
#[derive(Default)]
pub(super) struct EndWaits {
    waits: Vec<EndWait>,
}

struct EndWait {
    id: u64,
    peer: Peer,
    started: Instant,
    answered: Arc<AtomicBool>,
}

impl EndWaits {
    fn add(
        &mut self,
        term: Arc<TerminalHandle>,
        id: u64,
        peer: Peer,
        started: Instant,
        timeout: Duration,
    ) {
        self.waits.retain(|w| !w.answered.load(Ordering::Acquire));
        let answered = Arc::new(AtomicBool::new(false));
        let timer = (answered.clone(), peer.clone());
        tokio::spawn(async move {
            tokio::time::sleep_until(started + timeout).await;
            let (answered, peer) = timer;
            if !answered.swap(true, Ordering::AcqRel) {
                let reply = WaitReply {
                    timed_out: true,
                    waited_ms: waited(started),
                    screen: screen_lines(&term).await,
                    ..WaitReply::default()
                };
                peer.reply(id, reply_of(&reply));
            }
        });
        self.waits.push(EndWait {
            id,
            peer,
            started,
            answered,
        });
    }

    /// The instance ended (`info`), showing `screen` last: every wait not
    /// yet answered is.
    pub(super) fn ended(&mut self, info: &EndInfo, screen: &[String]) {
        for wait in self.waits.drain(..) {
            if !wait.answered.swap(true, Ordering::AcqRel) {
                let reply = WaitReply {
                    waited_ms: waited(wait.started),
                    ended: Some(info.clone()),
                    screen: screen.to_vec(),
                    ..WaitReply::default()
                };
                wait.peer.reply(wait.id, reply_of(&reply));
            }
        }
    }
}

/// Where a `run` is typed: the instance, its shell's process, and what its
/// integration offers.
pub(super) struct RunIn {
    pub instance: String,
    /// The shell's pid: what holds its terminal at a timeout is asked
    /// of its `/proc` entry.
    pub shell_pid: u32,
    /// The integration was injected: a shell that has not shown its first
    /// prompt yet is waited for.
    pub first_prompt: bool,
    /// The file that marks the command as an agent's, for the
    /// integration to run it with no pager.
    pub marker: Option<PathBuf>,
}

/// Starts `run` of request `id`: the command typed at the prompt on the
/// emulator thread (or refused there, nothing typed), then its end or the
/// timeout (the command keeps running). `done` gets the reply too, and
/// what the run came to, for the activity record.
pub(super) fn start_run(
    term: Arc<TerminalHandle>,
    at: RunIn,
    run: RunRequest,
    id: u64,
    peer: Peer,
    done: impl FnOnce(ClientReply, Option<TerminalOutcome>) + Send + 'static,
) {
    tokio::spawn(async move {
        let (reply, came_to) = run_to_end(&term, &at, run).await;
        peer.reply(id, reply.clone());
        done(reply, came_to);
    });
}

/// A run's reply, and what it came to when it came to something on the
/// terminal (typed and ended, still running, or nothing typed).
type RunEnd = (ClientReply, Option<TerminalOutcome>);

/// Nothing was typed, for `why`: the reply saying so and what to do.
fn refused(instance: &str, why: NotTyped) -> RunEnd {
    let came_to = TerminalOutcome::NotTyped {
        why: not_typed_why(&why),
    };
    let message = not_typed(instance, why);
    (error(ErrorKind::BadRequest, &message), Some(came_to))
}

async fn run_to_end(term: &TerminalHandle, at: &RunIn, run: RunRequest) -> RunEnd {
    let instance = at.instance.as_str();
    let started = Instant::now();
    let timeout = Duration::from_millis(run.timeout_ms);
    let answer_until = started + ANSWER_LIMIT.min(timeout);
    let mut changes = term.subscribe_changes();
    let mut answering = true;
    let (n, ended_rx) = loop {
        let (typed_tx, typed_rx) = oneshot::channel();
        let (ended_tx, ended_rx) = oneshot::channel();
        let msg = ShellMsg::Run(Run {
            bytes: run.command.clone().into_bytes(),
            first_prompt: at.first_prompt,
            marker: at.marker.clone(),
            wait_for_answer: answering && Instant::now() < answer_until,
            typed: typed_tx,
            ended: ended_tx,
        });
        changes.borrow_and_update();
        if !term.ask_shell(msg).await {
            return (emulator_gone(), None);
        }
        let left = timeout.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, typed_rx).await {
            Err(_) => {
                let message = format!(
                    "{instance} showed no prompt within {:.1} s; nothing was typed",
                    timeout.as_secs_f64()
                );
                let came_to = TerminalOutcome::NotTyped {
                    why: NotTypedWhy::NoPrompt,
                };
                return (error(ErrorKind::BadRequest, &message), Some(came_to));
            }
            Ok(Ok(Ok(n))) => break (n, ended_rx),
            // Keys typed just before have not been answered: the shell's
            // answer (its redrawn line, the prompt after `C-c`) is waited
            // for, and the prompt asked about again.
            Ok(Ok(Err(NotTyped::Unanswered))) => {
                answering = answered(&mut changes, answer_until).await;
            }
            Ok(Ok(Err(why))) => return refused(instance, why),
            Ok(Err(_)) => return (emulator_gone(), None),
        }
    };
    let timeout = Duration::from_millis(run.timeout_ms).saturating_sub(started.elapsed());
    match tokio::time::timeout(timeout, ended_rx).await {
        Ok(Ok(got)) => match got.command {
            Some(command) => {
                let status = command.exit;
                let reply = reply_of(&RunReply {
                    timed_out: false,
                    command,
                    cwd: got.cwd,
                    foreground: None,
                });
                (reply, Some(TerminalOutcome::Exited { status }))
            }
            None => (
                error(ErrorKind::Internal, "the command's end came without it"),
                None,
            ),
        },
        Ok(Err(_)) => (
            error(
                ErrorKind::Ended,
                &format!("{instance} ended while `{}` ran", run.command),
            ),
            None,
        ),
        Err(_) => {
            let (reply, now) = oneshot::channel();
            let command = if term.ask_shell(ShellMsg::Command { n, reply }).await {
                now.await.ok().flatten()
            } else {
                None
            };
            let alt_screen = term.view_snapshot(0).await.is_some_and(|s| s.alt_screen);
            let foreground = foreground(at.shell_pid, alt_screen).await;
            let came_to = TerminalOutcome::StillRunning {
                after_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                foreground: foreground.clone(),
            };
            let reply = match command {
                Some(command) => reply_of(&RunReply {
                    timed_out: true,
                    command,
                    cwd: None,
                    foreground,
                }),
                None => error(
                    ErrorKind::Internal,
                    &format!(
                        "`{}` was typed, but the shell never said it started",
                        run.command
                    ),
                ),
            };
            (reply, Some(came_to))
        }
    }
}

fn emulator_gone() -> ClientReply {
    error(ErrorKind::Internal, "the terminal emulator is gone")
}

/// What holds the terminal of the shell `shell_pid` (`/proc` read off the
/// runtime's threads).
async fn foreground(shell_pid: u32, alt_screen: bool) -> Option<Foreground> {
    tokio::task::spawn_blocking(move || crate::foreground::holding(shell_pid, alt_screen))
        .await
        .ok()
        .flatten()
}

/// Waits for the screen's next change and then for [`ANSWER_QUIET`]
/// without one, until `until` at most. False if the screen can change no
/// more (the terminal is gone).
async fn answered(changes: &mut tokio::sync::watch::Receiver<u64>, until: Instant) -> bool {
    match tokio::time::timeout_at(until, changes.changed()).await {
        Ok(Ok(())) => {}
        Ok(Err(_)) => return false,
        Err(_) => return true,
    }
    loop {
        let quiet_until = (Instant::now() + ANSWER_QUIET).min(until);
        match tokio::time::timeout_at(quiet_until, changes.changed()).await {
            Ok(Ok(())) if Instant::now() < until => {}
            Ok(Err(_)) => return false,
            _ => return true,
        }
    }
}

/// Why a command was not typed, as the activity keeps it.
fn not_typed_why(why: &NotTyped) -> NotTypedWhy {
    match why {
        NotTyped::NoIntegration => NotTypedWhy::NoIntegration,
        NotTyped::NotAtPrompt(_) => NotTypedWhy::NotAtPrompt,
        NotTyped::LineNotEmpty(_) => NotTypedWhy::PromptHadText,
        NotTyped::Busy => NotTypedWhy::AnotherRun,
        NotTyped::Unanswered => NotTypedWhy::Unanswered,
    }
}

/// Why a command was not typed, saying what to do.
fn not_typed(instance: &str, why: NotTyped) -> String {
    match why {
        NotTyped::NoIntegration => format!(
            "{instance} has not shown a prompt with shell integration yet (no OSC 133 mark); nothing was typed: `tickloop wait {instance} --prompt` waits for it"
        ),
        NotTyped::NotAtPrompt(Some(running)) => format!(
            "{instance} is not at its prompt: `{running}` is running; nothing was typed. `tickloop wait {instance} --prompt` waits for its end"
        ),
        NotTyped::NotAtPrompt(None) => format!(
            "{instance} is not at its prompt; nothing was typed. `tickloop wait {instance} --prompt` waits for it"
        ),
        NotTyped::LineNotEmpty(typed) => format!(
            "the prompt of {instance} has text on it already ({typed:?}); nothing was typed. Ask the person, or clear it with `tickloop keys {instance} C-u`"
        ),
        NotTyped::Busy => format!(
            "another `run` is being typed into {instance}; nothing was typed. Wait for its end"
        ),
        NotTyped::Unanswered => format!(
            "{instance} did not answer the keys typed just before within {:.1} s; nothing was typed. `tickloop wait {instance} --prompt` waits for its prompt",
            ANSWER_LIMIT.as_secs_f64()
        ),
    }
}

/// The command line as the activity keeps it.
pub(super) fn run_args(run: &RunRequest) -> Value {
    json!(run.command)
}
