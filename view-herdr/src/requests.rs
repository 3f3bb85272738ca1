//! Every request Tickloop sends on Herdr's socket, as typed params.
//!
//! Herdr 0.8.0 publishes a JSON Schema of its socket API (shipped here as
//! `view-herdr/herdr-api.schema.json`, Apache-2.0, from Herdr's repository;
//! `herdr api schema --json` prints the same). Each struct below serializes
//! to the params of one method, and the tests check every one of them, in
//! every shape Tickloop builds, against that schema: a wrong shape fails
//! `cargo test`, not a user's sidebar.

use serde::Serialize;
use std::collections::BTreeMap;

/// The `source` of every report Tickloop makes (Herdr requires one).
pub const SOURCE: &str = "custom:tickloop";
/// The `agent` of Tickloop's agent reports.
pub const AGENT: &str = "tickloop";

/// A socket request: its method and params.
pub trait HerdrRequest: Serialize {
    const METHOD: &'static str;
}

/// `pane.get`, `pane.focus`, `pane.close`: one pane.
#[derive(Debug, Clone, Serialize)]
pub struct PaneTarget {
    pub pane_id: String,
}

/// `pane.get`.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct PaneGet(pub PaneTarget);
impl HerdrRequest for PaneGet {
    const METHOD: &'static str = "pane.get";
}

/// `pane.focus`.
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct PaneFocus(pub PaneTarget);
impl HerdrRequest for PaneFocus {
    const METHOD: &'static str = "pane.focus";
}

/// `pane.close` (Herdr sends SIGHUP, SIGTERM, SIGKILL to the pane's session).
#[derive(Debug, Clone, Serialize)]
#[serde(transparent)]
pub struct PaneClose(pub PaneTarget);
impl HerdrRequest for PaneClose {
    const METHOD: &'static str = "pane.close";
}

impl PaneTarget {
    pub fn new(pane_id: &str) -> PaneTarget {
        PaneTarget {
            pane_id: pane_id.to_string(),
        }
    }
}

/// `plugin.pane.open`. Herdr's rules: `overlay` and `popup` take no
/// target, workspace or direction (they cover the active pane); `split`
/// and `zoomed` take `target_pane_id` (else Herdr splits whichever pane is
/// focused) but no workspace; `tab` takes `workspace_id` but no target or
/// direction; `width`/`height` only for `popup`.
#[derive(Debug, Clone, Serialize)]
pub struct PluginPaneOpen {
    pub plugin_id: String,
    pub entrypoint: String,
    pub placement: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub direction: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target_pane_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace_id: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    pub focus: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<String>,
}
impl HerdrRequest for PluginPaneOpen {
    const METHOD: &'static str = "plugin.pane.open";
}

/// `pane.report_agent`: the pane's semantic state (`idle`, `working`,
/// `blocked`, `unknown`; Herdr derives `done` itself).
#[derive(Debug, Clone, Serialize)]
pub struct ReportAgent {
    pub pane_id: String,
    pub source: &'static str,
    pub agent: &'static str,
    pub state: AgentState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
impl HerdrRequest for ReportAgent {
    const METHOD: &'static str = "pane.report_agent";
}

/// Herdr's reportable agent states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    Idle,
    Working,
    Blocked,
    Unknown,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Idle => "idle",
            AgentState::Working => "working",
            AgentState::Blocked => "blocked",
            AgentState::Unknown => "unknown",
        }
    }
}

/// `pane.report_metadata`: what the sidebar displays (title, name,
/// state labels, `$name` tokens). A token set to `None` is cleared.
#[derive(Debug, Clone, Serialize)]
pub struct ReportMetadata {
    pub pane_id: String,
    pub source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_agent: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub state_labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub clear_state_labels: bool,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tokens: BTreeMap<String, Option<String>>,
}
impl HerdrRequest for ReportMetadata {
    const METHOD: &'static str = "pane.report_metadata";
}

/// `pane.release_agent`: Herdr's own detection takes the pane back.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseAgent {
    pub pane_id: String,
    pub source: &'static str,
    pub agent: &'static str,
}
impl HerdrRequest for ReleaseAgent {
    const METHOD: &'static str = "pane.release_agent";
}

impl ReleaseAgent {
    pub fn new(pane_id: &str) -> ReleaseAgent {
        ReleaseAgent {
            pane_id: pane_id.to_string(),
            source: SOURCE,
            agent: AGENT,
        }
    }
}

/// Whether a token name is one Herdr accepts (1–32 of letters, digits,
/// `_`, `-`).
pub fn valid_token_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
pub(crate) mod schema_check {
    //! Validation of request lines against the shipped Herdr schema.
    use serde_json::{json, Value};

    /// Herdr's schema file, shipped beside this crate.
    pub const SCHEMA: &str = include_str!("../herdr-api.schema.json");

    /// The errors of `line` (a whole request) against Herdr's request
    /// schema; empty when valid.
    pub fn request_errors(line: &Value) -> Vec<String> {
        let mut root: Value = serde_json::from_str(SCHEMA).expect("the shipped schema is JSON");
        root["$ref"] = json!("#/schemas/request");
        let validator = jsonschema::validator_for(&root).expect("the shipped schema compiles");
        validator
            .iter_errors(line)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::schema_check::request_errors;
    use super::*;
    use serde_json::{json, Value};

    fn line<R: HerdrRequest>(r: &R) -> Value {
        json!({"id": "t", "method": R::METHOD, "params": r})
    }

    fn assert_valid<R: HerdrRequest>(r: &R) {
        let l = line(r);
        let errors = request_errors(&l);
        assert!(
            errors.is_empty(),
            "{l} is refused by Herdr's schema: {errors:?}"
        );
    }

    #[test]
    fn the_checker_refuses_what_herdr_refused() {
        // The two shapes that shipped before and that a real Herdr refused.
        let no_source = json!({"id":"t","method":"pane.report_metadata","params":{"pane_id":"w1:p1","title":"T"}});
        assert!(!request_errors(&no_source).is_empty());
        let done = json!({"id":"t","method":"pane.report_agent","params":{"pane_id":"w1:p1","source":SOURCE,"agent":AGENT,"state":"done"}});
        assert!(!request_errors(&done).is_empty());
        let unknown = json!({"id":"t","method":"pane.frobnicate","params":{}});
        assert!(!request_errors(&unknown).is_empty());
    }

    #[test]
    fn every_request_tickloop_builds_is_valid() {
        assert_valid(&PaneGet(PaneTarget::new("w1:p1")));
        assert_valid(&PaneFocus(PaneTarget::new("w1:p1")));
        assert_valid(&PaneClose(PaneTarget::new("w1:p1")));
        assert_valid(&ReleaseAgent::new("w1:p1"));
        for state in [
            AgentState::Idle,
            AgentState::Working,
            AgentState::Blocked,
            AgentState::Unknown,
        ] {
            for message in [None, Some("2 calls in flight".to_string())] {
                assert_valid(&ReportAgent {
                    pane_id: "w1:p1".into(),
                    source: SOURCE,
                    agent: AGENT,
                    state,
                    message,
                });
            }
        }
        let mut tokens = BTreeMap::new();
        tokens.insert("seq".to_string(), Some("3".to_string()));
        tokens.insert("calls".to_string(), None);
        let mut labels = BTreeMap::new();
        labels.insert("idle".to_string(), "ended".to_string());
        assert_valid(&ReportMetadata {
            pane_id: "w1:p1".into(),
            source: SOURCE,
            title: Some("Counter".into()),
            display_agent: Some("Counter".into()),
            state_labels: labels,
            clear_state_labels: false,
            tokens,
        });
        assert_valid(&ReportMetadata {
            pane_id: "w1:p1".into(),
            source: SOURCE,
            title: None,
            display_agent: None,
            state_labels: BTreeMap::new(),
            clear_state_labels: true,
            tokens: BTreeMap::new(),
        });
        let mut env = BTreeMap::new();
        env.insert("TICKLOOP_INSTANCE".to_string(), "hosted:c".to_string());
        for (placement, direction, target, workspace, size) in [
            ("split", Some("right"), Some("w1:p1"), None, None),
            ("split", Some("down"), None, None, None),
            ("zoomed", None, Some("w1:p1"), None, None),
            ("tab", None, None, Some("w1"), None),
            ("overlay", None, None, None, None),
            ("popup", None, None, None, Some("90%")),
        ] {
            assert_valid(&PluginPaneOpen {
                plugin_id: "tickloop".into(),
                entrypoint: "view".into(),
                placement,
                direction,
                target_pane_id: target.map(str::to_string),
                workspace_id: workspace.map(str::to_string),
                env: env.clone(),
                focus: true,
                width: size.map(str::to_string),
                height: size.map(str::to_string),
            });
        }
    }

    #[test]
    fn token_names_follow_herdrs_rule() {
        assert!(valid_token_name("seq"));
        assert!(valid_token_name("calls-in_flight"));
        assert!(!valid_token_name(""));
        assert!(!valid_token_name("a.b"));
        assert!(!valid_token_name(&"x".repeat(33)));
    }
}
