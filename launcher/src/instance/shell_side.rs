//! What a `shell:` instance is to an agent: a shell with integration
//! (injected at its start, or marks its prompt emits itself) or a plain
//! program, and why it has no integration; and the answers that follow
//! from it: `describe` (what it is and which commands work with it),
//! `read` (its commands as state), and the refusal of what needs
//! integration.

use crate::shell_integration::{self, Shell};
use crate::shell_watch::ShellNow;
use crate::socket::error;
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use tickloop_proto::wire::{ClientReply, ErrorKind, IntegrationKind, ShellIntegration};
use tokio::sync::watch;

/// The commands that work with every `shell:` instance.
const PLAIN_COMMANDS: &[&str] = &[
    "screen",
    "input",
    "keys",
    "wait --text",
    "wait --quiet",
    "wait --ended",
    "attach",
    "activity",
    "close",
];
/// And those that work with a shell with integration too.
const SHELL_COMMANDS: &[&str] = &["read", "run", "wait --prompt", "watch"];

/// A `shell:` instance's integration, as its loop holds it.
pub(super) struct ShellSide {
    /// The shell the integration was injected into at its start, or why
    /// it started without (`None` for a Tick).
    started: Option<Result<Shell, String>>,
    /// The folder of its integration scripts (the `run` marker's).
    folder: PathBuf,
    /// The shell's state read from the output (see [`crate::shell_watch`]).
    pub(super) rx: watch::Receiver<Arc<ShellNow>>,
}

impl ShellSide {
    pub(super) fn new(
        started: Option<Result<Shell, String>>,
        folder: PathBuf,
        rx: watch::Receiver<Arc<ShellNow>>,
    ) -> ShellSide {
        ShellSide {
            started,
            folder,
            rx,
        }
    }

    /// The shell the integration was injected into.
    pub(super) fn injected(&self) -> Option<Shell> {
        self.started.as_ref().and_then(|s| s.as_ref().ok().copied())
    }

    /// The folder of its scripts, while it has them (removed at the end).
    pub(super) fn folder(&self) -> Option<&PathBuf> {
        self.injected().map(|_| &self.folder)
    }

    /// The file whose new number marks the next command as an agent's
    /// `run` (run with no pager), when the integration was injected.
    pub(super) fn run_file(&self) -> Option<PathBuf> {
        self.folder().map(|f| shell_integration::run_file(f))
    }

    /// The instance's integration now, if it has one: injected at its
    /// start, or marks its prompt emits itself (`program` as typed).
    pub(super) fn integration(&self, program: Option<&str>) -> Option<ShellIntegration> {
        let now = self.rx.borrow();
        match self.injected() {
            Some(shell) => Some(ShellIntegration {
                shell: shell.name().to_string(),
                kind: IntegrationKind::Injected,
                active: now.marked,
            }),
            None if now.marked => Some(ShellIntegration {
                shell: program
                    .and_then(|p| std::path::Path::new(p).file_name())
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                kind: IntegrationKind::Marks,
                active: true,
            }),
            None => None,
        }
    }

    /// Why it has no integration, while it has none.
    pub(super) fn no_integration(&self) -> Option<String> {
        match &self.started {
            Some(Err(why)) if !self.rx.borrow().marked => Some(why.clone()),
            _ => None,
        }
    }

    /// Why `instance` (its program typed as `program`) cannot do `what`,
    /// having no integration.
    pub(super) fn refusal(&self, instance: &str, program: &str, what: &str) -> ClientReply {
        let why = self
            .no_integration()
            .map_or_else(String::new, |why| format!(" ({why})"));
        error(
            ErrorKind::NotATick,
            &format!(
                "{instance} ({program}) has no shell integration{why}: {what} needs a bash, zsh or fish started interactively without --no-integration, or a prompt that emits OSC 133 marks; {} work with it",
                commands_text(PLAIN_COMMANDS)
            ),
        )
    }

    /// `read`: its state, as a Tick's read answers.
    pub(super) fn read(&self) -> ClientReply {
        let now = self.rx.borrow();
        ClientReply::Ok(json!({
            "seq": now.updates,
            "data": now.state,
            "at": now.at,
        }))
    }

    /// `describe`: what it is (a shell with integration, or a plain
    /// program and why) and which commands work with it.
    pub(super) fn describe(&self, instance: &str, argv: &[String]) -> ClientReply {
        let program = argv.first().map(String::as_str);
        match self.integration(program) {
            Some(shell) => {
                let commands: Vec<&str> = SHELL_COMMANDS
                    .iter()
                    .chain(PLAIN_COMMANDS)
                    .copied()
                    .collect();
                ClientReply::Ok(json!({
                    "id": instance,
                    "kind": null,
                    "argv": argv,
                    "shell": shell,
                    "commands": commands,
                    "description": format!(
                        "a {} shell with {}: `read` gives its working directory, whether it is at its prompt, the running command and the last commands with their status and output; {} work with it",
                        shell.shell,
                        match shell.kind {
                            IntegrationKind::Injected => "Tickloop's shell integration",
                            IntegrationKind::Marks => "OSC 133 marks from its own prompt",
                        },
                        commands_text(&commands),
                    ),
                }))
            }
            None => {
                let why = self
                    .no_integration()
                    .unwrap_or_else(|| "its program gives no OSC 133 marks".into());
                ClientReply::Ok(json!({
                    "id": instance,
                    "kind": null,
                    "argv": argv,
                    "shell": null,
                    "no_integration": why,
                    "commands": PLAIN_COMMANDS,
                    "description": format!(
                        "a plain terminal program (no integration: {why}): an agent sees its screen and types into it; {} work with it; `read`, `run`, `wait --prompt` and `watch` need shell integration",
                        commands_text(PLAIN_COMMANDS),
                    ),
                }))
            }
        }
    }
}

/// `a`, `b` and `c` in backticks.
fn commands_text(commands: &[&str]) -> String {
    let quoted: Vec<String> = commands.iter().map(|c| format!("`{c}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => String::new(),
    }
}
