//! Loop policies: named, immutable time-step texts, compiled once at start to
//! `{id, timeStepText, timeStepBytes, timeStepSha256}`, and the configuration
//! file they come from (`dirs::config_dir()/tickloop/loop.json`).
//!
//! A run holds an `Arc<CompiledPolicy>`: editing or reloading the
//! configuration afterwards can never change a later step of that run.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::command::{valid_policy_id, MAX_COUNT, MIN_COUNT};

/// The built-in policy's id and text (the seed's envelope text).
pub const BUILTIN_POLICY_ID: &str = "tick";
pub const BUILTIN_POLICY_TEXT: &str = "tick";
/// `defaultTicks` when the configuration sets none.
pub const BUILTIN_DEFAULT_TICKS: u32 = 3;
/// Largest time-step text, in UTF-8 bytes.
pub const MAX_POLICY_BYTES: usize = 4096;

/// A policy as frozen at start. Serialized with the seed's field names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompiledPolicy {
    pub id: String,
    pub time_step_text: String,
    pub time_step_bytes: usize,
    pub time_step_sha256: String,
}

/// What is wrong with a policy or the configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    #[error("invalid policy id `{0}`: an id starts with an ASCII letter and has at most 64 ASCII letters, digits, `.`, `_` or `-`")]
    InvalidId(String),
    #[error("policy `{0}`: the time-step text is blank")]
    Blank(String),
    #[error("policy `{id}`: the time-step text is {bytes} bytes; at most {MAX_POLICY_BYTES} UTF-8 bytes are allowed")]
    TooLong { id: String, bytes: usize },
    #[error("policy `{0}` is built in and cannot be redefined")]
    Builtin(String),
    #[error("defaultTicks {0} is out of range: it must be in [{MIN_COUNT}, {MAX_COUNT}]")]
    DefaultTicks(u64),
    #[error("defaultPolicyId `{0}` names no policy")]
    UnknownDefault(String),
}

/// A configuration file that could not be used, with its path.
#[derive(Debug, thiserror::Error)]
#[error("loop configuration {}: {message}", path.display())]
pub struct ConfigError {
    pub path: PathBuf,
    pub message: String,
}

impl CompiledPolicy {
    /// Validates and compiles one policy.
    pub fn compile(id: &str, text: &str) -> Result<CompiledPolicy, PolicyError> {
        if !valid_policy_id(id) {
            return Err(PolicyError::InvalidId(id.to_string()));
        }
        // A Rust `str` is always well-formed Unicode; the JSON parser refuses
        // lone surrogates, so "well-formed" holds by construction here.
        if text.trim().is_empty() {
            return Err(PolicyError::Blank(id.to_string()));
        }
        if text.len() > MAX_POLICY_BYTES {
            return Err(PolicyError::TooLong {
                id: id.to_string(),
                bytes: text.len(),
            });
        }
        Ok(CompiledPolicy {
            id: id.to_string(),
            time_step_text: text.to_string(),
            time_step_bytes: text.len(),
            time_step_sha256: sha256_hex(text.as_bytes()),
        })
    }
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The configuration file's shape (`loop.json`). Unknown fields are errors.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LoopConfigFile {
    #[serde(default)]
    pub default_ticks: Option<u64>,
    #[serde(default)]
    pub default_policy_id: Option<String>,
    /// Policy id → time-step text.
    #[serde(default)]
    pub policies: BTreeMap<String, String>,
}

/// Every policy, compiled, with the defaults. Immutable once built (a
/// serialized set, as the Claude Code adapter keeps it, stays frozen too).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PolicySet {
    policies: BTreeMap<String, Arc<CompiledPolicy>>,
    default_policy: Arc<CompiledPolicy>,
    default_ticks: u32,
}

impl PolicySet {
    /// The built-in policy alone, with the built-in defaults.
    pub fn builtin() -> PolicySet {
        let mut policies = BTreeMap::new();
        let builtin = Arc::new(builtin_policy());
        policies.insert(builtin.id.clone(), builtin.clone());
        PolicySet {
            policies,
            default_policy: builtin,
            default_ticks: BUILTIN_DEFAULT_TICKS,
        }
    }

    /// Compiles a parsed configuration on top of the built-in policy.
    pub fn from_config(config: &LoopConfigFile) -> Result<PolicySet, PolicyError> {
        let mut set = PolicySet::builtin();
        for (id, text) in &config.policies {
            if id == BUILTIN_POLICY_ID {
                return Err(PolicyError::Builtin(id.clone()));
            }
            let compiled = CompiledPolicy::compile(id, text)?;
            set.policies.insert(id.clone(), Arc::new(compiled));
        }
        if let Some(n) = config.default_ticks {
            if !(u64::from(MIN_COUNT)..=u64::from(MAX_COUNT)).contains(&n) {
                return Err(PolicyError::DefaultTicks(n));
            }
            set.default_ticks = n as u32;
        }
        if let Some(id) = &config.default_policy_id {
            let policy = set
                .policies
                .get(id)
                .ok_or_else(|| PolicyError::UnknownDefault(id.clone()))?;
            set.default_policy = policy.clone();
        }
        Ok(set)
    }

    /// Parses and compiles configuration text; `path` only names the file in errors.
    pub fn from_json(path: &Path, text: &str) -> Result<PolicySet, ConfigError> {
        let err = |message: String| ConfigError {
            path: path.to_path_buf(),
            message,
        };
        let config: LoopConfigFile =
            serde_json::from_str(text).map_err(|e| err(format!("invalid JSON: {e}")))?;
        PolicySet::from_config(&config).map_err(|e| err(e.to_string()))
    }

    /// Loads `path`: a missing file means the built-in policy alone; any other
    /// problem (unreadable, not JSON, an invalid policy) is an error.
    pub fn load(path: &Path) -> Result<PolicySet, ConfigError> {
        match std::fs::read_to_string(path) {
            Ok(text) => PolicySet::from_json(path, &text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PolicySet::builtin()),
            Err(e) => Err(ConfigError {
                path: path.to_path_buf(),
                message: format!("cannot read: {e}"),
            }),
        }
    }

    pub fn get(&self, id: &str) -> Option<&Arc<CompiledPolicy>> {
        self.policies.get(id)
    }

    pub fn default_policy(&self) -> &Arc<CompiledPolicy> {
        &self.default_policy
    }

    pub fn default_ticks(&self) -> u32 {
        self.default_ticks
    }

    /// Every policy, sorted by id.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<CompiledPolicy>> {
        self.policies.values()
    }
}

fn builtin_policy() -> CompiledPolicy {
    CompiledPolicy {
        id: BUILTIN_POLICY_ID.to_string(),
        time_step_text: BUILTIN_POLICY_TEXT.to_string(),
        time_step_bytes: BUILTIN_POLICY_TEXT.len(),
        time_step_sha256: sha256_hex(BUILTIN_POLICY_TEXT.as_bytes()),
    }
}

/// Where the configuration lives by default: `dirs::config_dir()/tickloop/loop.json`.
pub fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("tickloop").join("loop.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiles_with_sha256() {
        let p = CompiledPolicy::compile("tick", "tick").unwrap();
        assert_eq!(p.time_step_bytes, 4);
        assert_eq!(
            p.time_step_sha256,
            "55a4bc5be68ea5c30cbe4d07e3bf951163b5a207dfd628ea53a2eb21072a9f3b"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let json = serde_json::to_value(&p).unwrap();
        assert_eq!(json["timeStepBytes"], 4);
        assert_eq!(json["timeStepText"], "tick");
        assert!(json["timeStepSha256"].is_string());
    }

    #[test]
    fn refuses_bad_policies() {
        assert!(matches!(
            CompiledPolicy::compile("x", "  \n\t"),
            Err(PolicyError::Blank(_))
        ));
        assert!(matches!(
            CompiledPolicy::compile("x", &"é".repeat(2049)),
            Err(PolicyError::TooLong { bytes: 4098, .. })
        ));
        assert!(CompiledPolicy::compile("x", &"a".repeat(4096)).is_ok());
        assert!(matches!(
            CompiledPolicy::compile("1x", "t"),
            Err(PolicyError::InvalidId(_))
        ));
    }

    #[test]
    fn config_errors_name_the_path() {
        let path = Path::new("/cfg/loop.json");
        let e = PolicySet::from_json(path, "{not json").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("loop configuration /cfg/loop.json: invalid JSON"));
        let e = PolicySet::from_json(path, r#"{"defaultTick": 3}"#).unwrap_err();
        assert!(e.to_string().contains("unknown field"), "{e}");
        let e = PolicySet::from_json(path, r#"{"defaultTicks": 0}"#).unwrap_err();
        assert!(e.to_string().contains("defaultTicks 0"), "{e}");
        let e = PolicySet::from_json(path, r#"{"defaultPolicyId": "nope"}"#).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
        let e = PolicySet::from_json(path, r#"{"policies": {"tick": "x"}}"#).unwrap_err();
        assert!(e.to_string().contains("built in"), "{e}");
        let e = PolicySet::from_json(path, r#"{"policies": {"p": "\ud800"}}"#).unwrap_err();
        assert!(e.to_string().contains("invalid JSON"), "{e}");
    }

    #[test]
    fn config_defaults() {
        let set = PolicySet::from_json(
            Path::new("x"),
            r#"{"defaultTicks": 7, "defaultPolicyId": "calm", "policies": {"calm": "Continue."}}"#,
        )
        .unwrap();
        assert_eq!(set.default_ticks(), 7);
        assert_eq!(set.default_policy().id, "calm");
        assert_eq!(set.iter().count(), 2);
        let missing = PolicySet::load(Path::new("/nonexistent/tickloop/loop.json")).unwrap();
        assert_eq!(missing.default_policy().id, BUILTIN_POLICY_ID);
        assert_eq!(missing.default_ticks(), BUILTIN_DEFAULT_TICKS);
    }
}
