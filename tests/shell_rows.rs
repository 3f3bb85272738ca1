//! A shell's state where the person looks (issue 50): `tickloop list` on a
//! terminal (a pty made by `script`) and the Monitor's row (in tmux) say a
//! shell's KIND (`bash`, `zsh`, `plain`), its state's SEQ, its working
//! directory and its command: the one running, or the last with its exit
//! status and duration. Real bash and zsh in real PTYs, a plain `sh` beside
//! them; piped, `list`'s JSON keeps its fields and adds `shell_state`.
//!
//! Waits are `tickloop wait` and `run` themselves, or polls of what the
//! terminal shows; `sleep` appears only as the command a shell runs.

mod common;

use common::home::host_with_home;
use common::script_term::ScriptTerm;
use common::tmux::Tmux;
use common::*;
use serde_json::Value;

/// Opens `program` as `shell:NAME` and waits for its first prompt.
fn open_shell(host: &Host, name: &str, program: &[&str]) -> String {
    let mut args = vec!["open", "--shell", "--name", name, "--"];
    args.extend_from_slice(program);
    host.ok(&args);
    let id = format!("shell:{name}");
    host.run(&["wait", &id, "--prompt", "--timeout", "20"])
        .expect(0);
    id
}

/// Three shells as a person leaves them: bash in `project` whose last
/// command exited 3, zsh running `sleep 600`, and a plain `sh`.
fn three_shells(host: &Host) -> std::path::PathBuf {
    let project = host.scratch().join("work").join("project");
    std::fs::create_dir_all(&project).expect("the project folder");
    let bash = open_shell(host, "work", &["bash"]);
    let cd = format!("cd {}", project.display());
    host.run(&["run", &bash, "--timeout", "20", "--", &cd])
        .expect(0);
    let failed = host.run(&["run", &bash, "--timeout", "20", "--", "sh -c 'exit 3'"]);
    assert_eq!(failed.code, 3, "{failed:?}");

    let zsh = open_shell(host, "build", &["zsh"]);
    host.ok(&["input", &zsh, "sleep 600"]);
    host.ok(&["keys", &zsh, "Enter"]);
    wait_for("zsh to run sleep 600", || {
        let data = host.ok(&["read", &zsh])["data"].clone();
        (data["running"]["command"] == "sleep 600").then_some(())
    });

    host.ok(&["open", "--shell", "--name", "plain", "--", "sh"]);
    project
}

/// The table's header on the terminal's screen names each of `columns`.
fn assert_columns(screen: &str, columns: &[&str]) {
    let header = screen
        .lines()
        .find(|l| l.starts_with("ID "))
        .unwrap_or_default();
    for column in columns {
        assert!(
            header.split_whitespace().any(|h| h == *column),
            "no {column}:\n{screen}"
        );
    }
}

/// The line of the terminal's screen that starts with `id`.
fn row_of(screen: &str, id: &str) -> String {
    screen
        .lines()
        .find(|l| l.starts_with(id))
        .unwrap_or_else(|| panic!("no row for {id} in:\n{screen}"))
        .to_string()
}

#[test]
fn list_on_a_terminal_shows_a_shells_directory_and_its_command_with_its_status() {
    let host = host_with_home(&[]);
    three_shells(&host);

    let term = ScriptTerm::start(&host, &[], 250, 20, &format!("{} list", tickloop_bin()));
    let (code, screen) = term.finish();
    assert_eq!(code, 0, "{screen}");
    assert_columns(&screen, &["KIND", "SEQ", "CWD", "COMMAND"]);

    let bash = row_of(&screen, "shell:work");
    assert!(bash.contains(" bash "), "{screen}");
    // The directory keeps its end; the last command its status first.
    assert!(bash.contains("/project"), "{screen}");
    assert!(bash.contains("exit 3 · "), "{screen}");
    assert!(bash.ends_with("sh -c 'exit 3'"), "{screen}");
    // SEQ is the state's, as `read` gives it.
    let seq = host.ok(&["read", "shell:work"])["seq"]
        .as_u64()
        .expect("read's seq");
    assert!(
        bash.split_whitespace().any(|w| w == seq.to_string()),
        "seq {seq}: {screen}"
    );

    let zsh = row_of(&screen, "shell:build");
    assert!(zsh.contains(" zsh "), "{screen}");
    assert!(zsh.contains("running "), "{screen}");
    assert!(zsh.ends_with("· sleep 600"), "{screen}");

    let plain = row_of(&screen, "shell:plain");
    assert!(plain.contains(" plain "), "{screen}");
}

#[test]
fn list_piped_keeps_its_fields_and_adds_the_shells_state() {
    let host = host_with_home(&[]);
    let project = three_shells(&host);
    let list = host.ok(&["list"]);
    let entry = |id: &str| -> Value {
        list.as_array()
            .into_iter()
            .flatten()
            .find(|e| e["id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} in {list}"))
    };
    let bash = entry("shell:work");
    // The fields there were keep their meaning: a shell has no Tick kind
    // and no protocol seq.
    assert_eq!(bash["kind"], Value::Null, "{bash}");
    assert_eq!(bash["seq"], Value::Null, "{bash}");
    let state = &bash["shell_state"];
    assert_eq!(state["cwd"], project.to_string_lossy().as_ref(), "{bash}");
    assert_eq!(state["last"]["command"], "sh -c 'exit 3'", "{bash}");
    assert_eq!(state["last"]["exit"], 3, "{bash}");
    assert!(state["last"]["duration_ms"].is_u64(), "{bash}");
    assert_eq!(
        state["seq"],
        host.ok(&["read", "shell:work"])["seq"],
        "{bash}"
    );
    assert!(!state["last"].to_string().contains("output"), "{bash}");
    let zsh = entry("shell:build");
    assert_eq!(
        zsh["shell_state"]["running"]["command"], "sleep 600",
        "{zsh}"
    );
    let plain = entry("shell:plain");
    assert!(plain.get("shell_state").is_none(), "{plain}");
}

#[test]
fn the_monitors_row_shows_the_same() {
    let host = host_with_home(&[]);
    three_shells(&host);
    let tmux = Tmux::start(
        &host,
        160,
        30,
        &format!("trap '' QUIT INT; {} monitor", tickloop_bin()),
    );
    let screen = wait_for("the Monitor to list the three shells", || {
        let s = tmux.capture();
        (s.contains("shell:work") && s.contains("shell:build") && s.contains("shell:plain"))
            .then_some(s)
    });
    assert_columns(&screen, &["KIND", "SEQ", "CWD", "COMMAND"]);
    let bash = row_of(&screen, "shell:work");
    assert!(bash.contains(" bash "), "{screen}");
    assert!(bash.contains("/project"), "{screen}");
    assert!(bash.contains("exit 3 · "), "{screen}");
    assert!(bash.contains("sh -c 'exit 3'"), "{screen}");
    let zsh = row_of(&screen, "shell:build");
    assert!(zsh.contains(" zsh "), "{screen}");
    assert!(zsh.contains("running "), "{screen}");
    assert!(zsh.contains("sleep 600"), "{screen}");
    assert!(
        row_of(&screen, "shell:plain").contains(" plain "),
        "{screen}"
    );

    // The selected shell's detail line has its directory and command whole.
    let rows: Vec<&str> = screen
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with("shell:"))
        .collect();
    let at = rows
        .iter()
        .position(|l| l.starts_with("shell:work"))
        .expect("the bash row");
    for _ in 0..at {
        tmux.send_keys(&["Down"]);
    }
    let screen = tmux.wait_text("shell:work running ·");
    let detail = screen
        .lines()
        .find(|l| l.starts_with("shell:work running ·"))
        .unwrap_or_default();
    assert!(detail.contains("/work/project · exit 3 · "), "{screen}");
    assert!(detail.contains("sh -c 'exit 3'"), "{screen}");
    tmux.send_keys(&["q"]);
}
