//! What the kernel tells of a process and of the processes around it
//! (`/proc`, Linux): its parent, session and command name, the agent
//! markers in its own environment ([`crate::actor`]), and who holds the
//! other end of one of its descriptors (a Unix socket's peer by
//! `SO_PEERCRED`, the processes that hold a pipe). The MCP bridge and the
//! Loop's hooks read them to tell the agent host's own launch of them from
//! a process its shell tool started (docs/approval.md, "Who started the
//! bridge"). [`Processes`] is the question; [`Live`] answers it from
//! `/proc`, and tests answer it from a table.

use tickloop_proto::wire::AgentHost;

/// One process as `/proc` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub ppid: u32,
    /// Its session (`setsid`): an agent host gives each shell tool command
    /// a session of its own, and none of its process's descendants can
    /// join another.
    pub sid: u32,
    /// Its command name (`comm`), for messages.
    pub comm: String,
    /// The agent host its own environment names ([`crate::actor`]), or why
    /// the environment cannot be read (another user's process, or one that
    /// is not dumpable).
    pub agent: Result<Option<AgentHost>, String>,
}

impl Proc {
    /// `COMM (pid N)`, for messages.
    pub fn named(&self) -> String {
        format!("{} (pid {})", self.comm, self.pid)
    }
}

/// What one end of a descriptor reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// A Unix socket; `peer`: the process that made the pair or connected
    /// (`SO_PEERCRED`), when the kernel tells.
    Socket { peer: Option<u32> },
    /// A pipe, and every other process that holds it open.
    Pipe { holders: Vec<Holder> },
    /// Anything else, as `/proc` names it (a file, a terminal, `/dev/null`).
    Other(String),
}

/// A process holding a pipe open, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Holder {
    pub pid: u32,
    pub reads: bool,
    pub writes: bool,
}

/// The questions asked of the system.
pub trait Processes {
    /// This process's pid.
    fn this(&self) -> u32;
    /// Process `pid`, if it runs and can be read.
    fn proc(&self, pid: u32) -> Option<Proc>;
    /// What this process's descriptor `fd` reaches.
    fn end(&self, fd: i32) -> End;

    /// The ancestors of `pid`, its parent first, up to `limit` of them
    /// (pid 1 and the kernel's threads end the chain).
    fn ancestors(&self, pid: u32, limit: usize) -> Vec<Proc> {
        let mut out = Vec::new();
        let mut next = self.proc(pid).map(|p| p.ppid);
        while let Some(ppid) = next.filter(|&p| p > 0) {
            let Some(parent) = self.proc(ppid) else { break };
            next = (parent.pid != 1).then_some(parent.ppid);
            out.push(parent);
            if out.len() >= limit {
                break;
            }
        }
        out
    }
}

/// [`Processes`] answered from a table: what the system shows, as a test
/// (or a recorded trial) says. The first process given is this one.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub me: u32,
    pub procs: std::collections::HashMap<u32, Proc>,
    /// What fds 0 and 1 reach; any other is closed.
    pub stdin: Option<End>,
    pub stdout: Option<End>,
}

impl Table {
    /// `procs` (this process first), and what its stdin and stdout reach.
    pub fn new(procs: Vec<Proc>, stdin: End, stdout: End) -> Table {
        Table {
            me: procs.first().map_or(0, |p| p.pid),
            procs: procs.into_iter().map(|p| (p.pid, p)).collect(),
            stdin: Some(stdin),
            stdout: Some(stdout),
        }
    }
}

impl Processes for Table {
    fn this(&self) -> u32 {
        self.me
    }
    fn proc(&self, pid: u32) -> Option<Proc> {
        self.procs.get(&pid).cloned()
    }
    fn end(&self, fd: i32) -> End {
        let end = match fd {
            0 => self.stdin.clone(),
            1 => self.stdout.clone(),
            _ => None,
        };
        end.unwrap_or_else(|| End::Other(format!("fd {fd}: closed")))
    }
}

/// [`Processes`] of this system, from `/proc`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Live;

impl Processes for Live {
    fn this(&self) -> u32 {
        std::process::id()
    }

    fn proc(&self, pid: u32) -> Option<Proc> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // The command name is in parentheses and may hold anything.
        let open = stat.find('(')?;
        let close = stat.rfind(')')?;
        let comm = stat.get(open + 1..close)?.to_string();
        let rest: Vec<&str> = stat.get(close + 1..)?.split_whitespace().collect();
        // state ppid pgrp session ...
        let ppid = rest.get(1)?.parse().ok()?;
        let sid = rest.get(3)?.parse().ok()?;
        let agent = match std::fs::read(format!("/proc/{pid}/environ")) {
            Ok(bytes) => {
                let text = String::from_utf8_lossy(&bytes);
                let vars: Vec<(&str, &str)> =
                    text.split('\0').filter_map(|v| v.split_once('=')).collect();
                Ok(crate::actor::agent_in(vars.iter().copied()))
            }
            Err(e) => Err(format!("its environment cannot be read ({e})")),
        };
        Some(Proc {
            pid,
            ppid,
            sid,
            comm,
            agent,
        })
    }

    fn end(&self, fd: i32) -> End {
        let target = match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
            Ok(t) => t.to_string_lossy().into_owned(),
            Err(e) => return End::Other(format!("fd {fd}: {e}")),
        };
        if target.starts_with("socket:[") {
            End::Socket {
                peer: socket_peer(fd),
            }
        } else if target.starts_with("pipe:[") {
            End::Pipe {
                holders: pipe_holders(&target),
            }
        } else {
            End::Other(target)
        }
    }
}

/// The pid of a Unix socket's peer (`SO_PEERCRED`).
fn socket_peer(fd: i32) -> Option<u32> {
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given;
    // getsockopt only writes within them, and a descriptor that is no
    // socket or no Unix socket is an error, not undefined behaviour.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0 && cred.pid > 0).then_some(cred.pid as u32)
}

/// Every other process of this user holding the pipe `target`
/// (`pipe:[INODE]`), with how it holds it.
fn pipe_holders(target: &str) -> Vec<Holder> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut holders = Vec::new();
    for pid in entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
    {
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        let mut holder = Holder {
            pid,
            reads: false,
            writes: false,
        };
        for fd in fds.flatten() {
            if std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == target) {
                let info = format!("/proc/{pid}/fdinfo/{}", fd.file_name().to_string_lossy());
                match access_mode(&info) {
                    Some(libc::O_RDONLY) => holder.reads = true,
                    Some(libc::O_WRONLY) => holder.writes = true,
                    _ => {
                        holder.reads = true;
                        holder.writes = true;
                    }
                }
            }
        }
        if holder.reads || holder.writes {
            holders.push(holder);
        }
    }
    holders
}

/// The access mode (`O_RDONLY`, `O_WRONLY`, `O_RDWR`) of an fdinfo file.
fn access_mode(fdinfo: &str) -> Option<i32> {
    let text = std::fs::read_to_string(fdinfo).ok()?;
    let flags = text.lines().find_map(|l| l.strip_prefix("flags:"))?.trim();
    i32::from_str_radix(flags, 8)
        .ok()
        .map(|f| f & libc::O_ACCMODE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn this_process_its_parent_and_a_socket_pair_s_peer() {
        let me = Live.proc(std::process::id()).expect("this process");
        assert_eq!(me.pid, std::process::id());
        assert!(me.agent.is_ok(), "its own environment reads: {me:?}");
        let parents = Live.ancestors(me.pid, 64);
        assert_eq!(parents.first().map(|p| p.pid), Some(me.ppid));
        let (a, _b) = std::os::unix::net::UnixStream::pair().expect("a pair");
        // The pair was made here: its peer is this process.
        assert_eq!(socket_peer(a.as_raw_fd()), Some(me.pid));
    }

    #[test]
    fn a_pipe_is_held_by_the_processes_that_keep_it_open() {
        let mut child = std::process::Command::new("sleep")
            .arg("60")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("sleep");
        let stdin = child.stdin.take().expect("its stdin");
        let target = std::fs::read_link(format!("/proc/self/fd/{}", stdin.as_raw_fd()))
            .expect("the pipe")
            .to_string_lossy()
            .into_owned();
        let holders = pipe_holders(&target);
        let _ = child.kill();
        let _ = child.wait();
        let sleeper = holders.iter().find(|h| h.pid == child.id());
        assert_eq!(
            sleeper.map(|h| (h.reads, h.writes)),
            Some((true, false)),
            "the child reads its stdin: {holders:?}"
        );
    }
}
