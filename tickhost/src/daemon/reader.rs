//! The task that reads one launcher's connection into the registry: its
//! replies to [`LauncherConn`]'s waiters, its statuses into the instance, and
//! its hang-up as the instance's end — unless the launcher still runs (the
//! connection alone was lost, or could no longer be written to): then the
//! connection is dropped and made again, and the instance goes on.

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
            let line = tokio::select! {
                line = reader.next() => line,
                () = conn.writer_stopped() => break "tickhost could not write to it".to_string(),
            };
            match line {
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
        if instance.ended().is_none() && !instance.close_requested() {
            if let Some(launcher) = instance.launcher() {
                // The launcher lives: only this connection is gone.
                let lost = format!(
                    "the connection to {}'s launcher (pid {}) was lost ({detail}); connecting again",
                    instance.id, launcher.pid
                );
                log(&lost);
                conn.lose(&lost);
                instance.set_conn(None);
                shared.bump();
                shared.rediscover.notify_one();
                return;
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use tickloop_client::paths::{InstanceFiles, RuntimeDir};
    use tickloop_proto::core::limits::Limits;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    /// A launcher that still runs but whose connection was lost (here: it
    /// hangs up after hello) does not end its instance: the connection is
    /// dropped and the records scanned again to connect it anew.
    #[tokio::test]
    async fn a_lost_connection_to_a_launcher_that_lives_is_made_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let socket = dir.path().join("l.sock");
        let listener = tokio::net::UnixListener::bind(&socket).expect("bound");
        let launcher = tokio::spawn(async move {
            let (stream, _) = listener.accept().await.expect("a connection");
            let (read, mut write) = stream.into_split();
            let _hello = BufReader::new(read).lines().next_line().await;
            let answer = format!(
                "{{\"version\":\"{}\"}}\n",
                tickloop_proto::wire::wire_version()
            );
            let _ = write.write_all(answer.as_bytes()).await;
            // ...and hangs up, living on (this test process is the launcher).
        });
        let shared = Shared::new(
            RuntimeDir::at(dir.path()),
            PathBuf::from("tickloop"),
            Limits::default(),
        );
        let status = LauncherStatus {
            instance: "hosted:a".into(),
            launcher_pid: std::process::id(),
            pid: std::process::id(),
            ..Default::default()
        };
        let files = InstanceFiles::from_record(Path::new("/nonexistent/hosted-a.json"));
        let instance = Instance::new("hosted:a".into(), files, None, status, Default::default());
        let (conn, reader) = LauncherConn::connect(&socket, std::process::id())
            .await
            .expect("connected");
        spawn_reader(shared.clone(), instance.clone(), conn, reader);
        let asked_again = tokio::time::timeout(
            std::time::Duration::from_secs(20),
            shared.rediscover.notified(),
        )
        .await;
        assert!(asked_again.is_ok(), "no new connection was asked for");
        assert_eq!(instance.ended(), None);
        assert!(instance.conn().is_none());
        let _ = launcher.await;
    }
}
