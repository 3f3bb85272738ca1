//! One trial harness for the four agent hosts: what differs between Claude
//! Code, Codex CLI, Gemini CLI and opencode is an [`AgentCli`] (where its
//! config lives, how a prompt runs, what the scripted model answers with, how
//! a request reads), which each host's test file writes; a [`Project`] is a
//! fresh project with Tickloop installed for that host, its scripted model
//! on loopback and a private tickhost; the trials themselves are shared
//! ([`super::trials`]).

use super::FakeApi;
use crate::common::{self, Host, MARK_VAR};
use serde_json::Value;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// What differs between the agent hosts, for the shared trials.
pub trait AgentCli: Sync {
    /// Its name in `tickloop loop NAME` (and in the `agent_cli` client kind).
    fn name(&self) -> &'static str;
    /// The scripted model's dialect (`responses`, `gemini`, `chat`,
    /// `messages`).
    fn dialect(&self) -> &'static str;
    /// The CLI's path, or why it cannot run.
    fn bin(&self) -> Result<PathBuf, String>;
    /// The variables its configuration lives by (`HOME`, `CODEX_HOME`, ...),
    /// given to the agent and to `tickloop loop` alike.
    fn config_env(&self, p: &Project) -> Vec<(&'static str, OsString)>;
    /// Writes the person's own settings (the scripted model, nothing that
    /// reaches the network), before Tickloop is installed.
    fn configure(&self, p: &Project);
    /// The rest of the agent's environment (its API key, its endpoint).
    fn run_env(&self, p: &Project, cmd: &mut Command);
    /// What must keep running for a session (opencode's server).
    fn serve(&self, _p: &Project) -> Option<Served> {
        None
    }
    /// The arguments that send `prompt` (resuming the session when
    /// `resume`), after the binary.
    fn prompt_args(&self, p: &Project, resume: bool, prompt: &str) -> Vec<String>;
    /// The scripted model's reply that calls Tickloop's MCP tool `tool`.
    fn mcp_call(&self, tool: &str, args: Value) -> Value;
    /// The scripted model's reply that runs `command` in its shell tool.
    fn shell_call(&self, command: &str) -> Value;
    /// The text of a request's last user message.
    fn last_user_text(&self, request: &Value) -> String;
    /// The tool results a request carries, as text.
    fn tool_results(&self, request: &Value) -> Vec<String>;
    /// Checks that the answer to a `/tick` command, `text`, was shown to
    /// the person (`out` is the prompt's run).
    fn shows_reply(&self, p: &Project, out: &common::Out, text: &str);
    /// Whether a run armed between turns waits for the session's next turn
    /// (the host starts no turn for a consumed command).
    fn first_step_after_next_turn(&self) -> bool;
    /// How a time step's text opens in the model's request (`tick`, or
    /// Codex's `<hook_prompt`).
    fn step_opening(&self) -> &'static str {
        "tick"
    }
    /// Whether `tickloop loop NAME install` names the agent in the host's
    /// tool environment (`TICKLOOP_AGENT`; Gemini CLI has no such setting,
    /// and its own `GEMINI_CLI=1` names it).
    fn install_names_the_agent(&self) -> bool {
        true
    }
    /// Folders of the project the host writes itself (not Tickloop's).
    fn own_dirs(&self) -> &'static [&'static str] {
        &[]
    }
}

/// What a host keeps running for a session: its server's URL, the file
/// its events go to, and its processes (ended on drop).
pub struct Served {
    pub url: String,
    pub events: PathBuf,
    pub children: Vec<Child>,
}

impl Drop for Served {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One project with Tickloop installed for one agent host, its scripted
/// model, and a host for its Ticks.
pub struct Project {
    pub agent: &'static dyn AgentCli,
    pub served: Option<Served>,
    pub api: FakeApi,
    pub dir: PathBuf,
    pub home: PathBuf,
    /// The Loop's state directory (`TICKLOOP_LOOP_STATE_DIR`).
    pub state: PathBuf,
    /// `tickhost`'s approval timeout and the installs' (`TICKLOOP_APPROVAL_TIMEOUT_MS`).
    pub approval_ms: u64,
    pub host: Host,
}

impl Project {
    /// A project whose scripted model answers `script(scratch)`.
    pub fn new(agent: &'static dyn AgentCli, script: impl FnOnce(&Path) -> Value) -> Project {
        Project::with_approval(agent, 60_000, script)
    }

    /// [`Project::new`], with tickhost holding an action for the person at
    /// most `approval_ms` (and the host's MCP timeout that install writes
    /// following it).
    pub fn with_approval(
        agent: &'static dyn AgentCli,
        approval_ms: u64,
        script: impl FnOnce(&Path) -> Value,
    ) -> Project {
        Project::with_setup(agent, approval_ms, script, |_| {})
    }

    /// [`Project::with_approval`], with `setup` changing what install wrote
    /// before the session starts.
    pub fn with_setup(
        agent: &'static dyn AgentCli,
        approval_ms: u64,
        script: impl FnOnce(&Path) -> Value,
        setup: impl FnOnce(&Project),
    ) -> Project {
        let host = Host::new();
        let replies = script(host.scratch());
        let dir = host.scratch().join("project");
        let home = host.scratch().join("home");
        let state = host.scratch().join("loop-state");
        for d in [&dir, &home] {
            std::fs::create_dir_all(d).expect("scratch dirs");
        }
        let api = FakeApi::start(host.scratch(), agent.dialect(), replies, host.runtime());
        host.start_tickhost_with(&[("TICKLOOP_APPROVAL_TIMEOUT_MS", &approval_ms.to_string())]);
        let mut p = Project {
            agent,
            served: None,
            api,
            dir,
            home,
            state,
            approval_ms,
            host,
        };
        agent.configure(&p);
        let out = p.tickloop(
            &["loop", agent.name(), "install", "--project"],
            Some(&p.dir),
        );
        assert!(out.status.success(), "install: {out:?}");
        setup(&p);
        p.served = agent.serve(&p);
        p
    }

    /// `tickloop ARGS [PATH]` with the agent's configuration variables.
    pub fn tickloop(&self, args: &[&str], path_arg: Option<&Path>) -> Output {
        let mut cmd = self.host.command(args);
        cmd.envs(self.agent.config_env(self))
            .env("TICKLOOP_APPROVAL_TIMEOUT_MS", self.approval_ms.to_string());
        if let Some(p) = path_arg {
            cmd.arg(p);
        }
        cmd.output().expect("run tickloop")
    }

    /// The agent's binary with its whole environment, in the project: the
    /// scripted model, this host's runtime directory, `tickloop` first on
    /// `PATH`, none of the markers of a host around the test.
    pub fn agent_command(&self) -> Command {
        let mut cmd = Command::new(self.agent.bin().expect("the agent CLI"));
        common::as_the_person(&mut cmd)
            .current_dir(&self.dir)
            .env("PATH", super::path_with_tickloop())
            .envs(self.agent.config_env(self))
            .env("TICKLOOP_RUNTIME_DIR", self.host.runtime())
            .env("TICKLOOP_LOOP_STATE_DIR", &self.state)
            .env("TICKLOOP_LOOP_DELAY_MS", "200")
            .env("XDG_DATA_HOME", self.host.scratch().join("data"))
            .env(MARK_VAR, self.host.runtime());
        self.agent.run_env(self, &mut cmd);
        cmd
    }

    /// `prompt` sent to the agent, prepared.
    pub fn prompt(&self, resume: bool, prompt: &str) -> Command {
        let mut cmd = self.agent_command();
        cmd.args(self.agent.prompt_args(self, resume, prompt))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// Sends `prompt` and waits for the agent's turn to end.
    pub fn say(&self, resume: bool, prompt: &str) -> common::Out {
        common::run_prepared(self.prompt(resume, prompt), &[self.agent.name(), prompt])
    }

    /// Sends `prompt` and lets the turn run on (a turn whose tool waits
    /// for the person); [`Turn::finish`] waits for its end.
    pub fn start(&self, resume: bool, prompt: &str) -> Turn {
        let child = self
            .prompt(resume, prompt)
            .spawn()
            .expect("start the agent");
        Turn {
            child: Some(child),
            what: format!("{} {prompt:?}", self.agent.name()),
        }
    }

    /// Every tool result the model was sent, in order, each once.
    pub fn tool_results(&self) -> Vec<String> {
        let mut all: Vec<String> = Vec::new();
        for request in self.api.turns() {
            for result in self.agent.tool_results(&request) {
                if !all.contains(&result) {
                    all.push(result);
                }
            }
        }
        all
    }
}

/// A turn left running.
pub struct Turn {
    child: Option<Child>,
    what: String,
}

impl Turn {
    /// Waits (at most [`common::COMMAND_DEADLINE`]) for the turn's end.
    pub fn finish(mut self) -> common::Out {
        let child = self.child.take().expect("a turn");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        match rx.recv_timeout(common::COMMAND_DEADLINE) {
            Ok(Ok(out)) => common::Out {
                args: vec![self.what.clone()],
                code: out.status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            },
            other => panic!("{} did not end: {other:?}", self.what),
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
