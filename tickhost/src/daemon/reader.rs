//! The task that reads one launcher's connection into the registry: its
//! replies to [`LauncherConn`]'s waiters, its statuses into the instance, and
//! its hang-up as the instance's end.

use super::conn::LauncherConn;
use super::log::log;
use super::registry::{end_info, CatalogFacts, Instance, Shared};
use std::sync::Arc;
use tickloop_client::framing::{Line, LineReader};
use tickloop_proto::wire::{ClientReply, LauncherMessage, LauncherRequest, LauncherStatus};
use tokio::net::unix::OwnedReadHalf;

/// Attaches `conn` to `instance` and reads the launcher's messages until it
/// goes away, then marks the instance ended (unless the launcher said how it
/// ended) and fails what was pending.
pub fn spawn_reader(
    shared: Arc<Shared>,
    instance: Arc<Instance>,
    conn: Arc<LauncherConn>,
    mut reader: LineReader<OwnedReadHalf>,
) {
    instance.set_conn(Some(conn.clone()));
    tokio::spawn(async move {
        // Ask for the status at once, in case the launcher does not send it.
        let asker = {
            let conn = conn.clone();
            let instance = instance.clone();
            let shared = shared.clone();
            tokio::spawn(async move {
                if let ClientReply::Ok(value) = conn.request(LauncherRequest::Status).await {
                    if let Ok(status) = serde_json::from_value::<LauncherStatus>(value) {
                        if instance.set_status(status) {
                            shared.bump();
                        }
                    }
                }
            })
        };
        let detail = loop {
            match reader.next().await {
                Ok(Some(Line::Text(text))) => {
                    match serde_json::from_str::<LauncherMessage>(&text) {
                        Ok(LauncherMessage::Reply(reply)) => conn.answer(reply.id, reply.reply),
                        Ok(LauncherMessage::Status(status)) => {
                            if instance.set_status(*status) {
                                shared.bump();
                            }
                        }
                        Ok(LauncherMessage::Catalog(catalog)) => {
                            instance.set_catalog(CatalogFacts::new(*catalog, &shared.limits));
                        }
                        Err(e) => log(&format!(
                            "{}: ignored an unreadable line from the launcher: {e}",
                            instance.id
                        )),
                    }
                }
                Ok(Some(Line::TooLong(n))) => log(&format!(
                    "{}: ignored a {n}-byte line from the launcher",
                    instance.id
                )),
                Ok(Some(Line::NotUtf8)) => log(&format!(
                    "{}: ignored a non-UTF-8 line from the launcher",
                    instance.id
                )),
                Ok(None) => break "its connection closed".to_string(),
                Err(e) => break e.to_string(),
            }
        };
        asker.abort();
        let reason = format!(
            "the launcher (pid {}) went away: {detail}",
            conn.launcher_pid
        );
        let end = if instance.close_requested() {
            end_info(
                tickloop_proto::wire::EndClass::Closed,
                "closed by `tickloop close`".into(),
            )
        } else {
            end_info(tickloop_proto::wire::EndClass::LauncherLost, reason.clone())
        };
        let ended = instance.mark_ended(end);
        let message = match instance.ended() {
            Some(end) => format!("{} has ended: {}", instance.id, end.reason),
            None => reason,
        };
        conn.lose(&message);
        instance.set_conn(None);
        if ended {
            log(&format!("{}: {message}", instance.id));
        }
        shared.bump();
    });
}
