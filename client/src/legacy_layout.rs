//! The runtime layout before one folder per instance: every instance's
//! files side by side in `l/`, named `<kind>-<name>.<what>`
//! (`.sock`, `.json` the record, `.log`, `.screen.json`, `.activity.json`,
//! `.approvals.jsonl`). There, an instance named `x.screen` had the record
//! `hosted-x.screen.json`, the very name of `x`'s last screen.
//!
//! [`migrate`] moves each file of `l/` into its instance's folder under
//! `i/` once (a rename: a running launcher's socket keeps working at its
//! new path) and removes `l/` when it is empty. Where a name could be
//! either, its content decides: a file that reads as a launcher record is
//! the record of the instance it names. A file whose place in `i/` is
//! taken already is left where it is (the newer layout wins).

use crate::paths::{folder_name, parse_id, InstanceFiles, RuntimeDir};
use std::path::{Path, PathBuf};
use tickloop_proto::wire::LauncherRecord;

/// What one file of `l/` was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Socket,
    Record,
    Log,
    Screen,
    Activity,
    Approvals,
}

/// The instance folder name (`<kind>-<name>`) and the role of the old
/// file `name` at `path`; `None` for a file no instance had.
fn classify(name: &str, path: &Path) -> Option<(String, Role)> {
    let read_as_record = || {
        std::fs::read(path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<LauncherRecord>(&bytes).ok())
    };
    let (stem, role) = if let Some(stem) = name.strip_suffix(".approvals.jsonl") {
        (stem.to_string(), Role::Approvals)
    } else if let Some(stem) = name.strip_suffix(".screen.json") {
        match read_as_record() {
            Some(record) => (stem_of(&record)?, Role::Record),
            None => (stem.to_string(), Role::Screen),
        }
    } else if let Some(stem) = name.strip_suffix(".activity.json") {
        match read_as_record() {
            Some(record) => (stem_of(&record)?, Role::Record),
            None => (stem.to_string(), Role::Activity),
        }
    } else if let Some(stem) = name.strip_suffix(".json") {
        (stem.to_string(), Role::Record)
    } else if let Some(stem) = name.strip_suffix(".sock") {
        (stem.to_string(), Role::Socket)
    } else if let Some(stem) = name.strip_suffix(".log") {
        (stem.to_string(), Role::Log)
    } else {
        return None;
    };
    crate::paths::id_of_folder(&stem)?;
    Some((stem, role))
}

/// The folder name of the instance a record names.
fn stem_of(record: &LauncherRecord) -> Option<String> {
    let (kind, name) = parse_id(&record.instance)?;
    Some(folder_name(kind, name))
}

fn target(files: &InstanceFiles, role: Role) -> &PathBuf {
    match role {
        Role::Socket => &files.socket,
        Role::Record => &files.record,
        Role::Log => &files.log,
        Role::Screen => &files.screen,
        Role::Activity => &files.activity,
        Role::Approvals => &files.approvals,
    }
}

/// Moves what `l/` holds into `i/` (see the module's text); returns what
/// was moved, `(from, to)`, for the log. Nothing to do costs one failed
/// `read_dir`.
pub fn migrate(dir: &RuntimeDir) -> Vec<(PathBuf, PathBuf)> {
    let old = dir.legacy_launchers_dir();
    let Ok(entries) = std::fs::read_dir(&old) else {
        return Vec::new();
    };
    let mut moved = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if crate::whole_file::is_temporary(&name) {
            continue;
        }
        let Some((stem, role)) = classify(&name, &path) else {
            continue;
        };
        let files = InstanceFiles::in_folder(&dir.instances_dir().join(&stem));
        let to = target(&files, role);
        if to.exists() || files.create_folder().is_err() {
            continue;
        }
        if std::fs::rename(&path, to).is_ok() {
            moved.push((path, to.clone()));
        }
    }
    // Gone once empty (a file left, unknown or whose place was taken, keeps it).
    let _ = std::fs::remove_dir(&old);
    moved
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::wire::LauncherStatus;

    fn record(id: &str, socket: &Path) -> Vec<u8> {
        serde_json::to_vec(&LauncherRecord {
            instance: id.into(),
            socket: socket.to_path_buf(),
            launcher_pid: 1,
            status: LauncherStatus {
                instance: id.into(),
                ..Default::default()
            },
            catalog: None,
        })
        .expect("json")
    }

    #[test]
    fn each_old_file_goes_to_its_instance_s_folder_once() {
        let root = std::env::temp_dir().join(format!("tl-legacy-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = RuntimeDir::ensure(&root).expect("runtime dir");
        let l = dir.legacy_launchers_dir();
        std::fs::create_dir_all(&l).expect("l/");
        let put = |name: &str, bytes: &[u8]| std::fs::write(l.join(name), bytes).expect(name);
        put(
            "hosted-x.json",
            &record("hosted:x", &l.join("hosted-x.sock")),
        );
        put("hosted-x.screen.json", b"{\"lines\":[\"x's screen\"]}");
        put("hosted-x.activity.json", b"{\"entries\":[]}");
        put("hosted-x.approvals.jsonl", b"{}\n");
        put("hosted-x.log", b"x's log");
        // `x.screen`'s record has the name of x's screen in the old layout.
        put(
            "shell-y.screen.json",
            &record("shell:y.screen", &l.join("shell-y.screen.sock")),
        );
        put("shell-y.screen.log", b"y.screen's log");
        put("stranger.txt", b"not ours");
        put(".hosted-x.json.5.0.tmp", b"half");

        let moved = migrate(&dir);
        assert_eq!(moved.len(), 7, "{moved:#?}");
        let x = dir
            .instance_files(crate::paths::InstanceKind::Hosted, "x")
            .expect("x");
        assert_eq!(
            std::fs::read(&x.screen).expect("screen"),
            b"{\"lines\":[\"x's screen\"]}"
        );
        assert!(x.record.is_file() && x.activity.is_file() && x.approvals.is_file());
        assert_eq!(std::fs::read(&x.log).expect("log"), b"x's log");
        let y = dir
            .instance_files(crate::paths::InstanceKind::Shell, "y.screen")
            .expect("y");
        assert!(y.record.is_file(), "{y:?}");
        assert_eq!(std::fs::read(&y.log).expect("log"), b"y.screen's log");
        // What is no instance's stays, and so does l/.
        assert!(l.join("stranger.txt").is_file());
        assert!(migrate(&dir).is_empty(), "moved once");
        std::fs::remove_file(l.join("stranger.txt")).expect("rm");
        std::fs::remove_file(l.join(".hosted-x.json.5.0.tmp")).expect("rm");
        assert!(migrate(&dir).is_empty());
        assert!(!l.exists(), "an empty l/ is removed");
        let _ = std::fs::remove_dir_all(&root);
    }
}
