//! The full-screen views in this terminal: `attach ID` (one Tick's
//! screen) and `monitor` (every instance, of one machine or several).

use crate::cli::MonitorArgs;
use crate::output::CliError;
use crate::target::{Target, CONNECTION_LOST};
use anyhow::Result;
use tickloop_client::ssh::SshHost;
use tickloop_client::Endpoint;
use tickloop_proto::wire::{ClientKind, ClientRequest};
use view_monitor::attach_view::AttachError;
use view_monitor::prefix::PrefixKey;

/// `attach ID [--detach-key K]`: until detached or the instance ends.
pub fn attach(target: &Target, id: &str, detach_key: Option<&str>) -> Result<i32> {
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
    attached.map_err(
        |e| match (&e, host) {
            (AttachError::Lost(_), Some(host)) => CliError::new(
                "connection_lost",
                format!("the ssh connection to {host} was lost while attached ({e}); {id} is untouched there: attach again"),
                CONNECTION_LOST,
            ),
            (AttachError::Lost(_) | AttachError::Connect { .. }, None) => ended_meanwhile(target, id)
                .unwrap_or_else(|| CliError::new(e.kind(), e.to_string(), 1)),
            _ => CliError::new(e.kind(), e.to_string(), 1),
        },
    )?;
    Ok(0)
}

/// A launcher lost at once: the instance may have ended just as the view
/// came (its launcher going away); then that is what to say, and why.
fn ended_meanwhile(target: &Target, id: &str) -> Option<CliError> {
    let list = target.simple(ClientRequest::List).ok()?;
    match view_monitor::attach_view::resolve(&target.runtime, id, &list) {
        Err(ended @ AttachError::Ended(_)) => {
            Some(CliError::new(ended.kind(), ended.to_string(), 1))
        }
        _ => None,
    }
}

/// `monitor`, of `machines` (`None`: this one): one machine not reached is
/// the command's failure; of several, the Monitor shows which one it
/// cannot reach.
pub fn monitor(target: &Target, machines: Vec<Option<SshHost>>, args: MonitorArgs) -> Result<i32> {
    let prefix = PrefixKey::choose(args.detach_key.as_deref())
        .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?;
    let several = machines.len() > 1;
    let mut sources = Vec::new();
    for machine in machines {
        let endpoint = match &machine {
            Some(host) => Endpoint::remote(host.clone(), ClientKind::Monitor),
            None => Endpoint::local(
                target.runtime.clone(),
                target.exe.clone(),
                ClientKind::Monitor,
            ),
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
    view_monitor::monitor::run(&target.runtime, sources, args.select, prefix, args.activity)
        .map_err(|e| CliError::new(e.kind(), e.to_string(), 1))?;
    Ok(0)
}
