//! Reads: what tickhost answers about instances without changing any
//! (`list`, `describe`, `read`, `screen`, `wait`, `approvals`,
//! `approval_log`, `activity`). An ended instance answers from what it
//! kept in its folder; a forgotten one's approval log and activity from the
//! data directory, for as long as `[records] keep_days` keeps them
//! ([`tickloop_client::kept`]).

use super::forward::{error, forward, launcher_gone, settle_end, until_hangup, while_running};
use crate::daemon::approval;
use crate::daemon::connection::Caller;
use crate::daemon::log::log;
use crate::daemon::registry::{Instance, Shared};
use serde_json::json;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tickloop_client::kept::KeptInstance;
use tickloop_client::paths::InstanceKind;
use tickloop_proto::wire::{
    ActivityRecord, ClientKind, ClientReply, ErrorKind, HeldAction, LauncherRequest, ListEntry,
    ScreenReply, ShellSummary, WaitReply, WaitRequest,
};

/// `list`: every instance from its newest status, sorted by id.
pub fn list(shared: &Shared) -> ClientReply {
    let entries: Vec<ListEntry> = shared
        .all()
        .iter()
        .map(|instance| {
            let mut entry = list_entry(instance);
            entry.approval_tools = shared.approvals.tools_for(&instance.id);
            entry.approvals_waiting = entry.approval_tools.len();
            entry
        })
        .collect();
    ClientReply::typed(&entries)
}

fn list_entry(instance: &Instance) -> ListEntry {
    let status = instance.status();
    let catalog = instance.catalog();
    let text = |name: &str| catalog.field(name).as_str().map(str::to_string);
    let (generation, failed, restarts) = crate::daemon::open::artifact_fields(instance, &status);
    let running = status.ended.is_none();
    ListEntry {
        id: instance.id.clone(),
        kind: text("kind"),
        title: match instance.kind {
            InstanceKind::Hosted | InstanceKind::Artifact => text("title"),
            InstanceKind::Shell => instance.title(&status),
        },
        state: crate::daemon::open::state_word(&status),
        ended: status.ended.clone(),
        // A shell's commands are `read`, not listed: its `seq` stays null.
        seq: status
            .state
            .as_ref()
            .filter(|_| instance.kind != InstanceKind::Shell)
            .map(|s| s.seq),
        pid: status.pid,
        // An ended instance has no launcher, so no views nor recordings
        // (its last status may still count some).
        views: if running { status.views } else { 0 },
        recordings: if running { status.recordings } else { 0 },
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

/// `describe`: a `shell:` instance's launcher answers it itself (its
/// shell's integration, or that it is no Tick).
pub async fn describe(shared: &Arc<Shared>, name: &str, client: Option<ClientKind>) -> ClientReply {
    forward(shared, name, LauncherRequest::Describe, false, client).await
}

/// `read`: a fresh `tick/read` of a running Tick; an ended one's last
/// state (its newest snapshot, with `"ended": true`).
pub async fn read(shared: &Arc<Shared>, name: &str, client: Option<ClientKind>) -> ClientReply {
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
        (_, None) => launcher_gone(&instance),
    }
}

/// `screen`: a running instance's screen from its launcher; an ended one's
/// last screen, which its launcher left in its folder. With `image`, the
/// kept image of that index (a running instance's only: an ended one's
/// images were not kept).
pub async fn screen(
    shared: &Arc<Shared>,
    name: &str,
    history: usize,
    image: Option<u32>,
) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => return ClientReply::Error(e),
    };
    let request = LauncherRequest::Screen { history, image };
    if let Some(reply) = while_running(shared, &instance, request, false, None).await {
        return reply;
    }
    let Some(end) = instance.ended() else {
        return launcher_gone(&instance);
    };
    if image.is_some() {
        return ClientReply::Error(instance.not_kept(&end, "images"));
    }
    match last_screen(&instance) {
        Some(mut last) => {
            let skip = last.history.len().saturating_sub(history);
            last.history.drain(..skip);
            ClientReply::typed(&last)
        }
        None => ClientReply::Error(instance.not_kept(&end, "last screen")),
    }
}

fn last_screen(instance: &Instance) -> Option<ScreenReply> {
    let bytes = std::fs::read(&instance.files.screen).ok()?;
    serde_json::from_slice::<ScreenReply>(&bytes).ok()
}

/// `approvals`: the actions waiting for the person, oldest first.
pub fn approvals(shared: &Shared) -> ClientReply {
    ClientReply::typed(&shared.approvals.list())
}

/// `approval_log`: an instance's decisions, oldest first; a forgotten
/// one's as the data directory keeps them.
pub fn approval_log(shared: &Shared, name: &str) -> ClientReply {
    let path = match shared.resolve(name) {
        Ok(found) => found.files.approvals.clone(),
        Err(e) => match kept(shared, name) {
            Some(kept) => kept.approvals,
            None => return ClientReply::Error(e),
        },
    };
    ClientReply::typed(&approval::log::read(&path).0)
}

/// The newest kept record of forgotten instance `name`.
fn kept(shared: &Shared, name: &str) -> Option<KeptInstance> {
    shared.kept.as_ref()?.newest(name)
}

/// `activity`: a running instance's record from its launcher, with the
/// subscribers tickhost counts; an ended one's, kept beside its last
/// screen; a forgotten one's, from the data directory.
pub async fn activity(shared: &Arc<Shared>, name: &str, after: Option<u64>) -> ClientReply {
    let instance = match shared.resolve(name) {
        Ok(instance) => instance,
        Err(e) => {
            return match kept(shared, name) {
                Some(kept) => match kept_activity(&kept.activity, after) {
                    Ok(record) => ClientReply::typed(&record),
                    Err(message) => error(ErrorKind::Internal, message),
                },
                None => ClientReply::Error(e),
            }
        }
    };
    match record_of(shared, &instance, after).await {
        Ok(mut record) => {
            record.subscribers = instance.subscribers.load(Ordering::Relaxed);
            ClientReply::typed(&record)
        }
        Err(reply) => reply,
    }
}

/// `instance`'s activity record, its entries after `after`: from its
/// launcher while it runs, else as it was kept beside its last screen; the
/// answer saying why not, when it cannot be had.
pub async fn record_of(
    shared: &Arc<Shared>,
    instance: &Instance,
    after: Option<u64>,
) -> Result<ActivityRecord, ClientReply> {
    let request = LauncherRequest::Activity { after };
    let running = while_running(shared, instance, request, false, None).await;
    let record = match (running, instance.ended()) {
        (Some(ClientReply::Ok(value)), _) => serde_json::from_value::<ActivityRecord>(value)
            .map_err(|e| format!("the launcher sent an unreadable activity record: {e}")),
        (Some(other), _) => return Err(other),
        (None, None) => return Err(launcher_gone(instance)),
        // Ended before launchers kept their activity, or it could not be
        // written: say how it ended.
        (None, Some(end)) if !instance.files.activity.exists() => {
            return Err(ClientReply::Error(
                instance.not_kept(&end, "activity record"),
            ))
        }
        (None, Some(_)) => kept_activity(&instance.files.activity, after),
    };
    record.map_err(|message| error(ErrorKind::Internal, message))
}

/// An activity record kept in `path`, its entries after `after`.
pub fn kept_activity(path: &std::path::Path, after: Option<u64>) -> Result<ActivityRecord, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("the activity kept in {} is unreadable: {e}", path.display()))?;
    serde_json::from_slice::<ActivityRecord>(&bytes)
        .map(|mut record| {
            record.entries.retain(|e| e.n > after.unwrap_or(0));
            record
        })
        .map_err(|e| format!("the activity kept in {} is unreadable: {e}", path.display()))
}

/// `wait`, answered by the launcher while the caller is watched: `None`
/// when the caller went away first (an MCP wait cancelled), and the
/// launcher's wait then ends at its own timeout.
pub async fn wait(
    shared: &Arc<Shared>,
    name: &str,
    wait: WaitRequest,
    caller: &mut Caller<'_>,
) -> Option<ClientReply> {
    let for_end = wait.ended;
    let client = caller.client();
    let waited = forward(shared, name, LauncherRequest::Wait(wait), false, client);
    match until_hangup(waited, caller.conn).await {
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
    ClientReply::typed(&WaitReply {
        ended: Some(end),
        screen: last_screen(&instance).map(|s| s.lines).unwrap_or_default(),
        ..Default::default()
    })
}
