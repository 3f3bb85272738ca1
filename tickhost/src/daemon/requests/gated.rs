//! Gated actions: what the consent gate may hold for the person (a call of
//! a mutating tool, typing — `input`, `keys`, `run` —, `reload`, `record`),
//! carried out once [`super::admit`] has let them through. Each request is
//! checked first ([`problem`]): one that is wrong in itself (an unknown key
//! name, a `run` without a command, a `reload` of what is no artifact) asks
//! nobody and does nothing.

use super::forward::{error, forward, refresh_status, until_hangup};
use crate::daemon::connection::Caller;
use crate::daemon::log::log;
use crate::daemon::registry::Shared;
use serde_json::json;
use std::sync::Arc;
use tickloop_client::paths::InstanceKind;
use tickloop_proto::wire::{
    CallRequest, ClientReply, ClientRequest, ErrorKind, LauncherRequest, RunRequest,
};

/// What is wrong with `request` itself, before anyone is asked about it:
/// the error to answer, or `None`.
pub fn problem(shared: &Shared, request: &ClientRequest) -> Option<ClientReply> {
    match request {
        ClientRequest::Keys { keys, .. } => tickloop_proto::keys::parse_all(keys)
            .err()
            .map(|e| error(ErrorKind::BadRequest, e.to_string())),
        ClientRequest::Run { run, .. } => run.problem().map(|p| error(ErrorKind::BadRequest, p)),
        ClientRequest::Reload { instance } => match shared.resolve(instance) {
            Ok(found) if found.kind != InstanceKind::Artifact => Some(error(
                ErrorKind::BadRequest,
                format!(
                    "{} is not an artifact (opened with --artifact); only an artifact reloads",
                    found.id
                ),
            )),
            Ok(_) => None,
            Err(e) => Some(ClientReply::Error(e)),
        },
        ClientRequest::Record { instance } => match shared.resolve(instance) {
            Ok(found) => found
                .ended()
                .map(|end| ClientReply::Error(found.ended_error(&end))),
            Err(e) => Some(ClientReply::Error(e)),
        },
        _ => None,
    }
}

/// `call`: to the launcher (the gate has let it through: an approved call
/// has been confirmed to be for the Tick's current revision).
pub async fn call(
    shared: &Arc<Shared>,
    name: &str,
    call: CallRequest,
    caller: &Caller<'_>,
) -> ClientReply {
    let request = LauncherRequest::Call(call);
    forward(shared, name, request, true, caller.client()).await
}

/// `input`: typed as it is.
pub async fn input(
    shared: &Arc<Shared>,
    name: &str,
    text: String,
    caller: &Caller<'_>,
) -> ClientReply {
    let request = LauncherRequest::Input { text };
    forward(shared, name, request, false, caller.client()).await
}

/// `keys`: each encoded for the program's modes, after the text.
pub async fn keys(
    shared: &Arc<Shared>,
    name: &str,
    (text, keys): (Option<String>, Vec<String>),
    caller: &Caller<'_>,
) -> ClientReply {
    let request = LauncherRequest::Keys { text, keys };
    forward(shared, name, request, false, caller.client()).await
}

/// `run`: typed by the launcher at the prompt (or refused, nothing typed,
/// when the shell is not at one) and answered at its end. `None` when the
/// caller went away meanwhile: the command, once typed, runs on; it is
/// never killed.
pub async fn run(
    shared: &Arc<Shared>,
    name: &str,
    run: RunRequest,
    caller: &mut Caller<'_>,
) -> Option<ClientReply> {
    let client = caller.client();
    let ran = forward(shared, name, LauncherRequest::Run(run), false, client);
    let reply = until_hangup(ran, caller.conn).await;
    if reply.is_none() {
        log(&format!(
            "{name}: the client of a run went away; the command runs on"
        ));
    }
    reply
}

/// `reload`: an `artifact:` instance starts its file's newest version now,
/// the launcher naming who asked in its activity; answered once that
/// version is up or has failed.
pub async fn reload(shared: &Arc<Shared>, name: &str, caller: &Caller<'_>) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let reply = forward(
        shared,
        name,
        LauncherRequest::Reload,
        false,
        caller.client(),
    )
    .await;
    if let Some(conn) = instance.conn() {
        refresh_status(shared, &instance, &conn).await;
    }
    match reply {
        ClientReply::Ok(_) => ClientReply::typed(&crate::daemon::open::open_reply(
            &instance,
            &instance.status(),
        )),
        other => other,
    }
}

/// `record`: the caller may record the instance now (it connects to the
/// launcher as a recorder, which names it in the activity).
pub fn record(shared: &Shared, name: &str) -> ClientReply {
    match shared.resolve(name) {
        Ok(instance) => match instance.ended() {
            Some(end) => ClientReply::Error(instance.ended_error(&end)),
            None => ClientReply::Ok(json!({"id": instance.id, "record": true})),
        },
        Err(e) => ClientReply::Error(e),
    }
}
