//! `tickloop record ID [-o FILE]` and `tickloop replay FILE [--protocol]`:
//! asciicast v2 recordings of a Tick's terminal with the protocol traffic
//! as marker events (written by the launcher, `launcher::recorder`).
//! `record` asks the instance's launcher for a recording (hello role
//! `recorder`) and copies its lines into FILE until the Tick ends or
//! Ctrl-C; `replay` plays the output with its timing, or prints the
//! protocol timeline.

use crate::output::CliError;
use anyhow::{Context, Result};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tickloop_client::whole_file::{LineFile, WriteError};
use tickloop_proto::wire::{ClientKind, Hello, HelloReply, Role};

/// The prefix of the marker labels that carry protocol traffic.
pub const MARKER_PREFIX: &str = launcher::recorder::MARKER_PREFIX;

fn bad(message: String, exit: i32) -> anyhow::Error {
    CliError::new("bad_request", message, exit).into()
}

/// A FILE to record into: absolute, not there yet, in an existing folder,
/// and in neither of Tickloop's own folders (its config and data folders).
pub fn new_file(path: &Path) -> Result<PathBuf> {
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let path = std::path::absolute(here.join(path))
        .with_context(|| format!("cannot make {} absolute", path.display()))?;
    if let Some(why) = tickloop_client::own_folders::refuse_own(&path, "recording") {
        return Err(bad(why, 2));
    }
    if path.symlink_metadata().is_ok() {
        return Err(bad(
            format!(
                "{} already exists; a recording never overwrites a file, so name a new one",
                path.display()
            ),
            2,
        ));
    }
    match path.parent() {
        Some(dir) if dir.is_dir() => Ok(path),
        _ => Err(bad(
            format!("the folder of {} does not exist", path.display()),
            2,
        )),
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// A recording about to start: the instance, its launcher's socket, and
/// the new file.
pub struct Prepared {
    pub instance: String,
    socket: PathBuf,
    file: PathBuf,
}

/// `tickloop record`'s first step: the instance `id` found in `list`, and
/// the file to write (`file`, else `NAME-UNIXTIME.cast` here), checked;
/// nothing is asked or written yet.
pub fn prepare(runtime: &Path, id: &str, list: &Value, file: Option<PathBuf>) -> Result<Prepared> {
    let (instance, socket) = view_monitor::attach_view::resolve(runtime, id, list)
        .map_err(|e| CliError::new(e.kind(), e.to_string(), 1))?;
    let file = match file {
        Some(f) => new_file(&f)?,
        None => {
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            let name = instance
                .split_once(':')
                .map_or(instance.as_str(), |(_, n)| n);
            new_file(Path::new(&format!("{name}-{stamp}.cast")))?
        }
    };
    Ok(Prepared {
        instance,
        socket,
        file,
    })
}

/// `tickloop record`, once tickhost has let `client` record: asks the
/// launcher for the recording (naming `client`, which its activity shows)
/// and copies it into the file; returns the summary printed at the end.
pub fn record(prepared: Prepared, client: ClientKind) -> Result<Value> {
    let Prepared {
        instance,
        socket,
        file,
    } = prepared;
    let stream = std::os::unix::net::UnixStream::connect(&socket).with_context(|| {
        format!(
            "cannot connect to {instance}'s launcher at {}",
            socket.display()
        )
    })?;
    let mut writer = stream.try_clone().context("cannot clone the socket")?;
    let mut hello = Hello::new(Role::Recorder);
    hello.hello.client = Some(client);
    let mut hello = serde_json::to_vec(&hello)?;
    hello.push(b'\n');
    writer
        .write_all(&hello)
        .context("cannot say hello to the launcher")?;
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    reader
        .read_until(b'\n', &mut line)
        .context("the launcher did not answer")?;
    let reply: HelloReply = serde_json::from_slice(&line).with_context(|| {
        format!(
            "the launcher's answer is not a hello: {}",
            String::from_utf8_lossy(&line)
        )
    })?;
    if let Some(why) = reply.refused {
        return Err(CliError::new(
            "refused",
            format!("the launcher refused to record: {why}"),
            1,
        )
        .into());
    }
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&file)
        .with_context(|| format!("cannot create {}", file.display()))?;
    let mut out = LineFile::new(&file, created)
        .with_context(|| format!("cannot write {}", file.display()))?;
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(libc::SIGINT, on_sigint as *const () as libc::sighandler_t);
    }
    reader
        .get_ref()
        .set_read_timeout(Some(Duration::from_millis(200)))
        .context("cannot set a read timeout")?;
    eprintln!(
        "tickloop: recording {instance} into {}; Ctrl-C stops",
        file.display()
    );
    let mut events = 0u64;
    let mut ended = None;
    line.clear();
    while !STOP.load(Ordering::SeqCst) {
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) if line.ends_with(b"\n") => {
                if let Err(e) = out.append(&line) {
                    return Err(stopped(&e, &out, &file, events).into());
                }
                events += 1;
                if line.starts_with(b"[") && line.windows(13).any(|w| w == b"\\\"dir\\\":\\\"end") {
                    ended = parse_event(&line)
                        .and_then(|e| marker(&e))
                        .map(|m| m["msg"]["reason"].clone());
                }
                line.clear();
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e).context("reading the recording from the launcher"),
        }
    }
    Ok(json!({
        "id": instance,
        "file": file,
        // The header is a line, not an event.
        "events": events.saturating_sub(1),
        "ended": ended,
        "stopped": STOP.load(Ordering::SeqCst),
    }))
}

/// The error of a recording that could not be written on (a full disk):
/// the file keeps the whole lines written before (and goes when there are
/// none), and the message says so.
fn stopped(e: &WriteError, out: &LineFile, file: &Path, events: u64) -> CliError {
    let kept = if out.is_empty() {
        let _ = std::fs::remove_file(file);
        format!("nothing was recorded, and {} was removed", file.display())
    } else {
        format!(
            "{} holds the {} events recorded until then",
            file.display(),
            events.saturating_sub(1)
        )
    };
    let kind = if e.is_full() { "not_saved" } else { "internal" };
    CliError::new(kind, format!("the recording stopped: {e}; {kept}"), 1)
}

/// What `record` prints at the end on a terminal.
pub fn record_text(value: &Value) -> String {
    format!(
        "recorded {} events of {} into {}{}\n",
        value["events"],
        value["id"].as_str().unwrap_or_default(),
        value["file"].as_str().unwrap_or_default(),
        match value["ended"].as_str() {
            Some(reason) => format!(" (the Tick ended: {reason})"),
            None => String::new(),
        }
    )
}

fn parse_event(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let a = v.as_array()?;
    (a.len() == 3 && a[0].is_number() && a[1].is_string()).then_some(v)
}

/// The protocol marker in an `m` event, as `{"dir", "msg"}`.
pub fn marker(event: &Value) -> Option<Value> {
    if event[1] != "m" {
        return None;
    }
    let label = event[2].as_str()?.strip_prefix(MARKER_PREFIX)?;
    serde_json::from_str(label).ok()
}

/// A recording read whole: its header and events `[t, code, data]`.
pub struct Cast {
    pub header: Value,
    pub events: Vec<(f64, String, String)>,
}

/// Reads FILE as asciicast v2, saying what was expected when it is not.
pub fn load(path: &Path) -> Result<Cast> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(format!("cannot read {}: {e}", path.display()), 1))?;
    let expected = "an asciicast v2 recording (`tickloop record` or `open --record`): a first line like {\"version\": 2, \"width\": 120, \"height\": 30}, then one [time, code, data] array per line";
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let header: Value = match lines.next() {
        None => {
            return Err(bad(
                format!("{} is empty; expected {expected}", path.display()),
                1,
            ))
        }
        Some((_, first)) => serde_json::from_str(first).map_err(|_| {
            bad(
                format!(
                    "{} is not {expected}; its first line is {:?}",
                    path.display(),
                    first.chars().take(80).collect::<String>()
                ),
                1,
            )
        })?,
    };
    if header["version"] != 2 || !header["width"].is_u64() || !header["height"].is_u64() {
        return Err(bad(
            format!(
                "{} is not {expected}; its header is {}",
                path.display(),
                header.to_string().chars().take(120).collect::<String>()
            ),
            1,
        ));
    }
    let mut events = Vec::new();
    for (n, line) in lines {
        let event = parse_event(line.as_bytes()).ok_or_else(|| {
            bad(
                format!(
                    "line {} of {} is not an event [time, code, data]: {:?}",
                    n + 1,
                    path.display(),
                    line.chars().take(80).collect::<String>()
                ),
                1,
            )
        })?;
        events.push((
            event[0].as_f64().unwrap_or(0.0),
            event[1].as_str().unwrap_or_default().to_string(),
            match &event[2] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
        ));
    }
    Ok(Cast { header, events })
}

/// The longest pause replayed (like asciinema's idle limit).
const IDLE_LIMIT: f64 = 2.0;

/// `replay FILE`: writes the output to this terminal with its timing
/// (pauses cut to [`IDLE_LIMIT`], then divided by `speed`).
pub fn play(cast: &Cast, speed: f64) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let mut last = 0.0;
    let (w, h) = (&cast.header["width"], &cast.header["height"]);
    eprintln!("tickloop: replaying a {w}x{h} recording; resize this terminal to match for a faithful picture");
    for (t, code, data) in &cast.events {
        let pause = (t - last).clamp(0.0, IDLE_LIMIT) / speed;
        last = *t;
        if code != "o" {
            continue;
        }
        if pause > 0.0 {
            out.flush().context("cannot write to the terminal")?;
            std::thread::sleep(Duration::from_secs_f64(pause));
        }
        out.write_all(data.as_bytes())
            .context("cannot write to the terminal")?;
    }
    out.write_all(b"\x1b[0m\x1b[?25h\r\n")
        .context("cannot write to the terminal")?;
    out.flush().context("cannot write to the terminal")?;
    Ok(())
}

/// `replay --protocol`: every protocol message (and resize) with its time.
pub fn timeline(cast: &Cast) -> Vec<Value> {
    let mut out = Vec::new();
    for (t, code, data) in &cast.events {
        let t = (t * 1000.0).round() / 1000.0;
        match code.as_str() {
            "m" => {
                let event = json!([t, "m", data]);
                if let Some(m) = marker(&event) {
                    out.push(json!({"t": t, "dir": m["dir"], "msg": m["msg"]}));
                }
            }
            "r" => out.push(json!({"t": t, "dir": "resize", "msg": data})),
            _ => {}
        }
    }
    out
}

/// One timeline entry as a line of text.
pub fn timeline_text(entry: &Value) -> String {
    let t = entry["t"].as_f64().unwrap_or(0.0);
    let msg = &entry["msg"];
    let short = |v: &Value| {
        let s = v.to_string();
        if s.chars().count() > 140 {
            s.chars().take(139).collect::<String>() + "…"
        } else {
            s
        }
    };
    let what = match entry["dir"].as_str().unwrap_or_default() {
        "to_tick" => format!(
            "host → tick  {} id={} {}",
            msg["method"].as_str().unwrap_or("?"),
            msg["id"],
            short(&msg["params"])
        ),
        "from_tick" if msg["method"].is_string() => format!(
            "tick → host  {} {}",
            msg["method"].as_str().unwrap_or_default(),
            short(&msg["params"])
        ),
        "from_tick" if msg.get("error").is_some() => format!(
            "tick → host  id={} error {}",
            msg["id"],
            short(&msg["error"])
        ),
        "from_tick" if msg.get("result").is_some() => format!(
            "tick → host  id={} result {}",
            msg["id"],
            short(&msg["result"])
        ),
        "from_tick" => format!("tick → host  {}", short(msg)),
        "resize" => format!(
            "terminal     resized to {}",
            msg.as_str().unwrap_or_default()
        ),
        "end" => format!(
            "end          {}",
            msg["reason"].as_str().unwrap_or_default()
        ),
        other => format!("{other} {}", short(msg)),
    };
    format!("{t:>10.3}s  {what}")
}
