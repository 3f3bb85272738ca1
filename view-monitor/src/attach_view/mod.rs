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
//!
//! One job per file: `connect` starts an attach (the launcher dialled,
//! the terminal taken, the first snapshot) and tears it down; `session`
//! is its state and main loop; `output` draws what the launcher sends
//! and follows resizes; `input` routes keys, the prefix key, mouse and
//! paste; `overlays` holds the activity overlay and the approval prompt.

mod connect;
mod image_state;
mod images;
mod input;
mod keys;
mod lend;
mod note;
mod output;
mod overlays;
mod screen;
mod session;

pub use crate::error::AttachError;
use crate::prefix::PrefixKey;
use std::path::{Path, PathBuf};

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
    let (instance, socket) = resolve(runtime, id, list)?;
    attach_at(runtime, instance, socket, detach_key, ssh)
}

/// `tickloop attach ID` for a full id of an instance on this machine,
/// straight to its launcher's socket (where the id says it is), without
/// asking tickhost first. `None` when there is no such socket: the caller
/// asks tickhost, which says why (no such instance, or ended).
pub fn attach_here(
    runtime: &Path,
    id: &str,
    detach_key: Option<&str>,
) -> Option<Result<(), AttachError>> {
    let (kind, name) = tickloop_client::paths::parse_id(id)?;
    let socket = tickloop_client::paths::RuntimeDir::at(runtime)
        .instance_files(kind, name)
        .ok()?
        .socket;
    if !socket.exists() {
        return None;
    }
    Some(attach_at(runtime, id.to_string(), socket, detach_key, None))
}

/// Attaches to `instance`, whose launcher listens on `socket` (here, or on
/// `ssh`'s machine), and tells on stderr how it ended.
fn attach_at(
    runtime: &Path,
    instance: String,
    socket: PathBuf,
    detach_key: Option<&str>,
    ssh: Option<&tickloop_client::ssh::SshHost>,
) -> Result<(), AttachError> {
    let prefix = PrefixKey::choose(detach_key).map_err(|e| AttachError::BadKey(e.to_string()))?;
    let opts = AttachOptions {
        runtime: runtime.to_path_buf(),
        socket,
        instance: instance.clone(),
        status: None,
        prefix,
        ssh: ssh.cloned(),
        kind: tickloop_proto::wire::ClientKind::Monitor,
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
        let why = item
            .pointer("/ended/reason")
            .and_then(|v| v.as_str())
            .map(|reason| format!(" ({reason})"))
            .unwrap_or_default();
        return Err(AttachError::Ended(format!(
            "{full} has ended{why}: nothing to attach to; `tickloop screen {full}` shows its \
             last screen, `tickloop close {full}` forgets it"
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
    /// What kind of client the view is, to its tickhost (`attach`: the
    /// Monitor's; a Herdr pane: Herdr's).
    pub kind: tickloop_proto::wire::ClientKind,
}

impl AttachOptions {
    /// The tickhost of the instance: here, or on the machine of `ssh`.
    pub fn endpoint(&self) -> tickloop_client::Endpoint {
        tickloop_client::Endpoint::of(&self.runtime, self.ssh.as_ref(), self.kind)
    }
}

/// Set by the Monitor for the `tickloop attach` it runs (`a`): the prefix
/// key's `m` then returns to that Monitor instead of starting another.
pub const FROM_MONITOR_ENV: &str = "TICKLOOP_FROM_MONITOR";

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
        match connect::run_session(opts)? {
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
        assert_eq!(socket, Path::new("/run/t/i/hosted-counter/sock"));
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
