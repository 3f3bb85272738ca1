//! `artifact:` instances: how the file is run (its shebang, or `python3`
//! for a `.py` without one), what of it was started (a digest, so a save
//! that changes nothing starts nothing), and the `notify` watch on its
//! directory that tells the instance loop the file may have changed.
//!
//! The directory is watched, not the file, and events are filtered on the
//! file's name: an editor that writes a temporary file and renames it over
//! the artifact replaces the inode a file watch would follow. The instance
//! loop debounces what this sends ([`DEBOUNCE`] after the last event).

use notify::{EventKind, RecursiveMode, Watcher as _};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long after the last change of the file its new version starts.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// The file, as read for one start.
#[derive(Debug, Clone)]
pub struct Version {
    /// What to run: the interpreter (with its one shebang argument, if
    /// any), then the file.
    pub argv: Vec<String>,
    /// A digest of the file's bytes.
    pub digest: u64,
}

/// Reads the artifact at `path` and works out how to run it.
pub fn read_version(path: &Path) -> Result<Version, String> {
    let bytes = std::fs::read(path)
        .map_err(|e| format!("cannot read the artifact {}: {e}", path.display()))?;
    let argv = argv_of(path, &bytes)?;
    Ok(Version {
        argv,
        digest: digest(&bytes),
    })
}

/// A digest of the file's bytes, or `None` when it cannot be read now
/// (between an editor's remove and rename, say).
pub fn current_digest(path: &Path) -> Option<u64> {
    std::fs::read(path).ok().map(|bytes| digest(&bytes))
}

fn digest(bytes: &[u8]) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    hasher.finish()
}

/// The argv that runs the file: `#!INTERP [ARG]` as the kernel reads it
/// (the rest of the line after the interpreter is one argument), else
/// `python3` for a `.py`; the file's path last.
fn argv_of(path: &Path, bytes: &[u8]) -> Result<Vec<String>, String> {
    let file = path.to_string_lossy().into_owned();
    if let Some(rest) = bytes.strip_prefix(b"#!") {
        let line = rest.split(|b| *b == b'\n').next().unwrap_or_default();
        let line = String::from_utf8_lossy(line);
        let line = line.trim();
        let mut argv = match line.split_once(char::is_whitespace) {
            Some((interp, arg)) => vec![interp.to_string(), arg.trim().to_string()],
            None => vec![line.to_string()],
        };
        if argv[0].is_empty() {
            return Err(format!(
                "the artifact {}'s first line #! names no interpreter; write e.g. #!/usr/bin/env python3",
                path.display()
            ));
        }
        argv.push(file);
        return Ok(argv);
    }
    if path.extension().is_some_and(|e| e == "py") {
        return Ok(vec!["python3".to_string(), file]);
    }
    Err(format!(
        "the artifact {} has no #! line, and is not a .py; start it with e.g. #!/usr/bin/env python3",
        path.display()
    ))
}

/// The watch on an artifact's directory; dropping it stops the watch.
pub struct Watch {
    _watcher: notify::RecommendedWatcher,
}

/// What changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The artifact's own file.
    Artifact,
    /// A file matching one of the `--watch` patterns.
    Watched,
}

/// The `--watch` patterns as one matcher, or why one is not a pattern.
pub fn compile_globs(patterns: &[String]) -> Result<globset::GlobSet, String> {
    let mut set = globset::GlobSetBuilder::new();
    for pattern in patterns {
        let glob = globset::GlobBuilder::new(pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| {
                format!("--watch {pattern:?} is not a glob pattern ({e}); patterns are relative to the artifact's directory, like '*.json' or 'lib/**/*.py'")
            })?;
        set.add(glob);
    }
    set.build()
        .map_err(|e| format!("the --watch patterns cannot be used: {e}"))
}

/// Watches the directory of `path` (and below it, when a pattern reaches
/// into subdirectories); a [`Change`] arrives on the receiver after each
/// event that touches a file of `path`'s name (created, written, renamed
/// onto or away, removed), or a file matching `patterns` (relative to that
/// directory). Reads (the interpreter opening the file) are not changes.
pub fn watch(
    path: &Path,
    patterns: &[String],
) -> Result<(Watch, mpsc::UnboundedReceiver<Change>), String> {
    let globs = compile_globs(patterns)?;
    let recursive = patterns.iter().any(|p| p.contains('/'));
    let dir = path
        .parent()
        .ok_or_else(|| format!("the artifact {} has no directory", path.display()))?
        .to_path_buf();
    let name = path
        .file_name()
        .ok_or_else(|| format!("the artifact {} has no file name", path.display()))?
        .to_os_string();
    let (tx, rx) = mpsc::unbounded_channel();
    let watched_dir = dir.clone();
    let mut watcher =
        notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            Ok(event) => {
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                let ours = event.paths.iter().any(|p: &PathBuf| {
                    (!recursive || p.parent() == Some(watched_dir.as_path()))
                        && p.file_name() == Some(name.as_os_str())
                });
                let matched = !globs.is_empty()
                    && event.paths.iter().any(|p: &PathBuf| {
                        p.strip_prefix(&watched_dir)
                            .is_ok_and(|relative| globs.is_match(relative))
                    });
                if ours {
                    let _ = tx.send(Change::Artifact);
                } else if matched {
                    let _ = tx.send(Change::Watched);
                }
            }
            // A lost event (an overflowed queue) may have been ours: the
            // artifact's bytes decide.
            Err(_) => {
                let _ = tx.send(Change::Artifact);
            }
        })
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    let mode = if recursive {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    };
    watcher
        .watch(&dir, mode)
        .map_err(|e| format!("cannot watch {}: {e}", dir.display()))?;
    Ok((Watch { _watcher: watcher }, rx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argv_from_shebang_or_py() {
        let p = Path::new("/d/a.py");
        assert_eq!(
            argv_of(p, b"#!/usr/bin/env python3\nx").unwrap(),
            vec!["/usr/bin/env", "python3", "/d/a.py"]
        );
        assert_eq!(
            argv_of(p, b"#!/bin/sh\n").unwrap(),
            vec!["/bin/sh", "/d/a.py"]
        );
        assert_eq!(
            argv_of(p, b"print(1)\n").unwrap(),
            vec!["python3", "/d/a.py"]
        );
        assert!(argv_of(Path::new("/d/a.sh"), b"echo\n").is_err());
        assert!(argv_of(p, b"#!\n").is_err());
    }
}
