//! A request tickhost may hold for the person (a call of a mutating tool
//! under `ask`; an agent's typing into or closing of the person's
//! instance). While it is held the agent hears what waits, where the person
//! is asked and by when (MCP progress, when it gave a token); the agent host
//! is asked too when it shows the person the question ([`crate::consent`],
//! [`crate::host_asks`]); a request the client cancels is withdrawn, so it
//! never runs; and a held request that did not go ahead says in its result
//! where it waited ([`Waited::note`]).

use crate::caller::Caller;
use crate::consent::HostQuestion;
use crate::hosts::{HostError, Hosts};
use rmcp::model::ProgressNotificationParam;
use std::time::Duration;
use tickloop_client::Withdrawer;
use tickloop_proto::wire::{ClientReply, ClientRequest, HeldCall};

/// What a held request waited for, and where the person was asked.
#[derive(Debug, Clone)]
pub struct Waited {
    pub held: HeldCall,
    /// The agent host that was asked too (`NAME VERSION`).
    pub in_host: Option<String>,
    /// Why the agent host was not asked.
    pub not_asked: Option<String>,
}

impl Waited {
    /// Where the person is asked: the Monitor and the rest always, the
    /// agent host when it was, or why not.
    fn places(&self) -> String {
        let mut places = "the Monitor, the Tick's view, Herdr and `tickloop approvals`".to_string();
        match (&self.in_host, &self.not_asked) {
            (Some(host), _) => places.push_str(&format!(", and in {host}")),
            (None, Some(why)) => places.push_str(&format!("; not in the agent host: {why}")),
            (None, None) => {}
        }
        places
    }

    /// The progress message while it waits.
    pub fn progress(&self) -> String {
        let held = &self.held;
        format!(
            "waiting for the person to approve {} on {} ({}): {} They are asked in {}; not executed if nobody answers by {}.",
            held.tool,
            held.instance,
            held.call,
            held.plainly(),
            self.places(),
            held.deadline_text()
        )
    }

    /// What the agent reads in the result of a held request that did not
    /// go ahead: what waited and where the person was asked.
    pub fn note(&self) -> String {
        format!(
            "It waited for the person as {} of {} (asked in {}).",
            self.held.call,
            self.held.instance,
            self.places()
        )
    }
}

/// `request` on a fresh tickhost connection, `instance` as the agent named
/// it. While tickhost holds it, each word of that becomes an MCP progress
/// notification (when the client gave a progress token) and the agent host
/// is asked too when it may be; when the client cancels the request, what
/// tickhost holds of it is withdrawn. The reply, and what it waited for
/// when it was held.
pub async fn request_held(
    hosts: &Hosts,
    request: ClientRequest,
    instance: &str,
    caller: &Caller,
) -> (Result<ClientReply, HostError>, Option<Waited>) {
    request_held_waiting(hosts, request, instance, caller, Duration::ZERO).await
}

/// [`request_held`] for a request tickhost answers only after `wait` (a
/// `run`): when the client cancels it, what tickhost holds of it is
/// withdrawn and then its connection hung up, so a command already typed
/// is no longer waited for (it goes on running in the shell).
pub async fn request_held_waiting(
    hosts: &Hosts,
    request: ClientRequest,
    instance: &str,
    caller: &Caller,
    wait: Duration,
) -> (Result<ClientReply, HostError>, Option<Waited>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<HeldCall>();
    let waiting = Waiting {
        caller: caller.clone(),
        hosts: hosts.clone(),
        instance: instance.to_string(),
    };
    let forward = tokio::spawn(waiting.forward(rx));
    let hosts = hosts.clone();
    let (connected_tx, connected) = tokio::sync::oneshot::channel();
    let mut request = tokio::task::spawn_blocking(move || {
        hosts.request_connected(
            request,
            wait,
            |held| {
                let _ = tx.send(held.clone());
            },
            |client| {
                let _ = connected_tx.send((client.withdrawer(), client.hangup_handle().ok()));
            },
        )
    });
    let reply = tokio::select! {
        done = &mut request => done,
        () = caller.cancelled.cancelled() => {
            if let Ok((withdrawer, hangup)) = connected.await {
                withdraw(withdrawer).await;
                if wait > Duration::ZERO {
                    hang_up(hangup);
                }
            }
            request.await
        }
    }
    .unwrap_or_else(|e| Err(HostError::Lost(format!("internal error: {e}"))));
    let waited = forward.await.ok().flatten();
    (reply, waited)
}

/// `request` (a `wait`, answered only after up to `wait`) on a fresh
/// tickhost connection, ended when the client cancels it: the connection
/// is hung up, and tickhost stops waiting for it.
pub async fn request_cancellable(
    hosts: &Hosts,
    request: ClientRequest,
    wait: Duration,
    caller: &Caller,
) -> Result<ClientReply, HostError> {
    let hosts = hosts.clone();
    let (connected_tx, connected) = tokio::sync::oneshot::channel();
    let mut request = tokio::task::spawn_blocking(move || {
        hosts.request_connected(
            request,
            wait,
            |_| {},
            |client| {
                let _ = connected_tx.send(client.hangup_handle().ok());
            },
        )
    });
    tokio::select! {
        done = &mut request => done,
        () = caller.cancelled.cancelled() => {
            if let Ok(hangup) = connected.await {
                hang_up(hangup);
            }
            let _ = request.await;
            Ok(Err(HostError::Lost("cancelled by the client".into())))
        }
    }
    .unwrap_or_else(|e| Err(HostError::Lost(format!("internal error: {e}"))))
}

/// Ends a request by shutting its tickhost connection down (both ways).
fn hang_up(connection: Option<std::os::unix::net::UnixStream>) {
    if let Some(stream) = connection {
        let _ = stream.shutdown(std::net::Shutdown::Both);
    }
}

/// The client cancelled its request: whatever tickhost holds of it is
/// withdrawn (a request not held, or answered, is not touched). The reply
/// then comes as usual, `withdrawn`, and nobody waits for it.
async fn withdraw(withdrawer: Withdrawer) {
    let withdrawn = tokio::task::spawn_blocking(move || {
        withdrawer.withdraw(Some(
            "the agent host cancelled the request (MCP notifications/cancelled)",
        ))
    })
    .await;
    if let Ok(Err(e)) = withdrawn {
        eprintln!("tickloop mcp: cannot withdraw a cancelled request: {e}");
    }
}

/// A request tickhost may hold: who asked, and where an answer goes.
struct Waiting {
    caller: Caller,
    hosts: Hosts,
    instance: String,
}

impl Waiting {
    /// Until the request is answered: asks the agent host once (when it
    /// may be asked), and sends each word of the wait as progress (if the
    /// client gave a token). Then withdraws the host's question if it is
    /// still open. What it waited for, if it was held.
    async fn forward(
        self,
        mut held_calls: tokio::sync::mpsc::UnboundedReceiver<HeldCall>,
    ) -> Option<Waited> {
        let mut step = 0.0;
        let mut asked = None;
        let mut waited: Option<Waited> = None;
        while let Some(held) = held_calls.recv().await {
            if let Some(ask) = &self.caller.ask {
                let _ = ask.send(held.clone());
            }
            // tickhost repeats that the call waits every 30 s: asked once.
            let mut in_host = waited.as_ref().and_then(|w| w.in_host.clone());
            // A question too long for the host's dialog is asked only
            // where it shows whole, and the agent is told.
            let too_long = crate::consent::question(&held, &self.caller.asker).err();
            let not_asked = self.caller.not_asked.clone().or(too_long);
            if waited.is_none() && self.caller.ask.is_none() && not_asked.is_none() {
                if let Some(question) = HostQuestion::of(&self.caller, &self.hosts, &self.instance)
                {
                    // The question was made above: it is not too long.
                    asked = question.ask(&held).await.ok().flatten();
                    in_host = asked.is_some().then(|| question.name());
                }
            }
            let now = Waited {
                held,
                in_host,
                not_asked,
            };
            step += 1.0;
            if let Some(token) = &self.caller.progress {
                let param = ProgressNotificationParam::new(token.clone(), step)
                    .with_message(now.progress());
                let _ = self.caller.peer.notify_progress(param).await;
            }
            waited = Some(now);
        }
        if let Some(asked) = asked {
            asked.finish().await;
        }
        waited
    }
}
