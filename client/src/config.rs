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
//!
//! [approval]
//! ask_in_host = false     # never ask in the agent's host (MCP elicitation) (default true)
//! ```

use serde::Deserialize;
use std::path::PathBuf;

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
    /// `[approval]`: where a person is asked about held calls.
    pub approval: Option<ApprovalConfig>,
}

/// The `[approval]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalConfig {
    /// Ask the person in the agent's host (an MCP elicitation form) when a
    /// call is held and the host can ask (default true); `false`: only the
    /// CLI, the Monitor and the other views ask.
    pub ask_in_host: Option<bool>,
}

impl Config {
    /// `[approval] ask_in_host`, true when unset.
    pub fn ask_in_host(&self) -> bool {
        self.approval
            .as_ref()
            .and_then(|a| a.ask_in_host)
            .unwrap_or(true)
    }
}

/// The config file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}; fix or remove it (settings: detach_key, history, clipboard, approval_timeout_secs, notify, [approval] ask_in_host)")]
pub struct ConfigError {
    pub path: String,
    pub problem: String,
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
                approval: None,
            }
        );
        let asks = parse("[approval]\nask_in_host = false\n").unwrap();
        assert!(!asks.ask_in_host());
        assert!(Config::default().ask_in_host());
        assert!(parse("[approval]\nask_in_hots = false\n")
            .unwrap_err()
            .contains("ask_in_hots"));
        assert_eq!(parse("").unwrap(), Config::default());
        assert!(parse("histroy = 10").unwrap_err().contains("histroy"));
        assert!(parse("history = \"lots\"").is_err());
    }
}
