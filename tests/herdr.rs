//! Tickloop in Herdr, end to end against a strict stand-in Herdr: the
//! server of tests/herdr_standin/server.rs (a Unix socket that validates
//! every request against Herdr 0.8.0's own JSON Schema, refuses what Herdr
//! refuses, runs plugin panes in real terminals with Herdr's environment,
//! and restarts as Herdr does) and the `herdr` CLI of tests/herdr_standin/
//! (a thin client of that socket, as Herdr's CLI is). Every test ends by
//! checking that the stand-in refused nothing.
//!
//! Checked: the shipped manifest against Herdr's rules; `herdr install`
//! links the plugin folder once, leaves a disabled plugin disabled, and
//! says when Herdr is missing; `herdr open` opens beside the caller's pane,
//! its view attaches, forwards keys and resizes, detaches on SIGHUP leaving
//! the Tick running; a second open focuses the pane; the sidebar reports
//! (with `source`, Herdr's states, the Tick's title, update age, calls) and
//! an ended Tick shown as ended; `open --view herdr`; Herdr's errors as one
//! line, logged with their request; the Monitor overlay/popup; a popup
//! view's close key; restore after a Herdr restart puts views back where
//! they were and forgets the panes the user closed. The test with a
//! real `herdr` is `tests/herdr_real.rs` (ignored where there is none).

mod common;

#[path = "herdr_standin/server.rs"]
mod standin;

use common::tmux::Tmux;
use common::*;
use serde_json::{json, Value};
use standin::StandIn;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::thread;

/// The stand-in Herdr (server and CLI), its folder, and a bin folder with
/// `herdr` and `tickloop` first on PATH.
struct Herdr {
    dir: tempfile::TempDir,
    bin: PathBuf,
    socket: PathBuf,
    standin: StandIn,
    data_home: PathBuf,
}

impl Herdr {
    fn new(host: &Host) -> Herdr {
        let dir = tempfile::Builder::new()
            .prefix("tlh")
            .tempdir_in("/tmp")
            .expect("stand-in dir");
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).expect("bin dir");
        let cli = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/herdr_standin/herdr");
        std::os::unix::fs::symlink(&cli, bin.join("herdr")).expect("link herdr");
        std::os::unix::fs::symlink(tickloop_bin(), bin.join("tickloop")).expect("link tickloop");
        let standin = StandIn::start(dir.path(), &bin);
        let data_home = host.scratch().join("data");
        Herdr {
            bin,
            socket: standin.socket.clone(),
            standin,
            data_home,
            dir,
        }
    }

    fn state_dir(&self) -> &Path {
        self.dir.path()
    }

    fn path_var(&self) -> String {
        format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    /// `tickloop ARGS` run as from a shell in Herdr pane `w1:p0`.
    fn inside(&self, host: &Host, args: &[&str]) -> Out {
        self.inside_with(host, &[], args)
    }

    /// [`Herdr::inside`] with `env` added (an agent host's markers).
    fn inside_with(&self, host: &Host, env: &[(&str, &str)], args: &[&str]) -> Out {
        let mut cmd = host.command(args);
        cmd.envs(env.iter().copied())
            .env("HERDR_ENV", "1")
            .env("HERDR_SOCKET_PATH", &self.socket)
            .env("HERDR_BIN_PATH", self.bin.join("herdr"))
            .env("HERDR_PANE_ID", "w1:p0")
            .env("HERDR_WORKSPACE_ID", "w1")
            .env("HERDR_TAB_ID", "w1:t1")
            .env("HERDR_STANDIN_DIR", self.state_dir());
        self.finish(cmd, args)
    }

    /// `tickloop ARGS` outside Herdr, with the stand-in on PATH (its server
    /// running, as a user's Herdr may be).
    fn outside(&self, host: &Host, args: &[&str]) -> Out {
        let mut cmd = host.command(args);
        cmd.env_remove("HERDR_ENV")
            .env_remove("HERDR_BIN_PATH")
            .env_remove("HERDR_SOCKET_PATH")
            .env("HERDR_STANDIN_DIR", self.state_dir());
        self.finish(cmd, args)
    }

    fn finish(&self, mut cmd: Command, args: &[&str]) -> Out {
        cmd.env("PATH", self.path_var())
            .env("XDG_DATA_HOME", &self.data_home);
        run_prepared(cmd, args)
    }

    /// `herdr ARGS` (the stand-in CLI), as a user types it.
    fn cli(&self, args: &[&str]) -> std::process::Output {
        Command::new(self.bin.join("herdr"))
            .args(args)
            .env("HERDR_STANDIN_DIR", self.state_dir())
            .env("HERDR_SOCKET_PATH", &self.socket)
            .output()
            .expect("the stand-in herdr CLI")
    }

    /// The argv of every stand-in CLI call.
    fn cli_calls(&self) -> Vec<Vec<String>> {
        std::fs::read_to_string(self.state_dir().join("calls.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|c| serde_json::from_value(c["argv"].clone()).ok())
            .collect()
    }

    /// The params of every `plugin.pane.open` request.
    fn pane_opens(&self) -> Vec<Value> {
        self.requests("plugin.pane.open")
            .into_iter()
            .map(|q| q["params"].clone())
            .collect()
    }

    /// The plugin panes the stand-in opened (popups last).
    fn panes(&self) -> Vec<standin::Pane> {
        self.standin.plugin_panes()
    }

    /// The tmux running the plugin pane opened `n`th (1-based; popups
    /// count after the panes).
    fn tmux_of(&self, n: usize) -> Tmux {
        let panes = wait_for("the stand-in to open the pane", || {
            let panes = self.panes();
            (panes.len() >= n).then_some(panes)
        });
        Tmux::adopt(panes[n - 1].tmux_socket.as_deref().expect("a tmux socket"))
    }

    /// The socket requests with `method`.
    fn requests(&self, method: &str) -> Vec<Value> {
        self.standin
            .requests()
            .into_iter()
            .filter(|q| q["method"] == method)
            .collect()
    }

    /// Waits for a `method` request whose params match `pred`.
    fn wait_request(&self, method: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        wait_for(what, || {
            self.requests(method)
                .into_iter()
                .find(|q| pred(&q["params"]))
        })
    }

    /// The pane's agent state and message as Herdr holds them now.
    fn agent_state(&self, pane: &str) -> Option<(String, String)> {
        let agent = self.standin.pane(pane)?.agent?;
        Some((
            agent["state"].as_str().unwrap_or("").to_string(),
            agent["message"].as_str().unwrap_or("").to_string(),
        ))
    }
}

impl Drop for Herdr {
    fn drop(&mut self) {
        self.standin.shutdown();
        if !thread::panicking() {
            let refused = self.standin.refused();
            assert!(
                refused.is_empty(),
                "the stand-in Herdr refused what a real Herdr refuses: {refused:#?}"
            );
        }
    }
}

/// Links the plugin (as `tickloop herdr install` does) and opens a counter.
fn setup(host: &Host, herdr: &Herdr, name: &str) -> String {
    herdr.outside(host, &["herdr", "install"]).expect(0);
    host.open_counter(name);
    format!("hosted:{name}")
}

fn env_of(pane: &standin::Pane, key: &str) -> String {
    pane.env.get(key).cloned().unwrap_or_default()
}

#[test]
fn the_shipped_manifest_follows_herdrs_rules() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("view-herdr/plugin/herdr-plugin.toml");
    let text = std::fs::read_to_string(&path).expect("the shipped manifest");
    let doc: toml::Table = toml::from_str(&text).expect("valid TOML");
    for field in ["id", "name", "version", "min_herdr_version"] {
        assert!(
            doc.get(field)
                .and_then(|v| v.as_str())
                .is_some_and(|s| !s.is_empty()),
            "required field {field}"
        );
    }
    let id = doc["id"].as_str().unwrap_or("");
    assert_eq!(id, "tickloop");
    assert!(id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ".:_-".contains(c)));
    let min = doc["min_herdr_version"].as_str().unwrap_or("");
    assert_eq!(min.split('.').count(), 3, "semver {min}");
    let platforms = doc["platforms"].as_array().expect("platforms");
    assert!(!platforms.is_empty());
    let argv = |v: &toml::Value, what: &str| -> Vec<String> {
        let cmd = v
            .get("command")
            .and_then(|c| c.as_array())
            .unwrap_or_else(|| panic!("{what}: command must be an argv array, not a shell string"));
        let cmd: Vec<String> = cmd
            .iter()
            .map(|a| a.as_str().expect("argv strings").to_string())
            .collect();
        assert!(!cmd.is_empty() && !cmd[0].contains(' '), "{what}: {cmd:?}");
        cmd
    };
    let panes = doc["panes"].as_array().expect("[[panes]]");
    let mut ids = std::collections::BTreeSet::new();
    for pane in panes {
        let pid = pane["id"].as_str().expect("pane id");
        assert!(!pid.is_empty() && !pid.contains('.'), "local id {pid}");
        assert!(ids.insert(pid.to_string()), "duplicate pane {pid}");
        let placement = pane
            .get("placement")
            .and_then(|p| p.as_str())
            .unwrap_or("overlay");
        assert!(
            ["overlay", "popup", "split", "tab", "zoomed"].contains(&placement),
            "{pid}: {placement}"
        );
        if placement != "popup" {
            assert!(
                pane.get("width").is_none() && pane.get("height").is_none(),
                "{pid}: width/height only on popups"
            );
        }
        argv(pane, pid);
    }
    let pane = |id: &str| {
        panes
            .iter()
            .find(|p| p["id"].as_str() == Some(id))
            .unwrap_or_else(|| panic!("pane {id}"))
    };
    assert_eq!(pane("view")["placement"].as_str(), Some("split"));
    assert_eq!(argv(pane("view"), "view"), ["tickloop", "herdr", "pane"]);
    assert_eq!(pane("monitor")["placement"].as_str(), Some("overlay"));
    for action in doc
        .get("actions")
        .and_then(|a| a.as_array())
        .into_iter()
        .flatten()
    {
        let aid = action["id"].as_str().expect("action id");
        assert!(!aid.contains('.'), "local id {aid}");
        argv(action, aid);
    }
    let startup = doc["startup"].as_array().expect("[[startup]]");
    assert_eq!(
        argv(&startup[0], "startup"),
        ["tickloop", "herdr", "restore"]
    );
    // The library's checker agrees, and the embedded copy is this file.
    assert_eq!(view_herdr::manifest::MANIFEST, text);
    let m = view_herdr::manifest::Manifest::parse(&text).expect("parses");
    assert_eq!(m.problems(), Vec::<String>::new());
}

/// One raw request line to the stand-in; its answer.
fn raw_request(socket: &Path, line: &str) -> Value {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket).expect("connect");
    writeln!(stream, "{line}").expect("write");
    let mut answer = String::new();
    BufReader::new(&stream)
        .read_line(&mut answer)
        .expect("read");
    serde_json::from_str(&answer).expect("a JSON answer")
}

#[test]
fn the_stand_in_refuses_what_herdr_refuses() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    // The two shapes Tickloop once sent, which a real Herdr 0.8.0 refused.
    for line in [
        r#"{"id":"r1","method":"pane.report_metadata","params":{"pane_id":"w1:p0","title":"T"}}"#,
        r#"{"id":"r2","method":"pane.report_agent","params":{"pane_id":"w1:p0","source":"custom:tickloop","agent":"tickloop","state":"done"}}"#,
        r#"{"id":"r3","method":"pane.nonsense","params":{}}"#,
        "not json",
    ] {
        let answer = raw_request(&herdr.socket, line);
        assert_eq!(answer["id"], "", "{line}: {answer}");
        assert_eq!(
            answer["error"]["code"], "invalid_request",
            "{line}: {answer}"
        );
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.starts_with("invalid request: ")),
            "{answer}"
        );
    }
    assert_eq!(herdr.standin.take_refused().len(), 4);
    // Valid shapes pass; Herdr's own checks follow.
    let ok = raw_request(
        &herdr.socket,
        r#"{"id":"r4","method":"pane.report_metadata","params":{"pane_id":"w1:p0","source":"custom:tickloop","title":"T"}}"#,
    );
    assert_eq!(ok["result"]["type"], "ok", "{ok}");
    let gone = raw_request(
        &herdr.socket,
        r#"{"id":"r5","method":"pane.get","params":{"pane_id":"w9:p9"}}"#,
    );
    assert_eq!(gone["error"]["code"], "pane_not_found", "{gone}");
    let overlay = raw_request(
        &herdr.socket,
        r#"{"id":"r6","method":"plugin.pane.open","params":{"plugin_id":"tickloop","entrypoint":"view","placement":"overlay","target_pane_id":"w1:p0"}}"#,
    );
    assert_eq!(overlay["error"]["code"], "plugin_not_found", "{overlay}");
    herdr.outside(&host, &["herdr", "install"]).expect(0);
    let overlay = raw_request(
        &herdr.socket,
        r#"{"id":"r7","method":"plugin.pane.open","params":{"plugin_id":"tickloop","entrypoint":"view","placement":"overlay","target_pane_id":"w1:p0"}}"#,
    );
    assert_eq!(overlay["error"]["code"], "invalid_params", "{overlay}");
    let entry = raw_request(
        &herdr.socket,
        r#"{"id":"r8","method":"plugin.pane.open","params":{"plugin_id":"tickloop","entrypoint":"nope"}}"#,
    );
    assert_eq!(entry["error"]["code"], "plugin_pane_not_found", "{entry}");
}

#[test]
fn install_links_once_keeps_a_disabled_plugin_disabled_and_says_when_herdr_is_missing() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let first = herdr.outside(&host, &["herdr", "install"]);
    first.expect(0);
    let dir = herdr.data_home.join("tickloop/herdr-plugin");
    let dir_s = dir.to_string_lossy().into_owned();
    assert_eq!(first.json()["plugin_dir"], dir_s.as_str());
    assert_eq!(first.json()["changed"], true);
    assert_eq!(first.json()["enabled"], true);
    let written = std::fs::read_to_string(dir.join("herdr-plugin.toml")).expect("written");
    assert_eq!(written, view_herdr::manifest::MANIFEST);
    let links = |herdr: &Herdr| {
        herdr
            .cli_calls()
            .into_iter()
            .filter(|a| a.len() >= 2 && a[..2] == ["plugin", "link"])
            .collect::<Vec<_>>()
    };
    assert_eq!(
        links(&herdr),
        [vec!["plugin".to_string(), "link".into(), dir_s.clone()]]
    );
    // It asked Herdr what was linked first.
    assert_eq!(
        herdr.cli_calls()[0],
        ["plugin", "list", "--json", "--plugin", "tickloop"]
    );

    // Again: linked from this folder already, nothing is changed.
    let again = herdr.outside(&host, &["herdr", "install"]);
    again.expect(0);
    assert_eq!(again.json()["changed"], false);
    assert_eq!(links(&herdr).len(), 1, "no relink");

    // The user disables it: install leaves it disabled and says so.
    let disabled = herdr.cli(&["plugin", "disable", "tickloop"]);
    assert!(disabled.status.success(), "{disabled:?}");
    let third = herdr.outside(&host, &["herdr", "install"]);
    third.expect(0);
    assert_eq!(third.json()["enabled"], false);
    assert_eq!(third.json()["changed"], false);
    assert!(
        third.stderr.contains("disabled") && third.stderr.contains("herdr plugin enable tickloop"),
        "{third:#?}"
    );
    assert_eq!(links(&herdr).len(), 1, "still no relink");
    // Linked from elsewhere and disabled: relinked here, still disabled.
    let elsewhere = host.scratch().join("old-plugin");
    std::fs::create_dir_all(&elsewhere).expect("dir");
    std::fs::write(
        elsewhere.join("herdr-plugin.toml"),
        view_herdr::manifest::MANIFEST,
    )
    .expect("manifest");
    let moved = herdr.cli(&["plugin", "link", &elsewhere.to_string_lossy(), "--disabled"]);
    assert!(moved.status.success(), "{moved:?}");
    let fourth = herdr.outside(&host, &["herdr", "install"]);
    fourth.expect(0);
    assert_eq!(fourth.json()["changed"], true);
    assert_eq!(fourth.json()["enabled"], false);
    assert_eq!(
        links(&herdr).last().expect("a link"),
        &vec![
            "plugin".to_string(),
            "link".into(),
            dir_s.clone(),
            "--disabled".into()
        ]
    );
    let listed = herdr.cli(&["plugin", "list", "--json"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).expect("json");
    assert_eq!(
        listed["result"]["plugins"][0]["plugin_root"],
        dir_s.as_str()
    );
    assert_eq!(listed["result"]["plugins"][0]["enabled"], false);

    // No herdr anywhere.
    let mut cmd = host.command(&["herdr", "install"]);
    cmd.env("PATH", "/nonexistent")
        .env_remove("HERDR_BIN_PATH")
        .env("XDG_DATA_HOME", &herdr.data_home);
    let missing = run_prepared(cmd, &["herdr", "install"]);
    missing.expect_error(1, "internal");
    assert!(
        missing.stderr.contains("Herdr is not installed") && missing.stderr.lines().count() == 1,
        "{missing:#?}"
    );
}

#[test]
fn outside_herdr_the_commands_say_so() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    host.open_counter("c");
    for args in [
        &["herdr", "open", "c"][..],
        &["herdr", "monitor"][..],
        &["herdr", "restore"][..],
    ] {
        let out = herdr.outside(&host, args);
        out.expect_error(1, "bad_request");
        assert!(out.stderr.contains("not inside Herdr"), "{out:#?}");
    }
    let counter = tick("counter.py");
    let out = herdr.outside(
        &host,
        &["open", "--view", "herdr", "--id", "d", "--", &counter],
    );
    out.expect_error(1, "bad_request");
    assert!(out.stderr.contains("not inside Herdr"), "{out:#?}");
    assert!(host.entry("hosted:d").is_none(), "nothing was opened");
    assert!(herdr.pane_opens().is_empty());
}

#[test]
fn a_tick_in_a_herdr_pane_opens_beside_the_caller_attaches_and_detaches_on_sighup() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "counter");
    // Focus is elsewhere: the view still opens beside the caller (w1:p0).
    let shown = herdr.inside(&host, &["herdr", "open", "counter"]);
    shown.expect(0);
    let shown = shown.json();
    assert_eq!(shown["instance"], id);
    assert_eq!(shown["pane_id"], "w1:p1");
    assert_eq!(shown["focused"], false);

    // The request Herdr got.
    let opens = herdr.pane_opens();
    assert_eq!(opens.len(), 1);
    let runtime = host.runtime().to_string_lossy().into_owned();
    assert_eq!(
        opens[0],
        json!({
            "plugin_id": "tickloop",
            "entrypoint": "view",
            "placement": "split",
            "target_pane_id": "w1:p0",
            "env": {"TICKLOOP_INSTANCE": id, "TICKLOOP_RUNTIME_DIR": runtime},
            "focus": true,
        })
    );
    let pane = &herdr.panes()[0];
    assert_eq!(pane.command, ["tickloop", "herdr", "pane"]);
    assert_eq!(env_of(pane, "HERDR_PANE_ID"), "w1:p1");
    assert_eq!(env_of(pane, "TICKLOOP_INSTANCE"), id);

    // The view attached in the pane's terminal.
    let tmux = herdr.tmux_of(1);
    tmux.wait_text("value: 0");
    wait_for("the view to be counted", || {
        (host.entry(&id)?["views"] == 1).then_some(())
    });
    // Keys reach the Tick.
    tmux.type_text("+");
    host.wait_value(&id, 1);
    // A resize of the pane reaches the Tick as SIGWINCH.
    tmux.resize(90, 25);
    host.wait_screen(&id, "size 90x25");
    tmux.wait_text("size 90x25");

    // A second open focuses the pane instead of opening another.
    let again = herdr.inside(&host, &["herdr", "open", &id]);
    again.expect(0);
    assert_eq!(again.json()["focused"], true);
    assert_eq!(again.json()["pane_id"], "w1:p1");
    assert_eq!(herdr.pane_opens().len(), 1, "no second pane");
    herdr.wait_request("pane.focus", "the pane to be focused", |p| {
        p["pane_id"] == "w1:p1"
    });

    // SIGHUP (Herdr closing the pane) detaches; the Tick keeps running.
    let view = tmux.command_pid();
    // SAFETY: kill(2) on the view process of this test.
    unsafe { libc::kill(view, libc::SIGHUP) };
    tmux.wait_text("ATTACH-EXIT 0");
    wait_for("the view to be gone", || {
        (host.entry(&id)?["views"] == 0).then_some(())
    });
    let entry = host.entry(&id).expect("still listed");
    assert_eq!(entry["state"], "running");
    host.wait_value(&id, 1);
    herdr.wait_request("pane.release_agent", "the authority released", |p| {
        p["pane_id"] == "w1:p1"
    });

    // Its pane is closed now: the next open opens a new one.
    let reopened = herdr.inside(&host, &["herdr", "open", &id, "--placement", "tab"]);
    reopened.expect(0);
    assert_eq!(reopened.json()["focused"], false);
    assert_eq!(reopened.json()["pane_id"], "w1:p2");
    // A tab goes in the caller's workspace (Herdr refuses a target for tabs).
    assert_eq!(herdr.pane_opens()[1]["workspace_id"], "w1");
    assert!(herdr.pane_opens()[1].get("target_pane_id").is_none());
    herdr.tmux_of(2).wait_text("value: 1");
}

#[test]
fn the_sidebar_shows_the_tick_and_an_ended_tick_as_ended() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "busy");
    herdr
        .inside(&host, &["herdr", "open", &id, "--direction", "down"])
        .expect(0);
    assert_eq!(herdr.pane_opens()[0]["direction"], "down");
    let tmux = herdr.tmux_of(1);
    tmux.wait_text("value: 0");

    // The metadata Herdr holds for the pane (every report was valid).
    wait_for("the title in the sidebar", || {
        let pane = herdr.standin.pane("w1:p1")?;
        (pane.title.as_deref() == Some("Counter")).then_some(())
    });
    let pane = herdr.standin.pane("w1:p1").expect("the pane");
    assert_eq!(pane.display_agent.as_deref(), Some("Counter"));
    assert_eq!(pane.tokens.get("seq").map(String::as_str), Some("0"));
    assert_eq!(pane.tokens.get("instance"), Some(&id));
    let meta = &herdr.requests("pane.report_metadata")[0]["params"];
    assert_eq!(meta["source"], "custom:tickloop");
    let (state, message) = wait_for("idle", || {
        let (state, message) = herdr.agent_state("w1:p1")?;
        (state == "idle").then_some((state, message))
    });
    assert_eq!(state, "idle");
    assert!(
        message.starts_with("updated") || message == "no updates yet",
        "{message}"
    );
    let agent = herdr.requests("pane.report_agent");
    assert_eq!(agent[0]["params"]["source"], "custom:tickloop");
    assert_eq!(agent[0]["params"]["agent"], "tickloop");

    // A call in flight: working, with the count, then idle again.
    let call = host.spawn(&["call", &id, "sleep", r#"{"ms":2500}"#, "--revision", "1"]);
    let message = wait_for("working while the call runs", || {
        let (state, message) = herdr.agent_state("w1:p1")?;
        (state == "working").then_some(message)
    });
    assert!(message.ends_with("1 call in flight"), "{message}");
    call.finish().expect(0);
    wait_for("idle after the call", || {
        (herdr.agent_state("w1:p1")?.0 == "idle").then_some(())
    });
    // The tokens follow the state (seq).
    host.ok(&[
        "call",
        &id,
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    wait_for("seq 1 in the tokens", || {
        let pane = herdr.standin.pane("w1:p1")?;
        (pane.tokens.get("seq").map(String::as_str) == Some("1")).then_some(())
    });

    // The Tick ends: idle (Herdr's states have no "done"), labelled ended,
    // with the reason; the pane stays until a key.
    host.ok(&["close", &id]);
    let message = wait_for("ended", || {
        let (state, message) = herdr.agent_state("w1:p1")?;
        (state == "idle" && message.starts_with("ended: ")).then_some(message)
    });
    assert!(message.len() > "ended: ".len(), "a reason: {message}");
    let pane = herdr.standin.pane("w1:p1").expect("the pane stays");
    assert_eq!(
        pane.state_labels.get("idle").map(String::as_str),
        Some("ended")
    );
    // An ended instance counts no view.
    assert_eq!(host.entry(&id).expect("listed")["views"], 0);
    tmux.wait_text("press Enter to close this pane");
    assert!(herdr.requests("pane.release_agent").is_empty());
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("ATTACH-EXIT 0");
    herdr.wait_request("pane.release_agent", "the authority released", |p| {
        p["pane_id"] == "w1:p1"
    });
    // Nothing is reported after the release.
    let all = herdr.standin.requests();
    let last = all
        .iter()
        .rposition(|q| q["method"] == "pane.release_agent");
    let last_report = all.iter().rposition(|q| q["method"] == "pane.report_agent");
    assert!(last_report < last, "a report after the release");
}

#[test]
fn open_view_herdr_opens_and_says_which_pane() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    herdr.outside(&host, &["herdr", "install"]).expect(0);
    let counter = tick("counter.py");
    let out = herdr.inside(
        &host,
        &["open", "--view", "herdr", "--id", "one", "--", &counter],
    );
    out.expect(0);
    let v = out.json();
    assert_eq!(v["id"], "hosted:one");
    assert_eq!(v["view"]["pane_id"], "w1:p1");
    let opens = herdr.pane_opens();
    assert_eq!(opens.len(), 1);
    assert_eq!(opens[0]["env"]["TICKLOOP_INSTANCE"], "hosted:one");
    assert_eq!(opens[0]["target_pane_id"], "w1:p0");
    herdr.tmux_of(1).wait_text("value: 0");
}

#[test]
fn an_agents_herdr_commands_open_no_view_and_take_no_focus() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "counter");
    // An agent's shell tool in a Herdr pane (Claude Code's markers): a
    // Tick's pane types as the person, and every placement of the Monitor
    // takes the person's focus. Refused before Herdr is asked anything.
    let counter = tick("counter.py");
    for args in [
        &["herdr", "open", "counter"][..],
        &["herdr", "open", "counter", "--placement", "zoomed"][..],
        &["herdr", "open", "counter", "--placement", "popup"][..],
        &["herdr", "monitor"][..],
        &["herdr", "monitor", "--popup"][..],
        &["herdr", "monitor", &id, "--activity"][..],
        &["open", "--view", "herdr", "--id", "mine", "--", &counter][..],
    ] {
        let out = herdr.inside_with(&host, &[("CLAUDECODE", "1")], args);
        out.expect_error(3, "refused");
        assert!(
            out.stderr.contains("Claude Code (its shell tool) may not")
                && out.stderr.contains("focus"),
            "{out:#?}"
        );
    }
    assert!(herdr.pane_opens().is_empty(), "{:?}", herdr.pane_opens());
    assert!(herdr.requests("pane.focus").is_empty());
    assert!(host.entry("hosted:mine").is_none(), "nothing was opened");
    // The person's own, from the same pane, still opens.
    herdr.inside(&host, &["herdr", "open", "counter"]).expect(0);
    assert_eq!(herdr.pane_opens().len(), 1);
}

#[test]
fn herdr_errors_reach_the_user_as_one_line_and_are_logged_with_their_request() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    host.open_counter("e");
    // Not linked.
    let out = herdr.inside(&host, &["herdr", "open", "e"]);
    out.expect_error(1, "internal");
    assert_eq!(out.stderr.trim().lines().count(), 1, "{out:#?}");
    assert!(
        out.stderr.contains("plugin_not_found") && out.stderr.contains("tickloop herdr install"),
        "{out:#?}"
    );
    let log = std::fs::read_to_string(host.runtime().join("herdr.log")).expect("herdr.log");
    assert!(
        log.contains("plugin.pane.open") && log.contains("plugin_not_found"),
        "{log}"
    );
    // Busy.
    herdr.outside(&host, &["herdr", "install"]).expect(0);
    herdr.standin.fail_next("plugin.pane.open", "ui_busy");
    let busy = herdr.inside(&host, &["herdr", "open", "e"]);
    busy.expect_error(1, "internal");
    assert_eq!(busy.stderr.trim().lines().count(), 1, "{busy:#?}");
    assert!(busy.stderr.contains("ui_busy") && busy.stderr.contains("close it"));
    // Disabled.
    assert!(herdr
        .cli(&["plugin", "disable", "tickloop"])
        .status
        .success());
    let disabled = herdr.inside(&host, &["herdr", "open", "e"]);
    disabled.expect_error(1, "internal");
    assert!(
        disabled.stderr.contains("herdr plugin enable tickloop"),
        "{disabled:#?}"
    );
    assert!(herdr
        .cli(&["plugin", "enable", "tickloop"])
        .status
        .success());
    // An entrypoint the linked plugin lacks (an old plugin folder).
    let old = host.scratch().join("old");
    std::fs::create_dir_all(&old).expect("dir");
    std::fs::write(
        old.join("herdr-plugin.toml"),
        "id = \"tickloop\"\nname = \"T\"\nversion = \"0.0.1\"\nmin_herdr_version = \"0.8.0\"\n",
    )
    .expect("manifest");
    assert!(herdr
        .cli(&["plugin", "link", &old.to_string_lossy()])
        .status
        .success());
    let stale = herdr.inside(&host, &["herdr", "open", "e"]);
    stale.expect_error(1, "internal");
    assert!(
        stale.stderr.contains("plugin_pane_not_found")
            && stale.stderr.contains("tickloop herdr install"),
        "{stale:#?}"
    );
    // Unknown instance.
    let unknown = herdr.inside(&host, &["herdr", "open", "nope"]);
    unknown.expect_error(1, "no_such_instance");
}

#[test]
fn the_monitor_opens_as_an_overlay_or_a_popup() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "m");
    herdr.inside(&host, &["herdr", "monitor", &id]).expect(0);
    herdr
        .inside(&host, &["herdr", "monitor", "--popup"])
        .expect(0);
    let opens = herdr.pane_opens();
    assert_eq!(opens.len(), 2);
    let runtime = host.runtime().to_string_lossy().into_owned();
    assert_eq!(
        opens[0],
        json!({
            "plugin_id": "tickloop",
            "entrypoint": "monitor",
            "placement": "overlay",
            "env": {"TICKLOOP_RUNTIME_DIR": runtime, "TICKLOOP_INSTANCE": id},
            "focus": true,
        })
    );
    assert_eq!(opens[1]["placement"], "popup");
    assert_eq!(opens[1]["width"], "90%");
    let panes = herdr.panes();
    assert_eq!(panes[0].command, ["tickloop", "monitor"]);
    // The Monitor runs in the overlay and lists the instance.
    herdr.tmux_of(1).wait_text(&id);
    assert!(
        panes[1].pane_id.starts_with("popup"),
        "a popup has no pane id"
    );
}

#[test]
fn a_popup_view_says_its_close_key_and_closes_with_it() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "pop");
    let out = herdr.inside(&host, &["herdr", "open", &id, "--placement", "popup"]);
    out.expect(0);
    assert!(out.json()["pane_id"].is_null());
    let tmux = herdr.tmux_of(1);
    tmux.wait_text("ctrl+\\ d closes this popup");
    assert!(env_of(&herdr.panes()[0], "HERDR_PANE_ID").is_empty());
    tmux.send_keys(&["C-\\", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
    assert_eq!(host.entry(&id).expect("listed")["state"], "running");
}

#[test]
fn restore_after_a_herdr_restart_puts_views_back_and_forgets_closed_panes() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let a = setup(&host, &herdr, "a");
    host.open_counter("b");
    host.open_counter("c");
    herdr.inside(&host, &["herdr", "open", "a"]).expect(0);
    herdr.inside(&host, &["herdr", "open", "b"]).expect(0);
    herdr.inside(&host, &["herdr", "open", "c"]).expect(0);
    let (pane_a, pane_b, pane_c) = (herdr.tmux_of(1), herdr.tmux_of(2), herdr.tmux_of(3));
    pane_a.wait_text("value: 0");
    pane_b.wait_text("value: 0");
    pane_c.wait_text("value: 0");
    // The user detaches b, and closes c's pane from Herdr.
    pane_b.send_keys(&["C-\\", "d"]);
    pane_b.wait_text("ATTACH-EXIT 0");
    let closed = herdr.cli(&["pane", "close", "w1:p3"]);
    assert!(closed.status.success(), "{closed:?}");
    wait_for("c's view to be gone", || {
        (host.entry("hosted:c")?["views"] == 0).then_some(())
    });
    assert_eq!(host.entry("hosted:c").expect("c")["state"], "running");

    // Herdr restarts: a's pane comes back as a plain shell; the startup
    // hook puts a's view back in its place and forgets c.
    let startup = herdr.standin.restart(&[
        ("TICKLOOP_RUNTIME_DIR", host.runtime()),
        ("XDG_DATA_HOME", &herdr.data_home),
    ]);
    assert!(startup.status.success(), "{startup:?}");
    let restored: Value = serde_json::from_slice(&startup.stdout).expect("JSON");
    let restored = restored.as_array().expect("an array").clone();
    let find = |inst: &str| {
        restored
            .iter()
            .find(|r| r["instance"] == inst)
            .cloned()
            .unwrap_or_else(|| panic!("{inst} in {restored:?}"))
    };
    assert_eq!(restored.len(), 2, "{restored:?}");
    let ra = find(&a);
    assert_eq!(ra["restored"], "reopened");
    assert_eq!(ra["pane_id"], "w1:p4");
    assert_eq!(ra["closed_shell"], true);
    assert_eq!(find("hosted:c")["restored"], "forgotten");
    // One split beside the shell that came back, then the shell closed: the
    // view is where a's was, same tab; nothing else was split.
    let opens = herdr.pane_opens();
    assert_eq!(opens.len(), 4);
    assert_eq!(opens[3]["target_pane_id"], "w1:p1");
    assert_eq!(opens[3]["focus"], false);
    assert_eq!(opens[3]["env"]["TICKLOOP_INSTANCE"], a);
    assert_eq!(
        herdr.requests("pane.close").last().expect("a close")["params"]["pane_id"],
        "w1:p1"
    );
    // b's pane closed when its view detached; c's was closed by the user.
    assert_eq!(herdr.standin.open_panes(), ["w1:p0", "w1:p4"]);
    assert_eq!(
        herdr.standin.pane("w1:p4").expect("a's view").tab_id,
        "w1:t1"
    );
    let view = herdr.standin.pane("w1:p4").expect("a's view pane");
    // (A Tmux kills its server when dropped: keep it while the view runs.)
    let view_tmux = Tmux::adopt(view.tmux_socket.as_deref().expect("a terminal"));
    view_tmux.wait_text("value: 0");
    herdr.wait_request("pane.report_metadata", "the restored view's reports", |p| {
        p["pane_id"] == "w1:p4"
    });
    // Again: a is showing, nothing to do.
    let mut cmd = host.command(&["herdr", "restore"]);
    cmd.env("HERDR_ENV", "1")
        .env("HERDR_SOCKET_PATH", &herdr.socket)
        .env("HERDR_BIN_PATH", herdr.bin.join("herdr"))
        .env("HERDR_STANDIN_DIR", herdr.state_dir());
    let again = herdr.finish(cmd, &["herdr", "restore"]);
    let again = again.expect(0).json();
    assert_eq!(
        again,
        json!([{"instance": a, "pane_id": "w1:p4", "restored": "showing"}])
    );
    assert_eq!(herdr.pane_opens().len(), 4);
}

/// The activity overlay (issue 20) pops over a Tick in its Herdr pane as in
/// `tickloop attach`: the prefix key then `m`, and Esc drops back to the
/// Tick, whose keys work again.
#[test]
fn the_activity_pops_over_a_tick_in_its_herdr_pane() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "counter");
    herdr.inside(&host, &["herdr", "open", "counter"]).expect(0);
    let tmux = herdr.tmux_of(1);
    tmux.wait_text("value: 0");
    host.ok(&[
        "call",
        &id,
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        "1",
    ]);
    tmux.wait_text("value: 5");
    tmux.send_keys(&["C-\\", "m"]);
    let shown = tmux.wait_text(r#"increment {"amount":5} → executed"#);
    assert!(shown.contains(&format!("activity · {id}")), "{shown}");
    assert!(shown.contains("1 view"), "{shown}");
    tmux.send_keys(&["Escape"]);
    wait_for("the overlay to close", || {
        (!tmux.capture().contains("activity ·")).then_some(())
    });
    tmux.type_text("+");
    host.wait_value(&id, 6);
}

/// The plugin's `activity` action (issue 20): the Monitor over the focused
/// Tick, opened on what agents did with it.
#[test]
fn the_activity_action_pops_the_focused_tick_s_activity() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "act");
    host.ok(&[
        "call",
        &id,
        "increment",
        r#"{"amount":4}"#,
        "--revision",
        "1",
    ]);
    herdr
        .inside(&host, &["herdr", "monitor", &id, "--activity"])
        .expect(0);
    let runtime = host.runtime().to_string_lossy().into_owned();
    assert_eq!(
        herdr.pane_opens()[0]["env"],
        json!({"TICKLOOP_RUNTIME_DIR": runtime, "TICKLOOP_INSTANCE": id, "TICKLOOP_ACTIVITY": "1"})
    );
    let tmux = herdr.tmux_of(1);
    let shown = tmux.wait_text(r#"increment {"amount":4} → executed"#);
    assert!(shown.contains(&format!("activity · {id}")), "{shown}");
    // Esc goes on to the Monitor's list.
    tmux.send_keys(&["Escape"]);
    wait_for("the list", || {
        let s = tmux.capture();
        (s.contains("Tickloop Monitor") && !s.contains(&format!("activity · {id}"))).then_some(())
    });
}

/// A Tick whose call waits for a person's approval (issue 15) is `blocked`
/// in Herdr's sidebar, the tool named, so Herdr's own waits and
/// notifications fire; approved, it is not blocked any more.
#[test]
fn a_call_waiting_for_approval_makes_the_pane_blocked() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "gate");
    host.ok(&["approve-policy", &id, "ask"]);
    herdr.inside(&host, &["herdr", "open", "gate"]).expect(0);
    // (A Tmux kills its server when dropped: keep it while the view runs.)
    let view = herdr.tmux_of(1);
    view.wait_text("value: 0");
    let caller = host.spawn(&[
        "call",
        &id,
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    let (state, message) = wait_for("the pane to be blocked", || {
        herdr
            .agent_state("w1:p1")
            .filter(|(state, _)| state == "blocked")
    });
    assert_eq!(state, "blocked");
    assert!(message.starts_with("approve increment?"), "{message}");
    let out = host.run(&["approvals"]);
    let held: Value = serde_json::from_str(out.stdout.trim()).expect("one waiting call");
    host.ok(&["approve", &id, held["call"].as_str().expect("a call id")]);
    caller.finish().expect(0);
    wait_for("the pane not to be blocked any more", || {
        herdr
            .agent_state("w1:p1")
            .filter(|(state, _)| state != "blocked")
    });
    view.wait_text("value: 1");
}

#[test]
fn herdr_open_host_id_shows_a_tick_of_another_machine_in_a_pane() {
    let sshd = common::sshd::Sshd::start();
    // This machine's commands carry the ssh command, not a default host.
    let host = Host::new().with_env(vec![
        ("TICKLOOP_SSH".into(), sshd.ssh_command()),
        ("TICKLOOP_REMOTE_TICKLOOP".into(), tickloop_bin().into()),
    ]);
    let herdr = Herdr::new(&host);
    herdr.outside(&host, &["herdr", "install"]).expect(0);
    host.ok(&[
        "--host",
        "remote",
        "open",
        "--id",
        "far",
        "--",
        &tick("counter.py"),
    ]);
    let id = "remote:hosted:far";

    let shown = herdr.inside(&host, &["herdr", "open", id]);
    shown.expect(0);
    assert_eq!(shown.json()["instance"], id);
    let opens = herdr.pane_opens();
    assert_eq!(opens[0]["env"]["TICKLOOP_INSTANCE"], id);
    assert_eq!(opens[0]["env"]["TICKLOOP_SSH"], sshd.ssh_command().as_str());

    // The pane's view reaches the launcher there: keys and resizes.
    let tmux = herdr.tmux_of(1);
    tmux.wait_text("value: 0");
    wait_for("the view to be counted there", || {
        (sshd.remote.entry("hosted:far")?["views"] == 1).then_some(())
    });
    tmux.type_text("+");
    wait_for("the remote counter to take the key", || {
        (sshd.remote.read("far")["data"]["value"] == 1).then_some(())
    });
    tmux.resize(90, 25);
    sshd.remote.wait_screen("hosted:far", "size 90x25");
    // The sidebar reports the remote Tick.
    herdr.wait_request("pane.report_agent", "a report of the remote Tick", |p| {
        p["pane_id"] == "w1:p1"
    });
    // A second open of the same id focuses that pane.
    let again = herdr.inside(&host, &["herdr", "open", id]);
    again.expect(0);
    assert_eq!(again.json()["focused"], true);
    // An unknown instance there is refused before any pane opens.
    let none = herdr.inside(&host, &["herdr", "open", "remote:hosted:nope"]);
    none.expect(1);
    assert_eq!(herdr.pane_opens().len(), 1);
}
