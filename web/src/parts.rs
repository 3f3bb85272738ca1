//! Escaped text ([`tickloop_proto::escape`]) as the page draws it: its
//! parts in order, `{"text": ...}` as it is and `{"escape": "\\u{202E}"}`
//! set apart, so an escape is never taken for text typed as it reads.
//! The page puts every part in as text (`textContent`), never as markup.

use serde_json::{json, Value};

/// Text Tickloop already escaped (a question, a line of the activity) as
/// its parts.
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

/// What a program or an agent wrote (a title, a command line), escaped,
/// as [`shown_parts`].
pub fn raw_parts(raw: &str) -> Value {
    shown_parts(&tickloop_proto::escape::escaped(raw))
}

/// Lines a program printed, each escaped, as one list of parts with a
/// `{"text": "\n"}` between lines (a line break is not escaped: it is
/// where the program's lines end).
pub fn raw_lines_parts(raw: &str) -> Value {
    let mut all = Vec::new();
    for (i, line) in raw.split('\n').enumerate() {
        if i > 0 {
            all.push(json!({ "text": "\n" }));
        }
        if let Value::Array(parts) = raw_parts(line) {
            all.extend(parts);
        }
    }
    Value::Array(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_are_parts_of_their_own() {
        assert_eq!(
            raw_parts("a\u{202e}b"),
            json!([{"text": "a"}, {"escape": "\\u{202E}"}, {"text": "b"}])
        );
    }

    #[test]
    fn lines_keep_their_breaks_and_escape_the_rest() {
        assert_eq!(
            raw_lines_parts("one\ntwo\u{7}\n"),
            json!([
                {"text": "one"},
                {"text": "\n"},
                {"text": "two"},
                {"escape": "\\u{7}"},
                {"text": "\n"}
            ])
        );
    }
}
