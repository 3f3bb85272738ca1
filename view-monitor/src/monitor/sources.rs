//! The machines whose instances the Monitor shows ([`Source`]: this one, or
//! another over ssh), and the poller thread of each: it asks that tickhost
//! for `list`, the calls waiting for approval and the preview's screen every
//! [`POLL_INTERVAL`] (or at once when poked), and reports to the main loop.

use super::table::Preview;
use super::Event;
use serde_json::Value;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;
use termwiz::terminal::TerminalWaker;
use tickloop_client::Client;
use tickloop_proto::wire::{ClientReply, ClientRequest, ScreenReply};

/// How often the list is asked for.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// What the poller is asked to fetch besides the list: the screen of the
/// instance selected while the preview is on.
pub(super) type PreviewTarget = Arc<Mutex<Option<String>>>;

/// One machine whose instances the Monitor shows: this one or another over
/// ssh, and the prefix its ids carry in the list (`HOST:hosted:NAME`) when
/// the Monitor shows several machines.
#[derive(Debug, Clone)]
pub struct Source {
    pub prefix: Option<String>,
    pub endpoint: tickloop_client::Endpoint,
}

impl Source {
    /// `id` as the Monitor shows it.
    pub fn wrap(&self, id: &str) -> String {
        match &self.prefix {
            Some(p) => format!("{p}:{id}"),
            None => id.to_string(),
        }
    }

    /// The id on its machine, when `id` is this source's.
    pub fn unwrap<'a>(&self, id: &'a str) -> Option<&'a str> {
        match &self.prefix {
            None => tickloop_client::paths::parse_id(id).map(|_| id),
            Some(p) => id
                .strip_prefix(p.as_str())
                .and_then(|rest| rest.strip_prefix(':'))
                .filter(|rest| tickloop_client::paths::parse_id(rest).is_some()),
        }
    }

    /// A `list` answer with its ids as the Monitor shows them.
    pub(super) fn wrap_list(&self, mut list: Value) -> Value {
        if self.prefix.is_some() {
            for entry in list.as_array_mut().into_iter().flatten() {
                if let Some(id) = entry.get("id").and_then(Value::as_str) {
                    let wrapped = self.wrap(id);
                    entry["id"] = Value::String(wrapped);
                }
            }
        }
        list
    }

    /// [`Source::wrap_list`] undone.
    pub(super) fn unwrap_list(&self, mut list: Value) -> Value {
        for entry in list.as_array_mut().into_iter().flatten() {
            let raw = entry
                .get("id")
                .and_then(Value::as_str)
                .and_then(|id| self.unwrap(id))
                .map(str::to_string);
            if let Some(raw) = raw {
                entry["id"] = Value::String(raw);
            }
        }
        list
    }
}

/// Asks every poller for the list (and preview) at once.
#[derive(Clone)]
pub(super) struct Poke(pub(super) Vec<mpsc::Sender<()>>);

impl Poke {
    pub(super) fn send(&self, (): ()) -> Result<(), ()> {
        let mut any = false;
        for poke in &self.0 {
            any |= poke.send(()).is_ok();
        }
        if any {
            Ok(())
        } else {
            Err(())
        }
    }
}

/// The poller's ends: where it reports, and what it is asked for.
pub(super) struct Poller {
    pub(super) tx: mpsc::Sender<Event>,
    pub(super) waker: TerminalWaker,
    pub(super) target: PreviewTarget,
    /// A message asks for the list (and preview) at once.
    pub(super) poked: mpsc::Receiver<()>,
}

/// Asks tickhost for `list` (then the preview's `screen`) every
/// [`POLL_INTERVAL`], or at once when poked, on one connection,
/// reconnecting (without starting tickhost) when it is lost.
pub(super) fn spawn_poller(index: usize, source: Source, client: Option<Client>, p: Poller) {
    std::thread::spawn(move || {
        let endpoint = source.endpoint.clone();
        let mut client = client;
        loop {
            let event = match client.as_mut() {
                None => match endpoint.connect_running() {
                    Ok(c) => {
                        client = Some(c);
                        continue;
                    }
                    Err(e) => Event::ListFailed(index, format!("{e}")),
                },
                Some(c) => match c.request(ClientRequest::List) {
                    Ok(ClientReply::Ok(list)) => {
                        let mut waiting = crate::approval_prompt::fetch_waiting(c, &list);
                        for held in &mut waiting {
                            held.instance = source.wrap(&held.instance);
                        }
                        if p.tx.send(Event::Approvals(index, waiting)).is_err() {
                            return;
                        }
                        Event::List(index, source.wrap_list(list))
                    }
                    Ok(ClientReply::Error(e)) => Event::ListFailed(index, e.message),
                    Ok(ClientReply::Call(_)) => Event::ListFailed(
                        index,
                        "tickhost answered list with a call outcome".into(),
                    ),
                    Err(e) => {
                        client = None;
                        Event::ListFailed(index, format!("{e}"))
                    }
                },
            };
            let listed = matches!(event, Event::List(..));
            if p.tx.send(event).is_err() {
                return;
            }
            let target = p.target.lock().map(|t| t.clone()).unwrap_or_default();
            // The preview's instance, when it is this source's.
            let target = target.and_then(|id| Some((source.unwrap(&id)?.to_string(), id)));
            if let (true, Some((raw, id)), Some(c)) = (listed, target, client.as_mut()) {
                let asked = ClientRequest::Screen {
                    instance: raw,
                    history: 0,
                    image: None,
                };
                // No screen (gone meanwhile, or an old launcher): the
                // preview says it is asking until the next round.
                if let Ok(ClientReply::Ok(v)) = c.request(asked) {
                    if let Ok(screen) = serde_json::from_value::<ScreenReply>(v) {
                        if p.tx.send(Event::Screen(Preview { id, screen })).is_err() {
                            return;
                        }
                    }
                }
            }
            let _ = p.waker.wake();
            match p.poked.recv_timeout(POLL_INTERVAL) {
                Ok(()) => while p.poked.try_recv().is_ok() {},
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
        }
    });
}
