//! Ticks in Herdr's agent sidebar: while a Tick is shown in a Herdr pane,
//! a thread beside the view polls tickhost's `list` at a modest rate and,
//! when something changed, tells Herdr over its socket what the pane holds:
//! `pane.report_metadata` (the Tick's title as title and display name,
//! tokens `seq`, `calls`, `instance`) and `pane.report_agent` (source
//! `custom:tickloop`, agent `tickloop`, state `working` while calls are in
//! flight, `idle` otherwise, `done` once the Tick ended, with the reason as
//! message). [`Reporter::stop`] ends it; [`release`] gives Herdr's authority
//! back when the view detaches.

use crate::herdr;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;
use tickhost::client::Client;
use tickhost::wire::{ClientReply, ClientRequest};

/// How often tickhost is asked.
pub const POLL_INTERVAL: Duration = Duration::from_millis(300);
/// How long one report may take (the view must exit within 250 ms of a
/// SIGHUP, so the last ones are short).
const REPORT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long [`Reporter::stop`] waits for the thread.
const STOP_WAIT: Duration = Duration::from_millis(100);
/// How long the final `release_agent` may take.
const RELEASE_TIMEOUT: Duration = Duration::from_millis(100);

/// The `source` of Tickloop's reports.
pub const SOURCE: &str = "custom:tickloop";
/// The `agent` of Tickloop's reports.
pub const AGENT: &str = "tickloop";

/// What to report, and where.
#[derive(Debug, Clone)]
pub struct ReportTarget {
    /// `$HERDR_SOCKET_PATH`.
    pub socket: PathBuf,
    /// `$HERDR_PANE_ID`.
    pub pane_id: String,
    /// The instance shown.
    pub instance: String,
    /// Tickloop's runtime directory and executable (for tickhost).
    pub runtime: PathBuf,
    pub exe: PathBuf,
}

/// The instance as the sidebar shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TickStatus {
    pub title: String,
    pub seq: Option<u64>,
    pub calls_in_flight: u64,
    /// The reason, once the Tick ended.
    pub ended: Option<String>,
}

impl TickStatus {
    /// The instance's status from a `list` item.
    pub fn from_list_item(item: &Value) -> TickStatus {
        let id = item["id"].as_str().unwrap_or("");
        let ended = (item["state"].as_str() == Some("ended")).then(|| {
            item.pointer("/ended/reason")
                .and_then(Value::as_str)
                .unwrap_or("ended")
                .to_string()
        });
        TickStatus {
            title: item["title"]
                .as_str()
                .filter(|t| !t.is_empty())
                .unwrap_or(id)
                .to_string(),
            seq: item["seq"].as_u64(),
            calls_in_flight: item["calls_in_flight"].as_u64().unwrap_or(0),
            ended,
        }
    }

    /// Herdr's semantic state and its message.
    pub fn agent_state(&self) -> (&'static str, Option<String>) {
        match (&self.ended, self.calls_in_flight) {
            (Some(reason), _) => ("done", Some(reason.clone())),
            (None, 0) => ("idle", None),
            (None, 1) => ("working", Some("1 call in flight".into())),
            (None, n) => ("working", Some(format!("{n} calls in flight"))),
        }
    }
}

/// `pane.report_metadata`'s params.
pub fn metadata_params(pane_id: &str, instance: &str, status: &TickStatus) -> Value {
    let mut tokens = serde_json::Map::new();
    if let Some(seq) = status.seq {
        tokens.insert("seq".into(), json!(seq.to_string()));
    }
    tokens.insert("calls".into(), json!(status.calls_in_flight.to_string()));
    tokens.insert("instance".into(), json!(instance));
    json!({
        "pane_id": pane_id,
        "title": status.title,
        "display_agent": status.title,
        "tokens": tokens,
    })
}

/// `pane.report_agent`'s params.
pub fn agent_params(pane_id: &str, status: &TickStatus) -> Value {
    let (state, message) = status.agent_state();
    let mut params = json!({
        "pane_id": pane_id,
        "source": SOURCE,
        "agent": AGENT,
        "state": state,
    });
    if let Some(message) = message {
        params["message"] = json!(message);
    }
    params
}

/// Sends both reports for `status`.
pub fn report(target: &ReportTarget, status: &TickStatus) {
    let _ = herdr::request_within(
        &target.socket,
        "pane.report_metadata",
        metadata_params(&target.pane_id, &target.instance, status),
        REPORT_TIMEOUT,
    );
    let _ = herdr::request_within(
        &target.socket,
        "pane.report_agent",
        agent_params(&target.pane_id, status),
        REPORT_TIMEOUT,
    );
}

/// `pane.release_agent`: Herdr's authority over the pane's state goes back.
pub fn release(target: &ReportTarget) {
    let _ = herdr::request_within(
        &target.socket,
        "pane.release_agent",
        json!({"pane_id": target.pane_id, "source": SOURCE, "agent": AGENT}),
        RELEASE_TIMEOUT,
    );
}

/// The reporting thread.
pub struct Reporter {
    stop: mpsc::Sender<()>,
    done: mpsc::Receiver<Option<TickStatus>>,
    handle: Option<JoinHandle<()>>,
}

impl Reporter {
    /// Starts reporting `target` at once and at every change.
    pub fn spawn(target: ReportTarget) -> Reporter {
        let (stop, stop_rx) = mpsc::channel();
        let (done_tx, done) = mpsc::channel();
        let handle = std::thread::spawn(move || {
            let last = run(&target, &stop_rx);
            let _ = done_tx.send(last);
        });
        Reporter {
            stop,
            done,
            handle: Some(handle),
        }
    }

    /// Stops the thread (waiting briefly for a report in progress) and
    /// returns the last status it reported.
    pub fn stop(mut self) -> Option<TickStatus> {
        let _ = self.stop.send(());
        let last = self.done.recv_timeout(STOP_WAIT).ok().flatten();
        if last.is_some() {
            if let Some(handle) = self.handle.take() {
                let _ = handle.join();
            }
        }
        last
    }
}

fn run(target: &ReportTarget, stop: &mpsc::Receiver<()>) -> Option<TickStatus> {
    let mut client: Option<Client> = None;
    let mut last: Option<TickStatus> = None;
    loop {
        if let Some(status) = poll(target, &mut client) {
            if last.as_ref() != Some(&status) {
                report(target, &status);
                last = Some(status);
            }
        }
        match stop.recv_timeout(POLL_INTERVAL) {
            Err(RecvTimeoutError::Timeout) => continue,
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return last,
        }
    }
}

/// The instance's status from tickhost; `None` when it cannot be read now
/// (the connection is retried at the next poll).
fn poll(target: &ReportTarget, client: &mut Option<Client>) -> Option<TickStatus> {
    if client.is_none() {
        *client = Client::connect_or_start(&target.runtime, &target.exe).ok();
    }
    let reply = client.as_mut()?.request(ClientRequest::List);
    let list = match reply {
        Ok(ClientReply::Ok(list)) => list,
        _ => {
            *client = None;
            return None;
        }
    };
    let item = list
        .as_array()?
        .iter()
        .find(|i| i["id"].as_str() == Some(target.instance.as_str()))?;
    Some(TickStatus::from_list_item(item))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_follow_calls_and_the_end() {
        let running = json!({"id":"hosted:c","title":"Counter","state":"running","seq":3,"calls_in_flight":2,"ended":null});
        let s = TickStatus::from_list_item(&running);
        assert_eq!(s.agent_state().0, "working");
        let p = agent_params("w1:p1", &s);
        assert_eq!(p["source"], SOURCE);
        assert_eq!(p["message"], "2 calls in flight");
        let m = metadata_params("w1:p1", "hosted:c", &s);
        assert_eq!(m["title"], "Counter");
        assert_eq!(m["display_agent"], "Counter");
        assert_eq!(m["tokens"]["seq"], "3");
        let idle = TickStatus {
            calls_in_flight: 0,
            ..s.clone()
        };
        assert_eq!(idle.agent_state(), ("idle", None));
        let ended = json!({"id":"hosted:c","title":"Counter","state":"ended","seq":3,"calls_in_flight":0,
            "ended":{"reason":"the Tick exited with status 0","kind":"exited"}});
        let e = TickStatus::from_list_item(&ended);
        assert_eq!(
            e.agent_state(),
            ("done", Some("the Tick exited with status 0".into()))
        );
    }

    #[test]
    fn token_names_fit_herdrs_rules() {
        let s = TickStatus {
            title: "T".into(),
            seq: Some(1),
            calls_in_flight: 0,
            ended: None,
        };
        let m = metadata_params("p", "hosted:x", &s);
        let tokens = m["tokens"].as_object().expect("tokens");
        assert!(tokens.len() <= 16);
        for name in tokens.keys() {
            assert!((1..=32).contains(&name.len()));
            assert!(name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'));
        }
    }
}
