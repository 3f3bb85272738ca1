//! A host whose shells get a home of their own (`HOME` in the test's
//! scratch folder) with the person's files a test writes there, so nothing
//! of this machine's dotfiles changes what they show.

use super::Host;
use std::path::PathBuf;

/// A host whose commands (and so the shells it opens) have `HOME` in its
/// scratch folder, with these files written there first.
pub fn host_with_home(files: &[(&str, &str)]) -> Host {
    let probe = Host::new();
    let home = probe.scratch().join("home");
    // zsh asks a new user to set up a .zshrc when there is none.
    let mut all = vec![(".zshrc", "")];
    all.extend_from_slice(files);
    for (path, text) in all {
        let path = home.join(path);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("make the folder");
        std::fs::write(&path, text).expect("write a person's file");
    }
    probe.with_env(vec![
        ("HOME".into(), home.to_string_lossy().into_owned()),
        // Tickloop's own settings stay where they were.
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").to_string_lossy().into_owned(),
        ),
    ])
}

/// The home of a host made by [`host_with_home`].
pub fn home(host: &Host) -> PathBuf {
    host.scratch().join("home")
}
