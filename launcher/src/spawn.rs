//! Starting the Tick: resolving its program, opening the PTY slave, and
//! spawning it as the leader of a new session with the PTY as its
//! controlling terminal.
//!
//! A Tick gets stdin and stdout as pipes and the slave as stderr; a `shell:`
//! program gets the slave on all three. Its environment is exactly the
//! spec's plus `TICKLOOP_INSTANCE_ID` and `TERM=xterm-256color`, and no
//! descriptor of the launcher leaks into it (`close_range` with CLOEXEC).
//! An interactive bash, zsh or fish also gets Tickloop's shell
//! integration ([`crate::shell_integration`]): its arguments and a few
//! variables change, as that module says.

use crate::shell_integration::Integration;
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tickloop_proto::wire::LaunchSpec;

/// The PATH used when the spec's environment has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Why the Tick could not be started; the text is the failed open's reason.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("no program given")]
    NoProgram,
    #[error("cannot start {program}: no such program in PATH ({path})")]
    NotInPath { program: String, path: String },
    #[error("cannot start {program}: {path} is not an executable file")]
    NotExecutable { program: String, path: PathBuf },
    #[error("cannot start {program}: the working directory {cwd} is not a directory")]
    BadCwd { program: String, cwd: PathBuf },
    #[error("cannot open the terminal {tty}: {source}")]
    Tty {
        tty: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start {program}: {source}")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
}

/// A started Tick.
pub struct Spawned {
    pub child: tickloop_client::child::Child,
    /// Also its process group and session id.
    pub pid: u32,
    /// argv with argv[0] resolved to an absolute path.
    pub argv: Vec<String>,
    /// A `shell:` program's integration: the shell it was injected into
    /// (bash, zsh, fish), or why it started without (`None` for a Tick).
    pub integration: Option<Result<crate::shell_integration::Shell, String>>,
}

/// Resolve `program` the way `execvp` would, but with the spec's PATH and cwd.
pub fn resolve_program(
    program: &str,
    env: &[(String, String)],
    cwd: &Path,
) -> Result<PathBuf, SpawnError> {
    if program.is_empty() {
        return Err(SpawnError::NoProgram);
    }
    if program.contains('/') {
        let path = cwd.join(program);
        return if is_executable(&path) {
            Ok(path)
        } else {
            Err(SpawnError::NotExecutable {
                program: program.to_string(),
                path,
            })
        };
    }
    let path_var = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.as_str())
        .unwrap_or(DEFAULT_PATH);
    for dir in path_var.split(':') {
        let dir = if dir.is_empty() { "." } else { dir };
        let candidate = cwd.join(dir).join(program);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(SpawnError::NotInPath {
        program: program.to_string(),
        path: path_var.to_string(),
    })
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// Spawn the spec's program on the terminal `tty`. Must be called inside a
/// tokio runtime (its exit is awaited there: `tickloop_client::child`).
pub fn spawn(spec: &LaunchSpec, tty: &Path) -> Result<Spawned, SpawnError> {
    let typed = spec.program.argv.first().ok_or(SpawnError::NoProgram)?;
    if !spec.program.cwd.is_dir() {
        return Err(SpawnError::BadCwd {
            program: typed.clone(),
            cwd: spec.program.cwd.clone(),
        });
    }
    let program = resolve_program(typed, &spec.program.env, &spec.program.cwd)?;
    let program_str = program.to_string_lossy().into_owned();

    let slave = open_slave(tty)?;
    let clone = |f: &File| {
        f.try_clone().map_err(|source| SpawnError::Tty {
            tty: tty.to_path_buf(),
            source,
        })
    };

    let folder = crate::shell_integration::folder(&spec.socket);
    let integration = (spec.program.shell && spec.program.artifact.is_none())
        .then(|| crate::shell_integration::prepare(spec, &folder));
    let injected = match &integration {
        Some(Integration::Injected(prepared)) => Some(prepared),
        _ => None,
    };
    let args = injected.map_or(&spec.program.argv[1..], |i| i.args.as_slice());
    let extra_env = injected.map_or(&[][..], |i| i.env.as_slice());
    let mut cmd = std::process::Command::new(&program);
    cmd.arg0(OsStr::new(&program_str))
        .args(args)
        .current_dir(&spec.program.cwd)
        .env_clear()
        .envs(
            spec.program
                .env
                .iter()
                .filter(|(k, _)| k != "TICKLOOP_INSTANCE_ID" && k != "TERM")
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .envs(extra_env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env("TICKLOOP_INSTANCE_ID", &spec.instance)
        .env("TERM", "xterm-256color");
    if spec.program.shell {
        cmd.stdin(Stdio::from(clone(&slave)?))
            .stdout(Stdio::from(clone(&slave)?));
    } else {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
    }
    cmd.stderr(Stdio::from(slave));
    // SAFETY: the closure only makes async-signal-safe system calls.
    unsafe {
        cmd.pre_exec(child_setup);
    }
    let started = cmd.spawn().map_err(|source| {
        if injected.is_some() {
            let _ = std::fs::remove_dir_all(&folder);
        }
        SpawnError::Spawn {
            program: typed.clone(),
            source,
        }
    })?;
    let child = tickloop_client::child::Child::new(started);
    let pid = child.id();
    let mut argv = spec.program.argv.clone();
    argv[0] = program_str;
    Ok(Spawned {
        child,
        pid,
        argv,
        integration: integration.map(|i| match i {
            Integration::Injected(prepared) => Ok(prepared.shell),
            Integration::None(why) => Err(why),
        }),
    })
}

fn open_slave(tty: &Path) -> Result<File, SpawnError> {
    // std sets O_CLOEXEC; O_NOCTTY keeps it from becoming our controlling tty.
    OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOCTTY)
        .open(tty)
        .map_err(|source| SpawnError::Tty {
            tty: tty.to_path_buf(),
            source,
        })
}

/// Runs in the child between fork and exec: new session, the slave (fd 2)
/// as controlling terminal, and every descriptor above 2 closed on exec.
fn child_setup() -> std::io::Result<()> {
    // SAFETY: plain system calls on the child's own state.
    unsafe {
        if libc::setsid() == -1 {
            return Err(std::io::Error::last_os_error());
        }
        // The launcher may have started with SIGUSR1 ignored (tickhost
        // starts it so, see `instance::rehome`): the program gets the
        // default, as from any shell.
        libc::signal(libc::SIGUSR1, libc::SIG_DFL);
        if libc::ioctl(2, libc::TIOCSCTTY as _, 0) == -1 {
            return Err(std::io::Error::last_os_error());
        }
        if close_range_cloexec() != 0 {
            // Old kernel without close_range: mark descriptors one by one.
            let max = match libc::sysconf(libc::_SC_OPEN_MAX) {
                n if n > 0 => n.min(65536) as libc::c_int,
                _ => 1024,
            };
            for fd in 3..max {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags >= 0 {
                    libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
                }
            }
        }
    }
    Ok(())
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
unsafe fn close_range_cloexec() -> libc::c_int {
    libc::close_range(
        3,
        libc::c_uint::MAX,
        libc::CLOSE_RANGE_CLOEXEC as libc::c_int,
    )
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
unsafe fn close_range_cloexec() -> libc::c_int {
    -1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_through_path_and_cwd() {
        let env = vec![("PATH".to_string(), "/nonexistent:/bin:/usr/bin".to_string())];
        let sh = resolve_program("sh", &env, Path::new("/")).expect("sh is in /bin or /usr/bin");
        assert!(sh.is_absolute());
        let rel = resolve_program("./bin/sh", &[], Path::new("/"))
            .or_else(|_| resolve_program("./usr/bin/sh", &[], Path::new("/")));
        assert!(rel.is_ok());
        let err = resolve_program("no-such-program-xyz", &env, Path::new("/")).unwrap_err();
        assert!(err.to_string().contains("no such program"), "{err}");
    }
}
