//! Client connections on `tickhost.sock`: hello, then requests answered in
//! order (a malformed line gets a `bad_request` reply and the connection goes
//! on), routing to the launchers, `list`, `close` and `shutdown`.

use super::approval;
use super::conn::LauncherConn;
use super::log::log;
use super::open::open;
use super::registry::{end_info, CatalogFacts, Instance, Shared};
use super::watch::{self, Flow};
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::framing::{write_line, Line, LineReader};
use tickloop_client::paths::InstanceKind;
use tickloop_proto::core::codes::STALE_REVISION;
use tickloop_proto::wire::CallOutcome;
use tickloop_proto::wire::{
    ActivityRecord, CallRequest, ClientError, ClientKind, ClientReply, ClientRequest, Envelope,
    ErrorKind, HeldAction, HeldCall, Hello, HelloReply, LauncherRequest, LauncherStatus, ListEntry,
    Role, ServerMessage,
};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

/// The longest request line accepted from a client (an `open` carries the
/// whole environment).
const MAX_CLIENT_LINE: usize = 8 * 1024 * 1024;

/// How long `close` waits for the launcher to report the end.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client has to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

const REQUEST_EXAMPLE: &str = r#"{"id":1,"request":{"op":"list"}}"#;

fn error(kind: ErrorKind, message: String) -> ClientReply {
    ClientReply::Error(ClientError {
        kind,
        message,
        data: None,
    })
}

/// Serves one client connection until it hangs up.
pub async fn serve_client(shared: Arc<Shared>, stream: UnixStream) {
    let (read, mut writer) = stream.into_split();
    let mut reader = LineReader::new(read, MAX_CLIENT_LINE);

    let hello = match tokio::time::timeout(HELLO_TIMEOUT, reader.next()).await {
        Ok(Ok(Some(Line::Text(text)))) => serde_json::from_str::<Hello>(&text).map_err(|e| {
            format!(
                "the first line must be hello, like {}: {e}",
                serde_json::to_string(&Hello::new(Role::Client)).unwrap_or_default()
            )
        }),
        Ok(Ok(Some(_))) => Err("the first line must be a JSON hello".to_string()),
        Ok(Ok(None)) | Ok(Err(_)) => return,
        Err(_) => Err("no hello within 10 s".to_string()),
    };
    // Who this client is, for the activity records (the CLI unless it said).
    let client = Some(
        hello
            .as_ref()
            .ok()
            .and_then(|h| h.hello.client)
            .unwrap_or(ClientKind::Cli),
    );
    let answer = match hello {
        Ok(hello) if hello.hello.role != Role::Client => HelloReply {
            version: tickloop_proto::wire::wire_version().to_string(),
            refused: Some(
                "this is tickhost, for clients; views and hosts talk to a launcher's socket"
                    .to_string(),
            ),
        },
        Ok(hello) => HelloReply::answer(&hello),
        Err(refused) => HelloReply {
            version: tickloop_proto::wire::wire_version().to_string(),
            refused: Some(refused),
        },
    };
    let refused = answer.refused.is_some();
    if write_line(&mut writer, &answer).await.is_err() || refused {
        return;
    }

    loop {
        let line = match reader.next().await {
            Ok(Some(line)) => line,
            Ok(None) | Err(_) => return,
        };
        let envelope = match parse_request(line) {
            Ok(envelope) => envelope,
            Err((id, message)) => {
                let reply = ServerMessage::Reply {
                    id,
                    reply: error(ErrorKind::BadRequest, message),
                };
                if write_line(&mut writer, &reply).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let id = envelope.id;
        let reply = match envelope.request {
            ClientRequest::Watch {
                instances,
                interval_ms,
            } => {
                match watch::stream(
                    &shared,
                    client,
                    id,
                    instances,
                    interval_ms,
                    &mut reader,
                    &mut writer,
                )
                .await
                {
                    Ok(Flow::Continue) => continue,
                    Ok(Flow::HungUp) | Err(_) => return,
                }
            }
            ClientRequest::Shutdown => {
                let reply = shutdown(&shared, client).await;
                // No new client reaches this daemon from now on (and the
                // socket is not made again).
                shared.leave();
                let _ = std::fs::remove_file(shared.dir.socket());
                let _ = write_line(&mut writer, &ServerMessage::Reply { id, reply }).await;
                shared.shutdown.send_replace(true);
                return;
            }
            ClientRequest::Call { instance, call } => {
                call_gated(&shared, &instance, call, client, id, &mut writer).await
            }
            ClientRequest::Input { instance, text } => {
                input_gated(&shared, &instance, text, client, id, &mut writer).await
            }
            ClientRequest::Close { instance } => {
                close_gated(&shared, &instance, client, id, &mut writer).await
            }
            request => handle(&shared, request, client).await,
        };
        if write_line(&mut writer, &ServerMessage::Reply { id, reply })
            .await
            .is_err()
        {
            return;
        }
    }
}

/// Reads a request line; on failure, the id to answer (0 when unknown) and
/// what was wrong.
pub fn parse_request(line: Line) -> Result<Envelope<ClientRequest>, (u64, String)> {
    let text = match line {
        Line::Text(text) => text,
        Line::TooLong(n) => {
            return Err((
                0,
                format!("a {n}-byte request line is over the {MAX_CLIENT_LINE}-byte limit; send one JSON object per line, like {REQUEST_EXAMPLE}"),
            ))
        }
        Line::NotUtf8 => {
            return Err((
                0,
                format!("the request line is not UTF-8; send one JSON object per line, like {REQUEST_EXAMPLE}"),
            ))
        }
    };
    serde_json::from_str::<Envelope<ClientRequest>>(&text).map_err(|e| {
        let id = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("id").and_then(Value::as_u64))
            .unwrap_or(0);
        (
            id,
            format!("cannot read the request ({e}); send one JSON object per line, like {REQUEST_EXAMPLE}"),
        )
    })
}

/// Answers every request but `watch` and `shutdown`.
async fn handle(
    shared: &Arc<Shared>,
    request: ClientRequest,
    client: Option<ClientKind>,
) -> ClientReply {
    let forward = |name: String, request, needs_tick| async move {
        forward(shared, &name, request, needs_tick, client).await
    };
    match request {
        ClientRequest::Open(request) => open(shared, request, client).await,
        ClientRequest::List => ClientReply::typed(&list(shared)),
        ClientRequest::Describe { instance } => {
            forward(instance, LauncherRequest::Describe, true).await
        }
        ClientRequest::Read { instance } => read(shared, &instance, client).await,
        ClientRequest::Approvals => match serde_json::to_value(shared.approvals.list()) {
            Ok(value) => ClientReply::Ok(value),
            Err(e) => error(ErrorKind::Internal, e.to_string()),
        },
        ClientRequest::Decide {
            instance,
            call,
            approve,
            reason,
            by,
            host,
        } => decide(shared, &instance, &call, approve, reason, by, host),
        ClientRequest::SetApproval { instance, change } => {
            // Calls' approval is for Ticks; typing and closing for every
            // instance.
            let needs_tick = change.policy.is_some();
            let reply = forward(
                instance.clone(),
                LauncherRequest::SetApproval(change),
                needs_tick,
            )
            .await;
            if let (ClientReply::Ok(_), Ok(found)) = (&reply, shared.resolve(&instance)) {
                if let Some(conn) = found.conn() {
                    refresh_status(shared, &found, &conn).await;
                }
            }
            reply
        }
        ClientRequest::ApprovalLog { instance } => match shared.resolve(&instance) {
            Ok(found) => match serde_json::to_value(approval::read_log(&found.files.approvals)) {
                Ok(value) => ClientReply::Ok(value),
                Err(e) => error(ErrorKind::Internal, e.to_string()),
            },
            Err(e) => ClientReply::Error(e),
        },
        // Served by the connection loop, which can tell the caller that it
        // waits for approval.
        ClientRequest::Call { .. } | ClientRequest::Input { .. } | ClientRequest::Close { .. } => {
            error(
                ErrorKind::Internal,
                "this request is served elsewhere".into(),
            )
        }
        ClientRequest::Screen { instance, history } => screen(shared, &instance, history).await,
        ClientRequest::Reload { instance } => reload(shared, &instance).await,
        ClientRequest::Activity { instance, after } => activity(shared, &instance, after).await,
        // Served by the connection loop.
        ClientRequest::Watch { .. } | ClientRequest::Shutdown => error(
            ErrorKind::Internal,
            "this request is served elsewhere".into(),
        ),
    }
}

/// Whether `reply` says the instance ended under the request.
fn met_the_end(reply: &ClientReply) -> bool {
    matches!(reply, ClientReply::Error(e) if e.kind == ErrorKind::Ended)
}

/// Waits until `instance` has ended and its launcher has hung up, after
/// keeping its last screen and activity (at most [`CLOSE_TIMEOUT`]): a
/// request that met the end then answers what was kept, as one that came
/// later would.
async fn settle_end(shared: &Shared, instance: &Instance) {
    let mut changes = shared.subscribe();
    let deadline = tokio::time::Instant::now() + CLOSE_TIMEOUT;
    while instance.ended().is_none() || instance.conn().is_some() {
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            return;
        }
    }
}

/// Sends `request` to the launcher of a running `instance`; `None` when
/// the instance ended (before, or under the request, once its launcher is
/// gone): the caller answers with what was kept.
async fn while_running(
    shared: &Arc<Shared>,
    instance: &Instance,
    request: LauncherRequest,
    needs_tick: bool,
    client: Option<ClientKind>,
) -> Option<ClientReply> {
    if instance.ended().is_some() {
        return None;
    }
    let reply = forward(shared, &instance.id, request, needs_tick, client).await;
    if !met_the_end(&reply) {
        return Some(reply);
    }
    settle_end(shared, instance).await;
    None
}

/// `read`: a fresh `tick/read` of a running Tick; an ended one's last
/// state (its newest snapshot, with `"ended": true`).
async fn read(shared: &Arc<Shared>, name: &str, client: Option<ClientKind>) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    if instance.kind == InstanceKind::Shell {
        return forward(shared, name, LauncherRequest::Read, true, client).await;
    }
    if let Some(reply) = while_running(shared, &instance, LauncherRequest::Read, true, client).await
    {
        return reply;
    }
    let status = instance.status();
    match (&status.state, &status.ended) {
        (Some(state), Some(_)) => ClientReply::Ok(
            json!({"seq": state.seq, "data": state.data, "at": state.at, "ended": true}),
        ),
        (_, Some(end)) => ClientReply::Error(instance.ended_error(end)),
        (_, None) => error(
            ErrorKind::Internal,
            format!(
                "{}: its launcher went away, and it is not ended",
                instance.id
            ),
        ),
    }
}

/// `screen`: a running instance's screen from its launcher; an ended one's
/// last screen, which its launcher left in its folder.
async fn screen(shared: &Arc<Shared>, name: &str, history: usize) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let request = LauncherRequest::Screen { history };
    if let Some(reply) = while_running(shared, &instance, request, false, None).await {
        return reply;
    }
    let Some(end) = instance.ended() else {
        return error(
            ErrorKind::Internal,
            format!(
                "{}: its launcher went away, and it is not ended",
                instance.id
            ),
        );
    };
    let kept = std::fs::read(&instance.files.screen)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<tickloop_proto::wire::ScreenReply>(&bytes).ok());
    match kept {
        Some(mut last) => {
            let skip = last.history.len().saturating_sub(history);
            last.history.drain(..skip);
            match serde_json::to_value(&last) {
                Ok(value) => ClientReply::Ok(value),
                Err(e) => error(ErrorKind::Internal, e.to_string()),
            }
        }
        None => ClientReply::Error(instance.not_kept(&end, "last screen")),
    }
}

/// `call`: through the consent gate (which may hold it, while the caller
/// hears on `writer` that it waits), then to the launcher. An approved call
/// goes on only if the Tick, described again, still has the revision that
/// was approved.
async fn call_gated(
    shared: &Arc<Shared>,
    name: &str,
    call: CallRequest,
    client: Option<ClientKind>,
    id: u64,
    writer: &mut OwnedWriteHalf,
) -> ClientReply {
    if let Ok(instance) = shared.resolve(name) {
        if instance.ended().is_none() && instance.kind.is_tick() {
            let (progress, waiting) = mpsc::channel(1);
            let asked = approval::Asked::Call(&call);
            let gate = approval::gate(&shared.approvals, &*instance, asked, client, progress);
            match tell_waiting(gate, waiting, id, writer).await {
                approval::Gate::Refused(outcome) => return ClientReply::Call(outcome),
                approval::Gate::Approved(held) => {
                    if let Some(stale) = still_approved(shared, &instance, &held).await {
                        return stale;
                    }
                }
                approval::Gate::Proceed => {}
            }
        }
    }
    forward(shared, name, LauncherRequest::Call(call), true, client).await
}

/// Describes `instance` again after its call `held` was approved: `None`
/// when its revision is still the one approved, else the refusal (the call
/// never reaches the Tick).
async fn still_approved(
    shared: &Arc<Shared>,
    instance: &Arc<Instance>,
    held: &HeldCall,
) -> Option<ClientReply> {
    let now = describe_again(shared, instance).await;
    if now.as_deref() == Some(held.revision.as_str()) {
        return None;
    }
    let recorder = approval::Recorder {
        target: &**instance,
        held,
    };
    recorder.record(
        "revision_changed",
        "tickhost",
        Some(format!(
            "described again after approval: revision {}",
            now.as_deref().unwrap_or("unknown")
        )),
    );
    match approval::stale(held) {
        approval::Gate::Refused(outcome) => Some(ClientReply::Call(outcome)),
        _ => None,
    }
}

/// Asks the Tick of `instance` for its catalog now and keeps it (so `list`
/// and the gate see its current revision); the revision, when it answered.
async fn describe_again(shared: &Arc<Shared>, instance: &Arc<Instance>) -> Option<String> {
    let conn = instance.conn()?;
    let ClientReply::Ok(descriptor) = conn.request(LauncherRequest::Describe).await else {
        return None;
    };
    let revision = descriptor
        .get("revision")
        .and_then(Value::as_str)
        .map(str::to_string);
    instance.set_catalog(CatalogFacts::new(
        tickloop_proto::wire::Catalog {
            revision: revision.clone(),
            descriptor: Some(descriptor),
        },
        &shared.limits,
    ));
    revision
}

/// `input`: an agent's typing waits for the person when the instance's
/// policy asks; the person's never does.
async fn input_gated(
    shared: &Arc<Shared>,
    name: &str,
    text: String,
    client: Option<ClientKind>,
    id: u64,
    writer: &mut OwnedWriteHalf,
) -> ClientReply {
    let asked = approval::Asked::Input(&text);
    if let Some(refused) = refused_by_consent(shared, name, asked, client, id, writer).await {
        return refused;
    }
    forward(shared, name, LauncherRequest::Input { text }, false, client).await
}

/// `close`: an agent's closing of a person's instance waits for the person
/// when its policy asks.
async fn close_gated(
    shared: &Arc<Shared>,
    name: &str,
    client: Option<ClientKind>,
    id: u64,
    writer: &mut OwnedWriteHalf,
) -> ClientReply {
    let asked = approval::Asked::Close;
    if let Some(refused) = refused_by_consent(shared, name, asked, client, id, writer).await {
        return refused;
    }
    close(shared, name, client).await
}

/// Runs `asked` (typing or closing) of a running instance `name` through
/// the consent gate, telling the caller on `writer` while it waits; the
/// error to answer when it was refused, `None` when it may go on (or when
/// there is no such running instance: the request itself says so).
async fn refused_by_consent(
    shared: &Arc<Shared>,
    name: &str,
    asked: approval::Asked<'_>,
    client: Option<ClientKind>,
    id: u64,
    writer: &mut OwnedWriteHalf,
) -> Option<ClientReply> {
    let instance = shared.resolve(name).ok()?;
    if instance.ended().is_some() {
        return None;
    }
    let (progress, waiting) = mpsc::channel(1);
    let gate = approval::gate(&shared.approvals, &*instance, asked, client, progress);
    match tell_waiting(gate, waiting, id, writer).await {
        approval::Gate::Refused(outcome) => Some(refusal_error(outcome)),
        approval::Gate::Proceed | approval::Gate::Approved(_) => None,
    }
}

/// A refused `input` or `close`, as the error the client reads: the
/// not-executed error's message, code and data kept.
fn refusal_error(outcome: CallOutcome) -> ClientReply {
    let (message, data) = match outcome {
        CallOutcome::NotExecuted { error } => (
            error.message,
            Some(json!({"code": error.code, "data": error.data, "executed": false})),
        ),
        other => (format!("{other:?}"), None),
    };
    ClientReply::Error(ClientError {
        kind: ErrorKind::Refused,
        message,
        data,
    })
}

/// Runs `gate` to its end, writing each [`ServerMessage::Progress`] it
/// sends on `waiting` to the caller as request `id`'s, always before the
/// reply; when the caller cannot be written to, the gate hears it went away
/// (its channel closes).
async fn tell_waiting(
    gate: impl std::future::Future<Output = approval::Gate>,
    mut waiting: mpsc::Receiver<HeldCall>,
    id: u64,
    writer: &mut OwnedWriteHalf,
) -> approval::Gate {
    tokio::pin!(gate);
    let mut caller_here = true;
    let verdict = loop {
        tokio::select! {
            biased;
            Some(held) = waiting.recv(), if caller_here => {
                caller_here = tell(writer, id, held).await;
                if !caller_here {
                    waiting.close();
                }
            }
            verdict = &mut gate => break verdict,
        }
    };
    // What the gate said just before it ended still goes out first.
    while caller_here {
        match waiting.try_recv() {
            Ok(held) => caller_here = tell(writer, id, held).await,
            Err(_) => break,
        }
    }
    verdict
}

/// Tells the caller that its call `id` waits; `false` when it has gone.
async fn tell(writer: &mut OwnedWriteHalf, id: u64, held: HeldCall) -> bool {
    write_line(writer, &ServerMessage::Progress { id, held })
        .await
        .is_ok()
}

/// `approve` / `refuse`: hands the decision to the waiting call.
fn decide(
    shared: &Shared,
    name: &str,
    call: &str,
    approve: bool,
    reason: Option<String>,
    by: String,
    host: Option<String>,
) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let decision = if approve {
        approval::Decision::Approved { by, host }
    } else {
        approval::Decision::Refused { by, reason, host }
    };
    if shared.approvals.decide(&instance.id, call, decision) {
        ClientReply::Ok(json!({"instance": instance.id, "call": call, "approved": approve}))
    } else {
        error(
            ErrorKind::BadRequest,
            format!(
                "no call {call} of {} waits for approval (decided already, timed out, or never held); `tickloop approvals` lists the waiting ones",
                instance.id
            ),
        )
    }
}

/// `activity`: a running instance's record from its launcher, with the
/// subscribers tickhost counts; an ended one's, kept beside its last screen.
async fn activity(shared: &Arc<Shared>, name: &str, after: Option<u64>) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let request = LauncherRequest::Activity { after };
    let running = while_running(shared, &instance, request, false, None).await;
    let record = match (running, instance.ended()) {
        (Some(ClientReply::Ok(value)), _) => serde_json::from_value::<ActivityRecord>(value)
            .map_err(|e| format!("the launcher sent an unreadable activity record: {e}")),
        (Some(other), _) => return other,
        (None, None) => {
            return error(
                ErrorKind::Internal,
                format!(
                    "{}: its launcher went away, and it is not ended",
                    instance.id
                ),
            )
        }
        (None, Some(end)) => match std::fs::read(&instance.files.activity) {
            Ok(bytes) => serde_json::from_slice::<ActivityRecord>(&bytes)
                .map(|mut record| {
                    record.entries.retain(|e| e.n > after.unwrap_or(0));
                    record
                })
                .map_err(|e| {
                    format!(
                        "the activity kept in {} is unreadable: {e}",
                        instance.files.activity.display()
                    )
                }),
            // Ended before launchers kept their activity, or it could not
            // be written: say how it ended.
            Err(_) => return ClientReply::Error(instance.not_kept(&end, "activity record")),
        },
    };
    match record {
        Ok(mut record) => {
            record.subscribers = instance.subscribers.load(Ordering::Relaxed);
            match serde_json::to_value(&record) {
                Ok(value) => ClientReply::Ok(value),
                Err(e) => error(ErrorKind::Internal, e.to_string()),
            }
        }
        Err(message) => error(ErrorKind::Internal, message),
    }
}

/// Sends `request` to the launcher of `name` (on behalf of `client`) and
/// relays its reply.
async fn forward(
    shared: &Arc<Shared>,
    name: &str,
    request: LauncherRequest,
    needs_tick: bool,
    client: Option<ClientKind>,
) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    if let Some(end) = instance.ended() {
        return ClientReply::Error(instance.ended_error(&end));
    }
    if needs_tick && instance.kind == InstanceKind::Shell {
        return error(
            ErrorKind::NotATick,
            format!(
                "{} is a plain terminal program (opened with --shell), not a Tick; `screen` and `input` work with it",
                instance.id
            ),
        );
    }
    let Some(conn) = instance.conn() else {
        if let Some(end) = instance.ended() {
            return ClientReply::Error(instance.ended_error(&end));
        }
        // Recorded, but its launcher has not answered since tickhost started
        // (it is tried again in the background).
        let pid = instance.status().launcher_pid;
        return error(
            ErrorKind::Unresponsive,
            format!(
                "{}: its launcher (pid {pid}) has not answered since tickhost started; if it is stopped, `kill -CONT {pid}` resumes it (tickhost connects by itself), or `kill {pid}` ends it",
                instance.id
            ),
        );
    };
    let called = match &request {
        LauncherRequest::Call(call) => Some(call.tool.clone()),
        _ => None,
    };
    let reply = conn.request_for(request, client).await;
    if let Some(tool) = called {
        // The updates a call caused reach `list` and `watch` before its
        // reply reaches the client, whatever order the launcher wrote them.
        refresh_status(shared, &instance, &conn).await;
        // So does a catalog it may have changed: after a mutating call or a
        // stale-revision refusal, the Tick is described again.
        let mutated = instance.catalog().tool(&tool).is_some_and(|(m, _)| m);
        let stale = matches!(&reply, ClientReply::Call(CallOutcome::NotExecuted { error }) if error.code == STALE_REVISION);
        if mutated || stale {
            describe_again(shared, &instance).await;
        }
    }
    reply
}

/// Asks the launcher for its current status and keeps it.
async fn refresh_status(shared: &Shared, instance: &Instance, conn: &LauncherConn) {
    if let ClientReply::Ok(value) = conn.request(LauncherRequest::Status).await {
        if let Ok(status) = serde_json::from_value::<LauncherStatus>(value) {
            if instance.set_status(status) {
                shared.bump();
            }
        }
    }
}

/// `list`: every instance from its newest status, sorted by id.
fn list(shared: &Shared) -> Vec<ListEntry> {
    shared
        .all()
        .iter()
        .map(|instance| {
            let mut entry = list_entry(instance);
            entry.approval_tools = shared.approvals.tools_for(&instance.id);
            entry.approvals_waiting = entry.approval_tools.len();
            entry
        })
        .collect()
}

fn list_entry(instance: &Instance) -> ListEntry {
    let status = instance.status();
    let catalog = instance.catalog();
    let text = |name: &str| catalog.field(name).as_str().map(str::to_string);
    let (generation, failed, restarts) = super::open::artifact_fields(instance, &status);
    ListEntry {
        id: instance.id.clone(),
        kind: text("kind"),
        title: match instance.kind {
            InstanceKind::Hosted | InstanceKind::Artifact => text("title"),
            InstanceKind::Shell => instance.title(&status),
        },
        state: super::open::state_word(&status),
        ended: status.ended.clone(),
        seq: status.state.as_ref().map(|s| s.seq),
        pid: status.pid,
        // An ended instance has no launcher, so no views (its last status
        // may still count some).
        views: if status.ended.is_some() {
            0
        } else {
            status.views
        },
        calls_in_flight: status.calls_in_flight,
        approve: status.approve.unwrap_or_default(),
        owner: instance.owner(),
        agent_input: instance.consent_policy(HeldAction::Input),
        agent_close: instance.consent_policy(HeldAction::Close),
        updates: status.updates_total,
        last_update_at: (status.updates_total > 0)
            .then(|| status.state.as_ref().map(|s| s.at.clone()))
            .flatten(),
        last_output_at: status.last_output_at.clone(),
        revision: catalog.revision.clone(),
        launcher_pid: status.launcher_pid,
        argv: status.argv.clone(),
        cwd: status.cwd.clone(),
        started_at: status.started_at.clone(),
        generation,
        failed,
        restarts,
        approvals_waiting: 0,
        approval_tools: Vec::new(),
    }
}

/// `reload`: an `artifact:` instance starts its file's newest version now;
/// the launcher answers once that version is up or has failed.
async fn reload(shared: &Arc<Shared>, name: &str) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    if instance.kind != InstanceKind::Artifact {
        return error(
            ErrorKind::BadRequest,
            format!(
                "{} is not an artifact (opened with --artifact); only an artifact reloads",
                instance.id
            ),
        );
    }
    let reply = forward(shared, name, LauncherRequest::Reload, false, None).await;
    if let Some(conn) = instance.conn() {
        refresh_status(shared, &instance, &conn).await;
    }
    match reply {
        ClientReply::Ok(_) => {
            ClientReply::typed(&super::open::open_reply(&instance, &instance.status()))
        }
        other => other,
    }
}

/// `close`: ends a running instance (it stays listed, ended), or forgets an
/// ended one; `client` is named as who closed it.
async fn close(shared: &Arc<Shared>, name: &str, client: Option<ClientKind>) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    if let Some(end) = instance.ended() {
        shared.forget(&instance);
        log(&format!("{}: forgotten", instance.id));
        return ClientReply::Ok(json!({"id": instance.id, "ended": end, "forgotten": true}));
    }
    let end = end_instance(shared, &instance, client).await;
    ClientReply::Ok(json!({"id": instance.id, "ended": end}))
}

/// Asks the launcher of a running instance to end it and waits until it has
/// (killing it after [`CLOSE_TIMEOUT`]).
async fn end_instance(
    shared: &Arc<Shared>,
    instance: &Arc<Instance>,
    client: Option<ClientKind>,
) -> tickloop_proto::wire::EndInfo {
    let mut changes = shared.subscribe();
    instance.close_requested.store(true, Ordering::SeqCst);
    if let Some(conn) = instance.conn() {
        // The launcher may exit before it answers; its end is what we wait for.
        tokio::spawn(async move {
            let _ = conn.request_for(LauncherRequest::Close, client).await;
        });
    }
    let deadline = tokio::time::Instant::now() + CLOSE_TIMEOUT;
    // Wait for the end and for the launcher to hang up (after which it has
    // written its last record).
    loop {
        if let Some(end) = instance.ended() {
            if instance.conn().is_none() {
                log(&format!("{}: closed ({})", instance.id, end.reason));
                return end;
            }
        }
        if tokio::time::timeout_at(deadline, changes.changed())
            .await
            .is_err()
        {
            break;
        }
    }
    if let Some(end) = instance.ended() {
        return end;
    }
    let status = instance.status();
    for pid in [-(status.pid as i64), status.launcher_pid as i64] {
        if let Ok(pid) = i32::try_from(pid) {
            if pid != 0 && pid != -1 {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe {
                    libc::kill(pid, libc::SIGKILL);
                }
            }
        }
    }
    instance.mark_ended(end_info(
        tickloop_proto::wire::EndClass::Closed,
        format!(
            "closed by `tickloop close`; the launcher did not end it within {} s, so it was killed",
            CLOSE_TIMEOUT.as_secs()
        ),
    ));
    shared.bump();
    instance.ended().unwrap_or_else(|| {
        end_info(
            tickloop_proto::wire::EndClass::Closed,
            "closed by `tickloop close`".into(),
        )
    })
}

/// `shutdown`: ends every running instance and forgets every instance.
async fn shutdown(shared: &Arc<Shared>, client: Option<ClientKind>) -> ClientReply {
    let instances = shared.all();
    let mut closing = Vec::new();
    for instance in instances.iter().filter(|i| i.ended().is_none()) {
        let shared = shared.clone();
        let instance = instance.clone();
        closing.push(tokio::spawn(async move {
            end_instance(&shared, &instance, client).await;
        }));
    }
    let mut closed = closing.len();
    for task in closing {
        let _ = task.await;
    }
    // Launchers of this directory tickhost had lost (their files removed,
    // or started by a tickhost that was killed) end too; those of the
    // instances just closed are on their way out.
    let closing: Vec<u32> = instances.iter().map(|i| i.status().launcher_pid).collect();
    closed += end_lost_launchers(shared, closing).await;
    for instance in &instances {
        shared.forget(instance);
    }
    log(&format!("shutdown: closed {closed} instances"));
    ClientReply::Ok(json!({"shutdown": true, "closed": closed}))
}

/// Ends every launcher of the runtime directory still running (see
/// `tickloop_client::runtime_procs::end_launchers`); how many there were.
async fn end_lost_launchers(shared: &Shared, known: Vec<u32>) -> usize {
    use tickloop_client::runtime_procs::{end_launchers, LAUNCHER_GRACE};
    let root = shared.dir.root().to_path_buf();
    let ended = tokio::task::spawn_blocking(move || end_launchers(&root, &known, LAUNCHER_GRACE))
        .await
        .unwrap_or_default();
    if !ended.is_empty() {
        log(&format!(
            "shutdown: ended {} launchers it had lost (pids {ended:?})",
            ended.len()
        ));
    }
    ended.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_say_what_to_send() {
        let (id, message) = parse_request(Line::Text(
            "{\"id\":7,\"request\":{\"op\":\"nope\"}}".into(),
        ))
        .err()
        .unwrap_or_default();
        assert_eq!(id, 7);
        assert!(message.contains(REQUEST_EXAMPLE));
        let (id, _) = parse_request(Line::Text("not json".into()))
            .err()
            .unwrap_or_default();
        assert_eq!(id, 0);
        assert!(parse_request(Line::NotUtf8).is_err());
        assert!(parse_request(Line::TooLong(9)).is_err());
        let ok = parse_request(Line::Text(REQUEST_EXAMPLE.into()));
        assert_eq!(
            ok.map(|e| (e.id, e.request)).ok(),
            Some((1, ClientRequest::List))
        );
    }
}
