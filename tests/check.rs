//! `tickloop check`: the shipped packages pass every rule; each bad Tick
//! mode fails exactly the rule it breaks, and a failure found by a call
//! names the tool and its arguments; a seed replays the arguments; `--json`
//! lines parse; the check runs in a private runtime and leaves the
//! caller's alone.

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
    "sigterm",
    "eof",
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
        "sigterm",
        "eof",
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
    // The call left in flight at EOF was answered before the exit.
    let eof = findings["eof"]["detail"].as_str().unwrap_or_default();
    assert!(eof.starts_with("answered the call in flight"), "{eof}");
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
fn ignoring_sigterm_and_eof_fails_sigterm_and_eof() {
    // bad.py's ignores_sigterm stays until killed, stdin EOF or not.
    let host = Host::new();
    let bad = tick("bad.py");
    let (code, findings) = check(&host, &["--", "python3", &bad, "ignores_sigterm"]);
    assert_eq!(failed(&findings), vec!["eof", "sigterm"], "{findings:#?}");
    assert_ne!(code, 0);
    let detail = findings["sigterm"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("SIGKILL"), "{detail}");
}

/// `check ARGS -- argful.py MODE`: its exit code and findings.
fn check_argful(host: &Host, mode: &str, extra: &[&str]) -> (i32, BTreeMap<String, Value>) {
    let argful = tick("argful.py");
    let mut args: Vec<&str> = extra.to_vec();
    args.extend_from_slice(&["--", "python3", &argful, mode]);
    check(host, &args)
}

#[test]
fn a_tick_with_arguments_passes_and_each_enum_value_is_called() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "good", &["--allow-mutating"]);
    assert_eq!(failed(&findings), Vec::<&str>::new(), "{findings:#?}");
    assert_eq!(code, 0);
    let calls = findings["calls"]["detail"].as_str().unwrap_or_default();
    assert!(
        calls.contains("bump") && calls.contains("pick") && calls.contains("count"),
        "{calls}"
    );
    let bad_args = findings["bad_args"]["detail"].as_str().unwrap_or_default();
    assert!(bad_args.contains("refused with -32602"), "{bad_args}");
}

#[test]
fn seq_going_back_only_after_a_call_with_arguments_fails_seq_naming_the_call() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "seq_back_after_args", &["--allow-mutating"]);
    assert_eq!(failed(&findings), vec!["seq"], "{findings:#?}");
    assert_ne!(code, 0);
    let detail = findings["seq"]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("the last call made: bump {\"by\":"),
        "{detail}"
    );
    assert!(detail.contains("--seed "), "{detail}");
}

#[test]
fn a_state_grown_past_the_budget_by_a_call_fails_state_size_naming_the_call() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "big_after_args", &["--allow-mutating"]);
    assert_eq!(failed(&findings), vec!["state_size"], "{findings:#?}");
    assert_ne!(code, 0);
    let detail = findings["state_size"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("after bump {\"by\":"), "{detail}");
}

#[test]
fn a_tool_crashing_on_one_enum_value_fails_calls_naming_the_value_and_replays_by_seed() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "enum_crash", &["--seed", "42"]);
    assert_ne!(code, 0);
    assert!(failed(&findings).contains(&"calls"), "{findings:#?}");
    let detail = findings["calls"]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("pick {") && detail.contains("\"color\":\"blue\""),
        "{detail}"
    );
    assert!(detail.contains("--seed 42"), "{detail}");
    // The same seed, the same arguments.
    let (_, again) = check_argful(&host, "enum_crash", &["--seed", "42"]);
    assert_eq!(again["calls"]["detail"], findings["calls"]["detail"]);
}

#[test]
fn an_internal_error_on_one_enum_value_fails_calls_naming_the_value() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "enum_error", &[]);
    assert_eq!(failed(&findings), vec!["calls"], "{findings:#?}");
    assert_ne!(code, 0);
    let detail = findings["calls"]["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("pick {")
            && detail.contains("\"color\":\"green\"")
            && detail.contains("-32603"),
        "{detail}"
    );
}

#[test]
fn ignoring_sigterm_while_stdin_stays_open_fails_sigterm_even_if_eof_ends_it() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "ignores_sigterm", &[]);
    assert_eq!(failed(&findings), vec!["sigterm"], "{findings:#?}");
    assert_ne!(code, 0);
    assert_eq!(findings["eof"]["result"], "pass", "{findings:#?}");
}

#[test]
fn ignoring_stdin_eof_fails_eof() {
    let host = Host::new();
    let (code, findings) = check_argful(&host, "ignores_eof", &[]);
    assert_eq!(failed(&findings), vec!["eof"], "{findings:#?}");
    assert_ne!(code, 0);
    assert_eq!(findings["sigterm"]["result"], "pass", "{findings:#?}");
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
    assert!(detail.contains("the last call made: break {}"), "{detail}");
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
