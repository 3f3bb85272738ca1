//! Tickloop's shell integration, injected into an interactive bash, zsh or
//! fish the way VS Code and kitty do it, without touching the person's
//! files: bash runs `bash.sh` in place of ~/.bashrc (`--init-file`, put
//! before the person's short options; it reads ~/.bashrc itself first),
//! zsh finds `zsh/.zshenv` through `ZDOTDIR` (it puts the person's ZDOTDIR
//! back and reads their files), fish finds
//! `fish/vendor_conf.d/tickloop.fish` through `XDG_DATA_DIRS` (put back
//! the same way). Each emits OSC 133 marks and OSC 7, which the launcher
//! reads ([`tickloop_proto::shell`]), and runs an agent's `run` with no
//! pager ([`run_file`], [`NO_PAGER`]); docs/shells.md.
//!
//! [`prepare`] reads the command line ([`bash_args`], [`zsh_fish_args`]):
//! an interactive shell gets the script, written into the instance's own
//! folder, with the command line and environment changed as it says; any
//! other start (a command, a script, options whose meaning the integration
//! would change, another program) is left exactly as typed, and says why.

mod bash_args;
mod zsh_fish_args;

use std::path::{Path, PathBuf};
use tickloop_proto::wire::LaunchSpec;

const BASH: &str = include_str!("bash.sh");
const ZSH: &str = include_str!("zsh/.zshenv");
const FISH: &str = include_str!("fish/vendor_conf.d/tickloop.fish");

/// The variables set to `cat` for the command an agent runs (`run`), so
/// that no pager waits for keys: git's, man's, systemd's (`systemctl`,
/// `journalctl`), GitHub's and GitLab's CLIs', the AWS CLI's, psql's,
/// bat's, and every other program's `PAGER`. The person's values come back
/// at the next prompt.
pub const NO_PAGER: &[&str] = &[
    "PAGER",
    "GIT_PAGER",
    "MANPAGER",
    "SYSTEMD_PAGER",
    "GH_PAGER",
    "GLAB_PAGER",
    "AWS_PAGER",
    "PSQL_PAGER",
    "BAT_PAGER",
];

/// Where the scripts name [`NO_PAGER`]'s variables.
const PAGERS_HERE: &str = "@TICKLOOP_PAGERS@";

/// The shells Tickloop integrates with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

impl Shell {
    pub fn name(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
        }
    }

    /// The shell `program` (a path or a name; a login shell's `-bash`
    /// too) is, if it is one of them.
    pub fn of(program: &str) -> Option<Shell> {
        let name = Path::new(program).file_name()?.to_str()?;
        match name.trim_start_matches('-') {
            "bash" => Some(Shell::Bash),
            "zsh" => Some(Shell::Zsh),
            "fish" => Some(Shell::Fish),
            _ => None,
        }
    }
}

/// How a shell is started with the integration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub shell: Shell,
    /// The arguments after the program.
    pub args: Vec<String>,
    /// Variables set (or replaced) in its environment.
    pub env: Vec<(String, String)>,
}

/// What a `shell:` program gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Integration {
    Injected(Prepared),
    /// Started exactly as typed; why, in words that follow "no
    /// integration: ".
    None(String),
}

/// The folder beside an instance's socket that holds its integration
/// scripts while the shell runs; removed when the instance ends.
pub fn folder(socket: &Path) -> PathBuf {
    socket.with_extension("shell")
}

/// The file in `folder` that marks the next command as an agent's `run`:
/// the launcher writes a number there, new for each `run`, just before it
/// types the command; the shell's hook before a command runs it with
/// [`NO_PAGER`] when the number is one it has not seen.
pub fn run_file(folder: &Path) -> PathBuf {
    folder.join("agent-run")
}

/// Marks the next command typed as an agent's `run`: `number` (new for
/// each `run`) replaces what `marker` (a [`run_file`]) held, whole (the
/// shell never reads half of it). Its folder is made again when it was
/// removed (a cleaned runtime directory).
pub fn mark_run(marker: &Path, number: u64) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if let Some(folder) = marker.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)?;
    }
    let fresh = marker.with_extension("new");
    std::fs::write(&fresh, format!("{number}\n"))?;
    std::fs::rename(&fresh, marker)
}

/// What the `shell:` program of `spec` gets: the integration when it is an
/// interactive bash, zsh or fish and integration was not turned off (the
/// script written into `dir`), else why not.
pub fn prepare(spec: &LaunchSpec, dir: &Path) -> Integration {
    match plan(spec, dir) {
        Ok(prepared) => Integration::Injected(prepared),
        Err(why) => Integration::None(why),
    }
}

fn plan(spec: &LaunchSpec, dir: &Path) -> Result<Prepared, String> {
    let program = &spec.program;
    if program.shell_integration == Some(false) {
        return Err(
            "turned off (--no-integration, or [shell] integration = false in config.toml)".into(),
        );
    }
    let typed = program.argv.first().map_or("", String::as_str);
    let name = Path::new(typed)
        .file_name()
        .map_or_else(|| typed.into(), |n| n.to_string_lossy());
    let Some(shell) = Shell::of(typed) else {
        return Err(match name.as_ref() {
            "sh" | "dash" | "ksh" | "mksh" | "ash" | "busybox" | "tcsh" | "csh" => {
                format!("{name} is a plain shell; Tickloop's integration is for bash, zsh and fish")
            }
            _ => format!("{name} is not bash, zsh or fish"),
        });
    };
    let args = &program.argv[1..];
    let theirs = |name: &str| {
        program
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    match shell {
        Shell::Bash => {
            let plan = bash_args::plan(args)?;
            let script = dir.join("bash.sh");
            write(&script, BASH)?;
            let script = path_text(&script)?;
            let mut env = Vec::new();
            match &plan.route {
                bash_args::Route::InitFile(startup) => {
                    let startup = match startup {
                        bash_args::Startup::Rc => "rc".to_string(),
                        bash_args::Startup::Login => "login".to_string(),
                        bash_args::Startup::File(file) => format!("file:{file}"),
                    };
                    env.push(("TICKLOOP_BASH_STARTUP".into(), startup));
                }
                bash_args::Route::FirstPrompt => {
                    env.push(("TICKLOOP_BASH_STARTUP".into(), "none".into()));
                    if let Some(theirs) = theirs("PROMPT_COMMAND") {
                        env.push(("TICKLOOP_BASH_PROMPT_COMMAND".into(), theirs));
                    }
                    env.push((
                        "PROMPT_COMMAND".into(),
                        format!("__tickloop_from_prompt_command=1; . {}", quoted(&script)),
                    ));
                }
            }
            Ok(Prepared {
                shell,
                args: plan.args(&script),
                env,
            })
        }
        Shell::Zsh => {
            zsh_fish_args::zsh(args)?;
            let zdotdir = dir.join("zsh");
            write(&zdotdir.join(".zshenv"), ZSH)?;
            let mut env = vec![("ZDOTDIR".to_string(), path_text(&zdotdir)?)];
            if let Some(theirs) = theirs("ZDOTDIR") {
                env.push(("TICKLOOP_ZDOTDIR".into(), theirs));
            }
            Ok(Prepared {
                shell,
                args: args.to_vec(),
                env,
            })
        }
        Shell::Fish => {
            zsh_fish_args::fish(args)?;
            write(&dir.join("fish/vendor_conf.d/tickloop.fish"), FISH)?;
            let ours = path_text(dir)?;
            let mut env = Vec::new();
            let dirs = match theirs("XDG_DATA_DIRS") {
                Some(theirs) => {
                    env.push(("TICKLOOP_XDG_DATA_DIRS".to_string(), theirs.clone()));
                    format!("{ours}:{theirs}")
                }
                // The XDG default, so that fish still finds its packages'.
                None => format!("{ours}:/usr/local/share:/usr/share"),
            };
            env.push(("XDG_DATA_DIRS".into(), dirs));
            Ok(Prepared {
                shell,
                args: args.to_vec(),
                env,
            })
        }
    }
}

/// `text` quoted for a POSIX shell.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn path_text(path: &Path) -> Result<String, String> {
    path.to_str()
        .map(str::to_string)
        .ok_or_else(|| format!("its folder {} is not UTF-8", path.display()))
}

/// Writes the script `text` to `path` (its folders made, 0700), with
/// [`NO_PAGER`]'s names in place; why not, when it cannot be (then the
/// shell starts without the integration).
fn write(path: &Path, text: &str) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    let failed = |e: std::io::Error| {
        format!(
            "Tickloop could not write its script {}: {e}",
            path.display()
        )
    };
    let parent = path
        .parent()
        .ok_or_else(|| format!("{} has no folder", path.display()))?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)
        .map_err(failed)?;
    std::fs::write(path, text.replace(PAGERS_HERE, &NO_PAGER.join(" "))).map_err(failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_proto::wire::ProgramSpec;

    fn spec(argv: &[&str], env: &[(&str, &str)]) -> LaunchSpec {
        LaunchSpec {
            instance: "shell:s".into(),
            program: ProgramSpec {
                shell: true,
                argv: argv.iter().map(|s| s.to_string()).collect(),
                cwd: "/".into(),
                env: env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                ..ProgramSpec::default()
            },
            socket: "/tmp/x.sock".into(),
            init_timeout_ms: None,
            call_timeout_ms: None,
        }
    }

    fn injected(integration: Integration) -> Prepared {
        match integration {
            Integration::Injected(prepared) => prepared,
            Integration::None(why) => panic!("not integrated: {why}"),
        }
    }

    fn why(integration: Integration) -> String {
        match integration {
            Integration::None(why) => why,
            Integration::Injected(p) => panic!("integrated: {p:?}"),
        }
    }

    #[test]
    fn bash_gets_its_init_file_first_and_says_what_to_read() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        let bash = injected(prepare(&spec(&["bash", "-i"], &[]), d));
        let script = d.join("bash.sh").to_string_lossy().into_owned();
        assert_eq!(bash.args, ["--init-file", &script, "-i"]);
        assert!(bash
            .env
            .contains(&("TICKLOOP_BASH_STARTUP".into(), "rc".into())));
        let written = std::fs::read_to_string(d.join("bash.sh")).expect("written");
        assert!(!written.contains(PAGERS_HERE));
        assert!(written.contains("GIT_PAGER MANPAGER"), "the names in place");
        let login = injected(prepare(&spec(&["/bin/bash", "-il"], &[]), d));
        assert!(login
            .env
            .contains(&("TICKLOOP_BASH_STARTUP".into(), "login".into())));
        let rc = injected(prepare(&spec(&["bash", "--rcfile", "/my/rc"], &[]), d));
        assert!(rc
            .env
            .contains(&("TICKLOOP_BASH_STARTUP".into(), "file:/my/rc".into())));
    }

    #[test]
    fn bash_with_norc_runs_the_script_from_its_first_prompt_command() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        let norc = injected(prepare(
            &spec(&["bash", "--norc", "-i"], &[("PROMPT_COMMAND", "theirs")]),
            d,
        ));
        assert_eq!(norc.args, ["--norc", "-i"], "as typed");
        let pc = &norc
            .env
            .iter()
            .find(|(k, _)| k == "PROMPT_COMMAND")
            .expect("ours")
            .1;
        assert!(
            pc.starts_with("__tickloop_from_prompt_command=1; . '"),
            "{pc}"
        );
        assert!(norc
            .env
            .contains(&("TICKLOOP_BASH_PROMPT_COMMAND".into(), "theirs".into())));
    }

    #[test]
    fn zsh_and_fish_keep_their_arguments_and_are_found_through_variables() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        let zsh = injected(prepare(
            &spec(&["zsh", "-il"], &[("ZDOTDIR", "/home/z")]),
            d,
        ));
        assert_eq!(zsh.args, ["-il"]);
        assert!(zsh
            .env
            .contains(&("TICKLOOP_ZDOTDIR".into(), "/home/z".into())));
        assert!(d.join("zsh/.zshenv").is_file());
        let fish = injected(prepare(
            &spec(&["fish", "--login", "--interactive"], &[]),
            d,
        ));
        assert_eq!(fish.args, ["--login", "--interactive"]);
        let dirs = &fish
            .env
            .iter()
            .find(|(k, _)| k == "XDG_DATA_DIRS")
            .expect("dirs")
            .1;
        assert!(dirs.ends_with(":/usr/local/share:/usr/share"), "{dirs}");
        assert!(d.join("fish/vendor_conf.d/tickloop.fish").is_file());
    }

    #[test]
    fn every_other_start_says_why_it_has_no_integration() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        for (argv, says) in [
            (&["bash", "-c", "ls"][..], "-c runs a command"),
            (&["bash", "script.sh"], "the script script.sh"),
            (&["zsh", "-f"], "none of Tickloop's"),
            (&["fish", "--no-config"], "no configuration"),
            (&["sh"], "sh is a plain shell"),
            (&["/usr/bin/dash", "-i"], "dash is a plain shell"),
            (&["python3"], "python3 is not bash, zsh or fish"),
        ] {
            let got = why(prepare(&spec(argv, &[]), d));
            assert!(got.contains(says), "{argv:?}: {got}");
        }
        let mut off = spec(&["bash"], &[]);
        off.program.shell_integration = Some(false);
        assert!(why(prepare(&off, d)).contains("--no-integration"));
    }

    #[test]
    fn a_script_that_cannot_be_written_leaves_the_shell_plain_and_says_so() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").expect("file");
        let got = why(prepare(&spec(&["bash"], &[]), &file.join("below")));
        assert!(got.contains("could not write its script"), "{got}");
    }
}
