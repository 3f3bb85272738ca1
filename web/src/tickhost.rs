//! The bridge to tickhost, as the client kind `web` (the person's): the
//! overview every page shows (the `list` and the held actions, asked by one
//! thread for all pages, twice a second while a page is open, so the number
//! of open pages costs tickhost nothing more), single requests (decide,
//! close, activity, screen), and a `watch` of one instance's state that
//! ends when its page looks elsewhere.
//!
//! tickhost's client is blocking (`tickloop_client::Client`): requests run
//! on tokio's blocking threads, the overview and the watches on threads of
//! their own.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tickloop_client::{Client, WatchItem};
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest, HeldCall, WatchEvent};
use tokio::sync::{mpsc, watch};

/// How often the overview is asked for (the Monitor's pace).
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How often a watched instance's newest state may be delivered.
const WATCH_INTERVAL_MS: u64 = 100;

/// What every page shows: every instance and the held actions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overview {
    /// `list`'s answer as tickhost gave it (an array of `ListEntry`).
    pub list: Value,
    /// Held actions, oldest first.
    pub held: Vec<HeldCall>,
    /// Why tickhost could not be asked, when it could not.
    pub problem: Option<String>,
}

/// tickhost, for the pages of one server.
#[derive(Clone)]
pub struct Tickhost {
    runtime: PathBuf,
    overview: watch::Receiver<Arc<Overview>>,
}

impl Tickhost {
    /// Connects to the tickhost of `runtime` (starting it with `exe` when
    /// absent, as every command does) and starts the overview's thread.
    pub fn start(runtime: PathBuf, exe: PathBuf) -> Result<Tickhost, String> {
        let first = Client::connect_or_start(&runtime, &exe, ClientKind::Web)
            .map_err(|e| format!("cannot reach tickhost: {e}"))?;
        let (tx, overview) = watch::channel(Arc::new(Overview::default()));
        let poll_runtime = runtime.clone();
        std::thread::Builder::new()
            .name("web-overview".into())
            .spawn(move || poll_overview(&poll_runtime, Some(first), &tx))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(Tickhost { runtime, overview })
    }

    /// The overview, and its changes.
    pub fn overview(&self) -> watch::Receiver<Arc<Overview>> {
        self.overview.clone()
    }

    /// Sends one request on a connection of its own; tickhost's answer, or
    /// why it could not be asked.
    pub async fn request(&self, request: ClientRequest) -> Result<ClientReply, String> {
        let runtime = self.runtime.clone();
        tokio::task::spawn_blocking(move || {
            Client::connect(&runtime, ClientKind::Web)
                .and_then(|mut client| client.request(request))
                .map_err(|e| format!("cannot reach tickhost: {e}"))
        })
        .await
        .map_err(|e| format!("the request's thread failed: {e}"))?
    }

    /// Watches `instance`'s state: each delivery (or its end) comes on
    /// the [`StateWatch`], whose drop ends the watch's connection.
    pub async fn watch(&self, instance: &str) -> Result<StateWatch, String> {
        let runtime = self.runtime.clone();
        let instance = instance.to_string();
        let (client, socket) = tokio::task::spawn_blocking(move || {
            let mut client = Client::connect(&runtime, ClientKind::Web)?;
            let socket = client.hangup_handle()?;
            client.watch(vec![instance], WATCH_INTERVAL_MS)?;
            Ok::<_, tickloop_client::ClientError>((client, socket))
        })
        .await
        .map_err(|e| format!("the watch's thread failed: {e}"))?
        .map_err(|e| format!("cannot watch: {e}"))?;
        let (tx, events) = mpsc::channel(4);
        std::thread::Builder::new()
            .name("web-watch".into())
            .spawn(move || read_watch(client, &tx))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(StateWatch { events, socket })
    }
}

/// One page's watch of one instance; dropping it ends the watch.
pub struct StateWatch {
    pub events: mpsc::Receiver<Result<WatchEvent, String>>,
    socket: std::os::unix::net::UnixStream,
}

impl Drop for StateWatch {
    fn drop(&mut self) {
        // Ends the reading thread's blocked read.
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
    }
}

/// The watch's thread: deliveries to `tx` until the stream ends or its
/// [`StateWatch`] is dropped.
fn read_watch(mut client: Client, tx: &mpsc::Sender<Result<WatchEvent, String>>) {
    loop {
        let item = match client.next_watch_item() {
            Ok(WatchItem::Event(event)) => Ok(event),
            Ok(WatchItem::Done(ClientReply::Error(e))) => Err(e.message),
            Ok(WatchItem::Done(_)) => return,
            Err(e) => Err(e.to_string()),
        };
        let last = item.is_err();
        if tx.blocking_send(item).is_err() || last {
            return;
        }
    }
}

/// The overview's thread: `list` (and the held actions when any wait) every
/// [`POLL_INTERVAL`] while a page listens, published when it changed.
fn poll_overview(
    runtime: &std::path::Path,
    mut client: Option<Client>,
    tx: &watch::Sender<Arc<Overview>>,
) {
    loop {
        // Nobody looks: ask nothing (the server keeps one receiver).
        if tx.receiver_count() > 1 {
            let next = ask_overview(runtime, &mut client);
            tx.send_if_modified(|old| {
                let changed = **old != next;
                if changed {
                    *old = Arc::new(next);
                }
                changed
            });
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// One look at tickhost, reconnecting when the connection was lost (never
/// starting tickhost: a `tickloop shutdown` is the person's choice).
fn ask_overview(runtime: &std::path::Path, client: &mut Option<Client>) -> Overview {
    if client.is_none() {
        match Client::connect(runtime, ClientKind::Web) {
            Ok(c) => *client = Some(c),
            Err(e) => {
                return Overview {
                    problem: Some(format!("tickhost is not running ({e})")),
                    ..Overview::default()
                }
            }
        }
    }
    let Some(c) = client.as_mut() else {
        return Overview::default();
    };
    let list = match c.request(ClientRequest::List) {
        Ok(ClientReply::Ok(list)) => list,
        Ok(other) => {
            return Overview {
                problem: Some(format!("tickhost answered list with {other:?}")),
                ..Overview::default()
            }
        }
        Err(e) => {
            *client = None;
            return Overview {
                problem: Some(format!("lost tickhost: {e}")),
                ..Overview::default()
            };
        }
    };
    let held = view_monitor::approval_prompt::fetch_waiting(c, &list);
    Overview {
        list,
        held,
        problem: None,
    }
}
