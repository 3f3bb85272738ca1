//! Writing a file whole or not at all: the bytes go to a temporary file
//! beside it (`.NAME.PID.N.tmp`, a name no reader of Tickloop's folders
//! takes for a file of its own), which is renamed over the file. A reader
//! sees the old file or the new one, never a part; a full disk leaves the
//! old file as it was (and no temporary file) and says so:
//! [`WriteError::is_full`].
//!
//! A file that must outlive a crash of the machine (the data and config
//! directories: [`Durability::Durable`]) is synced before the rename, and
//! its folder after it. A file of the runtime directory
//! ([`Durability::Volatile`]) is not: that directory is volatile (a tmpfs
//! cleared at logout) and what it holds means nothing once its processes
//! are gone, so the rename alone keeps it whole, without the milliseconds
//! of two `fsync`s on every open (benches/results/cost-2026-12-06-mem.md).
//!
//! Every file Tickloop keeps (an instance's record, last screen and
//! activity, tickhost's pid file, Herdr's view records, the Loop's state,
//! the agents' settings it edits) is written through [`write`]; a file
//! that grows a line at a time (a recording) through [`LineFile`], which
//! keeps it ending with a whole line.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Who may read the file written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 0600: the runtime directory's files, and the records kept of
    /// forgotten instances.
    Private,
    /// The mode the file has now (a person's settings file stays as they
    /// set it); a new file gets the usual 0666 less the umask.
    AsItWas,
}

/// Whether a file is synced to the disk (see the module's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// The runtime directory's files: renamed into place, never synced.
    Volatile,
    /// The data and config directories' files: synced, then renamed, then
    /// the folder synced, so a crash leaves the old file or the new one.
    Durable,
}

/// A file that could not be written; the file is as it was before.
#[derive(Debug, thiserror::Error)]
#[error("{}", self.describe())]
pub struct WriteError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

impl WriteError {
    /// Whether the disk (or the user's quota) is full.
    pub fn is_full(&self) -> bool {
        is_full(&self.source)
    }

    fn describe(&self) -> String {
        if self.is_full() {
            format!("no space left on the device of {}", self.path.display())
        } else {
            format!("cannot write {}: {}", self.path.display(), self.source)
        }
    }

    /// The error, and what was not saved: `no space left on the device of
    /// PATH: the last screen was not saved`.
    pub fn not_saved(&self, what: &str) -> String {
        format!("{self}: {what} was not saved")
    }
}

/// Whether `e` says the disk (or the quota) is full.
pub fn is_full(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

/// Makes each temporary name of this process unique (two threads writing
/// the same file never share one).
static NEXT: AtomicU64 = AtomicU64::new(0);

/// Writes `bytes` to `path` whole or not at all (see the module's text).
pub fn write(
    path: &Path,
    bytes: &[u8],
    mode: Mode,
    durability: Durability,
) -> Result<(), WriteError> {
    write_with(path, bytes, mode, durability, |_| Ok(())).map(drop)
}

/// [`write`], calling `before_rename` on the new file once its bytes are
/// written (and synced when durable) and before it takes the path
/// (tickhost locks its pid file there); returns the file, still open.
pub fn write_with(
    path: &Path,
    bytes: &[u8],
    mode: Mode,
    durability: Durability,
    before_rename: impl FnOnce(&std::fs::File) -> std::io::Result<()>,
) -> Result<std::fs::File, WriteError> {
    let fail = |source| WriteError {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| fail(std::io::Error::other("the path names no file")))?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let permissions = match mode {
        Mode::Private => Some(0o600),
        Mode::AsItWas => std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777),
    };
    let written = (|| {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        if let Some(bits) = permissions {
            options.mode(bits);
        }
        let mut file = options.open(&tmp)?;
        if let Some(bits) = permissions {
            // The umask may have taken bits the file had.
            file.set_permissions(std::fs::Permissions::from_mode(bits))?;
        }
        file.write_all(bytes)?;
        if durability == Durability::Durable {
            file.sync_all()?;
        }
        before_rename(&file)?;
        std::fs::rename(&tmp, path)?;
        Ok(file)
    })();
    let file = match written {
        Ok(file) => file,
        Err(source) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(fail(source));
        }
    };
    // The rename itself is on disk once the folder is synced; a folder
    // that cannot be opened or synced leaves the file written all the same.
    if durability == Durability::Durable {
        if let Ok(folder) = std::fs::File::open(dir) {
            let _ = folder.sync_all();
        }
    }
    Ok(file)
}

/// A file appended to whole lines at a time (a recording): a write that
/// fails part-way (a full disk) is cut back off, so the file always ends
/// where a line ends and every line in it is whole.
pub struct LineFile {
    file: std::fs::File,
    path: PathBuf,
    len: u64,
}

impl LineFile {
    /// Appends to `file` (at `path`), from its current end.
    pub fn new(path: &Path, file: std::fs::File) -> std::io::Result<LineFile> {
        let len = file.metadata()?.len();
        Ok(LineFile {
            file,
            path: path.to_path_buf(),
            len,
        })
    }

    /// Appends `lines` (whole lines) all, or none of them.
    pub fn append(&mut self, lines: &[u8]) -> Result<(), WriteError> {
        use std::io::{Seek, SeekFrom};
        let written = self
            .file
            .seek(SeekFrom::Start(self.len))
            .and_then(|_| self.file.write_all(lines));
        match written {
            Ok(()) => {
                self.len += lines.len() as u64;
                Ok(())
            }
            Err(source) => {
                let _ = self.file.set_len(self.len);
                Err(WriteError {
                    path: self.path.clone(),
                    source,
                })
            }
        }
    }

    /// How many bytes the file holds, all whole lines.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Syncs what was written to the disk.
    pub fn sync(&self) -> Result<(), WriteError> {
        self.file.sync_data().map_err(|source| WriteError {
            path: self.path.clone(),
            source,
        })
    }
}

/// Whether `name` is a temporary file of [`write`] (readers skip them).
pub fn is_temporary(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tl-whole-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch");
        dir
    }

    #[test]
    fn a_file_is_replaced_whole_and_no_temporary_stays() {
        let dir = scratch("replace");
        let path = dir.join("record.json");
        write(&path, b"one", Mode::Private, Durability::Durable).expect("first");
        write(&path, b"two", Mode::Private, Durability::Volatile).expect("second");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        assert_eq!(
            std::fs::metadata(&path).expect("meta").mode() & 0o777,
            0o600
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .expect("dir")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("record.json")]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_person_s_file_keeps_its_mode() {
        let dir = scratch("mode");
        let path = dir.join("settings.json");
        std::fs::write(&path, "{}").expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        write(&path, b"{\"a\":1}", Mode::AsItWas, Durability::Durable).expect("replace");
        assert_eq!(
            std::fs::metadata(&path).expect("meta").mode() & 0o777,
            0o640
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn lines_are_appended_whole() {
        let dir = scratch("lines");
        let path = dir.join("rec.cast");
        let file = std::fs::OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&path)
            .expect("create");
        let mut lines = LineFile::new(&path, file).expect("lines");
        assert!(lines.is_empty());
        lines
            .append(b"{\"a\":1}\n[1,\"o\",\"x\"]\n")
            .expect("append");
        // 8 + 12 bytes: both lines, with their newlines.
        assert_eq!(lines.len(), 20);
        assert_eq!(std::fs::read(&path).expect("read").len(), 20);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_failed_write_leaves_the_file_and_says_where() {
        let dir = scratch("fail");
        let path = dir.join("gone").join("x.json");
        let err = write(&path, b"x", Mode::Private, Durability::Volatile).expect_err("no folder");
        assert!(err.to_string().contains("gone/x.json"), "{err}");
        assert!(!err.is_full());
        assert!(err
            .not_saved("the record")
            .ends_with("the record was not saved"));
        let full = WriteError {
            path: path.clone(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert!(full
            .to_string()
            .starts_with("no space left on the device of"));
        assert!(is_temporary(".x.json.12.0.tmp"));
        assert!(!is_temporary("x.json"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
