//! `run` never waits in a pager (issue 50): the command an agent runs in
//! a person's bash, zsh or fish gets `PAGER`, `GIT_PAGER`, `MANPAGER`...
//! set to `cat` by the shell's integration, for that command only; the
//! person's own commands keep their pager, and what was typed is exactly
//! the agent's command. A command still in a pager or a full-screen
//! program at its timeout is answered with what holds the terminal and
//! the keys that leave it.

mod common;

use common::home::host_with_home;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

const SHELLS: [&str; 3] = ["bash", "zsh", "fish"];

/// A git repository of `commits` empty commits in `dir`.
fn repository(dir: &Path, commits: usize) {
    std::fs::create_dir_all(dir).expect("the repository's folder");
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.org"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", dir)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    for n in 1..=commits {
        git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("commit {n}"),
        ]);
    }
}

/// A host whose bash, zsh and fish have `less` as the person's pager.
fn host_with_pagers() -> Host {
    host_with_home(&[
        (".bashrc", "export PAGER=less\nexport GIT_PAGER=less\n"),
        (".zshrc", "export PAGER=less\nexport GIT_PAGER=less\n"),
        (
            ".config/fish/config.fish",
            "set -gx PAGER less\nset -gx GIT_PAGER less\n",
        ),
    ])
}

fn open_shell(host: &Host, shell: &str, cwd: &Path) -> String {
    let cwd = cwd.to_string_lossy();
    host.ok(&[
        "open", "--shell", "--name", shell, "--cwd", &cwd, "--", shell,
    ]);
    let id = format!("shell:{shell}");
    host.run(&["wait", &id, "--prompt", "--timeout", "20"])
        .expect(0);
    id
}

/// `tickloop run ID --timeout SECONDS -- COMMAND` (piped: JSON).
fn run(host: &Host, id: &str, timeout: &str, command: &str) -> (Out, Value) {
    let out = host.run(&["run", id, "--timeout", timeout, "--", command]);
    let value = serde_json::from_str(out.stdout.trim()).unwrap_or(Value::Null);
    (out, value)
}

/// The last command the shell ran, from its state.
fn last_command(host: &Host, id: &str) -> Value {
    let state = host.read(id)["data"].clone();
    state["commands"]
        .as_array()
        .and_then(|c| c.last())
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn run_git_log_in_a_repository_of_120_commits_returns_the_log_and_the_next_run_works() {
    let host = host_with_pagers();
    let repo = host.scratch().join("repo");
    repository(&repo, 120);
    for shell in SHELLS {
        let id = open_shell(&host, shell, &repo);
        let (out, v) = run(&host, &id, "30", "git log --format=%s");
        assert_eq!(out.code, 0, "{shell}: {out:?}");
        assert_eq!(v["timed_out"], Value::Null, "{shell}: {v}");
        // Typed exactly as the agent asked.
        assert_eq!(v["command"]["command"], "git log --format=%s", "{shell}");
        let log: Vec<&str> = v["command"]["output"]
            .as_str()
            .unwrap_or_default()
            .lines()
            .collect();
        assert_eq!(log.len(), 120, "{shell}: {log:?}");
        assert_eq!((log[0], log[119]), ("commit 120", "commit 1"), "{shell}");

        let (out, v) = run(
            &host,
            &id,
            "30",
            "echo \"[$PAGER][$GIT_PAGER][$MANPAGER][$SYSTEMD_PAGER]\"",
        );
        assert_eq!(out.code, 0, "{shell}: {out:?}");
        assert_eq!(v["command"]["output"], "[cat][cat][cat][cat]\n", "{shell}");

        // The person's own command, typed after: their pager is back.
        host.ok(&[
            "input",
            &id,
            "echo \"mine [$PAGER][$GIT_PAGER][$MANPAGER]\"\r",
        ]);
        host.run(&["wait", &id, "--prompt", "--timeout", "20"])
            .expect(0);
        assert_eq!(
            last_command(&host, &id)["output"],
            "mine [less][less][]\n",
            "{shell}"
        );
    }
}

#[test]
fn a_run_still_in_a_pager_at_its_timeout_names_it_and_the_keys_that_leave_it() {
    let host = host_with_pagers();
    let text = host.scratch().join("long.txt");
    let lines: Vec<String> = (1..=500).map(|n| format!("line {n}")).collect();
    std::fs::write(&text, lines.join("\n")).expect("a long file");
    let text = text.to_string_lossy();
    for shell in SHELLS {
        let id = open_shell(&host, shell, host.scratch());
        // The agent asked for a pager itself: it waits for keys.
        let (out, v) = run(&host, &id, "3", &format!("less {text}"));
        assert_eq!(out.code, 124, "{shell}: {out:?}");
        assert_eq!(v["timed_out"], true, "{shell}: {v}");
        assert_eq!(
            v["foreground"],
            serde_json::json!({"program": "less", "kind": "pager", "keys": ["q"]}),
            "{shell}: {v}"
        );
        host.ok(&["keys", &id, "q"]);
        host.run(&["wait", &id, "--prompt", "--timeout", "20"])
            .expect(0);
        let (out, v) = run(&host, &id, "20", "echo next");
        assert_eq!(v["command"]["output"], "next\n", "{shell}: {v}");
        assert_eq!(out.code, 0, "{shell}: {out:?}");
    }
    // What the CLI says at the timeout, in words.
    let id = "shell:bash";
    let (out, _) = run(&host, id, "3", &format!("less {text}"));
    assert_eq!(out.code, 124);
    assert!(
        out.stderr
            .contains("less (a pager) holds the terminal, waiting for keys; the keys q leave it: `tickloop keys shell:bash q`"),
        "{}",
        out.stderr
    );
    host.ok(&["keys", id, "q"]);
}
