//! Shared helpers of the end-to-end tests: a private Tickloop host per test.
//!
//! [`Host`] owns a fresh runtime directory (`TICKLOOP_RUNTIME_DIR`, short, in
//! `/tmp` so socket paths stay under 108 bytes) and runs the real `tickloop`
//! binary against it, capturing stdout, stderr and the exit code. Every
//! process it starts carries the marker variable [`MARK_VAR`] (and the
//! runtime directory), which Ticks and their children inherit; on drop the
//! host runs `tickloop shutdown`, then SIGKILLs whatever still carries the
//! marker, so a failing test never leaves processes behind.
//!
//! Waiting is always a bounded poll of a condition ([`wait_for`]); no fixed
//! sleep is used as synchronization and no test asserts on wall-clock time.
#![allow(dead_code)]

pub mod home;
pub mod optional;
pub mod python_sdk;
pub mod raw_view;
pub mod script_term;
pub mod sshd;
pub mod tmpfs;
pub mod tmux;
pub mod web;

use serde_json::Value;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

/// An environment variable (outside the `TICKLOOP_` namespace, so the host
/// passes it on to Ticks) whose value is the test's runtime directory.
pub const MARK_VAR: &str = "TICKLOOP_E2E_TEST_SCOPE_MARK";

/// The variables that make a `tickloop` command an agent's (src/actor.rs):
/// taken out of every command a test runs as the person, so a test run
/// inside an agent host (whose tools carry them) still runs as the person.
pub const AGENT_MARKERS: [&str; 7] = [
    "TICKLOOP_ACTOR",
    "TICKLOOP_AGENT",
    "CLAUDECODE",
    "CODEX_THREAD_ID",
    "GEMINI_CLI",
    "OPENCODE",
    "AI_AGENT",
];

/// `cmd` without [`AGENT_MARKERS`].
pub fn as_the_person(cmd: &mut Command) -> &mut Command {
    for var in AGENT_MARKERS {
        cmd.env_remove(var);
    }
    cmd
}

/// How long a condition may take before a test fails.
pub const WAIT: Duration = Duration::from_secs(20);
/// How often a condition is checked.
pub const POLL: Duration = Duration::from_millis(30);
/// How long one CLI command may run before the test fails (a hung CLI must
/// not hang the suite).
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(90);

/// The `tickloop` executable under test.
pub fn tickloop_bin() -> &'static str {
    env!("CARGO_BIN_EXE_tickloop")
}

/// `tests/ticks/NAME`.
pub fn tick(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/ticks")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Polls `f` every [`POLL`] until it returns `Some`, for at most [`WAIT`].
pub fn wait_for<T>(what: &str, f: impl FnMut() -> Option<T>) -> T {
    wait_for_within(WAIT, what, f)
}

/// Polls `f` every [`POLL`] until it returns `Some`, for at most `limit`.
pub fn wait_for_within<T>(limit: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = f() {
            return v;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {limit:?} waiting for: {what}");
        }
        thread::sleep(POLL);
    }
}

/// Waits until `capture()` (a terminal's screen) shows `text`; returns the
/// screen. On a timeout the panic shows what `terminal` showed last.
pub fn wait_shown(terminal: &str, text: &str, capture: impl Fn() -> String) -> String {
    let last = std::cell::RefCell::new(String::new());
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_for(&format!("{terminal} to show {text:?}"), || {
            let screen = capture();
            let found = screen.contains(text);
            *last.borrow_mut() = screen.clone();
            found.then_some(screen)
        })
    }));
    match waited {
        Ok(screen) => screen,
        Err(_) => panic!(
            "{terminal} never showed {text:?}; it shows:\n{}",
            last.borrow()
        ),
    }
}

/// The outcome of one `tickloop` command.
#[derive(Debug, Clone)]
pub struct Out {
    pub args: Vec<String>,
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// Stdout parsed as one JSON value (panics with the whole outcome when it
    /// is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON value ({e}): {self:#?}"))
    }

    /// Asserts the exit code, showing the whole outcome when it differs.
    pub fn expect(&self, code: i32) -> &Self {
        assert_eq!(
            self.code,
            code,
            "`tickloop {}` exited {} (expected {code})\nstdout: {}\nstderr: {}",
            self.args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        );
        self
    }

    /// Asserts exit 1 with `{"error":{"kind":KIND,"message":...}}` on stdout
    /// and a reason on stderr; returns the error object.
    pub fn expect_error(&self, code: i32, kind: &str) -> Value {
        self.expect(code);
        let v = self.json();
        let err = &v["error"];
        assert_eq!(err["kind"], kind, "error kind of {self:#?}");
        assert!(
            err["message"].as_str().is_some_and(|m| !m.is_empty()),
            "error without a message: {self:#?}"
        );
        assert!(
            !self.stderr.trim().is_empty(),
            "no reason on stderr: {self:#?}"
        );
        err.clone()
    }
}

/// A `tickloop` process left running (a background `call`, a `watch`).
pub struct Running {
    pub args: Vec<String>,
    child: Option<Child>,
    pid: i32,
}

impl Running {
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether the process has not exited yet.
    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Waits (at most [`COMMAND_DEADLINE`]) for it to exit and returns its outcome.
    pub fn finish(mut self) -> Out {
        let child = self.child.take().expect("already finished");
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        collect(&self.args, self.pid, rx)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Runs a prepared command (one of [`Host::command`], changed) to its end,
/// at most [`COMMAND_DEADLINE`].
pub fn run_prepared(mut cmd: Command, args: &[&str]) -> Out {
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("starting {args:?}: {e}"));
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    collect(&args, pid, rx)
}

fn collect(args: &[String], pid: i32, rx: Receiver<std::io::Result<std::process::Output>>) -> Out {
    match rx.recv_timeout(COMMAND_DEADLINE) {
        Ok(Ok(out)) => Out {
            args: args.to_vec(),
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        Ok(Err(e)) => panic!("waiting for `tickloop {}`: {e}", args.join(" ")),
        Err(_) => {
            // SAFETY: kill(2) on a pid we spawned and have not reaped yet.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!(
                "`tickloop {}` did not finish within {COMMAND_DEADLINE:?}",
                args.join(" ")
            )
        }
    }
}

/// A running `tickloop watch`, its stdout lines arriving on a channel.
pub struct Watch {
    child: Child,
    lines: Receiver<String>,
}

impl Watch {
    /// The next stdout line parsed as JSON, waiting at most [`WAIT`].
    pub fn next(&mut self) -> Value {
        match self.lines.recv_timeout(WAIT) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("watch printed a non-JSON line ({e}): {line}")),
            Err(RecvTimeoutError::Timeout) => panic!("watch printed nothing within {WAIT:?}"),
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.child.wait();
                panic!("watch ended its output (status {status:?})")
            }
        }
    }

    /// Whether stdout was closed (the process is ending), waiting at most [`WAIT`].
    pub fn expect_end(&mut self) {
        match self.lines.recv_timeout(WAIT) {
            Err(RecvTimeoutError::Disconnected) => {}
            Ok(line) => panic!("watch printed another line: {line}"),
            Err(RecvTimeoutError::Timeout) => panic!("watch kept running for {WAIT:?}"),
        }
    }

    /// The watch process's id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits (bounded) for the watch process to exit and returns its code.
    pub fn exit_code(&mut self) -> i32 {
        wait_for("watch to exit", || match self.child.try_wait() {
            Ok(Some(status)) => Some(status.code().unwrap_or(-1)),
            _ => None,
        })
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A private Tickloop host: one runtime directory, its tickhost, its Ticks.
pub struct Host {
    runtime: tempfile::TempDir,
    scratch: tempfile::TempDir,
    /// Added to every command's environment ([`Host::with_env`]).
    env: Vec<(String, String)>,
}

impl Default for Host {
    fn default() -> Self {
        Self::new()
    }
}

impl Host {
    pub fn new() -> Host {
        let runtime = tempfile::Builder::new()
            .prefix("tl")
            .tempdir_in("/tmp")
            .expect("runtime dir");
        let scratch = tempfile::Builder::new()
            .prefix("tl-scratch")
            .tempdir_in("/tmp")
            .expect("scratch dir");
        Host {
            runtime,
            scratch,
            env: Vec::new(),
        }
    }

    /// This host with `env` added to every command it runs (a host whose
    /// commands go over ssh: `TICKLOOP_SSH`, `TICKLOOP_HOST`, ...).
    pub fn with_env(mut self, env: Vec<(String, String)>) -> Host {
        self.env = env;
        self
    }

    /// The runtime directory (`TICKLOOP_RUNTIME_DIR`).
    pub fn runtime(&self) -> &Path {
        self.runtime.path()
    }

    /// A directory for the test's own files (Tick logs).
    pub fn scratch(&self) -> &Path {
        self.scratch.path()
    }

    /// A path in the scratch directory, for a Tick's `--log`.
    pub fn log_path(&self, name: &str) -> String {
        self.scratch
            .path()
            .join(format!("{name}.log"))
            .to_string_lossy()
            .into_owned()
    }

    /// Starts this host's tickhost (with `tickloop list`) with `env` added:
    /// the settings tickhost reads once at start, such as
    /// `TICKLOOP_LAUNCHER_TIMEOUT_MS` or `TICKLOOP_INIT_TIMEOUT_MS`.
    pub fn start_tickhost_with(&self, env: &[(&str, &str)]) {
        let started = self
            .command(&["list"])
            .envs(env.iter().copied())
            .output()
            .expect("start tickhost");
        assert!(started.status.success(), "{started:?}");
    }

    /// `tickloop ARGS` with this host's environment, not yet started.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(tickloop_bin());
        as_the_person(&mut cmd)
            .args(args)
            .env("TICKLOOP_RUNTIME_DIR", self.runtime())
            .env(MARK_VAR, self.runtime())
            // The shipped packages install into the data directory: this
            // host's own, not the user's.
            .env("XDG_DATA_HOME", self.scratch().join("data"))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .current_dir(self.scratch())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `tickloop ARGS` (`args`: words as a shell reads them) in a terminal
    /// of its own (`script`), as the person runs it, with this host's
    /// environment; not yet started.
    pub fn in_a_terminal(&self, args: &str) -> Command {
        let line = format!("{} {args}", tickloop_bin());
        let mut cmd = Command::new("script");
        as_the_person(&mut cmd)
            .args(["-qefc", &line, "/dev/null"])
            .envs(
                self.command(&[])
                    .get_envs()
                    .filter_map(|(k, v)| Some((k, v?))),
            )
            .current_dir(self.scratch())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Runs `tickloop ARGS` to its end (at most [`COMMAND_DEADLINE`]).
    pub fn run(&self, args: &[&str]) -> Out {
        self.spawn(args).finish()
    }

    /// Runs `tickloop ARGS`, asserts exit 0 and returns its JSON.
    pub fn ok(&self, args: &[&str]) -> Value {
        self.run(args).expect(0).json()
    }

    /// Starts `tickloop ARGS` in the background.
    pub fn spawn(&self, args: &[&str]) -> Running {
        self.spawn_with(&[], args)
    }

    /// Starts `tickloop ARGS` in the background with `env` added (an agent
    /// host's markers, for one).
    pub fn spawn_with(&self, env: &[(&str, &str)], args: &[&str]) -> Running {
        let child = self
            .command(args)
            .envs(env.iter().copied())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", tickloop_bin()));
        let pid = child.id() as i32;
        Running {
            args: args.iter().map(|s| s.to_string()).collect(),
            child: Some(child),
            pid,
        }
    }

    /// Starts `tickloop watch ARGS`, reading its stdout line by line.
    pub fn watch(&self, args: &[&str]) -> Watch {
        let mut full = vec!["watch"];
        full.extend_from_slice(args);
        let mut child = self.command(&full).spawn().expect("starting watch");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if line.trim().is_empty() {
                    continue;
                }
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watch { child, lines: rx }
    }

    /// `tickloop open --id ID -- PROGRAM ARGS...`, asserting success.
    pub fn open(&self, id: &str, program: &str, args: &[&str]) -> Value {
        let mut full = vec!["open", "--id", id, "--", program];
        full.extend_from_slice(args);
        self.ok(&full)
    }

    /// `tickloop open --shell --id NAME -- sh -c SCRIPT`, then waits until
    /// its screen shows `shown`; returns the id (`shell:NAME`).
    pub fn open_sh(&self, name: &str, script: &str, shown: &str) -> String {
        self.ok(&["open", "--shell", "--id", name, "--", "sh", "-c", script]);
        let id = format!("shell:{name}");
        self.wait_screen(&id, shown);
        id
    }

    /// Opens `counter.py --log LOG` as `hosted:ID`; returns the open JSON.
    pub fn open_counter(&self, id: &str) -> Value {
        let log = self.log_path(id);
        self.open(id, &tick("counter.py"), &["--log", &log])
    }

    /// Opens `counter.py --log LOG` as `hosted:ID` with approval policy
    /// `ask`: its mutating calls wait for a person.
    pub fn open_asking_counter(&self, id: &str) -> Value {
        let log = self.log_path(id);
        self.ok(&[
            "open",
            "--id",
            id,
            "--approve",
            "ask",
            "--",
            &tick("counter.py"),
            "--log",
            &log,
        ])
    }

    /// `tickloop open --shell --id NAME -- bash --norc --noprofile`: a
    /// person's shell; returns its id (`shell:NAME`).
    pub fn open_bash(&self, name: &str) -> String {
        self.ok(&[
            "open",
            "--shell",
            "--id",
            name,
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ]);
        format!("shell:{name}")
    }

    /// [`Host::open_bash`] whose agents' typing and `run` the person lets
    /// through (`--agent-input auto`); returns its id.
    pub fn open_bash_agents_type_in(&self, name: &str) -> String {
        self.ok(&[
            "open",
            "--shell",
            "--id",
            name,
            "--agent-input",
            "auto",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ]);
        format!("shell:{name}")
    }

    /// Opens `bad.py MODE --log LOG` as `hosted:ID`; returns the open JSON.
    pub fn open_bad(&self, id: &str, mode: &str) -> Value {
        let log = self.log_path(id);
        self.open(id, &tick("bad.py"), &[mode, "--log", &log])
    }

    /// The first action waiting for the person now (`tickloop approvals`),
    /// waited for at most `limit`.
    pub fn the_waiting_one(&self, limit: Duration) -> Value {
        wait_for_within(limit, "an action to wait for the person", || {
            let out = self.run(&["approvals"]);
            out.expect(0);
            out.stdout
                .lines()
                .find(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str::<Value>(l).expect("an approvals line"))
        })
    }

    /// `tickloop list` as an array.
    pub fn list(&self) -> Vec<Value> {
        match self.ok(&["list"]) {
            Value::Array(items) => items,
            other => panic!("list printed a non-array: {other}"),
        }
    }

    /// The `list` entry of `id`, if listed.
    pub fn entry(&self, id: &str) -> Option<Value> {
        self.list().into_iter().find(|e| e["id"] == id)
    }

    /// Waits until `list` shows `id` ended; returns its `ended` object.
    pub fn wait_ended(&self, id: &str) -> Value {
        wait_for(&format!("{id} to be listed as ended"), || {
            let e = self.entry(id)?;
            (e["state"] == "ended").then(|| e["ended"].clone())
        })
    }

    /// `id`'s consent entries in its activity, in order.
    pub fn consent_entries(&self, id: &str) -> Vec<Value> {
        let activity = self.ok(&["activity", id]);
        let entries = activity["entries"].as_array().expect("entries");
        entries
            .iter()
            .filter(|e| e["type"] == "consent")
            .cloned()
            .collect()
    }

    /// `id`'s consent decisions in its activity, in order: (decision, by).
    pub fn decisions(&self, id: &str) -> Vec<(String, String)> {
        let text = |e: &Value, k: &str| e[k].as_str().unwrap_or("").to_string();
        self.consent_entries(id)
            .iter()
            .map(|e| (text(e, "decision"), text(e, "by")))
            .collect()
    }

    /// `tickloop screen ID` as text (asserting exit 0).
    pub fn screen(&self, id: &str) -> String {
        self.run(&["screen", id]).expect(0).stdout.clone()
    }

    /// Waits until the screen of `id` contains `text`; returns the screen.
    pub fn wait_screen(&self, id: &str, text: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let out = self.run(&["screen", id]);
            if out.code == 0 && out.stdout.contains(text) {
                return out.stdout;
            }
            if Instant::now() >= deadline {
                panic!(
                    "screen of {id} never showed {text:?} within {WAIT:?}; last `screen` \
                     (exit {}):\n{}\nstderr: {}",
                    out.code, out.stdout, out.stderr
                );
            }
            thread::sleep(POLL);
        }
    }

    /// `tickloop read ID` (asserting exit 0).
    pub fn read(&self, id: &str) -> Value {
        self.ok(&["read", id])
    }

    /// Waits until `read ID` shows `data.value == value`; returns the read.
    pub fn wait_value(&self, id: &str, value: i64) -> Value {
        wait_for(&format!("{id} to read value {value}"), || {
            let r = self.read(id);
            (r["data"]["value"] == value).then_some(r)
        })
    }

    /// The pid in `RUNTIME/tickhost.pid`, when the file holds one.
    pub fn tickhost_pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.runtime().join("tickhost.pid")).ok()?;
        text.split_whitespace().next()?.parse().ok()
    }

    /// Live processes (zombies excluded) carrying this host's marker or runtime dir.
    pub fn marked_pids(&self) -> BTreeSet<i32> {
        let mark = format!("{MARK_VAR}={}", self.runtime().display());
        let dir = format!("TICKLOOP_RUNTIME_DIR={}", self.runtime().display());
        let mut found = BTreeSet::new();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return found;
        };
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<i32>().ok())
            else {
                continue;
            };
            let Ok(env) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let hit = env
                .split(|b| *b == 0)
                .any(|var| var == mark.as_bytes() || var == dir.as_bytes());
            if hit && alive(pid) {
                found.insert(pid);
            }
        }
        found
    }

    /// Waits until no process of this host is left except tickhost and
    /// the one launcher it keeps started for the next open.
    pub fn wait_nothing_left_but_tickhost(&self) {
        let mut last = BTreeSet::new();
        wait_for_within(WAIT, "only tickhost left running", || {
            let mut pids = self.marked_pids();
            if let Some(th) = self.tickhost_pid() {
                pids.remove(&th);
            }
            let spares = self.spare_launchers();
            if spares.len() == 1 {
                pids.retain(|pid| !spares.contains(pid));
            }
            last = pids.clone();
            pids.is_empty().then_some(())
        });
        assert!(last.is_empty(), "left running: {}", describe_pids(&last));
    }

    /// Waits until no process of this host is left at all.
    pub fn wait_nothing_left(&self) {
        let mut last = BTreeSet::new();
        wait_for_within(WAIT, "nothing of this host left running", || {
            last = self.marked_pids();
            last.is_empty().then_some(())
        });
        assert!(last.is_empty(), "left running: {}", describe_pids(&last));
    }

    /// The launchers tickhost started ahead of an open that have no
    /// instance yet: `tickloop __launcher` children of tickhost that hold no
    /// terminal (every instance's launcher holds its PTY's `/dev/ptmx`).
    pub fn spare_launchers(&self) -> BTreeSet<i32> {
        use tickloop_client::process::{Live, Processes};
        use tickloop_client::runtime_procs::{plays, Role};
        let Some(tickhost) = self.tickhost_pid() else {
            return BTreeSet::new();
        };
        self.marked_pids()
            .into_iter()
            .filter(|&pid| {
                let launcher = plays(pid as u32, self.runtime(), Role::Launcher);
                let parent = Live.proc(pid as u32).map(|p| p.ppid as i32);
                let holds_terminal = std::fs::read_dir(format!("/proc/{pid}/fd"))
                    .map(|fds| {
                        fds.flatten().any(|fd| {
                            std::fs::read_link(fd.path())
                                .is_ok_and(|to| to == Path::new("/dev/ptmx"))
                        })
                    })
                    .unwrap_or(true);
                launcher && parent == Some(tickhost) && !holds_terminal
            })
            .collect()
    }

    /// How many `tick/call`s of `tool` the Tick logged (its `--log` file).
    pub fn logged_calls(&self, id: &str, tool: &str) -> usize {
        logged_requests(&self.log_path(id))
            .iter()
            .filter(|r| r["method"] == "tick/call" && r["params"]["tool"] == tool)
            .count()
    }

    /// How many `tick/call`s the Tick logged, whatever the tool.
    pub fn logged_call_count(&self, id: &str) -> usize {
        logged_requests(&self.log_path(id))
            .iter()
            .filter(|r| r["method"] == "tick/call")
            .count()
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // Best effort: a clean shutdown, then SIGKILL whatever is left.
        if let Ok(mut child) = self.command(&["shutdown"]).spawn() {
            let deadline = Instant::now() + Duration::from_secs(15);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) | Err(_) => break,
                    Ok(None) if Instant::now() >= deadline => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                    Ok(None) => thread::sleep(POLL),
                }
            }
        }
        for _ in 0..3 {
            let pids = self.marked_pids();
            if pids.is_empty() {
                break;
            }
            for pid in pids {
                // SAFETY: kill(2) of a process started by this test (it
                // carries this test's private runtime directory).
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The request lines a Tick appended to its `--log` file, parsed.
pub fn logged_requests(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Whether `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    // The state follows the command name, which is in parentheses.
    match stat.rfind(')') {
        Some(i) => !stat[i + 1..].trim_start().starts_with(['Z', 'X']),
        None => true,
    }
}

/// Waits until `pid` no longer runs (gone or a zombie).
pub fn wait_gone(pid: i32, what: &str) {
    wait_for(&format!("{what} (pid {pid}) to be gone"), || {
        (!alive(pid)).then_some(())
    });
}

/// `pid: cmdline` for each pid, for failure messages.
pub fn describe_pids(pids: &BTreeSet<i32>) -> String {
    pids.iter()
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
                .unwrap_or_default();
            format!("{pid}: {cmd}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// A JSON value as an i64, panicking with context otherwise.
pub fn int(v: &Value, what: &str) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("{what} is not an integer: {v}"))
}

/// The encoded size of a JSON value, as serde_json writes it.
pub fn encoded_len(v: &Value) -> usize {
    serde_json::to_string(v).unwrap().len()
}
