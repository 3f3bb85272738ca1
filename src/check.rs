//! `tickloop check -- PROGRAM [ARGS]`: a conformance run of one Tick as the
//! host sees it (issue 18, part 1).
//!
//! It starts a private tickhost in a fresh temporary runtime directory (so
//! nothing touches the user's instances), opens PROGRAM there exactly as
//! `tickloop open` does (PTY, pipes, the caller's environment), drives it
//! through [`tickloop_client::Client`] — describe, read, call, list, close —
//! plus a view connection of its own on the launcher's socket (the attach
//! protocol) to resize the PTY, and shuts that tickhost down (also when
//! interrupted). Each rule gives PASS, FAIL (the spec
//! section, what was seen, a one-line fix) or NOT CHECKED (why). Calls to
//! `mutates: true` tools are made only with `--allow-mutating`; calls the
//! host refuses before writing them to the Tick (unknown tool, bad args, a
//! stale revision) are safe to make on any tool, and are made on a
//! non-mutating one when there is one.
//!
//! Timing thresholds (read promptness 2 s, the 2 s SIGTERM grace, a 1 s
//! window around the resize, 5 s for an ended session to be listed) are the
//! rules' own and generous; tests assert verdicts, never durations.

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tickloop_client::Client;
use tickloop_proto::wire::{
    ApprovalPolicy, CallOutcome, ClientKind, ClientReply, ClientRequest, EndClass, OpenRequest,
};

/// A read slower than this (host overhead included) fails read promptness
/// (spec 4.4: SHOULD answer within a few milliseconds; 4.2: MUST within 10 s).
const READ_PROMPT: Duration = Duration::from_secs(2);
/// The delivery budget of one subscription delivery (spec 6.4, spec-gaps).
const DELIVERY_BUDGET: usize = 16 * 1024;
/// Typical state should fit in about this much (spec 6.4).
const TYPICAL_STATE: usize = 4 * 1024;
/// Requests a Tick must accept in flight at once (spec 3.3).
const IN_FLIGHT: usize = 8;
/// How long an ended session may take to show as ended in `list`.
const END_VISIBLE: Duration = Duration::from_secs(5);
/// How long updates are counted before and after a resize.
const RESIZE_WINDOW: Duration = Duration::from_secs(1);
/// The tool name no Tick declares.
const NO_SUCH_TOOL: &str = "__tickloop_check_no_such_tool";

/// What `tickloop check` was asked.
pub struct Options {
    pub json: bool,
    pub allow_mutating: bool,
    pub argv: Vec<String>,
}

#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum Verdict {
    Pass,
    Fail,
    NotChecked,
}

/// One rule's result: one line of output.
#[derive(Serialize, Debug)]
struct Finding {
    rule: &'static str,
    section: &'static str,
    result: Verdict,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn pass(rule: &'static str, section: &'static str, detail: impl Into<String>) -> Finding {
    Finding {
        rule,
        section,
        result: Verdict::Pass,
        detail: detail.into(),
        fix: None,
    }
}

fn fail(
    rule: &'static str,
    section: &'static str,
    detail: impl Into<String>,
    fix: impl Into<String>,
) -> Finding {
    Finding {
        rule,
        section,
        result: Verdict::Fail,
        detail: detail.into(),
        fix: Some(fix.into()),
    }
}

fn not_checked(rule: &'static str, section: &'static str, why: impl Into<String>) -> Finding {
    Finding {
        rule,
        section,
        result: Verdict::NotChecked,
        detail: why.into(),
        fix: None,
    }
}

/// One rule: its name and spec section (as reported) and the function that
/// checks it on the opened Tick.
struct Rule {
    name: &'static str,
    section: &'static str,
    check: fn(&Rule, &mut Probe) -> Result<Finding>,
}

impl Rule {
    fn pass(&self, detail: impl Into<String>) -> Finding {
        pass(self.name, self.section, detail)
    }

    fn fail(&self, detail: impl Into<String>, fix: impl Into<String>) -> Finding {
        fail(self.name, self.section, detail, fix)
    }

    fn not_checked(&self, why: impl Into<String>) -> Finding {
        not_checked(self.name, self.section, why)
    }
}

/// Every rule, in the order they run (each may use what the earlier ones
/// learnt, and calls change the Tick's state); `describe` is first: when
/// the Tick does not initialize, the others are not checked.
const RULES: &[Rule] = &[
    rule("describe", "4.2, 5.3", describe_rule),
    rule("recover_with", "9", recover_with_rule),
    rule("read_prompt", "4.4", read_prompt_rule),
    rule("state_size", "6.4", state_size_rule),
    rule("in_flight", "3.3", in_flight_rule),
    rule("unknown_tool", "7.2", unknown_tool_rule),
    rule("bad_args", "7.2", bad_args_rule),
    rule("stale_revision", "5.5, 7.2", stale_revision_rule),
    rule("calls", "7.2, 7.3", calls_rule),
    rule("no_update_on_resize", "4.1, 8.3", resize_rule),
    rule("session", "3.6", session_rule),
    rule("seq", "6.3", seq_rule),
    rule("close", "4.5", close_rule),
];

const fn rule(
    name: &'static str,
    section: &'static str,
    check: fn(&Rule, &mut Probe) -> Result<Finding>,
) -> Rule {
    Rule {
        name,
        section,
        check,
    }
}

/// The order the findings are reported in.
const REPORTED: &[&str] = &[
    "describe",
    "recover_with",
    "read_prompt",
    "state_size",
    "in_flight",
    "unknown_tool",
    "bad_args",
    "stale_revision",
    "calls",
    "seq",
    "no_update_on_resize",
    "session",
    "close",
];

/// The private tickhost: shut down and its directory removed on drop.
struct PrivateHost {
    dir: PathBuf,
}

impl Drop for PrivateHost {
    fn drop(&mut self) {
        if let Ok(mut client) = Client::connect(&self.dir, ClientKind::Cli) {
            let _ = client.request(ClientRequest::Shutdown);
        }
        // A launcher still starting when tickhost shut down outlives it (as
        // launchers do); SIGTERM makes it end its Tick and exit.
        terminate_private_processes(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// SIGTERMs every process of this user whose environment names `dir` as
/// its `TICKLOOP_RUNTIME_DIR`: only the private tickhost and its launchers
/// (Ticks do not get `TICKLOOP_` variables), since `dir` is unique.
fn terminate_private_processes(dir: &Path) {
    let wanted = format!("TICKLOOP_RUNTIME_DIR={}", dir.display()).into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid == std::process::id() as libc::pid_t {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_slice())
        {
            // SAFETY: kill(2) of a process of this check's own private runtime.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
}

/// The write end of the pipe the interrupt handler writes to (-1: none).
static INTERRUPT_PIPE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// On SIGINT, SIGTERM or SIGHUP, shuts the private tickhost down (closing
/// the Tick) and removes its directory before exiting 130, so an
/// interrupted check leaves nothing behind. The handler only writes a byte
/// to a pipe; a thread does the rest.
fn clean_up_on_interrupt(dir: PathBuf) {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    extern "C" fn on_signal(_: libc::c_int) {
        let fd = INTERRUPT_PIPE.load(std::sync::atomic::Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: write is async-signal-safe; the buffer is a static byte.
            unsafe {
                libc::write(fd, b"x".as_ptr().cast(), 1);
            }
        }
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe fills the two-element array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    INTERRUPT_PIPE.store(fds[1], std::sync::atomic::Ordering::SeqCst);
    // SAFETY: fds[0] is the read end just created, owned by this File alone.
    let mut read_end = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        if read_end.read_exact(&mut byte).is_ok() {
            drop(PrivateHost { dir });
            eprintln!("tickloop: check interrupted; its private tickhost was shut down");
            std::process::exit(130);
        }
    });
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only calls an async-signal-safe function.
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Runs the check; the exit code is 1 when a rule failed.
pub fn run(exe: &Path, options: Options) -> Result<i32> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // Short and in /tmp: socket paths must stay under 108 bytes.
    let dir = PathBuf::from("/tmp").join(format!("tlcheck-{}-{nanos:x}", std::process::id()));
    tickloop_client::paths::RuntimeDir::ensure(&dir)
        .with_context(|| format!("cannot make the private runtime {}", dir.display()))?;
    let host = PrivateHost { dir };
    clean_up_on_interrupt(host.dir.clone());
    let findings = run_rules(exe, &host.dir, &options)?;
    drop(host);
    let mut failed = false;
    for finding in &findings {
        failed |= finding.result == Verdict::Fail;
        if options.json {
            let line = serde_json::to_string(finding).context("cannot encode a finding")?;
            println!("{line}");
        } else {
            println!("{}", text_line(finding));
        }
    }
    if !options.json {
        let count = |v| findings.iter().filter(|f| f.result == v).count();
        println!(
            "{} passed, {} failed, {} not checked",
            count(Verdict::Pass),
            count(Verdict::Fail),
            count(Verdict::NotChecked)
        );
    }
    Ok(if failed { 1 } else { 0 })
}

fn text_line(f: &Finding) -> String {
    let verdict = match f.result {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::NotChecked => "NOT CHECKED",
    };
    let mut line = format!(
        "{verdict:<12}{:<20}(spec {}) {}",
        f.rule, f.section, f.detail
    );
    if let Some(fix) = &f.fix {
        line.push_str(&format!("\n{:32}fix: {fix}", ""));
    }
    line
}

/// A connection to the private tickhost.
fn client(dir: &Path) -> Result<Client> {
    Client::connect(dir, ClientKind::Cli).context("cannot reach the private tickhost")
}

/// A request whose success is a value; `Err(text)` for a refusal.
fn ask(dir: &Path, request: ClientRequest) -> Result<std::result::Result<Value, String>> {
    match client(dir)?
        .request(request)
        .context("the private tickhost")?
    {
        ClientReply::Ok(value) => Ok(Ok(value)),
        ClientReply::Error(e) => Ok(Err(e.message)),
        ClientReply::Call(outcome) => Ok(Err(format!("unexpected call outcome {outcome:?}"))),
    }
}

fn call(
    dir: &Path,
    instance: &str,
    tool: &str,
    args: Value,
    revision: &str,
) -> Result<CallOutcome> {
    let request = ClientRequest::Call {
        instance: instance.to_string(),
        tool: tool.to_string(),
        args,
        revision: revision.to_string(),
    };
    // Sent, then no reply from tickhost: the outcome is unknown, as for
    // `tickloop call`.
    let reply = match client(dir)?.request(request) {
        Ok(reply) => reply,
        Err(e) => {
            return Ok(CallOutcome::Unknown {
                reason: format!("tickhost: {e}"),
            })
        }
    };
    Ok(match reply {
        ClientReply::Call(outcome) => outcome,
        ClientReply::Ok(result) => CallOutcome::Result { result },
        ClientReply::Error(e) => CallOutcome::Unknown { reason: e.message },
    })
}

/// The instance's `list` entry.
fn entry(dir: &Path, instance: &str) -> Result<Option<Value>> {
    let list = match ask(dir, ClientRequest::List)? {
        Ok(list) => list,
        Err(_) => return Ok(None),
    };
    Ok(list
        .as_array()
        .and_then(|all| all.iter().find(|e| e["id"] == instance).cloned()))
}

/// Polls `list` until the instance is ended, for at most `limit`.
fn wait_ended(dir: &Path, instance: &str, limit: Duration) -> Result<bool> {
    let deadline = Instant::now() + limit;
    loop {
        if entry(dir, instance)?.is_some_and(|e| e["state"] == "ended") {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `list`'s update count of the instance (`None` when it is not listed).
fn updates(dir: &Path, instance: &str) -> Result<Option<u64>> {
    Ok(entry(dir, instance)?.and_then(|e| e["updates"].as_u64()))
}

/// No update on a resize (4.1, 8.3): the updates counted over a quiet
/// window, then over the same window after the PTY was resized twice by a
/// view of the check's own on the launcher's socket (the attach protocol;
/// the PTY follows the latest view).
fn resize_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let (dir, instance) = (probe.dir.as_path(), probe.instance.as_str());
    let Some(start) = updates(dir, instance)? else {
        return Ok(rule.not_checked("the instance is not listed"));
    };
    std::thread::sleep(RESIZE_WINDOW);
    let Some(quiet) = updates(dir, instance)? else {
        return Ok(rule.not_checked("the instance is not listed"));
    };
    if quiet != start {
        return Ok(rule.not_checked(
            format!(
                "the Tick sent {} updates in {} ms with nothing happening, so updates after a resize would prove nothing",
                quiet - start,
                RESIZE_WINDOW.as_millis()
            ),
        ));
    }
    let sizes = match resize_pty(dir, instance) {
        Ok(sizes) => sizes,
        Err(e) => {
            return Ok(rule.not_checked(format!("could not resize the PTY through a view: {e:#}")))
        }
    };
    std::thread::sleep(RESIZE_WINDOW);
    let Some(after) = updates(dir, instance)? else {
        return Ok(rule.not_checked("the instance is not listed"));
    };
    Ok(if after > quiet {
        rule.fail(
            format!(
                "{} update(s) within {} ms of resizing the PTY ({sizes}), none in the same time before",
                after - quiet,
                RESIZE_WINDOW.as_millis()
            ),
            "send tick/update only when the state changes, never on SIGWINCH or a repaint",
        )
    } else {
        rule.pass(format!("no update after resizing the PTY ({sizes})"))
    })
}

/// Attaches as a view at another size, then resizes once more; returns the
/// sizes the PTY took. The view hangs up at the end (a detach).
fn resize_pty(dir: &Path, instance: &str) -> Result<String> {
    use std::io::{BufRead, BufReader};
    use tickloop_proto::attach::{TermCaps, ToView, ViewEvent, ViewHello};
    use tickloop_proto::wire::{Hello, HelloReply, Role};
    let (kind, name) =
        tickloop_client::paths::parse_id(instance).context("the instance id is not kind:name")?;
    let socket = tickloop_client::paths::RuntimeDir::at(dir)
        .instance_files(kind, name)
        .context("the launcher's socket")?
        .socket;
    let stream = std::os::unix::net::UnixStream::connect(&socket)
        .with_context(|| format!("cannot connect to {}", socket.display()))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .context("socket timeout")?;
    let mut writer = stream.try_clone().context("socket")?;
    let mut reader = BufReader::new(stream);
    send_line(&mut writer, &Hello::new(Role::View))?;
    let mut line = String::new();
    reader
        .read_line(&mut line)
        .context("the launcher's hello")?;
    let reply: HelloReply = serde_json::from_str(&line).context("the launcher's hello")?;
    if let Some(refused) = reply.refused {
        anyhow::bail!("the launcher refused the view: {refused}");
    }
    let next_size = |reader: &mut BufReader<std::os::unix::net::UnixStream>| -> Result<(u16, u16)> {
        loop {
            let mut line = String::new();
            if reader
                .read_line(&mut line)
                .context("the launcher's frames")?
                == 0
            {
                anyhow::bail!("the launcher hung up");
            }
            match serde_json::from_str::<ToView>(&line) {
                Ok(ToView::Snapshot(s)) => return Ok((s.cols, s.rows)),
                Ok(ToView::Ended { reason }) => anyhow::bail!("the session ended: {reason}"),
                _ => continue,
            }
        }
    };
    send_line(
        &mut writer,
        &ViewHello {
            cols: 100,
            rows: 40,
            term: TermCaps::default(),
            client: Some("check".into()),
        },
    )?;
    let first = next_size(&mut reader)?;
    send_line(&mut writer, &ViewEvent::Resize { cols: 90, rows: 35 })?;
    let mut second = next_size(&mut reader)?;
    // A snapshot at the old size may come first.
    while second == first {
        second = next_size(&mut reader)?;
    }
    Ok(format!(
        "from {}x{} to {}x{}",
        first.0, first.1, second.0, second.1
    ))
}

/// Writes `value` as one JSON line.
fn send_line<T: Serialize>(writer: &mut impl std::io::Write, value: &T) -> Result<()> {
    let mut line = serde_json::to_vec(value).context("cannot encode a view message")?;
    line.push(b'\n');
    writer
        .write_all(&line)
        .context("cannot write to the launcher")
}

fn outcome_text(outcome: &CallOutcome) -> String {
    match outcome {
        CallOutcome::Result { .. } => "a result (executed)".into(),
        CallOutcome::NotExecuted { error } => {
            format!("not executed, {} {}", error.code, error.message)
        }
        CallOutcome::Executed { error } => {
            format!("executed with error {} {}", error.code, error.message)
        }
        CallOutcome::Unknown { reason } => format!("unknown outcome ({reason})"),
    }
}

/// A tool to make refused calls on: a non-mutating one, else (only with
/// `--allow-mutating`) a mutating one. `pred` picks among them.
fn pick_tool(
    tools: &[Value],
    allow_mutating: bool,
    pred: impl Fn(&Value) -> bool,
) -> Option<&Value> {
    let mutates = |t: &Value| t["mutates"].as_bool().unwrap_or(true);
    tools.iter().find(|t| !mutates(t) && pred(t)).or_else(|| {
        allow_mutating
            .then(|| tools.iter().find(|t| mutates(t) && pred(t)))
            .flatten()
    })
}

/// Arguments that violate `schema` for sure, when the schema says enough.
fn violating_args(schema: &Value) -> Option<Value> {
    if schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty())
    {
        return Some(json!({}));
    }
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        return Some(json!({"__tickloop_check_unexpected": 1}));
    }
    let properties = schema.get("properties")?.as_object()?;
    for (name, property) in properties {
        let wrong = match property.get("type").and_then(Value::as_str) {
            Some("string") => json!(12),
            Some("integer") | Some("number") | Some("boolean") | Some("array") | Some("object")
            | Some("null") => json!("not the declared type"),
            _ => continue,
        };
        return Some(json!({ name: wrong }));
    }
    None
}

/// Opens the Tick in the private tickhost of `dir` and runs every rule on
/// it; the findings in the order they are reported.
fn run_rules(exe: &Path, dir: &Path, options: &Options) -> Result<Vec<Finding>> {
    let mut found = match Probe::open(exe, dir, options)? {
        Ok(mut probe) => RULES
            .iter()
            .map(|rule| (rule.check)(rule, &mut probe))
            .collect::<Result<Vec<_>>>()?,
        Err(failed) => std::iter::once(failed)
            .chain(
                RULES[1..]
                    .iter()
                    .map(|rule| rule.not_checked("the Tick did not initialize")),
            )
            .collect(),
    };
    found.sort_by_key(|f| REPORTED.iter().position(|rule| *rule == f.rule));
    Ok(found)
}

/// The Tick under check, and what the rules learnt of it so far.
struct Probe {
    /// The private runtime directory.
    dir: PathBuf,
    allow_mutating: bool,
    instance: String,
    /// How long open took (describe and the first read).
    init_time: Duration,
    descriptor: Value,
    tools: Vec<Value>,
    revision: String,
    /// Every sequential read's seq, with when it was made.
    seqs: Vec<(String, u64)>,
    /// The first read's state, and how long it took.
    first_read: Option<Value>,
    /// The `ended` of the instance's list entry when the session rule
    /// looked (`None`: still running).
    ended: Option<Value>,
    /// The host ended the session for a seq violation: what it said.
    seq_violation: Option<String>,
}

impl Probe {
    /// Starts the private tickhost and opens the Tick there as `tickloop
    /// open` would; `Err(finding)`: the describe rule's failure (it did
    /// not initialize).
    fn open(
        exe: &Path,
        dir: &Path,
        options: &Options,
    ) -> Result<std::result::Result<Probe, Finding>> {
        let here = std::env::current_dir().context("cannot read the current directory")?;
        Client::connect_or_start(dir, exe, ClientKind::Cli)
            .context("cannot start the private tickhost")?;
        let open = ClientRequest::Open(OpenRequest {
            name: Some("check".into()),
            shell: false,
            argv: options.argv.clone(),
            cwd: here,
            env: tickloop_client::caller_env(),
            history: None,
            approve: Some(ApprovalPolicy::Auto),
            record: None,
            artifact: None,
            watch: Vec::new(),
        });
        let started = Instant::now();
        let opened = client(dir)?.request(open).context("the private tickhost")?;
        let instance = match opened {
            ClientReply::Ok(value) => value["id"].as_str().unwrap_or("hosted:check").to_string(),
            ClientReply::Error(e) => return Ok(Err(initialization_failed(e))),
            ClientReply::Call(_) => anyhow::bail!("tickhost answered open with a call outcome"),
        };
        let init_time = started.elapsed();
        let describe = ClientRequest::Describe {
            instance: instance.clone(),
        };
        let descriptor = match ask(dir, describe)? {
            Ok(d) => d,
            Err(e) => anyhow::bail!("the opened instance has no descriptor: {e}"),
        };
        let tools: Vec<Value> = descriptor["tools"].as_array().cloned().unwrap_or_default();
        let revision = descriptor["revision"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Ok(Ok(Probe {
            dir: dir.to_path_buf(),
            allow_mutating: options.allow_mutating,
            instance,
            init_time,
            descriptor,
            tools,
            revision,
            seqs: Vec::new(),
            first_read: None,
            ended: None,
            seq_violation: None,
        }))
    }

    /// A `tick/read`, its seq noted as `when`; `None` without a valid
    /// answer.
    fn read(&mut self, when: &str) -> Result<Option<Value>> {
        let request = ClientRequest::Read {
            instance: self.instance.clone(),
        };
        let value = ask(&self.dir, request)?.ok();
        if let Some(seq) = value.as_ref().and_then(|v| v["seq"].as_u64()) {
            self.seqs.push((when.to_string(), seq));
        }
        Ok(value)
    }

    /// A call of `tool`, with a read before and after it: its outcome and
    /// what happened to the state meanwhile.
    fn call_between_reads(
        &mut self,
        label: &str,
        tool: &str,
        args: Value,
        revision: &str,
    ) -> Result<(CallOutcome, String)> {
        let before = self.read(&format!("before {label}"))?;
        let outcome = call(&self.dir, &self.instance, tool, args, revision)?;
        let after = self.read(&format!("after {label}"))?;
        let effect = match (before, after) {
            (Some(b), Some(a)) if b["data"] == a["data"] => "state unchanged".to_string(),
            (Some(b), Some(a)) => format!(
                "state changed during the call (seq {} -> {}); the host refused the call before the Tick saw it, so that is the Tick's own activity",
                b["seq"], a["seq"]
            ),
            _ => "state not readable around the call".to_string(),
        };
        Ok((outcome, effect))
    }
}

/// The describe rule's failure when open was refused: any failure fails
/// initialization (spec 4.2); the fix follows the reason.
fn initialization_failed(e: tickloop_proto::wire::ClientError) -> Finding {
    let screen = e
        .data
        .as_ref()
        .and_then(|d| d.get("screen"))
        .map(|s| format!("; its screen began: {s}"))
        .unwrap_or_default();
    let fix = if e.message.contains("recover_with") {
        "make recover_with name a tool with mutates: false, or leave it out"
    } else if e.message.contains("protocol version") {
        "answer tick/describe with \"protocol\": 3"
    } else if e.message.contains("non-protocol output") {
        "write only protocol lines on stdout: logs and debug output go to stderr"
    } else {
        "answer tick/describe and the first tick/read within 10 s, with a descriptor valid by 5.3"
    };
    fail(
        "describe",
        "4.2, 5.3",
        format!("initialization failed: {}{screen}", e.message),
        fix,
    )
}

/// describe: it initialized, with a valid descriptor.
fn describe_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    Ok(rule.pass(format!(
        "initialized in {} ms; descriptor valid (kind {}, revision {:?}, {} tools)",
        probe.init_time.as_millis(),
        probe.descriptor["kind"],
        probe.revision,
        probe.tools.len()
    )))
}

/// recover_with: none, or a declared tool that does not mutate.
fn recover_with_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let Some(name) = probe.descriptor.get("recover_with").and_then(Value::as_str) else {
        return Ok(rule.pass("none declared"));
    };
    Ok(match probe.tools.iter().find(|t| t["name"] == name) {
        Some(t) if t["mutates"] == false => rule.pass(format!("{name:?} does not mutate")),
        Some(_) => rule.fail(
            format!("recover_with {name:?} is a mutating tool"),
            "name a tool with mutates: false",
        ),
        None => rule.fail(
            format!("recover_with {name:?} names no declared tool"),
            "name one of the declared tools",
        ),
    })
}

/// read_prompt: the first read is answered, and soon.
fn read_prompt_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let asked = Instant::now();
    probe.first_read = probe.read("first read")?;
    let took = asked.elapsed();
    Ok(if probe.first_read.is_none() {
        fail(
            rule.name,
            "4.4, 6.2",
            "tick/read got no valid answer",
            "answer tick/read at once with {\"seq\": N, \"data\": {...}}",
        )
    } else if took > READ_PROMPT {
        rule.fail(
            format!("tick/read took {} ms (host included)", took.as_millis()),
            "answer tick/read from state kept in memory, without blocking on work",
        )
    } else {
        rule.pass(format!("answered in {} ms", took.as_millis()))
    })
}

/// state_size: the first read's data within the delivery budget.
fn state_size_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let Some(state) = &probe.first_read else {
        return Ok(rule.not_checked("no state was read"));
    };
    let size = serde_json::to_vec(&state["data"])
        .map(|v| v.len())
        .unwrap_or(0);
    Ok(if size > DELIVERY_BUDGET {
        rule.fail(
            format!(
                "state data is {size} bytes, over the 16 KiB delivery budget: deliveries trim it"
            ),
            "keep the state a summary (recent items, counts); leave bulk to tools",
        )
    } else if size > TYPICAL_STATE {
        rule.pass(format!(
            "{size} bytes: within 16 KiB, above the typical 4 KiB"
        ))
    } else {
        rule.pass(format!("{size} bytes"))
    })
}

/// in_flight: 8 reads at once, each on its own connection, all answered.
fn in_flight_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let handles: Vec<_> = (0..IN_FLIGHT)
        .map(|_| {
            let dir = probe.dir.clone();
            let instance = probe.instance.clone();
            std::thread::spawn(move || {
                ask(&dir, ClientRequest::Read { instance })
                    .ok()
                    .and_then(|r| r.ok())
            })
        })
        .collect();
    let answered = handles
        .into_iter()
        .filter_map(|h| h.join().ok().flatten())
        .count();
    Ok(if answered == IN_FLIGHT {
        rule.pass(format!("{IN_FLIGHT} concurrent reads all answered"))
    } else {
        rule.fail(
            format!("{answered} of {IN_FLIGHT} concurrent reads answered"),
            "read requests as they come and answer each by id; do not wait for one before reading the next",
        )
    })
}

/// A refused call's finding: `code`, not executed.
fn refused(rule: &Rule, outcome: &CallOutcome, effect: &str, code: i64, fix: &str) -> Finding {
    match outcome {
        CallOutcome::NotExecuted { error } if error.code == code => {
            rule.pass(format!("answered {code}, not executed; {effect}"))
        }
        other => rule.fail(
            format!(
                "expected {code} not executed, got {}; {effect}",
                outcome_text(other)
            ),
            fix,
        ),
    }
}

/// unknown_tool: a call of an undeclared tool is refused with -32602.
fn unknown_tool_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let revision = probe.revision.clone();
    let (outcome, effect) =
        probe.call_between_reads("the unknown tool", NO_SUCH_TOOL, json!({}), &revision)?;
    Ok(refused(
        rule,
        &outcome,
        &effect,
        -32602,
        "answer a tick/call of an undeclared tool with -32602 and do nothing",
    ))
}

/// bad_args: a call whose args violate the tool's schema is refused with
/// -32602.
fn bad_args_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let schema_of = |t: &Value| violating_args(&t["input_schema"]);
    let Some(tool) = pick_tool(&probe.tools, probe.allow_mutating, |t| {
        schema_of(t).is_some()
    }) else {
        return Ok(rule.not_checked(if probe.allow_mutating {
            "no tool's input_schema refuses any object (no required, additionalProperties or typed properties)"
        } else {
            "no non-mutating tool's input_schema refuses any object; --allow-mutating lets a mutating tool be used (the host refuses the call before the Tick sees it)"
        }));
    };
    let name = tool["name"].as_str().unwrap_or_default().to_string();
    let args = schema_of(tool).unwrap_or_else(|| json!({}));
    let revision = probe.revision.clone();
    let (outcome, effect) = probe.call_between_reads("bad args", &name, args.clone(), &revision)?;
    let mut finding = refused(
        rule,
        &outcome,
        &effect,
        -32602,
        "validate args against input_schema and answer -32602 without executing",
    );
    finding.detail = format!("{name} {args}: {}", finding.detail);
    Ok(finding)
}

/// Whether a tool can be called with `{}` (it requires nothing).
fn accepts_empty(tool: &Value) -> bool {
    tool["input_schema"]
        .get("required")
        .and_then(Value::as_array)
        .is_none_or(|r| r.is_empty())
}

/// stale_revision: a call made against an old revision is refused with
/// -32004.
fn stale_revision_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let Some(tool) = pick_tool(&probe.tools, probe.allow_mutating, accepts_empty) else {
        return Ok(rule.not_checked(
            "no non-mutating tool takes {} (use --allow-mutating to try a mutating one; the host refuses it before the Tick sees it)",
        ));
    };
    let name = tool["name"].as_str().unwrap_or_default().to_string();
    let stale = format!("{}-stale", probe.revision);
    let (outcome, effect) =
        probe.call_between_reads("a stale revision", &name, json!({}), &stale)?;
    let mut finding = refused(
        rule,
        &outcome,
        &effect,
        -32004,
        "compare the call's revision with the current one first; answer -32004 without executing",
    );
    finding.detail = format!("{name} with revision {stale:?}: {}", finding.detail);
    Ok(finding)
}

/// calls: every tool that takes `{}` answers a call (non-mutating tools
/// always; mutating ones only when allowed, and said first).
fn calls_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let callable: Vec<&Value> = probe.tools.iter().filter(|t| accepts_empty(t)).collect();
    let mutates = |t: &Value| t["mutates"].as_bool().unwrap_or(true);
    let mutating: Vec<&str> = callable
        .iter()
        .filter(|t| mutates(t))
        .filter_map(|t| t["name"].as_str())
        .collect();
    if probe.allow_mutating && !mutating.is_empty() {
        eprintln!(
            "tickloop check: --allow-mutating: calling the mutating tools {} with {{}}",
            mutating.join(", ")
        );
    }
    let mut answered = Vec::new();
    let mut unanswered = Vec::new();
    let mut skipped = Vec::new();
    for tool in callable {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        if mutates(tool) && !probe.allow_mutating {
            skipped.push(name);
            continue;
        }
        match call(
            &probe.dir,
            &probe.instance,
            &name,
            json!({}),
            &probe.revision,
        )? {
            CallOutcome::Unknown { reason } => {
                unanswered.push(format!("{name}: {reason}"));
                // The session may be over; nothing more is called.
                break;
            }
            _ => answered.push(name),
        }
    }
    let skipped_text = if skipped.is_empty() {
        String::new()
    } else {
        format!(
            "; not called (mutating, no --allow-mutating): {}",
            skipped.join(", ")
        )
    };
    if !unanswered.is_empty() {
        // An unanswered call usually means the session ended; the host's
        // list shows it shortly after the call's outcome.
        return Ok(if wait_ended(&probe.dir, &probe.instance, END_VISIBLE)? {
            rule.not_checked(format!(
                "the session ended during a call ({}); see the seq and session rules",
                unanswered.join("; ")
            ))
        } else {
            rule.fail(
                format!("no answer: {}", unanswered.join("; ")),
                "answer every tick/call; run work longer than 60 s in the background and report it by tick/update",
            )
        });
    }
    Ok(if answered.is_empty() {
        rule.not_checked(format!("no tool could be called with {{}}{skipped_text}"))
    } else {
        rule.pass(format!("answered: {}{skipped_text}", answered.join(", ")))
    })
}

/// session: still running, not ended by the host for a violation.
fn session_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let last = entry(&probe.dir, &probe.instance)?;
    probe.ended = last
        .as_ref()
        .filter(|e| e["state"] == "ended")
        .map(|e| e["ended"].clone());
    let Some(end) = &probe.ended else {
        return Ok(rule.pass("no violation; still running"));
    };
    if end["kind"] == "violation" && end["reason"].as_str().is_some_and(|r| r.contains(" seq ")) {
        probe.seq_violation = Some(format!(
            "the host ended the session: {}; offending line: {:.200}",
            end["reason"].as_str().unwrap_or_default(),
            end["offending"].as_str().unwrap_or_default()
        ));
        return Ok(rule.not_checked("the session ended by a seq violation (see the seq rule)"));
    }
    let kind: Option<EndClass> = serde_json::from_value(end["kind"].clone()).ok();
    let reason = end["reason"].as_str().unwrap_or("ended");
    let offending = end["offending"]
        .as_str()
        .map(|o| format!("; offending line: {o:.200}"))
        .unwrap_or_default();
    Ok(match kind {
        Some(EndClass::Violation) => rule.fail(
            format!("the host ended the session: {reason}{offending}"),
            "write only complete JSON-RPC 2.0 lines on stdout (logs to stderr), with valid ids, seq and sizes",
        ),
        _ => fail(
            rule.name,
            "4.5",
            format!("the Tick ended during the check: {reason}"),
            "keep running until the host closes stdin or sends SIGTERM",
        ),
    })
}

/// seq: never down across the sequential reads; updates are checked by the
/// host as they come, and a seq violation ends the session.
fn seq_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    let _ = probe.read("last read")?;
    let seqs = &probe.seqs;
    let backwards = seqs
        .windows(2)
        .find(|w| w[1].1 < w[0].1)
        .map(|w| format!("{} seq {} then {} seq {}", w[0].0, w[0].1, w[1].0, w[1].1));
    Ok(match (probe.seq_violation.take(), backwards) {
        (Some(what), _) => fail(
            rule.name,
            "6.3, 8.2",
            what,
            "raise seq by at least one for every update and never answer a read below the last update's seq",
        ),
        (None, Some(what)) => rule.fail(
            format!("seq went down: {what}"),
            "keep one counter, raised on each state change, and answer reads with its current value",
        ),
        (None, None) if seqs.len() < 2 => rule.not_checked("fewer than two reads answered"),
        (None, None) => rule.pass(format!(
            "{} reads, seq never went down (updates are checked by the host as they come)",
            seqs.len()
        )),
    })
}

/// close: SIGTERM and stdin EOF at once end it before the host's SIGKILL.
fn close_rule(rule: &Rule, probe: &mut Probe) -> Result<Finding> {
    if probe.ended.is_some() {
        return Ok(rule.not_checked("the session had already ended"));
    }
    let asked = Instant::now();
    let close = ClientRequest::Close {
        instance: probe.instance.clone(),
    };
    let closed = ask(&probe.dir, close)?;
    let took = asked.elapsed();
    let grace = launcher::instance::TERM_GRACE;
    Ok(match closed {
        Err(e) => rule.fail(format!("close failed: {e}"), "exit on SIGTERM and on stdin EOF"),
        Ok(_) if took >= grace => rule.fail(
            format!(
                "still running {} ms after SIGTERM and stdin EOF: the host had to SIGKILL its process group",
                took.as_millis()
            ),
            "exit promptly on SIGTERM and on stdin EOF, and do not leave children that ignore them",
        ),
        Ok(_) => rule.pass(format!(
            "ended {} ms after SIGTERM and stdin EOF",
            took.as_millis()
        )),
    })
}
