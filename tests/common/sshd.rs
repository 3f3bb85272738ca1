//! A real OpenSSH server for the tests of Ticks on other machines: `sshd`
//! on 127.0.0.1 on a free port, as the current user, with a host key and an
//! authorized key generated into a temporary directory, and an `ssh -F`
//! client config beside them (no known_hosts prompts, batch mode).
//!
//! The "remote machine" is this one: sshd's `SetEnv` gives every session
//! the private runtime directory of [`Sshd::remote`] (a [`Host`]) and its
//! marker, so the relay, the tickhost it starts and every Tick there are
//! that host's, and its drop cleans them up. [`Sshd::client_env`] is what a
//! local [`Host`] needs for its commands to go there (`--host remote`).
//!
//! Every session runs the user's `~/.bashrc`, as sshd's sessions do. On
//! machines whose `.bashrc` runs `pyenv init` (this project's do), that is a
//! `pyenv rehash`, which waits up to 60 s for a lock file that a session
//! killed mid-rehash leaves behind — and these tests kill sessions on
//! purpose. `PYENV_REHASH_TIMEOUT=0` makes it try once instead.

use super::{tickloop_bin, wait_for, Host, MARK_VAR};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The `--host` alias the client config maps to 127.0.0.1:PORT.
pub const REMOTE: &str = "remote";

/// One sshd and its files.
pub struct Sshd {
    dir: tempfile::TempDir,
    child: Child,
    pub port: u16,
    /// The far side's runtime directory and Ticks.
    pub remote: Host,
    log: Arc<Mutex<Vec<String>>>,
    /// The `Host` alias of [`Sshd::config`].
    pub alias: String,
}

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen (openssh-client; .ci/run installs it)");
    assert!(out.status.success(), "ssh-keygen: {out:?}");
}

fn sshd_bin() -> PathBuf {
    for candidate in ["/usr/sbin/sshd", "/usr/local/sbin/sshd"] {
        if Path::new(candidate).exists() {
            return PathBuf::from(candidate);
        }
    }
    panic!("no sshd: install openssh-server (.ci/run does when it is missing)")
}

impl Sshd {
    /// Starts sshd (client alias [`REMOTE`]) and waits until it listens.
    pub fn start() -> Sshd {
        Sshd::start_as(REMOTE)
    }

    /// Starts sshd with `alias` as the client config's name for it.
    pub fn start_as(alias: &str) -> Sshd {
        // Privilege separation needs its empty directory.
        std::fs::create_dir_all("/run/sshd").expect("create /run/sshd");
        let dir = tempfile::Builder::new()
            .prefix("tl-sshd")
            .tempdir_in("/tmp")
            .expect("sshd dir");
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("id"));
        std::fs::copy(d.join("id.pub"), d.join("authorized_keys")).expect("authorized_keys");
        let remote = Host::new();
        let bin_dir = Path::new(tickloop_bin())
            .parent()
            .expect("the binary's directory")
            .to_path_buf();
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            probe.local_addr().expect("its address").port()
        };
        let runtime = remote.runtime().display().to_string();
        // The remote side's data directory (kept records, shipped
        // packages): the remote host's own, as its local commands have it.
        let data = remote.scratch().join("data").display().to_string();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
             UsePAM no\nStrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
             AuthorizedKeysFile {d}/authorized_keys\nMaxStartups 100\nMaxSessions 100\n\
             SetEnv PATH={bin}:/usr/local/bin:/usr/bin:/bin TICKLOOP_RUNTIME_DIR={runtime} {MARK_VAR}={runtime} \
             XDG_DATA_HOME={data} PYENV_REHASH_TIMEOUT=0\n",
            d = d.display(),
            bin = bin_dir.display(),
        );
        std::fs::write(d.join("sshd_config"), config).expect("sshd_config");
        let client = format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {d}/id\n  \
             IdentitiesOnly yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile {d}/known_hosts\n  \
             BatchMode yes\n  LogLevel ERROR\n  ControlMaster no\n  ControlPath none\n\
             Host *\n  BatchMode yes\n  StrictHostKeyChecking no\n  UserKnownHostsFile {d}/known_hosts\n  \
             IdentitiesOnly yes\n  IdentityFile {d}/id\n",
            d = d.display(),
            user = whoami(),
        );
        std::fs::write(d.join("ssh_config"), client).expect("ssh_config");
        let mut child = Command::new(sshd_bin())
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sshd");
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let stderr = child.stderr.take().expect("sshd stderr");
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut l) = lines.lock() {
                    l.push(line);
                }
            }
        });
        let sshd = Sshd {
            dir,
            child,
            port,
            remote,
            log,
            alias: alias.to_string(),
        };
        wait_for("sshd to listen", || {
            sshd.log
                .lock()
                .ok()?
                .iter()
                .any(|l| l.contains("Server listening"))
                .then_some(())
        });
        sshd
    }

    /// The ssh client config (`ssh -F` it).
    pub fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// One client config naming every machine of `sshds` (their aliases),
    /// written into `dir`: the `TICKLOOP_SSH` that reaches them all.
    pub fn joint_ssh_command(sshds: &[&Sshd], dir: &std::path::Path) -> String {
        let config = dir.join("ssh_config");
        let joined = sshds
            .iter()
            .map(|s| std::fs::read_to_string(s.config()).expect("a client config"))
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&config, joined).expect("write the config");
        format!("ssh -F {}", config.display())
    }

    /// `TICKLOOP_SSH`.
    pub fn ssh_command(&self) -> String {
        format!("ssh -F {}", self.config().display())
    }

    /// What a local host needs for its commands to reach [`REMOTE`]:
    /// `TICKLOOP_SSH`, `TICKLOOP_HOST` and the remote binary (this build,
    /// by its path, whatever else is on the remote PATH).
    pub fn client_env(&self) -> Vec<(String, String)> {
        vec![
            ("TICKLOOP_SSH".into(), self.ssh_command()),
            ("TICKLOOP_HOST".into(), REMOTE.into()),
            ("TICKLOOP_REMOTE_TICKLOOP".into(), tickloop_bin().into()),
        ]
    }

    /// A local host whose commands all go to [`REMOTE`].
    pub fn local(&self) -> Host {
        Host::new().with_env(self.client_env())
    }

    /// sshd's log so far.
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.join("\n")).unwrap_or_default()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The current user's name (sshd runs as them; root in CI containers).
pub fn whoami() -> String {
    let out = Command::new("id").arg("-un").output().expect("id -un");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The pids of the direct children of `pid` whose command line contains
/// `needle` (the ssh a `tickloop --host` runs).
pub fn children_matching(pid: i32, needle: &str) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some(after) = stat.rsplit_once(')').map(|(_, a)| a) else {
            continue;
        };
        let ppid = after
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<i32>().ok());
        if ppid != Some(pid) {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push(child);
        }
    }
    found
}
