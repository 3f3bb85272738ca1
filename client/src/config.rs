//! The person's settings: `~/.config/tickloop/config.toml` (the platform's
//! config directory, from `dirs`), read by every command that has a
//! setting. A command-line flag or an environment variable wins over it.
//!
//! ```toml
//! detach_key = "ctrl+a"   # the views' prefix key (default ctrl+\)
//! history = 5000          # lines of history `open` keeps (default 2000)
//! clipboard = false       # pass a Tick's clipboard writes on (default true)
//! approval_timeout_secs = 300  # how long a call waits for approval (default 600)
//! notify = true           # notify-send when a call waits for approval (default false)
//! image_memory_mb = 64    # memory an instance keeps drawn images in (sixel, kitty; default 32)
//!
//! [approval]
//! ask_in_host = false     # do not ask in the agent host (MCP elicitation; default true)
//! agent_input = "ask"     # an agent typing into the person's instance: auto, ask, deny
//! agent_close = "ask"     # an agent closing the person's instance: auto, ask, deny
//!
//! [agents]
//! open = "packages"       # what agents may open: any (default), packages, none
//!
//! [shell]
//! integration = false     # open bash, zsh and fish without Tickloop's shell integration (default true)
//!
//! [records]
//! keep_days = 7           # days a forgotten instance's approval log and activity are kept (default 7; 0: none)
//! ```

use serde::Deserialize;
use std::path::PathBuf;
use tickloop_proto::wire::{ApprovalPolicy, Owner};

/// The settings; `None` where the file says nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub detach_key: Option<String>,
    pub history: Option<usize>,
    pub clipboard: Option<bool>,
    /// Seconds a call waits for a person's approval (default 600).
    pub approval_timeout_secs: Option<u64>,
    /// Pop a desktop notification (`notify-send`) when a call waits for
    /// approval (default false).
    pub notify: Option<bool>,
    /// The most memory an instance keeps images a program drew in, in MB
    /// (default 32); past it the oldest are dropped.
    pub image_memory_mb: Option<u64>,
    #[serde(default)]
    pub approval: ApprovalSettings,
    #[serde(default)]
    pub agents: AgentSettings,
    #[serde(default)]
    pub shell: ShellSettings,
    #[serde(default)]
    pub records: RecordSettings,
}

/// `[records]`: what is kept of an instance once it is forgotten.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordSettings {
    /// Days a forgotten instance's approval log and activity record are
    /// kept in the data directory (default 7; 0 keeps none).
    pub keep_days: Option<u64>,
}

/// How long a forgotten instance's record is kept by default.
pub const DEFAULT_KEEP_DAYS: u64 = 7;

impl Config {
    /// How long a forgotten instance's record is kept
    /// (`[records] keep_days`, else [`DEFAULT_KEEP_DAYS`]).
    pub fn keep_records(&self) -> std::time::Duration {
        let days = self.records.keep_days.unwrap_or(DEFAULT_KEEP_DAYS);
        std::time::Duration::from_secs(days.saturating_mul(24 * 3600))
    }
}

/// `[shell]`: how `shell:` instances start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellSettings {
    /// Inject Tickloop's shell integration into bash, zsh and fish
    /// (default true).
    pub integration: Option<bool>,
}

/// `[approval]`: where and for what the person is asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalSettings {
    /// Ask in the agent host too (MCP elicitation), when it can (default
    /// true). Some hosts answer without asking anyone (a bypass mode).
    pub ask_in_host: Option<bool>,
    /// An agent typing into the person's instances (default ask).
    pub agent_input: Option<ApprovalPolicy>,
    /// An agent closing the person's instances (default ask).
    pub agent_close: Option<ApprovalPolicy>,
}

/// `[agents]`: what agents may do at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSettings {
    /// What agents may open (default any).
    pub open: Option<AgentOpen>,
}

/// What agents may open: anything, only packages, or nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentOpen {
    #[default]
    Any,
    Packages,
    None,
}

impl AgentOpen {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentOpen::Any => "any",
            AgentOpen::Packages => "packages",
            AgentOpen::None => "none",
        }
    }
}

impl Config {
    /// Whether the agent host may ask the person too.
    pub fn ask_in_host(&self) -> bool {
        self.approval.ask_in_host.unwrap_or(true)
    }

    /// Who approves an agent's typing into (`close`: closing) an instance
    /// of `owner`, unless its opener said: on a person's, the config file's
    /// choice, else ask; on an agent's own, auto.
    pub fn agent_policy(&self, owner: Owner, close: bool) -> ApprovalPolicy {
        match owner {
            Owner::Agent => ApprovalPolicy::Auto,
            Owner::Person => {
                let set = if close {
                    self.approval.agent_close
                } else {
                    self.approval.agent_input
                };
                set.unwrap_or(ApprovalPolicy::Ask)
            }
        }
    }
}

/// What an open asks of a shell's integration by the settings: `Some(false)`
/// when `[shell] integration = false` turns it off (a file that cannot be
/// read turns nothing off; the command that reads it says why).
pub fn shell_integration() -> Option<bool> {
    load()
        .ok()
        .and_then(|c| c.shell.integration)
        .filter(|on| !on)
}

/// The config file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}; fix or remove it (settings: detach_key, history, clipboard, approval_timeout_secs, notify, image_memory_mb, [approval] ask_in_host/agent_input/agent_close, [agents] open, [shell] integration, [records] keep_days)")]
pub struct ConfigError {
    pub path: String,
    pub problem: String,
}

/// How long an action waits for the person's approval by default.
pub const DEFAULT_APPROVAL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

/// How long an action waits for the person's approval:
/// `TICKLOOP_APPROVAL_TIMEOUT_MS`, else `approval_timeout_secs` in the
/// config file, else [`DEFAULT_APPROVAL_TIMEOUT`] (tickhost holds for that
/// long; `tickloop loop AGENT install` gives agent hosts longer).
pub fn approval_timeout() -> std::time::Duration {
    std::env::var("TICKLOOP_APPROVAL_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map(std::time::Duration::from_millis)
        .or_else(|| {
            load()
                .ok()
                .and_then(|c| c.approval_timeout_secs)
                .map(std::time::Duration::from_secs)
        })
        .unwrap_or(DEFAULT_APPROVAL_TIMEOUT)
}

/// Where the config file is looked for.
pub fn path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("tickloop").join("config.toml"))
}

/// The settings from the config file; all unset when there is none.
pub fn load() -> Result<Config, ConfigError> {
    let Some(path) = path() else {
        return Ok(Config::default());
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
        Err(e) => {
            return Err(ConfigError {
                path: path.display().to_string(),
                problem: e.to_string(),
            })
        }
    };
    parse(&text).map_err(|problem| ConfigError {
        path: path.display().to_string(),
        problem,
    })
}

/// The settings in `text`.
pub fn parse(text: &str) -> Result<Config, String> {
    toml::from_str(text).map_err(|e| e.message().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_settings_and_refuses_others() {
        let config = parse(
            "detach_key = \"ctrl+a\"\nhistory = 10\nclipboard = false\napproval_timeout_secs = 60\nnotify = true\n",
        )
        .unwrap();
        assert_eq!(
            config,
            Config {
                detach_key: Some("ctrl+a".into()),
                history: Some(10),
                clipboard: Some(false),
                approval_timeout_secs: Some(60),
                notify: Some(true),
                ..Config::default()
            }
        );
        let consent = parse(
            "[approval]\nask_in_host = false\nagent_input = \"deny\"\n[agents]\nopen = \"packages\"\n",
        )
        .unwrap();
        assert!(!consent.ask_in_host());
        assert_eq!(
            consent.agent_policy(Owner::Person, false),
            ApprovalPolicy::Deny
        );
        assert_eq!(
            consent.agent_policy(Owner::Person, true),
            ApprovalPolicy::Ask
        );
        assert_eq!(
            consent.agent_policy(Owner::Agent, false),
            ApprovalPolicy::Auto
        );
        assert_eq!(consent.agents.open, Some(AgentOpen::Packages));
        assert!(parse("[agents]\nopen = \"some\"").is_err());
        assert!(parse("[approval]\nask = true").is_err());
        assert_eq!(parse("").unwrap(), Config::default());
        assert!(parse("histroy = 10").unwrap_err().contains("histroy"));
        assert!(parse("history = \"lots\"").is_err());
    }

    #[test]
    fn a_forgotten_instances_record_is_kept_a_week_unless_the_file_says() {
        let day = std::time::Duration::from_secs(24 * 3600);
        assert_eq!(Config::default().keep_records(), day * 7);
        let two = parse("[records]\nkeep_days = 2\n").unwrap();
        assert_eq!(two.keep_records(), day * 2);
        let none = parse("[records]\nkeep_days = 0\n").unwrap();
        assert_eq!(none.keep_records(), std::time::Duration::ZERO);
        assert!(parse("[records]\nkeep = 2").is_err());
        assert!(parse("[records]\nkeep_days = -1").is_err());
    }
}
