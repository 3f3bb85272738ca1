//! The runtime directory loses nothing (issue 39): one folder per
//! instance, so no NAME reaches another instance's files; tickhost's
//! socket, pid file and the whole directory made again when removed, with
//! never a second tickhost; launchers tickhost lost found again, and ended
//! by `shutdown`; the layout before (`l/`) moved into folders once.

mod common;

use common::tmux::Tmux;
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use tickloop_client::runtime_procs::{find, Role};

/// The tickhost processes of this host's runtime directory.
fn tickhosts(host: &Host) -> Vec<u32> {
    find(host.runtime(), Role::Tickhost)
}

/// Exactly one tickhost runs, and it is `pid`.
fn only_tickhost(host: &Host, pid: i32) {
    assert_eq!(tickhosts(host), vec![pid as u32], "one tickhost, the first");
}

/// The bytes of every file in `folder`, by name.
fn contents(folder: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(folder)
        .expect("the folder")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            let bytes = std::fs::read(e.path()).expect("a file");
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn instances_named_like_another_s_files_never_touch_them() {
    let host = Host::new();
    let x = host.ok(&[
        "open",
        "--shell",
        "--id",
        "x",
        "--",
        "sh",
        "-c",
        "echo x-last-words; exit 0",
    ]);
    assert_eq!(x["state"], "ended", "{x}");
    let before_screen = host.screen("shell:x");
    assert!(before_screen.contains("x-last-words"), "{before_screen}");
    let before_activity = host.ok(&["activity", "shell:x"]);
    let folder = host.runtime().join("i/shell-x");
    let before_files = contents(&folder);
    assert!(
        before_files.iter().any(|(n, _)| n == "screen.json"),
        "{before_files:?}"
    );

    let others = [
        "x.screen",
        "x.activity",
        "x.log",
        "x.json",
        "x.sock",
        "x.approvals",
    ];
    for name in others {
        let shown = format!("{name}-is-running");
        host.open_sh(name, &format!("echo {shown}; exec sleep 600"), &shown);
        host.ok(&["input", &format!("shell:{name}"), "typed"]);
        host.ok(&["activity", &format!("shell:{name}")]);
    }
    // x is untouched: its screen, its activity, every byte of its folder.
    let screen = host.run(&["screen", "shell:x"]);
    screen.expect(0);
    assert_eq!(screen.stdout, before_screen);
    assert_eq!(host.ok(&["activity", "shell:x"]), before_activity);
    assert_eq!(contents(&folder), before_files);
    // ... and stays so once they are closed and forgotten.
    for name in others {
        let id = format!("shell:{name}");
        host.ok(&["close", &id]);
        assert_eq!(host.ok(&["close", &id])["forgotten"], true);
    }
    assert_eq!(
        host.run(&["screen", "shell:x"]).expect(0).stdout,
        before_screen
    );
    assert_eq!(host.ok(&["activity", "shell:x"]), before_activity);
    assert_eq!(contents(&folder), before_files);
    let listed: Vec<Value> = host.list();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0]["id"], "shell:x");
}

/// Every instance is listed running, a call and typing work, and a view
/// attaches and shows the screen.
fn everything_works(host: &Host, value_before: i64) {
    let list = host.list();
    let ids: Vec<&str> = list.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids, ["hosted:a", "shell:b"], "{list:#?}");
    assert!(list.iter().all(|e| e["state"] == "running"), "{list:#?}");
    assert_eq!(
        host.ok(&[
            "call",
            "a",
            "increment",
            r#"{"amount":1}"#,
            "--revision",
            "1"
        ]),
        json!({"result": {"value": value_before + 1}})
    );
    host.ok(&["input", "shell:b", "echo typed-$((40+2))\n"]);
    host.wait_screen("shell:b", "typed-42");
    // A view reaches the launcher through its socket, made again.
    let view = Tmux::attach(host, "hosted:a", 100, 30);
    view.wait_text(&format!("value: {}", value_before + 1));
    view.send_keys(&["C-\\", "d"]);
    view.wait_text("ATTACH-EXIT 0");
    host.ok(&["input", "shell:b", "clear\n"]);
}

#[test]
fn the_socket_and_the_whole_runtime_directory_come_back_with_one_tickhost() {
    let host = Host::new();
    host.open_counter("a");
    host.open_bash("b");
    host.wait_screen("shell:b", "bash-");
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    everything_works(&host, 0);

    // The socket removed, as a tmp cleaner does.
    std::fs::remove_file(host.runtime().join("tickhost.sock")).expect("rm the socket");
    everything_works(&host, 1);
    only_tickhost(&host, tickhost);
    assert_eq!(host.tickhost_pid(), Some(tickhost));

    // The whole directory removed, as logout does.
    std::fs::remove_dir_all(host.runtime()).expect("rm -rf the runtime directory");
    everything_works(&host, 2);
    only_tickhost(&host, tickhost);
    assert_eq!(host.tickhost_pid(), Some(tickhost));
    // The launchers made their folders, sockets and records again.
    for folder in ["i/hosted-a", "i/shell-b"] {
        let folder = host.runtime().join(folder);
        wait_for(&format!("{} made again", folder.display()), || {
            (folder.join("sock").exists() && folder.join("record.json").exists()).then_some(())
        });
    }

    // And a tickhost started now (the old one killed) finds them from
    // their records.
    // SAFETY: kill(2) on the tickhost of this test.
    assert_eq!(unsafe { libc::kill(tickhost, libc::SIGKILL) }, 0);
    wait_gone(tickhost, "the killed tickhost");
    everything_works(&host, 3);
    assert_eq!(tickhosts(&host).len(), 1);
}

#[test]
fn launchers_lost_with_their_files_are_found_again_and_shutdown_ends_them() {
    let host = Host::new();
    host.open_counter("a");
    host.open_bash("b");
    host.wait_screen("shell:b", "bash-");
    let pids: Vec<i32> = host
        .list()
        .iter()
        .flat_map(|e| [int(&e["pid"], "pid"), int(&e["launcher_pid"], "launcher")])
        .map(|p| p as i32)
        .collect();
    // tickhost killed, then its directory removed: nothing on disk names
    // the launchers any more.
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: kill(2) on the tickhost of this test.
    assert_eq!(unsafe { libc::kill(tickhost, libc::SIGKILL) }, 0);
    wait_gone(tickhost, "the killed tickhost");
    std::fs::remove_dir_all(host.runtime()).expect("rm -rf the runtime directory");

    // A new tickhost finds them by their processes.
    everything_works(&host, 0);
    assert_eq!(tickhosts(&host).len(), 1);

    // Lost again, and `shutdown` with no tickhost running ends them.
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(tickhost, libc::SIGKILL) }, 0);
    wait_gone(tickhost, "the second tickhost");
    std::fs::remove_dir_all(host.runtime()).expect("rm -rf again");
    let out = host.ok(&["shutdown"]);
    assert_eq!(
        out,
        json!({"shutdown": true, "closed": 2, "was_running": false})
    );
    for pid in pids {
        wait_gone(pid, "a Tick or launcher after shutdown");
    }
    host.wait_nothing_left();
}

#[test]
fn shutdown_ends_a_launcher_that_tickhost_had_lost() {
    let host = Host::new();
    host.open_counter("a");
    // tickhost killed and the record of `a` removed: a new tickhost does
    // not know `a` from its files... (the process is found all the same,
    // and ended).
    let launcher = int(&host.entry("hosted:a").expect("a")["launcher_pid"], "pid") as i32;
    let tick = int(&host.entry("hosted:a").expect("a")["pid"], "pid") as i32;
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: kill(2) on the tickhost of this test.
    assert_eq!(unsafe { libc::kill(tickhost, libc::SIGKILL) }, 0);
    wait_gone(tickhost, "the killed tickhost");
    std::fs::remove_dir_all(host.runtime().join("i")).expect("rm -rf i/");
    let out = host.ok(&["shutdown"]);
    assert_eq!(out["closed"], 1, "{out}");
    wait_gone(launcher, "the lost launcher");
    wait_gone(tick, "its Tick");
}

#[test]
fn files_of_the_layout_before_are_moved_into_folders_once() {
    let host = Host::new();
    host.open_counter("a");
    host.ok(&[
        "call",
        "a",
        "increment",
        r#"{"amount":5}"#,
        "--revision",
        "1",
    ]);
    let ended = host.ok(&[
        "open",
        "--shell",
        "--id",
        "b.screen",
        "--",
        "sh",
        "-c",
        "echo b-words; exit 0",
    ]);
    assert_eq!(ended["state"], "ended");
    let tickhost = host.tickhost_pid().expect("tickhost.pid");
    // SAFETY: kill(2) on the tickhost of this test.
    assert_eq!(unsafe { libc::kill(tickhost, libc::SIGKILL) }, 0);
    wait_gone(tickhost, "the killed tickhost");
    // Put the files where the layout before had them.
    let i = host.runtime().join("i");
    let l = host.runtime().join("l");
    std::fs::create_dir(&l).expect("l/");
    for (folder, stem) in [
        ("hosted-a", "hosted-a"),
        ("shell-b.screen", "shell-b.screen"),
    ] {
        for (new, old) in [
            ("sock", "sock"),
            ("record.json", "json"),
            ("launcher.log", "log"),
            ("screen.json", "screen.json"),
            ("activity.json", "activity.json"),
        ] {
            let from = i.join(folder).join(new);
            if from.exists() {
                std::fs::rename(&from, l.join(format!("{stem}.{old}"))).expect("move");
            }
        }
        std::fs::remove_dir(i.join(folder)).expect("the folder emptied");
    }

    let list = host.list();
    assert_eq!(list.len(), 2, "{list:#?}");
    assert_eq!(host.entry("hosted:a").expect("a")["state"], "running");
    assert_eq!(host.read("a")["data"]["value"], 5);
    assert_eq!(
        host.ok(&[
            "call",
            "a",
            "increment",
            r#"{"amount":1}"#,
            "--revision",
            "1"
        ]),
        json!({"result": {"value": 6}})
    );
    assert!(host.screen("shell:b.screen").contains("b-words"));
    assert!(!l.exists(), "l/ is gone once moved");
    assert!(i.join("hosted-a/sock").exists());
    assert!(i.join("shell-b.screen/screen.json").exists());
}
