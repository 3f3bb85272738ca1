//! Claude Code's transcript (JSONL), read for how a turn ended when no
//! hook said so: interrupted by the person, or an API error.

use crate::machine::TurnStatus;
use serde_json::Value;
use std::path::Path;

/// How the latest turn of a transcript ended when no Stop hook said so.
pub fn classify_unended_turn(transcript: &Path) -> TurnStatus {
    match last_turn_entry(transcript) {
        Some(LastEntry::Interrupted) => TurnStatus::Interrupted,
        Some(LastEntry::ApiError) => TurnStatus::Error,
        Some(LastEntry::Other) | None => TurnStatus::Unknown("without a Stop hook".into()),
    }
}

enum LastEntry {
    Interrupted,
    ApiError,
    Other,
}

/// The last user or assistant entry of a Claude Code transcript (JSONL).
fn last_turn_entry(transcript: &Path) -> Option<LastEntry> {
    let text = std::fs::read_to_string(transcript).ok()?;
    for line in text.lines().rev() {
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let kind = entry.get("type").and_then(Value::as_str).unwrap_or("");
        if kind != "user" && kind != "assistant" {
            continue;
        }
        if entry.get("isMeta").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if kind == "assistant" {
            if entry.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
                return Some(LastEntry::ApiError);
            }
            return Some(LastEntry::Other);
        }
        let content = &entry["message"]["content"];
        let texts: Vec<&str> = match content {
            Value::String(s) => vec![s.as_str()],
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
            _ => Vec::new(),
        };
        if texts
            .iter()
            .any(|t| t.starts_with("[Request interrupted by user"))
        {
            return Some(LastEntry::Interrupted);
        }
        return Some(LastEntry::Other);
    }
    None
}

pub(super) fn last_assistant_is_error(transcript: Option<&Path>) -> bool {
    matches!(
        transcript.and_then(last_turn_entry),
        Some(LastEntry::ApiError)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tickloop-cc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_interrupted_turn_is_read_from_the_transcript() {
        let d = scratch("transcript");
        let t = d.join("t.jsonl");
        std::fs::write(
            &t,
            "{\"type\":\"user\",\"message\":{\"content\":\"go\"}}\n{\"type\":\"assistant\",\"message\":{\"content\":[]}}\n{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"[Request interrupted by user]\"}]}}\n{\"type\":\"system\"}\n",
        )
        .unwrap();
        assert_eq!(classify_unended_turn(&t), TurnStatus::Interrupted);
        std::fs::write(
            &t,
            "{\"type\":\"assistant\",\"isApiErrorMessage\":true,\"message\":{}}\n",
        )
        .unwrap();
        assert_eq!(classify_unended_turn(&t), TurnStatus::Error);
        assert!(matches!(
            classify_unended_turn(&d.join("none")),
            TurnStatus::Unknown(_)
        ));
        std::fs::remove_dir_all(&d).unwrap();
    }
}
