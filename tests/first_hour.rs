//! A person's first hour (issue 31): what a new user meets at a terminal
//! and in a pipe. Commands whose reader goes away end quietly; `doctor`
//! leaves an ended instance's records alone; a program opened without
//! `--shell` that is no Tick fails at once with the hint; `call` says
//! where the revision comes from and suggests a tool's nearest name; on a
//! terminal (tmux) every command prints text for a person.

mod common;

use common::tmux::Tmux;
use common::*;

/// `tickloop ARGS` with stdout a pipe whose reader is already gone.
fn run_into_a_closed_pipe(host: &Host, args: &[&str]) -> Out {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut cmd = host.command(args);
    cmd.stdout(writer);
    run_prepared(cmd, args)
}

#[test]
fn a_reader_that_goes_away_ends_a_command_quietly() {
    let host = Host::new();
    host.open_counter("counter");
    for args in [
        &["completions", "bash"][..],
        &["completions", "zsh"],
        &["completions", "fish"],
        &["man"],
        &["version"],
        &["doctor"],
        &["packages"],
        &["list"],
        &["describe", "counter"],
        &["screen", "counter"],
        &["activity", "counter"],
    ] {
        let out = run_into_a_closed_pipe(&host, args);
        assert_eq!(out.code, 0, "{out:#?}");
        assert!(!out.stderr.contains("panicked"), "{out:#?}");
        assert!(!out.stderr.contains("Broken pipe"), "{out:#?}");
    }
    // An error keeps its exit code when its JSON cannot be written.
    let out = run_into_a_closed_pipe(&host, &["describe", "nobody"]);
    assert_eq!(out.code, 1, "{out:#?}");
    assert!(out.stderr.contains("nobody"), "{out:#?}");
}

/// The files in the runtime directory's `l/`, by name.
fn launcher_files(host: &Host) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(host.runtime().join("l"))
        .expect("l/")
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    names
}

/// `doctor`'s checks named `launchers`.
fn launcher_checks(host: &Host) -> Vec<serde_json::Value> {
    let doctor = host.run(&["doctor"]).json();
    doctor["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["check"] == "launchers")
        .cloned()
        .collect()
}

#[test]
fn doctor_leaves_an_ended_instance_s_files_alone_and_a_failed_open_leaves_none() {
    let host = Host::new();
    let ended = host.ok(&[
        "open",
        "--shell",
        "--id",
        "brief",
        "--",
        "sh",
        "-c",
        "echo hi; exit 0",
    ]);
    assert_eq!(ended["state"], "ended", "{ended}");
    host.run(&["open", "--id", "bad", "--", "sh", "-c", "exit 3"])
        .expect_error(1, "open_failed");
    let files = launcher_files(&host);
    // The ended instance keeps its record, last screen and activity.
    for kept in [
        "shell-brief.json",
        "shell-brief.screen.json",
        "shell-brief.activity.json",
    ] {
        assert!(files.iter().any(|f| f == kept), "{kept} not in {files:?}");
    }
    // The failed open left nothing.
    assert!(
        !files.iter().any(|f| f.starts_with("hosted-bad")),
        "{files:?}"
    );
    let checks = launcher_checks(&host);
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0]["status"], "ok", "{checks:#?}");

    // A last screen whose instance is no longer recorded is a leftover.
    let stray = host.runtime().join("l/hosted-gone.screen.json");
    std::fs::write(&stray, r#"{"lines":[]}"#).expect("a stray file");
    let checks = launcher_checks(&host);
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0]["status"], "warning", "{checks:#?}");
    let fix = checks[0]["fix"].as_str().expect("a fix");
    assert!(fix.contains("hosted-gone.screen.json"), "{fix}");
    assert!(!fix.contains("brief"), "{fix}");
}

#[test]
fn a_program_opened_without_shell_that_is_no_tick_fails_at_once_with_the_hint() {
    let host = Host::new();
    // Initialization may take ten minutes here: an open that fails sooner
    // was told apart by what the program did, not by the time it took.
    host.start_tickhost_with(&[("TICKLOOP_INIT_TIMEOUT_MS", "600000")]);
    for (program, did) in [
        ("bash", "ran the protocol's first line as a command"),
        ("cat", "echoed the protocol's first line back"),
    ] {
        let out = host.run(&["open", "--id", program, "--", program]);
        let error = out.expect_error(1, "open_failed");
        let message = error["message"].as_str().expect("a message");
        assert!(message.contains(did), "{out:#?}");
        assert!(
            message.contains(&format!("`tickloop open --shell -- {program}`")),
            "{out:#?}"
        );
        assert!(!message.contains("did not finish"), "{out:#?}");
        assert!(host.entry(&format!("hosted:{program}")).is_none());
    }
    // A Tick that exits at once gets the hint too: it never spoke.
    let out = host.run(&["open", "--id", "gone", "--", "sh", "-c", "exit 3"]);
    let error = out.expect_error(1, "open_failed");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("`tickloop open --shell -- sh -c 'exit 3'`")),
        "{out:#?}"
    );
    // A real Tick is not bothered.
    host.open_counter("counter");
}
