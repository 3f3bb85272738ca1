//! Client connections on `tickhost.sock`: hello, then requests read one
//! line at a time and answered in order (a malformed line gets a
//! `bad_request` reply, with the request's own id when it can be read, and
//! the connection goes on). What each request does is the dispatch's
//! ([`super::requests`]); this is only the connection. Every line to the
//! client goes through the connection's one writer task, so none is ever
//! cut halfway.

use super::connection::Connection;
use super::registry::Shared;
use super::request_line::parse_request;
use super::requests::dispatch::dispatch;
use super::watch::Flow;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::framing::Line;
use tickloop_proto::wire::{
    ClientError, ClientKind, ClientReply, ErrorKind, Hello, HelloReply, Role, ServerMessage,
};
use tokio::net::UnixStream;

/// How long a client has to say hello.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one client connection until it hangs up.
pub async fn serve_client(shared: Arc<Shared>, stream: UnixStream) {
    let mut conn = Connection::unix(stream);
    let Some(client) = greet(&mut conn).await else {
        return;
    };
    conn.client = client;
    serve_requests(&shared, conn).await;
}

/// Answers the requests of `conn` (which has said hello) until it hangs
/// up.
pub async fn serve_requests(shared: &Arc<Shared>, mut conn: Connection) {
    loop {
        let line = match conn.early.take() {
            Some(line) => line,
            None => match conn.reader.next().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => return,
            },
        };
        tickloop_client::idle::mark_busy();
        let flow = match parse_request(line) {
            Ok(envelope) => dispatch(shared, &mut conn, envelope).await,
            Err((id, message)) => {
                let reply = ServerMessage::Reply {
                    id,
                    reply: ClientReply::Error(ClientError {
                        kind: ErrorKind::BadRequest,
                        message,
                        data: None,
                    }),
                };
                match conn.out.send(&reply).await {
                    Ok(()) => Flow::Continue,
                    Err(_) => Flow::HungUp,
                }
            }
        };
        if flow == Flow::HungUp {
            return;
        }
    }
}

/// The connection's hello, read and answered: who the client is (for the
/// activity records), or `None` when it was refused or went away.
async fn greet(conn: &mut Connection) -> Option<Option<ClientKind>> {
    let hello = match tokio::time::timeout(HELLO_TIMEOUT, conn.reader.next()).await {
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
    if conn.out.send(&answer).await.is_err() || refused {
        return None;
    }
    Some(client)
}
