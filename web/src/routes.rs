//! Every HTTP request, checked before it does anything: its `Host` (a
//! loopback server answers loopback names only), its `Origin` when it has
//! one (required on POSTs and WebSocket upgrades: only the page's own),
//! its session cookie (everything but `/login`), and on state-changing
//! requests the session's CSRF token and `--read-only`. Then the page, its
//! files, the two WebSockets and the two actions (decide, close).
//!
//! | route | what |
//! | --- | --- |
//! | `GET /login?token=T` | a one-time login token for a session cookie |
//! | `GET /` | the page |
//! | `GET /assets/NAME` | the page's script, style, xterm.js |
//! | `GET /ws/live` | the list, held actions, the open instance's state and activity |
//! | `GET /ws/term?instance=ID` | one instance's terminal |
//! | `POST /api/decide` | approve or refuse a held action `{instance, call, approve}` |
//! | `POST /api/close` | close an instance `{instance}` |
//!
//! No request line, query or header is ever logged (the login token and
//! the cookie travel in them).

use crate::assets;
use crate::auth::{same_secret, Auth, Session};
use crate::origin::Origins;
use crate::tickhost::Tickhost;
use crate::websocket;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    HeaderName, HeaderValue, ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, COOKIE, HOST, ORIGIN,
    SET_COOKIE, VARY,
};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use std::convert::Infallible;
use std::path::PathBuf;
use std::sync::Arc;
use tickloop_proto::wire::{ClientReply, ClientRequest};

/// The largest POST body read.
const MAX_BODY: usize = 64 * 1024;
/// The header a state-changing request carries its CSRF token in.
pub const CSRF_HEADER: &str = "x-tickloop-csrf";

/// The page's content security policy: nothing from elsewhere, no inline
/// script and no `eval`, never inside a frame (clickjacking). Inline
/// styles are allowed: xterm.js's renderer writes its measurements and
/// colours into `<style>` elements, and the terminal is drawn wrong
/// without them (styles cannot run code). `'wasm-unsafe-eval'` lets the
/// image addon compile its sixel decoder (WebAssembly, shipped inside
/// `addon-image.js`); it allows no JavaScript `eval`.
pub const CSP: &str =
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// What every request handler shares.
pub struct App {
    pub auth: Arc<Auth>,
    pub origins: Origins,
    pub tickhost: Tickhost,
    pub runtime: PathBuf,
    pub read_only: bool,
    pub offset: time::UtcOffset,
}

type Reply = Response<Full<Bytes>>;

fn header(req: &Request<Incoming>, name: HeaderName) -> Option<&str> {
    req.headers().get(name).and_then(|v| v.to_str().ok())
}

/// A response with the headers every answer carries.
fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    let fixed = [
        ("content-security-policy", CSP),
        ("x-frame-options", "DENY"),
        ("x-content-type-options", "nosniff"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
        ("cache-control", "no-store"),
    ];
    for (name, value) in fixed {
        headers.insert(name, HeaderValue::from_static(value));
    }
    if let Ok(value) = HeaderValue::from_str(content_type) {
        headers.insert(CONTENT_TYPE, value);
    }
    response
}

/// One of the page's files: gzipped as embedded when the client takes
/// gzip (every browser does), unpacked when it does not.
fn asset_reply(req: &Request<Incoming>, asset: &assets::Asset) -> Reply {
    let takes_gzip = req
        .headers()
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            parts.next() == Some("gzip") && !parts.any(|p| p.replace(' ', "") == "q=0")
        });
    let mut reply = if takes_gzip {
        let mut reply = respond(StatusCode::OK, asset.content_type, asset.gzip);
        reply
            .headers_mut()
            .insert(CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        reply
    } else {
        match asset.bytes() {
            Ok(bytes) => respond(StatusCode::OK, asset.content_type, bytes),
            Err(e) => {
                eprintln!("tickloop web: cannot unpack a file of the page: {e}");
                return page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Broken file",
                    "This file of the page could not be unpacked; ask for it with Accept-Encoding: gzip.",
                );
            }
        }
    };
    reply
        .headers_mut()
        .insert(VARY, HeaderValue::from_static("accept-encoding"));
    reply
}

fn page(status: StatusCode, title: &str, text: &str) -> Reply {
    respond(
        status,
        "text/html; charset=utf-8",
        assets::message(title, text, None),
    )
}

fn json_reply(status: StatusCode, value: &Value) -> Reply {
    respond(status, "application/json", value.to_string())
}

/// The answer to one request.
pub async fn handle(app: Arc<App>, req: Request<Incoming>) -> Result<Reply, Infallible> {
    let host = header(&req, HOST).map(str::to_string);
    if !app.origins.host_ok(host.as_deref()) {
        eprintln!("tickloop web: refused a request for another host name");
        return Ok(page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This server answers only to its own address (check the Host; behind a proxy, \
             give --allow-origin).",
        ));
    }
    let origin = header(&req, ORIGIN).map(str::to_string);
    let origin_ok = app.origins.origin_ok(origin.as_deref(), host.as_deref());
    if let (Some(origin), false) = (&origin, origin_ok) {
        eprintln!("tickloop web: refused a request from another origin ({origin})");
        return Ok(page(
            StatusCode::FORBIDDEN,
            "Refused",
            "Requests from another site are refused.",
        ));
    }
    let path = req.uri().path().to_string();
    if req.method() == Method::GET && path == "/login" {
        return Ok(login(&app, &req));
    }
    let Some(session) = app.auth.session(header(&req, COOKIE)) else {
        eprintln!("tickloop web: refused a request without a session (not logged in)");
        return Ok(page(
            StatusCode::UNAUTHORIZED,
            "Log in",
            "Open the one-time login URL that `tickloop web` printed, or get a new one with \
             `tickloop web --login`.",
        ));
    };
    let upgrade = websocket::is_upgrade(&req);
    if (upgrade || req.method() == Method::POST) && !origin_ok {
        eprintln!("tickloop web: refused a request without the page's origin");
        return Ok(page(
            StatusCode::FORBIDDEN,
            "Refused",
            "This request needs the page's own Origin.",
        ));
    }
    Ok(match (req.method().clone(), path.as_str()) {
        (Method::GET, "/ws/live" | "/ws/term") if upgrade => websocket_route(app, req, session),
        (Method::GET, "/") => respond(
            StatusCode::OK,
            "text/html; charset=utf-8",
            assets::index(&session.csrf, app.read_only),
        ),
        (Method::GET, p) if p.starts_with("/assets/") => match assets::asset(&p[8..]) {
            Some(asset) => asset_reply(&req, &asset),
            None => page(StatusCode::NOT_FOUND, "Not found", "No such file."),
        },
        (Method::POST, "/api/decide" | "/api/close") => action(&app, req, &session).await,
        _ => page(StatusCode::NOT_FOUND, "Not found", "No such page."),
    })
}

/// `/login?token=T`: a session for a valid one-time token.
fn login(app: &App, req: &Request<Incoming>) -> Reply {
    let token = req
        .uri()
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .unwrap_or("");
    match app.auth.redeem(token) {
        Ok(Some((cookie, session))) => {
            eprintln!("tickloop web: session {} logged in", session.number);
            // A page, not a redirect: a browser sends a SameSite=Strict
            // cookie on a navigation this page starts, not on a redirect
            // of a navigation that came from another site.
            let mut reply = respond(
                StatusCode::OK,
                "text/html; charset=utf-8",
                assets::message("Logged in", "Opening Tickloop…", Some("/")),
            );
            if let Ok(value) = HeaderValue::from_str(&app.auth.set_cookie(&cookie)) {
                reply.headers_mut().insert(SET_COOKIE, value);
            }
            reply
        }
        Ok(None) => {
            eprintln!("tickloop web: refused a login link used already, revoked or unknown");
            page(
                StatusCode::FORBIDDEN,
                "Login link used or revoked",
                "Each login link works once. Get a new one with `tickloop web --login`.",
            )
        }
        Err(e) => {
            eprintln!("tickloop web: refused a login: {e}");
            page(
                StatusCode::INTERNAL_SERVER_ERROR,
                "No login",
                &e.to_string(),
            )
        }
    }
}

/// The two WebSockets: upgraded, then served on a task of their own.
fn websocket_route(app: Arc<App>, mut req: Request<Incoming>, session: Session) -> Reply {
    let instance = req.uri().query().and_then(|q| {
        q.split('&')
            .find_map(|pair| pair.strip_prefix("instance="))
            .map(percent_decode)
    });
    let live = req.uri().path() == "/ws/live";
    if !live && instance.is_none() {
        return page(StatusCode::BAD_REQUEST, "No instance", "Give ?instance=ID.");
    }
    let (response, on_upgrade) = match websocket::accept(&mut req) {
        Ok(parts) => parts,
        Err(why) => return page(StatusCode::BAD_REQUEST, "Not a WebSocket", &why),
    };
    tokio::spawn(async move {
        let Some(ws) = websocket::open(on_upgrade).await else {
            return;
        };
        match instance {
            Some(instance) if !live => {
                let ctx = crate::terminal::TermContext {
                    runtime: app.runtime.clone(),
                    read_only: app.read_only,
                    tickhost: app.tickhost.clone(),
                    auth: app.auth.clone(),
                    session,
                };
                crate::terminal::serve(ws, instance, ctx).await;
            }
            _ => {
                let ctx = crate::live::LiveContext {
                    tickhost: app.tickhost.clone(),
                    auth: app.auth.clone(),
                    session,
                    read_only: app.read_only,
                    offset: app.offset,
                };
                crate::live::serve(ws, ctx).await;
            }
        }
    });
    response
}

/// `%3A` → `:` in a query value.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (b'+', _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `POST /api/decide` and `/api/close`: the CSRF token, read-only, then
/// the request to tickhost, as the client kind `web`.
async fn action(app: &App, req: Request<Incoming>, session: &Session) -> Reply {
    let token = header(&req, HeaderName::from_static(CSRF_HEADER)).unwrap_or("");
    if !same_secret(token, &session.csrf) {
        return json_reply(
            StatusCode::FORBIDDEN,
            &json!({"ok": false, "message": "wrong or missing CSRF token: reload the page"}),
        );
    }
    if app.read_only {
        return json_reply(
            StatusCode::FORBIDDEN,
            &json!({"ok": false, "message": "read-only: this server takes no actions (tickloop web --read-only)"}),
        );
    }
    let is_json = header(&req, CONTENT_TYPE).is_some_and(|t| t.starts_with("application/json"));
    let path = req.uri().path().to_string();
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(body) if is_json => body.to_bytes(),
        _ => {
            return json_reply(
                StatusCode::BAD_REQUEST,
                &json!({"ok": false, "message": "send a JSON body (Content-Type: application/json) under 64 KiB"}),
            )
        }
    };
    let request = match parse_action(&path, &body) {
        Ok(request) => request,
        Err(why) => {
            return json_reply(
                StatusCode::BAD_REQUEST,
                &json!({"ok": false, "message": why}),
            )
        }
    };
    match app.tickhost.request(request).await {
        Ok(ClientReply::Ok(value)) => {
            json_reply(StatusCode::OK, &json!({"ok": true, "reply": value}))
        }
        Ok(ClientReply::Error(e)) => json_reply(
            StatusCode::CONFLICT,
            &json!({"ok": false, "message": e.message}),
        ),
        Ok(ClientReply::Call(_)) => json_reply(
            StatusCode::INTERNAL_SERVER_ERROR,
            &json!({"ok": false, "message": "tickhost answered with a call outcome"}),
        ),
        Err(why) => json_reply(
            StatusCode::BAD_GATEWAY,
            &json!({"ok": false, "message": why}),
        ),
    }
}

/// The tickhost request a POST body asks for.
fn parse_action(path: &str, body: &[u8]) -> Result<ClientRequest, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("missing \"{key}\" (a string)"))
    };
    match path {
        "/api/decide" => Ok(ClientRequest::Decide {
            instance: text("instance")?,
            call: text("call")?,
            approve: value
                .get("approve")
                .and_then(Value::as_bool)
                .ok_or("missing \"approve\" (true or false)")?,
            reason: None,
            by: "web".into(),
            host: None,
        }),
        _ => Ok(ClientRequest::Close {
            instance: text("instance")?,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_become_tickhost_requests_by_the_web() {
        let decide = parse_action(
            "/api/decide",
            br#"{"instance":"hosted:counter","call":"%1","approve":true}"#,
        )
        .unwrap();
        assert!(
            matches!(decide, ClientRequest::Decide { ref by, approve: true, .. } if by == "web")
        );
        assert!(parse_action("/api/decide", br#"{"instance":"x","call":"%1"}"#).is_err());
        assert!(matches!(
            parse_action("/api/close", br#"{"instance":"x"}"#),
            Ok(ClientRequest::Close { .. })
        ));
        assert!(parse_action("/api/close", b"nope").is_err());
        assert_eq!(percent_decode("hosted%3Acounter+x"), "hosted:counter x");
        assert!(CSP.contains("frame-ancestors 'none'"));
    }
}
