//! Which tickhost a request goes to: this machine's (started when needed),
//! one machine's over ssh (`--host`), or, with several machines, the one its
//! `HOST:KIND:NAME` instance id names (`list` and `approvals` ask each).
//! Requests go on a fresh connection each, off the async threads.

use crate::options::Options;
use crate::outcome;
use rmcp::model::CallToolResult;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use tickloop_client::ssh::{self, SshHost};
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest, ErrorKind, HeldCall};

/// Talking to tickhost failed: before the request was sent (`Connect`), or
/// after (`Lost`; for a call, its outcome is unknown).
#[derive(Debug)]
pub enum HostError {
    Connect(String),
    Lost(String),
}

/// A request that did not succeed: tickhost's error answer, or why tickhost
/// could not be asked (kind `unreachable`).
#[derive(Debug)]
pub struct Refusal {
    /// tickhost's error kind (`no_such_instance`, `ended`, ...).
    pub kind: String,
    pub message: String,
    pub data: Option<Value>,
}

impl Refusal {
    /// The refusal as a failed tool result.
    pub fn failed(&self) -> CallToolResult {
        outcome::failed(&self.kind, &self.message, self.data.as_ref())
    }
}

/// An error kind as its wire name (`internal` if it has none).
pub fn error_kind(kind: ErrorKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "internal".into())
}

/// The machines whose Ticks this server serves, and how to reach each.
#[derive(Debug, Clone)]
pub struct Hosts {
    /// This machine's tickhost: its runtime directory.
    runtime_dir: PathBuf,
    /// The `tickloop` executable (to start this machine's tickhost).
    exe: PathBuf,
    /// The one machine served over ssh, if not this one (and not several).
    host: Option<SshHost>,
    /// Several machines, when more than one.
    machines: Vec<SshHost>,
}

impl Hosts {
    pub fn new(options: &Options) -> Hosts {
        Hosts {
            runtime_dir: options.runtime_dir.clone(),
            exe: options.exe.clone(),
            host: options.host.clone(),
            machines: options.hosts.clone(),
        }
    }

    /// Whether several machines are served.
    pub fn several(&self) -> bool {
        self.machines.len() > 1
    }

    /// Whether `host` is one of the several machines served.
    pub fn serves(&self, host: &SshHost) -> bool {
        self.machines.contains(host)
    }

    /// The one machine served over ssh (`--host` once), if any.
    pub fn remote(&self) -> Option<&SshHost> {
        self.host.as_ref()
    }

    /// The several machines, as `--host` names them, for messages.
    pub fn labels(&self) -> String {
        self.machines
            .iter()
            .map(|h| h.label())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// A fresh connection to the one tickhost served (started when needed,
    /// here or there).
    fn connect(&self) -> Result<Client, tickloop_client::ClientError> {
        match &self.host {
            None => Client::connect_or_start(&self.runtime_dir, &self.exe, ClientKind::Mcp),
            Some(host) => Client::connect_remote(host, false, ClientKind::Mcp),
        }
    }

    /// With several machines: the machine of `id` (`HOST:KIND:NAME`) and
    /// its id there.
    fn route(&self, id: &str) -> Result<(SshHost, String), String> {
        match ssh::split_host_id(id) {
            Some((host, there)) if self.serves(&host) => Ok((host, there)),
            Some((host, _)) => Err(format!(
                "{host} is not one of the machines this server serves ({})",
                self.labels()
            )),
            None => Err(format!(
                "{id}: this server serves several machines; name the instance as HOST:KIND:NAME (HOST one of {})",
                self.labels()
            )),
        }
    }

    /// A connection for `id`, and the id to send on it.
    pub fn connect_to(&self, id: &str) -> Result<(Client, String), String> {
        if !self.several() {
            return self
                .connect()
                .map(|c| (c, id.to_string()))
                .map_err(|e| e.to_string());
        }
        let (host, there) = self.route(id)?;
        Client::connect_remote(&host, false, ClientKind::Mcp)
            .map(|c| (c, there))
            .map_err(|e| format!("{host}: {e}"))
    }

    /// `request` on a fresh connection (blocking), telling `on_progress`
    /// while tickhost holds a call for a person's approval.
    pub fn request_blocking(
        &self,
        request: ClientRequest,
        on_progress: impl FnMut(&HeldCall),
    ) -> Result<ClientReply, HostError> {
        self.request_connected(request, Duration::ZERO, on_progress, |_| {})
    }

    /// [`Hosts::request_blocking`] for a request tickhost answers only
    /// after `wait` (a `wait`, a `run`), handing `connected` the connection
    /// once it is made, before the request is sent: its
    /// [`Client::withdrawer`] withdraws what tickhost holds of the request,
    /// its [`Client::hangup_handle`] ends the request (the MCP request was
    /// cancelled).
    pub fn request_connected(
        &self,
        request: ClientRequest,
        wait: Duration,
        on_progress: impl FnMut(&HeldCall),
        connected: impl FnOnce(&Client),
    ) -> Result<ClientReply, HostError> {
        let (mut client, request) = if self.several() {
            match &request {
                ClientRequest::List => return Ok(self.gather(&request, "id")),
                ClientRequest::Approvals => return Ok(self.gather(&request, "instance")),
                _ => self.routed(request)?,
            }
        } else {
            let client = self
                .connect()
                .map_err(|e| HostError::Connect(format!("cannot reach tickhost: {e}")))?;
            (client, request)
        };
        connected(&client);
        client
            .request_waiting(request, wait, on_progress)
            .map_err(|e| HostError::Lost(format!("tickhost: {e}")))
    }

    /// `request` asked of every machine: the items of their answers, with
    /// each item's `key` prefixed with its machine.
    fn gather(&self, request: &ClientRequest, key: &str) -> ClientReply {
        let mut all = Vec::new();
        for host in &self.machines {
            let reply = Client::connect_remote(host, false, ClientKind::Mcp)
                .and_then(|mut c| c.request(request.clone()));
            match reply {
                Ok(ClientReply::Ok(Value::Array(items))) => {
                    for mut item in items {
                        if let Some(id) = item.get(key).and_then(Value::as_str) {
                            let prefixed = format!("{}:{id}", host.label());
                            item[key] = Value::String(prefixed);
                        }
                        all.push(item);
                    }
                }
                Ok(other) => eprintln!("tickloop mcp: {host} answered {key}s with {other:?}"),
                Err(e) => eprintln!("tickloop mcp: {host} left out: {e}"),
            }
        }
        ClientReply::Ok(Value::Array(all))
    }

    /// A connection to the machine `request`'s `instance` names, and the
    /// request with the id there.
    fn routed(&self, request: ClientRequest) -> Result<(Client, ClientRequest), HostError> {
        let mut value = serde_json::to_value(&request)
            .map_err(|e| HostError::Lost(format!("internal error: {e}")))?;
        let id = value
            .get("instance")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| {
                HostError::Connect(format!(
                    "this server serves several machines ({}); that request names none",
                    self.labels()
                ))
            })?;
        let (host, there) = self.route(&id).map_err(HostError::Connect)?;
        value["instance"] = Value::String(there);
        let request: ClientRequest = serde_json::from_value(value)
            .map_err(|e| HostError::Lost(format!("internal error: {e}")))?;
        let client = Client::connect_remote(&host, false, ClientKind::Mcp)
            .map_err(|e| HostError::Connect(format!("cannot reach tickhost on {host}: {e}")))?;
        Ok((client, request))
    }

    /// One request on a fresh tickhost connection, off the async threads.
    pub async fn request(&self, request: ClientRequest) -> Result<ClientReply, HostError> {
        let hosts = self.clone();
        tokio::task::spawn_blocking(move || hosts.request_blocking(request, |_| {}))
            .await
            .unwrap_or_else(|e| Err(HostError::Lost(format!("internal error: {e}"))))
    }

    /// A request whose success is a JSON value.
    pub async fn simple(&self, request: ClientRequest) -> Result<Value, Refusal> {
        match self.request(request).await {
            Ok(ClientReply::Ok(value)) => Ok(value),
            Ok(ClientReply::Error(e)) => Err(Refusal {
                kind: error_kind(e.kind),
                message: e.message,
                data: e.data,
            }),
            Ok(ClientReply::Call(other)) => Err(Refusal {
                kind: "internal".into(),
                message: format!("tickhost answered with a call outcome: {other:?}"),
                data: None,
            }),
            Err(HostError::Connect(m)) | Err(HostError::Lost(m)) => Err(Refusal {
                kind: "unreachable".into(),
                message: m,
                data: None,
            }),
        }
    }

    /// A request whose answer is a tool's result: its value, or the failure.
    pub async fn answer(&self, request: ClientRequest) -> CallToolResult {
        match self.simple(request).await {
            Ok(value) => outcome::ok_value(value),
            Err(refusal) => refusal.failed(),
        }
    }
}
