//! The architecture note stays true: ARCHITECTURE.md's table of crates is
//! the workspace `cargo metadata` reports (names and folders), no library
//! crate depends on the daemon crate `tickhost`, and every crate's first
//! lines say what it is for.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The workspace's packages, as `cargo metadata --no-deps` reports them.
fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(ROOT)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

/// A package's folder relative to the workspace root (`src/` for the root
/// package, as the note writes it).
fn folder(package: &Value) -> String {
    let manifest = Path::new(package["manifest_path"].as_str().unwrap_or_default());
    let dir = manifest.parent().unwrap_or(Path::new(""));
    let rel = dir.strip_prefix(ROOT).unwrap_or(dir).to_string_lossy();
    if rel.is_empty() {
        "src/".to_string()
    } else {
        format!("{rel}/")
    }
}

/// The rows of ARCHITECTURE.md's crate table: (crate, folder) from lines
/// of the form "| `crate` | `folder/` ... |".
fn table_rows() -> BTreeSet<(String, String)> {
    let text = std::fs::read_to_string(Path::new(ROOT).join("ARCHITECTURE.md"))
        .expect("ARCHITECTURE.md is readable");
    let section = text
        .split("\n## Crates\n")
        .nth(1)
        .expect("ARCHITECTURE.md has a `## Crates` section")
        .split("\n## ")
        .next()
        .unwrap_or_default();
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            if cells.len() < 4 || !cells[1].starts_with('`') {
                return None;
            }
            let name = cells[1].trim_matches('`').to_string();
            let dir = cells[2].split_whitespace().next()?.trim_matches('`');
            Some((name, dir.to_string()))
        })
        .collect()
}

#[test]
fn the_crate_table_is_the_workspace() {
    let meta = metadata();
    let packages: BTreeSet<(String, String)> = meta["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|p| {
            // The emulator bake-off is a workspace of its own (excluded).
            !folder(p).starts_with("benches/")
        })
        .map(|p| {
            (
                p["name"].as_str().unwrap_or_default().to_string(),
                folder(p),
            )
        })
        .collect();
    let rows = table_rows();
    assert_eq!(
        rows, packages,
        "ARCHITECTURE.md's table of crates (left) differs from `cargo metadata` (right): \
         add, remove or rename its rows"
    );
}

#[test]
fn no_library_depends_on_the_daemon() {
    let meta = metadata();
    for package in meta["packages"].as_array().expect("packages") {
        let name = package["name"].as_str().unwrap_or_default();
        if name == "tickloop" {
            continue; // the binary is the daemon's one user
        }
        let on_daemon = package["dependencies"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|d| d["name"] == "tickhost" && d["kind"].is_null());
        assert!(
            !on_daemon,
            "{name} depends on tickhost: front ends reach the daemon through tickloop-client"
        );
    }
}

#[test]
fn every_crate_says_what_it_is_for() {
    let meta = metadata();
    for package in meta["packages"].as_array().expect("packages") {
        for target in package["targets"].as_array().into_iter().flatten() {
            let kinds: Vec<&str> = target["kind"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if !kinds.iter().any(|k| *k == "lib" || *k == "bin") {
                continue;
            }
            let path = target["src_path"].as_str().unwrap_or_default();
            if path.contains("/benches/") {
                continue;
            }
            let text = std::fs::read_to_string(path).expect("crate root is readable");
            assert!(
                text.trim_start().starts_with("//!"),
                "{path} does not open with //! lines saying what it is for"
            );
        }
    }
}
