//! `artifact:` Ticks end to end (issue 16): a Tick written as a file in the
//! test's scratch directory, opened with `open --artifact`, and rewritten
//! while a view (`tickloop attach` in tmux) stays attached: each save starts
//! the new version on the same terminal (views count stays 1, the pane shows
//! it), the new catalog refuses a call of the old revision (-32004), a
//! version that does not start is listed `failed` with its generation until
//! the next save fixes it, an editor's write-then-rename save is one reload,
//! `tickloop reload` forces one, and a call in flight at a reload gets the
//! session end's unknown outcome.

mod common;

use common::tmux::Tmux;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

const ID: &str = "artifact:board";

/// A small Tick (standard library only): it draws `BOARD <title>` on its
/// terminal and offers `bump` (mutating, answers the new count), `hang`
/// (mutating, never answers) and `crash` (answers, then exits 3).
fn board(title: &str, revision: &str) -> String {
    format!(
        r#"#!/usr/bin/env python3
import json, os, sys
TITLE = {title:?}
REVISION = {revision:?}
count = 0
try:
    tty = os.open("/dev/tty", os.O_WRONLY | os.O_NOCTTY)
    os.write(tty, ("\x1b[2J\x1b[H" + "BOARD " + TITLE + "\r\n").encode())
except OSError:
    pass

def send(**frame):
    sys.stdout.write(json.dumps(dict(jsonrpc="2.0", **frame)) + "\n")
    sys.stdout.flush()

TOOLS = [
    {{"name": "bump", "description": "Add one.", "mutates": True,
      "input_schema": {{"type": "object", "additionalProperties": False}}}},
    {{"name": "hang", "description": "Never answer.", "mutates": True,
      "input_schema": {{"type": "object", "additionalProperties": False}}}},
    {{"name": "crash", "description": "Answer, then exit 3.", "mutates": True,
      "input_schema": {{"type": "object", "additionalProperties": False}}}},
]

for line in sys.stdin:
    request = json.loads(line)
    rid, method = request.get("id"), request.get("method")
    if method == "tick/describe":
        send(id=rid, result={{"protocol": 3, "kind": "test.board", "title": TITLE,
                              "revision": REVISION, "tools": TOOLS}})
    elif method == "tick/read":
        send(id=rid, result={{"seq": 0, "data": {{"count": count}}}})
    elif method == "tick/call":
        params = request.get("params", {{}})
        if params.get("revision") != REVISION:
            send(id=rid, error={{"code": -32004, "message": "stale revision"}})
        elif params.get("tool") == "bump":
            count += 1
            send(id=rid, result={{"count": count}})
        elif params.get("tool") == "crash":
            send(id=rid, result={{"crashing": True}})
            os._exit(3)
"#
    )
}

/// Writes `text` to `path` in one go (as `echo > PATH` would).
fn save(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
}

/// An editor's save: the new text into a temporary file beside `path`,
/// then renamed over it.
fn editor_save(path: &Path, text: &str) {
    let temp = path.with_file_name(".board.py.tmp");
    save(&temp, text);
    std::fs::rename(&temp, path).expect("renaming the temporary file over the artifact");
}

fn artifact_path(host: &Host) -> PathBuf {
    host.scratch().join("board.py")
}

/// Waits until `list` shows generation `generation` of the board in
/// `state`; returns its entry.
fn wait_generation(host: &Host, generation: u64, state: &str) -> Value {
    wait_for(
        &format!("{ID} generation {generation} to be {state}"),
        || {
            let entry = host.entry(ID)?;
            (entry["generation"] == generation && entry["state"] == state).then_some(entry)
        },
    )
}

#[test]
fn saves_reload_the_artifact_under_an_attached_view() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, &board("Board one", "r1"));
    let path_arg = path.to_string_lossy().into_owned();
    let opened = host.ok(&["open", "--artifact", &path_arg]);
    assert_eq!(opened["id"], ID, "{opened}");
    assert_eq!(opened["state"], "running", "{opened}");
    assert_eq!(opened["generation"], 1, "{opened}");
    assert_eq!(opened["revision"], "r1", "{opened}");
    let entry = wait_generation(&host, 1, "running");
    assert_eq!(
        entry["cwd"].as_str().map(PathBuf::from),
        Some(host.scratch().to_path_buf()),
        "the artifact runs in its directory: {entry}"
    );
    // A bare name resolves to the artifact.
    assert_eq!(host.ok(&["describe", "board"])["title"], "Board one");

    let tmux = Tmux::attach(&host, ID, 80, 24);
    tmux.wait_text("BOARD Board one");
    wait_for("one view attached", || {
        (host.entry(ID)?["views"] == 1).then_some(())
    });

    // 1. A good change: a new title and revision.
    save(&path, &board("Board two", "r2"));
    let entry = wait_generation(&host, 2, "running");
    assert_eq!(entry["revision"], "r2", "{entry}");
    assert_eq!(entry["failed"], Value::Null, "{entry}");
    tmux.wait_text("BOARD Board two");
    assert_eq!(host.entry(ID).expect("listed")["views"], 1);
    assert_eq!(host.ok(&["describe", ID])["revision"], "r2");
    let stale = host.run(&["call", ID, "bump", "{}", "--revision", "r1"]);
    stale.expect(3);
    assert_eq!(stale.json()["error"]["code"], -32004, "{stale:#?}");
    assert_eq!(
        host.ok(&["call", ID, "bump", "{}", "--revision", "r2"])["result"]["count"],
        1
    );

    // 2. A syntax error: listed failed with its generation and reason, its
    // error on the screen, the view still attached, nothing restarted.
    save(&path, "#!/usr/bin/env python3\nthis is not python (\n");
    let entry = wait_generation(&host, 3, "failed");
    let reason = entry["failed"].as_str().unwrap_or_default().to_string();
    assert!(
        !reason.is_empty(),
        "a failed generation has a reason: {entry}"
    );
    assert_eq!(entry["revision"], Value::Null, "{entry}");
    tmux.wait_text("SyntaxError");
    tmux.wait_text("generation 3 failed");
    assert_eq!(host.entry(ID).expect("listed")["views"], 1);
    let refused = host.run(&["call", ID, "bump", "{}", "--revision", "r2"]);
    assert_ne!(refused.code, 0, "{refused:#?}");

    // 3. The fix.
    save(&path, &board("Board four", "r4"));
    let entry = wait_generation(&host, 4, "running");
    assert_eq!(entry["revision"], "r4", "{entry}");
    assert_eq!(entry["failed"], Value::Null, "{entry}");
    tmux.wait_text("BOARD Board four");
    assert_eq!(host.entry(ID).expect("listed")["views"], 1);
    assert_eq!(host.ok(&["describe", ID])["title"], "Board four");

    // An editor's save (write a temporary file, rename it over the
    // artifact) is one reload: the save after it is generation 6, not 7.
    editor_save(&path, &board("Board five", "r5"));
    let entry = wait_generation(&host, 5, "running");
    assert_eq!(entry["revision"], "r5", "{entry}");
    editor_save(&path, &board("Board six", "r6"));
    let entry = wait_generation(&host, 6, "running");
    assert_eq!(entry["revision"], "r6", "{entry}");
    tmux.wait_text("BOARD Board six");

    // `reload` forces one, and answers with the new generation's status.
    let reloaded = host.ok(&["reload", ID]);
    assert_eq!(reloaded["generation"], 7, "{reloaded}");
    assert_eq!(reloaded["revision"], "r6", "{reloaded}");
    assert_eq!(reloaded["state"], "running", "{reloaded}");
    let entry = wait_generation(&host, 7, "running");
    assert_eq!(entry["views"], 1, "{entry}");

    host.ok(&["close", ID]);
    host.wait_ended(ID);
}

#[test]
fn a_call_in_flight_at_a_reload_is_an_unknown_outcome() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, &board("Board one", "r1"));
    let path_arg = path.to_string_lossy().into_owned();
    host.ok(&["open", "--artifact", &path_arg, "--id", "board"]);
    let call = host.spawn(&["call", ID, "hang", "{}", "--revision", "r1"]);
    wait_for("the hanging call to be in flight", || {
        (host.entry(ID)?["calls_in_flight"] == 1).then_some(())
    });
    save(&path, &board("Board two", "r2"));
    let out = call.finish();
    out.expect(5);
    assert!(
        out.json()["unknown"]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("reloaded")),
        "{out:#?}"
    );
    let entry = wait_generation(&host, 2, "running");
    assert_eq!(entry["revision"], "r2", "{entry}");
    assert_eq!(entry["calls_in_flight"], 0, "{entry}");
}

#[test]
fn an_artifact_that_fails_from_the_start_is_opened_failed_and_fixed_by_a_save() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, "import sys\nsys.exit(3)\n");
    let path_arg = path.to_string_lossy().into_owned();
    let opened = host.ok(&["open", "--artifact", &path_arg]);
    assert_eq!(opened["state"], "failed", "{opened}");
    assert_eq!(opened["generation"], 1, "{opened}");
    assert!(
        opened["failed"]
            .as_str()
            .is_some_and(|r| r.contains("status 3")),
        "{opened}"
    );
    save(&path, &board("Board fixed", "r2"));
    let entry = wait_generation(&host, 2, "running");
    assert_eq!(entry["title"], "Board fixed", "{entry}");
}

#[test]
fn watch_marks_the_first_state_of_a_new_version() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, &board("Board one", "r1"));
    let path_arg = path.to_string_lossy().into_owned();
    host.ok(&["open", "--artifact", &path_arg]);
    let mut watch = host.watch(&[ID]);
    let first = watch.next();
    assert_eq!(first["instance"], ID, "{first}");
    assert_eq!(first["reloaded"], Value::Null, "{first}");
    save(&path, &board("Board two", "r2"));
    let marked = watch.next();
    assert_eq!(marked["instance"], ID, "{marked}");
    assert_eq!(marked["reloaded"], 2, "{marked}");
    assert_eq!(marked["seq"], 0, "{marked}");
    assert_eq!(marked["data"]["count"], 0, "{marked}");
}

#[test]
fn a_version_that_stops_after_starting_is_started_again_and_counted() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, &board("Board one", "r1"));
    let path_arg = path.to_string_lossy().into_owned();
    host.ok(&["open", "--artifact", &path_arg]);
    for restarts in 1..=2 {
        host.ok(&["call", ID, "crash", "{}", "--revision", "r1"]);
        let entry = wait_for(&format!("{ID} restarted {restarts} times"), || {
            let e = host.entry(ID)?;
            (e["restarts"] == restarts && e["state"] == "running").then_some(e)
        });
        // The same version: the same generation, a new session.
        assert_eq!(entry["generation"], 1, "{entry}");
        assert_eq!(entry["failed"], Value::Null, "{entry}");
        assert_eq!(host.ok(&["describe", ID])["revision"], "r1");
    }
}

/// `--watch GLOB`: a save of another file the artifact reads (its data, a
/// module) starts a new version too, even though the artifact itself did
/// not change.
#[test]
fn a_save_of_a_watched_file_starts_a_new_version() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, &board("Board one", "r1"));
    let data = host.scratch().join("cards.json");
    save(&data, "[]");
    let path_arg = path.to_string_lossy().into_owned();
    host.ok(&["open", "--artifact", &path_arg, "--watch", "*.json"]);
    wait_generation(&host, 1, "running");
    save(&data, r#"["first card"]"#);
    wait_generation(&host, 2, "running");
    // Another save of the watched file, another version.
    save(&data, r#"["first card", "second"]"#);
    let entry = wait_generation(&host, 3, "running");
    assert_eq!(entry["title"], "Board one", "{entry}");
}

#[test]
fn a_watch_pattern_that_is_not_a_glob_is_refused_before_anything_starts() {
    let host = Host::new();
    let path = artifact_path(&host);
    save(&path, &board("Board one", "r1"));
    let path_arg = path.to_string_lossy().into_owned();
    let out = host.run(&["open", "--artifact", &path_arg, "--watch", "lib/[.py"]);
    let error = out.expect_error(2, "bad_request");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("is not a glob pattern")),
        "{error}"
    );
    assert!(host.entry(ID).is_none());
    // --watch needs --artifact.
    host.run(&["open", "--watch", "*.json", "--", "true"])
        .expect(2);
}
