//! What the trials of the real Claude Code, Codex CLI, Gemini CLI and
//! opencode share: the scripted model APIs (`fake_model_api.py`, one dialect
//! each, and Claude Code's `claude_code/fake_messages_api.py`), the search
//! of `.ci/run`'s cache for the CLI, the checks on what reached the model,
//! one harness that each host's file configures ([`project`]) and the
//! trials run in each host ([`trials`]).
#![allow(dead_code)]

pub mod origin;
pub mod project;
pub mod trials;

use crate::common::{self, MARK_VAR};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The CLI named by `env_var`, else `~/.cache/tickloop-ci/<dir>/node_modules/.bin/<bin>`;
/// an error says why it cannot run.
pub fn cli_bin(env_var: &str, dir: &str, bin: &str) -> Result<PathBuf, String> {
    let path = match std::env::var_os(env_var) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => {
            let home = std::env::var_os("HOME").ok_or("HOME is not set")?;
            PathBuf::from(home).join(format!(".cache/tickloop-ci/{dir}/node_modules/.bin/{bin}"))
        }
    };
    let out = Command::new(&path)
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !out.status.success() {
        return Err(format!("{} --version failed: {out:?}", path.display()));
    }
    Ok(path)
}

/// The scripted model API.
pub struct FakeApi {
    child: Child,
    pub port: u16,
    log: PathBuf,
    script: PathBuf,
}

impl FakeApi {
    /// Starts it in `dir` with `dialect` (`responses`, `gemini`, `chat`, or
    /// `messages`: Claude Code's, `claude_code/fake_messages_api.py`).
    pub fn start(dir: &Path, dialect: &str, replies: Value, mark: &Path) -> FakeApi {
        let script = dir.join("script.json");
        let log = dir.join("requests.jsonl");
        let port_file = dir.join("port");
        write_script(&script, &replies);
        let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
        let mut cmd = Command::new("python3");
        if dialect == "messages" {
            cmd.arg(tests.join("claude_code/fake_messages_api.py"));
        } else {
            cmd.arg(tests.join("agents/fake_model_api.py"))
                .args(["--dialect", dialect]);
        }
        let child = cmd
            .arg("--script")
            .arg(&script)
            .arg("--log")
            .arg(&log)
            .arg("--port-file")
            .arg(&port_file)
            .env(MARK_VAR, mark)
            .stdin(Stdio::null())
            .spawn()
            .expect("start the fake model API");
        let port = common::wait_for("the fake model API's port", || {
            std::fs::read_to_string(&port_file)
                .ok()?
                .trim()
                .parse()
                .ok()
        });
        FakeApi {
            child,
            port,
            log,
            script,
        }
    }

    /// Replaces the replies (read again for each request).
    pub fn set_replies(&self, replies: &Value) {
        write_script(&self.script, replies);
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The agent's main-turn requests (those that carry tools).
    pub fn turns(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| {
                let path = r["path"].as_str().unwrap_or("");
                r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty())
                    && !path.contains(":countTokens")
                    && !path.contains("count_tokens")
            })
            .collect()
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes a script of `replies` to `path` whole (a reader never sees half).
fn write_script(path: &Path, replies: &Value) {
    let tmp = path.with_extension("tmp");
    std::fs::write(
        &tmp,
        json!({"replies": replies, "default": {"text": "default reply"}}).to_string(),
    )
    .expect("write the script");
    std::fs::rename(&tmp, path).expect("replace the script");
}

/// Panics with the context when a request carries `/tick` as a command word.
pub fn assert_no_tick_text(requests: &[Value]) {
    for (i, r) in requests.iter().enumerate() {
        let text = r["body"].to_string();
        let found = text.match_indices("/tick").map(|(at, _)| at).find(|&at| {
            !text[at + 5..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric())
        });
        if let Some(at) = found {
            let from = text.floor_char_boundary(at.saturating_sub(300));
            let to = text.ceil_char_boundary((at + 300).min(text.len()));
            panic!("request {i} carries /tick text: …{}…", &text[from..to]);
        }
    }
}

/// The audit ledger records under `dir/.pulse-tick-audit`, in order.
pub fn ledger(project: &Path) -> Vec<Value> {
    let dir = project.join(".pulse-tick-audit");
    let mut records = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let text = std::fs::read_to_string(e.path()).unwrap_or_default();
            records.extend(
                text.lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok()),
            );
        }
    }
    records
}

pub fn ledger_types(project: &Path) -> Vec<String> {
    ledger(project)
        .iter()
        .map(|r| r["type"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// The ledger of one bounded run of two steps that completed.
pub const TWO_STEP_RUN: [&str; 8] = [
    "loop_armed",
    "tick_scheduled",
    "tick_enqueued",
    "tick_terminal",
    "tick_scheduled",
    "tick_enqueued",
    "tick_terminal",
    "loop_complete",
];

/// `PATH` with the `tickloop` under test first.
pub fn path_with_tickloop() -> std::ffi::OsString {
    let tickloop_dir = Path::new(common::tickloop_bin()).parent().expect("bin dir");
    std::env::join_paths(
        std::iter::once(tickloop_dir.to_path_buf()).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )),
    )
    .expect("PATH")
}

/// `tickloop call hosted:counter increment {"amount":1}`.
pub fn increment(host: &common::Host) {
    let out = host.run(&[
        "call",
        "hosted:counter",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// Every file under `dir` with its bytes, for "uninstall left it as it was".
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push((p.clone(), Vec::new()));
                stack.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

/// Runs a trial body, turning its panic into a failure.
pub fn trial(name: &str, f: fn(), missing: &Option<String>) -> libtest_mimic::Trial {
    trial_of(name, f, missing)
}

/// [`trial`] of a closure (a shared trial given its host).
pub fn trial_of(
    name: &str,
    f: impl FnOnce() + Send + 'static,
    missing: &Option<String>,
) -> libtest_mimic::Trial {
    libtest_mimic::Trial::test(name, move || {
        // The trial owns nothing that outlives it: a panic ends it whole.
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|e| {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panicked".into());
            libtest_mimic::Failed::from(msg)
        })
    })
    .with_ignored_flag(missing.is_some())
}

/// What a files-only install trial does with one agent's
/// `tickloop loop AGENT install|uninstall`: `run` runs `tickloop ARGS
/// [PATH]` with the trial's home and project; `user_empty` tells whether
/// nothing is installed for the user.
pub struct Installs<'a> {
    pub agent: &'a str,
    pub run: &'a dyn Fn(&[&str], Option<&Path>) -> std::process::Output,
    pub project: &'a Path,
    pub user_empty: &'a dyn Fn() -> bool,
}

impl Installs<'_> {
    fn ask(&self, verb: &str, scope: &str, path: Option<&Path>) -> std::process::Output {
        (self.run)(&["loop", self.agent, verb, scope], path)
    }

    /// After a project install: a second one, and a user one over it, are
    /// refused with nothing written for the user; the project's uninstall
    /// leaves its files as `before`. The refused user install's output is
    /// returned, for what an agent's trial checks more.
    pub fn refused_twice_then_undone(&self, before: &[(PathBuf, Vec<u8>)]) -> std::process::Output {
        let out = self.ask("install", "--project", Some(self.project));
        assert_eq!(out.status.code(), Some(1), "twice: {out:?}");
        let user = self.ask("install", "--user", None);
        assert_eq!(
            user.status.code(),
            Some(1),
            "user after project here: {user:?}"
        );
        assert!((self.user_empty)(), "nothing written for the user");
        let out = self.ask("uninstall", "--project", Some(self.project));
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            snapshot(self.project),
            before,
            "the project's files as they were"
        );
        user
    }

    /// `file` made `content`, which the agent's config cannot be: install
    /// refuses it, saying `says`, and writes nothing.
    pub fn unreadable_config_refused(&self, file: &Path, content: &str, says: &str) {
        std::fs::write(file, content).expect("write the config");
        let before = snapshot(self.project);
        let out = self.ask("install", "--project", Some(self.project));
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{out:?}"
        );
        assert_eq!(snapshot(self.project), before);
    }

    /// A user install, then a project install in the fresh project `fresh`
    /// refused, then the user's uninstall.
    pub fn user_then_project_refused(&self, fresh: &Path) {
        std::fs::create_dir_all(fresh).expect("a fresh project");
        let out = self.ask("install", "--user", None);
        assert!(out.status.success(), "{out:?}");
        let out = self.ask("install", "--project", Some(fresh));
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("for the user"),
            "{out:?}"
        );
        let out = self.ask("uninstall", "--user", None);
        assert!(out.status.success(), "{out:?}");
    }
}
