//! `tickloop mcp` driven by a second real client: the official Python MCP
//! SDK (`mcp` from PyPI, pinned), through `tests/mcp_python/client.py`. The
//! SDK rejected the whole `tools/list` when one Tick declared a
//! `{"type":"string"}` schema (issue 14), so the script lists tools with
//! such a Tick and one with a top-level `oneOf` running, calls tools, and
//! follows a state resource across close, forget and reopen.
//!
//! The SDK is installed by the test itself into a virtual environment cached
//! in the target directory (`CARGO_TARGET_TMPDIR`), built in a temporary
//! directory and renamed into place so parallel runs do not race. When pip
//! cannot fetch it the test FAILS, saying so: it is never skipped.

mod common;

use common::python_sdk::sdk_python;
use common::{tick, tickloop_bin, Host, MARK_VAR};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn the_python_sdk_lists_calls_and_follows_a_resource_with_strict_schemas() {
    let python = sdk_python();
    let host = Host::new();
    host.open("schemas", &tick("schemas.py"), &[]);
    // The person opens the counter and lets agents close it (the client
    // closes it below; by default an agent's close would wait for the
    // person: tests/consent.rs).
    host.ok(&[
        "open",
        "--id",
        "counter",
        "--agent-close",
        "auto",
        "--",
        &tick("counter.py"),
    ]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_python/client.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(tickloop_bin())
        .arg(tick("counter.py"))
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch())
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP SDK client failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    let findings: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no findings line:\n{stdout}\n{stderr}"));
    assert!(
        findings["protocol"].as_str().is_some_and(|p| !p.is_empty()),
        "{findings}"
    );
    assert!(
        findings["unknown_tool_error"]
            .as_str()
            .is_some_and(|e| e.contains("Unknown tool")),
        "{findings}"
    );
}
