//! The launcher's record file (`<socket stem>.json`, a `wire::LauncherRecord`),
//! written atomically, and the RFC 3339 clock the launcher stamps with.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use tickloop_proto::wire::LauncherRecord;

/// Where the record of the launcher listening on `socket` lives.
pub fn record_path(socket: &Path) -> PathBuf {
    socket.with_extension("json")
}

/// Write `record` next to its socket (see [`write_private`]).
pub fn write_record(record: &LauncherRecord) -> std::io::Result<()> {
    let path = record_path(&record.socket);
    let mut json = serde_json::to_vec_pretty(record).map_err(std::io::Error::other)?;
    json.push(b'\n');
    write_private(&path, &json)
}

/// Write `bytes` to `path`, mode 0600: to a temporary file, then renamed
/// over it, so a reader never sees half of it.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "record.json".to_string());
    let tmp = path.with_file_name(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
