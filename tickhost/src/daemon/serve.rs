//! Client connections on `tickhost.sock`: hello, then requests answered in
//! order (a malformed line gets a `bad_request` reply and the connection goes
//! on), routing to the launchers, `list`, `close` and `shutdown`. Every line
//! to the client goes through the connection's one writer task (an
//! [`Outbox`]), so none is ever cut halfway.

use super::agent_limits;
use super::approval;
use super::conn::LauncherConn;
use super::consent::{self, Caller};
use super::log::log;
use super::open::open;
use super::process::Known;
use super::registry::{end_info, Instance, Shared};
use super::request_line::{parse_request, MAX_CLIENT_LINE};
use super::watch::{self, Flow};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::framing::{Line, LineReader};
use tickloop_client::outbox::Outbox;
use tickloop_client::paths::InstanceKind;
use tickloop_proto::core::codes::STALE_REVISION;
use tickloop_proto::wire::CallOutcome;
use tickloop_proto::wire::{
    ActivityRecord, CallRequest, ClientError, ClientKind, ClientReply, ClientRequest, ErrorKind,
    HeldAction, Hello, HelloReply, LauncherRequest, LauncherStatus, ListEntry, Role, ServerMessage,
    ShellSummary,
};
use tokio::net::UnixStream;

/// How long `close` waits for the launcher to report the end (10 s, scaled
/// by `TICKLOOP_LAUNCHER_TIMEOUT_MS`).
fn close_wait() -> Duration {
    super::conn::answer_limit(&LauncherRequest::Status)
}

/// How long a client has to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of lines queued for one client at most (its replies, progress,
/// watch deliveries): the connection's tasks wait for room; one longer
/// reply goes alone.
const CLIENT_QUEUE: usize = 1024 * 1024;

fn error(kind: ErrorKind, message: String) -> ClientReply {
    ClientReply::Error(ClientError {
        kind,
        message,
        data: None,
    })
}

/// Serves one client connection until it hangs up.
pub async fn serve_client(shared: Arc<Shared>, stream: UnixStream) {
    let (read, writer) = stream.into_split();
    let mut reader = LineReader::new(read, MAX_CLIENT_LINE);
    let out = Outbox::spawn(writer, CLIENT_QUEUE);

    let Some(client) = greet(&mut reader, &out).await else {
        return;
    };

    // A line that came while a wait or run was being answered, served next.
    let mut early: Option<Line> = None;
    loop {
        let line = match early.take() {
            Some(line) => line,
            None => match reader.next().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => return,
            },
        };
        let envelope = match parse_request(line) {
            Ok(envelope) => envelope,
            Err((id, message)) => {
                let reply = ServerMessage::Reply {
                    id,
                    reply: error(ErrorKind::BadRequest, message),
                };
                if out.send(&reply).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let id = envelope.id;
        // What only the person may do, refused to an agent's own CLI.
        let refused = client.and_then(|c| agent_limits::refused(&shared, &envelope.request, c));
        if let Some(reply) = refused {
            if out.send(&ServerMessage::Reply { id, reply }).await.is_err() {
                return;
            }
            continue;
        }
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
                    &out,
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
                let _ = out.send_written(&ServerMessage::Reply { id, reply }).await;
                shared.shutdown.send_replace(true);
                return;
            }
            ClientRequest::Call { instance, call } => {
                let mut caller = Caller {
                    reader: &mut reader,
                    out: &out,
                    id,
                    client,
                };
                call_gated(&shared, &instance, call, &mut caller).await
            }
            ClientRequest::Input { instance, text } => {
                let mut caller = Caller {
                    reader: &mut reader,
                    out: &out,
                    id,
                    client,
                };
                input_gated(&shared, &instance, text, &mut caller).await
            }
            ClientRequest::Keys {
                instance,
                text,
                keys,
            } => {
                let mut caller = Caller {
                    reader: &mut reader,
                    out: &out,
                    id,
                    client,
                };
                keys_gated(&shared, &instance, (text, keys), &mut caller).await
            }
            ClientRequest::Wait { instance, wait } => {
                match wait_watched(&shared, &instance, wait, client, &mut reader, &mut early).await
                {
                    Some(reply) => reply,
                    None => return,
                }
            }
            ClientRequest::Run { instance, run } => {
                let caller = Caller {
                    reader: &mut reader,
                    out: &out,
                    id,
                    client,
                };
                match run_watched(&shared, &instance, run, caller, &mut early).await {
                    Some(reply) => reply,
                    None => return,
                }
            }
            ClientRequest::Close { instance } => {
                let mut caller = Caller {
                    reader: &mut reader,
                    out: &out,
                    id,
                    client,
                };
                close_gated(&shared, &instance, &mut caller).await
            }
            // Nothing of this connection is held now (a held request's
            // `withdraw` is read while it waits).
            ClientRequest::Withdraw { request, .. } => consent::not_held(request),
            request => handle(&shared, request, client).await,
        };
        if out.send(&ServerMessage::Reply { id, reply }).await.is_err() {
            return;
        }
    }
}

/// The connection's hello, read and answered: who the client is (for the
/// activity records), or `None` when it was refused or went away.
async fn greet(
    reader: &mut LineReader<tokio::net::unix::OwnedReadHalf>,
    out: &Outbox,
) -> Option<Option<ClientKind>> {
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, reader.next()).await {
        Ok(Ok(Some(Line::Text(text)))) => serde_json::from_str::<Hello>(&text).map_err(|e| {
            format!(
                "the first line must be hello, like {}: {e}",
                serde_json::to_string(&Hello::new(Role::Client)).unwrap_or_default()
            )
        }),
        Ok(Ok(Some(_))) => Err("the first line must be a JSON hello".to_string()),
        Ok(Ok(None)) | Ok(Err(_)) => return None,
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
    if out.send(&answer).await.is_err() || refused {
        return None;
    }
    Some(client)
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
        // A `shell:` instance's launcher answers these itself: its shell's
        // integration and state, or that it is no Tick.
        ClientRequest::Describe { instance } => {
            forward(instance, LauncherRequest::Describe, false).await
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
        } => consent::decide(shared, &instance, &call, approve, reason, by, host).await,
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
            Ok(found) => {
                match serde_json::to_value(approval::log::read(&found.files.approvals).0) {
                    Ok(value) => ClientReply::Ok(value),
                    Err(e) => error(ErrorKind::Internal, e.to_string()),
                }
            }
            Err(e) => ClientReply::Error(e),
        },
        // Served by the connection loop, which can tell the caller that it
        // waits for approval, and read its `withdraw` (or its hang-up
        // during a wait or a run).
        ClientRequest::Call { .. }
        | ClientRequest::Input { .. }
        | ClientRequest::Keys { .. }
        | ClientRequest::Wait { .. }
        | ClientRequest::Run { .. }
        | ClientRequest::Close { .. }
        | ClientRequest::Withdraw { .. } => error(
            ErrorKind::Internal,
            "this request is served elsewhere".into(),
        ),
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
/// keeping its last screen and activity (at most [`close_wait`]): a
/// request that met the end then answers what was kept, as one that came
/// later would.
async fn settle_end(shared: &Shared, instance: &Instance) {
    let mut changes = shared.subscribe();
    let deadline = tokio::time::Instant::now() + close_wait();
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
    // A shell's state is its launcher's (its commands, with integration;
    // the launcher says what works without).
    if instance.kind == InstanceKind::Shell {
        return forward(shared, name, LauncherRequest::Read, false, client).await;
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

/// `call`: through the consent gate (which may hold it while the caller
/// hears that it waits), then to the launcher. An approved call has been
/// confirmed by the gate to be for the Tick's current revision.
async fn call_gated(
    shared: &Arc<Shared>,
    name: &str,
    call: CallRequest,
    caller: &mut Caller<'_>,
) -> ClientReply {
    if let Ok(instance) = shared.resolve(name) {
        if instance.ended().is_none() && instance.kind.is_tick() {
            let asked = approval::Asked::Call(&call);
            if let approval::Gate::Refused(outcome) =
                consent::through_gate(shared, &instance, asked, caller).await
            {
                return ClientReply::Call(outcome);
            }
        }
    }
    forward(
        shared,
        name,
        LauncherRequest::Call(call),
        true,
        caller.client,
    )
    .await
}

/// `input`: an agent's typing waits for the person when the instance's
/// policy asks; the person's never does.
async fn input_gated(
    shared: &Arc<Shared>,
    name: &str,
    text: String,
    caller: &mut Caller<'_>,
) -> ClientReply {
    let asked = approval::Asked::Input(&text);
    if let Some(refused) = refused_by_consent(shared, name, asked, caller).await {
        return refused;
    }
    let client = caller.client;
    forward(shared, name, LauncherRequest::Input { text }, false, client).await
}

/// `keys`: every name checked first (an unknown one types nothing and asks
/// nobody), then held as typing is.
async fn keys_gated(
    shared: &Arc<Shared>,
    name: &str,
    (text, keys): (Option<String>, Vec<String>),
    caller: &mut Caller<'_>,
) -> ClientReply {
    if let Err(e) = tickloop_proto::keys::parse_all(&keys) {
        return error(ErrorKind::BadRequest, e.to_string());
    }
    let asked = approval::Asked::Keys(text.as_deref(), &keys);
    if let Some(refused) = refused_by_consent(shared, name, asked, caller).await {
        return refused;
    }
    let request = LauncherRequest::Keys { text, keys };
    forward(shared, name, request, false, caller.client).await
}

/// `wait`, answered by the launcher while the caller is watched: `None`
/// when the caller went away first (an MCP wait cancelled), and the
/// launcher's wait then ends at its own timeout.
async fn wait_watched(
    shared: &Arc<Shared>,
    name: &str,
    wait: tickloop_proto::wire::WaitRequest,
    client: Option<ClientKind>,
    reader: &mut LineReader<tokio::net::unix::OwnedReadHalf>,
    early: &mut Option<Line>,
) -> Option<ClientReply> {
    let for_end = wait.ended;
    let waited = forward(shared, name, LauncherRequest::Wait(wait), false, client);
    match until_hangup(waited, reader, early).await {
        // It has ended (before, or as the wait reached it): answered from
        // what it kept, once tickhost has taken the end in (the launcher
        // may hang up before tickhost reads its last status).
        Some(ClientReply::Error(e)) if for_end && e.kind == ErrorKind::Ended => {
            if let Ok(instance) = shared.resolve(name) {
                settle_end(shared, &instance).await;
            }
            Some(ended_already(shared, name))
        }
        Some(reply) => Some(reply),
        None => {
            log(&format!(
                "{name}: the client of a wait went away; it is dropped"
            ));
            None
        }
    }
}

/// `run`: the request checked, then an agent's command at a person's shell
/// held as typing is (the question showing the command line), then typed
/// by the launcher at the prompt (or refused, nothing typed, when the shell
/// is not at one) and answered at its end. `None` when the caller went
/// away meanwhile: the command, once typed, runs on; it is never killed.
async fn run_watched(
    shared: &Arc<Shared>,
    name: &str,
    run: tickloop_proto::wire::RunRequest,
    mut caller: Caller<'_>,
    early: &mut Option<Line>,
) -> Option<ClientReply> {
    if let Some(problem) = run.problem() {
        return Some(error(ErrorKind::BadRequest, problem));
    }
    let asked = approval::Asked::Run(&run.command);
    if let Some(refused) = refused_by_consent(shared, name, asked, &mut caller).await {
        return Some(refused);
    }
    let ran = forward(
        shared,
        name,
        LauncherRequest::Run(run),
        false,
        caller.client,
    );
    let reply = until_hangup(ran, caller.reader, early).await;
    if reply.is_none() {
        log(&format!(
            "{name}: the client of a run went away; the command runs on"
        ));
    }
    reply
}

/// `wait --ended` of an instance that has ended: answered at once, with
/// how it ended and its last screen.
fn ended_already(shared: &Shared, name: &str) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let Some(end) = instance.ended() else {
        return error(ErrorKind::Internal, "the instance runs again".into());
    };
    let screen = std::fs::read(&instance.files.screen)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<tickloop_proto::wire::ScreenReply>(&bytes).ok())
        .map(|s| s.lines)
        .unwrap_or_default();
    ClientReply::typed(&tickloop_proto::wire::WaitReply {
        ended: Some(end),
        screen,
        ..Default::default()
    })
}

/// Runs `answer` (a wait or a run, which may take long) while watching the
/// caller: `None` when it hung up first. A line it sent meanwhile is kept
/// in `early`, to be served next.
async fn until_hangup(
    answer: impl std::future::Future<Output = ClientReply>,
    reader: &mut LineReader<tokio::net::unix::OwnedReadHalf>,
    early: &mut Option<Line>,
) -> Option<ClientReply> {
    tokio::pin!(answer);
    loop {
        if early.is_some() {
            return Some(answer.await);
        }
        tokio::select! {
            reply = &mut answer => return Some(reply),
            line = reader.next() => match line {
                Ok(Some(line)) => *early = Some(line),
                Ok(None) | Err(_) => return None,
            },
        }
    }
}

/// `close`: an agent's closing of a person's instance waits for the person
/// when its policy asks.
async fn close_gated(shared: &Arc<Shared>, name: &str, caller: &mut Caller<'_>) -> ClientReply {
    let asked = approval::Asked::Close;
    if let Some(refused) = refused_by_consent(shared, name, asked, caller).await {
        return refused;
    }
    close(shared, name, caller.client).await
}

/// Runs `asked` (typing or closing) of a running instance `name` through
/// the consent gate, for `caller`; the error to answer when it was
/// refused, `None` when it may go on (or when there is no such running
/// instance: the request itself says so).
async fn refused_by_consent(
    shared: &Arc<Shared>,
    name: &str,
    asked: approval::Asked<'_>,
    caller: &mut Caller<'_>,
) -> Option<ClientReply> {
    let instance = shared.resolve(name).ok()?;
    if instance.ended().is_some() {
        return None;
    }
    match consent::through_gate(shared, &instance, asked, caller).await {
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
            shared.describe_again(&instance).await;
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
        // A shell's commands are `read`, not listed: its `seq` stays null.
        seq: status
            .state
            .as_ref()
            .filter(|_| instance.kind != InstanceKind::Shell)
            .map(|s| s.seq),
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
        shell: status.shell.clone(),
        no_integration: status.no_integration.clone(),
        // Its state in short (the rows of the person's views); `read` has
        // the whole, with each command's output.
        shell_state: status
            .state
            .as_ref()
            .filter(|_| instance.kind == InstanceKind::Shell && status.shell.is_some())
            .and_then(|s| ShellSummary::of_state(s.seq, &s.data)),
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
/// (killing it after [`close_wait`]).
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
    let deadline = tokio::time::Instant::now() + close_wait();
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
    kill_stuck(instance);
    instance.mark_ended(end_info(
        tickloop_proto::wire::EndClass::Closed,
        format!(
            "closed by `tickloop close`; the launcher did not end it within {} s, so it was killed",
            close_wait().as_secs_f64()
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

/// Kills what runs of an instance whose launcher did not end it: the
/// Tick's process group, only while the Tick is still its launcher's
/// child, and the launcher, only while it is still that launcher (a status
/// can be stale, and its pids given to other processes since).
fn kill_stuck(instance: &Instance) {
    let status = instance.status();
    let Some(launcher) = instance.launcher() else {
        log(&format!(
            "{}: its launcher (pid {}) no longer runs; nothing to kill",
            instance.id, status.launcher_pid
        ));
        return;
    };
    match Known::now(status.pid) {
        Some(tick) if tick.child_of(&launcher) => {
            tick.signal_group(libc::SIGKILL);
        }
        Some(_) => log(&format!(
            "{}: pid {} is no longer its Tick (not its launcher's child); left alone",
            instance.id, status.pid
        )),
        None => {}
    }
    launcher.signal(libc::SIGKILL);
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
