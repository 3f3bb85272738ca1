//! The Python module for writing Ticks (`python/tickloop_tick.py`): its
//! own unittest suite, run here so that `cargo test` (and CI) runs it; its
//! version is Tickloop's; the shipped Python packages and the scaffold of
//! `tickloop new` carry the very same module. Without `python3` (3.9 or
//! newer) these are reported ignored, never passed.

mod common;

use common::optional::{self, Case};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn module() -> PathBuf {
    root().join("python/tickloop_tick.py")
}

fn main() {
    optional::run(
        vec![
            Case {
                name: "the_module_unittests_pass",
                body: the_module_unittests_pass,
            },
            Case {
                name: "the_module_and_its_pyproject_carry_tickloops_version",
                body: the_module_and_its_pyproject_carry_tickloops_version,
            },
            Case {
                name: "shipped_python_packages_carry_the_module",
                body: shipped_python_packages_carry_the_module,
            },
        ],
        why_it_cannot_run(),
    )
}

/// Why the suite cannot run here: no `python3`, or one older than 3.9.
fn why_it_cannot_run() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.version_info >= (3, 9))"])
        .output();
    match out {
        Err(e) => Some(format!(
            "the Python module's tests need python3 on PATH: {e}"
        )),
        Ok(out) if String::from_utf8_lossy(&out.stdout).trim() != "True" => {
            Some("the Python module's tests need python3 3.9 or newer".to_string())
        }
        Ok(_) => None,
    }
}

fn the_module_unittests_pass() {
    let out = Command::new("python3")
        .args(["-m", "unittest", "discover", "-v", "-s", "tests"])
        .current_dir(root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run python3 -m unittest");
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the module's unittests failed:\n{report}"
    );
    // Every test ran: none skipped, and the suite is not empty.
    assert!(report.contains("\nOK"), "{report}");
    assert!(!report.contains("skipped"), "{report}");
    let ran = report
        .lines()
        .find_map(|l| {
            l.strip_prefix("Ran ")?
                .split(' ')
                .next()?
                .parse::<u32>()
                .ok()
        })
        .unwrap_or(0);
    assert!(ran >= 10, "only {ran} tests ran:\n{report}");
}

fn the_module_and_its_pyproject_carry_tickloops_version() {
    let version = env!("CARGO_PKG_VERSION");
    let pyproject =
        std::fs::read_to_string(root().join("python/pyproject.toml")).expect("pyproject");
    let table: toml::Table = toml::from_str(&pyproject).expect("pyproject.toml is TOML");
    assert_eq!(table["project"]["version"].as_str(), Some(version));
    assert_eq!(table["project"]["requires-python"].as_str(), Some(">=3.9"));
    let out = Command::new("python3")
        .args(["-c", "import sys; sys.path.insert(0, sys.argv[1]); import tickloop_tick; print(tickloop_tick.__version__)"])
        .arg(root().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        version,
        "{out:#?}"
    );
}

fn shipped_python_packages_carry_the_module() {
    let module = std::fs::read(module()).expect("the module");
    for package in ["counter", "logwatch"] {
        let beside = root()
            .join("packages")
            .join(package)
            .join("tickloop_tick.py");
        let bytes = std::fs::read(&beside).unwrap_or_else(|e| panic!("{}: {e}", beside.display()));
        assert_eq!(bytes, module, "{} is not the module", beside.display());
    }
}
