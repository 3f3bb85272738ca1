//! A full disk (issue 39): the runtime directory on a 2 MB tmpfs, filled to
//! the brim (a real ENOSPC, no injection). Every command that would write
//! fails with a clear error naming the file and what was not saved; what
//! runs is not harmed; recordings stop with whole lines; every file there
//! parses or is absent; and once there is room again, everything works.
//!
//! Mounting a tmpfs needs root (CAP_SYS_ADMIN): where `mount` is refused the
//! test is reported *ignored*, with the reason, never passed.

mod common;

use common::optional::{self, Case};
use common::tmpfs::{fill, Tmpfs};
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn main() {
    let missing =
        Tmpfs::cannot_mount().map(|why| format!("the full-disk test needs a tmpfs: {why}"));
    optional::run(
        vec![Case {
            name: "a_full_disk_gets_clear_errors_harms_nothing_and_leaves_every_file_whole",
            body: a_full_disk_gets_clear_errors_harms_nothing_and_leaves_every_file_whole,
        }],
        missing,
    )
}

/// Fills the file system of `dir` to the brim; asserts the kernel said
/// ENOSPC.
fn fill_up(dir: &Path) -> PathBuf {
    let (path, stopped) = fill(dir);
    let stopped = stopped.map(|e| e.raw_os_error());
    assert_eq!(
        stopped,
        Some(Some(libc::ENOSPC)),
        "filling {}",
        dir.display()
    );
    path
}

/// Every file under `dir` that Tickloop keeps parses: `.json` as one JSON
/// value, `.jsonl` and `.cast` line by line; no temporary file is left.
fn every_file_parses(dir: &Path) {
    for entry in walk(dir) {
        let name = entry.file_name().map(|n| n.to_string_lossy().into_owned());
        let name = name.unwrap_or_default();
        assert!(
            !name.ends_with(".tmp"),
            "a temporary file was left: {}",
            entry.display()
        );
        let text = || std::fs::read_to_string(&entry).expect("readable");
        if name.ends_with(".json") {
            serde_json::from_str::<Value>(&text())
                .unwrap_or_else(|e| panic!("{} does not parse: {e}", entry.display()));
        } else if name.ends_with(".jsonl") || name.ends_with(".cast") {
            let text = text();
            assert!(
                text.is_empty() || text.ends_with('\n'),
                "{} ends mid-line",
                entry.display()
            );
            for line in text.lines() {
                serde_json::from_str::<Value>(line).unwrap_or_else(|e| {
                    panic!("a line of {} does not parse: {e}: {line}", entry.display())
                });
            }
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a folder").flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => files.extend(walk(&path)),
            Ok(t) if t.is_file() => files.push(path),
            _ => {}
        }
    }
    files
}

/// Exit 1 with an error whose message says the disk is full and names a
/// file under `dir`; the message.
fn full_error(out: &Out, kind: &str, dir: &Path) -> String {
    let error = out.expect_error(1, kind);
    let message = error["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains("no space left on the device of")
            && message.contains(&*dir.to_string_lossy()),
        "{out:#?}"
    );
    message
}

#[allow(clippy::too_many_lines)] // one scripted scenario, read top to bottom
fn a_full_disk_gets_clear_errors_harms_nothing_and_leaves_every_file_whole() {
    let host = Host::new();
    let runtime = host.runtime().to_path_buf();
    let _tmpfs = Tmpfs::mount(&runtime, "2m").expect("the tmpfs");
    // The data directory (where the shipped packages install on first use)
    // on the same small disk.
    let data = runtime.join("data");
    let host = host.with_env(vec![(
        "XDG_DATA_HOME".into(),
        data.to_string_lossy().into_owned(),
    )]);
    host.open_counter("c");
    host.open_sh("gone", "echo gone-says-hi; exec sleep 600", "gone-says-hi");
    let cast = runtime.join("opened.cast");
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "talker",
        "--record",
        &cast.to_string_lossy(),
        "--",
        "sh",
        "-c",
        "i=0; while :; do i=$((i+1)); echo talking-$i; sleep 0.02; done",
    ]);
    host.wait_screen("shell:talker", "talking-");

    let filler = fill_up(&runtime);

    // Closing works, and says what could not be kept.
    let closed = host.run(&["close", "shell:gone"]);
    closed.expect(0);
    let not_saved = closed.json()["ended"]["not_saved"].clone();
    assert!(
        not_saved.as_array().is_some_and(|n| n.iter().any(|s| s
            .as_str()
            .is_some_and(|s| s.contains("the last screen was not saved")))),
        "{closed:#?}"
    );
    assert!(
        closed
            .stderr
            .contains("tickloop: warning: no space left on the device of"),
        "{closed:#?}"
    );
    // What was not kept is said, not lost silently.
    let screen = host.run(&["screen", "shell:gone"]);
    let message = full_error(&screen, "ended", &runtime);
    assert!(message.contains("its last screen is not kept"), "{message}");

    // Opening fails, saying why, and leaves nothing.
    let before: Vec<PathBuf> = walk(&runtime);
    let opened = host.run(&["open", "--id", "d", "--", &tick("counter.py")]);
    full_error(&opened, "open_failed", &runtime);
    let opened = host.run(&["open", "--shell", "--id", "e", "--", "sleep", "600"]);
    full_error(&opened, "open_failed", &runtime);
    let left: Vec<PathBuf> = walk(&runtime)
        .into_iter()
        .filter(|p| !before.contains(p))
        .collect();
    assert!(left.is_empty(), "failed opens left {left:?}");

    // A policy that cannot be recorded is not changed.
    let policy = host.run(&["approve-policy", "c", "ask"]);
    full_error(&policy, "not_saved", &runtime);
    assert_eq!(host.entry("hosted:c").expect("c")["approve"], "auto");

    // A recording that cannot be written stops, and leaves whole lines or
    // nothing.
    let recorded = runtime.join("recorded.cast");
    let out = host.run(&["record", "c", "-o", &recorded.to_string_lossy()]);
    let message = full_error(&out, "not_saved", &runtime);
    assert!(message.contains("the recording stopped"), "{message}");

    // Nothing running was harmed.
    assert_eq!(
        host.ok(&[
            "call",
            "c",
            "increment",
            r#"{"amount":2}"#,
            "--revision",
            "1"
        ]),
        serde_json::json!({"result": {"value": 2}})
    );
    host.ok(&["input", "c", "+"]);
    host.wait_value("c", 3);
    host.wait_screen("c", "value: 3");
    let list = host.list();
    let running: Vec<&str> = list
        .iter()
        .filter(|e| e["state"] == "running")
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(running, ["hosted:c", "shell:talker"], "{list:#?}");
    let talked = host.screen("shell:talker");
    assert!(talked.contains("talking-"), "{talked}");
    host.ok(&["activity", "c"]);
    every_file_parses(&runtime);

    // The shipped packages cannot be installed: said so, naming the file,
    // and nothing half-written is left to run later.
    let packaged = host.run(&["open", "--package", "counter", "--id", "p"]);
    let message = full_error(&packaged, "open_failed", &data);
    assert!(
        message.contains("the shipped packages were not installed"),
        "{message}"
    );
    assert!(
        !data.exists() || walk(&data).is_empty(),
        "a failed install left {:?}",
        walk(&data)
    );

    // Room again: everything works, and is kept.
    std::fs::remove_file(&filler).expect("free the space");
    host.ok(&["open", "--package", "counter", "--id", "p"]);
    host.wait_screen("p", "Counter");
    host.open_counter("d");
    host.ok(&["approve-policy", "c", "ask"]);
    let closed = host.ok(&["close", "hosted:d"]);
    assert!(closed["ended"].get("not_saved").is_none(), "{closed}");
    assert!(host.screen("hosted:d").contains("value: 0"));
    host.ok(&["close", "shell:talker"]);
    every_file_parses(&runtime);
    assert!(
        std::fs::read_to_string(&cast).is_ok_and(|c| c.lines().count() > 1),
        "the recording kept its first lines"
    );
    // Ended before the tmpfs under the runtime directory goes.
    host.ok(&["shutdown"]);
}
