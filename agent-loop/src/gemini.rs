//! `tickloop loop gemini install|uninstall`: registers `tickloop mcp` and the
//! Loop's hooks in a Gemini CLI `settings.json` (a project's `.gemini/`, or
//! the user's `$GEMINI_CLI_HOME/.gemini`, default `~/.gemini`), and takes out
//! exactly that again ([`crate::install_kit`]).
//!
//! The hooks are the same engine as Claude Code's ([`crate::claude_code`]),
//! as Gemini CLI calls them: `BeforeAgent` (a `/tick` prompt is answered with
//! `{"decision":"deny"}` and never reaches the model) and `AfterAgent` (the
//! next time step starts a new turn with `{"decision":"deny","reason"}`).

use serde_json::{json, Value};
use std::path::{Path, PathBuf};

use crate::codex::shell_quote;
use crate::install_kit::{read_text, InstallError, JsonEdit, Manifest, Report};

/// The manifest install writes into the `.gemini` directory.
pub const MANIFEST: &str = "tickloop-install.json";
const AGENT: &str = "gemini";

/// Where to install: a `.gemini` directory (a project's, or the user's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub gemini_dir: PathBuf,
    pub project: Option<PathBuf>,
}

impl Target {
    /// `DIR/.gemini`.
    pub fn project(dir: &Path) -> Target {
        Target {
            gemini_dir: dir.join(".gemini"),
            project: Some(dir.to_path_buf()),
        }
    }

    /// `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
    pub fn user() -> Option<Target> {
        let home = match std::env::var_os("GEMINI_CLI_HOME") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => dirs::home_dir()?,
        };
        Some(Target {
            gemini_dir: home.join(".gemini"),
            project: None,
        })
    }

    pub fn settings(&self) -> PathBuf {
        self.gemini_dir.join("settings.json")
    }

    pub fn manifest(&self) -> PathBuf {
        self.gemini_dir.join(MANIFEST)
    }
}

fn keys(path: &[&str]) -> Vec<String> {
    path.iter().map(|s| s.to_string()).collect()
}

/// The settings entries for `exe`: the MCP server, the hooks, and hooks
/// switched on unless the settings already say so.
fn edit(target: &Target, exe: &Path) -> Result<JsonEdit, InstallError> {
    let quoted = shell_quote(&exe.to_string_lossy());
    let hook = |name: &str, event: &str, timeout_ms: u64| json!({"hooks": [{"name": name, "type": "command", "command": format!("{quoted} loop gemini hook {event}"), "timeout": timeout_ms}]});
    let mut sets = vec![(
        keys(&["mcpServers", "tickloop"]),
        json!({"command": exe.to_string_lossy(), "args": ["mcp"], "timeout": crate::install_kit::host_tool_timeout_ms()}),
    )];
    let current = read_text(&target.settings())?
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("hooksConfig").and_then(|h| h.get("enabled")).cloned());
    match current {
        None => sets.push((keys(&["hooksConfig", "enabled"]), json!(true))),
        Some(Value::Bool(true)) => {}
        Some(_) => {
            return Err(InstallError::Refused {
                path: target.settings(),
                message: "`hooksConfig.enabled` is not true: the Loop needs Gemini CLI's hooks on; set it to true, then run install again (nothing was written)".into(),
            })
        }
    }
    Ok(JsonEdit {
        path: target.settings(),
        appends: vec![
            (
                keys(&["hooks", "BeforeAgent"]),
                hook("tickloop-prompt", "user-prompt-submit", 30_000),
            ),
            (
                keys(&["hooks", "AfterAgent"]),
                hook("tickloop-turn-end", "stop", 600_000),
            ),
        ],
        sets,
        ..JsonEdit::default()
    })
}

/// Installs into `target` the hooks and MCP server of `exe`.
pub fn install(target: &Target, exe: &Path) -> Result<Report, InstallError> {
    let manifest_path = target.manifest();
    if manifest_path.exists() {
        return Err(InstallError::Refused {
            path: manifest_path,
            message:
                "Tickloop is already installed here (`tickloop loop gemini uninstall` takes it out)"
                    .into(),
        });
    }
    let mut settings = edit(target, exe)?;
    let text = settings.apply()?;
    let mut manifest = Manifest {
        version: 1,
        agent: AGENT.into(),
        ..Manifest::default()
    };
    manifest.create_dir(&target.gemini_dir)?;
    crate::install_kit::write_atomic(&target.settings(), &text)?;
    let mut lines = vec![
        format!(
            "{} {}: the MCP server `tickloop`, hooks BeforeAgent, AfterAgent",
            if settings.original.is_some() {
                "updated"
            } else {
                "created"
            },
            target.settings().display()
        ),
        format!(
            "recorded {} (`tickloop loop gemini uninstall` undoes this)",
            manifest_path.display()
        ),
    ];
    manifest.json.push(settings);
    manifest.write(&manifest_path)?;
    if let Some(project) = &target.project {
        lines.push(format!(
            "trust: Gemini CLI reads {} only in a trusted folder: trust {} when Gemini CLI asks (or with /permissions)",
            target.gemini_dir.display(),
            project.display()
        ));
    }
    Ok(Report { lines })
}

/// Takes out what [`install`] wrote into `target`.
pub fn uninstall(target: &Target) -> Result<Report, InstallError> {
    let manifest = Manifest::read(&target.manifest(), AGENT)?;
    manifest.undo(&target.manifest())
}
