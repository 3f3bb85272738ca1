//! The bridge from a page's terminal to a launcher: the page's WebSocket
//! on one side, the launcher's socket on the other, where the server is a
//! view of role `view` speaking the attach protocol unchanged (hello, the
//! page's size, a snapshot, then changed rows; keys, pastes, mouse and
//! resizes back, so the latest active view's size wins). The screen is
//! drawn for xterm.js by [`crate::screen`].
//!
//! With `--read-only` nothing the page sends reaches the Tick: keys,
//! pastes and resizes are refused (the page is told), and the view attaches
//! at the Tick's current size, so attaching changes no size either.

use crate::screen::{Heard, PageScreen};
use crate::websocket::{self, send_json, Ws};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tickloop_client::framing::{write_line, Line, LineReader};
use tickloop_client::paths::{parse_id, RuntimeDir};
use tickloop_proto::attach::{TermCaps, ToView, ViewEvent, ViewHello, MAX_VIEW_LINE};
use tickloop_proto::wire::{
    ClientKind, ClientReply, ClientRequest, Hello, HelloReply, ScreenReply,
};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::UnixStream;
use tokio_tungstenite::tungstenite::Message;

/// What a page's terminal needs from the server.
pub struct TermContext {
    pub runtime: PathBuf,
    pub read_only: bool,
    pub tickhost: crate::tickhost::Tickhost,
    pub auth: Arc<crate::auth::Auth>,
    pub session: crate::auth::Session,
}

/// A size from the page, within what a terminal can be.
fn size_of(message: &Value) -> Option<(u16, u16)> {
    let get = |k: &str| {
        message
            .get(k)
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| (2..=1000).contains(n))
    };
    Some((get("cols")?, get("rows")?))
}

/// The page's cell in pixels (`cell_px: [width, height]`, 1 to 200 each),
/// when it said: kept images are drawn to their cells at that size.
fn cell_px_of(message: &Value) -> Option<(u16, u16)> {
    let pair = message.get("cell_px")?.as_array()?;
    let get = |i: usize| {
        pair.get(i)
            .and_then(Value::as_u64)
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| (1..=200).contains(n))
    };
    Some((get(0)?, get(1)?))
}

/// Serves one page's terminal of `instance` until the page or the launcher
/// hangs up, the instance ends or the session is revoked.
pub async fn serve(mut ws: Ws, instance: String, ctx: TermContext) {
    let first = match websocket::authenticate(&mut ws, &ctx.session.csrf).await {
        Ok(first) => first,
        Err(why) => return websocket::close_with(&mut ws, &why).await,
    };
    let Some(page_size) = size_of(&first) else {
        return websocket::close_with(&mut ws, "the auth message needs cols and rows (2 to 1000)")
            .await;
    };
    let attached = attach(&instance, &ctx, page_size).await;
    let (reader, writer, first_frame) = match attached {
        Ok(parts) => parts,
        Err(why) => match last_screen(&ctx, &instance).await {
            // Its launcher is gone because it ended: what it showed last.
            Some(text) => {
                if ws.send(Message::Binary(text.into())).await.is_err() {
                    return;
                }
                return websocket::close_with(&mut ws, "ended: this is what it showed last").await;
            }
            None => return websocket::close_with(&mut ws, &why).await,
        },
    };
    let snapshot = match first_frame {
        ToView::Snapshot(s) => s,
        ToView::Ended { reason } => {
            let _ = send_json(&mut ws, &json!({"type": "ended", "reason": reason})).await;
            return websocket::close_with(&mut ws, "the instance has ended").await;
        }
        other => {
            return websocket::close_with(&mut ws, &format!("the launcher began with {other:?}"))
                .await
        }
    };
    let note = format!("{instance} · the latest active view's size wins");
    let Some(mut screen) = PageScreen::new(snapshot, page_size, note) else {
        return websocket::close_with(&mut ws, "cannot set up the terminal renderer").await;
    };
    screen.set_cell_px(cell_px_of(&first));
    let link = Link {
        ws,
        reader,
        writer,
        screen,
        read_only: ctx.read_only,
    };
    link.run(&ctx).await;
}

/// Dials the launcher of `instance` and attaches as a view of `size` (the
/// Tick's own size under `--read-only`); the connection's halves and the
/// launcher's first message.
async fn attach(
    instance: &str,
    ctx: &TermContext,
    size: (u16, u16),
) -> Result<(LineReader<OwnedReadHalf>, OwnedWriteHalf, ToView), String> {
    let (kind, name) = parse_id(instance)
        .ok_or_else(|| format!("{instance:?} is not an instance id (hosted:NAME, shell:NAME)"))?;
    let socket = RuntimeDir::at(&ctx.runtime)
        .instance_files(kind, name)
        .map_err(|e| e.to_string())?
        .socket;
    let size = if ctx.read_only {
        tick_size(ctx, instance).await?
    } else {
        size
    };
    let stream = UnixStream::connect(&socket)
        .await
        .map_err(|e| format!("cannot reach {instance}'s launcher: {e}"))?;
    let (read, mut writer) = stream.into_split();
    let mut reader = LineReader::new(read, MAX_VIEW_LINE);
    let lost = |e: std::io::Error| format!("lost {instance}'s launcher: {e}");
    write_line(&mut writer, &Hello::view(ClientKind::Web))
        .await
        .map_err(lost)?;
    let reply: HelloReply = read_json(&mut reader).await?;
    if let Some(refused) = reply.refused {
        return Err(format!("{instance}'s launcher refused the view: {refused}"));
    }
    let hello = ViewHello {
        cols: size.0,
        rows: size.1,
        term: TermCaps {
            truecolor: true,
            colors: 256,
            mouse: true,
            bracketed_paste: true,
            focus_events: false,
        },
        client: Some("web".into()),
        tty: None,
    };
    write_line(&mut writer, &hello).await.map_err(lost)?;
    let first: ToView = read_json(&mut reader).await?;
    Ok((reader, writer, first))
}

/// The Tick's terminal size now, as tickhost's `screen` says it.
async fn tick_size(ctx: &TermContext, instance: &str) -> Result<(u16, u16), String> {
    let request = ClientRequest::Screen {
        instance: instance.to_string(),
        history: 0,
        image: None,
    };
    match ctx.tickhost.request(request).await? {
        ClientReply::Ok(value) => {
            let screen: ScreenReply =
                serde_json::from_value(value).map_err(|e| format!("screen: {e}"))?;
            let clamp = |n: usize| u16::try_from(n).unwrap_or(u16::MAX).max(2);
            Ok((clamp(screen.cols), clamp(screen.rows)))
        }
        ClientReply::Error(e) => Err(e.message),
        ClientReply::Call(_) => Err("tickhost answered screen with a call outcome".into()),
    }
}

/// The last screen of `instance` when it has ended (tickhost keeps it), as
/// text for the page's terminal: its rows, every control escaped.
async fn last_screen(ctx: &TermContext, instance: &str) -> Option<String> {
    let request = ClientRequest::Screen {
        instance: instance.to_string(),
        history: 0,
        image: None,
    };
    let ClientReply::Ok(value) = ctx.tickhost.request(request).await.ok()? else {
        return None;
    };
    let screen: ScreenReply = serde_json::from_value(value).ok()?;
    screen.ended.then(|| {
        let rows: Vec<String> = screen
            .lines
            .iter()
            .map(|line| tickloop_proto::escape::escaped(line))
            .collect();
        // Home, clear, the rows; the cursor hidden (nothing types there).
        format!("\x1b[H\x1b[2J{}\x1b[?25l", rows.join("\r\n"))
    })
}

/// The next line from the launcher, as `T`.
async fn read_json<T: serde::de::DeserializeOwned>(
    reader: &mut LineReader<OwnedReadHalf>,
) -> Result<T, String> {
    match reader.next().await {
        Ok(Some(Line::Text(text))) => {
            serde_json::from_str(&text).map_err(|e| format!("the launcher sent {e}"))
        }
        Ok(Some(_)) => Err("the launcher sent an unreadable line".into()),
        Ok(None) => Err("the launcher closed the connection".into()),
        Err(e) => Err(format!("lost the launcher: {e}")),
    }
}

/// One attached page.
struct Link {
    ws: Ws,
    reader: LineReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    screen: PageScreen,
    read_only: bool,
}

/// What woke the link.
enum Woke {
    Launcher(Result<ToView, String>),
    Page(Option<Message>),
    Revoked,
}

impl Link {
    async fn run(mut self, ctx: &TermContext) {
        let mut revocations = ctx.auth.revocations();
        if !self.draw().await {
            return;
        }
        loop {
            let woke = tokio::select! {
                line = read_json::<ToView>(&mut self.reader) => Woke::Launcher(line),
                message = self.ws.next() => Woke::Page(message.and_then(Result::ok)),
                _ = revocations.changed() => Woke::Revoked,
            };
            let go_on = match woke {
                Woke::Launcher(Ok(frame)) => self.on_launcher(frame).await,
                Woke::Launcher(Err(why)) => {
                    websocket::close_with(&mut self.ws, &why).await;
                    false
                }
                Woke::Page(Some(message)) => self.on_page(message).await,
                Woke::Page(None) => false,
                Woke::Revoked if !ctx.auth.is_open(&ctx.session) => {
                    websocket::close_with(&mut self.ws, "revoked: log in again").await;
                    false
                }
                Woke::Revoked => true,
            };
            if !go_on {
                return;
            }
        }
    }

    /// Draws the screen as it is now; false when the page is gone.
    async fn draw(&mut self) -> bool {
        if let Some(title) = self.screen.new_title() {
            let parts = crate::parts::raw_parts(&title);
            let message = json!({"type": "title", "title": title, "title_parts": parts});
            if !send_json(&mut self.ws, &message).await {
                return false;
            }
        }
        let bytes = self.screen.draw();
        bytes.is_empty() || self.ws.send(Message::binary(bytes)).await.is_ok()
    }

    async fn on_launcher(&mut self, frame: ToView) -> bool {
        match self.screen.hear(frame) {
            Ok(Heard::Changed) => self.draw().await,
            Ok(Heard::Bell) => send_json(&mut self.ws, &json!({"type": "bell"})).await,
            Ok(Heard::Nothing) => true,
            // Reading an image is no write: asked under --read-only too.
            Ok(Heard::AskImages(indices)) => {
                for index in indices {
                    if !self.send_launcher(&ViewEvent::Image { index }).await {
                        return false;
                    }
                }
                self.draw().await
            }
            Ok(Heard::Ended(reason)) => {
                let _ = send_json(&mut self.ws, &json!({"type": "ended", "reason": reason})).await;
                let _ = self.ws.close(None).await;
                false
            }
            Err(why) => {
                websocket::close_with(
                    &mut self.ws,
                    &format!("the launcher broke the protocol: {why}"),
                )
                .await;
                false
            }
        }
    }

    async fn on_page(&mut self, message: Message) -> bool {
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => return false,
            _ => return true,
        };
        let Ok(message) = serde_json::from_str::<Value>(text.as_str()) else {
            return send_json(
                &mut self.ws,
                &json!({"type": "error", "message": "not JSON"}),
            )
            .await;
        };
        match message.get("type").and_then(Value::as_str) {
            Some("input") => {
                let data = message.get("data").and_then(Value::as_str).unwrap_or("");
                let events = self.screen.input(data.as_bytes());
                self.send_events(events).await
            }
            Some("resize") => match size_of(&message) {
                Some((cols, rows)) => {
                    self.screen.resize(cols, rows);
                    self.screen.set_cell_px(cell_px_of(&message));
                    let sent = if self.read_only {
                        true
                    } else {
                        self.send_launcher(&ViewEvent::Resize { cols, rows }).await
                    };
                    sent && self.draw().await
                }
                None => true,
            },
            _ => {
                send_json(
                    &mut self.ws,
                    &json!({"type": "error", "message": "unknown message"}),
                )
                .await
            }
        }
    }

    /// Sends the page's events on, or refuses them under `--read-only`
    /// (scrolling this view back is not a write: it goes).
    async fn send_events(&mut self, events: Vec<ViewEvent>) -> bool {
        let mut refused = 0;
        for event in events {
            if self.read_only && !matches!(event, ViewEvent::Scroll { .. }) {
                refused += 1;
                continue;
            }
            if !self.send_launcher(&event).await {
                return false;
            }
        }
        if refused > 0 {
            let notice = json!({
                "type": "refused",
                "message": "read-only: this page sends nothing to the Tick (tickloop web --read-only)",
                "events": refused,
            });
            return send_json(&mut self.ws, &notice).await;
        }
        true
    }

    async fn send_launcher(&mut self, event: &ViewEvent) -> bool {
        write_line(&mut self.writer, event).await.is_ok()
    }
}
