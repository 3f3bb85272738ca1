//! What this build is: `tickloop --version` (the version, the wire version
//! and the git commit it was built from) and `tickloop version [--json]`,
//! which adds the protocol versions it speaks.

use serde_json::{json, Value};

/// The git commit this executable was built from (build.rs), or `unknown`.
pub const GIT_COMMIT: &str = env!("TICKLOOP_GIT_COMMIT");

/// The version of the Tick protocol that Tickloop hosts.
pub const TICK_PROTOCOL: u32 = 3;

/// The one line `tickloop --version` prints after the program's name.
pub fn line() -> String {
    format!(
        "{} (wire {}, commit {GIT_COMMIT})",
        env!("CARGO_PKG_VERSION"),
        tickloop_proto::wire::wire_version()
    )
}

/// Whether this command line asks for clap's version output (then the
/// wire version, a digest of every message's schema, is worth computing).
pub fn asked() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--version" || a == "-V")
}

/// `tickloop version --json`.
pub fn to_json() -> Value {
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "wire_version": tickloop_proto::wire::wire_version(),
        "commit": GIT_COMMIT,
        "protocols": {
            "tick": [TICK_PROTOCOL],
            "mcp": tickloop_mcp::protocol_versions(),
        },
    })
}

/// `tickloop version` on a terminal.
pub fn text() -> String {
    format!(
        "tickloop {}\nwire version: {}\ncommit: {GIT_COMMIT}\nTick protocol: {TICK_PROTOCOL}\nMCP protocol versions: {}\n",
        env!("CARGO_PKG_VERSION"),
        tickloop_proto::wire::wire_version(),
        tickloop_mcp::protocol_versions().join(", ")
    )
}
