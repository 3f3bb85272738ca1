//! The Herdr plugin manifest Tickloop ships (`plugin/herdr-plugin.toml`,
//! embedded in the binary so `tickloop herdr install` can write it anywhere)
//! and a checker of Herdr 0.8's manifest rules, used by the install command
//! and the tests.
//!
//! The rules (from Herdr's plugin documentation): `id`, `name`, `version`
//! and `min_herdr_version` are required; the plugin id is letters, digits
//! and `. : _ -`; `platforms`, when given, is a nonempty list of `linux`,
//! `macos`, `windows`; every command is a nonempty argv array (no shell);
//! local ids (panes, actions) are nonempty, without dots, and unique;
//! a pane's placement is one of `overlay` (the default), `popup`, `split`,
//! `tab`, `zoomed`; `width`/`height` are allowed only on `popup` panes.

use serde::Deserialize;

/// The manifest's text, as shipped in `view-herdr/plugin/herdr-plugin.toml`.
pub const MANIFEST: &str = include_str!("../plugin/herdr-plugin.toml");

/// The manifest's file name in a plugin folder.
pub const MANIFEST_FILE: &str = "herdr-plugin.toml";

/// The plugin id (`--plugin` of `herdr plugin pane open`).
pub const PLUGIN_ID: &str = "tickloop";

/// The pane entrypoint showing one Tick.
pub const VIEW_ENTRY: &str = "view";

/// The pane entrypoint showing the Monitor.
pub const MONITOR_ENTRY: &str = "monitor";

/// The placements a plugin pane may have.
pub const PLACEMENTS: [&str; 5] = ["overlay", "popup", "split", "tab", "zoomed"];

/// The platforms Herdr knows.
pub const PLATFORMS: [&str; 3] = ["linux", "macos", "windows"];

/// Why a manifest cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("the manifest is not valid TOML for a Herdr plugin: {0}")]
    Parse(#[from] toml::de::Error),
}

/// The parts of a manifest Tickloop reads and checks.
#[derive(Debug, Clone, Deserialize)]
pub struct Manifest {
    pub id: Option<String>,
    pub name: Option<String>,
    pub version: Option<String>,
    pub min_herdr_version: Option<String>,
    pub description: Option<String>,
    pub platforms: Option<Vec<String>>,
    #[serde(default)]
    pub panes: Vec<PaneEntry>,
    #[serde(default)]
    pub actions: Vec<ActionEntry>,
    #[serde(default)]
    pub startup: Vec<CommandEntry>,
    #[serde(default)]
    pub events: Vec<CommandEntry>,
    #[serde(default)]
    pub build: Vec<CommandEntry>,
}

/// A `[[panes]]` entry.
#[derive(Debug, Clone, Deserialize)]
pub struct PaneEntry {
    pub id: String,
    pub title: Option<String>,
    pub placement: Option<String>,
    pub width: Option<toml::Value>,
    pub height: Option<toml::Value>,
    pub command: Vec<String>,
}

/// An `[[actions]]` entry.
#[derive(Debug, Clone, Deserialize)]
pub struct ActionEntry {
    pub id: String,
    pub title: Option<String>,
    #[serde(default)]
    pub contexts: Vec<String>,
    pub command: Vec<String>,
}

/// A `[[startup]]`, `[[events]]` or `[[build]]` entry: a command.
#[derive(Debug, Clone, Deserialize)]
pub struct CommandEntry {
    pub command: Vec<String>,
}

impl Manifest {
    /// Parses a manifest's text.
    pub fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Ok(toml::from_str(text)?)
    }

    /// The shipped manifest.
    pub fn shipped() -> Result<Manifest, ManifestError> {
        Self::parse(MANIFEST)
    }

    /// The pane entry `id`.
    pub fn pane(&self, id: &str) -> Option<&PaneEntry> {
        self.panes.iter().find(|p| p.id == id)
    }

    /// Every broken rule, one sentence each; empty when the manifest is valid.
    pub fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        for (field, value) in [
            ("id", &self.id),
            ("name", &self.name),
            ("version", &self.version),
            ("min_herdr_version", &self.min_herdr_version),
        ] {
            if value.as_deref().is_none_or(|v| v.trim().is_empty()) {
                problems.push(format!("the required field `{field}` is missing or empty"));
            }
        }
        if let Some(id) = &self.id {
            if !id.is_empty() && !id.chars().all(is_plugin_id_char) {
                problems.push(format!(
                    "the plugin id {id:?} may hold only letters, digits and . : _ -"
                ));
            }
        }
        if let Some(v) = &self.min_herdr_version {
            if !is_semver(v) {
                problems.push(format!(
                    "min_herdr_version {v:?} is not a version like 0.8.0"
                ));
            }
        }
        if let Some(platforms) = &self.platforms {
            if platforms.is_empty() {
                problems.push("`platforms` is an empty list".into());
            }
            for p in platforms {
                if !PLATFORMS.contains(&p.as_str()) {
                    problems.push(format!("unknown platform {p:?}"));
                }
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for pane in &self.panes {
            check_local_id("pane", &pane.id, &mut problems);
            if !seen.insert(("pane", pane.id.clone())) {
                problems.push(format!("two panes have the id {:?}", pane.id));
            }
            check_command(&format!("pane {:?}", pane.id), &pane.command, &mut problems);
            let placement = pane.placement.as_deref().unwrap_or("overlay");
            if !PLACEMENTS.contains(&placement) {
                problems.push(format!(
                    "pane {:?} has the unknown placement {placement:?}",
                    pane.id
                ));
            }
            if placement != "popup" && (pane.width.is_some() || pane.height.is_some()) {
                problems.push(format!(
                    "pane {:?} sets width/height, which only popup panes may",
                    pane.id
                ));
            }
        }
        for action in &self.actions {
            check_local_id("action", &action.id, &mut problems);
            if !seen.insert(("action", action.id.clone())) {
                problems.push(format!("two actions have the id {:?}", action.id));
            }
            check_command(
                &format!("action {:?}", action.id),
                &action.command,
                &mut problems,
            );
        }
        for (kind, entries) in [
            ("startup", &self.startup),
            ("events", &self.events),
            ("build", &self.build),
        ] {
            for entry in entries {
                check_command(kind, &entry.command, &mut problems);
            }
        }
        problems
    }
}

fn is_plugin_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '_' | '-')
}

fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn check_local_id(kind: &str, id: &str, problems: &mut Vec<String>) {
    if id.is_empty() {
        problems.push(format!("a {kind} has an empty id"));
    } else if id.contains('.') {
        problems.push(format!("the {kind} id {id:?} contains a dot"));
    }
}

fn check_command(what: &str, command: &[String], problems: &mut Vec<String>) {
    match command.first() {
        None => problems.push(format!("the command of {what} is empty")),
        Some(program) if program.trim().is_empty() => {
            problems.push(format!("the command of {what} has an empty program"))
        }
        Some(program) if program.contains(' ') && command.len() == 1 => problems.push(format!(
            "the command of {what} looks like a shell line ({program:?}); give an argv array"
        )),
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_manifest_is_valid_and_has_our_entries() {
        let m = Manifest::shipped().expect("parses");
        assert_eq!(m.problems(), Vec::<String>::new());
        assert_eq!(m.id.as_deref(), Some(PLUGIN_ID));
        let view = m.pane(VIEW_ENTRY).expect("view entry");
        assert_eq!(view.placement.as_deref(), Some("split"));
        assert_eq!(view.command, ["tickloop", "herdr", "pane"]);
        let monitor = m.pane(MONITOR_ENTRY).expect("monitor entry");
        assert_eq!(monitor.placement.as_deref(), Some("overlay"));
        assert_eq!(m.startup.len(), 1);
        assert_eq!(m.startup[0].command, ["tickloop", "herdr", "restore"]);
    }

    #[test]
    fn broken_rules_are_named() {
        let text = r#"
id = "bad id"
name = "X"
version = "1"
platforms = []
[[panes]]
id = "a.b"
placement = "split"
width = 80
command = []
[[panes]]
id = "pop"
placement = "popup"
width = "80%"
command = ["x"]
[[startup]]
command = ["sh -c 'x'"]
"#;
        let problems = Manifest::parse(text).expect("parses").problems();
        let all = problems.join("\n");
        for needle in [
            "min_herdr_version",
            "plugin id",
            "empty list",
            "contains a dot",
            "only popup panes",
            "is empty",
            "shell line",
        ] {
            assert!(all.contains(needle), "{needle:?} not in {all}");
        }
        assert!(!all.contains("\"pop\""), "the popup may have a size: {all}");
    }
}
