//! TickManage `open`: a Tick from a command or a package on this machine,
//! an `artifact:` Tick from a file, or a command on the machine of `--host`
//! (with several machines, the one `host` names).

use crate::catalog::Catalog;
use crate::hosts::{error_kind, HostError, Hosts};
use crate::outcome;
use rmcp::model::CallToolResult;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tickloop_client::ssh::SshHost;
use tickloop_client::Client;
use tickloop_packages as packages;
use tickloop_proto::wire::{ApprovalPolicy, ClientKind, ClientReply, ClientRequest, OpenRequest};

/// TickManage's arguments that `open` reads.
#[derive(Debug, Default)]
pub struct OpenArgs {
    pub command: Option<Vec<String>>,
    pub package: Option<String>,
    pub package_args: Option<Vec<String>>,
    pub shell: Option<bool>,
    pub name: Option<String>,
    pub cwd: Option<PathBuf>,
    pub history: Option<usize>,
    pub watch: Option<Vec<String>>,
    pub artifact: Option<PathBuf>,
    /// With several machines: which one.
    pub host: Option<String>,
}

impl OpenArgs {
    /// The history to keep: as asked, else as configured.
    fn history(&self) -> Option<usize> {
        self.history
            .or_else(|| tickloop_client::config::load().ok().and_then(|c| c.history))
    }
}

/// Opens Ticks where this server serves them.
pub struct Open {
    hosts: Hosts,
    catalog: Arc<Catalog>,
    /// The default working directory (this machine's).
    cwd: PathBuf,
}

fn bad_request(message: &str) -> CallToolResult {
    outcome::failed("bad_request", message, None)
}

impl Open {
    pub fn new(hosts: Hosts, catalog: Arc<Catalog>, cwd: PathBuf) -> Open {
        Open {
            hosts,
            catalog,
            cwd,
        }
    }

    /// TickManage `open`; the poller then looks for the new instance at once.
    pub async fn open(&self, args: &OpenArgs) -> CallToolResult {
        if self.hosts.several() {
            let chosen = args.host.as_deref().map(SshHost::parse);
            return match chosen {
                Some(Ok(host)) if self.hosts.serves(&host) => {
                    self.open_remote(args, host, true).await
                }
                _ => bad_request(&format!(
                    "open: this server serves several machines; give `host`, one of {}",
                    self.hosts.labels()
                )),
            };
        }
        if let Some(host) = self.hosts.remote().cloned() {
            return self.open_remote(args, host, false).await;
        }
        if let Some(path) = &args.artifact {
            return self.open_artifact(args, path).await;
        }
        self.open_here(args).await
    }

    /// `open` of a `command` or a `package` on this machine.
    async fn open_here(&self, args: &OpenArgs) -> CallToolResult {
        let (argv, approve) = match launch_argv(args) {
            Ok(launch) => launch,
            Err(failure) => return failure,
        };
        let cwd = match &args.cwd {
            Some(dir) => self.cwd.join(dir),
            None => self.cwd.clone(),
        };
        if !cwd.is_dir() {
            return bad_request(&format!("cwd {} is not a directory", cwd.display()));
        }
        let request = ClientRequest::Open(OpenRequest {
            name: args.name.clone(),
            program: tickloop_proto::wire::ProgramSpec {
                shell: args.shell.unwrap_or(false),
                artifact: None,
                watch: Vec::new(),
                argv,
                cwd,
                env: tickloop_client::caller_env(),
                history: args.history(),
                approve,
                package: args.package.clone(),
                shell_integration: tickloop_client::config::shell_integration(),
                record: None,
                ..Default::default()
            },
        });
        let result = self.hosts.answer(request).await;
        self.catalog.wake();
        result
    }

    /// `open` with `artifact`: the file, absolute, its directory as the
    /// working directory.
    async fn open_artifact(&self, args: &OpenArgs, path: &Path) -> CallToolResult {
        if args.command.is_some() || args.package.is_some() || args.shell == Some(true) {
            return bad_request(
                "open takes `artifact` alone: not with `command`, `package` or `shell`",
            );
        }
        let base = match &args.cwd {
            Some(dir) => self.cwd.join(dir),
            None => self.cwd.clone(),
        };
        let path = base.join(path);
        let Some(cwd) = path.parent().map(Path::to_path_buf) else {
            return bad_request(&format!("the artifact {} has no directory", path.display()));
        };
        let request = ClientRequest::Open(OpenRequest {
            name: args.name.clone(),
            program: tickloop_proto::wire::ProgramSpec {
                shell: false,
                artifact: Some(path),
                watch: args.watch.clone().unwrap_or_default(),
                argv: Vec::new(),
                cwd,
                env: tickloop_client::caller_env(),
                history: args.history(),
                approve: None,
                record: None,
                ..Default::default()
            },
        });
        let result = self.hosts.answer(request).await;
        self.catalog.wake();
        result
    }

    /// `open` of a `command` on the machine of `--host`: in `cwd` (absolute
    /// there) or that user's home, with the environment there, as
    /// `tickloop open --host` does. `prefixed`: the reply's id as a server
    /// of several machines names it (`HOST:KIND:NAME`).
    async fn open_remote(&self, args: &OpenArgs, host: SshHost, prefixed: bool) -> CallToolResult {
        let label = host.label();
        let argv = match remote_argv(args, &host) {
            Ok(argv) => argv,
            Err(failure) => return failure,
        };
        let (name, shell, cwd) = (
            args.name.clone(),
            args.shell.unwrap_or(false),
            args.cwd.clone(),
        );
        let history = args.history();
        let reply = tokio::task::spawn_blocking(move || {
            let mut client = Client::connect_remote(&host, true, ClientKind::Mcp)
                .map_err(|e| HostError::Connect(format!("cannot reach tickhost: {e}")))?;
            let greeting = client.greeting().cloned();
            let cwd = cwd
                .or_else(|| {
                    greeting
                        .as_ref()
                        .and_then(|g| g.home.clone())
                        .map(PathBuf::from)
                })
                .unwrap_or_else(|| PathBuf::from("/"));
            let request = ClientRequest::Open(OpenRequest {
                name,
                program: tickloop_proto::wire::ProgramSpec {
                    shell,
                    artifact: None,
                    watch: Vec::new(),
                    argv,
                    cwd,
                    env: greeting.map(|g| g.env).unwrap_or_default(),
                    history,
                    approve: None,
                    shell_integration: tickloop_client::config::shell_integration(),
                    record: None,
                    ..Default::default()
                },
            });
            client
                .request(request)
                .map_err(|e| HostError::Lost(format!("tickhost: {e}")))
        })
        .await
        .unwrap_or_else(|e| Err(HostError::Lost(format!("internal error: {e}"))));
        self.catalog.wake();
        remote_outcome(reply, prefixed.then_some(label.as_str()))
    }
}

/// The program to start on this machine, from `command` or `package`, and
/// the package's approval policy.
fn launch_argv(args: &OpenArgs) -> Result<(Vec<String>, Option<ApprovalPolicy>), CallToolResult> {
    match (&args.package, &args.command) {
        (Some(_), Some(_)) => Err(bad_request("open takes `command` or `package`, not both")),
        (None, None) => Err(bad_request(
            "open needs `command` ([PROGRAM, ARG...]) or `package` (a NAME from action packages)",
        )),
        (None, Some(command)) if command.is_empty() => Err(bad_request("`command` is empty")),
        (None, Some(command)) => Ok((command.clone(), None)),
        (Some(name), None) => {
            let extra = args.package_args.clone().unwrap_or_default();
            let found = packages::find(name);
            let approve = found.as_ref().ok().and_then(|package| package.approve);
            match found.and_then(|p| p.launch_argv(&extra)) {
                Ok(argv) => Ok((argv, approve)),
                Err(
                    e @ (packages::PackageError::MissingPrerequisites { .. }
                    | packages::PackageError::Shipped(_)),
                ) => Err(outcome::failed("open_failed", &e.to_string(), None)),
                Err(e) => Err(bad_request(&e.to_string())),
            }
        }
    }
}

/// The program to start on `host`: `command` only (an `artifact` or a
/// `package` is a file on this machine), in an absolute `cwd` if any.
fn remote_argv(args: &OpenArgs, host: &SshHost) -> Result<Vec<String>, CallToolResult> {
    if args.artifact.is_some() || args.package.is_some() {
        return Err(bad_request(&format!(
            "open over ssh ({host}) takes `command` only: `artifact` and `package` are files on this machine"
        )));
    }
    let argv = match &args.command {
        Some(command) if !command.is_empty() => command.clone(),
        _ => return Err(bad_request("open needs `command` ([PROGRAM, ARG...])")),
    };
    if let Some(dir) = args.cwd.as_ref().filter(|d| !d.is_absolute()) {
        return Err(bad_request(&format!(
            "cwd {} must be an absolute path on {host}",
            dir.display()
        )));
    }
    Ok(argv)
}

/// The tool result of a remote `open`; `prefix`: the machine's label to put
/// before the new id.
fn remote_outcome(reply: Result<ClientReply, HostError>, prefix: Option<&str>) -> CallToolResult {
    match reply {
        Ok(ClientReply::Ok(mut value)) => {
            if let Some(label) = prefix {
                if let Some(there) = value.get("id").and_then(Value::as_str) {
                    let named = format!("{label}:{there}");
                    value["id"] = Value::String(named);
                }
            }
            outcome::ok_value(value)
        }
        Ok(ClientReply::Error(e)) => {
            outcome::failed(&error_kind(e.kind), &e.message, e.data.as_ref())
        }
        Ok(ClientReply::Call(_)) => {
            outcome::failed("internal", "open answered with a call outcome", None)
        }
        Err(HostError::Connect(m)) | Err(HostError::Lost(m)) => {
            outcome::failed("unreachable", &m, None)
        }
    }
}
