//! The shipped Tick packages (`packages/` of the repository), embedded in
//! the executable and installed on first use into the user data directory,
//! `DATA/tickloop/packages/<version>/` (`dirs::data_dir()`), so that an
//! installed `tickloop` lists and opens them from anywhere.
//!
//! A stamp file in that folder holds the version and a digest of the
//! embedded files: when either differs from this executable's (another
//! version, or a rebuilt one), the folder is written anew, executables with
//! their mode bits. It is written beside, then renamed into place, so a
//! reader never sees half a package.

use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One file of a shipped package.
#[derive(Debug, Clone, Copy)]
pub struct ShippedFile {
    /// Its path inside `packages/`, `/`-separated (`counter/SKILL.md`).
    pub path: &'static str,
    pub bytes: &'static [u8],
    /// Whether it is installed with mode 0755 (else 0644).
    pub executable: bool,
}

include!(concat!(env!("OUT_DIR"), "/shipped_files.rs"));

/// The file that says which build wrote an installed folder.
pub const STAMP_FILE: &str = ".tickloop-shipped";

/// This build's version, the name of its folder.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Why the shipped packages could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum ShippedError {
    #[error("cannot find your data directory (set HOME or XDG_DATA_HOME) to install the shipped packages in")]
    NoDataDir,
    #[error("cannot install the shipped packages: {what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("a shipped file has an unsafe path: {0}")]
    BadPath(String),
    #[error("no space left on the device of {path}: the shipped packages were not installed there (nothing was left half-written); free some space and try again")]
    Full { path: PathBuf },
}

impl ShippedError {
    /// This error, or [`ShippedError::Full`] naming `folder` when the disk
    /// (or the quota) was full.
    fn or_full(self, folder: &Path) -> Self {
        match &self {
            ShippedError::Io { source, .. }
                if matches!(source.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT)) =>
            {
                ShippedError::Full {
                    path: folder.to_path_buf(),
                }
            }
            _ => self,
        }
    }
}

/// The names of the shipped packages (their top folders), sorted.
pub fn names() -> Vec<&'static str> {
    let mut names: Vec<&str> = FILES
        .iter()
        .filter_map(|f| f.path.split_once('/').map(|(top, _)| top))
        .collect();
    names.dedup();
    names
}

/// What the stamp of an up-to-date folder holds: the version and a digest
/// of every embedded file (path, mode and bytes).
pub fn stamp() -> String {
    let mut hash = Sha256::new();
    for file in FILES {
        hash.update(file.path.as_bytes());
        hash.update([0, u8::from(file.executable)]);
        hash.update((file.bytes.len() as u64).to_le_bytes());
        hash.update(file.bytes);
    }
    let digest: String = hash.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{VERSION} {digest}\n")
}

/// `DATA/tickloop/packages`, where every version's folder goes.
pub fn default_root() -> Option<PathBuf> {
    dirs::data_dir().map(|d| d.join("tickloop").join("packages"))
}

/// The folder of this version's shipped packages under `root`.
pub fn dir_in(root: &Path) -> PathBuf {
    root.join(VERSION)
}

/// Installs the shipped packages under [`default_root`] unless they are
/// there already; returns their folder.
pub fn ensure_installed() -> Result<PathBuf, ShippedError> {
    ensure_installed_in(&default_root().ok_or(ShippedError::NoDataDir)?)
}

/// Whether `dir` holds exactly this build's packages.
pub fn is_current(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(STAMP_FILE)).is_ok_and(|s| s == stamp())
}

/// Installs the shipped packages into `root/<version>` unless that folder's
/// stamp is this build's; returns the folder.
pub fn ensure_installed_in(root: &Path) -> Result<PathBuf, ShippedError> {
    let target = dir_in(root);
    if is_current(&target) {
        return Ok(target);
    }
    let io = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ShippedError::Io { what, path, source }
    };
    std::fs::create_dir_all(root).map_err(|e| io("create", root)(e).or_full(&target))?;
    let pid = std::process::id();
    let fresh = root.join(format!(".{VERSION}.new-{pid}"));
    let _ = std::fs::remove_dir_all(&fresh);
    let written = write_all(&fresh);
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&fresh);
        return Err(e.or_full(&target));
    }
    // Into place: at once when there is no folder yet; else the old one
    // moves aside first (unless another process made it current meanwhile).
    if std::fs::rename(&fresh, &target).is_err() {
        if is_current(&target) {
            let _ = std::fs::remove_dir_all(&fresh);
            return Ok(target);
        }
        let old = root.join(format!(".{VERSION}.old-{pid}"));
        let _ = std::fs::remove_dir_all(&old);
        let moved = std::fs::rename(&target, &old);
        let placed = std::fs::rename(&fresh, &target);
        if moved.is_ok() {
            let _ = std::fs::remove_dir_all(&old);
        }
        if let Err(source) = placed {
            let _ = std::fs::remove_dir_all(&fresh);
            if !is_current(&target) {
                return Err(ShippedError::Io {
                    what: "move into place",
                    path: target,
                    source,
                });
            }
        }
    }
    Ok(target)
}

/// Writes every embedded file, then the stamp, under `dir`.
fn write_all(dir: &Path) -> Result<(), ShippedError> {
    let io = |what: &'static str, path: &Path| {
        let path = path.to_path_buf();
        move |source| ShippedError::Io { what, path, source }
    };
    std::fs::create_dir_all(dir).map_err(io("create", dir))?;
    for file in FILES {
        let relative = Path::new(file.path);
        if relative.is_absolute()
            || relative
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(ShippedError::BadPath(file.path.to_string()));
        }
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io("create", parent))?;
        }
        std::fs::write(&path, file.bytes).map_err(io("write", &path))?;
        let mode = if file.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
            .map_err(io("set the mode of", &path))?;
    }
    let stamp_path = dir.join(STAMP_FILE);
    std::fs::write(&stamp_path, stamp()).map_err(io("write", &stamp_path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embeds_the_repository_packages() {
        let names = names();
        assert!(
            names.contains(&"counter") && names.contains(&"logwatch"),
            "{names:?}"
        );
        for name in names {
            assert!(
                FILES.iter().any(|f| f.path == format!("{name}/SKILL.md")),
                "{name} has no SKILL.md"
            );
        }
    }

    #[test]
    fn embeds_no_program_source() {
        // packages/board/src is tickloop-board's source, built by cargo.
        let source: Vec<&str> = FILES
            .iter()
            .map(|f| f.path)
            .filter(|p| p.split('/').nth(1) == Some("src") || p.ends_with(".rs"))
            .collect();
        assert!(source.is_empty(), "{source:?}");
        assert!(FILES.iter().any(|f| f.path == "board/SKILL.md"));
    }

    #[test]
    fn installs_with_modes_and_rewrites_a_stale_folder() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = ensure_installed_in(root.path()).expect("installs");
        assert_eq!(dir, root.path().join(VERSION));
        assert!(is_current(&dir));
        for file in FILES {
            let path = dir.join(file.path);
            assert_eq!(std::fs::read(&path).expect("written"), file.bytes);
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
            assert_eq!(
                mode,
                if file.executable { 0o755 } else { 0o644 },
                "{path:?}"
            );
        }
        // Another build's folder (other stamp, a changed file, a leftover
        // file) is written anew.
        let skill = dir.join("counter/SKILL.md");
        std::fs::write(dir.join(STAMP_FILE), "0.0.0 0000\n").expect("stamp");
        std::fs::write(&skill, "changed").expect("change");
        std::fs::write(dir.join("leftover"), "x").expect("leftover");
        let again = ensure_installed_in(root.path()).expect("reinstalls");
        assert_eq!(again, dir);
        assert!(is_current(&dir));
        assert_ne!(std::fs::read_to_string(&skill).expect("read"), "changed");
        assert!(!dir.join("leftover").exists());
        // Nothing left beside it.
        let entries: Vec<_> = std::fs::read_dir(root.path())
            .expect("read root")
            .filter_map(|e| e.ok().map(|e| e.file_name()))
            .collect();
        assert_eq!(entries, vec![std::ffi::OsString::from(VERSION)]);
        // Current: left alone.
        std::fs::write(dir.join("mine"), "x").expect("write");
        ensure_installed_in(root.path()).expect("current");
        assert!(dir.join("mine").exists());
    }
}
