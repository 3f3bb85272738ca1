//! Package Skills end to end: every shipped `SKILL.md` parses, `tickloop
//! packages` lists the repo's packages with their prerequisites, every
//! shipped package opens with `open --package` (read, then close), and a
//! package with missing prerequisites says which.

mod common;

use common::{wait_for, Host, Out};
use serde_json::Value;
use std::path::{Path, PathBuf};
use tickloop_packages as packages;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn shipped_package_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(repo().join("packages"))
        .expect("packages/ exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// `tickloop ARGS` with `TICKLOOP_PACKAGES_PATH` set to `packages_path`.
fn run(host: &Host, packages_path: &Path, args: &[&str]) -> Out {
    let out = host
        .command(args)
        .env(packages::PATH_VAR, packages_path)
        .output()
        .unwrap_or_else(|e| panic!("running tickloop {args:?}: {e}"));
    Out {
        args: args.iter().map(|s| s.to_string()).collect(),
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

#[test]
fn every_shipped_skill_md_parses() {
    let root = std::fs::read_to_string(repo().join("SKILL.md")).expect("SKILL.md");
    let tickloop = packages::parse_skill(&root, &repo()).expect("the root SKILL.md parses");
    assert_eq!(tickloop.name, "tickloop");
    assert_eq!(tickloop.launch, vec!["tickloop", "mcp"]);
    for phrase in [
        "RESULT",
        "NOT EXECUTED (safe to fix and retry)",
        "EXECUTED WITH ERROR (may have had effects)",
        "UNKNOWN OUTCOME (do not retry blindly; read the state first)",
    ] {
        assert!(tickloop.body.contains(phrase), "SKILL.md lacks {phrase}");
    }

    let dirs = shipped_package_dirs();
    assert!(dirs.len() >= 2, "at least two packages ship: {dirs:?}");
    for dir in dirs {
        let package = packages::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        assert_eq!(
            Some(package.name.as_str()),
            dir.file_name().and_then(|n| n.to_str()),
            "a package's name is its folder's"
        );
        assert!(!package.description.trim().is_empty());
        assert!(
            !package.body.trim().is_empty(),
            "{} has no prose",
            package.name
        );
        let argv = package.argv(&[]);
        // A bare name (board's tickloop-board) is found beside tickloop,
        // which is not where this test runs from.
        let beside = Path::new(common::tickloop_bin())
            .parent()
            .map(|dir| dir.join(&argv[0]));
        let program = match beside {
            Some(path) if !argv[0].contains('/') => path,
            _ => Path::new(&argv[0]).to_path_buf(),
        };
        assert!(
            program.is_file(),
            "{}: launch program {} missing",
            package.name,
            program.display()
        );
    }
}

#[test]
fn packages_lists_the_shipped_packages_with_their_prerequisites() {
    let host = Host::new();
    let out = run(&host, &repo().join("packages"), &["packages"]);
    out.expect(0);
    let list = out.json();
    let names: Vec<&str> = list
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(
        names.contains(&"counter") && names.contains(&"logwatch") && names.contains(&"board"),
        "{names:?}"
    );
    for p in list.as_array().into_iter().flatten() {
        // board is the Rust one: its program is built beside tickloop.
        let command = if p["name"] == "board" {
            "tickloop-board"
        } else {
            "python3"
        };
        assert_eq!(p["prerequisites"]["commands"][0], command, "{p}");
        assert_eq!(p["ready"], true, "{command} is found here: {p}");
        assert!(p["launch"][0]
            .as_str()
            .is_some_and(|l| Path::new(l).is_absolute()));
    }
}

#[test]
fn every_shipped_package_opens_reads_and_closes() {
    let host = Host::new();
    let path = repo().join("packages");
    let log = host.scratch().join("app.log");
    std::fs::write(&log, "starting\n").expect("write the log");
    let log = log.to_string_lossy().into_owned();
    for dir in shipped_package_dirs() {
        let package = packages::load(&dir).expect("loads");
        let name = package.name.as_str();
        let mut args = vec!["open", "--package", name];
        if name == "logwatch" {
            args.extend(["--", log.as_str()]);
        }
        let opened = run(&host, &path, &args);
        opened.expect(0);
        let opened = opened.json();
        // Named after its program: counter.py is hosted:counter, board's
        // tickloop-board is hosted:tickloop-board.
        let program = package.launch[0].rsplit('/').next().unwrap_or_default();
        let stem = program.split_once('.').map_or(program, |(stem, _)| stem);
        let id = format!("hosted:{stem}");
        assert_eq!(opened["id"], id.as_str(), "{opened}");
        assert_eq!(opened["state"], "running");
        let read = host.read(&id);
        assert!(read["data"].is_object(), "{name}: {read}");
        // A real TUI on its terminal.
        wait_for(&format!("{name} to draw its screen"), || {
            let screen = host.screen(&id);
            (screen.lines().count() >= 3).then_some(())
        });
        match name {
            "counter" => {
                host.wait_screen(&id, "Counter");
                let out = host.run(&[
                    "call",
                    &id,
                    "increment",
                    r#"{"amount":4}"#,
                    "--revision",
                    "1",
                ]);
                out.expect(0);
                host.wait_value(&id, 4);
            }
            "logwatch" => {
                host.wait_screen(&id, "logwatch");
                assert_eq!(read["data"]["lines"], 1, "{read}");
                let mut file = std::fs::OpenOptions::new()
                    .append(true)
                    .open(&log)
                    .expect("open the log");
                std::io::Write::write_all(&mut file, b"ERROR: disk full\nwarning: slow\n")
                    .expect("append");
                let state = wait_for("logwatch to count the error", || {
                    let r = host.read(&id);
                    (r["data"]["errors"] == 1).then_some(r)
                });
                assert_eq!(state["data"]["warnings"], 1, "{state}");
                assert_eq!(state["data"]["last_error"]["text"], "ERROR: disk full");
                let out = host.run(&[
                    "call",
                    &id,
                    "lines",
                    r#"{"grep":"disk"}"#,
                    "--revision",
                    "1",
                ]);
                out.expect(0);
                let lines = out.json();
                assert_eq!(lines["result"]["lines"][0]["n"], 2, "{lines}");
                host.wait_screen(&id, "disk full");
            }
            _ => {}
        }
        let closed = host.ok(&["close", &id]);
        assert_eq!(closed["id"], id.as_str());
    }
}

#[test]
fn missing_prerequisites_are_named() {
    let host = Host::new();
    let dir = host.scratch().join("pkgs");
    let pkg = dir.join("needs");
    std::fs::create_dir_all(&pkg).expect("mkdir");
    std::fs::write(
        pkg.join("SKILL.md"),
        "---\nname: needs\ndescription: Needs things.\nlaunch: [\"{dir}/run.sh\"]\n\
         prerequisites:\n  commands: [sh, tickloop-no-such-command]\n  env: [TICKLOOP_TEST_NO_SUCH_TOKEN]\n\
         login: run `needs login`\n---\nProse.\n",
    )
    .expect("write SKILL.md");

    let listed = run(&host, &dir, &["packages"]);
    listed.expect(0);
    let listed = listed.json();
    // Listed with the shipped packages, which come after TICKLOOP_PACKAGES_PATH.
    let entry = listed
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "needs")
        .unwrap_or_else(|| panic!("needs not listed: {listed}"));
    assert_eq!(entry["source"], "path");
    assert_eq!(entry["ready"], false);
    assert_eq!(entry["missing"]["commands"][0], "tickloop-no-such-command");
    assert_eq!(entry["missing"]["env"][0], "TICKLOOP_TEST_NO_SUCH_TOKEN");

    let out = run(&host, &dir, &["open", "--package", "needs"]);
    let error = out.expect_error(1, "open_failed");
    let message = error["message"].as_str().unwrap_or_default().to_string();
    for needed in [
        "tickloop-no-such-command",
        "TICKLOOP_TEST_NO_SUCH_TOKEN",
        "needs login",
    ] {
        assert!(message.contains(needed), "{message}");
        assert!(out.stderr.contains(needed), "{}", out.stderr);
    }
    let list = host.list();
    assert!(list.is_empty(), "nothing was opened: {list:?}");

    let out = run(&host, &dir, &["open", "--package", "nope"]);
    out.expect_error(1, "bad_request");
    let _: Value = out.json();
}
