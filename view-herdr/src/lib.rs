//! The Herdr adapter: Tickloop's Herdr plugin ([`manifest`], the folder
//! `plugin/`) and what its entries and the `tickloop herdr` commands run —
//! linking the plugin ([`commands::install`]), showing a Tick in a Herdr pane
//! ([`commands::open`], [`commands::monitor`], [`commands::restore`]), the
//! view inside the pane ([`pane`]) and its reports to Herdr's agent sidebar
//! ([`report`]). [`herdr`] talks to Herdr (CLI and socket; every failure is
//! logged with its request), [`requests`] types every socket request and
//! checks it against Herdr's own schema, [`state`] keeps the panes shown
//! per instance.

pub mod commands;
pub mod herdr;
pub mod manifest;
pub mod pane;
pub mod report;
pub mod requests;
pub mod state;

use std::path::PathBuf;
use view_monitor::attach_view::AttachError;

/// Where Tickloop is: its runtime directory and this executable (to start
/// tickhost when needed).
#[derive(Debug, Clone)]
pub struct Ctx {
    pub runtime: PathBuf,
    pub exe: PathBuf,
}

/// Why a `tickloop herdr` command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Herdr(#[from] herdr::HerdrError),
    #[error(transparent)]
    Attach(#[from] AttachError),
    #[error("cannot reach tickhost: {0}")]
    Tickhost(String),
    #[error(transparent)]
    State(#[from] state::StateError),
    #[error(transparent)]
    Manifest(#[from] manifest::ManifestError),
    #[error("{0}")]
    Install(String),
    #[error("{0}")]
    Usage(String),
}

impl Error {
    /// The CLI's error kind (docs/cli.md) for this failure.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Attach(e) => e.kind(),
            Error::Tickhost(_) => "unreachable",
            Error::Usage(_) | Error::Herdr(herdr::HerdrError::NotInside(_)) => "bad_request",
            _ => "internal",
        }
    }

    /// One line saying what went wrong and what to do.
    pub fn user_message(&self) -> String {
        match self {
            Error::Herdr(e) => e.user_message(),
            other => other.to_string(),
        }
    }
}

/// `tickloop list`'s JSON, from tickhost (started when needed).
pub fn list(ctx: &Ctx) -> Result<serde_json::Value, Error> {
    list_on(ctx, None)
}

/// `list`, of the machine `ssh` when given (over ssh).
pub fn list_on(
    ctx: &Ctx,
    ssh: Option<&tickloop_client::ssh::SshHost>,
) -> Result<serde_json::Value, Error> {
    use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest};
    let connected = match ssh {
        Some(host) => tickloop_client::Client::connect_remote(host, false, ClientKind::Herdr),
        None => {
            tickloop_client::Client::connect_or_start(&ctx.runtime, &ctx.exe, ClientKind::Herdr)
        }
    };
    let mut client = connected.map_err(|e| Error::Tickhost(e.to_string()))?;
    match client
        .request(ClientRequest::List)
        .map_err(|e| Error::Tickhost(e.to_string()))?
    {
        ClientReply::Ok(value) => Ok(value),
        ClientReply::Error(e) => Err(Error::Tickhost(e.message)),
        ClientReply::Call(_) => Err(Error::Tickhost("tickhost answered list with a call".into())),
    }
}

/// The full id of `id` (a full id or a unique NAME) among running instances;
/// `HOST:KIND:NAME` is an instance of another machine (checked there over
/// ssh, and kept in that form).
pub fn resolve_instance(ctx: &Ctx, id: &str) -> Result<String, Error> {
    if let Some((host, there)) = tickloop_client::ssh::split_host_id(id) {
        let list = list_on(ctx, Some(&host))?;
        let (full, _) = view_monitor::attach_view::resolve(&ctx.runtime, &there, &list)?;
        return Ok(format!("{}:{full}", host.label()));
    }
    let list = list(ctx)?;
    let (full, _) = view_monitor::attach_view::resolve(&ctx.runtime, id, &list)?;
    Ok(full)
}
