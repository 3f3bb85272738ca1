//! The request table: every kind of client request (its `op` on the wire)
//! with its consent class, what decides whether an agent may make it.
//! This is the one table, read in one place ([`super::admit`]), as
//! OpenSSH's `ForceCommand` and sudoers are: a request kind missing here
//! is refused (fail closed), and a test enumerates every kind of the wire
//! schema so a new one cannot be forgotten.
//!
//! docs/approval.md shows this table for people, with the test that
//! proves each row.

use tickloop_proto::wire::HeldAction;

/// Who may make a request, and whether it waits for the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConsentClass {
    /// Reads: nothing of an instance changes. Anyone.
    Read,
    /// The person's only: an agent is refused (exit 3), whatever the
    /// instance (`decide`: answering a held action). The one agent
    /// request of this class that passes is the MCP bridge relaying the
    /// person's own answer given in the agent host (`by: "mcp-host"`).
    Persons,
    /// The person's on the person's instances, free on an agent's own:
    /// an agent is refused (exit 3) when the request touches an instance
    /// of the person's (`set_approval`; `shutdown`, which ends and forgets
    /// every instance).
    PersonsOnTheirs,
    /// Held for an agent on the person's instance under that instance's
    /// policy for the action (`ask` by default: it waits for the person;
    /// `deny`: refused; `auto`: goes on), free on an agent's own (its
    /// policies are `auto`). A call (`HeldAction::Call`) is held under its
    /// Tick's `approve` policy whoever makes it, when its tool mutates.
    Held(HeldAction),
    /// `close`: held as [`ConsentClass::Held`] `close` while the instance
    /// runs; once it has ended, closing it forgets it, which is
    /// [`ConsentClass::PersonsOnTheirs`] unless the person lets agents
    /// close it (`agent_close auto`).
    CloseOrForget,
    /// `open`: what it opens is the opener's own (an agent's opens follow
    /// `[agents] open`); over an ended instance of the same id it replaces
    /// (forgets) that one, which is as forgetting it by `close`.
    OpenOwn,
    /// Only the asker's own: `withdraw` of its own held request on the
    /// same connection.
    Own,
}

/// Every request kind and its class.
pub const TABLE: &[(&str, ConsentClass)] = &[
    ("list", ConsentClass::Read),
    ("describe", ConsentClass::Read),
    ("read", ConsentClass::Read),
    ("screen", ConsentClass::Read),
    ("watch", ConsentClass::Read),
    ("wait", ConsentClass::Read),
    ("approvals", ConsentClass::Read),
    ("approval_log", ConsentClass::Read),
    ("activity", ConsentClass::Read),
    ("timeline", ConsentClass::Read),
    ("decide", ConsentClass::Persons),
    ("set_approval", ConsentClass::PersonsOnTheirs),
    ("shutdown", ConsentClass::PersonsOnTheirs),
    ("call", ConsentClass::Held(HeldAction::Call)),
    ("input", ConsentClass::Held(HeldAction::Input)),
    ("keys", ConsentClass::Held(HeldAction::Input)),
    ("run", ConsentClass::Held(HeldAction::Input)),
    ("reload", ConsentClass::Held(HeldAction::Reload)),
    ("record", ConsentClass::Held(HeldAction::Record)),
    ("close", ConsentClass::CloseOrForget),
    ("open", ConsentClass::OpenOwn),
    ("withdraw", ConsentClass::Own),
];

/// The class of request kind `op`; `None` for a kind the table does not
/// name (refused: see [`super::admit`]).
pub fn class_of(op: &str) -> Option<ConsentClass> {
    TABLE
        .iter()
        .find(|(name, _)| *name == op)
        .map(|(_, class)| *class)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Every request kind on the wire: the `op` of each variant of
    /// `ClientRequest` in the wire schema (what peers are checked against).
    fn kinds_on_the_wire() -> BTreeSet<String> {
        let schema = tickloop_proto::wire_schema::wire_schema();
        let variants = schema["$defs"]["ClientRequest"]["oneOf"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!variants.is_empty(), "the wire schema has ClientRequest");
        variants
            .iter()
            .map(|v| {
                v["properties"]["op"]["const"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a ClientRequest variant without an op: {v}"))
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn every_request_kind_on_the_wire_has_a_consent_class() {
        let missing: Vec<String> = kinds_on_the_wire()
            .into_iter()
            .filter(|op| class_of(op).is_none())
            .collect();
        assert!(
            missing.is_empty(),
            "request kinds with no consent class in tickhost's request table \
             (tickhost/src/daemon/requests/table.rs): {missing:?}; give each a class \
             (and a row in docs/approval.md)"
        );
    }

    #[test]
    fn the_table_names_only_kinds_on_the_wire_and_each_once() {
        let wire = kinds_on_the_wire();
        let mut seen = BTreeSet::new();
        for (op, _) in TABLE {
            assert!(
                wire.contains(*op),
                "{op} is in the table but not on the wire"
            );
            assert!(seen.insert(*op), "{op} is in the table twice");
        }
    }
}
