//! Escaped text as the page draws it: each part of what
//! [`tickloop_proto::escape`] made, the escapes set apart (used by the
//! live socket's overview and timeline, and the terminal's title).

use serde_json::{json, Value};

/// Escaped text ([`tickloop_proto::escape`]) as the page draws it: its
/// parts in order, `{"text": ...}` as it is and `{"escape": "\\u{202E}"}`
/// set apart, so an escape is never taken for text typed as it reads.
pub fn shown_parts(shown: &str) -> Value {
    use tickloop_proto::escape::Part;
    Value::Array(
        tickloop_proto::escape::parts(shown)
            .into_iter()
            .map(|part| match part {
                Part::Text(text) => json!({ "text": text }),
                Part::Escape(escape) => json!({ "escape": escape }),
            })
            .collect(),
    )
}

/// What a program set, escaped, as [`shown_parts`].
pub fn raw_parts(raw: &str) -> Value {
    shown_parts(&tickloop_proto::escape::escaped(raw))
}
