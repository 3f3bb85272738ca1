//! Tickloop's own folders, which an option that writes a recording the
//! user names (`record -o FILE`, `open --record FILE`) never writes into:
//! the config folder (`~/.config/tickloop`, where `config.toml` lives) and
//! the data folder (`~/.local/share/tickloop`: kept records, the shipped
//! packages, Herdr's plugin). A file written there could break the
//! person's next command (a recording named `config.toml`) or pass for a
//! record Tickloop keeps. (`tickloop new` may make a package in
//! `~/.config/tickloop/packages`, where the person's own packages live.)

use std::path::{Path, PathBuf};

/// Tickloop's folder that `path` is in (or is): what it is for people,
/// and the folder; `None` when it is in none of them. Symbolic links are
/// followed as far as the path exists.
pub fn own_folder(path: &Path) -> Option<(&'static str, PathBuf)> {
    let own = [
        (
            "Tickloop's config folder",
            dirs::config_dir().map(|d| d.join("tickloop")),
        ),
        (
            "Tickloop's data folder",
            dirs::data_dir().map(|d| d.join("tickloop")),
        ),
    ];
    own_among(path, own)
}

/// The first of `own` (what it is, its folder) that `path` is in.
fn own_among<const N: usize>(
    path: &Path,
    own: [(&'static str, Option<PathBuf>); N],
) -> Option<(&'static str, PathBuf)> {
    let path = resolved(path);
    own.into_iter().find_map(|(what, folder)| {
        let folder = resolved(&folder?);
        path.starts_with(&folder).then_some((what, folder))
    })
}

/// The error of an option that would write `path` into one of Tickloop's
/// own folders, saying what to do; `None` when it may.
pub fn refuse_own(path: &Path, what_file: &str) -> Option<String> {
    let (what, folder) = own_folder(path)?;
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
    fn a_folder_is_refused_through_a_link_and_elsewhere_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let own = dir.path().join("own");
        std::fs::create_dir(&own).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&own, &link).unwrap();
        let folders = || [("its folder", Some(own.clone()))];
        let (what, _) = own_among(&link.join("i").join("new.cast"), folders()).unwrap();
        assert_eq!(what, "its folder");
        assert_eq!(
            own_among(&own.join("x.cast"), folders()).map(|f| f.0),
            Some("its folder")
        );
        assert_eq!(own_among(&dir.path().join("x.cast"), folders()), None);
        // `..` out of it is not in it.
        assert_eq!(own_among(&own.join("..").join("x.cast"), folders()), None);
    }
}
