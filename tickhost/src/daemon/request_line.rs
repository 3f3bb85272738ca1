//! One request line from a client: the envelope, or the id to answer and
//! what was wrong with it, saying what to send instead.

use serde_json::Value;
use tickloop_client::framing::Line;
use tickloop_proto::wire::{ClientRequest, Envelope};

/// The longest request line accepted from a client (an `open` carries the
/// whole environment); clients check it before sending, with the same
/// constant.
pub const MAX_CLIENT_LINE: usize = tickloop_proto::wire::MAX_CLIENT_LINE;

const REQUEST_EXAMPLE: &str = r#"{"id":1,"request":{"op":"list"}}"#;

/// Reads a request line; on failure, the id to answer (the request's own
/// when it can be read, else 0) and what was wrong.
pub fn parse_request(line: Line) -> Result<Envelope<ClientRequest>, (u64, String)> {
    let text = match line {
        Line::Text(text) => text,
        Line::TooLong { len, head } => {
            let op = leading_op(&head)
                .map(|op| format!(" ({op})"))
                .unwrap_or_default();
            return Err((
                leading_id(&head).unwrap_or(0),
                format!("the {len}-byte request{op} is over tickhost's {MAX_CLIENT_LINE}-byte limit for one request, so it was not read and nothing was done; send less at a time (split long input into several requests)"),
            ));
        }
        Line::NotUtf8 => {
            return Err((
                0,
                format!("the request line is not UTF-8; send one JSON object per line, like {REQUEST_EXAMPLE}"),
            ))
        }
    };
    serde_json::from_str::<Envelope<ClientRequest>>(&text).map_err(|e| {
        let id = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|v| v.get("id").and_then(Value::as_u64))
            .unwrap_or(0);
        (
            id,
            format!("cannot read the request ({e}); send one JSON object per line, like {REQUEST_EXAMPLE}"),
        )
    })
}

/// The id of an envelope whose line begins `head`, when it comes first
/// (`{"id":7,...`, as every Tickloop client writes it).
fn leading_id(head: &[u8]) -> Option<u64> {
    let rest = after_key(head, b"id")?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    // The number must end within the head, or it may be longer.
    if digits == 0 || digits == rest.len() {
        return None;
    }
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// The `op` of the request in `head`, when it can be read there
/// (`..."request":{"op":"input",...`).
fn leading_op(head: &[u8]) -> Option<String> {
    let at = head.windows(5).position(|w| w == b"\"op\":")?;
    let rest = head[at + 5..].trim_ascii_start().strip_prefix(b"\"")?;
    let end = rest.iter().position(|b| *b == b'"')?;
    let op = std::str::from_utf8(&rest[..end]).ok()?;
    op.bytes()
        .all(|b| b.is_ascii_lowercase() || b == b'_')
        .then(|| op.to_string())
}

/// What follows `"key":` at the start of the JSON object `head`.
fn after_key<'a>(head: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let rest = head
        .trim_ascii_start()
        .strip_prefix(b"{")?
        .trim_ascii_start();
    let rest = rest
        .strip_prefix(b"\"")?
        .strip_prefix(key)?
        .strip_prefix(b"\"")?;
    Some(
        rest.trim_ascii_start()
            .strip_prefix(b":")?
            .trim_ascii_start(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_say_what_to_send() {
        let (id, message) = parse_request(Line::Text(
            "{\"id\":7,\"request\":{\"op\":\"nope\"}}".into(),
        ))
        .err()
        .unwrap_or_default();
        assert_eq!(id, 7);
        assert!(message.contains(REQUEST_EXAMPLE));
        let (id, _) = parse_request(Line::Text("not json".into()))
            .err()
            .unwrap_or_default();
        assert_eq!(id, 0);
        assert!(parse_request(Line::NotUtf8).is_err());
        let long = |head: &str| {
            parse_request(Line::TooLong {
                len: 9_000_000,
                head: head.as_bytes().to_vec(),
            })
            .err()
            .unwrap_or_default()
        };
        let (id, message) = long(r#"{"id":42,"request":{"op":"input","instance":"x","text":"aaaa"#);
        assert_eq!(id, 42, "answered by its own id");
        assert!(
            message.contains("9000000-byte request (input)")
                && message.contains("nothing was done"),
            "{message}"
        );
        assert_eq!(long(r#" { "id" : 9 , "request""#).0, 9);
        // The id not first, or cut: unknown.
        assert_eq!(long(r#"{"request":{"op":"input"},"id":3}"#).0, 0);
        assert_eq!(long(r#"{"id":12"#).0, 0);
        let ok = parse_request(Line::Text(REQUEST_EXAMPLE.into()));
        assert_eq!(
            ok.map(|e| (e.id, e.request)).ok(),
            Some((1, ClientRequest::List))
        );
    }
}
