//! `tickloop new`: the Python scaffold (on the `tickloop_tick` module,
//! written beside it) passes every `check` rule as made (mutating tools
//! too) and opens by package name; the Rust scaffold is a
//! Cargo project on tickloop-tick (building it is the ignored test below);
//! an existing folder or a bad name is refused and nothing is written.

mod common;

use common::Host;
use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

fn check_passes(host: &Host, args: &[&str]) {
    let mut all = vec!["check", "--json", "--allow-mutating"];
    all.extend_from_slice(args);
    let out = host.run(&all);
    let findings: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(findings.len() >= 10, "{out:#?}");
    let failed: Vec<&Value> = findings.iter().filter(|f| f["result"] == "fail").collect();
    assert!(failed.is_empty(), "{failed:#?}");
    let calls = findings
        .iter()
        .find(|f| f["rule"] == "calls")
        .expect("calls rule");
    assert_eq!(calls["result"], "pass", "{calls}");
    assert_eq!(out.code, 0, "{out:#?}");
}

#[test]
fn python_scaffold_passes_check_as_made_and_opens_as_a_package() {
    let host = Host::new();
    let made = host.ok(&["new", "hello-tick"]);
    assert_eq!(made["lang"], "python");
    let dir = host.scratch().join("hello-tick");
    let program = dir.join("hello-tick.py");
    let mode = std::fs::metadata(&program)
        .expect("program")
        .permissions()
        .mode();
    assert_ne!(mode & 0o111, 0, "not executable");
    assert!(dir.join("SKILL.md").is_file());
    // The program runs on the Python module, written beside it.
    let module =
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("python/tickloop_tick.py"))
            .expect("the module");
    assert_eq!(
        std::fs::read(dir.join("tickloop_tick.py")).expect("tickloop_tick.py beside it"),
        module
    );
    let program_text = std::fs::read_to_string(&program).expect("program");
    assert!(
        program_text.contains("import tickloop_tick"),
        "{program_text}"
    );
    check_passes(&host, &["--", &program.to_string_lossy()]);

    // As a package on TICKLOOP_PACKAGES_PATH: listed, opened, called.
    let out = host
        .command(&["check", "--json", "--package", "hello-tick"])
        .env("TICKLOOP_PACKAGES_PATH", host.scratch())
        .output()
        .expect("check --package");
    assert_eq!(out.status.code(), Some(0), "{out:#?}");
}

#[test]
fn new_refuses_an_existing_folder_and_bad_names_and_writes_nothing() {
    let host = Host::new();
    let dir = host.scratch().join("taken");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("keep.txt"), "mine").expect("file");
    let err = host.run(&["new", "taken"]).expect_error(2, "bad_request");
    assert!(err.to_string().contains("already exists"), "{err}");
    let entries: Vec<_> = std::fs::read_dir(&dir).expect("dir").collect();
    assert_eq!(entries.len(), 1, "new wrote into an existing folder");
    assert_eq!(
        std::fs::read_to_string(dir.join("keep.txt")).unwrap(),
        "mine"
    );

    // The module's own name would be overwritten by the program.
    let out = host.run(&["new", "tickloop_tick"]);
    assert_eq!(out.code, 2, "{out:#?}");
    for name in ["../escape", "has space", "9lives"] {
        let out = host.run(&["new", name, "--lang", "rust"]);
        assert_eq!(out.code, 2, "{name}: {out:#?}");
    }
    let out = host.run(&["new", "x", "--tick-path", "/nowhere"]);
    assert_eq!(out.code, 2, "{out:#?}");
    // Nothing but the folder made above, no staging leftovers.
    let names: Vec<String> = std::fs::read_dir(host.scratch())
        .expect("scratch")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n != "data")
        .collect();
    assert_eq!(names, ["taken"], "{names:?}");
}

#[test]
fn rust_scaffold_is_a_cargo_project_on_tickloop_tick() {
    let host = Host::new();
    let tick = Path::new(env!("CARGO_MANIFEST_DIR")).join("tick");
    let made = host.ok(&[
        "new",
        "rusty",
        "--lang",
        "rust",
        "--tick-path",
        &tick.to_string_lossy(),
    ]);
    assert_eq!(made["lang"], "rust");
    let dir = host.scratch().join("rusty");
    let manifest: toml::Table =
        toml::from_str(&std::fs::read_to_string(dir.join("Cargo.toml")).expect("Cargo.toml"))
            .expect("TOML");
    assert_eq!(manifest["package"]["name"].as_str(), Some("rusty"));
    let dep = &manifest["dependencies"]["tickloop-tick"];
    assert_eq!(dep["path"].as_str(), Some(&*tick.to_string_lossy()));
    assert!(manifest.contains_key("workspace"), "a workspace of its own");
    let main = std::fs::read_to_string(dir.join("src/main.rs")).expect("main.rs");
    assert!(
        main.contains("impl Tick for") && main.contains("Tool::mutating"),
        "{main}"
    );
    assert!(!main.contains("{{"), "unfilled template: {main}");
    let skill = std::fs::read_to_string(dir.join("SKILL.md")).expect("SKILL.md");
    assert!(skill.contains("launch: [rusty]"), "{skill}");

    // Without --tick-path: the checkout this tickloop was built from
    // (else, where it is gone, the crates.io release of this version).
    host.ok(&["new", "rusty2", "--lang", "rust"]);
    let text =
        std::fs::read_to_string(host.scratch().join("rusty2/Cargo.toml")).expect("Cargo.toml");
    let manifest: toml::Table = toml::from_str(&text).expect("TOML");
    assert_eq!(
        manifest["dependencies"]["tickloop-tick"]["path"].as_str(),
        Some(&*tick.to_string_lossy()),
        "{text}"
    );
}

/// Builds the Rust scaffold (ratatui and all, in a target dir of its own:
/// minutes on a small machine) and checks it. `cargo test -- --ignored`.
#[test]
#[ignore = "compiles a whole Cargo project with ratatui; run with --ignored"]
fn rust_scaffold_builds_and_passes_check() {
    let host = Host::new();
    let tick = Path::new(env!("CARGO_MANIFEST_DIR")).join("tick");
    host.ok(&[
        "new",
        "rusty",
        "--lang",
        "rust",
        "--tick-path",
        &tick.to_string_lossy(),
    ]);
    let dir = host.scratch().join("rusty");
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/scaffold");
    let status = std::process::Command::new(env!("CARGO"))
        .args(["build", "--offline", "-q"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(&dir)
        .status()
        .expect("cargo build");
    assert!(status.success(), "the scaffold does not build");
    check_passes(
        &host,
        &["--", &target.join("debug/rusty").to_string_lossy()],
    );
}
