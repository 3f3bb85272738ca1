//! Forwarding: a request sent on to an instance's launcher and its reply
//! relayed ([`forward`]), with what tickhost keeps in step around it (the
//! status a call changed, a catalog it may have changed), and the helpers
//! of a request that meets the instance's end or outlives its caller.

use crate::daemon::conn::LauncherConn;
use crate::daemon::connection::Connection;
use crate::daemon::registry::{Instance, Shared};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::paths::InstanceKind;
use tickloop_proto::core::codes::STALE_REVISION;
use tickloop_proto::wire::{
    CallOutcome, ClientError, ClientKind, ClientReply, ErrorKind, LauncherRequest, LauncherStatus,
};

/// How long `close` waits for the launcher to report the end (10 s, scaled
/// by `TICKLOOP_LAUNCHER_TIMEOUT_MS`).
pub fn close_wait() -> Duration {
    crate::daemon::conn::answer_limit(&LauncherRequest::Status)
}

pub fn error(kind: ErrorKind, message: String) -> ClientReply {
    ClientReply::Error(ClientError {
        kind,
        message,
        data: None,
    })
}

/// Sends `request` to the launcher of `name` (on behalf of `client`) and
/// relays its reply.
pub async fn forward(
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
pub async fn refresh_status(shared: &Shared, instance: &Instance, conn: &LauncherConn) {
    if let ClientReply::Ok(value) = conn.request(LauncherRequest::Status).await {
        if let Ok(status) = serde_json::from_value::<LauncherStatus>(value) {
            if instance.set_status(status) {
                shared.bump();
            }
        }
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
pub async fn settle_end(shared: &Shared, instance: &Instance) {
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
pub async fn while_running(
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

/// Runs `answer` (a wait or a run, which may take long) while watching the
/// caller's connection: `None` when it hung up first. A line it sent
/// meanwhile is kept in the connection's `early`, to be served next.
pub async fn until_hangup(
    answer: impl std::future::Future<Output = ClientReply>,
    conn: &mut Connection,
) -> Option<ClientReply> {
    tokio::pin!(answer);
    loop {
        if conn.early.is_some() {
            return Some(answer.await);
        }
        tokio::select! {
            reply = &mut answer => return Some(reply),
            line = conn.reader.next() => match line {
                Ok(Some(line)) => conn.early = Some(line),
                Ok(None) | Err(_) => return None,
            },
        }
    }
}

/// The error of a request about an instance whose launcher went away
/// though it has not ended.
pub fn launcher_gone(instance: &Instance) -> ClientReply {
    error(
        ErrorKind::Internal,
        format!(
            "{}: its launcher went away, and it is not ended",
            instance.id
        ),
    )
}
