//! Ending and forgetting: `close` ends a running instance (it stays
//! listed, ended) or forgets an ended one, `shutdown` ends every instance
//! and forgets them all. Forgetting removes an instance's folder from the
//! runtime directory; its approval log and activity stay in the data
//! directory for `[records] keep_days` (`Shared::forget`). An agent never
//! forgets the person's instances unless the person lets agents close them
//! (`agent_close auto`): [`super::admit`] refuses it, and the [`Licence`]
//! it gives says so again here, where the instance is looked at last.

use super::admit::{forget_refusal, Licence};
use super::forward::close_wait;
use crate::daemon::log::log;
use crate::daemon::process::Known;
use crate::daemon::registry::{end_info, Instance, Shared};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tickloop_proto::wire::{ClientKind, ClientReply, EndClass, EndInfo, LauncherRequest};

/// `close`: ends a running instance (it stays listed, ended), or forgets
/// an ended one when `licence` allows; `client` is named as who closed it.
pub async fn close(
    shared: &Arc<Shared>,
    name: &str,
    client: Option<ClientKind>,
    licence: Licence,
) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    if let Some(end) = instance.ended() {
        if !licence.forget_persons && !instance.agents_may_forget() {
            return forget_refusal(client, &instance.id);
        }
        shared.forget(&instance, client);
        log(&format!("{}: forgotten", instance.id));
        return ClientReply::Ok(json!({"id": instance.id, "ended": end, "forgotten": true}));
    }
    let end = end_instance(shared, &instance, client).await;
    ClientReply::Ok(json!({"id": instance.id, "ended": end}))
}

/// Asks the launcher of a running instance to end it and waits until it has
/// (killing it after [`close_wait`]).
pub async fn end_instance(
    shared: &Arc<Shared>,
    instance: &Arc<Instance>,
    client: Option<ClientKind>,
) -> EndInfo {
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
        EndClass::Closed,
        format!(
            "closed by `tickloop close`; the launcher did not end it within {} s, so it was killed",
            close_wait().as_secs_f64()
        ),
    ));
    shared.bump();
    instance
        .ended()
        .unwrap_or_else(|| end_info(EndClass::Closed, "closed by `tickloop close`".into()))
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

/// `shutdown`: ends every running instance and forgets every instance
/// (an agent's shutdown gets here only when none is the person's).
pub async fn shutdown(shared: &Arc<Shared>, client: Option<ClientKind>) -> ClientReply {
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
    let mut closing: Vec<u32> = instances.iter().map(|i| i.status().launcher_pid).collect();
    // The spare launcher is no instance: it exits as its stdin closes.
    closing.extend(shared.starting.discard_spare());
    closed += end_lost_launchers(shared, closing).await;
    for instance in &instances {
        shared.forget(instance, client);
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
