//! `tickloop loop opencode install|uninstall`: registers `tickloop mcp` in an
//! `opencode.json` and writes the Loop's plugin (`plugin.js`, with the path
//! of `tickloop` in it) into the `plugin/` directory opencode loads (a
//! project's `opencode.json` and `.opencode/`, or the user's
//! `~/.config/opencode/`), and takes out exactly that again
//! ([`crate::install_kit`]).
//!
//! The plugin runs inside opencode and calls the same hooks as Claude
//! Code's ([`crate::claude_code`]) as short `tickloop` processes.

use serde_json::json;
use std::path::{Path, PathBuf};

use crate::install_kit::{InstallError, JsonEdit, Manifest, Report};

/// The manifest install writes into the opencode directory.
pub const MANIFEST: &str = "tickloop-install.json";
const AGENT: &str = "opencode";
const PLUGIN: &str = include_str!("opencode/plugin.js");

/// Where to install: a project (its `opencode.json`, its `.opencode/`) or
/// the user's config directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// `opencode.json`.
    pub config: PathBuf,
    /// The directory holding `plugin/` and the manifest.
    pub dir: PathBuf,
    pub project: Option<PathBuf>,
}

impl Target {
    pub fn project(dir: &Path) -> Target {
        Target {
            config: dir.join("opencode.json"),
            dir: dir.join(".opencode"),
            project: Some(dir.to_path_buf()),
        }
    }

    /// `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`.
    pub fn user() -> Option<Target> {
        let base = match std::env::var_os("XDG_CONFIG_HOME") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => dirs::home_dir()?.join(".config"),
        };
        let dir = base.join("opencode");
        Some(Target {
            config: dir.join("opencode.json"),
            dir,
            project: None,
        })
    }

    pub fn plugin(&self) -> PathBuf {
        self.dir.join("plugin").join("tickloop.js")
    }

    pub fn manifest(&self) -> PathBuf {
        self.dir.join(MANIFEST)
    }
}

/// The plugin's text for `exe`.
pub fn plugin_text(exe: &Path) -> String {
    let quoted =
        serde_json::to_string(&exe.to_string_lossy()).unwrap_or_else(|_| "\"tickloop\"".into());
    PLUGIN.replace("__TICKLOOP__", &quoted)
}

/// Installs into `target` the MCP server and the plugin of `exe`.
pub fn install(target: &Target, exe: &Path) -> Result<Report, InstallError> {
    let manifest_path = target.manifest();
    if manifest_path.exists() {
        return Err(InstallError::Refused {
            path: manifest_path,
            message: "Tickloop is already installed here (`tickloop loop opencode uninstall` takes it out)".into(),
        });
    }
    let plugin = target.plugin();
    if plugin.exists() {
        return Err(InstallError::Refused {
            path: plugin,
            message: "a plugin of this name exists and is not Tickloop's install; move it away, then run install again (nothing was written)".into(),
        });
    }
    let jsonc = target.config.with_extension("jsonc");
    if jsonc.exists() && !target.config.exists() && target.project.is_some() {
        return Err(InstallError::Refused {
            path: jsonc,
            message: "this project's opencode config is JSONC, which install does not edit: add `\"mcp\": {\"tickloop\": {\"type\": \"local\", \"command\": [\"tickloop\", \"mcp\"]}}` to it yourself, or rename it to opencode.json (nothing was written)".into(),
        });
    }
    let mut config = JsonEdit {
        path: target.config.clone(),
        sets: vec![(
            vec!["mcp".into(), "tickloop".into()],
            json!({"type": "local", "command": [exe.to_string_lossy(), "mcp"], "enabled": true, "timeout": crate::install_kit::host_tool_timeout_ms()}),
        )],
        ..JsonEdit::default()
    };
    let config_text = config.apply()?;
    let mut manifest = Manifest {
        version: 1,
        agent: AGENT.into(),
        ..Manifest::default()
    };
    if let Some(parent) = target.config.parent() {
        manifest.create_dir(parent)?;
    }
    manifest.create_dir(&target.dir.join("plugin"))?;
    let text = plugin_text(exe);
    crate::install_kit::write_atomic(&plugin, &text)?;
    crate::install_kit::write_atomic(&target.config, &config_text)?;
    let lines = vec![
        format!(
            "{} {}: the MCP server `tickloop`",
            if config.original.is_some() { "updated" } else { "created" },
            target.config.display()
        ),
        format!("created {}: the Loop's plugin", plugin.display()),
        format!("recorded {} (`tickloop loop opencode uninstall` undoes this)", manifest_path.display()),
        "use: `opencode run` ends when the session goes idle, so time steps need a live session: `opencode` (its screen), or `opencode serve` with `opencode run --attach URL`".into(),
    ];
    manifest.json.push(config);
    manifest.files.push((plugin, text));
    manifest.write(&manifest_path)?;
    Ok(Report { lines })
}

/// Takes out what [`install`] wrote into `target`.
pub fn uninstall(target: &Target) -> Result<Report, InstallError> {
    let manifest = Manifest::read(&target.manifest(), AGENT)?;
    manifest.undo(&target.manifest())
}
