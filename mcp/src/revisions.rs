//! The MCP protocol revisions `tickloop mcp` speaks, 2024-11-05 to
//! 2026-07-28, and the cap `--max-protocol` puts on them. rmcp chooses the
//! revision per connection: `initialize` (the revisions up to 2025-11-25)
//! or `server/discover` and each request's `_meta` (2026-07-28); this module
//! says which were offered and whether a request is on the stateless one.

use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::RoleServer;

/// Every revision this server implements, oldest first.
pub fn all() -> &'static [ProtocolVersion] {
    ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28)
}

/// The revisions offered under the cap `max` (`--max-protocol`), oldest
/// first; all of them without one. A cap that is not a revision this
/// server speaks is refused, saying which are.
pub fn offered(max: Option<&str>) -> Result<&'static [ProtocolVersion], String> {
    let Some(max) = max else {
        return Ok(all());
    };
    if !all().iter().any(|v| v.as_str() == max) {
        let names: Vec<&str> = all().iter().map(ProtocolVersion::as_str).collect();
        return Err(format!(
            "--max-protocol {max:?} is not an MCP revision this server speaks; give one of {}",
            names.join(", ")
        ));
    }
    let count = all().iter().take_while(|v| v.as_str() <= max).count();
    Ok(&all()[..count])
}

/// The newest of `offered` that has an `initialize` handshake (what an
/// `initialize` naming a newer or unknown revision is answered with).
pub fn newest_with_initialize(offered: &[ProtocolVersion]) -> ProtocolVersion {
    offered
        .iter()
        .filter(|v| v.has_initialize())
        .max_by(|a, b| a.as_str().cmp(b.as_str()))
        .cloned()
        .unwrap_or(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Whether `version` is 2026-07-28 or later: no `initialize`, per-request
/// `_meta`, `subscriptions/listen`, cache hints, input-required results.
pub fn is_stateless(version: Option<&ProtocolVersion>) -> bool {
    version.is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
}

/// Whether the request of `context` is on 2026-07-28 or later.
pub fn stateless_request(context: &RequestContext<RoleServer>) -> bool {
    is_stateless(context.protocol_version().as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_offers_the_revisions_up_to_it_and_refuses_others_saying_which() {
        let names = |v: &[ProtocolVersion]| -> Vec<String> {
            v.iter().map(|v| v.as_str().to_string()).collect()
        };
        assert_eq!(
            names(offered(None).expect("no cap")),
            [
                "2024-11-05",
                "2025-03-26",
                "2025-06-18",
                "2025-11-25",
                "2026-07-28"
            ]
        );
        assert_eq!(
            names(offered(Some("2025-06-18")).expect("a revision")),
            ["2024-11-05", "2025-03-26", "2025-06-18"]
        );
        let why = offered(Some("2025-13-01")).expect_err("not a revision");
        assert!(
            why.contains("2025-11-25") && why.contains("2026-07-28"),
            "{why}"
        );
        assert_eq!(
            newest_with_initialize(all()).as_str(),
            ProtocolVersion::V_2025_11_25.as_str()
        );
        assert!(is_stateless(Some(&ProtocolVersion::V_2026_07_28)));
        assert!(!is_stateless(Some(&ProtocolVersion::V_2025_11_25)));
        assert!(!is_stateless(None));
    }
}
