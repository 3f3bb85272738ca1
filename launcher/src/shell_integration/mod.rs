//! Tickloop's shell integration, injected into an interactive bash, zsh or
//! fish the way VS Code and kitty do it, without touching the person's
//! files: bash runs `bash.sh` in place of ~/.bashrc (`--init-file`; it
//! reads ~/.bashrc itself first), zsh finds `zsh/.zshenv` through
//! `ZDOTDIR` (it puts the person's ZDOTDIR back and reads their files),
//! fish finds `fish/vendor_conf.d/tickloop.fish` through `XDG_DATA_DIRS`
//! (put back the same way). Each emits OSC 133 marks and OSC 7, which the
//! launcher reads ([`tickloop_proto::shell`]); docs/shells.md.
//!
//! [`prepare`] decides from the spec whether the program is such a shell
//! started interactively (no `-c`, no script) and integration is wanted,
//! writes the script into the instance's own folder, and says how the
//! command line and environment change.

use std::path::{Path, PathBuf};
use tickloop_proto::wire::LaunchSpec;

const BASH: &str = include_str!("bash.sh");
const ZSH: &str = include_str!("zsh/.zshenv");
const FISH: &str = include_str!("fish/vendor_conf.d/tickloop.fish");

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

/// The folder beside an instance's socket that holds its integration
/// script while the shell starts; removed when the instance ends.
pub fn folder(socket: &Path) -> PathBuf {
    socket.with_extension("shell")
}

/// The shell `spec` starts, with the integration, when it is an
/// interactive bash, zsh or fish and integration was not turned off;
/// `None` leaves the program as it is. Writes the script into `dir`.
pub fn prepare(spec: &LaunchSpec, dir: &Path) -> Option<Prepared> {
    let program = &spec.program;
    if !program.shell || program.shell_integration == Some(false) || program.artifact.is_some() {
        return None;
    }
    let shell = Shell::of(program.argv.first()?)?;
    let args = &program.argv[1..];
    let theirs = |name: &str| {
        program
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let prepared = match shell {
        Shell::Bash => bash(args, dir)?,
        Shell::Zsh => {
            let refused = ["-c", "-s", "-f", "--no-rcs", "--no-globalrcs"];
            if !interactive(args, &refused, &["-o", "+o"]) {
                return None;
            }
            let zdotdir = dir.join("zsh");
            write(&zdotdir.join(".zshenv"), ZSH)?;
            let mut env = vec![("ZDOTDIR".to_string(), path_text(&zdotdir)?)];
            if let Some(theirs) = theirs("ZDOTDIR") {
                env.push(("TICKLOOP_ZDOTDIR".into(), theirs));
            }
            Prepared {
                shell,
                args: args.to_vec(),
                env,
            }
        }
        Shell::Fish => {
            let refused = ["-c", "--command", "-N", "--no-config", "--no-execute", "-n"];
            if !interactive(
                args,
                &refused,
                &[
                    "-C",
                    "--init-command",
                    "-d",
                    "--debug",
                    "-o",
                    "--debug-output",
                ],
            ) {
                return None;
            }
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
            Prepared {
                shell,
                args: args.to_vec(),
                env,
            }
        }
    };
    Some(prepared)
}

/// bash's arguments with the integration: `--init-file` in place of
/// ~/.bashrc (and of a login shell's profile files, which the script reads
/// itself), or, for `--norc`, the script run from PROMPT_COMMAND at the
/// first prompt (nothing else is read).
fn bash(args: &[String], dir: &Path) -> Option<Prepared> {
    let mut kept = Vec::new();
    let mut startup = "rc".to_string();
    let mut login = false;
    let mut norc = false;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--login" | "-l" => login = true,
            "--norc" => norc = true,
            "--rcfile" | "--init-file" => startup = format!("file:{}", it.next()?),
            "-o" | "+o" | "-O" | "+O" => {
                kept.push(arg.clone());
                kept.push(it.next()?.clone());
            }
            "-c" | "-s" | "--" | "-" => return None,
            flag if flag.starts_with("--") => kept.push(arg.clone()),
            flags if flags.starts_with('-') || flags.starts_with('+') => {
                if flags.contains('c') || flags.contains('s') {
                    return None;
                }
                if flags.starts_with('-') && flags.contains('l') {
                    login = true;
                    let rest: String = flags.chars().filter(|c| *c != 'l').collect();
                    if rest != "-" {
                        kept.push(rest);
                    }
                } else {
                    kept.push(arg.clone());
                }
            }
            // A script to run: not an interactive shell.
            _ => return None,
        }
    }
    let script = dir.join("bash.sh");
    write(&script, BASH)?;
    let script = path_text(&script)?;
    let mut env = Vec::new();
    if login {
        startup = "login".into();
    }
    if norc && !login {
        kept.push("--norc".into());
        env.push(("TICKLOOP_BASH_STARTUP".into(), "none".into()));
        env.push((
            "PROMPT_COMMAND".into(),
            format!("__tickloop_from_prompt_command=1; . {}", quoted(&script)),
        ));
    } else {
        kept.push("--init-file".into());
        kept.push(script);
        env.push(("TICKLOOP_BASH_STARTUP".into(), startup));
    }
    Some(Prepared {
        shell: Shell::Bash,
        args: kept,
        env,
    })
}

/// Whether a shell with `args` reads commands from its terminal: none of
/// `refused` and no script (an argument that is no option, other than the
/// value of one of `with_value`).
fn interactive(args: &[String], refused: &[&str], with_value: &[&str]) -> bool {
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let a = arg.as_str();
        if refused.contains(&a) || a.starts_with("--command=") {
            return false;
        }
        if with_value.contains(&a) {
            it.next();
            continue;
        }
        if a == "--" || !a.starts_with('-') {
            return false;
        }
        // Combined short flags (`-ic`).
        if !a.starts_with("--")
            && refused
                .iter()
                .any(|r| r.len() == 2 && a[1..].contains(&r[1..]))
        {
            return false;
        }
    }
    true
}

/// `text` quoted for a POSIX shell.
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

fn path_text(path: &Path) -> Option<String> {
    path.to_str().map(str::to_string)
}

/// Writes `text` to `path` (its folders made, 0700); `None` when it cannot
/// be (then the shell starts without the integration).
fn write(path: &Path, text: &str) -> Option<()> {
    use std::os::unix::fs::DirBuilderExt;
    let parent = path.parent()?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(parent)
        .ok()?;
    std::fs::write(path, text).ok()
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

    #[test]
    fn interactive_shells_get_it_and_others_do_not() {
        let dir = tempfile::tempdir().expect("dir");
        let d = dir.path();
        let bash = prepare(&spec(&["bash"], &[]), d).expect("bash");
        assert_eq!(bash.args[0], "--init-file");
        assert!(bash
            .env
            .contains(&("TICKLOOP_BASH_STARTUP".into(), "rc".into())));
        let login = prepare(&spec(&["/bin/bash", "-il"], &[]), d).expect("login");
        assert_eq!(login.args[0], "-i");
        assert!(login
            .env
            .contains(&("TICKLOOP_BASH_STARTUP".into(), "login".into())));
        let norc = prepare(&spec(&["bash", "--norc", "--noprofile"], &[]), d).expect("norc");
        assert!(norc.args.contains(&"--norc".to_string()));
        assert!(norc.env.iter().any(|(k, _)| k == "PROMPT_COMMAND"));
        let rc = prepare(&spec(&["bash", "--rcfile", "/my/rc"], &[]), d).expect("rcfile");
        assert!(rc
            .env
            .contains(&("TICKLOOP_BASH_STARTUP".into(), "file:/my/rc".into())));
        for not in [
            &["bash", "-c", "ls"][..],
            &["bash", "script.sh"],
            &["bash", "-ic", "ls"],
            &["zsh", "-c", "ls"],
            &["zsh", "-f"],
            &["fish", "-c", "ls"],
            &["fish", "--no-config"],
            &["sh"],
            &["python3"],
        ] {
            assert_eq!(prepare(&spec(not, &[]), d), None, "{not:?}");
        }
        let mut off = spec(&["bash"], &[]);
        off.program.shell_integration = Some(false);
        assert_eq!(prepare(&off, d), None);
        let zsh = prepare(&spec(&["zsh"], &[("ZDOTDIR", "/home/z")]), d).expect("zsh");
        assert!(zsh
            .env
            .contains(&("TICKLOOP_ZDOTDIR".into(), "/home/z".into())));
        assert!(d.join("zsh/.zshenv").is_file());
        let fish = prepare(&spec(&["fish"], &[]), d).expect("fish");
        let dirs = &fish
            .env
            .iter()
            .find(|(k, _)| k == "XDG_DATA_DIRS")
            .expect("dirs")
            .1;
        assert!(dirs.ends_with(":/usr/local/share:/usr/share"), "{dirs}");
        assert!(d.join("fish/vendor_conf.d/tickloop.fish").is_file());
    }
}
