//! The control socket of a running `tickloop web` (`RUNTIME/web.sock`,
//! mode 0600 in the 0700 runtime directory, only this user's processes let
//! in): `tickloop web --revoke` ends every session there, `tickloop web
//! --login` gets a new one-time login URL. Both are the person's: a hello
//! that says an agent asks (kind `mcp`, `loop`, `agent_cli`) is refused, no
//! URL minted. Where the page is (its URL, no login) anyone may ask: a
//! second `tickloop web` and an approval wait's message name it. It also
//! keeps the server single per runtime directory.
//! Messages: `tickloop_proto::wire::WebControl`.

use crate::auth::Auth;
use std::io::{BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::framing::{read_line_blocking, read_line_limited, write_line};
use tickloop_proto::wire::{ClientKind, Hello, HelloReply, WebControl, WebControlReply};
use tokio::io::BufReader as AsyncBufReader;
use tokio::net::UnixListener;

/// The longest control line read.
const MAX_LINE: usize = 64 * 1024;
/// How long either side waits for the other.
const WAIT: Duration = Duration::from_secs(10);

/// `RUNTIME/web.sock`.
pub fn socket_path(runtime: &Path) -> PathBuf {
    runtime.join("web.sock")
}

/// Binds the control socket; an error when a server already answers there
/// (a socket nobody answers on is left over and replaced).
pub fn bind(runtime: &Path) -> Result<UnixListener, String> {
    let path = socket_path(runtime);
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(&path).is_ok() {
            let at = match ask_within(runtime, ClientKind::Cli, &WebControl::Where, WHERE_WAIT) {
                Ok(WebControlReply::Serving { url, .. }) => format!("at {url}"),
                Ok(other) => format!("(it did not say where: {other:?})"),
                Err(e) => format!("(it did not say where: {e})"),
            };
            return Err(format!(
                "tickloop web already runs for this user {at}: `tickloop web --login` \
                 prints a login URL for it, `tickloop web --revoke` logs every page out"
            ));
        }
        let _ = std::fs::remove_file(&path);
    }
    let listener =
        UnixListener::bind(&path).map_err(|e| format!("cannot bind {}: {e}", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("cannot make {} private: {e}", path.display()))?;
    Ok(listener)
}

/// What the control socket needs of the server.
pub struct Control {
    pub auth: Arc<Auth>,
    /// The server's base URL (`http://127.0.0.1:8080`) and listen address.
    pub base_url: String,
    pub listen: String,
}

impl Control {
    /// The login URL of a new token.
    pub fn login_url(&self) -> Result<String, String> {
        let token = self.auth.issue_login().map_err(|e| e.to_string())?;
        Ok(format!("{}/login?token={token}", self.base_url))
    }

    fn answer(&self, request: &WebControl, asker: Option<ClientKind>) -> WebControlReply {
        let agent = asker.filter(|k| k.is_agent());
        match (request, agent) {
            // Where the page is: anyone of this user may know it (the page
            // lets nobody in without a login).
            (WebControl::Where, _) => WebControlReply::Serving {
                url: format!("{}/", self.base_url),
                listen: self.listen.clone(),
            },
            (_, Some(agent)) => {
                eprintln!(
                    "tickloop web: control socket: refused {request:?} from {}",
                    agent.actor()
                );
                WebControlReply::Refused {
                    message: refusal(request, agent),
                }
            }
            (WebControl::Revoke, None) => {
                let sessions = self.auth.revoke_all();
                eprintln!(
                    "tickloop web: revoked: {sessions} sessions ended, every login link void"
                );
                WebControlReply::Revoked { sessions }
            }
            (WebControl::Login, None) => match self.login_url() {
                Ok(url) => WebControlReply::Login {
                    url,
                    listen: self.listen.clone(),
                },
                Err(message) => WebControlReply::Error { message },
            },
        }
    }
}

/// Answers the control socket until the server ends.
pub async fn serve(listener: UnixListener, control: Arc<Control>) {
    while let Ok((stream, _)) = listener.accept().await {
        if let Err(refused) = tickloop_client::peer::check(&stream) {
            eprintln!("tickloop web: control socket: {refused}");
            continue;
        }
        let control = control.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(WAIT, answer_one(stream, &control)).await;
        });
    }
}

async fn answer_one(stream: tokio::net::UnixStream, control: &Control) -> std::io::Result<()> {
    let (read, mut write) = stream.into_split();
    let mut read = AsyncBufReader::new(read);
    let mut line = Vec::new();
    if !read_line_limited(&mut read, &mut line, MAX_LINE).await? {
        return Ok(());
    }
    let hello: Hello = serde_json::from_slice(&line).map_err(std::io::Error::other)?;
    let reply = HelloReply::answer(&hello);
    write_line(&mut write, &reply).await?;
    if reply.refused.is_some() || !read_line_limited(&mut read, &mut line, MAX_LINE).await? {
        return Ok(());
    }
    let answer = match serde_json::from_slice::<WebControl>(&line) {
        Ok(request) => control.answer(&request, hello.hello.client),
        Err(e) => WebControlReply::Error {
            message: format!("unreadable request: {e}"),
        },
    };
    write_line(&mut write, &answer).await
}

/// Why `agent` may not ask `request` of the person's server.
fn refusal(request: &WebControl, agent: ClientKind) -> String {
    let what = match request {
        WebControl::Login => "take a login link of the person's `tickloop web` (it would let its holder into the person's page as the person)",
        WebControl::Revoke => "log the person's browsers out of `tickloop web`",
        WebControl::Where => "know where the page is",
    };
    format!(
        "not executed: {} may not {what}; only the person does this, in their own terminal",
        agent.actor()
    )
}

/// Writes `value` as one JSON line.
fn send_line<T: serde::Serialize>(writer: &mut impl Write, value: &T) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    line.push(b'\n');
    writer.write_all(&line)
}

/// Asks the server of `runtime` (the CLI's side: `--revoke`, `--login`),
/// as `asker` (who runs the command: the person's CLI, or an agent's).
pub fn ask(
    runtime: &Path,
    asker: ClientKind,
    request: &WebControl,
) -> Result<WebControlReply, String> {
    ask_within(runtime, asker, request, WAIT)
}

/// How long a question of where the page is waits: it is asked in
/// passing (a second server's error, an approval wait's message).
pub const WHERE_WAIT: Duration = Duration::from_secs(1);

/// [`ask`], waiting at most `wait` for each answer.
pub fn ask_within(
    runtime: &Path,
    asker: ClientKind,
    request: &WebControl,
    wait: Duration,
) -> Result<WebControlReply, String> {
    let path = socket_path(runtime);
    let stream = std::os::unix::net::UnixStream::connect(&path).map_err(|e| {
        format!(
            "no tickloop web runs for this user (nothing answers on {}: {e})",
            path.display()
        )
    })?;
    let lost = |e: std::io::Error| format!("lost tickloop web's control socket: {e}");
    stream.set_read_timeout(Some(wait)).map_err(lost)?;
    stream.set_write_timeout(Some(wait)).map_err(lost)?;
    let mut writer = stream.try_clone().map_err(lost)?;
    let mut reader = BufReader::new(stream);
    let mut read = || -> Result<Vec<u8>, String> {
        read_line_blocking(&mut reader, MAX_LINE)
            .map_err(lost)?
            .ok_or_else(|| "tickloop web closed its control socket".to_string())
    };
    send_line(&mut writer, &Hello::client(asker)).map_err(lost)?;
    let hello: HelloReply = serde_json::from_slice(&read()?).map_err(|e| format!("hello: {e}"))?;
    if let Some(refused) = hello.refused {
        return Err(format!(
            "the running tickloop web is another build: {refused}"
        ));
    }
    send_line(&mut writer, request).map_err(lost)?;
    serde_json::from_slice(&read()?).map_err(|e| format!("unreadable answer: {e}"))
}
