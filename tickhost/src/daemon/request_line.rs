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

/// Reads a request line; on failure, the id to answer (0 when unknown) and
/// what was wrong.
pub fn parse_request(line: Line) -> Result<Envelope<ClientRequest>, (u64, String)> {
    let text = match line {
        Line::Text(text) => text,
        Line::TooLong(n) => {
            return Err((
                0,
                format!("a {n}-byte request line is over the {MAX_CLIENT_LINE}-byte limit; send one JSON object per line, like {REQUEST_EXAMPLE}"),
            ))
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
        assert!(parse_request(Line::TooLong(9)).is_err());
        let ok = parse_request(Line::Text(REQUEST_EXAMPLE.into()));
        assert_eq!(
            ok.map(|e| (e.id, e.request)).ok(),
            Some((1, ClientRequest::List))
        );
    }
}
