//! `open`: choosing the instance's name, handing its launcher its spec
//! (the one `starting` keeps started ahead of the open, detached in its
//! own session so that it outlives tickhost), reading its one readiness
//! line, and connecting to it.

use super::conn::LauncherConn;
use super::log::log;
use super::reader::spawn_reader;
use super::registry::{CatalogFacts, Instance, Shared};
use super::requests::admit::{open_over_refusal, Licence};
use super::starting::{ReportError, Started};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::config::AgentOpen;
use tickloop_client::paths::{
    default_name, unique_name, validate_name, InstanceFiles, InstanceKind,
};
use tickloop_client::whole_file::WriteError;
use tickloop_proto::core::codes::APPROVAL_REFUSED;
use tickloop_proto::core::limits::Limits;
use tickloop_proto::wire::{
    Catalog, ClientError, ClientKind, ClientReply, ErrorKind, InstanceState, LaunchReport,
    LaunchSpec, LauncherStatus, OpenReply, OpenRequest, Owner, ProgramSpec,
};

/// How long a launcher may take to report (initialization is 10 s in all).
const LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);

fn bad_request(message: String) -> ClientReply {
    ClientReply::Error(ClientError {
        kind: ErrorKind::BadRequest,
        message,
        data: None,
    })
}

fn open_failed(message: String, screen: &str) -> ClientReply {
    ClientReply::Error(ClientError {
        kind: ErrorKind::OpenFailed,
        message,
        data: Some(json!({ "screen": screen })),
    })
}

/// Releases a reserved id when the open is over, however it ends.
struct Reservation<'a> {
    shared: &'a Shared,
    id: String,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.shared.registry().reserved.remove(&self.id);
    }
}

/// A launcher being started, until its open is over however it ends: it
/// gets no `SIGUSR1` meanwhile (see `home::wake_launchers`).
struct Starting<'a> {
    shared: &'a Shared,
    pid: u32,
}

impl<'a> Starting<'a> {
    fn new(shared: &'a Shared, pid: u32) -> Self {
        shared.starting.set(pid, true);
        Starting { shared, pid }
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.shared.starting.set(self.pid, false);
    }
}

/// Handles `open` from a client of kind `client`, admitted under
/// `licence` (whether it may replace the person's ended instance).
pub async fn open(
    shared: &Arc<Shared>,
    mut request: OpenRequest,
    client: Option<ClientKind>,
    licence: Licence,
) -> ClientReply {
    if let Err(refused) = owned_by(&mut request.program, client) {
        return refused;
    }
    if let Some(record) = &request.program.record {
        if let Some(why) = tickloop_client::own_folders::refuse_own(record, "recording") {
            return bad_request(why);
        }
    }
    let opener = Opener { client, licence };
    match open_instance(shared, request, opener).await {
        Ok(reply) | Err(reply) => reply,
    }
}

/// Who opens, and what they may replace.
#[derive(Clone, Copy)]
struct Opener {
    client: Option<ClientKind>,
    licence: Licence,
}

/// Makes `program` the opener's: its owner, and who approves what agents
/// do to it (the opener's choice, else the config file's default for that
/// owner). An agent's open the config file does not allow is refused.
fn owned_by(program: &mut ProgramSpec, client: Option<ClientKind>) -> Result<(), ClientReply> {
    let config = match tickloop_client::config::load() {
        Ok(config) => config,
        Err(e) => return Err(bad_request(e.to_string())),
    };
    let owner = Owner::of(client);
    if owner == Owner::Agent {
        let allowed = config.agents.open.unwrap_or_default();
        let refused = match allowed {
            AgentOpen::Any => None,
            AgentOpen::Packages if program.package.is_some() && program.artifact.is_none() => None,
            AgentOpen::Packages => Some("only packages"),
            AgentOpen::None => Some("nothing"),
        };
        if let Some(what) = refused {
            let path = tickloop_client::config::path()
                .map_or_else(|| "config.toml".to_string(), |p| p.display().to_string());
            return Err(ClientReply::Error(ClientError {
                kind: ErrorKind::Refused,
                message: format!(
                    "not executed: agents may open {what} here ([agents] open = \"{}\" in {path}); the person can allow it with open = \"any\"{}, or open it themselves with `tickloop open`",
                    allowed.as_str(),
                    if allowed == AgentOpen::None { " or \"packages\"" } else { "" }
                ),
                data: Some(json!({"code": APPROVAL_REFUSED, "executed": false, "data": {"approval": "denied", "by": "config"}})),
            }));
        }
    }
    program.owner = Some(owner);
    program.agent_input = Some(
        program
            .agent_input
            .unwrap_or_else(|| config.agent_policy(owner, false)),
    );
    program.agent_close = Some(
        program
            .agent_close
            .unwrap_or_else(|| config.agent_policy(owner, true)),
    );
    Ok(())
}

/// `open`'s steps; an `Err` is the reply that says what went wrong.
async fn open_instance(
    shared: &Arc<Shared>,
    request: OpenRequest,
    opener: Opener,
) -> Result<ClientReply, ClientReply> {
    let program = program_name(&request.program)?;
    let kind = InstanceKind::of_open(request.program.shell, request.program.artifact.is_some());
    let (id, name) = reserve(shared, kind, request.name.as_deref(), &program, opener)?;
    let _reservation = Reservation {
        shared,
        id: id.clone(),
    };
    let files = shared
        .dir
        .instance_files(kind, &name)
        .map_err(|e| bad_request(e.to_string()))?;
    files.remove();
    let spec = LaunchSpec {
        instance: id.clone(),
        program: request.program,
        socket: files.socket.clone(),
        init_timeout_ms: u64::try_from(shared.limits.init_total_timeout.as_millis())
            .ok()
            .filter(|_| shared.limits.init_total_timeout != Limits::default().init_total_timeout),
        call_timeout_ms: u64::try_from(shared.limits.call_timeout.as_millis())
            .ok()
            .filter(|_| shared.limits.call_timeout != Limits::default().call_timeout),
    };
    let launcher = launcher_for(shared, &files).await?;
    let (launcher_pid, report) = match report(shared, launcher, &spec).await {
        Ok(reported) => reported,
        Err(reason) => {
            files.remove_but_log();
            return Err(open_failed(
                format!("{reason} (its log: {})", files.log.display()),
                "",
            ));
        }
    };
    let (socket, status) = match report {
        LaunchReport::Ready {
            socket,
            status,
            catalog,
        } => (socket, (*status, catalog.map(|c| *c).unwrap_or_default())),
        LaunchReport::Failed { reason, screen } => {
            // The reason and the screen say it all: no file stays.
            files.remove();
            return Err(open_failed(reason, &screen));
        }
    };
    if status.0.ended.is_some() {
        // A plain program that ended during its start: it ran, and its
        // status, record and last screen are kept; there is no launcher
        // left to connect to.
        return Ok(register_ended(shared, id, files, program, status));
    }
    let opened = Opened {
        id,
        files,
        program,
        launcher_pid,
        reported: status,
    };
    Ok(connect(shared, &socket, opened).await)
}

/// The program's name (an artifact's file stem, else `argv[0]`), once the
/// spec is one tickhost can start.
fn program_name(spec: &ProgramSpec) -> Result<String, ClientReply> {
    if let Some(path) = &spec.artifact {
        if spec.shell {
            return Err(bad_request(
                "--artifact and --shell do not go together: an artifact is a Tick".into(),
            ));
        }
        if !path.is_absolute() {
            return Err(bad_request(format!(
                "the artifact {} is not an absolute path; send an absolute path",
                path.display()
            )));
        }
        if !path.is_file() {
            return Err(bad_request(format!(
                "the artifact {} is not a file; write it first, then open it",
                path.display()
            )));
        }
    }
    let artifact_stem = spec.artifact.as_ref().and_then(|path| {
        path.file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
    });
    let Some(program) = artifact_stem.or_else(|| spec.argv.first().cloned()) else {
        return Err(bad_request(
            "open needs a program: `tickloop open -- PROGRAM [ARG...]`".into(),
        ));
    };
    if !spec.cwd.is_absolute() {
        return Err(bad_request(format!(
            "cwd {} is not absolute; send an absolute directory",
            spec.cwd.display()
        )));
    }
    Ok(program)
}

/// Chooses the instance's id and NAME (the one asked for, else one made
/// from the program's name) and reserves the id while it opens; an ended
/// instance of that id is replaced (forgotten, its record kept), unless it
/// is the person's and `opener` may not forget it.
fn reserve(
    shared: &Shared,
    kind: InstanceKind,
    asked: Option<&str>,
    program: &str,
    opener: Opener,
) -> Result<(String, String), ClientReply> {
    let mut registry = shared.registry();
    let name = match asked {
        Some(name) => {
            validate_name(name).map_err(bad_request)?;
            let id = kind.id(name);
            if registry.reserved.contains(&id) {
                return Err(bad_request(format!(
                    "{id} is being opened right now; choose another --id"
                )));
            }
            if let Some(known) = registry.instances.get(&id).cloned() {
                if known.ended().is_none() {
                    return Err(bad_request(format!(
                        "{id} is in use by a running instance; choose another --id or `tickloop close {id}` first"
                    )));
                }
                if !opener.licence.forget_persons && !known.agents_may_forget() {
                    return Err(open_over_refusal(opener.client, &id));
                }
                // An ended instance of that name is replaced.
                registry.instances.remove(&id);
                shared.keep_record(&known, opener.client);
                known.files.remove();
            }
            name.to_string()
        }
        None => unique_name(&default_name(program), |n| registry.is_taken(&kind.id(n))),
    };
    let id = kind.id(&name);
    registry.reserved.insert(id.clone());
    Ok((id, name))
}

/// A launcher for `files`' instance: the spare when one is ready, else
/// one started now. Its folder is made first (the launcher makes its log
/// there).
async fn launcher_for(shared: &Arc<Shared>, files: &InstanceFiles) -> Result<Started, ClientReply> {
    files.create_folder().map_err(|e| {
        let error = WriteError {
            path: files.folder.clone(),
            source: e,
        };
        open_failed(format!("{error}: the instance was not opened"), "")
    })?;
    match shared.starting.take_spare().await {
        Some(spare) => Ok(spare),
        None => shared.starting.start().map_err(|e| {
            files.remove();
            open_failed(e, "")
        }),
    }
}

/// Hands `spec` to `launcher` and reads its report; when the launcher was
/// gone before it could take the spec (a spare someone ended), once more
/// with one started now. The pid of the launcher that reported, and its
/// report; a launcher that failed is ended.
async fn report(
    shared: &Arc<Shared>,
    launcher: Started,
    spec: &LaunchSpec,
) -> Result<(u32, LaunchReport), String> {
    let first = launcher.pid;
    match report_within(shared, launcher, spec).await {
        Err(ReportError::NotHanded(reason)) => {
            log(&format!(
                "{}: launcher {first} did not take its spec ({reason}); starting another",
                spec.instance
            ));
            let again = shared.starting.start()?;
            let pid = again.pid;
            match report_within(shared, again, spec).await {
                Ok(report) => Ok((pid, report)),
                Err(ReportError::Failed(reason) | ReportError::NotHanded(reason)) => Err(reason),
            }
        }
        Err(ReportError::Failed(reason)) => Err(reason),
        Ok(report) => Ok((first, report)),
    }
}

/// [`Started::report`] within [`LAUNCH_TIMEOUT`]; a launcher that failed
/// or did not report in time is ended.
async fn report_within(
    shared: &Shared,
    launcher: Started,
    spec: &LaunchSpec,
) -> Result<LaunchReport, ReportError> {
    let pid = launcher.pid;
    let _starting = Starting::new(shared, pid);
    let result = match tokio::time::timeout(LAUNCH_TIMEOUT, launcher.report(spec)).await {
        Ok(result) => result,
        Err(_) => Err(ReportError::Failed(format!(
            "the launcher did not report within {} s",
            LAUNCH_TIMEOUT.as_secs()
        ))),
    };
    if let Err(ReportError::Failed(_)) = &result {
        terminate(pid);
    }
    result
}

/// An instance whose launcher reported it ready.
struct Opened {
    id: String,
    files: InstanceFiles,
    program: String,
    launcher_pid: u32,
    /// The status and catalog of its report.
    reported: (LauncherStatus, Catalog),
}

/// Connects to the launcher that reported ready on `socket`, registers its
/// instance and answers `open`.
async fn connect(shared: &Arc<Shared>, socket: &std::path::Path, opened: Opened) -> ClientReply {
    let Opened {
        id,
        files,
        program,
        launcher_pid,
        reported,
    } = opened;
    let (conn, mut reader) = match LauncherConn::connect(socket, launcher_pid).await {
        Ok(pair) => pair,
        Err(e) => {
            // The program may have ended just after the report, and its
            // launcher with it: its final record says so.
            if let Some(ended) = final_record(&files.record, &id) {
                return register_ended(shared, id, files, program, ended);
            }
            terminate(launcher_pid);
            files.remove_but_log();
            return open_failed(format!("the launcher reported ready, but {e}"), "");
        }
    };
    let first = LauncherConn::first_status(&mut reader).await;
    let (status, catalog) = (
        first.status.unwrap_or(reported.0),
        first.catalog.unwrap_or(reported.1),
    );
    let catalog = CatalogFacts::new(catalog, &shared.limits);
    let instance = Instance::new(id.clone(), files, Some(program), status, catalog);
    shared
        .registry()
        .instances
        .insert(id.clone(), instance.clone());
    spawn_reader(shared.clone(), instance.clone(), conn, reader);
    log(&format!("{id}: opened (launcher pid {launcher_pid})"));
    ClientReply::typed(&open_reply(&instance, &instance.status()))
}

/// The launcher's record at `path` (its last status and catalog) when it
/// says the instance ended.
fn final_record(path: &std::path::Path, id: &str) -> Option<(LauncherStatus, Catalog)> {
    let text = std::fs::read_to_string(path).ok()?;
    let record: tickloop_proto::wire::LauncherRecord = serde_json::from_str(&text).ok()?;
    let mut status = record.status;
    status.ended.as_ref()?;
    status.instance = id.to_string();
    Some((status, record.catalog.unwrap_or_default()))
}

/// Registers an instance that ended during its start and answers `open`
/// with its end and its last screen.
fn register_ended(
    shared: &Arc<Shared>,
    id: String,
    files: InstanceFiles,
    program: String,
    (status, catalog): (LauncherStatus, Catalog),
) -> ClientReply {
    let screen = std::fs::read(&files.screen)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<tickloop_proto::wire::ScreenReply>(&bytes).ok());
    let catalog = CatalogFacts::new(catalog, &shared.limits);
    let instance = Instance::new(id.clone(), files, Some(program), status, catalog);
    shared
        .registry()
        .instances
        .insert(id.clone(), instance.clone());
    shared.bump();
    log(&format!("{id}: opened, and ended during its start"));
    let status = instance.status();
    let mut reply = open_reply(&instance, &status);
    reply.ended = status.ended.clone();
    reply.screen = screen.map(|s| s.lines);
    ClientReply::typed(&reply)
}

/// Asks launcher `pid` (a session leader) to end.
fn terminate(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        if pid > 0 {
            // SAFETY: kill has no memory-safety preconditions.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
}

/// An instance's state as `open` and `list` print it: `running`, `ended`;
/// for an `artifact:`, also `starting` (a new version not yet initialized)
/// and `failed` (a version that did not come up or stopped; its launcher
/// waits for the next save).
pub fn state_word(status: &LauncherStatus) -> InstanceState {
    if status.ended.is_some() {
        InstanceState::Ended
    } else if status.failed.is_some() {
        InstanceState::Failed
    } else if status.generation.is_some() && status.revision.is_none() {
        InstanceState::Starting
    } else {
        InstanceState::Running
    }
}

/// What an `artifact:` instance's entries carry beyond the others':
/// `generation`, `failed` and `restarts` (all `None` for the others).
pub fn artifact_fields(
    instance: &Instance,
    status: &LauncherStatus,
) -> (Option<u64>, Option<String>, Option<u64>) {
    if instance.kind == InstanceKind::Artifact {
        (status.generation, status.failed.clone(), status.restarts)
    } else {
        (None, None, None)
    }
}

/// The JSON `open` prints.
pub fn open_reply(instance: &Instance, status: &LauncherStatus) -> OpenReply {
    let catalog = instance.catalog();
    let text = |name: &str| catalog.field(name).as_str().map(str::to_string);
    let shell = instance.kind == InstanceKind::Shell;
    let (generation, failed, restarts) = artifact_fields(instance, status);
    OpenReply {
        id: instance.id.clone(),
        kind: text("kind"),
        title: if shell {
            instance.title(status)
        } else {
            text("title")
        },
        revision: catalog.revision.clone(),
        pid: status.pid,
        launcher_pid: status.launcher_pid,
        // A shell's state (its commands) is read with `read`: its `seq`
        // stays null here, as the contract has it.
        seq: status.state.as_ref().filter(|_| !shell).map(|s| s.seq),
        state: state_word(status),
        generation,
        failed,
        restarts,
        cwd: (instance.kind == InstanceKind::Artifact).then(|| status.cwd.clone()),
        ended: None,
        screen: None,
        no_integration: status.no_integration.clone(),
    }
}
