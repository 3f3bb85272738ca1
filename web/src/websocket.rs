//! WebSocket upgrades (RFC 6455 over hyper's HTTP/1.1 upgrade, frames by
//! tungstenite) and the first message every page socket must send: its
//! session's CSRF token, before the server says or does anything.

use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{HeaderValue, CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, UPGRADE};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// A page's WebSocket.
pub type Ws = WebSocketStream<TokioIo<hyper::upgrade::Upgraded>>;

/// How long a page has to send its first message.
const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest message a page may send (a paste fits well within it).
const MAX_MESSAGE: usize = 1024 * 1024;

/// Whether `req` asks for a WebSocket (an `Upgrade: websocket` request).
pub fn is_upgrade(req: &Request<Incoming>) -> bool {
    req.headers()
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// Answers an upgrade request that passed every check: the `101` response,
/// and the socket once hyper hands the connection over.
pub fn accept(
    req: &mut Request<Incoming>,
) -> Result<(Response<Full<Bytes>>, hyper::upgrade::OnUpgrade), String> {
    let version_ok = req
        .headers()
        .get("sec-websocket-version")
        .is_some_and(|v| v == "13");
    let key = req
        .headers()
        .get(SEC_WEBSOCKET_KEY)
        .filter(|_| version_ok)
        .ok_or("a WebSocket upgrade needs Sec-WebSocket-Key and version 13")?;
    let accept = tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes());
    let accept = HeaderValue::from_str(&accept).map_err(|e| e.to_string())?;
    let on_upgrade = hyper::upgrade::on(req);
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(CONNECTION, HeaderValue::from_static("upgrade"));
    headers.insert(SEC_WEBSOCKET_ACCEPT, accept);
    Ok((response, on_upgrade))
}

/// The WebSocket over an upgraded connection.
pub async fn open(on_upgrade: hyper::upgrade::OnUpgrade) -> Option<Ws> {
    let upgraded = on_upgrade.await.ok()?;
    let config = WebSocketConfig::default()
        .read_buffer_size(16 * 1024)
        // Every message goes out at once: a keystroke's echo waits for
        // nothing.
        .write_buffer_size(0)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    Some(WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, Some(config)).await)
}

/// Reads the page's first message, `{"type":"auth","csrf":TOKEN,...}`,
/// and checks its token against the session's: the message, or why the
/// socket is closed (the page is told).
pub async fn authenticate(ws: &mut Ws, csrf: &str) -> Result<Value, String> {
    let first = tokio::time::timeout(AUTH_TIMEOUT, ws.next()).await;
    let refused = |why: &str| why.to_string();
    let text = match first {
        Ok(Some(Ok(Message::Text(text)))) => text,
        Ok(_) => return Err(refused("the first message must be the page's auth message")),
        Err(_) => return Err(refused("no auth message in time")),
    };
    let message: Value =
        serde_json::from_str(text.as_str()).map_err(|_| refused("the auth message is not JSON"))?;
    let token = message
        .get("csrf")
        .and_then(Value::as_str)
        .filter(|_| message.get("type").and_then(Value::as_str) == Some("auth"))
        .unwrap_or_default();
    if !crate::auth::same_secret(token, csrf) {
        return Err(refused("wrong or missing CSRF token: reload the page"));
    }
    Ok(message)
}

/// Sends one JSON message; false when the page is gone.
pub async fn send_json(ws: &mut (impl SinkExt<Message> + Unpin), value: &Value) -> bool {
    let text = value.to_string();
    ws.send(Message::text(text)).await.is_ok()
}

/// Tells the page why, and closes.
pub async fn close_with(ws: &mut Ws, why: &str) {
    let _ = send_json(ws, &serde_json::json!({"type": "closed", "reason": why})).await;
    let _ = ws.close(None).await;
}
