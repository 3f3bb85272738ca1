//! MCP tool names for each running Tick's tools, and `tick://` resource URIs.
//!
//! MCP tool names are 1–64 of `A-Z a-z 0-9 _ -`. A Tick's tool becomes
//! `NAME__TOOL` (instance NAME without its `hosted:` prefix), other characters
//! turned into `_`; a name that would be too long, or that collides with
//! another, is cut and given a stable 8-hex-digit suffix derived from the
//! instance id and tool name. Generic tools (`TickCall`, ...) never contain
//! `__`, so they cannot collide with these.

use std::collections::HashSet;

/// Longest MCP tool name.
pub const MAX_TOOL_NAME: usize = 64;

/// The instance NAME of an id (`hosted:counter` → `counter`).
pub fn instance_name(id: &str) -> &str {
    id.split_once(':').map_or(id, |(_, name)| name)
}

fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// FNV-1a, 32 bits: a stable suffix that does not depend on the build.
fn fnv(text: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// Assigns MCP names to `(instance id, tool name)` pairs, unique among them.
#[derive(Default)]
pub struct Namer {
    used: HashSet<String>,
}

impl Namer {
    /// A unique MCP tool name for `tool` of `instance`.
    pub fn name(&mut self, instance: &str, tool: &str) -> String {
        let plain = format!("{}__{}", sanitize(instance_name(instance)), sanitize(tool));
        let name = if plain.len() <= MAX_TOOL_NAME && !self.used.contains(&plain) {
            plain
        } else {
            let mut salt = 0u32;
            loop {
                let suffix = format!("_{:08x}", fnv(&format!("{instance}\u{0}{tool}\u{0}{salt}")));
                let keep = MAX_TOOL_NAME - suffix.len();
                let cut: String = plain.chars().take(keep).collect();
                let candidate = format!("{cut}{suffix}");
                if !self.used.contains(&candidate) {
                    break candidate;
                }
                salt += 1;
            }
        };
        self.used.insert(name.clone());
        name
    }
}

/// The URI of an instance's state resource: `tick://NAME/state`.
pub fn state_uri(id: &str) -> String {
    format!("tick://{}/state", instance_name(id))
}

/// The instance id a state URI names: `tick://NAME/state` → `hosted:NAME`
/// (`tick://hosted:NAME/state` is accepted too).
pub fn instance_of_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("tick://")?;
    let name = rest.strip_suffix("/state")?;
    if name.is_empty() || name.contains('/') {
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
        let mut namer = Namer::default();
        assert_eq!(
            namer.name("hosted:counter", "increment"),
            "counter__increment"
        );
        assert_eq!(namer.name("hosted:my.tick", "do it!"), "my_tick__do_it_");
    }

    #[test]
    fn long_and_colliding_names_stay_valid_and_unique() {
        let mut namer = Namer::default();
        let long = "x".repeat(64);
        let a = namer.name(&format!("hosted:{long}"), "tool");
        let b = namer.name("hosted:a.b", "c");
        let c = namer.name("hosted:a_b", "c");
        let d = namer.name("hosted:ü", "ö");
        for n in [&a, &b, &c, &d] {
            assert!(valid(n), "{n}");
        }
        assert_ne!(b, c);
        assert_eq!(b, "a_b__c");
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
