//! Ticks on other machines (issue 17), against a real OpenSSH server on
//! 127.0.0.1 ([`common::sshd`]): every row of the CLI contract with
//! `--host`, the messages for a bad host, a missing remote binary and
//! another build, and the outcome rules when the ssh process is killed in
//! the middle of a call, a watch or an attach.

mod common;
mod loop_support;

use common::sshd::{children_matching, Sshd, REMOTE};
use common::tmux::Tmux;
use common::{tick, tickloop_bin, wait_for, Host};
use serde_json::Value;

/// The ssh process a running `tickloop --host` (pid `pid`) started.
fn ssh_of(pid: i32) -> i32 {
    wait_for("the command's ssh process", || {
        children_matching(pid, "__relay").first().copied()
    })
}

fn sigkill(pid: i32) {
    // SAFETY: kill(2) of an ssh process this test started.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Every process whose command line holds `needle`.
fn processes_matching(needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.starts_with("ssh ") && cmdline.contains(needle) {
            found.push(pid);
        }
    }
    found
}

#[test]
fn every_request_reply_command_works_over_ssh() {
    let sshd = Sshd::start();
    let local = sshd.local();

    let opened = local.open_counter("c");
    assert_eq!(opened["id"], "hosted:c", "{opened}");
    // It runs there, not here: the far side's own tickhost lists it, and
    // no tickhost was started on this side.
    assert!(
        sshd.remote.entry("hosted:c").is_some(),
        "the remote tickhost does not know hosted:c"
    );
    assert!(
        local.tickhost_pid().is_none(),
        "a local tickhost was started"
    );

    let entry = local.entry("hosted:c").expect("listed over ssh");
    assert_eq!(entry["state"], "running");
    assert_eq!(entry["pid"], opened["pid"]);
    // A remote open runs in that user's home with the environment there.
    assert_eq!(
        entry["cwd"].as_str(),
        std::env::var("HOME").ok().as_deref(),
        "{entry}"
    );

    let descriptor = local.ok(&["describe", "hosted:c"]);
    assert_eq!(descriptor["kind"], "example.counter");
    assert_eq!(local.read("c")["data"]["value"], 0);

    let out = local.run(&[
        "call",
        "c",
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(out.expect(0).json()["result"]["value"], 2);
    let stale = local.run(&[
        "call",
        "c",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "0",
    ]);
    assert_eq!(stale.expect(3).json()["executed"], false);
    let failed = local.run(&["call", "c", "fail", "{}", "--revision", "1"]);
    assert_eq!(failed.expect(4).json()["executed"], true);
    local
        .run(&["call", "nope", "increment", "{}", "--revision", "1"])
        .expect_error(1, "no_such_instance");
    local
        .run(&["call", "c", "increment", "{not json", "--revision", "1"])
        .expect(2);
    assert_eq!(
        local.logged_calls("c", "increment"),
        1,
        "the stale call was sent"
    );

    assert!(local.wait_screen("c", "Counter").contains("value: 2"));
    local.ok(&["input", "c", "+"]);
    local.wait_value("c", 3);

    let mut watch = local.watch(&["c", "--interval", "100"]);
    local.ok(&["input", "c", "+"]);
    let delivery = wait_for("a delivery with value 4", || {
        let d = watch.next();
        (d["data"]["value"] == 4).then_some(d)
    });
    assert_eq!(delivery["instance"], "hosted:c");

    let packages = local.ok(&["packages"]);
    assert!(packages.as_array().is_some(), "{packages}");

    local.ok(&["close", "c"]);
    local.wait_ended("hosted:c");
    // The watch ends with its instance, as locally.
    wait_for("the watch's ended line", || {
        let line = watch.next();
        line.get("ended")
            .is_some_and(|e| !e.is_null())
            .then_some(())
    });
    watch.expect_end();
    assert_eq!(watch.exit_code(), 0);

    let shut = local.ok(&["shutdown"]);
    assert_eq!(shut["shutdown"], true, "{shut}");
    wait_for("the remote tickhost to end", || {
        sshd.remote
            .tickhost_pid()
            .is_none_or(|pid| !common::alive(pid))
            .then_some(())
    });
    // Shutting down what does not run starts nothing there.
    let again = local.ok(&["shutdown"]);
    assert_eq!(again["was_running"], false, "{again}");
    assert!(
        sshd.remote
            .tickhost_pid()
            .is_none_or(|pid| !common::alive(pid)),
        "shutdown started a tickhost"
    );
}

#[test]
fn a_bad_host_is_a_usage_error_and_some_commands_stay_local() {
    let sshd = Sshd::start();
    let local = sshd.local();
    for bad in [
        "-oProxyCommand=touch /tmp/x",
        "a b",
        "box:0",
        "@box",
        "box:99999",
    ] {
        let out = local.run(&["list", &format!("--host={bad}")]);
        let err = out.expect_error(2, "bad_request");
        assert!(
            err["message"]
                .as_str()
                .is_some_and(|m| m.contains("[ssh://][USER@]HOST[:PORT]")),
            "{out:#?}"
        );
    }
    let out = local.run(&["list", "--host", "remote", "--host", "other"]);
    out.expect_error(2, "bad_request");
    let out = local.run(&["doctor", "--host", "remote"]);
    let err = out.expect_error(2, "bad_request");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("doctor")),
        "{out:#?}"
    );
    // TICKLOOP_HOST alone leaves the commands that stay here alone.
    let version = local.ok(&["version"]);
    assert!(version["wire_version"].is_string(), "{version}");
    // Nothing reached the far side.
    assert!(sshd.remote.tickhost_pid().is_none());
    // --host "" (over TICKLOOP_HOST) is this machine.
    assert_eq!(local.ok(&["list", "--host", ""]), Value::Array(vec![]));
    assert!(local.tickhost_pid().is_some());
}

#[test]
fn a_missing_remote_binary_says_how_to_install_it() {
    let sshd = Sshd::start();
    let local = Host::new().with_env(vec![
        ("TICKLOOP_SSH".into(), sshd.ssh_command()),
        ("TICKLOOP_HOST".into(), REMOTE.into()),
        (
            "TICKLOOP_REMOTE_TICKLOOP".into(),
            "tickloop-not-installed-17".into(),
        ),
    ]);
    let out = local.run(&["list"]);
    let err = out.expect_error(1, "remote_not_installed");
    let message = err["message"].as_str().unwrap_or_default();
    assert!(message.contains("not installed on remote"), "{out:#?}");
    assert!(message.contains("install this build there"), "{out:#?}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "{out:#?}");
}

#[test]
fn an_unreachable_host_names_what_ssh_said() {
    let sshd = Sshd::start();
    let local = sshd.local();
    // A port nobody listens on (sshd's own, once it is gone).
    let port = sshd.port;
    drop(sshd);
    let out = local.run(&["list", "--host", &format!("127.0.0.1:{port}")]);
    let err = out.expect_error(1, "unreachable");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("ssh to 127.0.0.1")),
        "{out:#?}"
    );
}

/// A stand-in for the `tickloop` of another build on the far side: it
/// answers `__relay` with that build's greeting (the real check under test
/// is this build's comparison and message).
fn other_build(dir: &std::path::Path, body: &str) -> String {
    let path = dir.join("tickloop-other-build");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the stand-in");
    let mut perms = std::fs::metadata(&path).expect("stat").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    path.display().to_string()
}

#[test]
fn another_build_on_the_far_side_is_refused_in_one_line() {
    let sshd = Sshd::start();
    let scratch = tempfile::tempdir().expect("scratch");
    let older = other_build(
        scratch.path(),
        r#"echo '{"tickloop_relay":{"wire":"tickloop-0.0.9+0123456789ab","build":"0.0.9 (wire tickloop-0.0.9+0123456789ab, commit 0000000)"}}'"#,
    );
    let local = Host::new().with_env(vec![
        ("TICKLOOP_SSH".into(), sshd.ssh_command()),
        ("TICKLOOP_HOST".into(), REMOTE.into()),
        ("TICKLOOP_REMOTE_TICKLOOP".into(), older),
    ]);
    let out = local.run(&["list"]);
    let err = out.expect_error(1, "version_mismatch");
    let message = err["message"].as_str().unwrap_or_default();
    let ours = local.ok(&["version", "--host", ""])["wire_version"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(message.contains("tickloop-0.0.9+0123456789ab"), "{out:#?}");
    assert!(
        message.contains(&ours),
        "our version is not named: {out:#?}"
    );
    assert!(message.contains("install the same build"), "{out:#?}");
    assert_eq!(out.stderr.trim().lines().count(), 1, "{out:#?}");

    // A build from before the relay answers `__relay` with clap's error.
    let no_relay = other_build(
        scratch.path(),
        r#"echo "error: unrecognized subcommand '__relay'" >&2; exit 2"#,
    );
    let local = local.with_env(vec![
        ("TICKLOOP_SSH".into(), sshd.ssh_command()),
        ("TICKLOOP_HOST".into(), REMOTE.into()),
        ("TICKLOOP_REMOTE_TICKLOOP".into(), no_relay),
    ]);
    let out = local.run(&["read", "c"]);
    let err = out.expect_error(1, "remote_not_installed");
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("has no relay") && m.contains("unrecognized subcommand")),
        "{out:#?}"
    );
}

#[test]
fn killing_ssh_mid_call_is_an_unknown_outcome_never_resent() {
    let sshd = Sshd::start();
    let local = sshd.local();
    let opened = local.open_counter("c");
    let call = local.spawn(&["call", "c", "sleep", r#"{"ms":3000}"#, "--revision", "1"]);
    wait_for("the call to reach the Tick", || {
        (local.logged_calls("c", "sleep") == 1).then_some(())
    });
    sigkill(ssh_of(call.pid()));
    let out = call.finish();
    out.expect(5);
    assert!(
        out.json()["unknown"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("ssh connection to remote was lost")),
        "{out:#?}"
    );
    // The far side finishes the call on its own; the Tick saw it once, and
    // reconnecting finds the instance as it was.
    let after = wait_for("the instance to be idle again", || {
        let e = local.entry("hosted:c")?;
        (e["calls_in_flight"] == 0).then_some(e)
    });
    assert_eq!(after["state"], "running");
    assert_eq!(after["pid"], opened["pid"]);
    assert_eq!(local.logged_calls("c", "sleep"), 1, "the call was resent");
    assert_eq!(local.logged_call_count("c"), 1);
    assert_eq!(local.read("c")["data"]["value"], 0);
}

#[test]
fn killing_ssh_mid_watch_says_the_connection_was_lost() {
    let sshd = Sshd::start();
    let local = sshd.local();
    local.open_counter("c");
    let mut watch = local.watch(&["c", "--interval", "100"]);
    local.ok(&["input", "c", "+"]);
    wait_for("a delivery", || {
        (watch.next()["data"]["value"] == 1).then_some(())
    });
    let pid = i32::try_from(watch.pid()).expect("a pid");
    sigkill(ssh_of(pid));
    let said = wait_for("the watch's error line", || {
        let line = watch.next();
        line.get("error").cloned()
    });
    assert_eq!(said["kind"], "connection_lost", "{said}");
    watch.expect_end();
    assert_eq!(watch.exit_code(), 6, "exit 6 is `connection_lost`");
    // Untouched there, and found again.
    local.ok(&["input", "c", "+"]);
    local.wait_value("c", 2);
    assert_eq!(local.entry("hosted:c").expect("listed")["state"], "running");
}

#[test]
fn a_remote_instance_survives_the_local_tickhost_being_killed() {
    let sshd = Sshd::start();
    let local = sshd.local();
    let remote = local.open_counter("far");
    // This machine's own tickhost, with a Tick of its own.
    local.ok(&[
        "--host",
        "",
        "open",
        "--id",
        "near",
        "--",
        &tick("counter.py"),
    ]);
    let pid = local.tickhost_pid().expect("a local tickhost");
    sigkill(pid);
    wait_for("the local tickhost to die", || {
        (!common::alive(pid)).then_some(())
    });
    let entry = local.entry("hosted:far").expect("still listed over ssh");
    assert_eq!(entry["state"], "running");
    assert_eq!(entry["pid"], remote["pid"]);
    local.ok(&["input", "far", "+"]);
    local.wait_value("far", 1);
}

/// `tickloop attach ID` over ssh in a tmux window.
fn attach_line(sshd: &Sshd, id: &str) -> String {
    let env: Vec<String> = sshd
        .client_env()
        .into_iter()
        .map(|(k, v)| format!("{k}='{v}'"))
        .collect();
    format!("env {} {} attach {id}", env.join(" "), tickloop_bin())
}

#[test]
fn attach_over_ssh_resizes_types_detaches_and_says_a_lost_connection() {
    let sshd = Sshd::start();
    let local = sshd.local();
    local.open_counter("c");

    let tmux = Tmux::start(&local, 100, 30, &attach_line(&sshd, "c"));
    tmux.wait_text("size 100x30");
    wait_for("the view to be counted there", || {
        (local.entry("hosted:c")?["views"] == 1).then_some(())
    });
    tmux.type_text("+");
    local.wait_value("c", 1);
    tmux.wait_text("value: 1");
    tmux.resize(90, 25);
    tmux.wait_text("size 90x25");
    // The detach key, as locally.
    tmux.send_keys(&["C-\\"]);
    tmux.send_keys(&["d"]);
    tmux.wait_text("detached from hosted:c");
    tmux.wait_text("ATTACH-EXIT 0");
    wait_for("the view to be gone there", || {
        (local.entry("hosted:c")?["views"] == 0).then_some(())
    });

    // Again, and the ssh connection dies under it.
    let tmux = Tmux::start(&local, 80, 24, &attach_line(&sshd, "c"));
    tmux.wait_text("size 80x24");
    let ssh = wait_for("the view's ssh", || {
        processes_matching("--to view:hosted:c").first().copied()
    });
    sigkill(ssh);
    tmux.wait_text("ATTACH-EXIT 6");
    assert!(tmux.capture().contains("connection to remote was lost"));
    // The Tick is untouched: it still runs and takes keys.
    local.ok(&["input", "c", "+"]);
    local.wait_value("c", 2);
    let out = local.run(&["attach", "nope"]);
    out.expect_error(1, "no_such_instance");
}

/// `tickloop monitor` over ssh in a tmux window.
fn monitor_line(sshd: &Sshd) -> String {
    let env: Vec<String> = sshd
        .client_env()
        .into_iter()
        .map(|(k, v)| format!("{k}='{v}'"))
        .collect();
    format!(
        "trap '' QUIT INT; env {} {} monitor",
        env.join(" "),
        tickloop_bin()
    )
}

#[test]
fn the_monitor_over_ssh_lists_and_opens_overlays_on_the_other_machine() {
    let sshd = Sshd::start();
    let local = sshd.local();
    local.open_counter("counter");
    local.wait_screen("hosted:counter", "size 120x30");
    let tmux = Tmux::start(&local, 100, 30, &monitor_line(&sshd));
    tmux.wait_text("hosted:counter");
    tmux.wait_text("1 running");
    // The overlay reaches the launcher there: its size, keys and detach.
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("hosted:counter · ctrl+\\ d closes");
    tmux.wait_text("size 94x26");
    local.wait_screen("hosted:counter", "size 94x26");
    tmux.type_text("++");
    local.wait_value("counter", 2);
    tmux.wait_text("value: 2");
    tmux.resize(80, 24);
    tmux.wait_text("size 74x20");
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("detached from hosted:counter");
    wait_for("the overlay's view to be gone there", || {
        (local.entry("hosted:counter")?["views"] == 0).then_some(())
    });
    // `a` attaches full screen over ssh too, and comes back.
    tmux.send_keys(&["a"]);
    tmux.wait_text("size 80x24");
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("back from hosted:counter");
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");
    assert!(
        local.tickhost_pid().is_none(),
        "a local tickhost was started"
    );
}

#[test]
fn one_monitor_shows_several_machines_with_host_prefixed_ids() {
    let alpha = Sshd::start_as("alpha");
    let beta = Sshd::start_as("beta");
    // One client config naming both machines.
    let dir = tempfile::tempdir().expect("a config dir");
    let ssh = Sshd::joint_ssh_command(&[&alpha, &beta], dir.path());
    let local = Host::new().with_env(vec![
        ("TICKLOOP_SSH".into(), ssh.clone()),
        ("TICKLOOP_REMOTE_TICKLOOP".into(), tickloop_bin().into()),
    ]);
    local.ok(&[
        "--host",
        "alpha",
        "open",
        "--id",
        "ca",
        "--",
        &tick("counter.py"),
    ]);
    local.ok(&[
        "--host",
        "beta",
        "open",
        "--id",
        "cb",
        "--",
        &tick("counter.py"),
    ]);
    local.ok(&["open", "--id", "near", "--", &tick("counter.py")]);
    assert!(alpha.remote.entry("hosted:ca").is_some());
    assert!(beta.remote.entry("hosted:cb").is_some());

    let line = format!(
        "trap '' QUIT INT; env TICKLOOP_SSH='{ssh}' TICKLOOP_REMOTE_TICKLOOP='{bin}' {bin} monitor --host alpha --host beta --host ''",
        bin = tickloop_bin()
    );
    let tmux = Tmux::start(&local, 110, 30, &line);
    let screen = wait_for("the three machines' instances", || {
        let s = tmux.capture();
        (s.contains("alpha:hosted:ca") && s.contains("beta:hosted:cb") && s.contains("hosted:near"))
            .then_some(s)
    });
    assert!(screen.contains("3 running"), "{screen}");
    // alpha's, beta's, then this machine's: g j Enter is beta's.
    tmux.send_keys(&["g", "j", "Enter"]);
    tmux.wait_text("beta:hosted:cb · ctrl+\\ d closes");
    tmux.type_text("+");
    wait_for("beta's counter to take the key", || {
        (beta.remote.read("cb")["data"]["value"] == 1).then_some(())
    });
    assert_eq!(alpha.remote.read("ca")["data"]["value"], 0);
    assert_eq!(local.read("near")["data"]["value"], 0);
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("detached from beta:hosted:cb");
    // This machine's instance opens here.
    tmux.send_keys(&["g", "j", "j", "Enter"]);
    tmux.wait_text("hosted:near · ctrl+\\ d closes");
    tmux.type_text("++");
    local.wait_value("near", 2);
    tmux.send_keys(&["C-\\", "d"]);
    tmux.send_keys(&["q"]);
    tmux.wait_text("ATTACH-EXIT 0");

    // The Monitor's ids work in every command: the host comes with them.
    assert_eq!(local.ok(&["read", "beta:hosted:cb"])["data"]["value"], 1);
    let out = local.run(&[
        "call",
        "alpha:hosted:ca",
        "increment",
        r#"{"amount":4}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(out.expect(0).json()["result"]["value"], 4);
    assert_eq!(alpha.remote.read("ca")["data"]["value"], 4);
    // One command, one machine; and an id that disagrees with --host.
    local
        .run(&["watch", "alpha:hosted:ca", "beta:hosted:cb"])
        .expect_error(2, "bad_request");
    local
        .run(&["watch", "alpha:hosted:ca", "hosted:near"])
        .expect_error(2, "bad_request");
    local
        .run(&["--host", "beta", "read", "alpha:hosted:ca"])
        .expect_error(2, "bad_request");
}

#[test]
fn a_login_script_that_prints_first_does_not_break_the_relay() {
    let sshd = Sshd::start();
    let scratch = tempfile::tempdir().expect("scratch");
    // What a chatty ~/.bashrc does before the command runs.
    let chatty = other_build(
        scratch.path(),
        &format!(
            "echo 'Welcome to remote!'; echo '{{\"motd\": 1}}'; exec {} \"$@\"",
            tickloop_bin()
        ),
    );
    let local = Host::new().with_env(vec![
        ("TICKLOOP_SSH".into(), sshd.ssh_command()),
        ("TICKLOOP_HOST".into(), REMOTE.into()),
        ("TICKLOOP_REMOTE_TICKLOOP".into(), chatty),
    ]);
    local.open_counter("c");
    assert_eq!(local.read("c")["data"]["value"], 0);
    assert!(sshd.remote.entry("hosted:c").is_some());
}

#[test]
fn the_loop_subscribes_to_ticks_on_the_other_machine() {
    let sshd = Sshd::start();
    let local = sshd.local();
    local.open_counter("counter");
    let mut h = loop_support::LoopHarness::start_from(
        "ssh-subscription",
        local.command(&[]),
        &["--delay-ms", "20", "--interval-ms", "100"],
    );
    h.send(serde_json::json!({"type": "subscribe", "instances": ["hosted:counter"]}));
    let (ok, text) = h.expect_reply();
    assert!(ok && text.contains("hosted:counter"), "{text}");
    for _ in 0..3 {
        local.ok(&[
            "call",
            "counter",
            "increment",
            r#"{"amount":1}"#,
            "--revision",
            "1",
        ]);
    }
    wait_for("three updates pending", || {
        h.status()
            .contains("hosted:counter (3 updates pending)")
            .then_some(())
    });
    h.turn("watch the counter", "completed");
    assert!(h.command("/tick 2").0);
    let step = h.expect_enqueue();
    let parts = step["message"]["content"]
        .as_array()
        .expect("content")
        .clone();
    let delivery = parts
        .iter()
        .find(|p| p["data"]["instance"] == "hosted:counter")
        .unwrap_or_else(|| panic!("no delivery in {step}"));
    assert_eq!(delivery["data"]["updates"], 3, "{delivery}");
    assert_eq!(delivery["data"]["data"]["value"], 3, "{delivery}");
    assert!(
        local.tickhost_pid().is_none(),
        "a local tickhost was started"
    );
}

#[test]
fn run_wait_and_keys_work_over_ssh() {
    let sshd = Sshd::start();
    let local = sshd.local();
    local.ok(&["open", "--shell", "--name", "sh", "--", "bash"]);
    local.ok(&["wait", "shell:sh", "--prompt", "--timeout", "30"]);
    let out = local.run(&["run", "shell:sh", "--", "echo over-ssh; false"]);
    out.expect(1);
    let v = out.json();
    assert_eq!(v["command"]["output"], "over-ssh\n", "{v}");
    // Still running at the timeout (124), then waited for by its output.
    let out = local.run(&[
        "run",
        "shell:sh",
        "--timeout",
        "0.3",
        "--",
        "sleep 1; echo later",
    ]);
    out.expect(124);
    let v = local.ok(&[
        "wait",
        "shell:sh",
        "--text",
        "^later$",
        "--screen",
        "--timeout",
        "30",
    ]);
    assert_eq!(v["line"], "later", "{v}");
    let v = local.ok(&["wait", "shell:sh", "--prompt", "--timeout", "30"]);
    assert_eq!(v["shell"]["commands"][1]["exit"], 0, "{v}");
    // Keys by name, and the shell's state, there.
    local.ok(&[
        "keys", "shell:sh", "e", "c", "h", "o", "Space", "k", "Enter",
    ]);
    local.ok(&[
        "wait",
        "shell:sh",
        "--text",
        "^k$",
        "--screen",
        "--timeout",
        "30",
    ]);
    let state = local.ok(&["read", "shell:sh"]);
    assert_eq!(
        state["data"]["commands"].as_array().map(Vec::len),
        Some(3),
        "{state}"
    );
    assert!(
        sshd.remote.entry("shell:sh").is_some() && local.tickhost_pid().is_none(),
        "the shell runs on the far side only"
    );
}
