//! The Tick's state (`TickState`, spec 6.2) and the checks of a read result
//! or an update's params: `seq`, `data`, the RFC 3339 `at`, and the size.

use super::limits::encoded_size;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use thiserror::Error;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The largest `uinteger` of the spec (2^53 - 1).
pub const MAX_UINTEGER: u64 = (1 << 53) - 1;

/// One snapshot of a Tick's state, as a read result or an update carried it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TickState {
    pub seq: u64,
    /// The complete current state; `Null` means "no content yet" (never in
    /// an update).
    pub data: Value,
    /// The Tick's RFC 3339 timestamp, when it sent one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

/// Why a read result or an update's params are not a valid `TickState`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StateError {
    #[error("the state is not a JSON object")]
    NotAnObject,
    #[error("the state's seq is missing or is not an unsigned integer (got {0})")]
    BadSeq(String),
    #[error("the state has no data field")]
    MissingData,
    #[error("the state's data is null, which a tick/update may not carry")]
    NullData,
    #[error("the state's at is not a valid RFC 3339 timestamp (got {0})")]
    BadAt(String),
    #[error("the state is {size} bytes re-encoded, over the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
}

/// Whether `text` is a valid RFC 3339 timestamp.
pub fn is_rfc3339(text: &str) -> bool {
    OffsetDateTime::parse(text, &Rfc3339).is_ok()
}

impl TickState {
    /// Checks `value` (a read result or an update's params) and returns the
    /// state it holds. Unknown fields are ignored; `at: null` counts as
    /// absent. Null `data` is refused only when `allow_null_data` is false.
    pub fn from_value(
        value: &Value,
        max_size: usize,
        allow_null_data: bool,
    ) -> Result<TickState, StateError> {
        let object = value.as_object().ok_or(StateError::NotAnObject)?;
        let seq = parse_seq(object.get("seq"))?;
        let data = object.get("data").ok_or(StateError::MissingData)?;
        if data.is_null() && !allow_null_data {
            return Err(StateError::NullData);
        }
        let at = parse_at(object.get("at"))?;
        let size = encoded_size(value);
        if size > max_size {
            return Err(StateError::TooLarge {
                size,
                limit: max_size,
            });
        }
        Ok(TickState {
            seq,
            data: data.clone(),
            at,
        })
    }
}

fn parse_seq(seq: Option<&Value>) -> Result<u64, StateError> {
    match seq {
        Some(value) => value
            .as_u64()
            .filter(|seq| *seq <= MAX_UINTEGER)
            .ok_or_else(|| StateError::BadSeq(value.to_string())),
        None => Err(StateError::BadSeq("nothing".to_string())),
    }
}

fn parse_at(at: Option<&Value>) -> Result<Option<String>, StateError> {
    match at {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if is_rfc3339(text) => Ok(Some(text.clone())),
        Some(other) => Err(StateError::BadAt(other.to_string())),
    }
}
