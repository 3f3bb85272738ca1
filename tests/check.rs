//! `tickloop check`: the shipped counter passes every rule; each bad Tick
//! mode fails exactly the rule it breaks; `--json` lines parse; the check
//! runs in a private runtime and leaves the caller's alone.

mod common;

use common::{tick, Host};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Every rule `check` reports, in order.
const RULES: &[&str] = &[
    "describe",
    "recover_with",
    "read_prompt",
    "state_size",
    "in_flight",
    "unknown_tool",
    "bad_args",
    "stale_revision",
    "calls",
    "seq",
    "no_update_on_resize",
    "session",
    "close",
];

fn counter() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("packages/counter/counter.py")
        .to_string_lossy()
        .into_owned()
}

/// Runs `check --json ARGS`; returns its exit code and rule -> finding.
fn check(host: &Host, args: &[&str]) -> (i32, BTreeMap<String, Value>) {
    let mut all = vec!["check", "--json"];
    all.extend_from_slice(args);
    let out = host.run(&all);
    let mut findings = BTreeMap::new();
    let mut order = Vec::new();
    for line in out.stdout.lines() {
        let finding: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}\n{out:#?}"));
        let rule = finding["rule"].as_str().expect("rule").to_string();
        assert!(
            ["pass", "fail", "not_checked"].contains(&finding["result"].as_str().unwrap_or("")),
            "{finding}"
        );
        assert!(finding["section"].is_string(), "{finding}");
        assert!(finding["detail"].is_string(), "{finding}");
        if finding["result"] == "fail" {
            assert!(
                finding["fix"].as_str().is_some_and(|f| !f.is_empty()),
                "a FAIL without a fix: {finding}"
            );
        }
        order.push(rule.clone());
        findings.insert(rule, finding);
    }
    assert_eq!(order, RULES, "rules reported: {out:#?}");
    // The check's own tickhost was private: nothing in the caller's runtime.
    assert!(
        !host.runtime().join("tickhost.sock").exists(),
        "check touched the caller's runtime directory"
    );
    (out.code, findings)
}

fn failed(findings: &BTreeMap<String, Value>) -> Vec<&str> {
    findings
        .iter()
        .filter(|(_, f)| f["result"] == "fail")
        .map(|(rule, _)| rule.as_str())
        .collect()
}

#[test]
fn counter_package_passes_every_rule() {
    let host = Host::new();
    let (code, findings) = check(&host, &["--", &counter()]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0, "{findings:#?}");
    for rule in [
        "describe",
        "recover_with",
        "read_prompt",
        "state_size",
        "in_flight",
        "unknown_tool",
        "bad_args",
        "stale_revision",
        "calls",
        "seq",
        "session",
        "close",
    ] {
        assert_eq!(findings[rule]["result"], "pass", "{rule}: {findings:#?}");
    }
    // Without --allow-mutating, the mutating tools were not called.
    let calls = findings["calls"]["detail"].as_str().unwrap_or_default();
    assert!(calls.contains("not called"), "{calls}");
    assert!(calls.contains("increment"), "{calls}");
}

#[test]
fn counter_with_allow_mutating_calls_its_mutating_tools() {
    let host = Host::new();
    let (code, findings) = check(&host, &["--allow-mutating", "--", &counter()]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);
    let calls = findings["calls"]["detail"].as_str().unwrap_or_default();
    assert!(calls.starts_with("answered:"), "{calls}");
    assert!(
        calls.contains("increment") && calls.contains("reset"),
        "{calls}"
    );
    assert!(!calls.contains("not called"), "{calls}");
}

/// `check` on `bad.py MODE` fails exactly `rule` and exits non-zero.
fn fails_only(mode: &str, extra: &[&str], rule: &str) -> BTreeMap<String, Value> {
    let host = Host::new();
    let bad = tick("bad.py");
    let mut args: Vec<&str> = extra.to_vec();
    args.extend_from_slice(&["--", "python3", &bad, mode]);
    let (code, findings) = check(&host, &args);
    assert_eq!(failed(&findings), vec![rule], "{mode}: {findings:#?}");
    assert_ne!(code, 0, "{mode}: exit 0 with a FAIL");
    findings
}

#[test]
fn wrong_protocol_version_fails_describe() {
    let findings = fails_only("wrong_version", &[], "describe");
    let detail = findings["describe"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("protocol version 2"), "{detail}");
    // Nothing else could be checked.
    for rule in &RULES[1..] {
        assert_eq!(findings[*rule]["result"], "not_checked", "{rule}");
    }
}

#[test]
fn stdout_debug_print_fails_describe() {
    let findings = fails_only("debug_print_before_describe", &[], "describe");
    let detail = findings["describe"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("DEBUG starting up"), "{detail}");
}

#[test]
fn mutating_recover_with_fails_describe() {
    let findings = fails_only("recover_with_mutating", &[], "describe");
    let detail = findings["describe"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("recover_with"), "{detail}");
}

#[test]
fn ignoring_sigterm_fails_close() {
    let findings = fails_only("ignores_sigterm", &[], "close");
    let detail = findings["close"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("SIGKILL"), "{detail}");
}

#[test]
fn invalid_json_line_fails_session_only_with_allow_mutating() {
    // Without --allow-mutating the mutating `break` is never called: no FAIL.
    let host = Host::new();
    let bad = tick("bad.py");
    let (code, findings) = check(&host, &["--", "python3", &bad, "invalid_json_line"]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);

    let findings = fails_only("invalid_json_line", &["--allow-mutating"], "session");
    let detail = findings["session"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("this is not json {"), "{detail}");
    assert_eq!(findings["close"]["result"], "not_checked");
}

#[test]
fn update_seq_going_down_fails_seq() {
    let findings = fails_only("update_seq_not_increasing", &["--allow-mutating"], "seq");
    let detail = findings["seq"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("\"seq\":3"), "{detail}");
}

#[test]
fn update_on_resize_fails_no_update_on_resize() {
    let findings = fails_only("update_on_resize", &[], "no_update_on_resize");
    let detail = findings["no_update_on_resize"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("resizing the PTY"), "{detail}");
}

#[test]
fn shipped_packages_pass_every_rule_by_package_name() {
    let host = Host::new();
    let (code, findings) = check(&host, &["--package", "counter"]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);

    let log = host.scratch().join("app.log");
    std::fs::write(&log, "started\nERROR one\n").expect("write the log");
    let log = log.to_string_lossy().into_owned();
    let (code, findings) = check(&host, &["--package", "logwatch", "--", &log]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);
    assert_eq!(findings["describe"]["result"], "pass");

    // The Rust package (tickloop-board, beside tickloop), with its mutating
    // tools allowed, on a board file of the test's own.
    let board = host.scratch().join("board.json");
    let board = board.to_string_lossy().into_owned();
    let (code, findings) = check(
        &host,
        &["--allow-mutating", "--package", "board", "--", &board],
    );
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);
}

#[test]
fn the_tick_crate_example_passes_every_rule() {
    // Built by `cargo test` beside the test binaries' deps: target/debug/examples/note.
    let exe = Path::new(common::tickloop_bin())
        .parent()
        .expect("target dir")
        .join("examples/note");
    if !exe.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "tickloop-tick", "--example", "note"])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("cargo build --example note");
        assert!(status.success(), "building the note example failed");
    }
    let host = Host::new();
    let exe = exe.to_string_lossy().into_owned();
    let (code, findings) = check(&host, &["--allow-mutating", "--", &exe]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);
    let calls = findings["calls"]["detail"].as_str().unwrap_or_default();
    assert!(calls.contains("note"), "{calls}");
}
