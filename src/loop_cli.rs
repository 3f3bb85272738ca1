//! `tickloop loop run`: the command line of the Loop's harness interface,
//! which drives one agent session's Loop over JSON lines on stdin/stdout
//! (`tickloop_loop::run`; docs/loop.md); and `tickloop loop
//! claude-code install|uninstall|hook`, the same Loop inside Claude Code
//! (`tickloop_loop::claude_code`; docs/claude-code.md), and `tickloop loop
//! codex|gemini|opencode install|uninstall|hook`, inside Codex, Gemini CLI
//! and opencode (`tickloop_loop::installer`; docs/codex.md, docs/gemini.md,
//! docs/opencode.md).

use clap::{Args, Subcommand};
use std::path::PathBuf;
use tickloop_client::ssh::SshHost;
use tickloop_loop::claude_code::{self, install, HookEvent};
use tickloop_loop::run::{self, RunError, RunOptions};
use tickloop_loop::{installer, Agent};

#[derive(Subcommand)]
pub enum LoopCommand {
    /// Drive one agent session's Loop: transcript, commands and turn ends as
    /// JSON lines on stdin; time steps and replies as JSON lines on stdout.
    Run(RunArgs),
    /// The Loop inside Claude Code: install its hooks and /tick command,
    /// take them out, or run one hook (what Claude Code calls).
    #[command(subcommand)]
    ClaudeCode(ClaudeCodeCommand),
    /// The Loop inside Codex CLI: register `tickloop mcp` and the hooks in
    /// .codex/config.toml and .codex/hooks.json, take them out, or run one
    /// hook (what Codex calls).
    #[command(subcommand)]
    Codex(AgentCommand),
    /// The Loop inside Gemini CLI: register `tickloop mcp` and the hooks in
    /// .gemini/settings.json, take them out, or run one hook.
    #[command(subcommand)]
    Gemini(AgentCommand),
    /// The Loop inside opencode: register `tickloop mcp` in opencode.json and
    /// the Loop's plugin in .opencode/plugin/, take them out, or run one
    /// hook (what the plugin calls).
    #[command(subcommand)]
    Opencode(AgentCommand),
}

#[derive(Subcommand)]
pub enum AgentCommand {
    /// Register `tickloop mcp` and the Loop's hooks in the agent's config
    /// files (merged; a manifest records what was added).
    Install(TargetArgs),
    /// Take out exactly what install wrote.
    Uninstall(TargetArgs),
    /// One hook call: the agent's hook JSON on stdin, its decision on stdout.
    Hook {
        /// user-prompt-submit, stop; and for opencode's plugin also wake
        /// (the first step of a run) and stop-failure.
        #[arg(value_parser = ["user-prompt-submit", "stop", "wake", "stop-failure"])]
        event: String,
    },
}

#[derive(Subcommand)]
pub enum ClaudeCodeCommand {
    /// Write the hooks into .claude/settings.json (merged) and the /tick
    /// command into .claude/commands/tick.md.
    Install(TargetArgs),
    /// Take out exactly what install wrote.
    Uninstall(TargetArgs),
    /// One hook call: Claude Code's hook JSON on stdin, its decision on stdout.
    Hook {
        /// user-prompt-submit, wake, stop or stop-failure.
        #[arg(value_parser = ["user-prompt-submit", "wake", "stop", "stop-failure"])]
        event: String,
    },
}

#[derive(Args)]
pub struct TargetArgs {
    /// The project directory (default: the current directory).
    #[arg(long, conflicts_with = "user")]
    project: Option<PathBuf>,
    /// The user's settings instead of a project's ($CLAUDE_CONFIG_DIR or
    /// ~/.claude; $CODEX_HOME or ~/.codex; $GEMINI_CLI_HOME/.gemini or ~/.gemini;
    /// $XDG_CONFIG_HOME/opencode or ~/.config/opencode).
    #[arg(long)]
    user: bool,
}

#[derive(Args)]
pub struct RunArgs {
    /// The agent session's id (names its audit ledger file).
    #[arg(long)]
    session: String,
    /// Milliseconds between a completed turn and the next time step.
    #[arg(long, default_value_t = run::DEFAULT_DELAY_MS)]
    delay_ms: u64,
    /// Audit ledger directory (default: .pulse-tick-audit in the current directory).
    #[arg(long)]
    audit_dir: Option<PathBuf>,
    /// Milliseconds between deliveries of subscribed Ticks.
    #[arg(long, default_value_t = run::DEFAULT_INTERVAL_MS)]
    interval_ms: u64,
    /// Policy configuration file (default: the user's config dir, tickloop/loop.json).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Runs the command; its errors go to stderr only (stdout is the harness's
/// JSON-lines channel). Returns the exit code: 0 at end of input, 2 for a
/// usage error, 1 otherwise. `host`: the machine of `--host` (`loop run`'s
/// Ticks are there).
pub fn run(command: LoopCommand, runtime_dir: PathBuf, exe: PathBuf, host: Option<SshHost>) -> i32 {
    let args = match command {
        LoopCommand::Run(args) => args,
        LoopCommand::ClaudeCode(cc) => return claude_code_command(cc, runtime_dir, exe),
        LoopCommand::Codex(c) => return agent_command(Agent::Codex, c, runtime_dir, &exe),
        LoopCommand::Gemini(c) => return agent_command(Agent::Gemini, c, runtime_dir, &exe),
        LoopCommand::Opencode(c) => return agent_command(Agent::Opencode, c, runtime_dir, &exe),
    };
    let options = RunOptions {
        session: args.session,
        delay_ms: args.delay_ms,
        audit_dir: args.audit_dir,
        interval_ms: args.interval_ms,
        config: args.config,
    };
    match run::run_on(options, host) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tickloop loop run: {e}");
            match e {
                RunError::Usage(_) => 2,
                _ => 1,
            }
        }
    }
}

fn claude_code_command(command: ClaudeCodeCommand, runtime_dir: PathBuf, exe: PathBuf) -> i32 {
    let (target, uninstall) = match command {
        ClaudeCodeCommand::Hook { event } => {
            let Some(event) = HookEvent::parse(&event) else {
                eprintln!("tickloop loop claude-code hook: unknown event `{event}`");
                return 2;
            };
            return claude_code::run_hook(event, runtime_dir);
        }
        ClaudeCodeCommand::Install(t) => (t, false),
        ClaudeCodeCommand::Uninstall(t) => (t, true),
    };
    let verb = if uninstall { "uninstall" } else { "install" };
    let target = if target.user {
        match install::Target::user() {
            Some(t) if !uninstall && project_install_here(&t) => {
                eprintln!(
                    "tickloop loop claude-code install --user: this directory's project already has them (.claude/{}); the hooks would run twice here (uninstall that first; nothing was written)",
                    install::MANIFEST
                );
                return 1;
            }
            Some(t) => t,
            None => {
                eprintln!(
                    "tickloop loop claude-code {verb}: no home directory (set CLAUDE_CONFIG_DIR)"
                );
                return 1;
            }
        }
    } else {
        let dir = match target.project {
            Some(d) => d,
            None => {
                match std::env::current_dir() {
                    Ok(d) => d,
                    Err(e) => {
                        eprintln!("tickloop loop claude-code {verb}: cannot read the current directory: {e}");
                        return 1;
                    }
                }
            }
        };
        if !dir.is_dir() {
            eprintln!(
                "tickloop loop claude-code {verb}: {} is not a directory",
                dir.display()
            );
            return 2;
        }
        let target = install::Target::project(&dir);
        // Hooks in both the user's and a project's settings would all run,
        // feeding the session's Loop every event twice.
        if !uninstall {
            if let Some(user) =
                install::Target::user().filter(|u| u.claude_dir != target.claude_dir)
            {
                if user.manifest().exists() {
                    eprintln!(
                        "tickloop loop claude-code install: already installed for the user ({}); the hooks would run twice in this project (nothing was written)",
                        user.manifest().display()
                    );
                    return 1;
                }
            }
        }
        target
    };
    let result = if uninstall {
        install::uninstall(&target)
    } else {
        install::install(&target, &exe)
    };
    match result {
        Ok(report) => {
            for line in report.lines {
                println!("{line}");
            }
            0
        }
        Err(e) => {
            eprintln!("tickloop loop claude-code {verb}: {e}");
            1
        }
    }
}

/// Whether the current directory's project has its own install (other than
/// the user's `.claude` itself).
fn project_install_here(user: &install::Target) -> bool {
    std::env::current_dir()
        .map(|d| install::Target::project(&d))
        .is_ok_and(|p| p.claude_dir != user.claude_dir && p.manifest().exists())
}

/// `tickloop loop codex|gemini|opencode ...`.
fn agent_command(
    agent: Agent,
    command: AgentCommand,
    runtime_dir: PathBuf,
    exe: &std::path::Path,
) -> i32 {
    let name = agent.name();
    let (args, uninstall) = match command {
        AgentCommand::Hook { event } => {
            let Some(event) = HookEvent::parse(&event) else {
                eprintln!("tickloop loop {name} hook: unknown event `{event}`");
                return 2;
            };
            return claude_code::run_agent_hook(agent, event, runtime_dir);
        }
        AgentCommand::Install(t) => (t, false),
        AgentCommand::Uninstall(t) => (t, true),
    };
    let verb = if uninstall { "uninstall" } else { "install" };
    let project = if args.user {
        None
    } else {
        let dir = match args.project {
            Some(d) => d,
            None => match std::env::current_dir() {
                Ok(d) => d,
                Err(e) => {
                    eprintln!(
                        "tickloop loop {name} {verb}: cannot read the current directory: {e}"
                    );
                    return 1;
                }
            },
        };
        match dir.canonicalize() {
            Ok(d) if d.is_dir() => Some(d),
            _ => {
                eprintln!(
                    "tickloop loop {name} {verb}: {} is not a directory",
                    dir.display()
                );
                return 2;
            }
        }
    };
    if !uninstall {
        if let Some(other) = other_install(agent, project.as_deref()) {
            eprintln!("tickloop loop {name} install: already installed {other}; the agent would run the Loop twice (uninstall that first; nothing was written)");
            return 1;
        }
    }
    let result = if uninstall {
        installer::uninstall(agent, project.as_deref())
    } else {
        installer::install(agent, project.as_deref(), exe)
    };
    match result {
        Ok(report) => {
            for line in report.lines {
                println!("{line}");
            }
            0
        }
        Err(e) => {
            eprintln!("tickloop loop {name} {verb}: {e}");
            1
        }
    }
}

/// The other place (the user's, or this directory's project) that already
/// has the install: the agent loads both, which would feed the Loop every
/// event twice.
fn other_install(agent: Agent, project: Option<&std::path::Path>) -> Option<String> {
    let here = installer::manifest(agent, project)?;
    let (other, whose) = match project {
        Some(_) => (installer::manifest(agent, None)?, "for the user"),
        None => {
            let cwd = std::env::current_dir().ok()?.canonicalize().ok()?;
            (
                installer::manifest(agent, Some(&cwd))?,
                "in this directory's project",
            )
        }
    };
    (other != here && other.exists()).then(|| format!("{whose} ({})", other.display()))
}
