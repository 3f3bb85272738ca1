//! The tickhost a command talks to ([`Target`]): this machine's (started
//! when needed) or `--host`'s over ssh, as the client kind of who is acting
//! ([`crate::actor`]: the person's CLI, or an agent host's tool); and the
//! contract's errors for what can go wrong on the way (docs/cli.md, "Ticks
//! on other machines").

use crate::output::CliError;
use anyhow::Result;
use serde_json::Value;
use std::path::PathBuf;
use tickloop_client::ssh::SshHost;
use tickloop_client::{Client, ClientError};
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest};

/// The exit code of a connection lost after it was made, over ssh
/// (docs/cli.md): a `call` in flight reports an unknown outcome instead.
pub const CONNECTION_LOST: i32 = 6;

/// Where a command's tickhost is.
#[derive(Debug, Clone)]
pub struct Target {
    /// This machine's runtime directory.
    pub runtime: PathBuf,
    /// This executable (it starts tickhost here).
    pub exe: PathBuf,
    /// The machine of `--host` (`None`: this one).
    pub host: Option<SshHost>,
    /// Who is acting ([`crate::actor::client_kind`]), or what is wrong
    /// with `TICKLOOP_ACTOR`.
    pub actor: Result<ClientKind, String>,
}

impl Target {
    /// Connects to tickhost (this machine's, or `--host`'s over ssh),
    /// starting it when needed.
    pub fn connect(&self) -> Result<Client> {
        let kind = self.kind()?;
        match &self.host {
            Some(host) => Client::connect_remote(host, false, kind),
            None => Client::connect_or_start(&self.runtime, &self.exe, kind),
        }
        .map_err(|e| self.connect_error(e))
    }

    /// The client kind this command speaks as: the person's CLI, or the
    /// agent whose tool runs it; a usage error (exit 2) for a
    /// `TICKLOOP_ACTOR` that says neither.
    pub fn kind(&self) -> Result<ClientKind> {
        self.actor
            .clone()
            .map_err(|why| CliError::new("bad_request", why, 2).into())
    }

    /// Connects to tickhost only when it runs (else
    /// [`ClientError::is_not_running`]); starts nothing. (Callers check
    /// [`Target::kind`] first.) A tickhost here whose socket was removed is
    /// asked to make it again.
    pub fn connect_running(&self) -> Result<Client, ClientError> {
        let kind = self.actor.clone().unwrap_or(ClientKind::Cli);
        match &self.host {
            Some(host) => Client::connect_remote_no_start(host, kind),
            None => Client::connect_reviving(&self.runtime, kind),
        }
    }

    /// Sends a request whose success is a JSON value to print.
    pub fn simple(&self, request: ClientRequest) -> Result<Value> {
        let reply = self.connect()?.request(request);
        value_of(reply.map_err(|e| self.lost(e))?)
    }

    /// The contract's error for a connection that could not be made.
    pub fn connect_error(&self, e: ClientError) -> anyhow::Error {
        match (e, &self.host) {
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

    /// The contract's error for a connection lost while in use.
    pub fn lost(&self, e: ClientError) -> anyhow::Error {
        match &self.host {
            Some(host) => CliError::new(
                "connection_lost",
                format!("the ssh connection to {host} was lost ({e}); the instances there are untouched: run the command again"),
                CONNECTION_LOST,
            )
            .into(),
            None => CliError::new("unreachable", format!("tickhost: {e}"), 1).into(),
        }
    }
}

/// The value of a reply that is not a call's outcome (an error reply is
/// the contract's error).
pub fn value_of(reply: ClientReply) -> Result<Value> {
    match reply {
        ClientReply::Ok(value) => Ok(value),
        ClientReply::Error(e) => Err(CliError::from_reply(e).into()),
        ClientReply::Call(outcome) => Err(CliError::new(
            "internal",
            format!("tickhost answered with a call outcome: {outcome:?}"),
            1,
        )
        .into()),
    }
}
