//! Ticks in Herdr's agent sidebar: while a Tick is shown in a Herdr pane,
//! a thread beside the view polls tickhost's `list` at a modest rate and,
//! when something changed, tells Herdr over its socket what the pane holds:
//! `pane.report_metadata` (the Tick's title as title and display name;
//! tokens `seq`, `calls`, `updated`, `instance` for sidebar rows that name
//! them) and `pane.report_agent` (state `working` while calls are in
//! flight, else `idle`; the message says how long ago the last update came
//! and how many calls are in flight). An ended Tick is reported `idle` with
//! the reason as its message and `ended` as the state's label: Herdr has no
//! reportable "done" (it derives that itself). [`Reporter::stop`] ends it;
//! [`release`] gives Herdr's authority back when the view detaches. Every
//! request is one of [`crate::requests`], checked against Herdr's schema,
//! and every refusal is logged with its request.

use crate::herdr;
use crate::requests::{AgentState, ReleaseAgent, ReportAgent, ReportMetadata, AGENT, SOURCE};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientReply, ClientRequest, InstanceState, ListEntry};

/// How often tickhost is asked.
pub const POLL_INTERVAL: Duration = Duration::from_millis(300);
/// How long one report may take (the view must exit within 250 ms of a
/// SIGHUP, so the last ones are short).
const REPORT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long [`Reporter::stop`] waits for the thread.
const STOP_WAIT: Duration = Duration::from_millis(100);
/// How long the final `release_agent` may take.
const RELEASE_TIMEOUT: Duration = Duration::from_millis(100);

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
    /// The instance is on this other machine, as `id` (over ssh).
    pub remote: Option<(tickloop_client::ssh::SshHost, String)>,
}

/// The instance as the sidebar shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TickStatus {
    pub title: String,
    pub seq: Option<u64>,
    pub calls_in_flight: u64,
    /// How long ago the last update came, in words (`None`: no update yet).
    pub updated: Option<String>,
    /// The reason, once the Tick ended.
    pub ended: Option<String>,
    /// Tools of the calls waiting for a person's approval, oldest first:
    /// the pane is `blocked` while there are any.
    pub awaiting_approval: Vec<String>,
}

/// `seconds` as the sidebar says it: coarse, so that an idle Tick is
/// reported again only every ten seconds at most.
pub fn age_words(seconds: i64) -> String {
    match seconds {
        i64::MIN..=4 => "just now".into(),
        5..=9 => "5s ago".into(),
        10..=59 => format!("{}s ago", seconds / 10 * 10),
        60..=3599 => format!("{}m ago", seconds / 60),
        3600..=86_399 => format!("{}h ago", seconds / 3600),
        _ => format!("{}d ago", seconds / 86_400),
    }
}

fn seconds_since(at: &str, now: time::OffsetDateTime) -> Option<i64> {
    let at =
        time::OffsetDateTime::parse(at, &time::format_description::well_known::Rfc3339).ok()?;
    Some((now - at).whole_seconds())
}

impl TickStatus {
    /// The instance's status from its `list` entry, its ages reckoned at
    /// `now`.
    pub fn from_list_item(item: &ListEntry, now: time::OffsetDateTime) -> TickStatus {
        let ended = (item.state == InstanceState::Ended).then(|| {
            item.ended
                .as_ref()
                .map_or_else(|| "ended".to_string(), |e| e.reason.clone())
        });
        TickStatus {
            title: item
                .title
                .clone()
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| item.id.clone()),
            seq: item.seq,
            calls_in_flight: u64::from(item.calls_in_flight),
            updated: item
                .last_update_at
                .as_deref()
                .and_then(|at| seconds_since(at, now))
                .map(age_words),
            ended,
            awaiting_approval: item.approval_tools.clone(),
        }
    }

    /// Herdr's semantic state and its message.
    pub fn agent_state(&self) -> (AgentState, String) {
        if let Some(reason) = &self.ended {
            return (AgentState::Idle, format!("ended: {reason}"));
        }
        if let Some(tool) = self.awaiting_approval.first() {
            let more = match self.awaiting_approval.len() {
                1 => String::new(),
                n => format!(" (+{} more)", n - 1),
            };
            return (
                AgentState::Blocked,
                format!("approve {tool}?{more} ctrl+\\ m here, or the Monitor"),
            );
        }
        let updated = match &self.updated {
            Some(age) => format!("updated {age}"),
            None => "no updates yet".to_string(),
        };
        match self.calls_in_flight {
            0 => (AgentState::Idle, updated),
            1 => (AgentState::Working, format!("{updated} · 1 call in flight")),
            n => (
                AgentState::Working,
                format!("{updated} · {n} calls in flight"),
            ),
        }
    }
}

/// `pane.report_metadata` for `status`.
pub fn metadata_params(pane_id: &str, instance: &str, status: &TickStatus) -> ReportMetadata {
    let mut tokens = BTreeMap::new();
    tokens.insert("seq".to_string(), status.seq.map(|s| s.to_string()));
    tokens.insert(
        "calls".to_string(),
        Some(status.calls_in_flight.to_string()),
    );
    tokens.insert("updated".to_string(), status.updated.clone());
    tokens.insert("instance".to_string(), Some(instance.to_string()));
    let mut state_labels = BTreeMap::new();
    if status.ended.is_some() {
        // Herdr shows an idle pane that went unseen as "done": either way,
        // the sidebar says the Tick ended.
        state_labels.insert("idle".to_string(), "ended".to_string());
        state_labels.insert("done".to_string(), "ended".to_string());
    }
    ReportMetadata {
        pane_id: pane_id.to_string(),
        source: SOURCE,
        title: Some(status.title.clone()),
        display_agent: Some(status.title.clone()),
        clear_state_labels: state_labels.is_empty(),
        state_labels,
        tokens,
    }
}

/// `pane.report_agent` for `status`.
pub fn agent_params(pane_id: &str, status: &TickStatus) -> ReportAgent {
    let (state, message) = status.agent_state();
    ReportAgent {
        pane_id: pane_id.to_string(),
        source: SOURCE,
        agent: AGENT,
        state,
        message: Some(message),
    }
}

/// Sends both reports for `status`; refusals are logged with the request
/// (see [`herdr::log_to`]) and the first is returned.
pub fn report(target: &ReportTarget, status: &TickStatus) -> Result<(), herdr::HerdrError> {
    let metadata = herdr::send_within(
        &target.socket,
        &metadata_params(&target.pane_id, &target.instance, status),
        REPORT_TIMEOUT,
    );
    let agent = herdr::send_within(
        &target.socket,
        &agent_params(&target.pane_id, status),
        REPORT_TIMEOUT,
    );
    metadata.and(agent).map(|_| ())
}

/// `pane.release_agent`: Herdr's authority over the pane's state goes back.
pub fn release(target: &ReportTarget) {
    let _ = herdr::send_within(
        &target.socket,
        &ReleaseAgent::new(&target.pane_id),
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
                // A refusal is logged; it is not retried at every poll (the
                // next change sends again).
                let _ = report(target, &status);
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
        *client = match &target.remote {
            Some((host, _)) => Client::connect_remote(host, false, ClientKind::Herdr).ok(),
            None => Client::connect_or_start(&target.runtime, &target.exe, ClientKind::Herdr).ok(),
        };
    }
    let reply = client.as_mut()?.request(ClientRequest::List);
    let list = match reply {
        Ok(ClientReply::Ok(list)) => list,
        _ => {
            *client = None;
            return None;
        }
    };
    let item = ListEntry::all(&list)?
        .into_iter()
        .find(|i| match &target.remote {
            Some((_, id)) => i.id == *id,
            None => i.id == target.instance,
        })?;
    Some(TickStatus::from_list_item(
        &item,
        time::OffsetDateTime::now_utc(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::requests::schema_check::request_errors;
    use crate::requests::HerdrRequest;
    use serde_json::json;

    fn now() -> time::OffsetDateTime {
        time::OffsetDateTime::parse(
            "2026-01-01T00:01:00Z",
            &time::format_description::well_known::Rfc3339,
        )
        .expect("a time")
    }

    fn valid<R: HerdrRequest>(r: &R) {
        let line = json!({"id": "t", "method": R::METHOD, "params": r});
        let errors = request_errors(&line);
        assert!(errors.is_empty(), "{line}: {errors:?}");
    }

    #[test]
    fn states_follow_calls_and_the_end() {
        let running = json!({"id":"hosted:c","title":"Counter","state":"running","seq":3,"calls_in_flight":2,
            "last_update_at":"2026-01-01T00:00:48Z","ended":null});
        let running: ListEntry = serde_json::from_value(running).expect("a list entry");
        let s = TickStatus::from_list_item(&running, now());
        assert_eq!(s.updated.as_deref(), Some("10s ago"));
        let p = agent_params("w1:p1", &s);
        assert_eq!(p.state, AgentState::Working);
        assert_eq!(
            p.message.as_deref(),
            Some("updated 10s ago · 2 calls in flight")
        );
        valid(&p);
        let m = metadata_params("w1:p1", "hosted:c", &s);
        assert_eq!(m.title.as_deref(), Some("Counter"));
        assert_eq!(m.display_agent.as_deref(), Some("Counter"));
        assert_eq!(m.tokens["seq"].as_deref(), Some("3"));
        assert!(m.clear_state_labels);
        valid(&m);
        let idle = TickStatus {
            calls_in_flight: 0,
            updated: None,
            ..s.clone()
        };
        assert_eq!(
            idle.agent_state(),
            (AgentState::Idle, "no updates yet".into())
        );
        let asking = TickStatus {
            awaiting_approval: vec!["increment".into(), "reset".into()],
            ..s.clone()
        };
        let (state, message) = asking.agent_state();
        assert_eq!(state, AgentState::Blocked);
        assert!(
            message.starts_with("approve increment? (+1 more)"),
            "{message}"
        );
        let ended = json!({"id":"hosted:c","title":"Counter","state":"ended","seq":3,"calls_in_flight":0,
            "ended":{"reason":"the Tick exited with status 0","kind":"exited","at":"2026-01-01T00:00:50Z"}});
        let ended: ListEntry = serde_json::from_value(ended).expect("a list entry");
        let e = TickStatus::from_list_item(&ended, now());
        let p = agent_params("w1:p1", &e);
        assert_eq!(p.state, AgentState::Idle, "Herdr has no reportable done");
        assert_eq!(
            p.message.as_deref(),
            Some("ended: the Tick exited with status 0")
        );
        valid(&p);
        let m = metadata_params("w1:p1", "hosted:c", &e);
        assert_eq!(m.state_labels["idle"], "ended");
        valid(&m);
    }

    #[test]
    fn ages_are_coarse() {
        assert_eq!(age_words(0), "just now");
        assert_eq!(age_words(7), "5s ago");
        assert_eq!(age_words(12), "10s ago");
        assert_eq!(age_words(59), "50s ago");
        assert_eq!(age_words(61), "1m ago");
        assert_eq!(age_words(7200), "2h ago");
        assert_eq!(age_words(200_000), "2d ago");
    }

    #[test]
    fn token_names_fit_herdrs_rules() {
        let s = TickStatus {
            title: "T".into(),
            seq: Some(1),
            calls_in_flight: 0,
            updated: None,
            ended: None,
            awaiting_approval: Vec::new(),
        };
        let m = metadata_params("p", "hosted:x", &s);
        assert!(m.tokens.len() <= 16);
        for name in m.tokens.keys() {
            assert!(crate::requests::valid_token_name(name), "{name}");
        }
    }
}
