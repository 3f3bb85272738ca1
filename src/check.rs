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
use tickloop_client::framing::read_text_line_blocking;
use tickloop_client::Client;
use tickloop_proto::attach::MAX_VIEW_LINE;
use tickloop_proto::wire::{
    ApprovalPolicy, CallOutcome, CallRequest, ClientReply, ClientRequest, EndClass, OpenRequest,
    ProgramSpec,
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

/// Every rule, in the order they are reported: (name, spec section).
const RULES: &[(&str, &str)] = &[
    ("describe", "4.2, 5.3"),
    ("recover_with", "9"),
    ("read_prompt", "4.4"),
    ("state_size", "6.4"),
    ("in_flight", "3.3"),
    ("unknown_tool", "7.2"),
    ("bad_args", "7.2"),
    ("stale_revision", "5.5, 7.2"),
    ("calls", "7.2, 7.3"),
    ("seq", "6.3"),
    ("no_update_on_resize", "4.1, 8.3"),
    ("session", "3.6"),
    ("close", "4.5"),
];

/// The private tickhost: shut down and its directory removed on drop.
struct PrivateHost {
    dir: PathBuf,
}

impl Drop for PrivateHost {
    fn drop(&mut self) {
        if let Ok(mut client) = Client::connect(&self.dir) {
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
    Client::connect(dir).context("cannot reach the private tickhost")
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
        call: CallRequest {
            tool: tool.to_string(),
            args,
            revision: revision.to_string(),
        },
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
fn resize_rule(dir: &Path, instance: &str) -> Result<Finding> {
    const RULE: &str = "no_update_on_resize";
    const SECTION: &str = "4.1, 8.3";
    let Some(start) = updates(dir, instance)? else {
        return Ok(not_checked(RULE, SECTION, "the instance is not listed"));
    };
    std::thread::sleep(RESIZE_WINDOW);
    let Some(quiet) = updates(dir, instance)? else {
        return Ok(not_checked(RULE, SECTION, "the instance is not listed"));
    };
    if quiet != start {
        return Ok(not_checked(
            RULE,
            SECTION,
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
            return Ok(not_checked(
                RULE,
                SECTION,
                format!("could not resize the PTY through a view: {e:#}"),
            ))
        }
    };
    std::thread::sleep(RESIZE_WINDOW);
    let Some(after) = updates(dir, instance)? else {
        return Ok(not_checked(RULE, SECTION, "the instance is not listed"));
    };
    Ok(if after > quiet {
        fail(
            RULE,
            SECTION,
            format!(
                "{} update(s) within {} ms of resizing the PTY ({sizes}), none in the same time before",
                after - quiet,
                RESIZE_WINDOW.as_millis()
            ),
            "send tick/update only when the state changes, never on SIGWINCH or a repaint",
        )
    } else {
        pass(
            RULE,
            SECTION,
            format!("no update after resizing the PTY ({sizes})"),
        )
    })
}

/// Attaches as a view at another size, then resizes once more; returns the
/// sizes the PTY took. The view hangs up at the end (a detach).
fn resize_pty(dir: &Path, instance: &str) -> Result<String> {
    use std::io::BufReader;
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
    let line = read_text_line_blocking(&mut reader, MAX_VIEW_LINE)
        .context("the launcher's hello")?
        .unwrap_or_default();
    let reply: HelloReply = serde_json::from_str(&line).context("the launcher's hello")?;
    if let Some(refused) = reply.refused {
        anyhow::bail!("the launcher refused the view: {refused}");
    }
    let next_size = |reader: &mut BufReader<std::os::unix::net::UnixStream>| -> Result<(u16, u16)> {
        loop {
            let Some(line) =
                read_text_line_blocking(reader, MAX_VIEW_LINE).context("the launcher's frames")?
            else {
                anyhow::bail!("the launcher hung up");
            };
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

fn run_rules(exe: &Path, dir: &Path, options: &Options) -> Result<Vec<Finding>> {
    let mut found: Vec<Finding> = Vec::new();
    let here = std::env::current_dir().context("cannot read the current directory")?;
    Client::connect_or_start(dir, exe).context("cannot start the private tickhost")?;
    let open = ClientRequest::Open(OpenRequest {
        name: Some("check".into()),
        program: ProgramSpec {
            shell: false,
            argv: options.argv.clone(),
            cwd: here,
            env: tickloop_client::caller_env(),
            history: None,
            approve: Some(ApprovalPolicy::Auto),
            record: None,
            artifact: None,
            watch: Vec::new(),
        },
    });
    let started = Instant::now();
    let opened = client(dir)?.request(open).context("the private tickhost")?;
    let instance = match opened {
        ClientReply::Ok(value) => value["id"].as_str().unwrap_or("hosted:check").to_string(),
        ClientReply::Error(e) => {
            let screen = e
                .data
                .as_ref()
                .and_then(|d| d.get("screen"))
                .map(|s| format!("; its screen began: {s}"))
                .unwrap_or_default();
            // The describe rule fails whatever the reason (spec 4.2: any
            // failure fails initialization); the fix follows the reason.
            let fix = if e.message.contains("recover_with") {
                "make recover_with name a tool with mutates: false, or leave it out"
            } else if e.message.contains("protocol version") {
                "answer tick/describe with \"protocol\": 3"
            } else if e.message.contains("non-protocol output") {
                "write only protocol lines on stdout: logs and debug output go to stderr"
            } else {
                "answer tick/describe and the first tick/read within 10 s, with a descriptor valid by 5.3"
            };
            found.push(fail(
                "describe",
                "4.2, 5.3",
                format!("initialization failed: {}{screen}", e.message),
                fix,
            ));
            for (rule, section) in &RULES[1..] {
                found.push(not_checked(rule, section, "the Tick did not initialize"));
            }
            return Ok(found);
        }
        ClientReply::Call(_) => anyhow::bail!("tickhost answered open with a call outcome"),
    };
    let init_time = started.elapsed();

    // describe
    let descriptor = match ask(
        dir,
        ClientRequest::Describe {
            instance: instance.clone(),
        },
    )? {
        Ok(d) => d,
        Err(e) => anyhow::bail!("the opened instance has no descriptor: {e}"),
    };
    let tools: Vec<Value> = descriptor["tools"].as_array().cloned().unwrap_or_default();
    let revision = descriptor["revision"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    found.push(pass(
        "describe",
        "4.2, 5.3",
        format!(
            "initialized in {} ms; descriptor valid (kind {}, revision {revision:?}, {} tools)",
            init_time.as_millis(),
            descriptor["kind"],
            tools.len()
        ),
    ));

    // recover_with
    found.push(
        match descriptor.get("recover_with").and_then(Value::as_str) {
            None => pass("recover_with", "9", "none declared"),
            Some(name) => match tools.iter().find(|t| t["name"] == name) {
                Some(t) if t["mutates"] == false => {
                    pass("recover_with", "9", format!("{name:?} does not mutate"))
                }
                Some(_) => fail(
                    "recover_with",
                    "9",
                    format!("recover_with {name:?} is a mutating tool"),
                    "name a tool with mutates: false",
                ),
                None => fail(
                    "recover_with",
                    "9",
                    format!("recover_with {name:?} names no declared tool"),
                    "name one of the declared tools",
                ),
            },
        },
    );

    // read promptness, state size
    let mut seqs: Vec<(String, u64)> = Vec::new();
    let read = |seqs: &mut Vec<(String, u64)>, when: &str| -> Result<Option<Value>> {
        let value = ask(
            dir,
            ClientRequest::Read {
                instance: instance.clone(),
            },
        )?
        .ok();
        if let Some(seq) = value.as_ref().and_then(|v| v["seq"].as_u64()) {
            seqs.push((when.to_string(), seq));
        }
        Ok(value)
    };
    let asked = Instant::now();
    let first = read(&mut seqs, "first read")?;
    let took = asked.elapsed();
    match &first {
        None => {
            found.push(fail(
                "read_prompt",
                "4.4, 6.2",
                "tick/read got no valid answer",
                "answer tick/read at once with {\"seq\": N, \"data\": {...}}",
            ));
            found.push(not_checked("state_size", "6.4", "no state was read"));
        }
        Some(state) => {
            found.push(if took > READ_PROMPT {
                fail(
                    "read_prompt",
                    "4.4",
                    format!("tick/read took {} ms (host included)", took.as_millis()),
                    "answer tick/read from state kept in memory, without blocking on work",
                )
            } else {
                pass(
                    "read_prompt",
                    "4.4",
                    format!("answered in {} ms", took.as_millis()),
                )
            });
            let size = serde_json::to_vec(&state["data"])
                .map(|v| v.len())
                .unwrap_or(0);
            found.push(if size > DELIVERY_BUDGET {
                fail(
                    "state_size",
                    "6.4",
                    format!("state data is {size} bytes, over the 16 KiB delivery budget: deliveries trim it"),
                    "keep the state a summary (recent items, counts); leave bulk to tools",
                )
            } else if size > TYPICAL_STATE {
                pass(
                    "state_size",
                    "6.4",
                    format!("{size} bytes: within 16 KiB, above the typical 4 KiB"),
                )
            } else {
                pass("state_size", "6.4", format!("{size} bytes"))
            });
        }
    }

    // 8 reads in flight at once, each on its own connection
    let handles: Vec<_> = (0..IN_FLIGHT)
        .map(|_| {
            let dir = dir.to_path_buf();
            let instance = instance.clone();
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
    found.push(if answered == IN_FLIGHT {
        pass("in_flight", "3.3", format!("{IN_FLIGHT} concurrent reads all answered"))
    } else {
        fail(
            "in_flight",
            "3.3",
            format!("{answered} of {IN_FLIGHT} concurrent reads answered"),
            "read requests as they come and answer each by id; do not wait for one before reading the next",
        )
    });

    // Refused calls: unknown tool, bad args, stale revision.
    let before_after = |seqs: &mut Vec<(String, u64)>,
                        label: &str,
                        make: &mut dyn FnMut() -> Result<CallOutcome>|
     -> Result<(CallOutcome, String)> {
        let before = read(seqs, &format!("before {label}"))?;
        let outcome = make()?;
        let after = read(seqs, &format!("after {label}"))?;
        let effect = match (before, after) {
            (Some(b), Some(a)) if b["data"] == a["data"] => "state unchanged".to_string(),
            (Some(b), Some(a)) => format!(
                "state changed during the call (seq {} -> {}); the host refused the call before the Tick saw it, so that is the Tick's own activity",
                b["seq"], a["seq"]
            ),
            _ => "state not readable around the call".to_string(),
        };
        Ok((outcome, effect))
    };
    let refused = |rule: &'static str,
                   section: &'static str,
                   outcome: &CallOutcome,
                   effect: &str,
                   code: i64,
                   fix: &str|
     -> Finding {
        match outcome {
            CallOutcome::NotExecuted { error } if error.code == code => pass(
                rule,
                section,
                format!("answered {code}, not executed; {effect}"),
            ),
            other => fail(
                rule,
                section,
                format!(
                    "expected {code} not executed, got {}; {effect}",
                    outcome_text(other)
                ),
                fix,
            ),
        }
    };
    let (outcome, effect) = before_after(&mut seqs, "the unknown tool", &mut || {
        call(dir, &instance, NO_SUCH_TOOL, json!({}), &revision)
    })?;
    found.push(refused(
        "unknown_tool",
        "7.2",
        &outcome,
        &effect,
        -32602,
        "answer a tick/call of an undeclared tool with -32602 and do nothing",
    ));

    let schema_of = |t: &Value| violating_args(&t["input_schema"]);
    match pick_tool(&tools, options.allow_mutating, |t| schema_of(t).is_some()) {
        None => found.push(not_checked(
            "bad_args",
            "7.2",
            if options.allow_mutating {
                "no tool's input_schema refuses any object (no required, additionalProperties or typed properties)"
            } else {
                "no non-mutating tool's input_schema refuses any object; --allow-mutating lets a mutating tool be used (the host refuses the call before the Tick sees it)"
            },
        )),
        Some(tool) => {
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            let args = schema_of(tool).unwrap_or_else(|| json!({}));
            let (outcome, effect) = before_after(&mut seqs, "bad args", &mut || {
                call(dir, &instance, &name, args.clone(), &revision)
            })?;
            let mut finding = refused(
                "bad_args",
                "7.2",
                &outcome,
                &effect,
                -32602,
                "validate args against input_schema and answer -32602 without executing",
            );
            finding.detail = format!("{name} {args}: {}", finding.detail);
            found.push(finding);
        }
    }

    let accepts_empty = |t: &Value| {
        t["input_schema"]
            .get("required")
            .and_then(Value::as_array)
            .is_none_or(|r| r.is_empty())
    };
    match pick_tool(&tools, options.allow_mutating, accepts_empty) {
        None => found.push(not_checked(
            "stale_revision",
            "5.5, 7.2",
            "no non-mutating tool takes {} (use --allow-mutating to try a mutating one; the host refuses it before the Tick sees it)",
        )),
        Some(tool) => {
            let name = tool["name"].as_str().unwrap_or_default().to_string();
            let stale = format!("{revision}-stale");
            let (outcome, effect) = before_after(&mut seqs, "a stale revision", &mut || {
                call(dir, &instance, &name, json!({}), &stale)
            })?;
            let mut finding = refused(
                "stale_revision",
                "5.5, 7.2",
                &outcome,
                &effect,
                -32004,
                "compare the call's revision with the current one first; answer -32004 without executing",
            );
            finding.detail = format!("{name} with revision {stale:?}: {}", finding.detail);
            found.push(finding);
        }
    }

    // Calls: non-mutating tools always; mutating ones only when allowed,
    // and said first.
    let mutating: Vec<&str> = tools
        .iter()
        .filter(|t| t["mutates"].as_bool().unwrap_or(true) && accepts_empty(t))
        .filter_map(|t| t["name"].as_str())
        .collect();
    if options.allow_mutating && !mutating.is_empty() {
        eprintln!(
            "tickloop check: --allow-mutating: calling the mutating tools {} with {{}}",
            mutating.join(", ")
        );
    }
    let mut answered_calls = Vec::new();
    let mut unanswered = Vec::new();
    let mut skipped = Vec::new();
    for tool in tools.iter().filter(|t| accepts_empty(t)) {
        let name = tool["name"].as_str().unwrap_or_default().to_string();
        let mutates = tool["mutates"].as_bool().unwrap_or(true);
        if mutates && !options.allow_mutating {
            skipped.push(name);
            continue;
        }
        match call(dir, &instance, &name, json!({}), &revision)? {
            CallOutcome::Unknown { reason } => {
                unanswered.push(format!("{name}: {reason}"));
                // The session may be over; nothing more is called.
                break;
            }
            _ => answered_calls.push(name),
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
    // An unanswered call usually means the session ended; the host's list
    // shows it shortly after the call's outcome.
    let ended_now = if unanswered.is_empty() {
        false
    } else {
        wait_ended(dir, &instance, END_VISIBLE)?
    };
    found.push(if !unanswered.is_empty() && ended_now {
        not_checked(
            "calls",
            "7.2, 7.3",
            format!(
                "the session ended during a call ({}); see the seq and session rules",
                unanswered.join("; ")
            ),
        )
    } else if !unanswered.is_empty() {
        fail(
            "calls",
            "7.2, 7.3",
            format!("no answer: {}", unanswered.join("; ")),
            "answer every tick/call; run work longer than 60 s in the background and report it by tick/update",
        )
    } else if answered_calls.is_empty() {
        not_checked(
            "calls",
            "7.2, 7.3",
            format!("no tool could be called with {{}}{skipped_text}"),
        )
    } else {
        pass(
            "calls",
            "7.2, 7.3",
            format!("answered: {}{skipped_text}", answered_calls.join(", ")),
        )
    });

    found.push(resize_rule(dir, &instance)?);

    // session: still running, no violation
    let last = entry(dir, &instance)?;
    let ended = last
        .as_ref()
        .filter(|e| e["state"] == "ended")
        .map(|e| e["ended"].clone());
    let mut seq_violation = None;
    match &ended {
        None => found.push(pass("session", "3.6", "no violation; still running")),
        Some(end)
            if end["kind"] == "violation"
                && end["reason"].as_str().is_some_and(|r| r.contains(" seq ")) =>
        {
            seq_violation = Some(format!(
                "the host ended the session: {}; offending line: {:.200}",
                end["reason"].as_str().unwrap_or_default(),
                end["offending"].as_str().unwrap_or_default()
            ));
            found.push(not_checked(
                "session",
                "3.6",
                "the session ended by a seq violation (see the seq rule)",
            ));
        }
        Some(end) => {
            let kind: Option<EndClass> = serde_json::from_value(end["kind"].clone()).ok();
            let reason = end["reason"].as_str().unwrap_or("ended");
            let offending = end["offending"]
                .as_str()
                .map(|o| format!("; offending line: {o:.200}"))
                .unwrap_or_default();
            found.push(match kind {
                Some(EndClass::Violation) => fail(
                    "session",
                    "3.6",
                    format!("the host ended the session: {reason}{offending}"),
                    "write only complete JSON-RPC 2.0 lines on stdout (logs to stderr), with valid ids, seq and sizes",
                ),
                _ => fail(
                    "session",
                    "4.5",
                    format!("the Tick ended during the check: {reason}"),
                    "keep running until the host closes stdin or sends SIGTERM",
                ),
            });
        }
    }

    // seq across the sequential reads; updates are checked by the host as
    // they come, and a seq violation ends the session.
    let _ = read(&mut seqs, "last read")?;
    let backwards = seqs
        .windows(2)
        .find(|w| w[1].1 < w[0].1)
        .map(|w| format!("{} seq {} then {} seq {}", w[0].0, w[0].1, w[1].0, w[1].1));
    found.push(match (seq_violation, backwards) {
        (Some(what), _) => fail(
            "seq",
            "6.3, 8.2",
            what,
            "raise seq by at least one for every update and never answer a read below the last update's seq",
        ),
        (None, Some(what)) => fail(
            "seq",
            "6.3",
            format!("seq went down: {what}"),
            "keep one counter, raised on each state change, and answer reads with its current value",
        ),
        (None, None) if seqs.len() < 2 => {
            not_checked("seq", "6.3", "fewer than two reads answered")
        }
        (None, None) => pass(
            "seq",
            "6.3",
            format!(
                "{} reads, seq never went down (updates are checked by the host as they come)",
                seqs.len()
            ),
        ),
    });

    // close: SIGTERM and stdin EOF at once; SIGKILL after the grace.
    if ended.is_some() {
        found.push(not_checked("close", "4.5", "the session had already ended"));
    } else {
        let asked = Instant::now();
        let closed = ask(
            dir,
            ClientRequest::Close {
                instance: instance.clone(),
            },
        )?;
        let took = asked.elapsed();
        let grace = launcher::instance::TERM_GRACE;
        found.push(match closed {
            Err(e) => fail("close", "4.5", format!("close failed: {e}"), "exit on SIGTERM and on stdin EOF"),
            Ok(_) if took >= grace => fail(
                "close",
                "4.5",
                format!(
                    "still running {} ms after SIGTERM and stdin EOF: the host had to SIGKILL its process group",
                    took.as_millis()
                ),
                "exit promptly on SIGTERM and on stdin EOF, and do not leave children that ignore them",
            ),
            Ok(_) => pass(
                "close",
                "4.5",
                format!("ended {} ms after SIGTERM and stdin EOF", took.as_millis()),
            ),
        });
    }
    let place = |f: &Finding| RULES.iter().position(|(rule, _)| *rule == f.rule);
    found.sort_by_key(place);
    Ok(found)
}
