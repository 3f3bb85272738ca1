//! The plain view, `tickloop attach ID`: shows one Tick's live screen in the
//! current terminal and forwards keys, paste and mouse to it, over the
//! launcher's attach protocol ([`tickloop_proto::attach`]).
//!
//! It takes the whole terminal (raw mode, alternate screen), draws with
//! termwiz `Surface` + `diff_screens`, sends its size on attach and after
//! each resize (debounced), and detaches on the prefix key then `d`
//! ([`crate::prefix`]: ctrl+\ unless configured; `m` pops the Monitor, `?`
//! lists the keys, the prefix twice sends it to the Tick), on
//! SIGTERM/SIGINT/SIGQUIT/SIGHUP, or when its terminal goes away. On every
//! exit path, panics included, the user's terminal is restored: modes the
//! view set reset, cursor shown, main screen back, the saved termios put
//! back. Detaching never touches the Tick or its protocol session. Its
//! terminal's colours are asked at attach and sent to the launcher when the
//! answers come ([`crate::colors`]); attaching never waits for them.

use crate::prefix::{Prefix, PrefixAction, PrefixKey};
use crate::render::{self, MouseTranslator};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};
use termwiz::caps::{Capabilities, ColorLevel, ProbeHints};
use termwiz::input::InputEvent;
use termwiz::surface::{Change, Surface};
use termwiz::terminal::{Terminal, TerminalWaker, UnixTerminal};
use tickloop_proto::attach::{
    MouseTracking, Snapshot, TermCaps, ToView, ViewEvent, ViewHello, MAX_VIEW_LINE,
};
use tickloop_proto::wire::{Hello, HelloReply, Role};

/// How long the view waits for the launcher's first answers before giving up.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// A burst of resizes is sent as one, this long after the last.
const RESIZE_DEBOUNCE: Duration = Duration::from_millis(60);

/// How an attach ended normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AttachOutcome {
    /// The user detached with the prefix key then `d` (or went back to the
    /// Monitor it was attached from).
    Detached,
    /// The terminal went away or a signal (SIGHUP, SIGTERM…) came: whoever
    /// owned the terminal closed it, the user did not choose to detach.
    /// Whichever of the two a closing terminal delivers first, it is this.
    Hangup,
    /// The Tick's session ended while attached.
    Ended { reason: String },
}

/// Why attaching failed or stopped.
#[derive(Debug, thiserror::Error)]
pub enum AttachError {
    #[error("cannot connect to the launcher at {path}: {source}")]
    Connect {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the launcher refused the view: {0}")]
    Refused(String),
    #[error("the launcher broke the attach protocol: {0}")]
    Protocol(String),
    #[error("the connection to the launcher was lost: {0}")]
    Lost(String),
    #[error("this needs a terminal: {0}")]
    Terminal(String),
    #[error("{0}")]
    NoSuchInstance(String),
    #[error("{0}")]
    Ended(String),
    #[error("{0}")]
    BadKey(String),
    #[error(transparent)]
    Remote(tickloop_client::ssh::RemoteError),
}

impl AttachError {
    /// The CLI's error kind (docs/cli.md) for this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            AttachError::NoSuchInstance(_) => "no_such_instance",
            AttachError::Ended(_) => "ended",
            AttachError::Connect { .. } | AttachError::Lost(_) => "unreachable",
            AttachError::Terminal(_) | AttachError::BadKey(_) => "bad_request",
            AttachError::Refused(_) | AttachError::Protocol(_) => "internal",
            AttachError::Remote(e) => e.kind(),
        }
    }
}

/// `tickloop attach ID`: finds ID (a full id, or a NAME of exactly one
/// instance) in `list` (the JSON of `tickloop list`), attaches to its
/// launcher's socket in `runtime` (or, with `ssh`, on that machine), and
/// tells on stderr how it ended.
pub fn attach_cli(
    runtime: &Path,
    id: &str,
    list: &serde_json::Value,
    detach_key: Option<&str>,
    ssh: Option<&tickloop_client::ssh::SshHost>,
) -> Result<(), AttachError> {
    let prefix = PrefixKey::choose(detach_key).map_err(|e| AttachError::BadKey(e.to_string()))?;
    let (instance, socket) = resolve(runtime, id, list)?;
    let opts = AttachOptions {
        runtime: runtime.to_path_buf(),
        socket,
        instance: instance.clone(),
        status: None,
        prefix,
        ssh: ssh.cloned(),
    };
    match run(&opts)? {
        AttachOutcome::Detached | AttachOutcome::Hangup => {
            eprintln!("tickloop: detached from {instance}")
        }
        AttachOutcome::Ended { reason } => eprintln!("tickloop: {instance} ended: {reason}"),
    }
    Ok(())
}

/// The full id and launcher socket of `id` among the `list` items.
pub fn resolve(
    runtime: &Path,
    id: &str,
    list: &serde_json::Value,
) -> Result<(String, PathBuf), AttachError> {
    let items = list.as_array().map(Vec::as_slice).unwrap_or_default();
    let matches: Vec<&serde_json::Value> = items
        .iter()
        .filter(|item| {
            item.get("id").and_then(|v| v.as_str()).is_some_and(|full| {
                full == id || full.split_once(':').is_some_and(|(_, name)| name == id)
            })
        })
        .collect();
    let item = match matches.as_slice() {
        [one] => *one,
        [] => {
            return Err(AttachError::NoSuchInstance(format!(
                "no instance {id}; `tickloop list` shows them"
            )))
        }
        _ => {
            return Err(AttachError::NoSuchInstance(format!(
                "{id} names several instances; use the full id (hosted:{id} or shell:{id})"
            )))
        }
    };
    let full = item
        .get("id")
        .and_then(|v| v.as_str())
        .unwrap_or(id)
        .to_string();
    if item.get("state").and_then(|v| v.as_str()) == Some("ended") {
        return Err(AttachError::Ended(format!(
            "{full} has ended; `tickloop list` shows why"
        )));
    }
    let (kind, name) = tickloop_client::paths::parse_id(&full)
        .ok_or_else(|| AttachError::NoSuchInstance(format!("{full} is not an instance id")))?;
    let files = tickloop_client::paths::RuntimeDir::at(runtime)
        .instance_files(kind, name)
        .map_err(|e| AttachError::NoSuchInstance(e.to_string()))?;
    Ok((full, files.socket))
}

/// What to attach to.
#[derive(Debug, Clone)]
pub struct AttachOptions {
    /// The runtime directory (its tickhost serves the activity overlay).
    pub runtime: PathBuf,
    /// The launcher's socket.
    pub socket: PathBuf,
    /// The instance id, for the status line and messages.
    pub instance: String,
    /// A note kept on the last row at all times (a Herdr popup, where every
    /// key reaches the view, says its close key); `None`: the status line
    /// shows only when the sizes differ, with the detach key.
    pub status: Option<String>,
    /// The prefix key ([`crate::prefix`]).
    pub prefix: PrefixKey,
    /// The instance is on this other machine: the view reaches its
    /// launcher through ssh and the relay there ([`tickloop_client::ssh`]);
    /// `socket` is then unused.
    pub ssh: Option<tickloop_client::ssh::SshHost>,
}

impl AttachOptions {
    /// The tickhost of the instance: here, or on the machine of `ssh`.
    pub fn endpoint(&self) -> tickloop_client::Endpoint {
        tickloop_client::Endpoint::of(&self.runtime, self.ssh.as_ref())
    }
}

/// Set by the Monitor for the `tickloop attach` it runs (`a`): the prefix
/// key's `m` then returns to that Monitor instead of starting another.
pub const FROM_MONITOR_ENV: &str = "TICKLOOP_FROM_MONITOR";

/// How long the last row shows the keys after attaching, or after `?`.
const FLASH: Duration = Duration::from_secs(3);

/// How a session of the view ended.
enum SessionEnd {
    Done(AttachOutcome),
    /// Prefix, `m`: the Monitor, then back to the Tick.
    Monitor,
}

/// Attach the current terminal to a launcher until detach or the Tick's end.
/// Blocks; restores the terminal before returning (and on panic). The
/// prefix key then `m` runs the Monitor (`tickloop monitor --select ID`) in
/// this terminal and attaches again when it quits.
pub fn run(opts: &AttachOptions) -> Result<AttachOutcome, AttachError> {
    loop {
        match run_session(opts)? {
            SessionEnd::Done(outcome) => return Ok(outcome),
            // Attached from the Monitor (its `a`): going back is a detach.
            SessionEnd::Monitor if std::env::var_os(FROM_MONITOR_ENV).is_some() => {
                return Ok(AttachOutcome::Detached)
            }
            SessionEnd::Monitor => run_monitor(&opts.instance, opts.ssh.as_ref())?,
        }
    }
}

/// The Monitor over the Tick: `tickloop monitor --select ID`, in this
/// terminal, until it quits.
fn run_monitor(
    instance: &str,
    ssh: Option<&tickloop_client::ssh::SshHost>,
) -> Result<(), AttachError> {
    let exe = std::env::current_exe().map_err(|e| {
        AttachError::Terminal(format!("cannot find tickloop to run the Monitor: {e}"))
    })?;
    let mut monitor = std::process::Command::new(exe);
    if let Some(host) = ssh {
        monitor.args(["--host", &host.label()]);
    }
    monitor
        .args(["monitor", "--select", instance])
        .status()
        .map_err(|e| AttachError::Terminal(format!("cannot run the Monitor: {e}")))?;
    Ok(())
}

fn run_session(opts: &AttachOptions) -> Result<SessionEnd, AttachError> {
    // The ssh process (when remote) lives as long as this session.
    let (stream, _ssh) = open_link(opts)?;
    let caps = terminal_caps()?;
    let tty = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
    // What the helper threads tell the drawing loop, and what goes to the
    // launcher. The terminal's colours go straight onto the events, ahead of
    // every key typed after their answers.
    let (note_tx, notes) = mpsc::channel::<Note>();
    let (event_tx, events) = mpsc::channel::<ViewEvent>();
    let colors_tx = event_tx.clone();
    let gone_tx = note_tx.clone();
    let gone_waker: Arc<Mutex<Option<TerminalWaker>>> = Arc::default();
    let waker_slot = gone_waker.clone();
    let input = crate::colors::TtyInput::start(
        tty.try_clone()
            .map_err(|e| AttachError::Terminal(format!("cannot read /dev/tty: {e}")))?,
        move |colors| {
            let _ = colors_tx.send(ViewEvent::Colors(colors));
        },
        move || {
            let _ = gone_tx.send(Note::TerminalGone);
            if let Some(waker) = waker_slot.lock().ok().and_then(|w| w.clone()) {
                let _ = waker.wake();
            }
        },
    )
    .map_err(|e| AttachError::Terminal(format!("cannot read the terminal: {e}")))?;
    // termwiz reads the terminal's input with the colour answers taken out.
    let mut term = UnixTerminal::new_with(caps.clone(), input.keys(), &tty)
        .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
    if let Ok(mut slot) = gone_waker.lock() {
        *slot = Some(term.waker());
    }
    let size = term
        .get_screen_size()
        .map_err(|e| AttachError::Terminal(format!("cannot read the terminal's size: {e}")))?;
    let (cols, rows) = (clamp(size.cols), clamp(size.rows));

    let guard = RestoreGuard::install()?;
    term.set_raw_mode()
        .map_err(|e| AttachError::Terminal(format!("cannot enter raw mode: {e}")))?;
    // Asked in raw mode (the answers must not be echoed), never waited for.
    guard.write_raw(&crate::colors::questions());

    let hello = view_hello(&caps, (cols, rows), "attach");
    let (reader, writer, snapshot) = match start_view(stream, &hello)? {
        (reader, writer, Start::Snapshot(s)) => (reader, writer, s),
        (_, _, Start::Ended(reason)) => {
            return Ok(SessionEnd::Done(AttachOutcome::Ended { reason }))
        }
    };

    term.enter_alternate_screen()
        .map_err(|e| AttachError::Terminal(e.to_string()))?;
    guard.entered_screen();

    let link = Link {
        reader,
        writer,
        notes,
        note_tx,
        events,
        event_tx,
    };
    let outcome = session(&mut term, &guard, link, snapshot, (cols, rows), opts);
    // termwiz's own teardown unwraps its writes, which fail when the terminal
    // is gone; the guard restores everything it would, ignoring errors.
    guard.restore();
    std::mem::forget(term);
    // Stops reading the terminal before anything else reads it.
    drop(input);
    outcome
}

/// A view's connection to its launcher, and the channels around it.
struct Link {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    notes: mpsc::Receiver<Note>,
    note_tx: mpsc::Sender<Note>,
    events: mpsc::Receiver<ViewEvent>,
    event_tx: mpsc::Sender<ViewEvent>,
}

pub(crate) fn clamp(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// The [`ViewHello`] of a view `size` cells large on a terminal with `caps`.
pub(crate) fn view_hello(caps: &Capabilities, size: (u16, u16), client: &str) -> ViewHello {
    ViewHello {
        cols: size.0,
        rows: size.1,
        term: TermCaps {
            truecolor: caps.color_level() == ColorLevel::TrueColor,
            colors: match caps.color_level() {
                ColorLevel::TrueColor | ColorLevel::TwoFiftySix => 256,
                ColorLevel::Sixteen => 16,
                ColorLevel::MonoChrome => 2,
            },
            mouse: true,
            bracketed_paste: caps.bracketed_paste(),
            focus_events: false,
        },
        client: Some(client.into()),
    }
}

/// How the launcher answered a view's [`ViewHello`].
pub(crate) enum Start {
    Snapshot(Snapshot),
    Ended(String),
}

/// Sends `hello` on a connection from [`connect`] and reads the launcher's
/// first answer; returns the connection's two halves (reads no longer time
/// out) and that answer.
pub(crate) fn start_view(
    stream: UnixStream,
    hello: &ViewHello,
) -> Result<(BufReader<UnixStream>, UnixStream, Start), AttachError> {
    let mut writer = stream
        .try_clone()
        .map_err(|e| AttachError::Lost(e.to_string()))?;
    send_line(&mut writer, hello).map_err(|e| AttachError::Lost(e.to_string()))?;

    let mut reader = BufReader::new(stream);
    let first = read_message(&mut reader)?;
    let start = match first {
        Some(ToView::Snapshot(s)) => Start::Snapshot(s),
        Some(ToView::Ended { reason }) => Start::Ended(reason),
        Some(other) => {
            return Err(AttachError::Protocol(format!(
                "expected a snapshot first, got {other:?}"
            )))
        }
        None => return Err(AttachError::Lost("closed before the first snapshot".into())),
    };
    reader
        .get_ref()
        .set_read_timeout(None)
        .map_err(|e| AttachError::Lost(e.to_string()))?;
    Ok((reader, writer, start))
}

pub(crate) fn terminal_caps() -> Result<Capabilities, AttachError> {
    // Mouse reporting is turned on only while the Tick asks for it, so the
    // user's terminal keeps its own selection otherwise.
    let hints = ProbeHints::new_from_env().mouse_reporting(Some(false));
    Capabilities::new_with_hints(hints)
        .map_err(|e| AttachError::Terminal(format!("cannot read terminal capabilities: {e}")))
}

/// A connection to the launcher of `opts`, hello exchanged: its socket
/// here, or over ssh through the relay on the instance's machine.
fn open_link(
    opts: &AttachOptions,
) -> Result<(UnixStream, Option<tickloop_client::ssh::SshLink>), AttachError> {
    dial(&opts.socket, opts.ssh.as_ref(), &opts.instance)
}

/// A connection to the launcher of `instance`, hello exchanged: at
/// `socket` here, or through ssh and the relay on `ssh`'s machine.
pub(crate) fn dial(
    socket: &Path,
    ssh: Option<&tickloop_client::ssh::SshHost>,
    instance: &str,
) -> Result<(UnixStream, Option<tickloop_client::ssh::SshLink>), AttachError> {
    match ssh {
        None => Ok((connect(socket)?, None)),
        Some(host) => {
            let to = tickloop_client::ssh::RelayTo::View(instance.to_string());
            let (stream, _greeting, link) =
                tickloop_client::ssh::dial(host, &to, false).map_err(|e| match e {
                    tickloop_client::ssh::RemoteError::Relay { ref message, .. }
                        if message.starts_with("no instance") =>
                    {
                        AttachError::NoSuchInstance(e.to_string())
                    }
                    other => AttachError::Remote(other),
                })?;
            let label = PathBuf::from(format!("ssh {host}: {instance}"));
            Ok((hello_on(stream, &label)?, Some(link)))
        }
    }
}

pub(crate) fn connect(path: &Path) -> Result<UnixStream, AttachError> {
    let stream = UnixStream::connect(path).map_err(|source| AttachError::Connect {
        path: path.to_path_buf(),
        source,
    })?;
    hello_on(stream, path)
}

/// Exchanges the view's hello on a fresh connection to a launcher.
fn hello_on(stream: UnixStream, path: &Path) -> Result<UnixStream, AttachError> {
    let connect_err = |source| AttachError::Connect {
        path: path.to_path_buf(),
        source,
    };
    stream
        .set_read_timeout(Some(HANDSHAKE_TIMEOUT))
        .map_err(connect_err)?;
    let mut writer = stream.try_clone().map_err(connect_err)?;
    send_line(&mut writer, &Hello::new(Role::View)).map_err(connect_err)?;
    let mut reader = BufReader::new(stream.try_clone().map_err(connect_err)?);
    let line =
        read_line(&mut reader)?.ok_or_else(|| AttachError::Lost("closed during hello".into()))?;
    let reply: HelloReply = serde_json::from_slice(&line)
        .map_err(|e| AttachError::Protocol(format!("bad hello reply: {e}")))?;
    if let Some(refused) = reply.refused {
        return Err(AttachError::Refused(refused));
    }
    // The reader above read only up to its newline, but may have buffered
    // more; the launcher sends nothing before the view's hello, so nothing
    // was lost by dropping it.
    Ok(stream)
}

fn send_line<T: serde::Serialize>(w: &mut impl Write, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    w.write_all(&line)?;
    w.flush()
}

/// One line, without its newline; `None` at end of stream (a line cut
/// short by the end counts as the end).
fn read_line(r: &mut impl BufRead) -> Result<Option<Vec<u8>>, AttachError> {
    match tickloop_client::framing::read_line_blocking(r, MAX_VIEW_LINE) {
        Ok(line) => Ok(line),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
            Err(AttachError::Protocol(e.to_string()))
        }
        Err(e) => Err(AttachError::Lost(e.to_string())),
    }
}

fn read_message(r: &mut impl BufRead) -> Result<Option<ToView>, AttachError> {
    match read_line(r)? {
        None => Ok(None),
        Some(line) => serde_json::from_slice(&line)
            .map(Some)
            .map_err(|e| AttachError::Protocol(format!("bad message: {e}"))),
    }
}

/// What the main loop hears from its helper threads.
pub(crate) enum Note {
    Frame(ToView),
    /// The activity overlay's data, fetched.
    Activity(crate::activity::Fetched),
    /// The calls of this instance waiting for approval.
    Approvals(Vec<tickloop_proto::wire::HeldCall>),
    /// How a decision made here went, for the last row.
    Decided(String),
    Lost(String),
    Broken(String),
    Signal,
    /// The view's terminal is gone (its input ended).
    TerminalGone,
}

fn session(
    term: &mut UnixTerminal,
    guard: &RestoreGuard,
    link: Link,
    snapshot: Snapshot,
    size: (u16, u16),
    opts: &AttachOptions,
) -> Result<SessionEnd, AttachError> {
    let Link {
        reader,
        writer,
        notes,
        note_tx,
        events,
        event_tx,
    } = link;
    let waker = term.waker();
    spawn_link(reader, writer, note_tx.clone(), waker.clone(), events);
    // Signals: detach cleanly.
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
        let mut signals =
            signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGQUIT, SIGHUP])
                .map_err(|e| AttachError::Terminal(format!("cannot handle signals: {e}")))?;
        let tx = note_tx.clone();
        let waker = waker.clone();
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                let _ = tx.send(Note::Signal);
                let _ = waker.wake();
            }
        });
    }
    // The activity overlay (prefix, `m`), while open, and what feeds it.
    let mut activity: Option<(crate::activity::ActivityView, crate::activity::Fetcher)> = None;
    // Calls of this instance waiting for approval: the last row says so;
    // the activity overlay prompts for them (y/n/v).
    let mut waiting: Vec<tickloop_proto::wire::HeldCall> = Vec::new();
    let mut prompt_whole = false;
    let _approvals =
        crate::activity::Fetcher::start_approvals(opts.endpoint(), opts.instance.clone(), {
            let tx = note_tx.clone();
            let waker = waker.clone();
            move |held| {
                let sent = tx.send(Note::Approvals(held)).is_ok();
                let _ = waker.wake();
                sent
            }
        });

    let mut prefix = Prefix::new(opts.prefix);
    // A note on the last row for a moment: the keys after attaching (only
    // when that row is blank: it never hides what the Tick shows there), the
    // key list after `?`, a pending prefix.
    let last_row_blank = snapshot
        .lines
        .get(usize::from(size.1.saturating_sub(1)))
        .is_none_or(|line| line.runs.is_empty());
    let mut flash: Option<(String, Instant)> =
        (opts.status.is_none() && last_row_blank).then(|| {
            (
                format!("{} · {}", opts.instance, prefix.reminder()),
                Instant::now() + FLASH,
            )
        });
    let size_note = format!("{} · {}", opts.instance, prefix.reminder());
    // The note after attaching is only "for a moment": it also ends as soon
    // as the Tick draws on the row it covers (it never hides the Tick's own
    // output for long).
    let mut attach_note = flash.is_some();
    let mut model = snapshot;
    let mut view = size;
    let mut shown = Surface::new(usize::from(view.0), usize::from(view.1));
    // Fingerprints of the Tick's rows as `shown` has them.
    let mut shown_keys: Vec<Option<u64>> = Vec::new();
    let mut mouse = MouseTranslator::default();
    let mut mouse_mode = MouseTracking::Off;
    let mut scroller = render::Scroller::default();
    let mut keys = render::InputReader::default();
    // The title the view's terminal was given last (the Tick's, passed on).
    let mut title = String::new();
    let mut pending_resize: Option<Instant> = None;
    let mut dirty = true;
    let _ = term.render(&[Change::ClearScreen(Default::default())]);

    loop {
        // Everything the launcher sent since the last turn, drawn once.
        loop {
            match notes.try_recv() {
                Ok(Note::Frame(ToView::Snapshot(s))) => {
                    let last_row = usize::from(view.1.saturating_sub(1));
                    if attach_note && s.lines.get(last_row) != model.lines.get(last_row) {
                        attach_note = false;
                        flash = None;
                    }
                    model = s;
                    dirty = true;
                }
                Ok(Note::Frame(ToView::Rows(rows))) => {
                    let last_row = view.1.saturating_sub(1);
                    if attach_note && rows.rows.iter().any(|(row, _)| *row >= last_row) {
                        attach_note = false;
                        flash = None;
                    }
                    model
                        .apply(rows)
                        .map_err(|e| AttachError::Protocol(e.to_string()))?;
                    dirty = true;
                }
                Ok(Note::Frame(ToView::Resized { .. })) => {}
                Ok(Note::Decided(text)) => {
                    flash = Some((text, Instant::now() + FLASH));
                    attach_note = false;
                    dirty = true;
                }
                Ok(Note::Approvals(held)) => {
                    if held != waiting {
                        if held.first().map(|h| &h.call) != waiting.first().map(|h| &h.call) {
                            prompt_whole = false;
                        }
                        waiting = held;
                        dirty = true;
                    }
                }
                Ok(Note::Activity(fetched)) => {
                    if let Some((panel, _)) = activity.as_mut() {
                        panel.update(fetched);
                        dirty = true;
                    }
                }
                Ok(Note::Frame(ToView::Bell)) => {
                    let _ = term.flush();
                    guard.write_raw(b"\x07");
                }
                Ok(Note::Frame(ToView::Clipboard { selection, text })) => {
                    if clipboard_allowed() {
                        let _ = term.flush();
                        guard.write_raw(&osc52(selection, &text));
                    }
                }
                Ok(Note::Frame(ToView::Ended { reason })) => {
                    return Ok(SessionEnd::Done(AttachOutcome::Ended { reason }))
                }
                Ok(Note::Lost(why)) => return Err(AttachError::Lost(why)),
                Ok(Note::Broken(why)) => return Err(AttachError::Protocol(why)),
                Ok(Note::Signal | Note::TerminalGone) => {
                    return Ok(SessionEnd::Done(AttachOutcome::Hangup))
                }
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => {
                    return Err(AttachError::Lost("the launcher connection ended".into()))
                }
            }
        }
        if model.title != title {
            title.clone_from(&model.title);
            let _ = term.flush();
            guard.write_raw(&osc_title(&title));
        }
        if flash
            .as_ref()
            .is_some_and(|(_, until)| Instant::now() >= *until)
        {
            flash = None;
            dirty = true;
        }
        if dirty {
            if scroller.mouse_mode(&model) != mouse_mode {
                mouse_mode = scroller.mouse_mode(&model);
                let _ = term.flush();
                guard.set_mouse(mouse_mode);
            }
            let asking = waiting.first().filter(|_| activity.is_none()).map(|held| {
                format!(
                    "{} asks to call {} {} · {} m to approve or refuse",
                    held.client.map_or("an agent", |c| c.label()),
                    held.tool,
                    held.args,
                    prefix.key.name()
                )
            });
            let (note, force) = match (&asking, &flash, &opts.status) {
                (Some(text), _, _) => (text.as_str(), true),
                (None, Some((text, _)), _) => (text.as_str(), true),
                (None, None, Some(status)) => (status.as_str(), true),
                (None, None, None) => (size_note.as_str(), false),
            };
            let mut frame = render::compose(&model, view.0, view.1, note, force);
            if let Some((panel, _)) = &activity {
                let now = time::OffsetDateTime::now_utc();
                let hint = format!("{} m closes", prefix.key.name());
                crate::activity::draw(&mut frame.surface, panel, now, &hint, false);
                if let Some(held) = waiting.first() {
                    let more = waiting.len() - 1;
                    crate::approval_prompt::draw(&mut frame.surface, held, more, prompt_whole);
                }
                // The overlay covers the Tick's rows: compare cells, never
                // fingerprints, and never scroll.
                frame.cursor = None;
                frame.scroll_rows = 0;
                frame.row_keys.clear();
            }
            let changes = render::frame_changes_keyed(&mut shown, &mut shown_keys, &frame);
            if term.render(&changes).is_err() || term.flush().is_err() {
                // The terminal is gone.
                return Ok(SessionEnd::Done(AttachOutcome::Hangup));
            }
            dirty = false;
        }

        if pending_resize.is_some_and(|at| Instant::now() >= at) {
            pending_resize = None;
            let _ = event_tx.send(ViewEvent::Resize {
                cols: view.0,
                rows: view.1,
            });
        }
        let wait = [pending_resize, flash.as_ref().map(|(_, until)| *until)]
            .into_iter()
            .flatten()
            .min()
            .map(|at| at.saturating_duration_since(Instant::now()));
        let input = match keys.poll(term, wait) {
            Ok(input) => input,
            // The terminal went away (SIGHUP may come too, or not at all
            // when the view is not the session leader).
            Err(_) => return Ok(SessionEnd::Done(AttachOutcome::Hangup)),
        };
        match input {
            None | Some(InputEvent::Wake) => {}
            Some(InputEvent::Key(key)) if prefix.pending() || prefix.key.matches(&key) => {
                let name = prefix.key.name();
                let (text, lasts) = match prefix.on_key(&key) {
                    PrefixAction::Detach => return Ok(SessionEnd::Done(AttachOutcome::Detached)),
                    PrefixAction::Monitor if activity.is_some() => {
                        activity = None;
                        (None, FLASH)
                    }
                    PrefixAction::Monitor => {
                        let tx = note_tx.clone();
                        let waker = waker.clone();
                        let fetcher = crate::activity::Fetcher::start(
                            opts.endpoint(),
                            opts.instance.clone(),
                            move |fetched| {
                                let sent = tx.send(Note::Activity(fetched)).is_ok();
                                let _ = waker.wake();
                                sent
                            },
                        );
                        activity =
                            Some((crate::activity::ActivityView::new(&opts.instance), fetcher));
                        (None, FLASH)
                    }
                    PrefixAction::SendPrefix if activity.is_some() => (None, FLASH),
                    PrefixAction::SendPrefix => {
                        let _ = event_tx.send(prefix.key.as_view_key());
                        (None, FLASH)
                    }
                    PrefixAction::Started => (
                        Some(format!(
                            "{name} … d detach · {name} send it · m activity · ? keys"
                        )),
                        Duration::from_secs(3600),
                    ),
                    PrefixAction::Help => (Some(prefix.help()), FLASH * 2),
                    PrefixAction::Unknown => (
                        Some(format!(
                            "that key means nothing after {name}; {name} ? lists the keys"
                        )),
                        FLASH,
                    ),
                    PrefixAction::Pass => (None, FLASH),
                };
                flash = text.map(|t| (t, Instant::now() + lasts));
                attach_note = false;
                dirty = true;
            }
            Some(InputEvent::Key(key))
                if activity.is_some()
                    && !waiting.is_empty()
                    && matches!(key.key, termwiz::input::KeyCode::Char('y' | 'n' | 'v')) =>
            {
                let held = waiting[0].clone();
                match key.key {
                    termwiz::input::KeyCode::Char('v') => prompt_whole = !prompt_whole,
                    termwiz::input::KeyCode::Char(c) => {
                        let approve = c == 'y';
                        waiting.remove(0);
                        prompt_whole = false;
                        let endpoint = opts.endpoint();
                        let tx = note_tx.clone();
                        let waker = waker.clone();
                        std::thread::spawn(move || {
                            let text =
                                crate::approval_prompt::decide(&endpoint, &held, approve, "attach");
                            let _ = tx.send(Note::Decided(text));
                            let _ = waker.wake();
                        });
                    }
                    _ => {}
                }
                dirty = true;
            }
            Some(InputEvent::Key(key)) if activity.is_some() => {
                if let Some((panel, _)) = activity.as_mut() {
                    match panel.on_key(&key) {
                        crate::activity::PanelKey::Consumed => {}
                        crate::activity::PanelKey::Close => activity = None,
                        crate::activity::PanelKey::Monitor => return Ok(SessionEnd::Monitor),
                    }
                }
                dirty = true;
            }
            // Mouse and paste stay out of the Tick while the overlay is up.
            Some(InputEvent::Mouse(_) | InputEvent::Paste(_)) if activity.is_some() => {}
            Some(InputEvent::Resized { cols, rows }) => {
                view = (clamp(cols), clamp(rows));
                shown = Surface::new(cols, rows);
                shown_keys.clear();
                let _ = term.render(&[Change::ClearScreen(Default::default())]);
                pending_resize = Some(Instant::now() + RESIZE_DEBOUNCE);
                dirty = true;
            }
            Some(event) => {
                match scroller.on_input(&event, &model, view.1) {
                    render::ScrollAction::Pass => {}
                    render::ScrollAction::Scroll(offset) => {
                        let _ = event_tx.send(ViewEvent::Scroll { offset });
                        dirty = true;
                        continue;
                    }
                    render::ScrollAction::LiveThenPass => {
                        let _ = event_tx.send(ViewEvent::Scroll { offset: 0 });
                        dirty = true;
                    }
                }
                for ev in render::input_events(&event, &mut mouse) {
                    if let ViewEvent::Mouse { x, y, .. } = ev {
                        // Only the part of the view that shows the Tick.
                        if x >= model.cols.min(view.0) || y >= model.rows.min(view.1) {
                            continue;
                        }
                    }
                    if event_tx.send(ev).is_err() {
                        return Err(AttachError::Lost("cannot send to the launcher".into()));
                    }
                }
            }
        }
    }
}

/// Whether clipboard writes of the Tick reach the view's terminal (OSC 52):
/// `TICKLOOP_CLIPBOARD` (`off`/`on`), else `clipboard` in the config file,
/// else yes (as tmux's `set-clipboard external`).
fn clipboard_allowed() -> bool {
    match std::env::var("TICKLOOP_CLIPBOARD").as_deref() {
        Ok("off" | "0" | "false" | "no") => false,
        Ok("on" | "1" | "true" | "yes") => true,
        _ => tickloop_client::config::load()
            .ok()
            .and_then(|c| c.clipboard)
            .unwrap_or(true),
    }
}

/// OSC 52: put `text` on the terminal's clipboard (or primary selection).
fn osc52(selection: bool, text: &str) -> Vec<u8> {
    use base64::Engine;
    let target = if selection { "p" } else { "c" };
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\x1b]52;{target};{encoded}\x07").into_bytes()
}

/// OSC 2: the window title, with control characters taken out so the title
/// cannot end the sequence early.
fn osc_title(title: &str) -> Vec<u8> {
    let clean: String = title.chars().filter(|c| !c.is_control()).collect();
    format!("\x1b]2;{clean}\x07").into_bytes()
}

/// Starts the two threads that carry a view's connection after its first
/// snapshot: each line from the launcher becomes a [`Note`] on `notes`
/// (followed by `waker.wake()`), and each [`ViewEvent`] received on `events`
/// goes to the launcher. When every sender of `events` is dropped the
/// connection is shut down both ways (a detach), which ends both threads.
pub(crate) fn spawn_link(
    mut reader: BufReader<UnixStream>,
    mut writer: UnixStream,
    notes: mpsc::Sender<Note>,
    waker: TerminalWaker,
    events: mpsc::Receiver<ViewEvent>,
) {
    // Launcher → view.
    std::thread::spawn(move || loop {
        let note = match read_message(&mut reader) {
            Ok(Some(msg)) => Note::Frame(msg),
            Ok(None) => Note::Lost("the launcher closed the connection".into()),
            Err(AttachError::Protocol(e)) => Note::Broken(e),
            Err(e) => Note::Lost(e.to_string()),
        };
        let last = !matches!(
            note,
            Note::Frame(
                ToView::Rows(_)
                    | ToView::Snapshot(_)
                    | ToView::Resized { .. }
                    | ToView::Bell
                    | ToView::Clipboard { .. }
            )
        );
        if notes.send(note).is_err() {
            return;
        }
        let _ = waker.wake();
        if last {
            return;
        }
    });
    // View → launcher, off the drawing thread.
    std::thread::spawn(move || {
        while let Ok(event) = events.recv() {
            if send_line(&mut writer, &event).is_err() {
                return;
            }
        }
        let _ = writer.shutdown(std::net::Shutdown::Both);
    });
}

/// The user's terminal as it was before attaching, and what the view turned
/// on, so every exit path (return, panic, signal) can put it back.
struct TtyState {
    tty: File,
    saved: libc::termios,
    mouse: MouseTracking,
    /// The view took the screen (alternate screen): give it back.
    screen: bool,
}

static TTY_STATE: Mutex<Option<TtyState>> = Mutex::new(None);
static PANIC_HOOK: Once = Once::new();

/// Restores the terminal when dropped, and from the panic hook.
pub(crate) struct RestoreGuard;

impl RestoreGuard {
    pub(crate) fn install() -> Result<Self, AttachError> {
        let tty = OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .map_err(|e| AttachError::Terminal(format!("cannot open /dev/tty: {e}")))?;
        // SAFETY: termios is plain data; tcgetattr fills it from a valid fd.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: the fd is open for the call's duration; `saved` is valid.
        if unsafe { libc::tcgetattr(tty.as_raw_fd(), &mut saved) } != 0 {
            return Err(AttachError::Terminal(format!(
                "cannot read the terminal's settings: {}",
                std::io::Error::last_os_error()
            )));
        }
        if let Ok(mut state) = TTY_STATE.lock() {
            *state = Some(TtyState {
                tty,
                saved,
                mouse: MouseTracking::Off,
                screen: false,
            });
        }
        PANIC_HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore_tty();
                previous(info);
            }));
        });
        Ok(RestoreGuard)
    }

    /// The view entered the alternate screen: restoring leaves it.
    pub(crate) fn entered_screen(&self) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                state.screen = true;
            }
        }
    }

    /// Mirror the Tick's mouse reporting on the user's terminal.
    pub(crate) fn set_mouse(&self, mode: MouseTracking) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                let seq: &[u8] = match mode {
                    MouseTracking::Off => b"\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1006l",
                    MouseTracking::Click => b"\x1b[?1003l\x1b[?1002l\x1b[?1000h\x1b[?1006h",
                    MouseTracking::Drag => b"\x1b[?1003l\x1b[?1002h\x1b[?1006h",
                    MouseTracking::Motion => b"\x1b[?1003h\x1b[?1006h",
                };
                let _ = state.tty.write_all(seq);
                state.mouse = mode;
            }
        }
    }

    /// Writes bytes to the view's terminal as they are (the bell, a title,
    /// a clipboard write), between frames.
    pub(crate) fn write_raw(&self, bytes: &[u8]) {
        if let Ok(mut guard) = TTY_STATE.lock() {
            if let Some(state) = guard.as_mut() {
                let _ = state.tty.write_all(bytes);
                let _ = state.tty.flush();
            }
        }
    }

    pub(crate) fn restore(&self) {
        restore_tty();
    }
}

impl Drop for RestoreGuard {
    fn drop(&mut self) {
        restore_tty();
    }
}

/// Put the user's terminal back (once); every error is ignored, the terminal
/// may be gone.
fn restore_tty() {
    // try_lock: the panic hook may run while the lock is held.
    let Ok(mut guard) = TTY_STATE.try_lock() else {
        return;
    };
    let Some(state) = guard.as_mut() else { return };
    if state.screen {
        let reset: &[u8] = b"\x1b[?1003l\x1b[?1002l\x1b[?1000l\x1b[?1006l\x1b[?1004l\x1b[?2004l\
            \x1b[>4;0m\x1b[0m\x1b[0 q\x1b[?25h\x1b[?1049l\r";
        let _ = state.tty.write_all(reset);
    }
    let _ = state.tty.flush();
    // SAFETY: valid fd and a termios saved from it.
    unsafe {
        libc::tcsetattr(state.tty.as_raw_fd(), libc::TCSANOW, &state.saved);
    }
    *guard = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_full_ids_and_unique_names() {
        let list = json!([
            {"id": "hosted:counter", "state": "running"},
            {"id": "shell:top", "state": "running"},
            {"id": "hosted:top", "state": "running"},
            {"id": "hosted:old", "state": "ended"},
        ]);
        let root = Path::new("/run/t");
        let (id, socket) = resolve(root, "counter", &list).unwrap();
        assert_eq!(id, "hosted:counter");
        assert_eq!(socket, Path::new("/run/t/l/hosted-counter.sock"));
        assert_eq!(resolve(root, "shell:top", &list).unwrap().0, "shell:top");
        assert!(matches!(
            resolve(root, "top", &list),
            Err(AttachError::NoSuchInstance(_))
        ));
        assert!(matches!(
            resolve(root, "nope", &list),
            Err(AttachError::NoSuchInstance(_))
        ));
        assert!(matches!(
            resolve(root, "old", &list),
            Err(AttachError::Ended(_))
        ));
    }
}
