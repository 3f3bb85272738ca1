//! What `tickloop mcp` is given: where tickhost is (this machine, one
//! machine over ssh, or several), the delivery interval, the working
//! directory of `open`, and the newest MCP revision to offer.

use std::path::PathBuf;
use std::time::Duration;
use tickloop_client::ssh::SshHost;

/// How the bridge reaches tickhost and paces its deliveries.
#[derive(Debug, Clone)]
pub struct Options {
    /// tickhost's runtime directory.
    pub runtime_dir: PathBuf,
    /// The `tickloop` executable (to start tickhost when it is not running).
    pub exe: PathBuf,
    /// The delivery interval: list polling and state watches.
    pub interval: Duration,
    /// The default working directory of `open`.
    pub cwd: PathBuf,
    /// The machine whose Ticks to serve, over ssh (`tickloop mcp --host`);
    /// `None`: this one.
    pub host: Option<SshHost>,
    /// Several machines (`--host A --host B`): their instances are served
    /// as `HOST:KIND:NAME`, their tools as `HOST__NAME__TOOL`; `host` is
    /// then unused. Empty (or one): not in use.
    pub hosts: Vec<SshHost>,
    /// The newest MCP revision offered (`--max-protocol`, e.g.
    /// `2025-11-25` to make a 2026-capable host fall back); `None`: all
    /// of them ([`crate::protocol_versions`]).
    pub max_protocol: Option<String>,
    /// Offer the tasks extension (`--tasks`): calls that wait become tasks
    /// for clients that declare it.
    pub tasks: bool,
    /// Which agent hosts are asked about a held action
    /// (`--ask-in-host auto|always|never`, [`crate::AskInHost`]).
    pub ask_in_host: crate::AskInHost,
}
