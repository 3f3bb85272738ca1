//! MCP tool names for each running Tick's tools, and `tick://` resource URIs.
//!
//! The name of a Tick's tool depends only on the instance id and the tool's
//! name, never on which other instances run, so a host's "always allow" rule
//! for a name can never come to approve another Tick's tool:
//!
//! * **plain** `NAME__TOOL` (NAME is the id without `hosted:`) when that is
//!   exact and unambiguous: both parts only of `A-Z a-z 0-9 _ -`, NAME
//!   neither containing `__` nor ending in `_` (so the first `__` is the
//!   split), at most [`MAX_TOOL_NAME`] characters, and not ending like a
//!   hashed name;
//! * **hashed** otherwise: a readable cut of both parts (other characters
//!   turned into `_`), then `_` and 16 hex digits of the SHA-256 of the exact
//!   original `ID\0TOOL`.
//!
//! So two different `(id, tool)` pairs get the same name only if 64 bits of
//! SHA-256 collide; the bridge still checks, and leaves both out of
//! `tools/list` if that ever happens. Generic tools (`TickCall`, ...) contain
//! no `__` and no hash, so they cannot collide with these.
//!
//! [`MAX_TOOL_NAME`] is 48, not MCP's 64: hosts put their own prefix before a
//! server's tool names and the model APIs behind them take at most 64
//! characters. Claude Code's `mcp__tickloop__` costs 15, VS Code's
//! `mcp_tickloop_` 13; 16 are left for such a prefix.

use sha2::{Digest, Sha256};

/// Longest per-Tick tool name (MCP allows 64; see the module text).
pub const MAX_TOOL_NAME: usize = 48;

/// Hex digits of the hash in a hashed name.
const HASH_DIGITS: usize = 16;

/// Longest NAME part in a hashed name, so the tool's name shows too.
const HASHED_NAME_PART: usize = 14;

/// The instance NAME of an id (`hosted:counter` → `counter`).
pub fn instance_name(id: &str) -> &str {
    id.split_once(':').map_or(id, |(_, name)| name)
}

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect()
}

/// Whether `name` ends like a hashed name (`_` and 16 lowercase hex digits).
fn looks_hashed(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() > HASH_DIGITS
        && bytes[bytes.len() - HASH_DIGITS - 1] == b'_'
        && bytes[bytes.len() - HASH_DIGITS..]
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// The MCP tool name of `tool` of instance `id` (the rule of the module text).
/// An instance of another machine (`HOST:KIND:NAME`, `tickloop mcp` with
/// several `--host`s) is `HOST__NAME__TOOL` when each part is exact, else
/// hashed from the whole id like any other.
pub fn tool_name(id: &str, tool: &str) -> String {
    if let Some((host, there)) = tickloop_client::ssh::split_host_id(id) {
        let (label, name) = (host.label(), instance_name(&there).to_string());
        let exact = |part: &str| {
            !part.is_empty()
                && part.chars().all(allowed)
                && !part.contains("__")
                && !part.ends_with('_')
        };
        let plain = format!("{label}__{name}__{tool}");
        if exact(&label)
            && exact(&name)
            && !tool.is_empty()
            && tool.chars().all(allowed)
            && plain.len() <= MAX_TOOL_NAME
            && !looks_hashed(&plain)
        {
            return plain;
        }
        return hashed(&format!("{label}_{name}"), id, tool);
    }
    let name = instance_name(id);
    let exact = !name.is_empty()
        && !tool.is_empty()
        && name.chars().all(allowed)
        && tool.chars().all(allowed)
        && !name.contains("__")
        && !name.ends_with('_');
    let plain = format!("{name}__{tool}");
    if exact && plain.len() <= MAX_TOOL_NAME && !looks_hashed(&plain) {
        return plain;
    }
    hashed(name, id, tool)
}

/// The hashed name of `tool` of `id`, readable part from `name`.
fn hashed(name: &str, id: &str, tool: &str) -> String {
    let digest = Sha256::digest(format!("{id}\u{0}{tool}").as_bytes());
    let hash: String = digest
        .iter()
        .take(HASH_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    let readable_len = MAX_TOOL_NAME - HASH_DIGITS - 1;
    let name_part: String = sanitize(name).chars().take(HASHED_NAME_PART).collect();
    let tool_room = readable_len.saturating_sub(name_part.len() + 2);
    let tool_part: String = sanitize(tool).chars().take(tool_room).collect();
    format!("{name_part}__{tool_part}_{hash}")
}

/// The URI of an instance's state resource: `tick://NAME/state`, and
/// `tick://HOST/NAME/state` for an instance of another machine.
pub fn state_uri(id: &str) -> String {
    // A shell's keeps its kind (`tick://shell:NAME/state`): a bare NAME
    // is a Tick's.
    let name = |id: &str| -> String {
        if id.starts_with("shell:") {
            id.to_string()
        } else {
            instance_name(id).to_string()
        }
    };
    if let Some((host, there)) = tickloop_client::ssh::split_host_id(id) {
        return format!("tick://{}/{}/state", host.label(), name(&there));
    }
    format!("tick://{}/state", name(id))
}

/// The instance id a state URI names: `tick://NAME/state` → `hosted:NAME`
/// (`tick://hosted:NAME/state` is accepted too).
pub fn instance_of_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("tick://")?;
    let name = rest.strip_suffix("/state")?;
    if let Some((host, name)) = name.split_once('/') {
        if host.is_empty() || name.is_empty() || name.contains('/') {
            return None;
        }
        let id = if name.contains(':') {
            format!("{host}:{name}")
        } else {
            format!("{host}:hosted:{name}")
        };
        return tickloop_client::ssh::split_host_id(&id).map(|_| id);
    }
    if name.is_empty() {
        return None;
    }
    if name.contains(':') {
        Some(name.to_string())
    } else {
        Some(format!("hosted:{name}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= MAX_TOOL_NAME
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    }

    #[test]
    fn plain_names() {
        assert_eq!(
            tool_name("hosted:counter", "increment"),
            "counter__increment"
        );
        assert_eq!(tool_name("hosted:a-b", "get_x"), "a-b__get_x");
    }

    #[test]
    fn lossy_long_or_ambiguous_names_carry_a_hash_of_the_original() {
        for (id, tool) in [
            ("hosted:a.b", "get"),
            ("hosted:a_b", "do it!"),
            ("hosted:ü", "ö"),
            ("hosted:a__b", "c"),
            ("hosted:a_", "b"),
            ("hosted:x", "y_0123456789abcdef"),
        ] {
            let name = tool_name(id, tool);
            assert!(valid(&name), "{name}");
            assert!(looks_hashed(&name), "{id} {tool}: {name}");
            assert!(name.contains("__"), "{name}");
        }
        let long = "x".repeat(64);
        let name = tool_name(&format!("hosted:{long}"), "tool");
        assert!(valid(&name) && looks_hashed(&name), "{name}");
        assert!(name.contains("__tool_"), "the tool's name shows: {name}");
    }

    #[test]
    fn a_name_depends_only_on_its_own_id_and_tool() {
        // `a_b` keeps its plain name whatever else runs; `a.b` is hashed.
        assert_eq!(tool_name("hosted:a_b", "get"), "a_b__get");
        assert_ne!(tool_name("hosted:a.b", "get"), "a_b__get");
        assert_eq!(
            tool_name("hosted:a.b", "get"),
            tool_name("hosted:a.b", "get")
        );
        // The ambiguous splits of `a___b` and `a__b__c` differ.
        assert_ne!(tool_name("hosted:a_", "b"), tool_name("hosted:a", "_b"));
        assert_ne!(tool_name("hosted:a__b", "c"), tool_name("hosted:a", "b__c"));
        // Different originals that sanitize alike differ.
        assert_ne!(tool_name("hosted:a.b", "c"), tool_name("hosted:a,b", "c"));
    }

    #[test]
    fn names_leave_room_for_a_host_prefix() {
        let long = "n".repeat(64);
        for (id, tool) in [
            (format!("hosted:{long}"), "t".repeat(200)),
            ("hosted:c".to_string(), "t".repeat(41)),
        ] {
            let name = tool_name(&id, &tool);
            assert!(name.len() <= MAX_TOOL_NAME, "{name}");
            let prefixed = format!("mcp__tickloop__{name}");
            assert!(prefixed.len() <= 64, "{prefixed}");
        }
    }

    #[test]
    fn another_machine_s_tools_carry_its_host() {
        assert_eq!(
            tool_name("alpha:hosted:ca", "increment"),
            "alpha__ca__increment"
        );
        let odd = tool_name("al@box:2222:hosted:ca", "increment");
        assert!(valid(&odd) && looks_hashed(&odd), "{odd}");
        assert_ne!(
            tool_name("alpha:hosted:ca", "x"),
            tool_name("beta:hosted:ca", "x")
        );
        assert_eq!(state_uri("alpha:hosted:ca"), "tick://alpha/ca/state");
        assert_eq!(
            instance_of_uri("tick://alpha/ca/state").as_deref(),
            Some("alpha:hosted:ca")
        );
        assert_eq!(
            instance_of_uri("tick://alpha/shell:sh/state").as_deref(),
            Some("alpha:shell:sh")
        );
        assert_eq!(instance_of_uri("tick://alpha/a/b/state"), None);
    }

    #[test]
    fn uris() {
        assert_eq!(state_uri("hosted:counter"), "tick://counter/state");
        assert_eq!(
            instance_of_uri("tick://counter/state").as_deref(),
            Some("hosted:counter")
        );
        assert_eq!(
            instance_of_uri("tick://hosted:counter/state").as_deref(),
            Some("hosted:counter")
        );
        assert_eq!(instance_of_uri("tick://counter/other"), None);
        assert_eq!(instance_of_uri("file:///x"), None);
    }
}
