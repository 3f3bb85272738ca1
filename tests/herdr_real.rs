//! The one test that needs a real Herdr (`herdr` on PATH): `tickloop herdr
//! install` links the plugin into a real Herdr's registry. CI cannot run
//! Herdr, so there it is reported *ignored* (never passed); the strict
//! stand-in of `tests/herdr.rs`, which validates every request against
//! Herdr's own schema, stands in for it.

mod common;

use common::optional::{self, Case};
use common::{run_prepared, Host};
use std::path::PathBuf;
use std::process::Command;

fn real_herdr() -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("herdr"))
        .find(|p| p.is_file())
}

fn main() {
    let missing = real_herdr().is_none().then(|| {
        "a_real_herdr_links_the_plugin_when_installed needs a real `herdr` on PATH".to_string()
    });
    optional::run(
        vec![Case {
            name: "a_real_herdr_links_the_plugin_when_installed",
            body: a_real_herdr_links_the_plugin_when_installed,
        }],
        missing,
    )
}

fn a_real_herdr_links_the_plugin_when_installed() {
    let real = real_herdr().expect("herdr on PATH");
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
    run_prepared(cmd, &["herdr", "install"]).expect(0);
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
