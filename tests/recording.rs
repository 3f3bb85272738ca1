//! Recordings (`open --record`, `record ID`, `replay`), end to end with the
//! real launcher and PTY: the file is asciicast v2 with the kept screen,
//! timed output, a resize and every protocol message as a marker; `replay
//! --protocol` prints the timeline; `replay` plays the output; and the file
//! plays in asciinema (`asciinema cat`, asciinema from PyPI in a venv under
//! the target directory). When asciinema cannot be installed that trial is
//! reported IGNORED with the reason, never passed: hence `harness = false`
//! and libtest-mimic.

mod common;

use common::{wait_for, Host};
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use tickloop_proto::attach::{TermCaps, ToView, ViewHello};
use tickloop_proto::wire::{Hello, HelloReply, Role};

const ASCIINEMA: &str = "asciinema==2.4.0";

/// The header and events of a recording.
fn parse(path: &Path) -> (Value, Vec<Value>) {
    let text = std::fs::read_to_string(path).expect("the recording");
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header")).expect("header JSON");
    let events = lines
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("event {l:?}: {e}")))
        .collect();
    (header, events)
}

/// The protocol markers of `events` as `{"dir", "msg"}`.
fn markers(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e[1] == "m")
        .map(|e| {
            let label = e[2].as_str().expect("marker label");
            let body = label.strip_prefix("tickloop ").expect("a tickloop marker");
            serde_json::from_str(body).unwrap_or_else(|e| panic!("marker {body}: {e}"))
        })
        .collect()
}

/// Resizes the instance's PTY by attaching a view of `cols`x`rows` to its
/// launcher; returns once the view's snapshot has that size.
fn resize(host: &Host, id: &str, cols: u16, rows: u16) {
    let (kind, name) = tickloop_client::paths::parse_id(id).expect("an id");
    let socket = tickloop_client::paths::RuntimeDir::at(host.runtime())
        .instance_files(kind, name)
        .expect("instance files")
        .socket;
    let stream = std::os::unix::net::UnixStream::connect(&socket).expect("connect to the launcher");
    stream
        .set_read_timeout(Some(common::WAIT))
        .expect("timeout");
    let mut writer = stream.try_clone().expect("clone");
    let mut reader = BufReader::new(stream);
    let send = |w: &mut std::os::unix::net::UnixStream, v: &dyn erased::Json| {
        let mut line = v.json();
        line.push('\n');
        w.write_all(line.as_bytes()).expect("write to the launcher");
    };
    send(&mut writer, &Hello::new(Role::View));
    let mut line = String::new();
    reader.read_line(&mut line).expect("hello reply");
    let reply: HelloReply = serde_json::from_str(&line).expect("hello reply JSON");
    assert!(reply.refused.is_none(), "{line}");
    send(
        &mut writer,
        &ViewHello {
            cols,
            rows,
            term: TermCaps::default(),
            client: Some("test".into()),
            tty: None,
        },
    );
    loop {
        line.clear();
        assert!(
            reader.read_line(&mut line).expect("frames") > 0,
            "the launcher hung up"
        );
        if let Ok(ToView::Snapshot(s)) = serde_json::from_str::<ToView>(&line) {
            if (s.cols, s.rows) == (cols, rows) {
                return;
            }
        }
    }
}

/// Serialising the typed lines without naming each type.
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).expect("serialise")
        }
    }
}

/// Opens the counter with `--record`, has the agent and the person change
/// it, resizes it, closes it; returns the file.
fn record_a_session(host: &Host, name: &str) -> PathBuf {
    let file = host.scratch().join(format!("{name}.cast"));
    let counter = Path::new(env!("CARGO_MANIFEST_DIR")).join("packages/counter/counter.py");
    host.ok(&[
        "open",
        "--id",
        name,
        "--record",
        &file.to_string_lossy(),
        "--",
        &counter.to_string_lossy(),
    ]);
    let id = format!("hosted:{name}");
    host.wait_screen(&id, "Counter");
    let revision = host.ok(&["describe", &id])["revision"]
        .as_str()
        .expect("revision")
        .to_string();
    host.ok(&[
        "call",
        &id,
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        &revision,
    ]);
    host.ok(&["input", &id, "+"]);
    host.wait_value(&id, 6);
    resize(host, &id, 100, 40);
    wait_for("the resize in the recording", || {
        let text = std::fs::read_to_string(&file).ok()?;
        text.contains("\"r\", \"100x40\"").then_some(())
    });
    host.ok(&["close", &id]);
    host.wait_ended(&id);
    wait_for("the end marker in the recording", || {
        let text = std::fs::read_to_string(&file).ok()?;
        text.contains("\\\"dir\\\":\\\"end\\\"").then_some(())
    });
    file
}

fn recording_holds_screen_timing_resize_and_protocol() -> Result<(), Failed> {
    let host = Host::new();
    let file = record_a_session(&host, "rec");
    let (header, events) = parse(&file);
    assert_eq!(header["version"], 2);
    assert_eq!(
        (header["width"].clone(), header["height"].clone()),
        (120.into(), 30.into())
    );
    let times: Vec<f64> = events
        .iter()
        .map(|e| e[0].as_f64().expect("time"))
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "times go back: {times:?}"
    );
    for e in &events {
        assert!(
            ["o", "r", "m"].contains(&e[1].as_str().unwrap_or("")),
            "{e}"
        );
    }
    let output: String = events
        .iter()
        .filter(|e| e[1] == "o")
        .filter_map(|e| e[2].as_str())
        .collect();
    assert!(output.contains("Counter"), "the screen was not recorded");
    assert!(events.iter().any(|e| e[1] == "r" && e[2] == "100x40"));

    let m = markers(&events);
    let to_tick: Vec<&str> = m
        .iter()
        .filter(|m| m["dir"] == "to_tick")
        .filter_map(|m| m["msg"]["method"].as_str())
        .collect();
    assert_eq!(to_tick.first(), Some(&"tick/describe"), "{to_tick:?}");
    assert!(
        to_tick.contains(&"tick/read") && to_tick.contains(&"tick/call"),
        "{to_tick:?}"
    );
    let call = m
        .iter()
        .find(|m| m["msg"]["method"] == "tick/call")
        .expect("the call");
    assert_eq!(call["msg"]["params"]["tool"], "increment");
    assert_eq!(call["msg"]["params"]["args"]["amount"], 5);
    let updates: Vec<i64> = m
        .iter()
        .filter(|m| m["dir"] == "from_tick" && m["msg"]["method"] == "tick/update")
        .filter_map(|m| m["msg"]["params"]["data"]["value"].as_i64())
        .collect();
    assert_eq!(updates, [5, 6], "the agent's and the person's updates");
    assert!(
        m.iter()
            .any(|m| m["dir"] == "from_tick" && m["msg"]["result"]["value"] == 5),
        "the call's answer"
    );
    assert_eq!(m.last().map(|m| m["dir"].clone()), Some("end".into()));

    // The timeline, as JSON lines (stdout is a pipe).
    let out = host.run(&["replay", "--protocol", &file.to_string_lossy()]);
    assert_eq!(out.code, 0, "{out:#?}");
    let timeline: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    assert_eq!(timeline.len(), m.len() + 1, "markers and the resize");
    assert!(timeline.iter().all(|e| e["t"].is_number()));
    assert!(timeline
        .iter()
        .any(|e| e["dir"] == "resize" && e["msg"] == "100x40"));

    // Played (fast): exactly the output events, then a reset.
    let out = host.run(&["replay", "--speed", "1000", &file.to_string_lossy()]);
    assert_eq!(out.code, 0, "{out:#?}");
    assert_eq!(out.stdout, format!("{output}\u{1b}[0m\u{1b}[?25h\r\n"));
    Ok(())
}

fn record_id_starts_from_the_kept_screen() -> Result<(), Failed> {
    let host = Host::new();
    let counter = Path::new(env!("CARGO_MANIFEST_DIR")).join("packages/counter/counter.py");
    host.ok(&["open", "--id", "live", "--", &counter.to_string_lossy()]);
    host.wait_screen("hosted:live", "Counter");
    host.ok(&["input", "hosted:live", "+++"]);
    host.wait_value("hosted:live", 3);
    host.wait_screen("hosted:live", "seq 3");
    let file = host.scratch().join("live.cast");
    let recorder = host.spawn(&["record", "live", "-o", &file.to_string_lossy()]);
    wait_for("the recording's first event", || {
        let text = std::fs::read_to_string(&file).ok()?;
        (text.lines().count() >= 2).then_some(())
    });
    let (_, events) = parse(&file);
    let first = events[0][2].as_str().expect("output");
    assert_eq!(events[0][1], "o");
    assert!(
        first.contains("seq 3"),
        "the kept screen was not redrawn: {first:?}"
    );
    let revision = host.ok(&["describe", "hosted:live"])["revision"]
        .as_str()
        .expect("rev")
        .to_string();
    host.ok(&[
        "call",
        "hosted:live",
        "reset",
        "{}",
        "--revision",
        &revision,
    ]);
    host.ok(&["close", "hosted:live"]);
    let out = recorder.finish();
    assert_eq!(out.code, 0, "{out:#?}");
    let summary = out.json();
    assert_eq!(summary["ended"], "closed by the person (cli)", "{summary}");
    let (_, events) = parse(&file);
    let m = markers(&events);
    assert!(m
        .iter()
        .any(|m| m["msg"]["method"] == "tick/call" && m["msg"]["params"]["tool"] == "reset"));
    assert!(m
        .iter()
        .any(|m| m["msg"]["method"] == "tick/update" && m["msg"]["params"]["data"]["value"] == 0));
    Ok(())
}

fn bad_input_is_refused_and_changes_nothing() -> Result<(), Failed> {
    let host = Host::new();
    let junk = host.scratch().join("notes.txt");
    std::fs::write(&junk, "just some text\n").expect("write");
    let out = host.run(&["replay", &junk.to_string_lossy()]);
    assert_eq!(out.code, 1, "{out:#?}");
    assert!(out.stderr.contains("asciicast v2"), "{out:#?}");
    let out = host.run(&[
        "replay",
        "--protocol",
        &host.scratch().join("missing.cast").to_string_lossy(),
    ]);
    assert_eq!(out.code, 1, "{out:#?}");

    // Never over an existing file: open refuses before anything starts.
    let counter = Path::new(env!("CARGO_MANIFEST_DIR")).join("packages/counter/counter.py");
    let out = host.run(&[
        "open",
        "--id",
        "x",
        "--record",
        &junk.to_string_lossy(),
        "--",
        &counter.to_string_lossy(),
    ]);
    assert_eq!(out.code, 2, "{out:#?}");
    assert!(out.stderr.contains("already exists"), "{out:#?}");
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), "just some text\n");
    assert!(host.entry("hosted:x").is_none(), "an instance was opened");

    host.ok(&["open", "--id", "y", "--", &counter.to_string_lossy()]);
    let out = host.run(&["record", "y", "-o", &junk.to_string_lossy()]);
    assert_eq!(out.code, 2, "{out:#?}");
    assert_eq!(std::fs::read_to_string(&junk).unwrap(), "just some text\n");
    let out = host.run(&[
        "record",
        "nosuch",
        "-o",
        &host.scratch().join("n.cast").to_string_lossy(),
    ]);
    assert_ne!(out.code, 0, "{out:#?}");
    assert!(!host.scratch().join("n.cast").exists());
    Ok(())
}

/// asciinema from PyPI in a venv cached under the target directory, or why not.
fn asciinema() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let venv = root.join(format!("python-{}", ASCIINEMA.replace("==", "-")));
    // Run as `python -m asciinema`: the venv was built elsewhere and moved,
    // so its scripts' shebangs point at the old place.
    let bin = venv.join("bin/python");
    if venv.join(".complete").is_file() {
        return Ok(bin);
    }
    let building = root.join(format!("python-build-asciinema-{}", std::process::id()));
    let run = |what: &str, command: &mut Command| -> Result<(), String> {
        let out = command.output().map_err(|e| format!("{what}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{what} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    };
    run(
        "python3 -m venv",
        Command::new("python3").arg("-m").arg("venv").arg(&building),
    )?;
    run(
        &format!("pip install {ASCIINEMA}"),
        Command::new(building.join("bin/python")).args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            ASCIINEMA,
        ]),
    )?;
    std::fs::write(building.join(".complete"), ASCIINEMA).map_err(|e| e.to_string())?;
    if std::fs::rename(&building, &venv).is_err() {
        let _ = std::fs::remove_dir_all(&building);
        if !venv.join(".complete").is_file() {
            return Err(format!("cannot move the venv into {}", venv.display()));
        }
    }
    Ok(bin)
}

fn plays_in_asciinema(bin: &Path) -> Result<(), Failed> {
    let host = Host::new();
    let file = record_a_session(&host, "cast");
    let out = Command::new(bin)
        .args(["-m", "asciinema", "cat"])
        .arg(&file)
        .env("HOME", host.scratch())
        .output()
        .map_err(|e| format!("run asciinema: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "asciinema cat failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (_, events) = parse(&file);
    let output: String = events
        .iter()
        .filter(|e| e[1] == "o")
        .filter_map(|e| e[2].as_str())
        .collect();
    assert_eq!(
        stdout, output,
        "asciinema cat printed other than the output events"
    );
    assert!(
        stdout.contains("Counter") && !stdout.contains("tickloop {"),
        "markers leaked"
    );
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = vec![
        Trial::test(
            "recording_holds_screen_timing_resize_and_protocol",
            recording_holds_screen_timing_resize_and_protocol,
        ),
        Trial::test(
            "record_id_starts_from_the_kept_screen",
            record_id_starts_from_the_kept_screen,
        ),
        Trial::test(
            "bad_input_is_refused_and_changes_nothing",
            bad_input_is_refused_and_changes_nothing,
        ),
    ];
    let wanted = args
        .filter
        .as_deref()
        .is_none_or(|f| "recording_plays_in_asciinema".contains(f));
    let asciinema = if wanted && !args.list {
        asciinema()
    } else {
        Err("not asked for".into())
    };
    let trial = match asciinema {
        Ok(bin) => Trial::test("recording_plays_in_asciinema", move || {
            plays_in_asciinema(&bin)
        }),
        Err(why) => {
            eprintln!(
                "recording_plays_in_asciinema is IGNORED: asciinema could not be installed: {why}"
            );
            Trial::test("recording_plays_in_asciinema", move || {
                Err(Failed::from(format!(
                    "asciinema could not be installed: {why}"
                )))
            })
            .with_ignored_flag(true)
        }
    };
    trials.push(trial);
    libtest_mimic::run(&args, trials).exit();
}
