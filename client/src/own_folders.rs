//! Tickloop's own folders, which an option that writes a file the user
//! names (`record -o FILE`, `open --record FILE`, `new NAME`) never writes
//! into: the config folder (`~/.config/tickloop`, where `config.toml`
//! lives), the data folder (`~/.local/share/tickloop`: kept records, the
//! shipped packages, Herdr's plugin) and the runtime directory. A file
//! written there could break the person's next command (a recording named
//! `config.toml`) or pass for a record Tickloop keeps.

use std::path::{Path, PathBuf};

/// Tickloop's folder that `path` is in (or is): what it is for people,
/// and the folder; `None` when it is in none of them. `runtime` is the
/// runtime directory in use. Symbolic links are followed as far as the
/// path exists.
pub fn own_folder(path: &Path, runtime: &Path) -> Option<(&'static str, PathBuf)> {
    let own = [
        (
            "Tickloop's config folder",
            dirs::config_dir().map(|d| d.join("tickloop")),
        ),
        (
            "Tickloop's data folder",
            dirs::data_dir().map(|d| d.join("tickloop")),
        ),
        ("Tickloop's runtime directory", Some(runtime.to_path_buf())),
    ];
    let path = resolved(path);
    own.into_iter().find_map(|(what, folder)| {
        let folder = resolved(&folder?);
        path.starts_with(&folder).then_some((what, folder))
    })
}

/// The error of an option that would write `path` into one of Tickloop's
/// own folders, saying what to do; `None` when it may.
pub fn refuse_own(path: &Path, runtime: &Path, what_file: &str) -> Option<String> {
    let (what, folder) = own_folder(path, runtime)?;
    Some(format!(
        "{} is in {what} ({}); a {what_file} is never written there, so name a file elsewhere",
        path.display(),
        folder.display()
    ))
}

/// `path` with its longest existing ancestor made canonical (symbolic
/// links and `..` resolved), the rest appended as it is.
fn resolved(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(real) = at.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_directory_is_refused_through_a_link_and_elsewhere_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let runtime = dir.path().join("run");
        std::fs::create_dir(&runtime).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&runtime, &link).unwrap();
        let (what, _) = own_folder(&link.join("i").join("new.cast"), &runtime).unwrap();
        assert_eq!(what, "Tickloop's runtime directory");
        let message = refuse_own(&runtime.join("x.cast"), &runtime, "recording").unwrap();
        assert!(message.contains("never written there"), "{message}");
        assert_eq!(own_folder(&dir.path().join("x.cast"), &runtime), None);
        // `..` out of it is not in it.
        assert_eq!(
            own_folder(&runtime.join("..").join("x.cast"), &runtime),
            None
        );
    }
}
