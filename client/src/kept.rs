//! What is kept of an instance once it is forgotten (`close` of an ended
//! instance, `open` over one, `shutdown`): its approval log and activity
//! record, copied out of the volatile runtime directory into the data
//! directory, `DATA/tickloop/kept/<runtime>/<kind>-<name>/<millis>/`
//! (`DATA` is `$XDG_DATA_HOME`, else `~/.local/share`; `<runtime>` tells
//! runtime directories apart; `<millis>` is when it was forgotten), with
//! `forgotten.json` saying who forgot it and when. Kept for `[records]
//! keep_days` (default 7, [`crate::config::Config::keep_records`]); older
//! ones are removed whenever one is kept and when tickhost starts. tickhost
//! answers `approvals --log ID` and `activity ID` from here once ID is
//! gone.
//!
//! The last screen is not kept: it may show what the person typed or
//! read, and the runtime directory is where it lived.

use crate::paths::{folder_name, parse_id, InstanceFiles, InstanceKind};
use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The name of the file saying who forgot an instance, and when.
pub const FORGOTTEN_FILE: &str = "forgotten.json";

/// The kept records of one runtime directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    root: PathBuf,
}

/// One forgotten instance's kept files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptInstance {
    pub id: String,
    pub folder: PathBuf,
    /// Its approval log (one `wire::ApprovalLogEntry` a line), when kept.
    pub approvals: PathBuf,
    /// Its activity record (`wire::ActivityRecord`), when kept.
    pub activity: PathBuf,
}

impl KeptInstance {
    fn in_folder(id: &str, folder: PathBuf) -> KeptInstance {
        let files = InstanceFiles::in_folder(&folder);
        KeptInstance {
            id: id.to_string(),
            approvals: files.approvals,
            activity: files.activity,
            folder,
        }
    }
}

impl Kept {
    /// The kept records of runtime directory `runtime`, under the data
    /// directory; `None` when there is no data directory (no HOME).
    pub fn of_runtime(runtime: &Path) -> Option<Kept> {
        let data = dirs::data_dir()?;
        Some(Kept::under(&data.join("tickloop").join("kept"), runtime))
    }

    /// The kept records of `runtime` under `kept` (for tests).
    pub fn under(kept: &Path, runtime: &Path) -> Kept {
        Kept {
            root: kept.join(runtime_key(runtime)),
        }
    }

    /// The folder of this runtime directory's kept records.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Copies what `files` (instance `id`'s folder) holds of its record
    /// into a new kept folder, saying `by` forgot it now; its folder, or
    /// `None` when there was nothing to keep. Records older than `keep`
    /// are removed first; with `keep` zero nothing is kept.
    pub fn keep(
        &self,
        id: &str,
        files: &InstanceFiles,
        by: &str,
        keep: Duration,
    ) -> std::io::Result<Option<PathBuf>> {
        let now = SystemTime::now();
        self.prune(keep, now);
        let sources = [&files.approvals, &files.activity];
        if keep.is_zero() || !sources.iter().any(|p| p.is_file()) {
            return Ok(None);
        }
        let Some(instance) = self.instance_folder(id) else {
            return Ok(None);
        };
        let millis = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        let folder = (0..)
            .map(|n| match n {
                0 => instance.join(millis.to_string()),
                n => instance.join(format!("{millis}-{n}")),
            })
            .find(|f| !f.exists())
            .unwrap_or_else(|| instance.join(millis.to_string()));
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&folder)?;
        let kept = KeptInstance::in_folder(id, folder.clone());
        for (from, to) in [
            (&files.approvals, &kept.approvals),
            (&files.activity, &kept.activity),
        ] {
            if from.is_file() {
                fs::copy(from, to)?;
            }
        }
        let note = serde_json::json!({
            "id": id,
            "forgotten_at": crate::clock::now_rfc3339(),
            "by": by,
        });
        crate::whole_file::write(
            &folder.join(FORGOTTEN_FILE),
            note.to_string().as_bytes(),
            crate::whole_file::Mode::Private,
        )
        .map_err(|e| e.source)?;
        Ok(Some(folder))
    }

    /// The newest kept record of `name` (a full id, or a bare NAME that
    /// one kind has kept), when one is kept.
    pub fn newest(&self, name: &str) -> Option<KeptInstance> {
        let ids: Vec<String> = match parse_id(name) {
            Some(_) => vec![name.to_string()],
            None => InstanceKind::ALL.iter().map(|k| k.id(name)).collect(),
        };
        let mut found = ids.iter().filter_map(|id| {
            let folder = self.instance_folder(id)?;
            let newest = stamped(&folder)
                .into_iter()
                .max_by_key(|(millis, _)| *millis)?;
            Some(KeptInstance::in_folder(id, newest.1))
        });
        match (found.next(), found.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    }

    /// Every kept record of this runtime directory forgotten at
    /// `from_millis` (ms since the epoch) or later, with when (the
    /// timeline across instances reads them; older ones it read before).
    pub fn forgotten_since(&self, from_millis: u128) -> Vec<(u128, KeptInstance)> {
        let Ok(instances) = fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut found: Vec<(u128, KeptInstance)> = instances
            .flatten()
            .filter_map(|e| {
                Some((
                    crate::paths::id_of_folder(e.file_name().to_str()?)?,
                    e.path(),
                ))
            })
            .flat_map(|(id, folder)| {
                stamped(&folder)
                    .into_iter()
                    .filter(|(millis, _)| *millis >= from_millis)
                    .map(move |(millis, kept)| (millis, KeptInstance::in_folder(&id, kept)))
            })
            .collect();
        found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.folder.cmp(&b.1.folder)));
        found
    }

    /// Removes the kept records forgotten more than `keep` before `now`.
    pub fn prune(&self, keep: Duration, now: SystemTime) {
        let Ok(instances) = fs::read_dir(&self.root) else {
            return;
        };
        let now = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        for instance in instances.flatten() {
            let folder = instance.path();
            for (millis, kept) in stamped(&folder) {
                if now.saturating_sub(millis) > keep.as_millis() {
                    let _ = fs::remove_dir_all(kept);
                }
            }
            // Gone when it holds nothing more.
            let _ = fs::remove_dir(&folder);
        }
    }

    /// The folder of instance `id`'s kept records (`None` for a malformed
    /// id).
    fn instance_folder(&self, id: &str) -> Option<PathBuf> {
        let (kind, name) = parse_id(id)?;
        Some(self.root.join(folder_name(kind, name)))
    }
}

/// The kept folders in `folder` with the time (ms) their name says.
fn stamped(folder: &Path) -> Vec<(u128, PathBuf)> {
    let Ok(entries) = fs::read_dir(folder) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let millis = name.split('-').next()?.parse::<u128>().ok()?;
            Some((millis, e.path()))
        })
        .collect()
}

/// A name for runtime directory `runtime` (FNV-1a of its path, in hex): the
/// kept records of two runtime directories never mix.
fn runtime_key(runtime: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in runtime.as_os_str().as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instance(dir: &Path, approvals: &str) -> InstanceFiles {
        let files = InstanceFiles::in_folder(&dir.join("i").join("shell-x"));
        files.create_folder().unwrap();
        fs::write(&files.approvals, approvals).unwrap();
        files
    }

    #[test]
    fn a_forgotten_record_is_kept_found_by_id_or_name_and_pruned_when_old() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept::under(&dir.path().join("kept"), &dir.path().join("run"));
        let week = Duration::from_secs(7 * 24 * 3600);
        let files = instance(dir.path(), "{\"first\":1}\n");
        let folder = kept.keep("shell:x", &files, "cli", week).unwrap().unwrap();
        let newest = kept.newest("shell:x").unwrap();
        assert_eq!(newest.folder, folder);
        assert_eq!(
            fs::read_to_string(&newest.approvals).unwrap(),
            "{\"first\":1}\n"
        );
        assert!(!newest.activity.exists(), "only what there was");
        assert_eq!(kept.newest("x"), Some(newest));
        let note: serde_json::Value =
            serde_json::from_slice(&fs::read(folder.join(FORGOTTEN_FILE)).unwrap()).unwrap();
        assert_eq!(
            (note["id"].as_str(), note["by"].as_str()),
            (Some("shell:x"), Some("cli"))
        );

        // Another runtime directory's records are not this one's.
        let other = Kept::under(&dir.path().join("kept"), &dir.path().join("elsewhere"));
        assert_eq!(other.newest("shell:x"), None);

        // Forgotten again later: the newest is found.
        fs::write(&files.approvals, "{\"second\":2}\n").unwrap();
        kept.keep("shell:x", &files, "cli", week).unwrap();
        let newest = kept.newest("shell:x").unwrap();
        assert_eq!(
            fs::read_to_string(&newest.approvals).unwrap(),
            "{\"second\":2}\n"
        );

        // A week and a moment later, both are gone.
        kept.prune(week, SystemTime::now() + week + Duration::from_secs(60));
        assert_eq!(kept.newest("shell:x"), None);
        assert!(fs::read_dir(kept.root()).unwrap().next().is_none());
    }

    #[test]
    fn every_record_forgotten_since_a_time_is_listed_with_its_id() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept::under(&dir.path().join("kept"), &dir.path().join("run"));
        assert!(kept.forgotten_since(0).is_empty(), "nothing kept yet");
        let week = Duration::from_secs(7 * 24 * 3600);
        let files = instance(dir.path(), "{}\n");
        let first = kept.keep("shell:x", &files, "cli", week).unwrap().unwrap();
        let second = kept.keep("shell:x", &files, "cli", week).unwrap().unwrap();
        let all = kept.forgotten_since(0);
        let folders: Vec<&PathBuf> = all.iter().map(|(_, k)| &k.folder).collect();
        assert_eq!(folders, [&first, &second]);
        assert!(all.iter().all(|(_, k)| k.id == "shell:x"));
        let after = all[1].0 + 1;
        assert!(kept.forgotten_since(after).is_empty());
    }

    #[test]
    fn nothing_is_kept_with_keep_zero_or_nothing_to_keep() {
        let dir = tempfile::tempdir().unwrap();
        let kept = Kept::under(&dir.path().join("kept"), &dir.path().join("run"));
        let files = instance(dir.path(), "{}\n");
        assert_eq!(
            kept.keep("shell:x", &files, "cli", Duration::ZERO).unwrap(),
            None
        );
        let empty = InstanceFiles::in_folder(&dir.path().join("i").join("shell-y"));
        let week = Duration::from_secs(7 * 24 * 3600);
        assert_eq!(kept.keep("shell:y", &empty, "cli", week).unwrap(), None);
        assert_eq!(kept.newest("shell:x"), None);
    }
}
