//! Tickloop in Herdr (issue 5), end to end against a stand-in Herdr: the
//! `herdr` executable of tests/herdr_standin/ (first on PATH and as
//! HERDR_BIN_PATH; it records every call and runs plugin panes in tmux with
//! Herdr's environment) and a fake Herdr socket (here) that records what the
//! view reports and answers `pane.get`/`pane.focus`.
//!
//! Checked: the shipped manifest against Herdr's rules; `herdr install`
//! links the plugin folder (and says when Herdr is missing); `herdr open`
//! builds the right `plugin pane open` call, and its view attaches, forwards
//! keys and resizes, detaches on SIGHUP leaving the Tick running; a second
//! open focuses the pane; the sidebar reports follow calls and the Tick's
//! end, and the authority is released on detach; `open --view herdr`;
//! Herdr's errors as one line; the Monitor overlay/popup call; a popup view
//! says its close key. A last test uses a real `herdr` when one is on PATH.

mod common;

use common::tmux::Tmux;
use common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

/// The stand-in `herdr`, its state folder, a PATH with it and `tickloop`
/// first, and a fake Herdr socket.
struct Herdr {
    dir: tempfile::TempDir,
    bin: PathBuf,
    socket: PathBuf,
    requests: Arc<Mutex<Vec<Value>>>,
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
        let standin = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/herdr_standin/herdr");
        std::os::unix::fs::symlink(&standin, bin.join("herdr")).expect("link herdr");
        std::os::unix::fs::symlink(tickloop_bin(), bin.join("tickloop")).expect("link tickloop");
        let socket = dir.path().join("herdr.sock");
        let requests = Arc::new(Mutex::new(Vec::new()));
        serve_socket(&socket, dir.path().to_path_buf(), Arc::clone(&requests));
        let data_home = host.scratch().join("data");
        Herdr {
            bin,
            socket,
            requests,
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

    /// `tickloop ARGS` run as from a shell in a Herdr pane.
    fn inside(&self, host: &Host, args: &[&str]) -> Out {
        let mut cmd = host.command(args);
        cmd.env("HERDR_ENV", "1")
            .env("HERDR_SOCKET_PATH", &self.socket)
            .env("HERDR_BIN_PATH", self.bin.join("herdr"))
            .env("HERDR_PANE_ID", "w1:p0")
            .env("HERDR_STANDIN_DIR", self.state_dir());
        self.finish(cmd, args)
    }

    /// `tickloop ARGS` outside Herdr, with the stand-in on PATH.
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
        run_to_end(cmd, args)
    }

    /// Every call the stand-in received.
    fn calls(&self) -> Vec<Value> {
        read_jsonl(&self.state_dir().join("calls.jsonl"))
    }

    /// The argv of every `plugin pane open`.
    fn pane_opens(&self) -> Vec<Vec<String>> {
        self.calls()
            .iter()
            .filter_map(|c| {
                let argv: Vec<String> = serde_json::from_value(c["argv"].clone()).ok()?;
                (argv.len() >= 3 && argv[..3] == ["plugin", "pane", "open"]).then_some(argv)
            })
            .collect()
    }

    /// The panes the stand-in opened.
    fn panes(&self) -> Vec<Value> {
        read_jsonl(&self.state_dir().join("panes.jsonl"))
    }

    /// The tmux running the stand-in's pane number `n` (1-based).
    fn tmux_of(&self, n: usize) -> Tmux {
        let panes = wait_for("the stand-in to record the pane", || {
            let panes = self.panes();
            (panes.len() >= n).then_some(panes)
        });
        Tmux::adopt(panes[n - 1]["tmux_socket"].as_str().expect("a tmux socket"))
    }

    /// The socket requests with `method`.
    fn requests(&self, method: &str) -> Vec<Value> {
        self.requests
            .lock()
            .map(|r| {
                r.iter()
                    .filter(|q| q["method"] == method)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits for a `method` request whose params match `pred`.
    fn wait_request(&self, method: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        wait_for(what, || {
            self.requests(method)
                .into_iter()
                .find(|q| pred(&q["params"]))
        })
    }

    /// The last `pane.report_agent` state for `pane`.
    fn agent_state(&self, pane: &str) -> Option<(String, Value)> {
        self.requests("pane.report_agent")
            .iter()
            .rev()
            .find(|q| q["params"]["pane_id"] == pane)
            .map(|q| {
                (
                    q["params"]["state"].as_str().unwrap_or("").to_string(),
                    q["params"]["message"].clone(),
                )
            })
    }
}

impl Drop for Herdr {
    fn drop(&mut self) {
        for pane in self.panes() {
            if let Some(socket) = pane["tmux_socket"].as_str() {
                drop(Tmux::adopt(socket));
            }
        }
    }
}

fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Runs a prepared `tickloop` command to its end (bounded).
fn run_to_end(mut cmd: Command, args: &[&str]) -> Out {
    let child = cmd.spawn().expect("starting tickloop");
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(COMMAND_DEADLINE) {
        Ok(Ok(out)) => Out {
            args: args.iter().map(|s| s.to_string()).collect(),
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        Ok(Err(e)) => panic!("waiting for tickloop {args:?}: {e}"),
        Err(_) => {
            // SAFETY: kill(2) on a child we started and have not reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("tickloop {args:?} did not finish within {COMMAND_DEADLINE:?}")
        }
    }
}

/// The fake Herdr socket: one request per connection, one JSON line each
/// way. Records every request; `pane.get` knows the stand-in's panes (not
/// closed); everything else answers ok.
fn serve_socket(path: &Path, standin: PathBuf, requests: Arc<Mutex<Vec<Value>>>) {
    let listener = UnixListener::bind(path).expect("bind the fake Herdr socket");
    thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            if BufReader::new(&stream).read_line(&mut line).is_err() {
                continue;
            }
            let Ok(request) = serde_json::from_str::<Value>(line.trim()) else {
                continue;
            };
            let id = request["id"].clone();
            let answer = match request["method"].as_str() {
                Some("pane.get") => {
                    let pane = request["params"]["pane_id"].as_str().unwrap_or("");
                    let open = read_jsonl(&standin.join("panes.jsonl"))
                        .iter()
                        .any(|p| p["pane_id"] == pane);
                    let closed = standin.join("closed").join(pane.replace(':', "_")).exists();
                    if open && !closed {
                        json!({"id": id, "result": {"type": "pane_info", "pane": {"pane_id": pane}}})
                    } else {
                        json!({"id": id, "error": {"code": "pane_not_found", "message": format!("no pane {pane}")}})
                    }
                }
                Some("ping") => {
                    json!({"id": id, "result": {"type": "pong", "version": "0.8.0", "protocol": 20}})
                }
                _ => json!({"id": id, "result": {"type": "ok"}}),
            };
            if let Ok(mut r) = requests.lock() {
                r.push(request);
            }
            let _ = writeln!(stream, "{answer}");
        }
    });
}

/// Links the plugin (as `tickloop herdr install` does) and opens a counter.
fn setup(host: &Host, herdr: &Herdr, name: &str) -> String {
    herdr.outside(host, &["herdr", "install"]).expect(0);
    host.open_counter(name);
    format!("hosted:{name}")
}

fn env_of(pane: &Value, key: &str) -> String {
    pane["env"][key].as_str().unwrap_or("").to_string()
}

#[test]
fn the_shipped_manifest_follows_herdrs_rules() {
    use view_herdr::manifest::toml;
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

#[test]
fn install_links_the_plugin_folder_and_says_when_herdr_is_missing() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let first = herdr.outside(&host, &["herdr", "install"]);
    first.expect(0);
    let dir = herdr.data_home.join("tickloop/herdr-plugin");
    assert_eq!(first.json()["plugin_dir"], dir.to_string_lossy().as_ref());
    let written = std::fs::read_to_string(dir.join("herdr-plugin.toml")).expect("written");
    assert_eq!(written, view_herdr::manifest::MANIFEST);
    // Idempotent: again, same folder, still linked.
    herdr.outside(&host, &["herdr", "install"]).expect(0);
    let links: Vec<Vec<String>> = herdr
        .calls()
        .iter()
        .filter_map(|c| serde_json::from_value(c["argv"].clone()).ok())
        .filter(|a: &Vec<String>| a.len() >= 2 && a[..2] == ["plugin", "link"])
        .collect();
    assert_eq!(links.len(), 2);
    for link in links {
        assert_eq!(link, ["plugin", "link", dir.to_string_lossy().as_ref()]);
    }
    let registry: Value = serde_json::from_str(
        &std::fs::read_to_string(herdr.state_dir().join("plugins.json")).expect("registry"),
    )
    .expect("json");
    assert_eq!(registry["tickloop"], dir.to_string_lossy().as_ref());

    // No herdr anywhere.
    let mut cmd = host.command(&["herdr", "install"]);
    cmd.env("PATH", "/nonexistent")
        .env_remove("HERDR_BIN_PATH")
        .env("XDG_DATA_HOME", &herdr.data_home);
    let missing = run_to_end(cmd, &["herdr", "install"]);
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
fn a_tick_in_a_herdr_pane_attaches_forwards_keys_and_sizes_and_detaches_on_sighup() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "counter");
    let shown = herdr.inside(&host, &["herdr", "open", "counter"]);
    shown.expect(0);
    let shown = shown.json();
    assert_eq!(shown["instance"], id);
    assert_eq!(shown["pane_id"], "w1:p1");
    assert_eq!(shown["focused"], false);

    // The call Herdr got.
    let opens = herdr.pane_opens();
    assert_eq!(opens.len(), 1);
    let runtime = host.runtime().to_string_lossy().into_owned();
    assert_eq!(
        opens[0],
        [
            "plugin",
            "pane",
            "open",
            "--plugin",
            "tickloop",
            "--entrypoint",
            "view",
            "--placement",
            "split",
            "--env",
            &format!("TICKLOOP_INSTANCE={id}"),
            "--env",
            &format!("TICKLOOP_RUNTIME_DIR={runtime}"),
        ]
    );
    let pane = &herdr.panes()[0];
    assert_eq!(pane["command"], json!(["tickloop", "herdr", "pane"]));
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
    let reopened = herdr.inside(&host, &["herdr", "open", &id]);
    reopened.expect(0);
    assert_eq!(reopened.json()["focused"], false);
    assert_eq!(reopened.json()["pane_id"], "w1:p2");
    assert_eq!(herdr.pane_opens().len(), 2);
    herdr.tmux_of(2).wait_text("value: 1");
}

#[test]
fn the_sidebar_reports_follow_calls_and_the_end_and_detach_releases() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let id = setup(&host, &herdr, "busy");
    herdr
        .inside(&host, &["herdr", "open", &id, "--direction", "down"])
        .expect(0);
    assert!(herdr.pane_opens()[0]
        .windows(2)
        .any(|w| w == ["--direction", "down"]));
    let tmux = herdr.tmux_of(1);
    tmux.wait_text("value: 0");

    let meta = herdr.wait_request("pane.report_metadata", "the metadata", |p| {
        p["pane_id"] == "w1:p1"
    });
    let params = &meta["params"];
    assert_eq!(params["title"], "Counter");
    assert_eq!(params["display_agent"], "Counter");
    assert_eq!(params["tokens"]["seq"], "0");
    wait_for("idle", || {
        (herdr.agent_state("w1:p1")?.0 == "idle").then_some(())
    });
    let agent = herdr.requests("pane.report_agent");
    assert_eq!(agent[0]["params"]["source"], "custom:tickloop");
    assert_eq!(agent[0]["params"]["agent"], "tickloop");

    // A call in flight: working, then idle again.
    let call = host.spawn(&["call", &id, "sleep", r#"{"ms":2500}"#, "--revision", "1"]);
    wait_for("working while the call runs", || {
        let (state, message) = herdr.agent_state("w1:p1")?;
        (state == "working").then_some(message)
    });
    call.finish().expect(0);
    wait_for("idle after the call", || {
        (herdr.agent_state("w1:p1")?.0 == "idle").then_some(())
    });
    // The metadata follows the state (seq).
    host.ok(&[
        "call",
        &id,
        "increment",
        r#"{"amount":2}"#,
        "--revision",
        "1",
    ]);
    herdr.wait_request("pane.report_metadata", "seq 1 in the tokens", |p| {
        p["tokens"]["seq"] == "1"
    });

    // The Tick ends: done, with the reason; the pane stays until a key.
    host.ok(&["close", &id]);
    let reason = wait_for("done", || {
        let (state, message) = herdr.agent_state("w1:p1")?;
        (state == "done").then_some(message)
    });
    assert!(
        reason.as_str().is_some_and(|r| !r.is_empty()),
        "a reason: {reason}"
    );
    tmux.wait_text("press Enter to close this pane");
    assert!(herdr.requests("pane.release_agent").is_empty());
    tmux.send_keys(&["Enter"]);
    tmux.wait_text("ATTACH-EXIT 0");
    herdr.wait_request("pane.release_agent", "the authority released", |p| {
        p["pane_id"] == "w1:p1"
    });
    // Nothing is reported after the release.
    let all = herdr.requests.lock().map(|r| r.clone()).unwrap_or_default();
    let last = all
        .iter()
        .rposition(|q| q["method"] == "pane.release_agent");
    let last_report = all.iter().rposition(|q| q["method"] == "pane.report_agent");
    assert!(last_report < last, "a report after the release");
}

#[test]
fn open_view_herdr_opens_and_shows_in_one_step() {
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
    assert!(opens[0].contains(&"TICKLOOP_INSTANCE=hosted:one".to_string()));
    herdr.tmux_of(1).wait_text("value: 0");
}

#[test]
fn herdr_errors_reach_the_user_as_one_line() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    host.open_counter("e");
    // Not linked.
    let out = herdr.inside(&host, &["herdr", "open", "e"]);
    out.expect_error(1, "internal");
    assert_eq!(out.stderr.trim().lines().count(), 1, "{out:#?}");
    assert!(out.stderr.contains("tickloop herdr install"), "{out:#?}");
    // Busy.
    herdr.outside(&host, &["herdr", "install"]).expect(0);
    let mut cmd = host.command(&["herdr", "open", "e"]);
    cmd.env("HERDR_ENV", "1")
        .env("HERDR_SOCKET_PATH", &herdr.socket)
        .env("HERDR_BIN_PATH", herdr.bin.join("herdr"))
        .env("HERDR_STANDIN_DIR", herdr.state_dir())
        .env("HERDR_STANDIN_FAIL", "ui_busy");
    let busy = herdr.finish(cmd, &["herdr", "open", "e"]);
    busy.expect_error(1, "internal");
    assert_eq!(busy.stderr.trim().lines().count(), 1, "{busy:#?}");
    assert!(busy.stderr.contains("ui_busy") && busy.stderr.contains("close it"));
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
        [
            "plugin",
            "pane",
            "open",
            "--plugin",
            "tickloop",
            "--entrypoint",
            "monitor",
            "--placement",
            "overlay",
            "--env",
            &format!("TICKLOOP_RUNTIME_DIR={runtime}"),
            "--env",
            &format!("TICKLOOP_INSTANCE={id}"),
        ]
    );
    assert!(opens[1].windows(2).any(|w| w == ["--placement", "popup"]));
    assert!(opens[1].windows(2).any(|w| w[0] == "--width"));
    let panes = herdr.panes();
    assert_eq!(panes[0]["command"], json!(["tickloop", "monitor"]));
    // The Monitor runs in the overlay and lists the instance.
    herdr.tmux_of(1).wait_text(&id);
    assert!(panes[1]["pane_id"].is_null(), "a popup has no pane id");
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
fn a_real_herdr_links_the_plugin_when_installed() {
    let Some(real) = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("herdr"))
        .find(|p| p.is_file())
    else {
        println!("skipped: no real `herdr` on PATH (CI cannot run Herdr); the stand-in tests cover the calls");
        return;
    };
    let host = Host::new();
    let home = host.scratch().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let version = Command::new(&real)
        .arg("--version")
        .output()
        .expect("herdr --version");
    assert!(version.status.success());
    // Herdr's registry and our plugin folder in a private home.
    let mut cmd = host.command(&["herdr", "install"]);
    cmd.env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("HERDR_BIN_PATH", &real);
    run_to_end(cmd, &["herdr", "install"]).expect(0);
    let listed = Command::new(&real)
        .args(["plugin", "list"])
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .output()
        .expect("herdr plugin list");
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("tickloop"),
        "{listed:?}"
    );
}

#[test]
fn restore_reopens_the_views_herdr_closed_but_not_the_detached_ones() {
    let host = Host::new();
    let herdr = Herdr::new(&host);
    let a = setup(&host, &herdr, "a");
    host.open_counter("b");
    herdr.inside(&host, &["herdr", "open", "a"]).expect(0);
    herdr.inside(&host, &["herdr", "open", "b"]).expect(0);
    let (pane_a, pane_b) = (herdr.tmux_of(1), herdr.tmux_of(2));
    pane_a.wait_text("value: 0");
    pane_b.wait_text("value: 0");
    // Herdr stopping closes a's pane (SIGHUP); the user detaches b.
    // SAFETY: kill(2) on the view process of this test.
    unsafe { libc::kill(pane_a.command_pid(), libc::SIGHUP) };
    pane_a.wait_text("ATTACH-EXIT 0");
    pane_b.send_keys(&["C-\\", "d"]);
    pane_b.wait_text("ATTACH-EXIT 0");

    // The startup hook reopens a only.
    let restored = herdr.inside(&host, &["herdr", "restore"]);
    restored.expect(0);
    let restored = restored.json();
    let restored = restored.as_array().expect("an array");
    assert_eq!(restored.len(), 1, "{restored:?}");
    assert_eq!(restored[0]["instance"], a);
    assert_eq!(restored[0]["pane_id"], "w1:p3");
    let opens = herdr.pane_opens();
    assert_eq!(opens.len(), 3);
    assert!(opens[2].contains(&format!("TICKLOOP_INSTANCE={a}")));
    herdr.tmux_of(3).wait_text("value: 0");
    // Shown again (the view registered itself and reports): nothing more
    // to restore.
    herdr.wait_request("pane.report_metadata", "the restored view's reports", |p| {
        p["pane_id"] == "w1:p3"
    });
    let again = herdr.inside(&host, &["herdr", "restore"]);
    assert_eq!(again.expect(0).json(), json!([]));
}
