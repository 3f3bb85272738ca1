//! Tickloop's MCP bridge (`tickloop mcp`) and Package Skills.
//!
//! * [`run`] serves MCP on stdin/stdout (the official Rust SDK, `rmcp`),
//!   talking to tickhost with [`tickloop_client::Client`] like the CLI: the
//!   agent tools TickManage, TickDescribe, TickRead, TickCall, one tool per
//!   tool of each running Tick, and TickUpdate as `tick://NAME/state`
//!   resources (see the `server` module, and the modules it names).
//! * Package discovery (TickManage `packages`, `open` with a package) is the
//!   `tickloop-packages` crate, which the CLI uses too.
//!
//! Nothing here writes to stdout but the MCP transport.

mod caller;
mod calls;
mod catalog;
mod consent;
mod describe;
mod held;
mod host_asks;
mod hosts;
mod id_zero;
mod launch;
mod listen;
mod manage;
mod names;
mod notice;
mod open;
mod options;
mod outcome;
mod pace;
mod poller;
mod resources;
mod revisions;
mod schema;
mod screen_images;
mod server;
mod tasks;
mod tool_list;
pub mod transport;
mod waiting;

pub use host_asks::AskInHost;
pub use options::Options;
pub use pace::MIN_INTERVAL;

/// The MCP protocol revisions `tickloop mcp` speaks, newest last (for
/// `tickloop version --json`); `--max-protocol` offers fewer.
pub fn protocol_versions() -> Vec<String> {
    revisions::all()
        .iter()
        .map(|v| v.as_str().to_string())
        .collect()
}

/// Whether `max` is a revision `--max-protocol` takes; if not, the message
/// naming those it does.
pub fn check_max_protocol(max: Option<&str>) -> Result<(), String> {
    revisions::offered(max).map(|_| ())
}

use notice::Notice;
use rmcp::ServiceExt;
use server::{Bridge, Settings};

/// Why the MCP server stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[from] std::io::Error),
    #[error("the MCP client did not initialize: {0}")]
    Initialize(String),
    #[error("the MCP session failed: {0}")]
    Session(String),
    #[error("{0}")]
    Usage(String),
}

/// Which hosts are asked: `--ask-in-host`, unless `[approval] ask_in_host
/// = false` in the config file turns it off. A config file that cannot be
/// used is said on stderr (the host's log) and `--ask-in-host` holds (each
/// held call reads the config again, and asks in no host while it cannot
/// be read): the server still starts for the agent.
fn ask_in_host(flag: AskInHost) -> AskInHost {
    match tickloop_client::config::load() {
        Ok(config) if !config.ask_in_host() => AskInHost::Never,
        Ok(_) => flag,
        Err(e) => {
            eprintln!("tickloop mcp: {e}; [approval] ask_in_host is taken as true");
            flag
        }
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub fn run(options: Options) -> Result<(), McpError> {
    // Decided now, while the process that started it holds its pipes.
    let launch = launch::Launch::of_this_process();
    let ask_in_host = ask_in_host(options.ask_in_host);
    let claude = host_asks::started_by_interactive_claude_code();
    let max = options
        .max_protocol
        .as_deref()
        .or_else(|| host_asks::newest_revision(ask_in_host, &launch, claude));
    let settings = Settings {
        offered: revisions::offered(max).map_err(McpError::Usage)?,
        ask_in_host,
        tasks: options.tasks,
        launch,
    };
    if let launch::Launch::Other(why) = &settings.launch {
        eprintln!("tickloop mcp: {why}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let result = runtime.block_on(serve(options, settings));
    // Subscription watches block on tickhost sockets; do not wait for them.
    runtime.shutdown_background();
    result
}

async fn serve(options: Options, settings: Settings) -> Result<(), McpError> {
    let (notices, mut pending) = tokio::sync::mpsc::unbounded_channel();
    let bridge = Bridge::new(options, settings, notices);
    // The baseline, so the first poll does not announce what was already there.
    bridge.refresh(true).await;
    let service = bridge
        .clone()
        .serve(transport::Gate::stdio())
        .await
        .map_err(|e| McpError::Initialize(e.to_string()))?;
    let peer = service.peer().clone();
    let listeners = bridge.clone();
    tokio::spawn(async move {
        while let Some(notice) = pending.recv().await {
            listeners.deliver(&notice).await;
            // A connection without `initialize` (2026-07-28) hears only on
            // its `subscriptions/listen` streams.
            if peer.peer_info().is_none() {
                continue;
            }
            let sent = match notice {
                Notice::ToolsChanged => peer.notify_tool_list_changed().await,
                Notice::ResourcesChanged => peer.notify_resource_list_changed().await,
                Notice::Updated(uri) => {
                    peer.notify_resource_updated(
                        rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                    )
                    .await
                }
            };
            if sent.is_err() {
                break;
            }
        }
    });
    let poller = tokio::spawn(bridge.poll());
    let end = service.waiting().await;
    poller.abort();
    end.map(|_| ())
        .map_err(|e| McpError::Session(e.to_string()))
}
