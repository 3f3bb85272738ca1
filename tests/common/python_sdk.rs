//! The official Python MCP SDK (`mcp` from PyPI, pinned) for the tests that
//! drive `tickloop mcp` with it, installed by the test itself into a virtual
//! environment cached in the target directory (`CARGO_TARGET_TMPDIR`), built
//! in a temporary directory and renamed into place so parallel runs do not
//! race. When pip cannot fetch it the test FAILS, saying so: it is never
//! skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The SDK release the test runs against.
pub const SDK: &str = "mcp==2.3.0";

/// The cached virtual environment's Python with the SDK, made when missing.
pub fn sdk_python() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let venv = root.join(format!("python-{}", SDK.replace("==", "-")));
    let python = venv.join("bin/python");
    if venv.join(".complete").is_file() {
        return python;
    }
    let building = root.join(format!(
        "python-build-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default()
    ));
    let run = |what: &str, command: &mut Command| {
        let out = command
            .output()
            .unwrap_or_else(|e| panic!("{what}: cannot run {command:?}: {e}"));
        assert!(
            out.status.success(),
            "{what} failed ({}); the Python MCP SDK test needs python3 with venv \
             (Debian: python3-venv) and PyPI reachable.\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(
        "python3 -m venv",
        Command::new("python3").arg("-m").arg("venv").arg(&building),
    );
    run(
        &format!("pip install {SDK}"),
        Command::new(building.join("bin/python")).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            SDK,
        ]),
    );
    std::fs::write(building.join(".complete"), SDK).expect("mark the environment complete");
    // Another test may have finished first: then its environment is used.
    if std::fs::rename(&building, &venv).is_err() {
        let _ = std::fs::remove_dir_all(&building);
        assert!(
            venv.join(".complete").is_file(),
            "cannot move the Python environment into {}",
            venv.display()
        );
    }
    python
}
