//! The person's settings file, `~/.config/tickloop/config.toml` (here under
//! a private `XDG_CONFIG_HOME`): `history` for `open`, `detach_key` for the
//! views, `clipboard` for pass-through; a flag or the environment wins; a
//! broken file is refused with its path and what is wrong, and nothing
//! starts.

mod common;

use common::tmux::Tmux;
use common::*;
use std::path::PathBuf;

/// A config directory holding `config.toml` with `text`.
fn config_home(host: &Host, text: &str) -> PathBuf {
    let home = host.scratch().join("config-home");
    std::fs::create_dir_all(home.join("tickloop")).expect("config dir");
    std::fs::write(home.join("tickloop").join("config.toml"), text).expect("config file");
    home
}

fn run_with(host: &Host, home: &PathBuf, args: &[&str]) -> std::process::Output {
    host.command(args)
        .env("XDG_CONFIG_HOME", home)
        .output()
        .expect("run tickloop")
}

#[test]
fn history_comes_from_the_config_unless_the_flag_says() {
    let host = Host::new();
    let home = config_home(&host, "history = 7\n");
    let out = run_with(
        &host,
        &home,
        &["open", "--shell", "--id", "a", "--", "sleep", "600"],
    );
    assert!(out.status.success(), "{out:?}");
    let screen = host.ok(&["screen", "shell:a", "--json"]);
    assert_eq!(screen["history_limit"], 7, "{screen}");
    let out = run_with(
        &host,
        &home,
        &[
            "open",
            "--shell",
            "--id",
            "b",
            "--history",
            "9",
            "--",
            "sleep",
            "600",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        host.ok(&["screen", "shell:b", "--json"])["history_limit"],
        9
    );
}

#[test]
fn a_broken_config_is_refused_with_its_path_and_nothing_starts() {
    let host = Host::new();
    let home = config_home(&host, "histroy = 7\n");
    let out = run_with(
        &host,
        &home,
        &["open", "--shell", "--id", "a", "--", "sleep", "600"],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("config.toml") && stderr.contains("histroy"),
        "{stderr}"
    );
    assert!(host.list().is_empty());
}

#[test]
fn the_detach_key_comes_from_the_config() {
    let host = Host::new();
    let home = config_home(&host, "detach_key = \"ctrl+b\"\n");
    let id = host.open_sh("k", "echo ready; exec cat", "ready");
    let tmux = Tmux::start(
        &host,
        100,
        30,
        &format!(
            "XDG_CONFIG_HOME={} {} attach {id}",
            home.display(),
            tickloop_bin()
        ),
    );
    tmux.wait_text("ctrl+b d detaches");
    tmux.send_keys(&["C-b", "d"]);
    tmux.wait_text("ATTACH-EXIT 0");
}
