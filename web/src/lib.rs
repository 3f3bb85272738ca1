//! `tickloop web`: the person's Ticks in a browser. One page, served on
//! loopback by default: every instance live (the Monitor's list), a live
//! terminal for any of them through xterm.js (attached to its launcher as a
//! view, the attach protocol unchanged), beside it its state, tools and
//! activity, and the held actions as prompts with the Monitor's own text.
//! Behind a one-time login, a session cookie, Origin and CSRF checks;
//! beyond loopback only with TLS or `--insecure-listen` (docs/web.md).
//!
//! One job per file: [`listen`] (where it may listen), [`tls`], [`auth`]
//! (logins, sessions, CSRF tokens, revocation), [`origin`] (Host and
//! Origin), `peer` (loopback connections of this user only), `routes`
//! (every request checked, then served), `server` (HTTP over TCP or TLS), `websocket` (upgrades, the first auth message),
//! `tickhost` and `live` (the bridge to tickhost, a page's live socket),
//! `shell_view` (a shell's commands as the page shows them), `timeline`
//! (the page's "what agents did", on the live socket), `parts`
//! (escaped text as the page draws it),
//! `terminal` and `screen` (the bridge to a launcher, the screen drawn for
//! xterm.js), [`assets`] (the embedded page and xterm.js), [`control`]
//! (`RUNTIME/web.sock`: `--revoke`, `--login`, where the page is).

pub mod assets;
pub mod auth;
pub mod control;
mod images;
pub mod listen;
mod live;
pub mod origin;
mod parts;
mod peer;
mod routes;
mod screen;
mod server;
mod shell_view;
mod terminal;
mod tickhost;
mod timeline;
pub mod tls;
mod websocket;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use tickloop_proto::wire::{ClientKind, WebControl, WebControlReply};

/// How `tickloop web` was asked to serve.
#[derive(Debug, Clone)]
pub struct WebOptions {
    /// The runtime directory (tickhost's, the launchers').
    pub runtime: PathBuf,
    /// This executable, to start tickhost when it is not running.
    pub exe: PathBuf,
    pub listen: SocketAddr,
    /// Take no actions and send nothing to any Tick.
    pub read_only: bool,
    /// The certificate chain and private key, PEM.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// Listen beyond loopback without TLS, knowingly.
    pub insecure_listen: bool,
    /// Origins let in besides the page's own (a reverse proxy's).
    pub allow_origins: Vec<String>,
}

/// A server that started: what the person is told.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Started {
    /// The page (`http://127.0.0.1:PORT/`).
    pub url: String,
    /// The one-time login URL.
    pub login_url: String,
    pub listen: SocketAddr,
    pub read_only: bool,
    pub tls: bool,
    /// The `--insecure-listen` warning, when it applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// Why `tickloop web` could not serve.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error(transparent)]
    Listen(#[from] listen::ListenError),
    #[error("{0}")]
    Setup(String),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// The host name a URL for `addr` uses: the address itself, or this
/// machine's name when it listens on every address.
fn url_host(addr: SocketAddr) -> String {
    if !addr.ip().is_unspecified() {
        return match addr {
            SocketAddr::V4(a) => a.ip().to_string(),
            SocketAddr::V6(a) => format!("[{}]", a.ip()),
        };
    }
    let mut name = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes a
    // NUL-terminated name into it (or fails).
    let ok = unsafe { libc::gethostname(name.as_mut_ptr().cast(), name.len()) } == 0;
    let end = name.iter().position(|b| *b == 0).unwrap_or(0);
    match std::str::from_utf8(&name[..end]) {
        Ok(host) if ok && !host.is_empty() => host.to_string(),
        _ => "localhost".to_string(),
    }
}

/// Serves until SIGINT or SIGTERM; `on_start` is told where, once it
/// listens (before that, every refusal is an error here).
pub fn run(options: WebOptions, on_start: impl FnOnce(&Started)) -> Result<(), WebError> {
    let warning = listen::check(
        options.listen,
        options.tls.is_some(),
        options.insecure_listen,
    )?;
    let tls = match &options.tls {
        Some((cert, key)) => Some(tls::acceptor(cert, key).map_err(WebError::Setup)?),
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| WebError::Setup(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(serve(options, tls, warning, on_start))
}

async fn serve(
    options: WebOptions,
    tls: Option<tokio_rustls::TlsAcceptor>,
    warning: Option<String>,
    on_start: impl FnOnce(&Started),
) -> Result<(), WebError> {
    let control_listener = control::bind(&options.runtime).map_err(WebError::Setup)?;
    let _remove = RemoveOnDrop(control::socket_path(&options.runtime));
    let listener = tokio::net::TcpListener::bind(options.listen)
        .await
        .map_err(|source| WebError::Bind {
            addr: options.listen,
            source,
        })?;
    let listen = listener.local_addr().map_err(|source| WebError::Bind {
        addr: options.listen,
        source,
    })?;
    let tickhost = tickhost::Tickhost::start(options.runtime.clone(), options.exe.clone())
        .map_err(WebError::Setup)?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let base_url = format!("{scheme}://{}:{}", url_host(listen), listen.port());
    let auth = Arc::new(auth::Auth::new(listen.port(), tls.is_some()));
    let control = Arc::new(control::Control {
        auth: auth.clone(),
        base_url: base_url.clone(),
        listen: listen.to_string(),
    });
    let started = Started {
        url: format!("{base_url}/"),
        login_url: control.login_url().map_err(WebError::Setup)?,
        listen,
        read_only: options.read_only,
        tls: tls.is_some(),
        warning,
    };
    let app = Arc::new(routes::App {
        auth,
        origins: origin::Origins {
            loopback: listen.ip().is_loopback(),
            scheme,
            extra: options.allow_origins.clone(),
        },
        tickhost,
        runtime: options.runtime.clone(),
        read_only: options.read_only,
        offset: view_monitor::activity::local_offset(),
    });
    on_start(&started);
    tokio::spawn(control::serve(control_listener, control));
    // Behind a reverse proxy (another user's process, often), the proxy
    // stands at the door instead.
    let local_users_only = options.allow_origins.is_empty();
    tokio::select! {
        () = server::serve(listener, tls, app, local_users_only) => Ok(()),
        () = ended() => Ok(()),
    }
}

/// SIGINT or SIGTERM.
async fn ended() {
    match tickloop_client::signals::Signals::new(&[libc::SIGINT, libc::SIGTERM]) {
        Ok(mut ended) => {
            if ended.recv().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        Err(_) => std::future::pending().await,
    }
}

/// Removes the control socket when the server ends.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Why the running server did not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// No server answers, or it answered something unreadable.
    #[error("{0}")]
    Unreachable(String),
    /// It did nothing: only the person may ask it.
    #[error("{0}")]
    Refused(String),
}

/// `tickloop web --revoke`: ends every session and login token of the
/// running server; how many sessions ended. `asker`: who runs it.
pub fn revoke(runtime: &std::path::Path, asker: ClientKind) -> Result<usize, ControlError> {
    match control::ask(runtime, asker, &WebControl::Revoke).map_err(ControlError::Unreachable)? {
        WebControlReply::Revoked { sessions } => Ok(sessions),
        other => Err(unexpected(other)),
    }
}

/// `tickloop web --login`: a new one-time login URL of the running server.
pub fn login(runtime: &std::path::Path, asker: ClientKind) -> Result<String, ControlError> {
    match control::ask(runtime, asker, &WebControl::Login).map_err(ControlError::Unreachable)? {
        WebControlReply::Login { url, .. } => Ok(url),
        other => Err(unexpected(other)),
    }
}

/// The page's URL of the server running for `runtime`, when one runs and
/// answers within a second (asked by `asker`; no login is minted).
pub fn page_url(runtime: &std::path::Path, asker: ClientKind) -> Option<String> {
    match control::ask_within(runtime, asker, &WebControl::Where, control::WHERE_WAIT) {
        Ok(WebControlReply::Serving { url, .. }) => Some(url),
        _ => None,
    }
}

/// A refusal or error answered by the server, or an answer to something else.
fn unexpected(reply: WebControlReply) -> ControlError {
    match reply {
        WebControlReply::Refused { message } => ControlError::Refused(message),
        WebControlReply::Error { message } => ControlError::Unreachable(message),
        other => ControlError::Unreachable(format!("unexpected answer: {other:?}")),
    }
}
