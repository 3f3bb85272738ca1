//! What the Loop takes as a session id or a subscription's instance id. Both
//! end up in the person's view of the Loop (`/tick status`, the ledger's
//! `sessionId`, its file name), so neither may carry a control character or
//! an invisible one (a bidi override would reorder what `/tick status`
//! shows, an ESC would drive the person's terminal): such an id is refused,
//! with its characters escaped in the message, and nothing is changed.

use tickloop_client::paths;

/// The longest session id taken (Claude Code's and Codex's are UUIDs,
/// opencode's `ses_` and 26 characters).
pub const MAX_SESSION_ID: usize = 200;

/// Whether `c` is a control, or a character that changes how the text
/// around it shows without showing itself: C0, DEL, C1, the bidi
/// embeddings, overrides, isolates and marks, the zero-width characters,
/// the line and paragraph separators and the byte-order mark.
pub fn hides_or_controls(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{200B}'..='\u{200F}'
            | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2069}'
            | '\u{061C}'
            | '\u{FEFF}')
}

/// `text` with every character [`hides_or_controls`] escaped
/// (`\u{202e}`), for a subscription a state saved before ids were checked
/// may hold.
pub fn shown(text: &str) -> String {
    text.chars()
        .map(|c| {
            if hides_or_controls(c) {
                c.escape_unicode().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Checks a session id an agent host (or a harness) gave: 1 to
/// [`MAX_SESSION_ID`] characters, none of them [`hides_or_controls`].
pub fn check_session_id(id: &str) -> Result<(), String> {
    if id.trim().is_empty() {
        return Err("the session id is empty".into());
    }
    if id.chars().count() > MAX_SESSION_ID {
        return Err(format!(
            "the session id is {} characters; at most {MAX_SESSION_ID} are taken",
            id.chars().count()
        ));
    }
    if let Some(bad) = id.chars().find(|c| hides_or_controls(*c)) {
        return Err(format!(
            "the session id {id:?} holds the control or invisible character {:?}; a session id is printable text",
            bad
        ));
    }
    Ok(())
}

/// Checks an instance id to subscribe to: `KIND:NAME` (`hosted:counter`,
/// `shell:sh`, `artifact:notes`) or a bare NAME, as `tickloop` takes them.
pub fn check_instance_id(id: &str) -> Result<(), String> {
    if paths::parse_id(id).is_some() {
        return Ok(());
    }
    if !id.contains(':') && paths::validate_name(id).is_ok() {
        return Ok(());
    }
    Err(format!(
        "{id:?} is not an instance id: give KIND:NAME (hosted:counter, shell:sh, artifact:notes) or a NAME of 1-64 of A-Z a-z 0-9 . _ - (`tickloop list` shows them)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_with_controls_or_invisible_characters_are_refused_escaped() {
        assert!(check_session_id("9ec968c8-1d7c-4f55-8a2b-3c1f0e7b2a11").is_ok());
        assert!(check_session_id("ses_db676300abcdefghij").is_ok());
        for bad in [
            "a\u{1b}[2Jb",
            "x\u{202E}y",
            "z\u{200B}",
            "l\u{2028}",
            "\u{7f}",
        ] {
            let why = check_session_id(bad).expect_err(bad);
            assert!(!why.chars().any(hides_or_controls), "escaped: {why}");
        }
        assert!(check_session_id(" ").is_err());
        assert!(check_session_id(&"s".repeat(MAX_SESSION_ID + 1)).is_err());
        for good in ["hosted:counter", "shell:sh", "artifact:notes.py", "counter"] {
            assert_eq!(check_instance_id(good), Ok(()), "{good}");
        }
        assert_eq!(shown("a\u{1b}b\u{202e}"), "a\\u{1b}b\\u{202e}");
        for bad in ["hosted:\u{1b}]0;x", "shell:a\u{202E}b", "nope:x", "a b", ""] {
            let why = check_instance_id(bad).expect_err(bad);
            assert!(!why.chars().any(hides_or_controls), "escaped: {why}");
        }
    }
}
