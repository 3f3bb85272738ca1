//! Talking to Herdr: its CLI (found through `$HERDR_BIN_PATH`, else `herdr`
//! on PATH) for `plugin link` and `plugin pane open`, and its Unix socket
//! (`$HERDR_SOCKET_PATH`; one request per connection, one JSON line each way)
//! for `pane.get`, `pane.focus` and the agent reports.
//!
//! Herdr's errors (JSON on stderr for the CLI, `{"error":{...}}` on the
//! socket) become [`HerdrError::Herdr`] with Herdr's code, and
//! [`HerdrError::user_message`] turns each into one line saying what to do.

use crate::requests::HerdrRequest;
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use tickloop_client::framing::read_text_line_blocking;

/// How long one socket request may take.
pub const SOCKET_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest answer line read from herdr's socket.
const MAX_ANSWER_LINE: usize = 16 * 1024 * 1024;

/// Why a Herdr operation failed.
#[derive(Debug, thiserror::Error)]
pub enum HerdrError {
    /// Not running inside a Herdr pane.
    #[error("not inside Herdr: {0}")]
    NotInside(String),
    /// No `herdr` executable.
    #[error("Herdr is not installed: no `herdr` on PATH{0}; install Herdr 0.8 or newer, then run this again")]
    NotInstalled(String),
    /// The `herdr` executable could not be run.
    #[error("cannot run {path}: {source}")]
    Spawn {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Herdr answered with an error code.
    #[error("Herdr refused: {code}: {message}")]
    Herdr { code: String, message: String },
    /// Herdr rejected the command line (exit 2).
    #[error("Herdr rejected the command line: {0}")]
    Usage(String),
    /// Herdr's answer could not be understood.
    #[error("Herdr answered something unexpected: {0}")]
    BadAnswer(String),
    /// The socket could not be used.
    #[error("cannot talk to Herdr on {path}: {source}")]
    Socket {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl HerdrError {
    /// One line saying what went wrong and what to do.
    pub fn user_message(&self) -> String {
        match self {
            HerdrError::Herdr { code, message } => match code.as_str() {
                "plugin_not_found" | "plugin_pane_not_found" | "plugin_manifest_unavailable" => format!(
                    "the Tickloop plugin is not linked into Herdr, or is out of date ({code}: {message}); run `tickloop herdr install`, then try again"
                ),
                "plugin_disabled" => format!(
                    "the Tickloop plugin is disabled in Herdr ({message}); run `herdr plugin enable tickloop`, then try again"
                ),
                "invalid_request" | "invalid_params" => format!(
                    "Herdr refused Tickloop's request ({code}: {message}); this is a Tickloop bug, please report it with this line"
                ),
                "ui_busy" => format!(
                    "Herdr is showing another popup or modal (ui_busy); close it, then try again ({message})"
                ),
                "pane_not_found" | "unknown_pane" | "invalid_pane" => format!(
                    "Herdr has no such pane ({code}: {message}); it was closed — run the command again to open a new one"
                ),
                "plugin_requires_newer_herdr" => format!(
                    "this Herdr is too old for the Tickloop plugin ({message}); update Herdr to 0.8 or newer"
                ),
                _ => format!("Herdr refused: {code}: {message}"),
            },
            other => other.to_string(),
        }
    }

    /// Herdr's error code, when Herdr answered with one.
    pub fn code(&self) -> Option<&str> {
        match self {
            HerdrError::Herdr { code, .. } => Some(code),
            _ => None,
        }
    }
}

/// Where the Herdr we are inside of can be reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HerdrEnv {
    /// The `herdr` executable to run (`$HERDR_BIN_PATH`, else `herdr`).
    pub bin: PathBuf,
    /// `$HERDR_SOCKET_PATH`, when set.
    pub socket: Option<PathBuf>,
    /// `$HERDR_PANE_ID`: the pane this process runs in (not in a popup).
    pub pane_id: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

impl HerdrEnv {
    /// The Herdr of this process's environment; an error when not inside
    /// one (`HERDR_ENV` is not `1`).
    pub fn inside() -> Result<HerdrEnv, HerdrError> {
        if var("HERDR_ENV").as_deref() != Some("1") {
            return Err(HerdrError::NotInside(
                "HERDR_ENV is not 1; run this from a shell in a Herdr pane (outside Herdr, `tickloop attach ID` shows a Tick in this terminal)".into(),
            ));
        }
        Ok(Self::from_env())
    }

    /// Whatever the environment says, inside Herdr or not.
    pub fn from_env() -> HerdrEnv {
        HerdrEnv {
            bin: var("HERDR_BIN_PATH")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("herdr")),
            socket: var("HERDR_SOCKET_PATH").map(PathBuf::from),
            pane_id: var("HERDR_PANE_ID"),
        }
    }

    /// The socket, or an error saying it is unknown.
    pub fn socket(&self) -> Result<&Path, HerdrError> {
        self.socket.as_deref().ok_or_else(|| {
            HerdrError::NotInside("HERDR_SOCKET_PATH is not set; run this from a Herdr pane".into())
        })
    }

    /// Runs `herdr ARGS` and returns its stdout parsed as JSON (`Null` when
    /// it printed nothing, a string when it printed words); Herdr's JSON
    /// errors become [`HerdrError::Herdr`].
    pub fn run_json(&self, args: &[String]) -> Result<Value, HerdrError> {
        let answer = self.run_json_unlogged(args);
        if let Err(e) = &answer {
            log_failure(&format!("herdr {}", args.join(" ")), e);
        }
        answer
    }

    fn run_json_unlogged(&self, args: &[String]) -> Result<Value, HerdrError> {
        let bin = resolve_bin(&self.bin)?;
        let out = Command::new(&bin)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(|source| HerdrError::Spawn {
                path: bin.clone(),
                source,
            })?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let text = stdout.trim();
            if text.is_empty() {
                return Ok(Value::Null);
            }
            // Some commands answer in words (`plugin link` without --json).
            return Ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into())));
        }
        if let Some(err) = parse_error(&stderr).or_else(|| parse_error(&stdout)) {
            return Err(err);
        }
        let said = clip(if stderr.trim().is_empty() {
            stdout.trim()
        } else {
            stderr.trim()
        });
        if out.status.code() == Some(2) {
            return Err(HerdrError::Usage(said));
        }
        Err(HerdrError::BadAnswer(format!(
            "`herdr {}` failed ({}): {said}",
            args.join(" "),
            out.status
        )))
    }
}

/// `bin` when it is a path, else its place on PATH.
pub fn resolve_bin(bin: &Path) -> Result<PathBuf, HerdrError> {
    if bin.components().count() > 1 {
        return Ok(bin.to_path_buf());
    }
    find_on_path(bin).ok_or_else(|| HerdrError::NotInstalled(String::new()))
}

/// The first executable named `name` on PATH.
pub fn find_on_path(name: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    line.chars().take(300).collect()
}

/// Herdr's error JSON (`{"error":{"code","message"}}`, or the object
/// itself) in `text`, if any.
pub fn parse_error(text: &str) -> Option<HerdrError> {
    let text = text.trim();
    let value: Value = serde_json::from_str(text).ok().or_else(|| {
        text.lines()
            .find_map(|l| serde_json::from_str(l.trim()).ok())
    })?;
    let err = value.get("error").unwrap_or(&value);
    let code = err.get("code")?;
    let code = code
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| code.to_string());
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Some(HerdrError::Herdr { code, message })
}

/// Where a pane is, as Herdr's `PaneInfo` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PanePlace {
    pub pane_id: String,
    pub workspace_id: Option<String>,
    pub tab_id: Option<String>,
    pub cwd: Option<String>,
}

impl PanePlace {
    /// From a `PaneInfo` object.
    pub fn from_info(info: &Value) -> Option<PanePlace> {
        let text = |k: &str| info.get(k).and_then(Value::as_str).map(str::to_string);
        Some(PanePlace {
            pane_id: text("pane_id")?,
            workspace_id: text("workspace_id"),
            tab_id: text("tab_id"),
            cwd: text("cwd"),
        })
    }
}

/// What `plugin.pane.open` answered: the new pane, or none (a popup).
pub fn opened_pane(answer: &Value) -> Result<Option<PanePlace>, HerdrError> {
    let result = answer.get("result").unwrap_or(answer);
    match result.get("type").and_then(Value::as_str) {
        Some("plugin_pane_opened") => {
            let pane = result
                .pointer("/plugin_pane/pane")
                .and_then(PanePlace::from_info);
            match pane {
                Some(place) => Ok(Some(place)),
                None => Err(HerdrError::BadAnswer(format!(
                    "plugin_pane_opened without a pane id: {}",
                    clip(&answer.to_string())
                ))),
            }
        }
        Some("ok") => Ok(None),
        _ => Err(HerdrError::BadAnswer(format!(
            "not a plugin pane answer: {}",
            clip(&answer.to_string())
        ))),
    }
}

/// Where Herdr's refusals and unreachable sockets are logged (set once by
/// the process; unset, they go to stderr).
static LOG: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Logs every failed Herdr request, with its request, to `path` (appended;
/// the file is restarted when it passes 1 MiB).
pub fn log_to(path: PathBuf) {
    let _ = LOG.set(path);
}

/// The log file, when one was set.
pub fn log_path() -> Option<&'static Path> {
    LOG.get().map(PathBuf::as_path)
}

fn log_failure(what: &str, error: &HerdrError) {
    let line = format!(
        "{} {what}: {error}\n",
        time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    );
    match LOG.get() {
        Some(path) => {
            use std::fs::OpenOptions;
            if std::fs::metadata(path).is_ok_and(|m| m.len() > 1 << 20) {
                let _ = std::fs::remove_file(path);
            }
            if let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path) {
                let _ = f.write_all(line.as_bytes());
            }
        }
        None => eprint!("tickloop: herdr: {line}"),
    }
}

/// Sends one typed request (see [`crate::requests`]) and returns `result`.
pub fn send<R: HerdrRequest>(socket: &Path, request: &R) -> Result<Value, HerdrError> {
    send_within(socket, request, SOCKET_TIMEOUT)
}

/// [`send`] with its own timeout.
pub fn send_within<R: HerdrRequest>(
    socket: &Path,
    request: &R,
    timeout: Duration,
) -> Result<Value, HerdrError> {
    let params = serde_json::to_value(request)
        .map_err(|e| HerdrError::BadAnswer(format!("cannot encode {}: {e}", R::METHOD)))?;
    request_within(socket, R::METHOD, params, timeout)
}

/// One socket request: sends `{"id","method","params"}`, returns `result`.
pub fn request(socket: &Path, method: &str, params: Value) -> Result<Value, HerdrError> {
    request_within(socket, method, params, SOCKET_TIMEOUT)
}

/// [`request`] with its own timeout (for the last report of an exiting view).
/// Every failure is logged with its request (see [`log_to`]).
pub fn request_within(
    socket: &Path,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, HerdrError> {
    let logged = format!("{method} {params}");
    let answer = exchange(socket, method, params, timeout);
    if let Err(e) = &answer {
        log_failure(&logged, e);
    }
    answer
}

fn exchange(
    socket: &Path,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<Value, HerdrError> {
    let io = |source| HerdrError::Socket {
        path: socket.to_path_buf(),
        source,
    };
    let mut stream = UnixStream::connect(socket).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    stream.set_write_timeout(Some(timeout)).map_err(io)?;
    let id = format!("tickloop:{method}");
    let mut line = json!({"id": id, "method": method, "params": params}).to_string();
    line.push('\n');
    stream.write_all(line.as_bytes()).map_err(io)?;
    stream.flush().map_err(io)?;
    let answer = read_text_line_blocking(&mut BufReader::new(&stream), MAX_ANSWER_LINE)
        .map_err(io)?
        .unwrap_or_default();
    read_answer(&answer).map_err(|e| match e {
        HerdrError::BadAnswer(why) if answer.trim().is_empty() => {
            HerdrError::BadAnswer(format!("{why} to {method} on {}", socket.display()))
        }
        other => other,
    })
}

/// The `result` of one answer line from Herdr's socket, or the error it
/// carries (or says it is).
pub fn read_answer(answer: &str) -> Result<Value, HerdrError> {
    if answer.trim().is_empty() {
        return Err(HerdrError::BadAnswer("no answer".to_string()));
    }
    let value: Value = serde_json::from_str(answer.trim())
        .map_err(|e| HerdrError::BadAnswer(format!("{e}: {}", clip(answer))))?;
    if value.get("error").is_some() {
        return Err(parse_error(answer.trim()).unwrap_or_else(|| {
            HerdrError::BadAnswer(format!("an error without a code: {}", clip(answer)))
        }));
    }
    Ok(value.get("result").cloned().unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opened_panes_and_popups_are_read() {
        let split = json!({"id":"cli:plugin","result":{"type":"plugin_pane_opened","plugin_pane":{"plugin_id":"tickloop","entrypoint":"view","pane":{"pane_id":"w1:p4","workspace_id":"w1","tab_id":"w1:t2"}}}});
        let place = opened_pane(&split).unwrap().expect("a pane");
        assert_eq!(place.pane_id, "w1:p4");
        assert_eq!(place.tab_id.as_deref(), Some("w1:t2"));
        let popup = json!({"result":{"type":"ok"}});
        assert_eq!(opened_pane(&popup).unwrap(), None);
        assert!(opened_pane(&json!({"result":{"type":"pong"}})).is_err());
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = parse_error(r#"{"id":"cli:plugin","error":{"code":"plugin_not_found","message":"no plugin tickloop"}}"#)
            .expect("an error");
        assert_eq!(e.code(), Some("plugin_not_found"));
        assert!(e.user_message().contains("tickloop herdr install"));
        let busy = parse_error(r#"{"error":{"code":"ui_busy","message":"a popup is open"}}"#)
            .expect("an error");
        assert!(busy.user_message().contains("close it"));
        assert!(!busy.user_message().contains('\n'));
        assert!(parse_error("not json").is_none());
    }
}
