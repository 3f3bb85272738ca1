//! The full-screen views in this terminal: `attach ID` (one Tick's
//! screen) and `monitor` (every instance, of one machine or several).
//! Both are the person's: an agent's `attach` is refused (a view's keys
//! would reach the Tick as the person's), and an agent's Monitor is
//! read-only, saying who it is to tickhost and to the launchers.

use crate::cli::MonitorArgs;
use crate::output::CliError;
use crate::target::{Target, CONNECTION_LOST};
use anyhow::Result;
use tickloop_client::ssh::SshHost;
use tickloop_client::Endpoint;
use tickloop_proto::wire::{ClientKind, ClientRequest};
use view_monitor::attach_view::AttachError;
use view_monitor::prefix::PrefixKey;

/// `attach ID [--detach-key K]`: until detached or the instance ends. An
/// instance that has ended (before, or just as the view came) answers
/// with what it kept: its last screen is printed, and why it ended.
pub fn attach(target: &Target, id: &str, detach_key: Option<&str>) -> Result<i32> {
    // An agent's view would type as the person, and answer what waits for
    // them: refused before anything is dialled.
    crate::actor::persons_view(
        target.kind()?,
        &format!("attach to {id}"),
        &format!(
            "`tickloop screen {id}` reads its screen, and `tickloop input`, `keys` and `run` \
             type into it, waiting for the person where they decide"
        ),
    )?;
    // A bad key is refused before anything is looked up.
    PrefixKey::choose(detach_key).map_err(|e| CliError::new("bad_request", e.to_string(), 2))?;
    let host = target.host.as_ref();
    // A full id here: straight to its launcher, no round trip to tickhost.
    let direct = host
        .is_none()
        .then(|| view_monitor::attach_view::attach_here(&target.runtime, id, detach_key))
        .flatten();
    let attached = match direct {
        Some(attached) => attached,
        None => {
            let list = target.simple(ClientRequest::List)?;
            view_monitor::attach_view::attach_cli(&target.runtime, id, &list, detach_key, host)
        }
    };
    match attached {
        Ok(()) => Ok(0),
        Err(AttachError::Ended(_)) => last_screen(target, id),
        Err(e @ AttachError::Lost(_)) if host.is_some() => Err(CliError::new(
            "connection_lost",
            format!("the ssh connection to {} was lost while attached ({e}); {id} is untouched there: attach again", host.map(ToString::to_string).unwrap_or_default()),
            CONNECTION_LOST,
        )
        .into()),
        Err(e @ (AttachError::Lost(_) | AttachError::Connect { .. })) => {
            if ended_meanwhile(target, id) {
                last_screen(target, id)
            } else {
                Err(CliError::new(e.kind(), e.to_string(), 1).into())
            }
        }
        Err(e) => Err(CliError::new(e.kind(), e.to_string(), 1).into()),
    }
}

/// A launcher lost at once: whether the instance ended just as the view
/// came (its launcher going away).
fn ended_meanwhile(target: &Target, id: &str) -> bool {
    let Ok(list) = target.simple(ClientRequest::List) else {
        return false;
    };
    matches!(
        view_monitor::attach_view::resolve(&target.runtime, id, &list),
        Err(AttachError::Ended(_))
    )
}

/// The last screen of the ended instance `id` on stdout, and on stderr how
/// it ended; the `ended` error when nothing was kept.
fn last_screen(target: &Target, id: &str) -> Result<i32> {
    let list = target.simple(ClientRequest::List)?;
    let entry = list.as_array().and_then(|items| {
        items.iter().find(|e| {
            e["id"] == id
                || e["id"]
                    .as_str()
                    .and_then(|f| f.split_once(':'))
                    .is_some_and(|(_, n)| n == id)
        })
    });
    let full = entry
        .and_then(|e| e["id"].as_str())
        .unwrap_or(id)
        .to_string();
    let why = entry
        .and_then(|e| e.pointer("/ended/reason"))
        .and_then(|r| r.as_str())
        .map(|reason| format!(" ({reason})"))
        .unwrap_or_default();
    let screen = target.simple(ClientRequest::Screen {
        instance: full.clone(),
        history: 0,
        image: None,
    })?;
    print!("{}", crate::output::screen_text(&screen));
    eprintln!(
        "tickloop: {full} has ended{why}; nothing to attach to: this is its last screen (`tickloop close {full}` forgets it)"
    );
    Ok(0)
}

/// `monitor`, of `machines` (`None`: this one): one machine not reached is
/// the command's failure; of several, the Monitor shows which one it
/// cannot reach.
pub fn monitor(target: &Target, machines: Vec<Option<SshHost>>, args: MonitorArgs) -> Result<i32> {
    let prefix = PrefixKey::choose(args.detach_key.as_deref())
        .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?;
    let viewer = monitor_kind(target.kind()?);
    let several = machines.len() > 1;
    let mut sources = Vec::new();
    for machine in machines {
        let endpoint = match &machine {
            Some(host) => Endpoint::remote(host.clone(), viewer),
            None => Endpoint::local(target.runtime.clone(), target.exe.clone(), viewer),
        };
        let client = match endpoint.connect() {
            Ok(client) => Some(client),
            // One machine: `target`'s.
            Err(e) if !several => return Err(target.connect_error(e)),
            Err(_) => None,
        };
        let prefix = machine.as_ref().filter(|_| several).map(|h| h.label());
        sources.push((view_monitor::monitor::Source { prefix, endpoint }, client));
    }
    view_monitor::monitor::run(
        &target.runtime,
        sources,
        args.select,
        prefix,
        args.activity,
        viewer,
    )
    .map_err(|e| CliError::new(e.kind(), e.to_string(), 1))?;
    Ok(0)
}

/// The client kind a Monitor run by `actor` says hello as: `monitor` for the
/// person; an agent's own kind, so tickhost refuses its answers as it
/// refuses that agent's `tickloop approve` (and the Monitor is read-only).
fn monitor_kind(actor: ClientKind) -> ClientKind {
    if actor.is_agent() {
        actor
    } else {
        ClientKind::Monitor
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::wire::AgentHost;

    #[test]
    fn an_agents_monitor_says_hello_as_that_agent() {
        assert_eq!(monitor_kind(ClientKind::Cli), ClientKind::Monitor);
        let claude = ClientKind::AgentCli(AgentHost::ClaudeCode);
        assert_eq!(monitor_kind(claude), claude);
    }
}
