//! Python packages from PyPI for the tests, pinned: the official Python MCP
//! SDK (`mcp`) for the tests that drive `tickloop mcp` with it, Playwright
//! for the browser tests of `tickloop web`. Each is installed by the test
//! itself into a virtual environment cached in the target directory
//! (`CARGO_TARGET_TMPDIR`), built in a temporary directory and renamed into
//! place so parallel runs do not race. When pip cannot fetch it the test
//! FAILS, saying so: it is never skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The SDK release the test runs against.
pub const SDK: &str = "mcp==2.3.0";

/// The Playwright release the browser tests drive Chromium with.
pub const PLAYWRIGHT: &str = "playwright==1.65.2";

/// The cached virtual environment's Python with the SDK, made when missing.
pub fn sdk_python() -> PathBuf {
    venv_python(&[SDK])
}

/// The cached virtual environment's Python with `packages` (pip
/// requirement specs, pinned), made when missing.
pub fn venv_python(packages: &[&str]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let venv = root.join(format!("python-{}", packages.join("-").replace("==", "-")));
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
            "{what} failed ({}); this test needs python3 with venv \
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
        &format!("pip install {}", packages.join(" ")),
        Command::new(building.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(packages),
    );
    std::fs::write(building.join(".complete"), packages.join("\n"))
        .expect("mark the environment complete");
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
