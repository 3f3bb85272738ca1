//! `tickloop loop codex install|uninstall`: registers `tickloop mcp` in a
//! Codex `config.toml` and the Loop's hooks in the `hooks.json` next to it
//! (a project's `.codex/`, or the user's `$CODEX_HOME`, default `~/.codex`),
//! and takes out exactly that again ([`crate::install_kit`]).
//!
//! The hooks are the same engine as Claude Code's ([`crate::claude_code`]),
//! as Codex calls them: `UserPromptSubmit` (a `/tick` prompt is answered
//! with `{"decision":"block"}` and never reaches the model) and `Stop` (the
//! next time step continues the turn with `{"decision":"block","reason"}`).

use serde_json::json;
use std::path::{Path, PathBuf};

use crate::install_kit::{InstallError, JsonEdit, Manifest, Report, TomlBlock};

/// The manifest install writes into the Codex directory.
pub const MANIFEST: &str = "tickloop-install.json";
const AGENT: &str = "codex";

/// Where to install: a `.codex` directory (a project's, or the user's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub codex_dir: PathBuf,
    /// The project directory, for a project install.
    pub project: Option<PathBuf>,
}

impl Target {
    /// `DIR/.codex`.
    pub fn project(dir: &Path) -> Target {
        Target {
            codex_dir: dir.join(".codex"),
            project: Some(dir.to_path_buf()),
        }
    }

    /// `$CODEX_HOME`, else `~/.codex`.
    pub fn user() -> Option<Target> {
        let dir = match std::env::var_os("CODEX_HOME") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => dirs::home_dir()?.join(".codex"),
        };
        Some(Target {
            codex_dir: dir,
            project: None,
        })
    }

    pub fn config(&self) -> PathBuf {
        self.codex_dir.join("config.toml")
    }

    pub fn hooks(&self) -> PathBuf {
        self.codex_dir.join("hooks.json")
    }

    pub fn manifest(&self) -> PathBuf {
        self.codex_dir.join(MANIFEST)
    }
}

/// Quotes a path for the shell line Codex runs a hook command with.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,".contains(c))
    {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// TOML's basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// The `[mcp_servers.tickloop]` block: `tickloop mcp`, with the variables
/// that locate tickhost, the config file and the Loop's states passed
/// through (Codex gives an MCP server only a few variables of its own
/// environment; TickManage `subscribe` writes the session's Loop state the
/// hooks read), and a tool timeout that outlasts
/// a question to the person ([`crate::install_kit::host_tool_timeout`]).
/// With `agent_env`, also `[shell_environment_policy.set]`
/// `TICKLOOP_AGENT = "codex"`: a `tickloop` run by Codex's shell tool acts
/// as Codex's agent.
pub fn mcp_block(exe: &Path, agent_env: bool) -> String {
    let mut block = format!(
        "# Added by `tickloop loop codex install`; `tickloop loop codex uninstall` takes it out.\n[mcp_servers.tickloop]\ncommand = {}\nargs = [\"mcp\"]\nenv_vars = [\"TICKLOOP_RUNTIME_DIR\", \"XDG_RUNTIME_DIR\", \"XDG_CONFIG_HOME\", \"XDG_STATE_HOME\", \"TICKLOOP_LOOP_STATE_DIR\"]\nstartup_timeout_sec = 20\ntool_timeout_sec = {}\n",
        toml_string(&exe.to_string_lossy()),
        crate::install_kit::host_tool_timeout().as_secs()
    );
    if agent_env {
        block.push_str("\n[shell_environment_policy.set]\nTICKLOOP_AGENT = \"codex\"\n");
    }
    block
}

/// Whether `config` (its text, if any) leaves room for
/// `[shell_environment_policy.set]`: a person's own `set` stays theirs
/// (Codex's `CODEX_THREAD_ID` still names its shell tool's processes).
fn room_for_agent_env(config: &Path) -> bool {
    let text = std::fs::read_to_string(config).unwrap_or_default();
    let Ok(table) = text.parse::<toml::Table>() else {
        // Not TOML: `TomlBlock::apply` refuses it, saying so.
        return true;
    };
    table
        .get("shell_environment_policy")
        .and_then(toml::Value::as_table)
        .is_none_or(|policy| !policy.contains_key("set"))
}

/// The hook groups appended to `hooks.json`.
pub fn hook_appends(exe: &Path) -> Vec<(Vec<String>, serde_json::Value)> {
    let exe = shell_quote(&exe.to_string_lossy());
    let group = |event: &str, timeout: u32| json!({"hooks": [{"type": "command", "command": format!("{exe} loop codex hook {event}"), "timeout": timeout}]});
    vec![
        (
            vec!["hooks".into(), "UserPromptSubmit".into()],
            group("user-prompt-submit", 30),
        ),
        (vec!["hooks".into(), "Stop".into()], group("stop", 600)),
    ]
}

/// Installs into `target` the hooks and MCP server of `exe`.
pub fn install(target: &Target, exe: &Path) -> Result<Report, InstallError> {
    let manifest_path = target.manifest();
    if manifest_path.exists() {
        return Err(InstallError::Refused {
            path: manifest_path,
            message:
                "Tickloop is already installed here (`tickloop loop codex uninstall` takes it out)"
                    .into(),
        });
    }
    // Check everything before writing anything.
    let agent_env = room_for_agent_env(&target.config());
    let (block, config_text) = TomlBlock::apply(
        &target.config(),
        &mcp_block(exe, agent_env),
        &["mcp_servers", "tickloop"],
    )?;
    let mut hooks = JsonEdit {
        path: target.hooks(),
        appends: hook_appends(exe),
        ..JsonEdit::default()
    };
    let hooks_text = hooks.apply()?;
    let mut manifest = Manifest {
        version: 1,
        agent: AGENT.into(),
        ..Manifest::default()
    };
    manifest.create_dir(&target.codex_dir)?;
    crate::install_kit::write_atomic(&target.config(), &config_text)?;
    crate::install_kit::write_atomic(&target.hooks(), &hooks_text)?;
    let mut lines = vec![
        format!(
            "{} {}: the MCP server `tickloop` (tool timeout {} s: the approval timeout and a minute){}",
            verb(&block.original),
            target.config().display(),
            crate::install_kit::host_tool_timeout().as_secs(),
            if agent_env {
                "; shell_environment_policy.set TICKLOOP_AGENT=codex (a `tickloop` run by Codex's shell tool acts as its agent: typing into and closing your instances waits for you)"
            } else {
                "; your shell_environment_policy.set is kept as it is (Codex's own CODEX_THREAD_ID still marks its shell tool's `tickloop` as its agent)"
            }
        ),
        format!(
            "{} {}: hooks UserPromptSubmit, Stop",
            verb(&hooks.original),
            target.hooks().display()
        ),
        format!(
            "recorded {} (`tickloop loop codex uninstall` undoes this)",
            manifest_path.display()
        ),
    ];
    manifest.toml.push(block);
    manifest.json.push(hooks);
    manifest.write(&manifest_path)?;
    lines.extend(trust_lines(target));
    Ok(Report { lines })
}

fn verb(original: &Option<String>) -> &'static str {
    if original.is_some() {
        "updated"
    } else {
        "created"
    }
}

/// How to make Codex run what install wrote: it loads a project's `.codex`
/// only in a trusted project, and skips hooks nobody trusted without a word.
pub fn trust_lines(target: &Target) -> Vec<String> {
    let mut lines = Vec::new();
    if let Some(project) = &target.project {
        lines.push(format!(
            "trust: Codex reads {} only in a trusted project: run `codex` in {} and trust it when asked (or `codex exec --trust` there once)",
            target.codex_dir.display(),
            project.display()
        ));
    }
    lines.push(
        "trust: Codex skips hooks it was not told to trust, without a word: in `codex`, type /hooks and trust the two `tickloop loop codex hook` entries (each time they change); `--dangerously-bypass-hook-trust` runs them unreviewed".into(),
    );
    lines.push(
        "use: in Codex's screen type ` /tick N` with a space first (Codex takes a leading `/` as its own command); `codex exec` takes `/tick N` as it is".into(),
    );
    lines
}

/// Takes out what [`install`] wrote into `target`.
pub fn uninstall(target: &Target) -> Result<Report, InstallError> {
    let manifest = Manifest::read(&target.manifest(), AGENT)?;
    manifest.undo(&target.manifest())
}
