//! The HTTP server: accepts TCP connections (through TLS when given),
//! serves HTTP/1.1 on each with hyper, with the upgrades WebSockets need,
//! and hands every request to [`crate::routes::handle`].

use crate::peer::Peer;
use crate::routes::{self, App};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// How long a client may take to send a request's headers, or its TLS
/// handshake (a connection that trickles is dropped).
const HEADER_TIMEOUT: Duration = Duration::from_secs(20);

/// Accepts connections until the listener fails. With `local_users_only`,
/// a connection from loopback is served only when it is this user's
/// ([`crate::peer`]).
pub async fn serve(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    app: Arc<App>,
    local_users_only: bool,
) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: wait a moment.
                eprintln!("tickloop web: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if let (true, Ok(local)) = (local_users_only, stream.local_addr()) {
            match crate::peer::of(local, peer) {
                Peer::Remote => {}
                Peer::LocalUser(uid) if uid == crate::peer::our_uid() => {}
                other => {
                    refuse(stream, other).await;
                    continue;
                }
            }
        }
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            match tls {
                Some(acceptor) => {
                    let handshake = tokio::time::timeout(HEADER_TIMEOUT, acceptor.accept(stream));
                    if let Ok(Ok(stream)) = handshake.await {
                        serve_connection(stream, app).await;
                    }
                }
                None => serve_connection(stream, app).await,
            }
        });
    }
}

/// Answers a connection of another user with a plain refusal (no TLS: it
/// says nothing secret) and closes it.
async fn refuse(mut stream: tokio::net::TcpStream, peer: Peer) {
    let who = match peer {
        Peer::LocalUser(uid) => format!("uid {uid}, another user"),
        _ => "a process the kernel's socket table does not show".to_string(),
    };
    eprintln!("tickloop web: refused a connection from {who}");
    let body = "tickloop web serves only the user who started it.\n";
    let reply = format!(
        "HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(HEADER_TIMEOUT, stream.write_all(reply.as_bytes())).await;
    let _ = stream.shutdown().await;
}

/// Serves HTTP/1.1 on one connection.
async fn serve_connection<S>(stream: S, app: Arc<App>)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| routes::handle(app.clone(), req));
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}
