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

/// Why a launcher's connection was dropped when writing to it failed.
const WRITE_FAILED: &str = "tickhost could not write to it";

/// For how long the lines a launcher wrote before a write to it failed are
/// still read: they are already in the socket, so this bounds only a peer
/// that stopped reading yet goes on writing.
const DRAIN_AFTER_WRITE_FAILED: std::time::Duration = std::time::Duration::from_secs(1);

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
        // Once a write has failed the launcher has most likely gone, but
        // what it wrote before going (its last status: how its Tick ended)
        // may still wait unread: that is read before the end is decided.
        let mut drain_until: Option<tokio::time::Instant> = None;
        let detail = loop {
            let line = if let Some(deadline) = drain_until {
                match tokio::time::timeout_at(deadline, reader.next()).await {
                    Ok(line) => line,
                    Err(_) => break WRITE_FAILED.to_string(),
                }
            } else {
                tokio::select! {
                    biased;
                    line = reader.next() => line,
                    () = conn.writer_stopped() => {
                        drain_until = Some(tokio::time::Instant::now() + DRAIN_AFTER_WRITE_FAILED);
                        continue;
                    }
                }
            };
            tickloop_client::idle::mark_busy();
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
                Ok(Some(Line::TooLong { len: n, .. })) => log(&format!(
                    "{}: ignored a {n}-byte line from the launcher",
                    instance.id
                )),
                Ok(Some(Line::NotUtf8)) => log(&format!(
                    "{}: ignored a non-UTF-8 line from the launcher",
                    instance.id
                )),
                Ok(None) if drain_until.is_some() => break WRITE_FAILED.to_string(),
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

    /// A launcher's side of one connection: it answers hello, writes
    /// `messages`, and hangs up.
    fn hello_then_hang_up(
        listener: tokio::net::UnixListener,
        messages: Vec<LauncherMessage>,
    ) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            let (stream, _) = listener.accept().await.expect("a connection");
            let (read, mut write) = stream.into_split();
            let _hello = BufReader::new(read).lines().next_line().await;
            let mut lines = format!(
                "{{\"version\":\"{}\"}}\n",
                tickloop_proto::wire::wire_version()
            );
            for message in messages {
                lines += &serde_json::to_string(&message).expect("a message as JSON");
                lines.push('\n');
            }
            let _ = write.write_all(lines.as_bytes()).await;
        })
    }

    /// A launcher that still runs but whose connection was lost (here: it
    /// hangs up after hello) does not end its instance: the connection is
    /// dropped and the records scanned again to connect it anew.
    #[tokio::test]
    async fn a_lost_connection_to_a_launcher_that_lives_is_made_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let socket = dir.path().join("l.sock");
        let listener = tokio::net::UnixListener::bind(&socket).expect("bound");
        // It hangs up after hello, living on (this test process is the
        // launcher).
        let launcher = hello_then_hang_up(listener, Vec::new());
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
        let files = InstanceFiles::in_folder(Path::new("/nonexistent/i/hosted-a"));
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

    /// A launcher whose Tick broke the protocol sends its status (ended, a
    /// violation) and exits. When tickhost's next write to it fails before
    /// that status is read, the instance still ends as the launcher said,
    /// not as a lost launcher. Run many times: which of the two the reader
    /// saw first was a coin toss before.
    #[tokio::test]
    async fn the_last_status_of_a_launcher_is_read_even_when_writing_to_it_failed_first() {
        for round in 0..40 {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let socket = dir.path().join("l.sock");
            let listener = tokio::net::UnixListener::bind(&socket).expect("bound");
            let status = LauncherStatus {
                instance: "hosted:a".into(),
                launcher_pid: std::process::id(),
                pid: std::process::id(),
                ..Default::default()
            };
            let mut last = status.clone();
            last.ended = Some(end_info(
                tickloop_proto::wire::EndClass::Violation,
                "the Tick wrote an update whose `at` is not a time".into(),
            ));
            // It says how its Tick ended, and exits.
            let launcher =
                hello_then_hang_up(listener, vec![LauncherMessage::Status(Box::new(last))]);
            let shared = Shared::new(
                RuntimeDir::at(dir.path()),
                PathBuf::from("tickloop"),
                Limits::default(),
            );
            let files = InstanceFiles::in_folder(Path::new("/nonexistent/i/hosted-a"));
            let instance =
                Instance::new("hosted:a".into(), files, None, status, Default::default());
            let (conn, reader) = LauncherConn::connect(&socket, std::process::id())
                .await
                .expect("connected");
            launcher.await.expect("the launcher task");
            // A write to the gone launcher fails, and the writer stops,
            // before the reader starts: both are ready at its first look.
            let asking = tokio::spawn({
                let conn = conn.clone();
                async move { conn.request(LauncherRequest::Status).await }
            });
            conn.writer_stopped().await;
            let mut changes = shared.subscribe();
            spawn_reader(shared.clone(), instance.clone(), conn, reader);
            while instance.conn().is_some() {
                changes.changed().await.expect("the registry lives");
            }
            let ended = instance.ended().expect("the instance ended");
            assert_eq!(
                ended.kind,
                tickloop_proto::wire::EndClass::Violation,
                "round {round}: {ended:?}"
            );
            let reply = asking.await.expect("the asking task");
            assert!(matches!(reply, ClientReply::Error(_)), "{reply:?}");
        }
    }
}
