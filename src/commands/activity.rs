//! `tickloop activity ID [--follow] [--since WHEN] [--agent NAME]`: what
//! agents did with an instance. (With no ID, the timeline across
//! instances: [`super::timeline`].)

use crate::output::{exit_0_at_interrupt, print_json, print_line, CliError};
use crate::target::Target;
use anyhow::{Context, Result};
use tickloop_client::clock::{rfc3339_millis_at, unix_millis};
use tickloop_proto::wire::{
    ActivityEntry, ActivityRecord, AgentHost, ClientKind, ClientReply, ClientRequest,
};

/// What `--since` and `--agent` keep.
#[derive(Debug, Clone, Default)]
pub struct Only {
    /// From then on (ms since the epoch), and as RFC 3339 for tickhost.
    pub since: Option<(i128, String)>,
    pub agent: Option<ClientKind>,
}

impl Only {
    /// `--since WHEN` and `--agent NAME` read; a usage error (exit 2) saying
    /// what each takes.
    pub fn parse(since: Option<&str>, agent: Option<&str>) -> Result<Only> {
        let usage =
            |message: String| -> anyhow::Error { CliError::new("bad_request", message, 2).into() };
        let since = match since {
            Some(text) => {
                let now = unix_millis(&tickloop_client::clock::now_rfc3339_millis()).unwrap_or(0);
                let offset = view_monitor::activity::local_offset().whole_seconds();
                let at = tickloop_client::clock::since(text, now, offset).map_err(usage)?;
                let text = rfc3339_millis_at(at).ok_or_else(|| {
                    usage(format!("--since {text:?} is out of the calendar's range"))
                })?;
                Some((at, text))
            }
            None => None,
        };
        let agent = agent.map(agent_named).transpose().map_err(usage)?;
        Ok(Only { since, agent })
    }

    /// Whether `entry` is kept.
    pub fn keeps(&self, entry: &ActivityEntry) -> bool {
        let since_ok = self
            .since
            .as_ref()
            .is_none_or(|(from, _)| unix_millis(&entry.at).is_some_and(|at| at >= *from));
        let agent_ok = self.agent.is_none_or(|agent| entry.agent() == Some(agent));
        since_ok && agent_ok
    }
}

/// The agent `--agent NAME` names: an agent host's shell tool by the
/// host's name, or `mcp`, `loop`.
fn agent_named(name: &str) -> Result<ClientKind, String> {
    match name.trim() {
        "mcp" => Ok(ClientKind::Mcp),
        "loop" => Ok(ClientKind::Loop),
        other => AgentHost::parse(other).map(ClientKind::AgentCli).ok_or_else(|| {
            let hosts: Vec<&str> = AgentHost::ALL.iter().map(|h| h.as_str()).collect();
            format!(
                "--agent {other:?} names no agent: give {} (an agent host's shell tool), mcp (MCP tools) or loop (the Loop)",
                hosts.join(", ")
            )
        }),
    }
}

/// The record (JSON: the whole record; text: a line an entry, oldest
/// first); with `follow`, new entries as they come (JSON: one entry a
/// line), until the instance ends. `only` keeps some entries.
pub fn run(target: &Target, id: String, follow: bool, only: &Only, json: bool) -> Result<i32> {
    let mut client = target.connect()?;
    let offset = view_monitor::activity::local_offset();
    let mut after = None;
    let mut full_id: Option<String> = None;
    if follow {
        exit_0_at_interrupt();
    }
    loop {
        // Looked at before fetching, so what it recorded up to its end is
        // in the fetch after which this stops.
        let ended = match &full_id {
            Some(full) => has_ended(target, full)?,
            None => false,
        };
        let request = ClientRequest::Activity {
            instance: id.clone(),
            after,
        };
        let mut record: ActivityRecord =
            match client.request(request).map_err(|e| target.lost(e))? {
                ClientReply::Ok(value) => {
                    serde_json::from_value(value).context("tickhost sent an unreadable record")?
                }
                ClientReply::Error(e) => return Err(CliError::from_reply(e).into()),
                ClientReply::Call(_) => {
                    anyhow::bail!("tickhost answered activity with a call outcome")
                }
            };
        let (last, instance) = (record.last, record.instance.clone());
        record.entries.retain(|e| only.keeps(e));
        if json && !follow {
            print_json(&serde_json::to_value(&record).context("cannot encode the record")?);
            return Ok(0);
        }
        for entry in &record.entries {
            let printed = if json {
                print_json(&serde_json::to_value(entry).context("cannot encode an entry")?)
            } else {
                print_line(&view_monitor::activity::entry_text(entry, offset))
            };
            if !printed {
                return Ok(0);
            }
        }
        if !follow {
            if record.entries.is_empty() {
                eprintln!("tickloop: nothing recorded for {id} yet");
            }
            return Ok(0);
        }
        after = Some(last);
        full_id = Some(instance);
        // An ended instance records nothing more.
        if ended {
            return Ok(0);
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// Whether the instance `full_id` is listed as ended.
fn has_ended(target: &Target, full_id: &str) -> Result<bool> {
    let list = target.simple(ClientRequest::List)?;
    Ok(list.as_array().is_some_and(|all| {
        all.iter()
            .any(|e| e["id"] == full_id && e["state"] == "ended")
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_names_are_the_hosts_and_the_agent_clients() {
        assert_eq!(
            agent_named("claude-code"),
            Ok(ClientKind::AgentCli(AgentHost::ClaudeCode))
        );
        assert_eq!(agent_named("mcp"), Ok(ClientKind::Mcp));
        assert_eq!(agent_named("loop"), Ok(ClientKind::Loop));
        let wrong = agent_named("cli").unwrap_err();
        assert!(
            wrong.contains("claude-code, codex") && wrong.contains("mcp"),
            "{wrong}"
        );
    }
}
