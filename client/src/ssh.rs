//! Dialling Ticks on other machines, over the user's own OpenSSH: the
//! local half (the far half, the relay, is in the `tickhost` crate).
//!
//! No listener and no network protocol of Tickloop's own: the local side
//! starts the system `ssh` (or `TICKLOOP_SSH`, a shell command line like
//! `GIT_SSH_COMMAND`) with `tickloop __relay` as the remote command. The
//! relay (`tickhost::relay`) connects, on the far side, to that user's tickhost
//! socket (starting tickhost exactly as a local CLI does) or to one
//! launcher's attach socket, prints one greeting line naming its build, and
//! then copies bytes both ways between ssh's stdio and that socket. The
//! same wire protocol (hello, requests, the attach protocol) runs end to
//! end through it.
//!
//! On the local side [`dial`] hands ssh one end of a Unix socket pair as
//! its stdin and stdout and keeps the other: the caller gets a plain
//! [`UnixStream`], so [`crate::Client`] and the views use one code
//! path (and the same bounded waits) for a local socket and for ssh.
//! [`SshLink`] owns the ssh process and what it said on stderr.

use crate::framing::{read_line_blocking, read_text_line_blocking};
use crate::paths::parse_id;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the far side may take to greet (ssh's own connection, the
/// user's authentication and the relay starting tickhost there).
/// `TICKLOOP_SSH_TIMEOUT_MS` replaces it.
pub const GREETING_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest greeting line accepted (it carries the remote environment
/// when asked for).
const MAX_GREETING: usize = 1024 * 1024;
/// The longest package list read from a relay (one JSON line).
const MAX_PACKAGE_LIST: usize = 16 * 1024 * 1024;
/// How the relay's error begins when tickhost is not running there.
pub const NOT_RUNNING: &str = "tickhost is not running";
/// The key of the relay's greeting line.
pub const GREETING_KEY: &str = "tickloop_relay";

/// A `--host` value: `[ssh://][USER@]HOST[:PORT]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SshHost {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
}

/// Why a `--host` value was refused.
#[derive(Debug, thiserror::Error)]
#[error("--host {given:?}: {why}; expected [ssh://][USER@]HOST[:PORT], like build-box, alice@build-box or ssh://alice@10.0.0.5:2222")]
pub struct HostError {
    pub given: String,
    pub why: String,
}

fn host_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}

impl SshHost {
    /// Parses a `--host` value. HOST may be an ssh config alias, a name or
    /// an address (`[::1]` for IPv6 with a port); nothing may start with
    /// `-` (it would be an ssh option).
    pub fn parse(given: &str) -> Result<SshHost, HostError> {
        let fail = |why: &str| HostError {
            given: given.to_string(),
            why: why.to_string(),
        };
        let rest = given.strip_prefix("ssh://").unwrap_or(given);
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() {
            return Err(fail("it is empty"));
        }
        let (user, hostport) = match rest.rsplit_once('@') {
            Some((user, hp)) => (Some(user), hp),
            None => (None, rest),
        };
        if let Some(user) = user {
            if user.is_empty() || user.starts_with('-') || !user.chars().all(host_char) {
                return Err(fail(
                    "the user name may hold only letters, digits, . _ - and must not start with -",
                ));
            }
        }
        let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
            let (addr, after) = inner
                .split_once(']')
                .ok_or_else(|| fail("an opening [ has no closing ]"))?;
            if addr.is_empty()
                || !addr
                    .chars()
                    .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
            {
                return Err(fail("inside [ ] goes an IPv6 address"));
            }
            let port = match after {
                "" => None,
                p => Some(
                    p.strip_prefix(':')
                        .ok_or_else(|| fail("after ] comes :PORT or nothing"))?,
                ),
            };
            (addr.to_string(), port)
        } else {
            match hostport.split_once(':') {
                Some((h, p)) => (h.to_string(), Some(p)),
                None => (hostport.to_string(), None),
            }
        };
        if host.is_empty() {
            return Err(fail("the host name is empty"));
        }
        if host.starts_with('-') || (!hostport.starts_with('[') && !host.chars().all(host_char)) {
            return Err(fail(
                "the host may hold only letters, digits, . _ - and must not start with -",
            ));
        }
        let port = match port {
            None => None,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(fail("PORT is a number from 1 to 65535")),
            },
        };
        Ok(SshHost {
            user: user.map(str::to_string),
            host,
            port,
        })
    }

    /// The label ids and messages use: `[USER@]HOST[:PORT]`, as given
    /// without `ssh://`.
    pub fn label(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let mut s = match &self.user {
            Some(u) => format!("{u}@{host}"),
            None => host,
        };
        if let Some(p) = self.port {
            s.push_str(&format!(":{p}"));
        }
        s
    }

    /// What ssh is given as the destination: `[USER@]HOST`.
    fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }
}

impl std::fmt::Display for SshHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// Splits `HOST:KIND:NAME` (an id of another machine, as the Monitor with
/// several hosts shows it and `herdr open` takes it) into the host and the
/// id there; `None` for an id of this machine (`KIND:NAME`, or a bare NAME).
pub fn split_host_id(id: &str) -> Option<(SshHost, String)> {
    let mut parts = id.rsplitn(3, ':');
    let name = parts.next()?;
    let kind = parts.next()?;
    let host = parts.next()?;
    let local = format!("{kind}:{name}");
    parse_id(&local)?;
    let host = SshHost::parse(host).ok()?;
    Some((host, local))
}

/// What the relay connects to on the far side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelayTo {
    /// That user's tickhost (started when not running).
    Tickhost,
    /// That user's tickhost only when it runs (`shutdown` starts nothing).
    RunningTickhost,
    /// The attach socket of the launcher of instance `KIND:NAME`.
    View(String),
    /// No socket: the relay prints the Tick packages found there (one JSON
    /// line after the greeting) and ends.
    Packages,
}

impl RelayTo {
    /// The `--to` argument of `__relay`.
    pub fn arg(&self) -> String {
        match self {
            RelayTo::Tickhost => "tickhost".into(),
            RelayTo::RunningTickhost => "running-tickhost".into(),
            RelayTo::View(id) => format!("view:{id}"),
            RelayTo::Packages => "packages".into(),
        }
    }

    /// Parses the `--to` argument.
    pub fn parse(arg: &str) -> Result<RelayTo, String> {
        if arg == "tickhost" {
            return Ok(RelayTo::Tickhost);
        }
        if arg == "running-tickhost" {
            return Ok(RelayTo::RunningTickhost);
        }
        if arg == "packages" {
            return Ok(RelayTo::Packages);
        }
        match arg.strip_prefix("view:") {
            Some(id) if parse_id(id).is_some() => Ok(RelayTo::View(id.to_string())),
            _ => Err(format!(
                "--to {arg:?}: expected `tickhost` or `view:KIND:NAME`"
            )),
        }
    }
}

/// Why reaching the far side failed.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("cannot run ssh ({command}): {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("ssh to {host} failed ({status}): {stderr}")]
    Ssh {
        host: String,
        status: String,
        stderr: String,
    },
    #[error("tickloop is not installed on {host} (the remote shell said: {stderr}): install this build there (`tickloop version` here: {local}) on the PATH of a non-interactive ssh session (`ssh {host} 'command -v tickloop'` must find it), or set TICKLOOP_REMOTE_TICKLOOP to its path there")]
    NotInstalled {
        host: String,
        local: String,
        stderr: String,
    },
    #[error("the tickloop on {host} has no relay (an older build?; it said: {stderr}): install this build there (`tickloop version` here: {local})")]
    NoRelay {
        host: String,
        local: String,
        stderr: String,
    },
    #[error("version mismatch: {host} runs tickloop {remote}, this machine runs tickloop {local}; install the same build on both machines (copy this tickloop to {host}, or build the same commit there)")]
    VersionMismatch {
        host: String,
        local: String,
        remote: String,
    },
    #[error("on {host}: {message}")]
    Relay { host: String, message: String },
    #[error("no answer from tickloop on {host} within {:.0} s (is ssh asking for something? try `ssh {host} tickloop version`)", .waited.as_secs_f64())]
    Timeout { host: String, waited: Duration },
    #[error("the ssh connection to {host} broke while connecting: {detail}")]
    Lost { host: String, detail: String },
}

impl RemoteError {
    /// The CLI's error kind (docs/cli.md) for this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            RemoteError::NotInstalled { .. } | RemoteError::NoRelay { .. } => {
                "remote_not_installed"
            }
            RemoteError::VersionMismatch { .. } => "version_mismatch",
            RemoteError::Relay { message, .. } if message.starts_with("no instance") => {
                "no_such_instance"
            }
            _ => "unreachable",
        }
    }
}

/// This build, as the relay's greeting and the mismatch message name it
/// (`0.1.0 (wire ..., commit ...)`); set once by the binary ([`set_build`]).
static BUILD: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Says, once per process, how this build names itself (the binary knows
/// its commit; this library does not).
pub fn set_build(line: String) {
    let _ = BUILD.set(line);
}

pub fn this_build() -> String {
    BUILD
        .get()
        .cloned()
        .unwrap_or_else(|| tickloop_proto::wire::wire_version().to_string())
}

/// The relay's greeting, as the local side reads it.
#[derive(Debug, Clone)]
pub struct Greeting {
    /// The far side's wire version.
    pub wire: String,
    /// The far side's build line.
    pub build: String,
    /// The far side's home directory (where a remote `open` runs by default).
    pub home: Option<String>,
    /// The far side's environment (asked with `want_env`): what a Tick
    /// opened there inherits, as a local Tick inherits the CLI's.
    pub env: Vec<(String, String)>,
}

/// The ssh process of one connection, and what it said on stderr. Dropping
/// it waits briefly for ssh to exit (its stdin closed, the relay ends), then
/// kills it.
pub struct SshLink {
    child: Child,
    stderr: Arc<Mutex<Vec<String>>>,
    pub host: SshHost,
}

impl SshLink {
    /// The ssh process id (tests kill it to break the connection).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// ssh's last lines on stderr, joined.
    pub fn stderr(&self) -> String {
        stderr_text(&self.stderr)
    }
}

impl Drop for SshLink {
    fn drop(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() >= deadline => break,
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stderr_text(lines: &Arc<Mutex<Vec<String>>>) -> String {
    let lines = lines.lock().map(|l| l.clone()).unwrap_or_default();
    let text = lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ");
    if text.is_empty() {
        "nothing on stderr".into()
    } else {
        text
    }
}

/// Quotes `word` for the remote shell (ssh passes the command as one line).
fn shell_quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.,:/=+@%".contains(c))
    {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// The ssh command with its arguments: `TICKLOOP_SSH` (a shell command
/// line, run by `sh -c` like `GIT_SSH_COMMAND`) or `ssh`, then `-T` (no
/// terminal: the relay's bytes pass untouched, and no escape character),
/// the port, the destination and the remote command.
fn ssh_command(host: &SshHost, remote: &str) -> (Command, String) {
    let mut args: Vec<String> = vec!["-T".into()];
    if let Some(port) = host.port {
        args.push("-p".into());
        args.push(port.to_string());
    }
    args.push("--".into());
    args.push(host.destination());
    args.push(remote.to_string());
    match std::env::var("TICKLOOP_SSH")
        .ok()
        .filter(|s| !s.trim().is_empty())
    {
        Some(line) => {
            let mut command = Command::new("sh");
            command
                .arg("-c")
                .arg(format!("exec {line} \"$@\""))
                .arg("tickloop-ssh")
                .args(&args);
            (command, format!("{line} {}", args.join(" ")))
        }
        None => {
            let mut command = Command::new("ssh");
            command.args(&args);
            (command, format!("ssh {}", args.join(" ")))
        }
    }
}

fn bound() -> Duration {
    std::env::var("TICKLOOP_SSH_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|ms| *ms > 0)
        .map(Duration::from_millis)
        .unwrap_or(GREETING_TIMEOUT)
}

/// Starts ssh to `host` running `tickloop __relay --to TO`, reads the
/// relay's greeting (refusing another build) and returns the stream that
/// now reaches TO on the far side, the greeting and the ssh process.
/// `want_env`: the greeting carries the remote environment (for `open`).
pub fn dial(
    host: &SshHost,
    to: &RelayTo,
    want_env: bool,
) -> Result<(UnixStream, Greeting, SshLink), RemoteError> {
    let label = host.label();
    let local_wire = tickloop_proto::wire::wire_version();
    let lost = |detail: String| RemoteError::Lost {
        host: label.clone(),
        detail,
    };
    let (ours, theirs) = UnixStream::pair().map_err(|e| lost(format!("socketpair: {e}")))?;
    let theirs: OwnedFd = theirs.into();
    let theirs_too = theirs
        .try_clone()
        .map_err(|e| lost(format!("socketpair: {e}")))?;
    let remote_exe = std::env::var("TICKLOOP_REMOTE_TICKLOOP")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "tickloop".into());
    let mut remote = format!(
        "{remote_exe} __relay --to {} --wire {}",
        shell_quote(&to.arg()),
        shell_quote(local_wire)
    );
    if want_env {
        remote.push_str(" --env");
    }
    let (mut command, shown) = ssh_command(host, &remote);
    command
        .stdin(Stdio::from(theirs))
        .stdout(Stdio::from(theirs_too))
        .stderr(Stdio::piped());
    let spawned = command.spawn();
    // The command holds ssh's ends of the pair: only ssh may keep them, so
    // that its exit is an end of stream here.
    drop(command);
    let mut child = spawned.map_err(|source| RemoteError::Spawn {
        command: shown.clone(),
        source,
    })?;
    let stderr: Arc<Mutex<Vec<String>>> = Arc::default();
    if let Some(pipe) = child.stderr.take() {
        let lines = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut kept) = lines.lock() {
                    kept.push(line);
                    let excess = kept.len().saturating_sub(20);
                    kept.drain(..excess);
                }
            }
        });
    }
    let link = SshLink {
        child,
        stderr,
        host: host.clone(),
    };
    let waited = bound();
    // A login script may print before the relay runs (a greeting of the
    // shell's own): such lines are skipped, up to a bound.
    let mut noise: Vec<String> = Vec::new();
    let body = loop {
        let line = match read_greeting(&ours, waited) {
            Ok(line) => line,
            Err(e) => return Err(classify_failure(link, e, waited, &noise)),
        };
        let greeting = serde_json::from_slice::<Value>(&line)
            .ok()
            .and_then(|mut v| v.get_mut(GREETING_KEY).map(Value::take));
        if let Some(body) = greeting {
            break body;
        }
        noise.push(format!("{:.200}", String::from_utf8_lossy(&line)));
        if noise.len() >= 64 {
            return Err(RemoteError::NoRelay {
                host: label,
                local: this_build(),
                stderr: format!(
                    "64 lines that are not a relay's greeting, the first: {}",
                    noise[0]
                ),
            });
        }
    };
    let text = |key: &str| body.get(key).and_then(Value::as_str).map(str::to_string);
    let greeting = Greeting {
        wire: text("wire").unwrap_or_default(),
        build: text("build").unwrap_or_else(|| "of an unknown build".into()),
        home: text("home"),
        env: body
            .get("env")
            .and_then(Value::as_array)
            .map(|pairs| {
                pairs
                    .iter()
                    .filter_map(|p| Some((p.get(0)?.as_str()?.into(), p.get(1)?.as_str()?.into())))
                    .collect()
            })
            .unwrap_or_default(),
    };
    if greeting.wire != local_wire {
        return Err(RemoteError::VersionMismatch {
            host: label,
            local: this_build(),
            remote: greeting.build,
        });
    }
    if let Some(message) = text("error") {
        return Err(RemoteError::Relay {
            host: label,
            message,
        });
    }
    ours.set_read_timeout(None)
        .map_err(|e| lost(e.to_string()))?;
    Ok((ours, greeting, link))
}

/// The Tick packages found on `host` (`tickloop packages --host`): the same
/// JSON list `tickloop packages` prints there.
pub fn packages(host: &SshHost) -> Result<Value, RemoteError> {
    let (stream, _greeting, _link) = dial(host, &RelayTo::Packages, false)?;
    let lost = |detail: String| RemoteError::Lost {
        host: host.label(),
        detail,
    };
    stream
        .set_read_timeout(Some(bound()))
        .map_err(|e| lost(e.to_string()))?;
    let line = read_text_line_blocking(&mut BufReader::new(&stream), MAX_PACKAGE_LIST)
        .map_err(|e| lost(format!("the package list: {e}")))?
        .unwrap_or_default();
    serde_json::from_str(&line).map_err(|e| lost(format!("an unreadable package list: {e}")))
}

/// Why no greeting came.
enum NoGreeting {
    Closed,
    TimedOut,
    Io(std::io::Error),
    TooLong,
}

/// Reads the greeting line byte by byte (a one-byte buffer), so nothing
/// after it is taken from the stream, all within `waited`.
fn read_greeting(stream: &UnixStream, waited: Duration) -> Result<Vec<u8>, NoGreeting> {
    let deadline = Instant::now() + waited;
    let mut reader = BufReader::with_capacity(1, UntilDeadline { stream, deadline });
    match read_line_blocking(&mut reader, MAX_GREETING) {
        Ok(Some(line)) => Ok(line),
        Ok(None) => Err(NoGreeting::Closed),
        Err(e) => Err(match e.kind() {
            std::io::ErrorKind::UnexpectedEof => NoGreeting::Closed,
            std::io::ErrorKind::InvalidData => NoGreeting::TooLong,
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => NoGreeting::TimedOut,
            _ => NoGreeting::Io(e),
        }),
    }
}

/// A stream whose every read waits at most until `deadline`.
struct UntilDeadline<'a> {
    stream: &'a UnixStream,
    deadline: Instant,
}

impl Read for UntilDeadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(std::io::ErrorKind::TimedOut.into());
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

/// Says why ssh ended before the relay greeted: 127 is the remote shell's
/// "command not found", 255 ssh's own failure, anything else a remote
/// tickloop that does not know `__relay`.
fn classify_failure(
    mut link: SshLink,
    why: NoGreeting,
    waited: Duration,
    noise: &[String],
) -> RemoteError {
    let host = link.host.label();
    if let NoGreeting::TimedOut = why {
        let _ = link.child.kill();
        return RemoteError::Timeout { host, waited };
    }
    // ssh closed its end: it exits at once; wait for its status (bounded).
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        match link.child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => break None,
        }
    };
    // Its stderr reader gets the last lines once ssh exited.
    std::thread::sleep(Duration::from_millis(50));
    let stderr = link.stderr();
    match status.and_then(|s| s.code()) {
        Some(127) => RemoteError::NotInstalled {
            host,
            local: this_build(),
            stderr,
        },
        Some(255) | None => RemoteError::Ssh {
            host,
            status: status.map_or("did not exit".into(), |s| s.to_string()),
            stderr,
        },
        Some(_) if stderr.contains("command not found") => RemoteError::NotInstalled {
            host,
            local: this_build(),
            stderr,
        },
        Some(code) => match why {
            NoGreeting::TooLong => RemoteError::Lost {
                host,
                detail: "the greeting was longer than 1 MiB".into(),
            },
            NoGreeting::Io(e) => RemoteError::Lost {
                host,
                detail: e.to_string(),
            },
            _ => RemoteError::NoRelay {
                host,
                local: this_build(),
                stderr: match noise.first() {
                    None => format!("exit {code}: {stderr}"),
                    Some(first) => format!("exit {code}: {stderr}; it printed: {first}"),
                },
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse() {
        let h = SshHost::parse("ssh://alice@box.example:2222").unwrap();
        assert_eq!(h.user.as_deref(), Some("alice"));
        assert_eq!(h.host, "box.example");
        assert_eq!(h.port, Some(2222));
        assert_eq!(h.label(), "alice@box.example:2222");
        assert_eq!(SshHost::parse("box").unwrap().label(), "box");
        let v6 = SshHost::parse("[::1]:22").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", Some(22)));
        assert_eq!(v6.label(), "[::1]:22");
        for bad in [
            "",
            "-oProxyCommand=x",
            "a b",
            "box:0",
            "box:99999",
            "@box",
            "box:x",
            "[::1",
            "a;b",
        ] {
            assert!(SshHost::parse(bad).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn relay_targets_round_trip() {
        for to in [
            RelayTo::Tickhost,
            RelayTo::RunningTickhost,
            RelayTo::Packages,
            RelayTo::View("hosted:a-1".into()),
        ] {
            assert_eq!(RelayTo::parse(&to.arg()).unwrap(), to);
        }
        assert!(RelayTo::parse("view:nope").is_err());
        assert!(RelayTo::parse("other").is_err());
    }

    #[test]
    fn host_prefixed_ids_split() {
        let (host, id) = split_host_id("box:hosted:c").unwrap();
        assert_eq!((host.label().as_str(), id.as_str()), ("box", "hosted:c"));
        let (host, id) = split_host_id("al@box:2222:shell:sh").unwrap();
        assert_eq!(
            (host.label().as_str(), id.as_str()),
            ("al@box:2222", "shell:sh")
        );
        assert!(split_host_id("hosted:c").is_none());
        assert!(split_host_id("c").is_none());
        assert!(split_host_id("box:other:c").is_none());
    }

    #[test]
    fn quoting_keeps_words_whole() {
        assert_eq!(shell_quote("view:hosted:x"), "view:hosted:x");
        assert_eq!(shell_quote("a b'c"), r"'a b'\''c'");
    }
}
