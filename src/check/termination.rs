//! The shutdown rules of `tickloop check` (spec 4.5), each on a run of its
//! own: the Tick is started again, outside tickhost, as a launcher starts it
//! (leader of a new session on a PTY of its own, stdin and stdout pipes),
//! and initialized (describe, read).
//!
//! - `sigterm`: SIGTERM alone to its process group, stdin left open: it
//!   must exit (and leave nothing of its group running) within the host's
//!   grace, since the host does not promise to close stdin first.
//! - `eof`: a call in flight (a tool and arguments the `calls` rule would
//!   use), then stdin closed alone: it should answer the call, then exit.
//!
//! How long each waits ([`TERM_GRACE`], [`EOF_LIMIT`]) is the rule's own
//! bound; tests assert the verdicts only.

use super::args::valid_args;
use super::finding::{call_text, Finding};
use super::probe::Probe;
use super::rule::Rule;
use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::io::{BufReader, Read, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};
use tickloop_client::framing::read_line_blocking;

/// How long after SIGTERM the host waits before SIGKILL.
const TERM_GRACE: Duration = launcher::instance::TERM_GRACE;
/// How long the `eof` rule waits for the exit after stdin closed.
const EOF_LIMIT: Duration = Duration::from_secs(10);
/// How long each initialization answer may take (spec 4.2).
const INIT_LIMIT: Duration = Duration::from_secs(10);

/// The process group of the Tick started again by a shutdown rule (0:
/// none), for an interrupted check to kill ([`kill_running`]).
static RUNNING_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Kills the process group of a shutdown rule's run, if one is running
/// (an interrupted check leaves nothing behind).
pub fn kill_running() {
    let pgid = RUNNING_GROUP.swap(0, std::sync::atomic::Ordering::SeqCst);
    if pgid > 0 {
        // SAFETY: kill(2) of the process group a run of this check started.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

/// The Tick started again for one shutdown rule; killed (its whole process
/// group) on drop.
struct Run {
    child: Child,
    pgid: libc::pid_t,
    stdin: Option<ChildStdin>,
    /// The Tick's stdout lines, parsed; closed when stdout ends.
    lines: Receiver<Value>,
    next_id: u64,
}

impl Drop for Run {
    fn drop(&mut self) {
        RUNNING_GROUP.store(0, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: kill(2) of the process group this run started.
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// A new PTY (master, slave) at the host's initial 120x30.
fn open_pty() -> Result<(OwnedFd, OwnedFd)> {
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 30,
        ws_col: 120,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty fills the two descriptors it is given.
    let done = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error()).context("cannot open a PTY");
    }
    // SAFETY: both were just opened and are owned by nobody else.
    let pair = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    for fd in [&pair.0, &pair.1] {
        use std::os::fd::AsRawFd;
        // SAFETY: sets close-on-exec on a descriptor of ours.
        unsafe {
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
        }
    }
    Ok(pair)
}

impl Run {
    /// Starts the Tick's command and initializes it; `Err` says why it
    /// could not be.
    fn start(argv: &[String]) -> Result<Run> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        // The caller's environment without the host's internal variables
        // (spec 4.1), as the launcher gives it.
        let env: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| !k.starts_with("TICKLOOP_") && k != "TERM")
            .collect();
        let program = launcher::spawn::resolve_program(
            argv.first().map(String::as_str).unwrap_or_default(),
            &env,
            &cwd,
        )?;
        let (master, slave) = open_pty()?;
        let mut command = Command::new(&program);
        command
            .args(&argv[1..])
            .current_dir(&cwd)
            .env_clear()
            .envs(env)
            .env("TICKLOOP_INSTANCE_ID", "hosted:check")
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() == -1 || libc::ioctl(2, libc::TIOCSCTTY as _, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start {}", program.display()))?;
        drop(command);
        let pgid = child.id() as libc::pid_t;
        RUNNING_GROUP.store(pgid, std::sync::atomic::Ordering::SeqCst);
        // The screen is read and dropped, so the Tick never blocks on it.
        let mut screen = std::fs::File::from(master);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while matches!(screen.read(&mut buf), Ok(n) if n > 0) {}
        });
        let stdout = child.stdout.take().context("the Tick's stdout")?;
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            // Lines as long as the host takes, no longer.
            let max_line = tickloop_proto::core::limits::Limits::default().max_line;
            while let Ok(Some(line)) = read_line_blocking(&mut reader, max_line) {
                let value = serde_json::from_slice(&line).unwrap_or(Value::Null);
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut run = Run {
            child,
            pgid,
            stdin,
            lines,
            next_id: 1,
        };
        run.request("tick/describe", json!({}))?;
        run.request("tick/read", json!({}))?;
        Ok(run)
    }

    /// Writes a request; its id.
    fn send(&mut self, method: &str, params: Value) -> Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.stdin.as_mut().context("stdin is closed")?;
        writeln!(stdin, "{line}").with_context(|| format!("cannot write {method}"))?;
        stdin.flush().context("cannot write to the Tick")?;
        Ok(id)
    }

    /// A request and its answer (within the initialization limit).
    fn request(&mut self, method: &str, params: Value) -> Result<Value> {
        let id = self.send(method, params)?;
        let deadline = Instant::now() + INIT_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(message) if message["id"] == id => return Ok(message),
                Ok(_) => continue,
                Err(_) => anyhow::bail!("no answer to {method} when started again"),
            }
        }
    }

    /// Waits up to `limit` for the Tick to exit, noting the ids answered
    /// meanwhile; how long it took, or `None` if it still runs.
    fn wait_exit(&mut self, limit: Duration, answered: &mut Vec<u64>) -> Option<Duration> {
        let started = Instant::now();
        loop {
            while let Ok(message) = self.lines.try_recv() {
                answered.extend(message["id"].as_u64());
            }
            if let Ok(Some(_)) = self.child.try_wait() {
                // What it wrote before exiting (stdout ends with it, unless a
                // child of its holds it open).
                while let Ok(message) = self.lines.recv_timeout(Duration::from_millis(200)) {
                    answered.extend(message["id"].as_u64());
                }
                return Some(started.elapsed());
            }
            if started.elapsed() >= limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Whether any process of the Tick's process group still runs.
    fn group_alive(&self) -> bool {
        // SAFETY: signal 0 only checks that the group exists.
        unsafe { libc::kill(-self.pgid, 0) == 0 }
    }
}

/// sigterm: SIGTERM alone to the process group, stdin open.
pub fn sigterm_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let mut run = match Run::start(&probe.argv) {
        Ok(run) => run,
        Err(e) => return Ok(rule.not_checked(format!("could not start it again: {e:#}"))),
    };
    // SAFETY: kill(2) of the process group this run started.
    unsafe {
        libc::kill(-run.pgid, libc::SIGTERM);
    }
    let exited = run.wait_exit(TERM_GRACE, &mut Vec::new());
    Ok(match exited {
        None => rule.fail(
            format!(
                "still running {} ms after SIGTERM to its process group, with stdin left open: a host would SIGKILL it",
                TERM_GRACE.as_millis()
            ),
            "exit on SIGTERM at once (the default action does; a handler must end the process), without waiting for stdin to close",
        ),
        Some(_) if run.group_alive() => rule.fail(
            "it exited on SIGTERM, but a process of its group still runs (a child that ignores SIGTERM)",
            "make children exit on SIGTERM too, or end them before exiting",
        ),
        Some(took) => rule.pass(format!(
            "exited {} ms after SIGTERM with stdin open",
            took.as_millis()
        )),
    })
}

/// A tool and arguments for a call in flight at EOF: a non-mutating tool
/// first; a mutating one only with `--allow-mutating`.
fn call_in_flight(probe: &mut Probe) -> Option<(String, Value)> {
    let mut tools = probe.tools.clone();
    tools.sort_by_key(|tool| tool["mutates"].as_bool().unwrap_or(true));
    tools.iter().find_map(|tool| {
        let mutates = tool["mutates"].as_bool().unwrap_or(true);
        if mutates && !probe.allow_mutating {
            return None;
        }
        let name = tool["name"].as_str()?.to_string();
        let args = valid_args(&tool["input_schema"], &mut probe.rng)
            .into_iter()
            .next()?;
        Some((name, args))
    })
}

/// eof: a call in flight, then stdin closed alone; it should answer the
/// call, then exit.
pub fn eof_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let mut run = match Run::start(&probe.argv) {
        Ok(run) => run,
        Err(e) => return Ok(rule.not_checked(format!("could not start it again: {e:#}"))),
    };
    let in_flight = call_in_flight(probe);
    let mut call_id = None;
    if let Some((tool, args)) = &in_flight {
        let params = json!({"tool": tool, "args": args, "revision": probe.revision});
        call_id = Some(run.send("tick/call", params)?);
    }
    drop(run.stdin.take());
    let mut answered = Vec::new();
    let exited = run.wait_exit(EOF_LIMIT, &mut answered);
    let call = in_flight.as_ref().map(|(tool, args)| call_text(tool, args));
    let unanswered = call_id.is_some_and(|id| !answered.contains(&id));
    Ok(match (exited, call) {
        (None, _) => rule.fail(
            format!(
                "still running {} s after stdin closed (no SIGTERM)",
                EOF_LIMIT.as_secs()
            ),
            "on stdin EOF, finish the calls in flight, then exit",
        ),
        (Some(_), Some(call)) if unanswered => rule.fail(
            format!("exited on stdin EOF without answering the call in flight ({call})"),
            "on stdin EOF, finish and answer the calls in flight before exiting",
        ),
        (Some(took), Some(call)) => rule.pass(format!(
            "answered the call in flight ({call}), then exited {} ms after stdin EOF",
            took.as_millis()
        )),
        (Some(took), None) => rule.pass(format!(
            "exited {} ms after stdin EOF (no tool could be called in flight{})",
            took.as_millis(),
            if probe.allow_mutating {
                ""
            } else {
                "; --allow-mutating allows a mutating one"
            }
        )),
    })
}
