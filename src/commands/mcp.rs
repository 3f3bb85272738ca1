//! `tickloop mcp`: the agent tools over MCP on stdin/stdout, for one
//! machine or several (docs/mcp.md).

use crate::remote_cli::Hosts;
use anyhow::{Context, Result};
use std::path::PathBuf;

/// `tickloop mcp`'s flags: `interval` in milliseconds (tickloop_mcp raises
/// it to its floor, MIN_INTERVAL), the newest MCP revision offered, and
/// whether to offer the tasks extension.
pub struct Flags {
    pub interval: u64,
    pub max_protocol: Option<String>,
    pub tasks: bool,
    /// `--ask-in-host`: `auto`, `always` or `never`.
    pub ask_in_host: String,
}

/// Serves until the agent closes stdin.
pub fn run(runtime: PathBuf, exe: PathBuf, hosts: Hosts, flags: Flags) -> Result<i32> {
    let Flags {
        interval,
        max_protocol,
        tasks,
        ask_in_host,
    } = flags;
    if let Err(message) = tickloop_mcp::check_max_protocol(max_protocol.as_deref()) {
        return Err(crate::output::CliError::new("bad_request", message, 2).into());
    }
    let ask_in_host = tickloop_mcp::AskInHost::parse(&ask_in_host)
        .map_err(|message| crate::output::CliError::new("bad_request", message, 2))?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let options = tickloop_mcp::Options {
        runtime_dir: runtime,
        exe,
        interval: std::time::Duration::from_millis(interval),
        cwd,
        host: hosts.host,
        hosts: hosts.mcp,
        max_protocol,
        tasks,
        ask_in_host,
    };
    tickloop_mcp::run(options).context("mcp")?;
    Ok(0)
}
