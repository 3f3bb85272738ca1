//! Failed initialization (spec 4.2, 4.3, 5.3; docs/cli.md `open`): a wrong
//! protocol version, each invalid descriptor, a describe that is never
//! answered, and non-protocol output before describe. Each failed `open`
//! exits 1 with `open_failed`, reports the reason and the start of the
//! Tick's screen, is not listed, and leaves no process behind but tickhost.

mod common;

use common::*;

/// Opens `bad.py MODE`, asserts the failure contract, returns the reason
/// (the JSON error's message) and stderr.
fn open_fails(mode: &str) -> (String, String) {
    let host = Host::new();
    let out = host.run(&["open", "--id", "bad", "--", &tick("bad.py"), mode]);
    let err = out.expect_error(1, "open_failed");
    let message = err["message"].as_str().unwrap().to_string();
    let mut lines = out.stderr.lines();
    let first = lines.next().unwrap_or_default();
    assert!(
        first.starts_with("tickloop: open failed: "),
        "stderr must start with `tickloop: open failed: REASON`: {:?}",
        out.stderr
    );
    assert!(
        out.stderr.lines().any(|l| l == "its screen showed:"),
        "stderr must show `its screen showed:` and the lines: {:?}",
        out.stderr
    );
    let screen = err["data"]["screen"]
        .as_str()
        .unwrap_or_else(|| panic!("data.screen missing: {err}"));
    assert!(
        screen.chars().count() <= 256,
        "the screen report is the first 256 characters: {screen:?}"
    );
    assert!(
        screen.contains(&format!("bad tick {mode}")),
        "the screen report shows what the Tick drew before failing: {screen:?}"
    );
    assert!(
        out.stderr.contains(&format!("bad tick {mode}")),
        "stderr shows the screen: {:?}",
        out.stderr
    );
    assert!(host.list().is_empty(), "a failed open is not listed");
    host.wait_nothing_left_but_tickhost();
    (message, out.stderr)
}

/// Asserts the reason mentions one of `words` (case-insensitive).
fn reason_mentions(mode: &str, words: &[&str]) {
    let (message, _) = open_fails(mode);
    let lower = message.to_lowercase();
    assert!(
        words.iter().any(|w| lower.contains(&w.to_lowercase())),
        "{mode}: the reason {message:?} names none of {words:?}"
    );
}

#[test]
fn wrong_protocol_version_fails_with_the_exact_message() {
    let (message, stderr) = open_fails("wrong_version");
    let reason = "unsupported Tick protocol version 2; this host speaks Tick protocol 3";
    assert!(message.contains(reason), "message: {message:?}");
    assert_eq!(
        stderr.lines().next().unwrap(),
        format!("tickloop: open failed: {reason}")
    );
}

#[test]
fn blank_kind_fails_initialization() {
    reason_mentions("blank_kind", &["kind"]);
}

#[test]
fn blank_title_fails_initialization() {
    reason_mentions("blank_title", &["title"]);
}

#[test]
fn empty_revision_fails_initialization() {
    reason_mentions("empty_revision", &["revision"]);
}

#[test]
fn blank_tool_name_fails_initialization() {
    reason_mentions("blank_tool_name", &["name"]);
}

#[test]
fn duplicate_tool_names_fail_initialization() {
    reason_mentions("duplicate_tool_names", &["echo", "duplicate", "unique"]);
}

#[test]
fn input_schema_that_is_not_an_object_fails_initialization() {
    reason_mentions("schema_not_object", &["input_schema", "schema"]);
}

#[test]
fn input_schema_that_is_not_a_valid_json_schema_fails_initialization() {
    reason_mentions("schema_invalid", &["input_schema", "schema"]);
}

#[test]
fn recover_with_an_unknown_tool_fails_initialization() {
    reason_mentions("recover_with_unknown", &["recover_with", "nope"]);
}

#[test]
fn recover_with_a_mutating_tool_fails_initialization() {
    reason_mentions("recover_with_mutating", &["recover_with", "mutat"]);
}

#[test]
fn series_path_without_leading_slash_fails_initialization() {
    reason_mentions("series_no_slash", &["series", "path", "recent"]);
}

#[test]
fn duplicate_series_paths_fail_initialization() {
    reason_mentions("series_duplicate", &["series", "path", "recent"]);
}

#[test]
fn descriptor_over_512_kib_fails_initialization() {
    reason_mentions(
        "descriptor_too_big",
        &["512", "kib", "large", "size", "bytes", "limit"],
    );
}

#[test]
fn describe_never_answered_fails_with_a_timeout() {
    // tickhost passes its initialization limit to the launcher: 300 ms here
    // (TICKLOOP_INIT_TIMEOUT_MS, read by the tickhost the first command
    // starts), so the test does not wait the protocol's 10 s.
    let host = Host::new();
    host.start_tickhost_with(&[("TICKLOOP_INIT_TIMEOUT_MS", "300")]);
    let out = host.run(&[
        "open",
        "--id",
        "bad",
        "--",
        &tick("bad.py"),
        "describe_never_answers",
    ]);
    let err = out.expect_error(1, "open_failed");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("initialization did not finish within 0.3 s"),
        "{message}"
    );
}

#[test]
fn debug_print_before_describe_fails_naming_non_protocol_output_and_its_bytes() {
    let (message, _) = open_fails("debug_print_before_describe");
    assert!(
        message.contains("non-protocol output on stdout"),
        "message: {message:?}"
    );
    assert!(
        message.contains("DEBUG starting up"),
        "message: {message:?}"
    );
}
