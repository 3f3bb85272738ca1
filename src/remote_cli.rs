//! `--host` (and `TICKLOOP_HOST`) for the CLI: which commands reach another
//! machine over ssh, the one host this process talks to, and the contract's
//! errors for what can go wrong on the way (docs/cli.md, "Ticks on other
//! machines").

use crate::output::CliError;
use crate::Command;
use tickloop_client::ssh::SshHost;
use tickloop_client::ClientError;

/// The machine this process's commands go to (`None`: this one).
static REMOTE: std::sync::OnceLock<Option<SshHost>> = std::sync::OnceLock::new();

/// `monitor` with several `--host`s: each machine (`None`: this one).
static MONITOR_SOURCES: std::sync::OnceLock<Vec<Option<SshHost>>> = std::sync::OnceLock::new();

/// `mcp` with several `--host`s: the machines it serves.
static MCP_HOSTS: std::sync::OnceLock<Vec<SshHost>> = std::sync::OnceLock::new();

/// The machines of an `mcp` serving several (empty otherwise).
pub fn mcp_hosts() -> Vec<SshHost> {
    MCP_HOSTS.get().cloned().unwrap_or_default()
}

/// The machines of a `monitor` (one: `--host`'s, or this one).
pub fn monitor_sources() -> Vec<Option<SshHost>> {
    match MONITOR_SOURCES.get() {
        Some(sources) => sources.clone(),
        None => vec![host().cloned()],
    }
}

/// The host chosen by [`choose`], if any.
pub fn host() -> Option<&'static SshHost> {
    REMOTE.get().and_then(Option::as_ref)
}

/// The name of a command, for messages.
fn name(command: &Command) -> &'static str {
    match command {
        Command::Check { .. } => "check",
        Command::Doctor => "doctor",
        Command::Version => "version",
        Command::Completions { .. } => "completions",
        Command::Man => "man",
        Command::CompleteIds => "__complete-ids",
        Command::Herdr(_) => "herdr",
        Command::New { .. } => "new",
        Command::Record { .. } => "record",
        Command::Replay { .. } => "replay",
        Command::Loop(crate::loop_cli::LoopCommand::ClaudeCode(_)) => "loop claude-code",
        _ => "this command",
    }
}

/// Checks the `--host` values for `command` and remembers the host: a
/// value not of the form `[ssh://][USER@]HOST[:PORT]`, several hosts, or a
/// command that does not go over ssh is a usage error (exit 2).
/// Whether `--host` is on the command line (not only in `TICKLOOP_HOST`).
pub fn host_flag_given() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--host" || a.to_string_lossy().starts_with("--host="))
}

/// `from_flag`: the hosts came from `--host`, not only from `TICKLOOP_HOST`
/// (which a command that stays on this machine, like `version`, ignores).
pub fn choose(command: &Command, hosts: &[String], from_flag: bool) -> anyhow::Result<()> {
    let usage =
        |message: String| -> anyhow::Error { CliError::new("bad_request", message, 2).into() };
    // The far side of ssh and the processes tickhost starts never go on to
    // another machine, whatever their environment says.
    if matches!(
        command,
        Command::Relay { .. } | Command::Tickhost | Command::Launcher | Command::CompleteIds
    ) {
        let _ = REMOTE.set(None);
        return Ok(());
    }
    if let (Command::Mcp { .. }, true) = (command, hosts.len() > 1) {
        let mut several = Vec::new();
        for given in hosts {
            let host = SshHost::parse(given.trim()).map_err(|e| {
                usage(format!(
                    "{e} (an MCP server of several machines serves remote ones only)"
                ))
            })?;
            if several.contains(&host) {
                return Err(usage(format!("--host {given:?} is given twice")));
            }
            several.push(host);
        }
        let _ = MCP_HOSTS.set(several);
        let _ = REMOTE.set(None);
        return Ok(());
    }
    if let (Command::Monitor { .. }, true) = (command, hosts.len() > 1) {
        // Several machines in one Monitor; "" is this one.
        let mut sources = Vec::new();
        for given in hosts {
            let source = match given.trim() {
                "" => None,
                h => Some(SshHost::parse(h).map_err(|e| usage(e.to_string()))?),
            };
            if sources.contains(&source) {
                return Err(usage(format!("--host {given:?} is given twice")));
            }
            sources.push(source);
        }
        let _ = MONITOR_SOURCES.set(sources);
        let _ = REMOTE.set(None);
        return Ok(());
    }
    let hosts: Vec<&String> = hosts.iter().filter(|h| !h.trim().is_empty()).collect();
    let chosen = match hosts.as_slice() {
        [] => None,
        [one] => Some(SshHost::parse(one.trim()).map_err(|e| usage(e.to_string()))?),
        many => {
            return Err(usage(format!(
                "--host was given {} times ({}); this command reaches one machine",
                many.len(),
                many.iter()
                    .map(|h| h.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    if chosen.is_some() {
        let remote_ok = matches!(
            command,
            Command::Open { .. }
                | Command::List
                | Command::Describe { .. }
                | Command::Read { .. }
                | Command::Call { .. }
                | Command::Watch { .. }
                | Command::Screen { .. }
                | Command::Input { .. }
                | Command::Attach { .. }
                | Command::Close { .. }
                | Command::Reload { .. }
                | Command::Shutdown
                | Command::Packages { path: None }
                | Command::Activity { .. }
                | Command::Approvals { .. }
                | Command::Approve { .. }
                | Command::Refuse { .. }
                | Command::ApprovePolicy { .. }
                | Command::Mcp { .. }
                | Command::Monitor { .. }
                | Command::Loop(crate::loop_cli::LoopCommand::Run(_))
        );
        if !remote_ok && !from_flag {
            let _ = REMOTE.set(None);
            return Ok(());
        }
        if !remote_ok {
            return Err(usage(format!(
                "{} does not work over ssh yet; run it on the other machine (`ssh HOST tickloop ...`) without --host",
                match command {
                    Command::Packages { .. } => "packages --path",
                    other => name(other),
                }
            )));
        }
    }
    let _ = REMOTE.set(chosen);
    Ok(())
}

/// The ids of `command` (as `monitor --host A --host B` shows them:
/// `HOST:KIND:NAME`) that name an instance of another machine: the command
/// then goes there, as with `--host HOST`, with the plain ids. Every id of
/// one command must be of one machine, and agree with a `--host` given.
pub fn take_host_ids(command: &mut Command, hosts: &mut Vec<String>) -> anyhow::Result<()> {
    let usage =
        |message: String| -> anyhow::Error { CliError::new("bad_request", message, 2).into() };
    let ids: Vec<&mut String> = match command {
        Command::Describe { id }
        | Command::Read { id }
        | Command::Call { id, .. }
        | Command::Screen { id, .. }
        | Command::Input { id, .. }
        | Command::Attach { id, .. }
        | Command::Close { id }
        | Command::Reload { id }
        | Command::Activity { id, .. }
        | Command::Approve { id, .. }
        | Command::Refuse { id, .. }
        | Command::ApprovePolicy { id, .. } => vec![id],
        Command::Watch { ids, .. } => ids.iter_mut().collect(),
        _ => return Ok(()),
    };
    let mut found: Option<SshHost> = None;
    let mut plain = 0;
    let mut rewritten = Vec::new();
    for id in ids {
        match tickloop_client::ssh::split_host_id(id) {
            Some((host, there)) => {
                if found.as_ref().is_some_and(|f| *f != host) {
                    return Err(usage(format!(
                        "{id} is on another machine than the other ids; one command reaches one machine"
                    )));
                }
                found = Some(host);
                rewritten.push((id, there));
            }
            None => plain += 1,
        }
    }
    let Some(host) = found else {
        return Ok(());
    };
    if plain > 0 {
        return Err(usage(format!(
            "some ids name {host} and some do not; one command reaches one machine"
        )));
    }
    let given: Vec<&String> = hosts.iter().filter(|h| !h.trim().is_empty()).collect();
    match given.as_slice() {
        [] => {}
        [one] if SshHost::parse(one.trim()).is_ok_and(|h| h == host) => {}
        _ => {
            return Err(usage(format!(
                "the id names {host} but --host (or TICKLOOP_HOST) says {}; give one of them",
                given
                    .iter()
                    .map(|h| h.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )))
        }
    }
    for (id, there) in rewritten {
        *id = there;
    }
    *hosts = vec![host.label()];
    Ok(())
}

/// The contract's error for a connection that could not be made.
pub fn connect_error(e: ClientError) -> anyhow::Error {
    match (e, host()) {
        (ClientError::Remote(r), _) => CliError::new(r.kind(), r.to_string(), 1).into(),
        (other, Some(host)) => CliError::new(
            "unreachable",
            format!("cannot reach tickhost on {host} over ssh: {other}"),
            1,
        )
        .into(),
        (other, None) => {
            CliError::new("unreachable", format!("cannot reach tickhost: {other}"), 1).into()
        }
    }
}

/// The exit code of a connection lost after it was made, over ssh
/// (docs/cli.md): a `call` in flight reports an unknown outcome instead.
pub const CONNECTION_LOST: i32 = 6;

/// The contract's error for a connection lost while in use.
pub fn lost(e: ClientError) -> anyhow::Error {
    match host() {
        Some(host) => CliError::new(
            "connection_lost",
            format!("the ssh connection to {host} was lost ({e}); the instances there are untouched: run the command again"),
            CONNECTION_LOST,
        )
        .into(),
        None => CliError::new("unreachable", format!("tickhost: {e}"), 1).into(),
    }
}
