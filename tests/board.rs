//! The shipped package `board` (a `tickloop-tick` Tick with a ratatui
//! screen), opened by package name from another directory: the agent's
//! calls change it and are saved to the working directory's board file,
//! the screen (drawn on /dev/tty) shows them, keys typed into the terminal
//! change it as the person, and bad calls change nothing.

mod common;

use common::{wait_for, Host};
use serde_json::Value;

fn items(read: &Value) -> Vec<(String, String)> {
    read["data"]["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    (
                        i["text"].as_str().unwrap_or_default().to_string(),
                        i["by"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn board_package_is_shared_by_agent_and_person_and_saved() {
    let host = Host::new();
    let project = host.scratch().join("project");
    std::fs::create_dir_all(&project).expect("project dir");
    let project_s = project.to_string_lossy().into_owned();
    let opened = host.ok(&[
        "open",
        "--package",
        "board",
        "--id",
        "todo",
        "--cwd",
        &project_s,
    ]);
    let id = opened["id"].as_str().expect("id").to_string();
    assert_eq!(id, "hosted:todo");
    let revision = host.ok(&["describe", &id])["revision"]
        .as_str()
        .expect("revision")
        .to_string();

    // The agent adds an item: state, file and screen show it.
    host.ok(&[
        "call",
        &id,
        "add",
        r#"{"text":"write the release notes"}"#,
        "--revision",
        &revision,
    ]);
    let read = host.read(&id);
    assert_eq!(
        items(&read),
        [("write the release notes".into(), "agent".into())]
    );
    let saved = std::fs::read_to_string(project.join(".tickloop-board.json")).expect("board file");
    assert!(saved.contains("write the release notes"), "{saved}");
    host.wait_screen(&id, "write the release notes");

    // Refused calls change nothing: an unknown id, args against the schema.
    let before = host.read(&id);
    let out = host.run(&["call", &id, "done", r#"{"id":99}"#, "--revision", &revision]);
    assert_ne!(out.code, 0, "{out:#?}");
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("no item 99"),
        "{out:#?}"
    );
    let out = host.run(&["call", &id, "add", r#"{"text":7}"#, "--revision", &revision]);
    assert_ne!(out.code, 0, "{out:#?}");
    assert_eq!(host.read(&id)["seq"], before["seq"]);

    // The person adds one with keys in the terminal.
    host.ok(&["input", &id, "a"]);
    host.wait_screen(&id, "new item");
    host.ok(&["input", &id, "buy milk\r"]);
    let read = wait_for("the person's item in the state", || {
        let r = host.read(&id);
        (items(&r).len() == 2).then_some(r)
    });
    assert_eq!(items(&read)[1], ("buy milk".into(), "person".into()));
    host.wait_screen(&id, "buy milk");

    // The agent finishes the first; history (recover_with) lists every change.
    host.ok(&["call", &id, "done", r#"{"id":1}"#, "--revision", &revision]);
    let read = host.read(&id);
    assert_eq!(read["data"]["open"], 1);
    assert_eq!(read["data"]["done"], 1);
    let history = host.ok(&["call", &id, "history", "{}", "--revision", &revision]);
    let text = history.to_string();
    for change in ["\"add\"", "\"done\""] {
        assert!(text.contains(change), "{text}");
    }

    // Closed and opened again in the same directory: the board is kept.
    host.ok(&["close", &id]);
    host.wait_ended(&id);
    let again = host.ok(&[
        "open",
        "--package",
        "board",
        "--id",
        "todo2",
        "--cwd",
        &project_s,
    ]);
    let id2 = again["id"].as_str().expect("id").to_string();
    let read = host.read(&id2);
    assert_eq!(read["data"]["open"], 1, "{read}");
    assert_eq!(read["data"]["done"], 1, "{read}");
}
