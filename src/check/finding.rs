//! One rule's result ([`Finding`]: PASS, FAIL or NOT CHECKED, with what
//! was seen and, for a FAIL, the one-line fix), its constructors, and how
//! a finding names a call and its outcome.

use serde::Serialize;
use serde_json::Value;
use tickloop_proto::wire::CallOutcome;

#[derive(Serialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    Fail,
    NotChecked,
}

/// One rule's result: one line of output.
#[derive(Serialize, Debug)]
pub struct Finding {
    pub rule: &'static str,
    pub section: &'static str,
    pub result: Verdict,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

pub fn pass(rule: &'static str, section: &'static str, detail: impl Into<String>) -> Finding {
    Finding {
        rule,
        section,
        result: Verdict::Pass,
        detail: detail.into(),
        fix: None,
    }
}

pub fn fail(
    rule: &'static str,
    section: &'static str,
    detail: impl Into<String>,
    fix: impl Into<String>,
) -> Finding {
    Finding {
        rule,
        section,
        result: Verdict::Fail,
        detail: detail.into(),
        fix: Some(fix.into()),
    }
}

pub fn not_checked(rule: &'static str, section: &'static str, why: impl Into<String>) -> Finding {
    Finding {
        rule,
        section,
        result: Verdict::NotChecked,
        detail: why.into(),
        fix: None,
    }
}

/// `TOOL ARGS`, as a person would replay it with `tickloop call`.
pub fn call_text(tool: &str, args: &Value) -> String {
    format!("{tool} {args}")
}

/// A call's outcome, as a finding says it.
pub fn outcome_text(outcome: &CallOutcome) -> String {
    match outcome {
        CallOutcome::Result { .. } => "a result (executed)".into(),
        CallOutcome::NotExecuted { error } => {
            format!("not executed, {} {}", error.code, error.message)
        }
        CallOutcome::Executed { error } => {
            format!("executed with error {} {}", error.code, error.message)
        }
        CallOutcome::Unknown { reason } => format!("unknown outcome ({reason})"),
    }
}
