//! A small tmpfs mounted over a test's directory, to fill it to the brim
//! (a real ENOSPC, no injection): the full-disk test and the soak's
//! full-disk fault. Mounting needs root (CAP_SYS_ADMIN); where it is
//! refused, [`Tmpfs::mount`] says why, and the caller reports the test
//! ignored or leaves the fault out, saying so.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs mounted over a directory, unmounted (lazily) on drop.
pub struct Tmpfs {
    at: PathBuf,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (`2m`) over `at`; the reason when refused.
    pub fn mount(at: &Path, size: &str) -> Result<Tmpfs, String> {
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(at)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if out.status.success() {
            Ok(Tmpfs {
                at: at.to_path_buf(),
            })
        } else {
            Err(format!(
                "mount -t tmpfs was refused ({}): mounting needs root with CAP_SYS_ADMIN",
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// Why a tmpfs cannot be mounted here, if it cannot.
    pub fn cannot_mount() -> Option<String> {
        let probe = match tempfile::Builder::new()
            .prefix("tl-mount-probe")
            .tempdir_in("/tmp")
        {
            Ok(probe) => probe,
            Err(e) => return Some(format!("cannot make a directory to mount on: {e}")),
        };
        Tmpfs::mount(probe.path(), "64k").err()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a process of the test may still hold a file there.
        let _ = Command::new("umount").arg("-l").arg(&self.at).status();
    }
}

/// Fills the file system of `dir` until the kernel says ENOSPC (blocks,
/// then single bytes, so not even a small file fits); the filler's path,
/// and the error that stopped it (`None` when the filler could not even
/// be created: the disk was full already).
pub fn fill(dir: &Path) -> (PathBuf, Option<std::io::Error>) {
    use std::io::Write;
    let path = dir.join("filler");
    let mut file = match std::fs::File::create(&path) {
        Ok(file) => file,
        Err(e) => return (path, Some(e)),
    };
    let block = vec![0u8; 4096];
    let stopped = loop {
        if let Err(e) = file.write_all(&block) {
            break e;
        }
    };
    while file.write_all(&[0]).is_ok() {}
    (path, Some(stopped))
}
