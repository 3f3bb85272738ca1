//! `tickloop loop claude-code install|uninstall`: puts the Loop's hooks into a
//! Claude Code settings file and its `/tick` command file next to it, and
//! takes out exactly that again.
//!
//! Install merges: the hook groups are appended to whatever the settings
//! already hold, and a manifest (`tickloop-install.json`, next to the
//! settings) records the file's original bytes, the groups added and the
//! directories created. Uninstall removes those groups; when what remains is
//! the original settings, the original bytes are written back (or the file
//! is removed when install created it). Bad input (settings that are not a
//! JSON object, a `/tick` command that is not ours) is refused before
//! anything is written.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// The file install writes next to the settings to be undone later.
pub const MANIFEST: &str = "tickloop-install.json";
/// A line every `/tick` command file written by install carries.
const COMMAND_MARK: &str = "<!-- written by `tickloop loop claude-code install` -->";

/// What install and uninstall can refuse.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{}: {message}", path.display())]
    Refused { path: PathBuf, message: String },
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

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

/// Writes `text` to `path` whole or not at all, keeping the file's mode
/// (`tickloop_client::whole_file`).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), InstallError> {
    use tickloop_client::whole_file::{write, Durability, Mode};
    write(path, text.as_bytes(), Mode::AsItWas, Durability::Durable).map_err(|e| InstallError::Io {
        what: "cannot write",
        path: e.path,
        source: e.source,
    })
}

/// Where to install: a `.claude` directory (a project's, or the user's).
#[derive(Debug, Clone)]
pub struct Target {
    /// The `.claude` directory.
    pub claude_dir: PathBuf,
}

impl Target {
    /// `DIR/.claude`.
    pub fn project(dir: &Path) -> Target {
        Target {
            claude_dir: dir.join(".claude"),
        }
    }

    /// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
    pub fn user() -> Option<Target> {
        let dir = match std::env::var_os("CLAUDE_CONFIG_DIR") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => dirs::home_dir()?.join(".claude"),
        };
        Some(Target { claude_dir: dir })
    }

    pub fn settings(&self) -> PathBuf {
        self.claude_dir.join("settings.json")
    }

    pub fn command_file(&self) -> PathBuf {
        self.claude_dir.join("commands").join("tick.md")
    }

    pub fn manifest(&self) -> PathBuf {
        self.claude_dir.join(MANIFEST)
    }
}

/// What install did, to be undone by uninstall.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Manifest {
    version: u32,
    /// The settings file's bytes before install (`None`: it did not exist).
    original_settings: Option<String>,
    /// Event name → the hook group install appended.
    groups: BTreeMapValue,
    /// Directories install created, outermost first.
    created_dirs: Vec<PathBuf>,
    /// The `/tick` command file's text as written.
    command_text: String,
    /// Whether install set `env.TICKLOOP_AGENT` (absent in manifests of
    /// installs before it did).
    #[serde(default)]
    env_added: bool,
}

/// The variable install adds to Claude Code's settings `env`, which Claude
/// Code gives every process its tools run: a `tickloop` run by its Bash
/// tool is then Claude Code's agent (src/actor.rs), named so.
const AGENT_ENV: (&str, &str) = ("TICKLOOP_AGENT", "claude-code");

/// Sets [`AGENT_ENV`] in `map`'s `env`; `true` when install added it,
/// `false` when it was there already with that value; refused when `env`
/// is not an object or names another agent.
fn add_agent_env(path: &Path, map: &mut Map<String, Value>) -> Result<bool, InstallError> {
    let (key, value) = AGENT_ENV;
    let env = map
        .entry("env")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(env) = env else {
        return Err(refused(
            path,
            "`env` is not a JSON object; fix it, then run install again (nothing was written)",
        ));
    };
    match env.get(key) {
        None => {
            env.insert(key.to_string(), Value::String(value.to_string()));
            Ok(true)
        }
        Some(Value::String(v)) if v == value => Ok(false),
        Some(other) => Err(refused(
            path,
            format!("`env.{key}` is already {other}; take it out, then run install again (nothing was written)"),
        )),
    }
}

/// Takes [`AGENT_ENV`] out of `map`'s `env` again (and `env`, when that
/// leaves it empty and the original had none).
fn remove_agent_env(map: &mut Map<String, Value>, original: Option<&Map<String, Value>>) {
    let (key, value) = AGENT_ENV;
    if let Some(Value::Object(env)) = map.get_mut("env") {
        if env.get(key).and_then(Value::as_str) == Some(value) {
            env.remove(key);
        }
        if env.is_empty() && !original.is_some_and(|o| o.contains_key("env")) {
            map.remove("env");
        }
    }
}

type BTreeMapValue = std::collections::BTreeMap<String, Value>;

/// The hook groups for `exe` (an absolute path to `tickloop`).
pub fn hook_groups(exe: &Path) -> BTreeMapValue {
    let exe = shell_quote(&exe.to_string_lossy());
    let cmd = |event: &str| format!("{exe} loop claude-code hook {event}");
    let mut groups = BTreeMapValue::new();
    groups.insert(
        "UserPromptSubmit".into(),
        json!({"hooks": [
            {"type": "command", "command": cmd("user-prompt-submit"), "timeout": 30},
            {"type": "command", "command": cmd("wake"), "asyncRewake": true, "timeout": 600},
        ]}),
    );
    groups.insert(
        "Stop".into(),
        json!({"hooks": [{"type": "command", "command": cmd("stop"), "timeout": 600}]}),
    );
    groups.insert(
        "StopFailure".into(),
        json!({"hooks": [{"type": "command", "command": cmd("stop-failure"), "timeout": 30}]}),
    );
    groups
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The `/tick` command file. Claude Code passes a `/tick` prompt to the
/// hooks only when this command exists; the hook answers it, so this text
/// reaches the model only when the hooks are missing. It is kept out of the
/// model's skill list (`disable-model-invocation`): the control plane is the
/// person's, never the model's.
pub fn command_text() -> String {
    format!(
        "---\ndescription: Tickloop's Loop (time steps for this session; answered by its hooks)\nargument-hint: \"[<count>] [--policy <id>] [--resume] | policies | status | stop | subscribe ID...\"\ndisable-model-invocation: true\n---\n{COMMAND_MARK}\nTickloop's hooks did not answer this /tick command: reply only that the hooks of `tickloop loop claude-code install` are not active in this session.\n"
    )
}

/// What install or uninstall did, for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub lines: Vec<String>,
}

/// A settings file as read: its text and its top-level object.
type Settings = (String, Map<String, Value>);

fn read_settings(path: &Path) -> Result<Option<Settings>, InstallError> {
    let text = match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map_err(|_| {
            refused(path, "is not UTF-8 text; fix it or move it away, then run this again (nothing was written)")
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("cannot read", path)(e)),
    };
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        refused(
            path,
            format!("is not valid JSON ({e}); fix it or move it away, then run this again (nothing was written)"),
        )
    })?;
    match value {
        Value::Object(map) => Ok(Some((text, map))),
        _ => Err(refused(
            path,
            "does not hold a JSON object; fix it or move it away, then run this again (nothing was written)",
        )),
    }
}

fn pretty(map: &Map<String, Value>) -> String {
    let mut text = serde_json::to_string_pretty(map).unwrap_or_else(|_| "{}".into());
    text.push('\n');
    text
}

/// Installs the hooks of `exe` into `target`.
pub fn install(target: &Target, exe: &Path) -> Result<Report, InstallError> {
    let settings_path = target.settings();
    let manifest_path = target.manifest();
    let command_path = target.command_file();
    if manifest_path.exists() {
        return Err(refused(
            &manifest_path,
            "Tickloop's hooks are already installed here (`tickloop loop claude-code uninstall` takes them out)",
        ));
    }
    let existing = read_settings(&settings_path)?;
    if command_path.exists() {
        return Err(refused(
            &command_path,
            "a /tick command already exists and is not Tickloop's; move it away, then run install again (nothing was written)",
        ));
    }
    let (original, mut map) = match existing {
        Some((text, map)) => (Some(text), map),
        None => (None, Map::new()),
    };
    let groups = hook_groups(exe);
    let hooks = map
        .entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(hooks) = hooks else {
        return Err(refused(
            &settings_path,
            "`hooks` is not a JSON object; fix it, then run install again (nothing was written)",
        ));
    };
    for event in groups.keys() {
        if let Some(v) = hooks.get(event) {
            if !v.is_array() {
                return Err(refused(
                    &settings_path,
                    format!("`hooks.{event}` is not an array; fix it, then run install again (nothing was written)"),
                ));
            }
        }
    }
    for (event, group) in &groups {
        let list = hooks
            .entry(event.clone())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(list) = list {
            list.push(group.clone());
        }
    }
    let env_added = add_agent_env(&settings_path, &mut map)?;
    // Write: directories, the command file, the settings, the manifest last.
    let mut created_dirs = Vec::new();
    for dir in [
        target.claude_dir.clone(),
        target.claude_dir.join("commands"),
    ] {
        if !dir.exists() {
            std::fs::create_dir(&dir).map_err(io("cannot create", &dir))?;
            created_dirs.push(dir);
        }
    }
    let command = command_text();
    std::fs::write(&command_path, &command).map_err(io("cannot write", &command_path))?;
    write_atomic(&settings_path, &pretty(&map))?;
    let manifest = Manifest {
        version: 1,
        original_settings: original.clone(),
        groups,
        created_dirs,
        command_text: command,
        env_added,
    };
    let manifest_text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    write_atomic(&manifest_path, &manifest_text)?;
    Ok(Report {
        lines: vec![
            format!(
                "{} {}: hooks UserPromptSubmit, Stop, StopFailure; env TICKLOOP_AGENT=claude-code (a `tickloop` run by Claude Code's tools acts as its agent: typing into and closing your instances waits for you)",
                if original.is_some() {
                    "updated"
                } else {
                    "created"
                },
                settings_path.display()
            ),
            format!("created {}: the /tick command", command_path.display()),
            format!(
                "recorded {} (`tickloop loop claude-code uninstall` undoes this)",
                manifest_path.display()
            ),
        ],
    })
}

/// Takes out what [`install`] wrote into `target`.
pub fn uninstall(target: &Target) -> Result<Report, InstallError> {
    let manifest_path = target.manifest();
    let settings_path = target.settings();
    let command_path = target.command_file();
    let manifest_text = match std::fs::read_to_string(&manifest_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(refused(
                &manifest_path,
                "not found: Tickloop's hooks are not installed here (nothing was changed)",
            ))
        }
        Err(e) => return Err(io("cannot read", &manifest_path)(e)),
    };
    let manifest: Manifest = serde_json::from_str(&manifest_text).map_err(|e| {
        refused(
            &manifest_path,
            format!("is not the manifest install wrote ({e}); nothing was changed"),
        )
    })?;
    let original: Option<Map<String, Value>> = match &manifest.original_settings {
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        },
        None => None,
    };
    let mut lines = Vec::new();
    if let Some((_, mut map)) = read_settings(&settings_path)? {
        let originally = |event: &str| {
            original
                .as_ref()
                .and_then(|o| o.get("hooks"))
                .and_then(|h| h.get(event))
                .is_some()
        };
        let had_hooks = original.as_ref().is_some_and(|o| o.contains_key("hooks"));
        if let Some(Value::Object(hooks)) = map.get_mut("hooks") {
            for (event, group) in &manifest.groups {
                if let Some(Value::Array(list)) = hooks.get_mut(event) {
                    if let Some(i) = list.iter().position(|g| g == group) {
                        list.remove(i);
                    }
                    if list.is_empty() && !originally(event) {
                        hooks.remove(event);
                    }
                }
            }
            if hooks.is_empty() && !had_hooks {
                map.remove("hooks");
            }
        }
        if manifest.env_added {
            remove_agent_env(&mut map, original.as_ref());
        }
        match (&manifest.original_settings, &original) {
            (Some(bytes), Some(o)) if *o == map => {
                write_atomic(&settings_path, bytes)?;
                lines.push(format!(
                    "restored {} as it was before install",
                    settings_path.display()
                ));
            }
            (None, _) if map.is_empty() => {
                std::fs::remove_file(&settings_path)
                    .map_err(io("cannot remove", &settings_path))?;
                lines.push(format!(
                    "removed {} (install created it)",
                    settings_path.display()
                ));
            }
            _ => {
                write_atomic(&settings_path, &pretty(&map))?;
                lines.push(format!(
                    "removed Tickloop's hooks from {} (it was changed since install, so the rest is kept as it is now)",
                    settings_path.display()
                ));
            }
        }
    }
    match std::fs::read_to_string(&command_path) {
        Ok(text) if text == manifest.command_text || text.contains(COMMAND_MARK) => {
            std::fs::remove_file(&command_path).map_err(io("cannot remove", &command_path))?;
            lines.push(format!("removed {}", command_path.display()));
        }
        Ok(_) => lines.push(format!(
            "kept {}: it was changed since install",
            command_path.display()
        )),
        Err(_) => {}
    }
    std::fs::remove_file(&manifest_path).map_err(io("cannot remove", &manifest_path))?;
    for dir in manifest.created_dirs.iter().rev() {
        // Only when empty: anything else in it is not ours.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(Report { lines })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_keeps_plain_paths_and_quotes_others() {
        assert_eq!(shell_quote("/usr/bin/tickloop"), "/usr/bin/tickloop");
        assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    }

    #[test]
    fn install_then_uninstall_restores_bytes() {
        let dir = tempdir();
        let t = Target::project(&dir);
        std::fs::create_dir_all(&t.claude_dir).unwrap();
        let original = "{\"model\": \"x\",\n   \"hooks\": {\"Stop\": [{\"hooks\": []}]}}";
        std::fs::write(t.settings(), original).unwrap();
        install(&t, Path::new("/bin/tickloop")).unwrap();
        let installed = std::fs::read_to_string(t.settings()).unwrap();
        assert!(installed.contains("loop claude-code hook stop"));
        let settings: Value = serde_json::from_str(&installed).unwrap();
        assert_eq!(settings["env"]["TICKLOOP_AGENT"], "claude-code");
        assert!(install(&t, Path::new("/bin/tickloop")).is_err());
        uninstall(&t).unwrap();
        assert_eq!(std::fs::read_to_string(t.settings()).unwrap(), original);
        assert!(!t.command_file().exists());
        assert!(!t.manifest().exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_agent_variable_joins_the_persons_env_and_leaves_with_uninstall() {
        let dir = tempdir();
        let t = Target::project(&dir);
        std::fs::create_dir_all(&t.claude_dir).unwrap();
        let original = "{\"env\": {\"FOO\": \"1\"}}";
        std::fs::write(t.settings(), original).unwrap();
        install(&t, Path::new("/bin/tickloop")).unwrap();
        let settings: Value =
            serde_json::from_str(&std::fs::read_to_string(t.settings()).unwrap()).unwrap();
        assert_eq!(
            settings["env"],
            json!({"FOO": "1", "TICKLOOP_AGENT": "claude-code"})
        );
        uninstall(&t).unwrap();
        assert_eq!(std::fs::read_to_string(t.settings()).unwrap(), original);
        // Another agent's name there: refused, nothing written.
        let other = "{\"env\": {\"TICKLOOP_AGENT\": \"codex\"}}";
        std::fs::write(t.settings(), other).unwrap();
        let e = install(&t, Path::new("/bin/tickloop")).unwrap_err();
        assert!(e.to_string().contains("TICKLOOP_AGENT"), "{e}");
        assert_eq!(std::fs::read_to_string(t.settings()).unwrap(), other);
        assert!(!t.manifest().exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_settings_that_are_not_json() {
        let dir = tempdir();
        let t = Target::project(&dir);
        std::fs::create_dir_all(&t.claude_dir).unwrap();
        std::fs::write(t.settings(), "{ not json").unwrap();
        let e = install(&t, Path::new("/bin/tickloop")).unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
        assert_eq!(std::fs::read_to_string(t.settings()).unwrap(), "{ not json");
        assert!(!t.command_file().exists() && !t.manifest().exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn tempdir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "tickloop-install-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }
}
