//! The file edits `tickloop loop codex|gemini install` make, recorded in a
//! manifest and undone byte for byte by uninstall.
//!
//! Two kinds of edit: [`JsonEdit`] adds entries to a JSON object file
//! (elements appended to arrays, keys set where absent), and [`TomlBlock`]
//! appends a marked block of text to a TOML file. Each records the file's
//! bytes before install; uninstall takes out exactly what was added and,
//! when what remains is the original, writes the original bytes back (or
//! removes the file when install created it). A file changed since install
//! keeps the person's changes: only Tickloop's entries leave it. Bad input
//! (a file that is not a JSON object or not TOML, a name already taken) is
//! refused before anything is written.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

pub use crate::claude_code::install::{write_atomic, InstallError, Report};

fn refused(path: &Path, message: impl Into<String>) -> InstallError {
    InstallError::Refused {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> InstallError + 'a {
    move |source| InstallError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// A file's text, `None` when it does not exist; refused when not UTF-8.
pub fn read_text(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            refused(path, "is not UTF-8 text; fix it or move it away, then run this again (nothing was written)")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io("cannot read", path)(e)),
    }
}

/// Entries added to a JSON object file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonEdit {
    pub path: PathBuf,
    /// The file's bytes before install (`None`: it did not exist).
    #[serde(default)]
    pub original: Option<String>,
    /// (key path to an array, element appended to it).
    pub appends: Vec<(Vec<String>, Value)>,
    /// (key path, value set there; the key was absent).
    pub sets: Vec<(Vec<String>, Value)>,
}

fn parse_object(path: &Path, text: &str) -> Result<Map<String, Value>, InstallError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(refused(path, "does not hold a JSON object; fix it or move it away, then run this again (nothing was written)")),
        Err(e) => Err(refused(path, format!("is not valid JSON ({e}); fix it or move it away, then run this again (nothing was written)"))),
    }
}

fn pretty(map: &Map<String, Value>) -> String {
    let mut text = serde_json::to_string_pretty(map).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

/// The object at `keys` in `map`, created where absent; refused when a key
/// on the way holds something else.
fn object_at<'a>(
    file: &Path,
    map: &'a mut Map<String, Value>,
    keys: &[String],
) -> Result<&'a mut Map<String, Value>, InstallError> {
    let mut here = map;
    for (i, key) in keys.iter().enumerate() {
        let entry = here
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        here = match entry {
            Value::Object(m) => m,
            _ => {
                return Err(refused(
                    file,
                    format!(
                        "`{}` is not a JSON object; fix it, then run install again (nothing was written)",
                        keys[..=i].join(".")
                    ),
                ))
            }
        };
    }
    Ok(here)
}

impl JsonEdit {
    /// The edited text, checked against the file as it is now.
    pub fn apply(&mut self) -> Result<String, InstallError> {
        self.original = read_text(&self.path)?;
        let mut map = match &self.original {
            Some(text) => parse_object(&self.path, text)?,
            None => Map::new(),
        };
        for (keys, value) in &self.sets {
            let Some((last, parent)) = keys.split_last() else {
                continue;
            };
            let obj = object_at(&self.path, &mut map, parent)?;
            if obj.contains_key(last) {
                return Err(refused(
                    &self.path,
                    format!(
                        "`{}` is already set; take it out (or uninstall Tickloop's earlier install), then run install again (nothing was written)",
                        keys.join(".")
                    ),
                ));
            }
            obj.insert(last.clone(), value.clone());
        }
        for (keys, value) in &self.appends {
            let Some((last, parent)) = keys.split_last() else {
                continue;
            };
            let obj = object_at(&self.path, &mut map, parent)?;
            let list = obj
                .entry(last.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(list) = list else {
                return Err(refused(
                    &self.path,
                    format!("`{}` is not an array; fix it, then run install again (nothing was written)", keys.join(".")),
                ));
            };
            list.push(value.clone());
        }
        Ok(pretty(&map))
    }

    /// Takes the entries out of the file as it is now.
    pub fn undo(&self, lines: &mut Vec<String>) -> Result<(), InstallError> {
        let Some(text) = read_text(&self.path)? else {
            return Ok(());
        };
        let mut map = parse_object(&self.path, &text)?;
        for (keys, value) in &self.appends {
            if let Some(Value::Array(list)) = lookup(&mut map, keys) {
                if let Some(i) = list.iter().position(|v| v == value) {
                    list.remove(i);
                }
            }
        }
        for (keys, value) in &self.sets {
            let Some((last, parent)) = keys.split_last() else {
                continue;
            };
            if let Some(Value::Object(obj)) = lookup(&mut map, parent) {
                if obj.get(last) == Some(value) {
                    obj.remove(last);
                }
            }
        }
        let original = self
            .original
            .as_deref()
            .map(|t| parse_object(&self.path, t))
            .transpose()?
            .unwrap_or_default();
        prune_added_empties(&mut map, &original);
        let shown = self.path.display();
        if map == original {
            match &self.original {
                Some(bytes) => {
                    write_atomic(&self.path, bytes)?;
                    lines.push(format!("restored {shown} as it was before install"));
                }
                None => {
                    std::fs::remove_file(&self.path).map_err(io("cannot remove", &self.path))?;
                    lines.push(format!("removed {shown} (install created it)"));
                }
            }
        } else {
            write_atomic(&self.path, &pretty(&map))?;
            lines.push(format!("removed Tickloop's entries from {shown} (it was changed since install, so the rest is kept as it is now)"));
        }
        Ok(())
    }
}

fn lookup<'a>(map: &'a mut Map<String, Value>, keys: &[String]) -> Option<&'a mut Value> {
    let (first, rest) = keys.split_first()?;
    let mut here = map.get_mut(first)?;
    for key in rest {
        here = here.as_object_mut()?.get_mut(key)?;
    }
    Some(here)
}

/// Removes empty objects and arrays that the original did not have.
fn prune_added_empties(map: &mut Map<String, Value>, original: &Map<String, Value>) {
    let keys: Vec<String> = map.keys().cloned().collect();
    for key in keys {
        let before = original.get(&key);
        let Some(value) = map.get_mut(&key) else {
            continue;
        };
        if let (Value::Object(inner), Some(Value::Object(orig))) = (&mut *value, before) {
            prune_added_empties(inner, orig);
        } else if let Value::Object(inner) = &mut *value {
            prune_added_empties(inner, &Map::new());
        }
        let empty = match value {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        if empty && before.is_none() {
            map.remove(&key);
        }
    }
}

/// How long an agent host should wait for one Tick tool call: the
/// approval timeout (a held call may wait that long for the person;
/// `tickloop_client::config::approval_timeout`) and a minute more, so the
/// host never gives up on a question the person may still answer.
pub fn host_tool_timeout() -> std::time::Duration {
    tickloop_client::config::approval_timeout() + std::time::Duration::from_secs(60)
}

/// [`host_tool_timeout`] in milliseconds, as Gemini CLI's and opencode's
/// MCP `timeout` takes it.
pub fn host_tool_timeout_ms() -> u64 {
    u64::try_from(host_tool_timeout().as_millis()).unwrap_or(u64::MAX)
}

/// A marked block of text appended to a TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TomlBlock {
    pub path: PathBuf,
    #[serde(default)]
    pub original: Option<String>,
    /// The text appended (with the newline that separates it, if any).
    pub block: String,
}

impl TomlBlock {
    /// The file with `block` appended; refused when the file is not TOML,
    /// already has a table at `taken` (a dotted key path), or would not be
    /// TOML afterwards.
    pub fn apply(
        path: &Path,
        block: &str,
        taken: &[&str],
    ) -> Result<(TomlBlock, String), InstallError> {
        let original = read_text(path)?;
        let before = original.clone().unwrap_or_default();
        let parsed: toml::Table = before.parse().map_err(|e| {
            refused(
                path,
                format!(
                    "is not valid TOML ({e}); fix it, then run install again (nothing was written)"
                ),
            )
        })?;
        let mut here = Some(&parsed);
        for (i, key) in taken.iter().enumerate() {
            let value = here.and_then(|t| t.get(*key));
            if i + 1 == taken.len() && value.is_some() {
                return Err(refused(path, format!("`{}` is already set; take it out, then run install again (nothing was written)", taken.join("."))));
            }
            here = value.and_then(toml::Value::as_table);
        }
        let sep = if before.is_empty() || before.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let block = format!("{sep}{block}");
        let after = format!("{before}{block}");
        after.parse::<toml::Table>().map_err(|e| {
            refused(
                path,
                format!("Tickloop's entries would not fit in it ({e}); nothing was written"),
            )
        })?;
        Ok((
            TomlBlock {
                path: path.to_path_buf(),
                original,
                block,
            },
            after,
        ))
    }

    pub fn undo(&self, lines: &mut Vec<String>) -> Result<(), InstallError> {
        let Some(now) = read_text(&self.path)? else {
            return Ok(());
        };
        let shown = self.path.display();
        let Some(at) = now.rfind(&self.block) else {
            lines.push(format!("kept {shown}: Tickloop's block in it was changed since install; take out its [mcp_servers.tickloop] yourself"));
            return Ok(());
        };
        let rest = format!("{}{}", &now[..at], &now[at + self.block.len()..]);
        match &self.original {
            None if rest.trim().is_empty() => {
                std::fs::remove_file(&self.path).map_err(io("cannot remove", &self.path))?;
                lines.push(format!("removed {shown} (install created it)"));
            }
            Some(o) if *o == rest => {
                write_atomic(&self.path, o)?;
                lines.push(format!("restored {shown} as it was before install"));
            }
            _ => {
                write_atomic(&self.path, &rest)?;
                lines.push(format!("removed Tickloop's block from {shown} (it was changed since install, so the rest is kept as it is now)"));
            }
        }
        Ok(())
    }
}

/// What one install did: its file edits and the directories it created.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    pub version: u32,
    /// Which agent's install this is (`codex`, `gemini`).
    pub agent: String,
    pub json: Vec<JsonEdit>,
    pub toml: Vec<TomlBlock>,
    /// Files written whole (path, text).
    pub files: Vec<(PathBuf, String)>,
    /// Directories install created, outermost first.
    pub created_dirs: Vec<PathBuf>,
}

impl Manifest {
    /// Creates `dir` (and its missing parents), recording what it created.
    pub fn create_dir(&mut self, dir: &Path) -> Result<(), InstallError> {
        let mut missing = Vec::new();
        let mut here = Some(dir);
        while let Some(d) = here {
            if d.exists() {
                break;
            }
            missing.push(d.to_path_buf());
            here = d.parent();
        }
        for d in missing.into_iter().rev() {
            std::fs::create_dir(&d).map_err(io("cannot create", &d))?;
            self.created_dirs.push(d);
        }
        Ok(())
    }

    pub fn write(&self, path: &Path) -> Result<(), InstallError> {
        let text = serde_json::to_string_pretty(self).unwrap_or_default() + "\n";
        write_atomic(path, &text)
    }

    /// The manifest at `path`; refused when absent or not ours.
    pub fn read(path: &Path, agent: &str) -> Result<Manifest, InstallError> {
        let Some(text) = read_text(path)? else {
            return Err(refused(
                path,
                format!(
                    "not found: Tickloop is not installed here for {agent} (nothing was changed)"
                ),
            ));
        };
        let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
            refused(
                path,
                format!("is not the manifest install wrote ({e}); nothing was changed"),
            )
        })?;
        if manifest.agent != agent {
            return Err(refused(
                path,
                format!(
                    "is {}'s install, not {agent}'s; nothing was changed",
                    manifest.agent
                ),
            ));
        }
        Ok(manifest)
    }

    /// Undoes every edit, removes the files written whole, the manifest and
    /// the directories install created (when empty).
    pub fn undo(&self, manifest_path: &Path) -> Result<Report, InstallError> {
        let mut lines = Vec::new();
        for edit in &self.json {
            edit.undo(&mut lines)?;
        }
        for block in &self.toml {
            block.undo(&mut lines)?;
        }
        for (path, text) in &self.files {
            match std::fs::read_to_string(path) {
                Ok(now) if now == *text => {
                    std::fs::remove_file(path).map_err(io("cannot remove", path))?;
                    lines.push(format!("removed {}", path.display()));
                }
                Ok(_) => lines.push(format!(
                    "kept {}: it was changed since install",
                    path.display()
                )),
                Err(_) => {}
            }
        }
        std::fs::remove_file(manifest_path).map_err(io("cannot remove", manifest_path))?;
        for dir in self.created_dirs.iter().rev() {
            // Only when empty: anything else in it is not ours.
            let _ = std::fs::remove_dir(dir);
        }
        Ok(Report { lines })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tickloop-kit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn json_edit_round_trips_bytes_and_refuses_taken_keys() {
        let d = scratch("json");
        let f = d.join("settings.json");
        let original = "{\"a\": 1,\n  \"hooks\": {\"Stop\": [1]}}";
        std::fs::write(&f, original).unwrap();
        let mut edit = JsonEdit {
            path: f.clone(),
            appends: vec![
                (vec!["hooks".into(), "Stop".into()], json!({"x": 1})),
                (vec!["hooks".into(), "New".into()], json!(2)),
            ],
            sets: vec![(vec!["mcp".into(), "tickloop".into()], json!({"c": 1}))],
            ..JsonEdit::default()
        };
        let text = edit.apply().unwrap();
        std::fs::write(&f, &text).unwrap();
        let mut again = edit.clone();
        assert!(again
            .apply()
            .unwrap_err()
            .to_string()
            .contains("already set"));
        let mut lines = Vec::new();
        edit.undo(&mut lines).unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), original);
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn toml_block_round_trips_and_refuses_bad_files() {
        let d = scratch("toml");
        let f = d.join("config.toml");
        std::fs::write(&f, "model = \"x\"\n[features]\nplugins = false").unwrap();
        let (block, after) = TomlBlock::apply(
            &f,
            "[mcp_servers.tickloop]\ncommand = \"t\"\n",
            &["mcp_servers", "tickloop"],
        )
        .unwrap();
        std::fs::write(&f, &after).unwrap();
        assert!(TomlBlock::apply(&f, "", &["mcp_servers", "tickloop"]).is_err());
        let mut lines = Vec::new();
        block.undo(&mut lines).unwrap();
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "model = \"x\"\n[features]\nplugins = false"
        );
        std::fs::write(&f, "mcp_servers = 3\n").unwrap();
        assert!(
            TomlBlock::apply(&f, "[mcp_servers.tickloop]\n", &["mcp_servers", "tickloop"]).is_err()
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
