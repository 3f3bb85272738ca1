//! The `tickloop loop run` driver: the harness interface of the Loop.
//!
//! Reads JSON lines on stdin — transcript messages, control commands, turn
//! ends, subscriptions — feeds them to the sans-I/O [`LoopCore`], and carries
//! out its effects: `enqueue` and `reply` JSON lines on stdout, the one timer
//! (tokio), the session's audit ledger, and `watch` streams of subscribed
//! Ticks (through a [`DeliverySource`]). End of input disposes the session:
//! a scheduled step is cancelled and a live run is stopped.
//!
//! Input lines (one JSON object each):
//!
//! ```text
//! {"type":"message","role":"user","source":{"kind":"user"},"content":[...]}
//! {"type":"turn_end","status":"completed"|"interrupted"|"error"}
//! {"type":"command","text":"/tick 3"}            (the person's; "by":"agent" for an agent's, which never arms a run)
//! {"type":"subscribe","instances":["hosted:counter"]}
//! ```
//!
//! Output lines: `{"type":"enqueue","runId":..,"step":..,"message":{..}}` and
//! `{"type":"reply","ok":..,"text":..}`. Malformed input lines are reported on
//! stderr and skipped.

use serde::Deserialize;
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio::time::Instant;

use tickloop_client::paths::RuntimeDir;
use tickloop_client::WatchItem;
use tickloop_proto::wire::{ClientKind, ClientReply};

use super::audit::{LedgerWriter, DEFAULT_AUDIT_DIR};
use super::machine::{
    Effect, Input, LoopCore, LoopSettings, Source, TranscriptMessage, TurnStatus,
};
use super::policy::{default_config_path, ConfigError, PolicySet};
use tickloop_proto::wire::WatchEvent;

/// Default delay between a completed terminal and the enqueue.
pub const DEFAULT_DELAY_MS: u64 = 1000;
/// Default interval of subscription `watch` streams.
pub const DEFAULT_INTERVAL_MS: u64 = 1000;

/// Options of `tickloop loop run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub session: String,
    pub delay_ms: u64,
    /// Ledger directory; `None`: `.pulse-tick-audit` under the working directory.
    pub audit_dir: Option<PathBuf>,
    /// `watch` interval of subscriptions.
    pub interval_ms: u64,
    /// Configuration file; `None`: `dirs::config_dir()/tickloop/loop.json`.
    pub config: Option<PathBuf>,
}

impl RunOptions {
    pub fn new(session: impl Into<String>) -> RunOptions {
        RunOptions {
            session: session.into(),
            delay_ms: DEFAULT_DELAY_MS,
            audit_dir: None,
            interval_ms: DEFAULT_INTERVAL_MS,
            config: None,
        }
    }
}

/// Why the driver could not start or had to stop.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("audit ledger {}: {source}", path.display())]
    Audit {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
}

/// What a [`DeliverySource`] reports.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceEvent {
    Watch(WatchEvent),
    /// The stream for these instances could not start or broke.
    Failed {
        instances: Vec<String>,
        message: String,
    },
}

/// Where subscription deliveries come from.
pub trait DeliverySource: Send + Sync {
    /// Starts streaming `watch` events of `instances` (every `interval_ms`)
    /// into `tx` until `tx` is closed or the instances end.
    fn watch(
        &self,
        instances: Vec<String>,
        interval_ms: u64,
        tx: mpsc::UnboundedSender<SourceEvent>,
    );
}

/// Watches through tickhost's client ([`tickloop_client::Client`]), starting
/// tickhost when it is not running: one connection and one thread per
/// `watch`, forwarding each event until the stream ends or the driver is gone.
#[derive(Debug, Clone)]
pub struct ClientWatchSource {
    /// The runtime directory (`RuntimeDir::locate()`).
    pub runtime_dir: PathBuf,
    /// This executable, to start tickhost (`__tickhost`) when needed.
    pub exe: PathBuf,
    /// The machine whose Ticks these are, over ssh (`loop run --host`);
    /// `None`: this one.
    pub host: Option<tickloop_client::ssh::SshHost>,
}

impl DeliverySource for ClientWatchSource {
    fn watch(
        &self,
        instances: Vec<String>,
        interval_ms: u64,
        tx: mpsc::UnboundedSender<SourceEvent>,
    ) {
        let source = self.clone();
        std::thread::spawn(move || {
            let fail = |message: String| {
                let _ = tx.send(SourceEvent::Failed {
                    instances: instances.clone(),
                    message,
                });
            };
            let endpoint = match &source.host {
                Some(host) => tickloop_client::Endpoint::remote(host.clone(), ClientKind::Loop),
                None => tickloop_client::Endpoint::local(
                    source.runtime_dir.clone(),
                    source.exe.clone(),
                    ClientKind::Loop,
                ),
            };
            let mut client = match endpoint.connect() {
                Ok(c) => c,
                Err(e) => return fail(format!("cannot reach tickhost: {e}")),
            };
            if let Err(e) = client.watch(instances.clone(), interval_ms) {
                return fail(format!("watch: {e}"));
            }
            loop {
                match client.next_watch_item() {
                    Ok(WatchItem::Event(event)) => {
                        if tx.send(SourceEvent::Watch(event)).is_err() {
                            return; // the driver is gone
                        }
                    }
                    Ok(WatchItem::Done(ClientReply::Error(e))) => {
                        return fail(format!("watch refused ({:?}): {}", e.kind, e.message))
                    }
                    Ok(WatchItem::Done(_)) => return,
                    Err(e) => return fail(format!("watch: {e}")),
                }
            }
        });
    }
}

/// One input line.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InputLine {
    Message {
        role: String,
        source: SourceIn,
        #[serde(default)]
        #[allow(dead_code)]
        content: Value,
    },
    Command {
        text: String,
        /// Who typed it: `person` (the default: the harness's command
        /// plane is the person's) or `agent` (which never arms a run).
        #[serde(default)]
        by: CommandBy,
    },
    TurnEnd {
        status: String,
    },
    Subscribe {
        instances: Vec<String>,
    },
}

/// Who a command line is from.
#[derive(Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum CommandBy {
    #[default]
    Person,
    Agent,
}

/// `"source": "user"` or `"source": {"kind": "plugin", "plugin": "..."}`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum SourceIn {
    Kind(String),
    Object {
        kind: String,
        #[serde(default)]
        plugin: Option<String>,
    },
}

impl From<SourceIn> for Source {
    fn from(s: SourceIn) -> Source {
        match s {
            SourceIn::Kind(kind) => Source { kind, plugin: None },
            SourceIn::Object { kind, plugin } => Source { kind, plugin },
        }
    }
}

fn parse_line(line: &str) -> Result<Option<Input>, String> {
    if line.trim().is_empty() {
        return Ok(None);
    }
    let parsed: InputLine = serde_json::from_str(line).map_err(|e| e.to_string())?;
    Ok(Some(match parsed {
        InputLine::Message { role, source, .. } => Input::Message(TranscriptMessage {
            role,
            source: source.into(),
        }),
        InputLine::Command {
            text,
            by: CommandBy::Person,
        } => Input::Command(text),
        InputLine::Command {
            text,
            by: CommandBy::Agent,
        } => Input::AgentCommand(text),
        InputLine::TurnEnd { status } => Input::TurnEnd(TurnStatus::parse(&status)),
        InputLine::Subscribe { instances } => Input::Subscribe(instances),
    }))
}

/// Loads the policies: `config` or the default path; a missing default file
/// means the built-in policy alone, a missing explicit file is an error.
pub fn load_policies(config: Option<&std::path::Path>) -> Result<PolicySet, ConfigError> {
    match config {
        Some(path) => {
            if !path.exists() {
                return Err(ConfigError {
                    path: path.to_path_buf(),
                    message: "no such file".into(),
                });
            }
            PolicySet::load(path)
        }
        None => match default_config_path() {
            Some(path) => PolicySet::load(&path),
            None => Ok(PolicySet::builtin()),
        },
    }
}

/// `tickloop loop run`: stdin/stdout of this process, subscriptions through
/// `tickloop watch` of this executable. Blocks until stdin ends.
pub fn run(opts: RunOptions) -> Result<(), RunError> {
    run_on(opts, None)
}

/// [`run`], the subscribed Ticks being those of `host` (over ssh) when given.
pub fn run_on(
    opts: RunOptions,
    host: Option<tickloop_client::ssh::SshHost>,
) -> Result<(), RunError> {
    let exe = std::env::current_exe().map_err(|source| RunError::Io {
        what: "cannot find the tickloop executable",
        source,
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| RunError::Io {
            what: "cannot start the runtime",
            source,
        })?;
    // Stdin is read on a plain thread (blocking reads), one line at a time,
    // at most INPUT_QUEUE lines ahead of the loop (a host that writes
    // faster waits on its pipe).
    let (line_tx, line_rx) = mpsc::channel(INPUT_QUEUE);
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::stdin().lock().lines() {
            let failed = line.is_err();
            if line_tx.blocking_send(line).is_err() || failed {
                return;
            }
        }
    });
    rt.block_on(run_with(
        opts,
        line_rx,
        std::io::stdout(),
        Arc::new(ClientWatchSource {
            runtime_dir: RuntimeDir::locate(),
            exe,
            host,
        }),
    ))
}

/// Input lines read ahead of the loop at most.
const INPUT_QUEUE: usize = 64;

/// The driver over any input, output and delivery source. `input` carries
/// the input lines; its end (all senders dropped) is the end of input.
pub async fn run_with<W: Write>(
    opts: RunOptions,
    mut input: mpsc::Receiver<std::io::Result<String>>,
    mut output: W,
    source: Arc<dyn DeliverySource>,
) -> Result<(), RunError> {
    if let Err(why) = super::ids::check_session_id(&opts.session) {
        return Err(RunError::Usage(format!("--session: {why}")));
    }
    let policies = load_policies(opts.config.as_deref())?;
    let audit_dir = match &opts.audit_dir {
        Some(d) => d.clone(),
        None => std::env::current_dir()
            .map_err(|source| RunError::Io {
                what: "cannot read the working directory",
                source,
            })?
            .join(DEFAULT_AUDIT_DIR),
    };
    let mut driver = Driver {
        core: LoopCore::new(
            LoopSettings {
                session_id: opts.session.clone(),
                delay_ms: opts.delay_ms,
                run_id_prefix: run_id_prefix(),
                first_step_after_next_turn: false,
                command_plane: "loop run".into(),
            },
            policies,
        ),
        audit_dir,
        ledger: None,
        timer: None,
        interval_ms: opts.interval_ms,
        source,
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<SourceEvent>();
    let mut line_no: u64 = 0;
    loop {
        let deadline = driver.timer.map(|(_, at)| at);
        let timer = async move {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let effects = tokio::select! {
            line = input.recv() => match line.transpose() {
                Ok(Some(line)) => {
                    line_no += 1;
                    match parse_line(&line) {
                        Ok(Some(input)) => driver.core.handle(input),
                        Ok(None) => continue,
                        Err(e) => {
                            eprintln!("tickloop loop run: input line {line_no} skipped: {e}");
                            continue;
                        }
                    }
                }
                Ok(None) => {
                    let effects = driver.core.handle(Input::Dispose);
                    driver.apply(effects, &mut output, &tx)?;
                    return Ok(());
                }
                Err(source) => {
                    let effects = driver.core.handle(Input::Dispose);
                    driver.apply(effects, &mut output, &tx)?;
                    return Err(RunError::Io { what: "reading stdin", source });
                }
            },
            _ = timer => match driver.timer.take() {
                Some((token, _)) => driver.core.handle(Input::TimerFired(token)),
                None => continue,
            },
            Some(event) = rx.recv() => match event {
                SourceEvent::Watch(WatchEvent::Delivery(d)) => driver.core.handle(Input::Delivery(d)),
                SourceEvent::Watch(WatchEvent::Ended(n)) => {
                    driver.core.handle(Input::Ended { instance: n.instance, ended: n.ended })
                }
                SourceEvent::Failed { instances, message } => {
                    eprintln!("tickloop loop run: subscription {}: {message}", instances.join(", "));
                    continue;
                }
            },
        };
        driver.apply(effects, &mut output, &tx)?;
    }
}

/// Unique per process, so a restarted Loop (or another hook call of Claude
/// Code's) never reuses a run id.
pub fn run_id_prefix() -> String {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("run-{millis:x}-{:x}", std::process::id())
}

struct Driver {
    core: LoopCore,
    audit_dir: PathBuf,
    ledger: Option<LedgerWriter>,
    /// The one timer: its token and deadline.
    timer: Option<(u64, Instant)>,
    interval_ms: u64,
    source: Arc<dyn DeliverySource>,
}

impl Driver {
    fn apply<W: Write>(
        &mut self,
        effects: Vec<Effect>,
        out: &mut W,
        tx: &mpsc::UnboundedSender<SourceEvent>,
    ) -> Result<(), RunError> {
        for effect in effects {
            match effect {
                Effect::Enqueue {
                    run_id,
                    step,
                    message,
                } => emit(
                    out,
                    &json!({"type": "enqueue", "runId": run_id, "step": step, "message": message}),
                )?,
                Effect::Reply { ok, text } => {
                    emit(out, &json!({"type": "reply", "ok": ok, "text": text}))?
                }
                Effect::ArmTimer { token, delay_ms } => {
                    let at = Instant::now() + std::time::Duration::from_millis(delay_ms);
                    self.timer = Some((token, at));
                }
                Effect::CancelTimer { token } => {
                    if self.timer.map(|(t, _)| t) == Some(token) {
                        self.timer = None;
                    }
                }
                Effect::Audit(record) => {
                    let ledger = match &mut self.ledger {
                        Some(l) => l,
                        None => {
                            let l = LedgerWriter::open(&self.audit_dir, &record.session_id)
                                .map_err(|source| RunError::Audit {
                                    path: self.audit_dir.clone(),
                                    source,
                                })?;
                            self.ledger.insert(l)
                        }
                    };
                    ledger.append(&record).map_err(|source| RunError::Audit {
                        path: ledger.path().to_path_buf(),
                        source,
                    })?;
                }
                Effect::Watch { instances } => {
                    self.source.watch(instances, self.interval_ms, tx.clone());
                }
            }
        }
        Ok(())
    }
}

fn emit<W: Write>(out: &mut W, value: &Value) -> Result<(), RunError> {
    let mut line = value.to_string();
    line.push('\n');
    out.write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|source| RunError::Io {
            what: "writing stdout",
            source,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_input_lines() {
        let m = parse_line(r#"{"type":"message","role":"user","source":{"kind":"plugin","plugin":"x"},"content":"tick"}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            m,
            Input::Message(TranscriptMessage {
                role: "user".into(),
                source: Source {
                    kind: "plugin".into(),
                    plugin: Some("x".into())
                }
            })
        );
        let m = parse_line(r#"{"type":"message","role":"user","source":"user"}"#)
            .unwrap()
            .unwrap();
        assert!(
            matches!(m, Input::Message(TranscriptMessage { source: Source { ref kind, .. }, .. }) if kind == "user")
        );
        assert_eq!(
            parse_line(r#"{"type":"turn_end","status":"interrupted"}"#).unwrap(),
            Some(Input::TurnEnd(TurnStatus::Interrupted))
        );
        assert_eq!(
            parse_line(r#"{"type":"command","text":"/tick 3"}"#).unwrap(),
            Some(Input::Command("/tick 3".into()))
        );
        assert_eq!(parse_line("   ").unwrap(), None);
        assert!(parse_line(r#"{"type":"message","role":"user"}"#).is_err());
        assert!(parse_line(r#"{"type":"dance"}"#).is_err());
        assert!(parse_line("not json").is_err());
    }
}
