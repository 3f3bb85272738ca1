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
    // ... and when its diagnostic cannot be written either.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let refused = ["call", "counter", "incremnt", "--revision", "1"];
    let mut cmd = host.command(&refused);
    cmd.stderr(writer);
    let out = run_prepared(cmd, &refused);
    assert_eq!(out.code, 3, "{out:#?}");
}

/// README's install line names exactly the packages `tickloop packages`
/// lists as shipped (in the executable, with no package folder of the
/// person's), and Python 3 for exactly those that need it.
#[test]
fn the_readme_names_every_shipped_package() {
    let host = Host::new();
    let listed = host.ok(&["packages"]);
    let listed = listed.as_array().expect("a list of packages");
    let names: Vec<&str> = listed.iter().filter_map(|p| p["name"].as_str()).collect();
    let needs_python: Vec<&str> = listed
        .iter()
        .filter(|p| {
            p["prerequisites"]["commands"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c == "python3"))
        })
        .filter_map(|p| p["name"].as_str())
        .collect();
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .expect("README.md");
    let line = readme
        .lines()
        .find(|l| l.starts_with("tickloop packages ") && l.contains("ship inside tickloop"))
        .expect("README's `tickloop packages` install line");
    let said = line
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(" ship inside"))
        .map(|(list, _)| list)
        .unwrap_or_default();
    let said: Vec<&str> = said.split(',').map(str::trim).collect();
    assert_eq!(said, names, "README: {line}");
    let python = readme
        .lines()
        .find(|l| l.contains("and Python 3 for the shipped"))
        .expect("README's Python line");
    let python_said = python
        .split_once("for the shipped ")
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| list)
        .unwrap_or_default();
    let python_said: Vec<&str> = python_said
        .split([',', ' '])
        .filter(|w| !w.is_empty() && *w != "and")
        .collect();
    assert_eq!(python_said, needs_python, "README: {python}");
}

/// The files in the instances' folders under the runtime directory's `i/`,
/// as `FOLDER/FILE`.
fn launcher_files(host: &Host) -> Vec<String> {
    let mut names = Vec::new();
    for folder in std::fs::read_dir(host.runtime().join("i"))
        .expect("i/")
        .flatten()
    {
        let folder_name = folder.file_name().to_string_lossy().into_owned();
        for file in std::fs::read_dir(folder.path())
            .expect("a folder")
            .flatten()
        {
            names.push(format!(
                "{folder_name}/{}",
                file.file_name().to_string_lossy()
            ));
        }
    }
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
        "shell-brief/record.json",
        "shell-brief/screen.json",
        "shell-brief/activity.json",
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
    let stray = host.runtime().join("i/hosted-gone");
    std::fs::create_dir(&stray).expect("a stray folder");
    std::fs::write(stray.join("screen.json"), r#"{"lines":[]}"#).expect("a stray file");
    let checks = launcher_checks(&host);
    assert_eq!(checks.len(), 1, "{checks:#?}");
    assert_eq!(checks[0]["status"], "warning", "{checks:#?}");
    let fix = checks[0]["fix"].as_str().expect("a fix");
    assert!(fix.contains("hosted-gone"), "{fix}");
    assert!(!fix.contains("brief"), "{fix}");
}

#[test]
fn a_program_opened_without_shell_that_is_no_tick_fails_at_once_with_the_hint() {
    let host = Host::new();
    // Initialization may take ten minutes here: an open that fails sooner
    // was told apart by what the program did, not by the time it took.
    host.start_tickhost_with(&[("TICKLOOP_INIT_TIMEOUT_MS", "600000")]);
    for (name, argv, did) in [
        // Not even started: it would read the protocol's lines as commands.
        (
            "bash",
            &["bash"][..],
            "bash with no script reads its commands from stdin",
        ),
        // Started through env, it shows it on its terminal.
        (
            "env",
            &["env", "bash"],
            "ran the protocol's first line as a command",
        ),
        ("cat", &["cat"], "echoed the protocol's first line back"),
    ] {
        let mut args = vec!["open", "--id", name, "--"];
        args.extend_from_slice(argv);
        let out = host.run(&args);
        let error = out.expect_error(1, "open_failed");
        let message = error["message"].as_str().expect("a message");
        assert!(message.contains(did), "{out:#?}");
        assert!(
            message.contains(&format!("`tickloop open --shell -- {}`", argv.join(" "))),
            "{out:#?}"
        );
        assert!(!message.contains("did not finish"), "{out:#?}");
        assert!(host.entry(&format!("hosted:{name}")).is_none());
    }
    // Output on stdout that is not the protocol: the hint, quoted.
    let out = host.run(&[
        "open",
        "--id",
        "talks",
        "--",
        "sh",
        "-c",
        "echo hello there",
    ]);
    let error = out.expect_error(1, "open_failed");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("`tickloop open --shell -- sh -c 'echo hello there'`")),
        "{out:#?}"
    );
    // A program that only exits could be a Tick given wrong arguments: no
    // advice to open it as a terminal program.
    let out = host.run(&["open", "--id", "gone", "--", "sh", "-c", "exit 3"]);
    let error = out.expect_error(1, "open_failed");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| !m.contains("--shell")),
        "{out:#?}"
    );
    // A real Tick is not bothered.
    host.open_counter("counter");
}

/// `tickloop ARGS` run in a real terminal (tmux, 120x40); what it showed.
fn on_terminal(host: &Host, args: &[&str]) -> String {
    let quoted: Vec<String> = args
        .iter()
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let line = format!("{} {}", tickloop_bin(), quoted.join(" "));
    let tmux = Tmux::start(host, 120, 40, &line);
    tmux.wait_text("ATTACH-EXIT")
}

#[test]
fn on_a_terminal_every_command_prints_text_for_a_person() {
    let host = Host::new();
    host.open_counter("counter");
    let described = on_terminal(&host, &["describe", "counter"]);
    let first = described.lines().next().unwrap_or_default();
    assert!(first.contains("revision 1"), "{described}");
    assert!(
        described.contains("increment(amount: integer)"),
        "{described}"
    );
    assert!(!described.contains("input_schema"), "{described}");
    assert!(
        described.contains("tickloop call counter increment '{...}' --revision 1"),
        "{described}"
    );

    let called = on_terminal(
        &host,
        &[
            "call",
            "counter",
            "increment",
            r#"{"amount":2}"#,
            "--revision",
            "1",
        ],
    );
    assert!(called.contains("ATTACH-EXIT 0"), "{called}");
    assert!(!called.contains("\"result\""), "{called}");

    // A failed call: its error once, and the nearest tool.
    let failed = on_terminal(&host, &["call", "counter", "incremnt", "--revision", "1"]);
    assert!(failed.contains("ATTACH-EXIT 3"), "{failed}");
    assert_eq!(failed.matches("no tool named").count(), 1, "{failed}");
    assert!(failed.contains("did you mean increment?"), "{failed}");

    // No --revision: the current one, and where it comes from.
    let unbound = on_terminal(&host, &["call", "counter", "increment"]);
    assert!(unbound.contains("ATTACH-EXIT 2"), "{unbound}");
    assert!(unbound.contains("tickloop describe counter"), "{unbound}");
    assert!(unbound.contains("revision 1 now"), "{unbound}");
    host.wait_value("hosted:counter", 2);

    let typed = on_terminal(&host, &["input", "counter", "+"]);
    assert!(typed.contains("typed 1 byte into counter"), "{typed}");
    let watch = Tmux::start(&host, 120, 10, &format!("{} watch counter", tickloop_bin()));
    let watched = watch.wait_text(r#""value":3}"#);
    assert!(watched.contains("hosted:counter seq 2: {"), "{watched}");
    let closed = on_terminal(&host, &["close", "counter"]);
    assert!(
        closed.contains("hosted:counter ended: closed by the person (cli)"),
        "{closed}"
    );
    watch.wait_text("hosted:counter ended: closed by the person (cli)");
    watch.wait_text("ATTACH-EXIT 0");
    let ended = on_terminal(&host, &["attach", "counter"]);
    assert!(
        ended.contains("hosted:counter has ended (closed by the person (cli))"),
        "{ended}"
    );
    let shut = on_terminal(&host, &["shutdown"]);
    assert!(shut.contains("tickhost ended, after closing"), "{shut}");
    assert!(!shut.contains('{'), "{shut}");
}

#[test]
fn failed_opens_and_ended_instances_say_what_happened_once() {
    let host = Host::new();
    // An open that failed with nothing on its screen: no empty screen line.
    let out = host.run(&["open", "--id", "bad", "--", "sh", "-c", "exit 3"]);
    out.expect_error(1, "open_failed");
    assert!(
        out.stderr.starts_with("tickloop: open failed: "),
        "{out:#?}"
    );
    assert!(!out.stderr.contains("screen"), "{out:#?}");
    // A package opened without the argument it needs: its usage, not --shell.
    let out = host.run(&["open", "--package", "logwatch"]);
    let error = out.expect_error(1, "open_failed");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`tickloop open --package logwatch -- "),
        "{out:#?}"
    );
    assert!(!message.contains("--shell"), "{out:#?}");
    assert!(out.stderr.contains("its screen showed:"), "{out:#?}");
    // The approval policy asked for is repeated.
    let opened = on_terminal(&host, &["open", "--package", "counter", "--approve", "ask"]);
    assert!(
        opened.contains("approve ask: each mutating call waits"),
        "{opened}"
    );
    // The screen of an ended instance says it ended, on stderr.
    host.ok(&[
        "open",
        "--shell",
        "--id",
        "brief",
        "--",
        "sh",
        "-c",
        "echo bye; exit 0",
    ]);
    host.wait_ended("shell:brief");
    let out = host.run(&["screen", "brief"]);
    out.expect(0);
    assert_eq!(out.stdout, "bye\n", "{out:#?}");
    assert!(out.stderr.contains("brief has ended"), "{out:#?}");
}
