//! `--host` (and `TICKLOOP_HOST`) for the CLI: which commands reach another
//! machine over ssh, and which machines a command reaches ([`Hosts`]), from
//! the command line (docs/cli.md, "Ticks on other machines"). Reaching
//! them, and the contract's errors on the way, is [`crate::target`].

use crate::cli::Command;
use crate::loop_cli::LoopCommand;
use crate::output::CliError;
use tickloop_client::ssh::SshHost;

/// The machines a command reaches, as `--host` (and `TICKLOOP_HOST`) chose
/// them.
#[derive(Debug, Default)]
pub struct Hosts {
    /// The one machine this command goes to (`None`: this one).
    pub host: Option<SshHost>,
    /// `monitor` with several `--host`s: each machine (`None`: this one);
    /// empty otherwise.
    pub monitor: Vec<Option<SshHost>>,
    /// `mcp` with several `--host`s: the machines it serves; empty
    /// otherwise.
    pub mcp: Vec<SshHost>,
}

impl Hosts {
    /// This machine only.
    fn here() -> Hosts {
        Hosts::default()
    }

    /// The machines of a `monitor` (one: `--host`'s, or this one).
    pub fn monitor_sources(&self) -> Vec<Option<SshHost>> {
        if self.monitor.is_empty() {
            vec![self.host.clone()]
        } else {
            self.monitor.clone()
        }
    }
}

/// The name of a command, for messages.
fn name(command: &Command) -> &'static str {
    match command {
        Command::Check(_) => "check",
        Command::Doctor => "doctor",
        Command::Version => "version",
        Command::Completions { .. } => "completions",
        Command::Man => "man",
        Command::CompleteIds => "__complete-ids",
        Command::Herdr(_) => "herdr",
        Command::New(_) => "new",
        Command::Record { .. } => "record",
        Command::Replay(_) => "replay",
        Command::Web(_) => "web",
        Command::Loop(LoopCommand::ClaudeCode(_)) => "loop claude-code",
        Command::Loop(LoopCommand::Codex(_)) => "loop codex",
        Command::Loop(LoopCommand::Gemini(_)) => "loop gemini",
        Command::Loop(LoopCommand::Opencode(_)) => "loop opencode",
        _ => "this command",
    }
}

/// Whether `--host` is on the command line (not only in `TICKLOOP_HOST`).
pub fn host_flag_given() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--host" || a.to_string_lossy().starts_with("--host="))
}

/// Checks the `--host` values for `command` and says which machines it
/// reaches: a value not of the form `[ssh://][USER@]HOST[:PORT]`, several
/// hosts, or a command that does not go over ssh is a usage error (exit 2).
/// `from_flag`: the hosts came from `--host`, not only from `TICKLOOP_HOST`
/// (which a command that stays on this machine, like `version`, ignores).
pub fn choose(command: &Command, hosts: &[String], from_flag: bool) -> anyhow::Result<Hosts> {
    let usage =
        |message: String| -> anyhow::Error { CliError::new("bad_request", message, 2).into() };
    // The far side of ssh and the processes tickhost starts never go on to
    // another machine, whatever their environment says.
    if matches!(
        command,
        Command::Relay(_) | Command::Tickhost | Command::Launcher | Command::CompleteIds
    ) {
        return Ok(Hosts::here());
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
        return Ok(Hosts {
            mcp: several,
            ..Hosts::here()
        });
    }
    if let (Command::Monitor(_), true) = (command, hosts.len() > 1) {
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
        return Ok(Hosts {
            monitor: sources,
            ..Hosts::here()
        });
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
            Command::Open(_)
                | Command::List
                | Command::Describe { .. }
                | Command::Read { .. }
                | Command::Call(_)
                | Command::Watch { .. }
                | Command::Screen { .. }
                | Command::Input { .. }
                | Command::Keys { .. }
                | Command::Wait(_)
                | Command::Run(_)
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
                | Command::Monitor(_)
                | Command::Loop(LoopCommand::Run(_))
        );
        if !remote_ok && !from_flag {
            return Ok(Hosts::here());
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
    Ok(Hosts {
        host: chosen,
        ..Hosts::here()
    })
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
        | Command::Call(crate::cli::CallArgs { id, .. })
        | Command::Screen { id, .. }
        | Command::Input { id, .. }
        | Command::Keys { id, .. }
        | Command::Wait(crate::cli::WaitArgs { id, .. })
        | Command::Run(crate::cli::RunArgs { id, .. })
        | Command::Attach { id, .. }
        | Command::Close { id }
        | Command::Reload { id }
        | Command::Approve { id, .. }
        | Command::Refuse { id, .. }
        | Command::ApprovePolicy { id, .. } => vec![id],
        Command::Watch { ids, .. } => ids.iter_mut().collect(),
        Command::Activity { id, .. } => id.iter_mut().collect(),
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
