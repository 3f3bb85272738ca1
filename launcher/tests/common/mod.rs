//! Test harness: runs a launcher in-process (its own thread and runtime) and
//! talks to its socket as tickhost would, with blocking reads bounded by a
//! timeout. Waiting is always on an event (a line on the socket, the report,
//! a screen that shows something), never a fixed sleep.
#![allow(dead_code)]

use launcher::RunOutcome;
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;
use tickloop_client::framing::read_text_line_blocking;
use tickloop_proto::wire::{
    CallRequest, ClientReply, Envelope, Hello, HelloReply, LauncherMessage, LauncherRequest,
    LauncherStatus, ProgramSpec, Role,
};
use tickloop_proto::wire::{LaunchReport, LaunchSpec};

/// The longest any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

pub fn ticks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ticks")
}

/// The spec's Appendix B note Tick, shared with the end-to-end tests.
pub fn note_tick() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/ticks/note.py")
        .to_string_lossy()
        .into_owned()
}

pub fn python() -> String {
    "python3".to_string()
}

pub struct Launched {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub report: LaunchReport,
    pub outcome: mpsc::Receiver<RunOutcome>,
}

/// The longest line a test reads from a launcher (what tickhost accepts).
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// A spec for a bash of the person's own: `HOME` a fresh folder (returned
/// first, kept while the test runs) whose `.bashrc` sets the prompt to
/// `prompt`, so no rc file of this machine runs and the test can wait for
/// the prompt.
pub fn bash_spec(prompt: &str) -> (tempfile::TempDir, tempfile::TempDir, LaunchSpec) {
    let home = tempfile::tempdir().expect("home");
    let (dir, mut spec) = spec("shell:bash", true, &["bash"]);
    spec.program.env.retain(|(k, _)| k != "HOME" && k != "PS1");
    spec.program
        .env
        .push(("HOME".into(), home.path().to_string_lossy().into_owned()));
    std::fs::write(home.path().join(".bashrc"), format!("PS1='{prompt}'\n")).expect("bashrc");
    (home, dir, spec)
}

/// A spec for `argv`, the test's own environment, a fresh runtime dir.
pub fn spec(instance: &str, shell: bool, argv: &[&str]) -> (tempfile::TempDir, LaunchSpec) {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("l").join("instance.sock");
    let spec = LaunchSpec {
        instance: instance.to_string(),
        program: ProgramSpec {
            shell,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: ticks_dir(),
            env: std::env::vars()
                .filter(|(k, _)| k != "TICKLOOP_INSTANCE_ID")
                .collect(),
            ..ProgramSpec::default()
        },
        socket,
        init_timeout_ms: None,
        call_timeout_ms: None,
    };
    (dir, spec)
}

/// Runs the launcher for `spec` and waits for its report.
pub fn launch(dir: tempfile::TempDir, spec: LaunchSpec) -> Launched {
    launch_in(dir, spec, "launcher-test", || {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    })
}

/// [`launch`] on one thread named `thread`, which runs every task, as the
/// `tickloop __launcher` process runs them.
pub fn launch_on_one_thread(dir: tempfile::TempDir, spec: LaunchSpec, thread: &str) -> Launched {
    launch_in(dir, spec, thread, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    })
}

fn launch_in(
    dir: tempfile::TempDir,
    spec: LaunchSpec,
    thread: &str,
    runtime: impl FnOnce() -> std::io::Result<tokio::runtime::Runtime> + Send + 'static,
) -> Launched {
    let socket = spec.socket.clone();
    let (report_tx, report_rx) = mpsc::channel();
    let (outcome_tx, outcome_rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name(thread.to_string())
        .spawn(move || {
            let runtime = runtime().expect("runtime");
            let report = Box::new(move |report: &LaunchReport| {
                let _ = report_tx.send(report.clone());
            });
            let outcome = runtime
                .block_on(launcher::run(spec, report))
                .expect("the launcher runs");
            let _ = outcome_tx.send(outcome);
            runtime.shutdown_background();
        });
    spawned.expect("the launcher's thread");
    let report = report_rx.recv_timeout(WAIT).expect("a launch report");
    Launched {
        dir,
        socket,
        report,
        outcome: outcome_rx,
    }
}

pub fn launch_tick(instance: &str, argv: &[&str]) -> Launched {
    let (dir, spec) = spec(instance, false, argv);
    launch(dir, spec)
}

/// tickhost's side of a launcher connection.
pub struct Host {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    next_id: u64,
    /// The newest status seen.
    pub status: Option<LauncherStatus>,
    /// The newest catalog seen, and how many catalogs came.
    pub catalog: Option<tickloop_proto::wire::Catalog>,
    pub catalogs_seen: u32,
    /// Replies that arrived while waiting for another one.
    stash: Vec<(u64, ClientReply)>,
}

impl Host {
    pub fn connect(socket: &Path) -> Host {
        let stream = UnixStream::connect(socket).expect("connect to the launcher");
        stream.set_read_timeout(Some(WAIT)).expect("timeout");
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut host = Host {
            stream,
            reader,
            next_id: 1,
            status: None,
            catalog: None,
            catalogs_seen: 0,
            stash: Vec::new(),
        };
        host.send_line(&serde_json::to_string(&Hello::new(Role::Host)).expect("json"));
        let reply: HelloReply =
            serde_json::from_str(&host.read_line().expect("a hello reply")).expect("HelloReply");
        assert_eq!(reply.refused, None);
        host
    }

    pub fn send_line(&mut self, line: &str) {
        self.stream
            .write_all(format!("{line}\n").as_bytes())
            .expect("write to the launcher");
    }

    /// One line, or `None` at EOF.
    pub fn read_line(&mut self) -> Option<String> {
        read_text_line_blocking(&mut self.reader, MAX_LINE)
            .unwrap_or_else(|e| panic!("reading from the launcher: {e}"))
    }

    /// The next message, or `None` at EOF.
    pub fn next_message(&mut self) -> Option<LauncherMessage> {
        let line = self.read_line()?;
        let msg: LauncherMessage = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("a launcher message: {e}: {line}"));
        match &msg {
            LauncherMessage::Status(status) => self.status = Some((**status).clone()),
            LauncherMessage::Catalog(catalog) => {
                self.catalog = Some((**catalog).clone());
                self.catalogs_seen += 1;
            }
            LauncherMessage::Reply(_) => {}
        }
        Some(msg)
    }

    pub fn send(&mut self, request: LauncherRequest) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = serde_json::to_string(&Envelope::new(id, request)).expect("json");
        self.send_line(&line);
        id
    }

    pub fn wait_reply(&mut self, id: u64) -> ClientReply {
        if let Some(pos) = self.stash.iter().position(|(i, _)| *i == id) {
            return self.stash.remove(pos).1;
        }
        loop {
            match self.next_message() {
                Some(LauncherMessage::Reply(reply)) if reply.id == id => return reply.reply,
                Some(LauncherMessage::Reply(reply)) => self.stash.push((reply.id, reply.reply)),
                Some(LauncherMessage::Status(_) | LauncherMessage::Catalog(_)) => {}
                None => panic!("the launcher hung up before answering {id}"),
            }
        }
    }

    pub fn ask(&mut self, request: LauncherRequest) -> ClientReply {
        let id = self.send(request);
        self.wait_reply(id)
    }

    pub fn ok(&mut self, request: LauncherRequest) -> Value {
        match self.ask(request.clone()) {
            ClientReply::Ok(value) => value,
            other => panic!("{request:?} answered {other:?}"),
        }
    }

    /// Calls a tool and returns its result.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let request = LauncherRequest::Call(CallRequest {
            tool: tool.to_string(),
            args,
            revision: "1".to_string(),
        });
        match self.ask(request) {
            ClientReply::Call(tickloop_proto::wire::CallOutcome::Result { result }) => result,
            other => panic!("call {tool} answered {other:?}"),
        }
    }

    /// Reads messages until a status satisfies `pred`.
    pub fn wait_status(&mut self, pred: impl Fn(&LauncherStatus) -> bool) -> LauncherStatus {
        loop {
            if let Some(status) = &self.status {
                if pred(status) {
                    return status.clone();
                }
            }
            match self.next_message() {
                Some(LauncherMessage::Reply(reply)) => self.stash.push((reply.id, reply.reply)),
                Some(LauncherMessage::Status(_) | LauncherMessage::Catalog(_)) => {}
                None => panic!("the launcher hung up; last status {:?}", self.status),
            }
        }
    }

    /// Polls the screen until a line contains `needle` (bounded retries).
    pub fn wait_screen(&mut self, needle: &str) -> Value {
        let mut last = json!(null);
        for _ in 0..600 {
            last = self.ok(LauncherRequest::Screen {
                history: 0,
                image: None,
            });
            let found = last["lines"].as_array().is_some_and(|lines| {
                lines
                    .iter()
                    .any(|l| l.as_str().is_some_and(|l| l.contains(needle)))
            });
            if found {
                return last;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("the screen never showed {needle:?}: {last}");
    }
}

/// Whether `pid` is gone (or a zombie nobody reaps yet, which is dead too).
pub fn pid_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
                .unwrap_or(false)
        })
        .unwrap_or(true)
}

/// Waits (bounded) until `pid` is gone.
pub fn wait_gone(pid: i32) -> bool {
    for _ in 0..600 {
        if pid_gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}
