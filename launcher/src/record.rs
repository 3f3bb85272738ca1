//! The launcher's record file (`record.json` in its instance's folder, a
//! `wire::LauncherRecord`), written whole or not at all.

use tickloop_client::paths::InstanceFiles;
use tickloop_client::whole_file::{self, Durability, Mode, WriteError};
use tickloop_proto::wire::LauncherRecord;

/// Writes `record` into the folder of its socket.
pub fn write_record(record: &LauncherRecord) -> Result<(), WriteError> {
    let path = InstanceFiles::of_socket(&record.socket).record;
    let mut json = serde_json::to_vec_pretty(record).map_err(|e| WriteError {
        path: path.clone(),
        source: std::io::Error::other(e),
    })?;
    json.push(b'\n');
    // In the runtime directory: renamed whole, not synced (whole_file's text).
    whole_file::write(&path, &json, Mode::Private, Durability::Volatile)
}
