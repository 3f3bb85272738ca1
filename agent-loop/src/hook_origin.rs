//! Whether a hook call's input came from the agent host's own hook call, or
//! from someone running `tickloop loop AGENT hook ...` by hand: an agent's
//! shell tool, with crafted JSON (which would arm a `/tick 256` nobody
//! typed, subscribe the session to the person's shell, or write records
//! into the person's ledger). A hook call that did not come from the host
//! is refused before its input is read: nothing is armed, subscribed or
//! written.
//!
//! What the four real CLIs showed (tests/agents/origin.rs; the runs kept in
//! `benches/results/host-origin-2026-12-06/`):
//!
//! * Claude Code runs a hook as `sh -c COMMAND` in a session of its own,
//!   with its markers set (`CLAUDECODE`, ...), its input on a socket pair
//!   whose peer is Claude Code's own process;
//! * Gemini CLI and opencode (its plugin's `spawn`) run it as their child,
//!   its input on a socket pair whose peer is their own process (Gemini
//!   CLI with no marker, opencode with `OPENCODE=1`);
//! * Codex CLI runs it as its child in a session of its own, with none of
//!   its markers, its input on a pipe it writes and closes at once;
//! * their shell tools run commands with the markers set (`CLAUDECODE`,
//!   `CODEX_THREAD_ID`, `GEMINI_CLI`, `OPENCODE`, install's
//!   `TICKLOOP_AGENT`), their stdin `/dev/null`.
//!
//! So the input is the host's when it comes on a Unix socket whose peer is
//! an ancestor of this process with no agent marker in its own environment
//! (the host itself); or on a pipe, when neither this process nor its
//! parent carries a marker and whoever still holds the pipe for writing is
//! such an ancestor. Anything else (a pipe from an agent's `echo`, a file,
//! a terminal) is refused. A process that clears its own environment first
//! is beyond this, as it is beyond `src/actor.rs`: same user, same rights.

use crate::agent::Agent;
use tickloop_client::process::{End, Proc, Processes};

/// How far up the hook looks for its host.
const ANCESTORS: usize = 32;

/// What `tickloop loop AGENT hook EVENT` says when this call's input did
/// not come from `agent` itself (from `/proc`); `None`: it did.
pub fn refusal(agent: Agent, event: &str) -> Option<String> {
    let why = from_host(&tickloop_client::process::Live).err()?;
    Some(format!(
        "tickloop loop {name} hook {event}: refused, nothing was read or changed: this call did not come from {host} itself ({why}). The hook is {host}'s to run; the person types `/tick` in {host}.",
        name = agent.name(),
        host = agent.title(),
    ))
}

/// `Ok` when this hook call's input comes from the agent host itself; else
/// why not, for the error.
pub fn from_host(processes: &dyn Processes) -> Result<(), String> {
    let me = processes
        .proc(processes.this())
        .ok_or("its own process cannot be read")?;
    let ancestors = processes.ancestors(me.pid, ANCESTORS);
    let clean_ancestor = |pid: u32| -> Result<(), String> {
        match ancestors.iter().find(|a| a.pid == pid) {
            None => Err(format!(
                "its input comes from {}, which did not start it",
                named(processes, pid)
            )),
            Some(a) => unmarked(a, "its input comes from"),
        }
    };
    match processes.end(0) {
        End::Socket { peer: Some(pid) } => clean_ancestor(pid),
        End::Socket { peer: None } => Err("its stdin's peer is unknown".into()),
        End::Pipe { holders } => {
            unmarked(&me, "it runs as")?;
            if let Some(parent) = ancestors.first() {
                unmarked(parent, "it was started by")?;
            }
            for writer in holders.iter().filter(|h| h.writes) {
                clean_ancestor(writer.pid)?;
            }
            Ok(())
        }
        End::Other(what) => Err(format!(
            "its input is {what}, not what an agent host hands its hooks"
        )),
    }
}

/// `Ok` when `p`'s own environment can be read and names no agent.
fn unmarked(p: &Proc, what: &str) -> Result<(), String> {
    match &p.agent {
        Ok(None) => Ok(()),
        Ok(Some(host)) => Err(format!(
            "{what} {}, which runs in {}'s tool environment",
            p.named(),
            host.title()
        )),
        Err(why) => Err(format!("{what} {}: {why}", p.named())),
    }
}

fn named(processes: &dyn Processes, pid: u32) -> String {
    processes
        .proc(pid)
        .map_or_else(|| format!("pid {pid}"), |p| p.named())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_client::process::{Holder, Table};
    use tickloop_proto::wire::AgentHost;

    fn proc(pid: u32, ppid: u32, comm: &str, agent: Option<AgentHost>) -> Proc {
        Proc {
            pid,
            ppid,
            sid: pid,
            comm: comm.into(),
            agent: Ok(agent),
        }
    }

    /// A hook's table: only its stdin matters.
    fn table(procs: Vec<Proc>, stdin: End) -> Table {
        Table::new(procs, stdin, End::Other("a socket to the host".into()))
    }

    const CLAUDE: Option<AgentHost> = Some(AgentHost::ClaudeCode);

    fn writer(pid: u32) -> End {
        End::Pipe {
            holders: vec![Holder {
                pid,
                reads: false,
                writes: true,
            }],
        }
    }

    #[test]
    fn the_hosts_own_hook_calls_are_taken() {
        // Claude Code: `sh -c`, markers set, a socket pair it made.
        let claude = table(
            vec![
                proc(40, 35, "tickloop", CLAUDE),
                proc(35, 30, "sh", CLAUDE),
                proc(30, 20, "claude", None),
            ],
            End::Socket { peer: Some(30) },
        );
        assert_eq!(from_host(&claude), Ok(()));
        // Codex: its child, no markers, a pipe it already closed or still
        // holds.
        let codex = |stdin| {
            table(
                vec![proc(41, 31, "tickloop", None), proc(31, 20, "codex", None)],
                stdin,
            )
        };
        assert_eq!(from_host(&codex(End::Pipe { holders: vec![] })), Ok(()));
        assert_eq!(from_host(&codex(writer(31))), Ok(()));
    }

    #[test]
    fn a_shell_tool_s_forged_calls_are_refused() {
        // `echo JSON | tickloop loop claude-code hook ...` in the Bash tool.
        let piped = table(
            vec![
                proc(50, 44, "tickloop", CLAUDE),
                proc(44, 30, "bash", CLAUDE),
                proc(45, 44, "bash", CLAUDE),
                proc(30, 20, "claude", None),
            ],
            writer(45),
        );
        let why = from_host(&piped).expect_err("refused");
        assert!(why.contains("Claude Code"), "{why}");
        // The same with the markers cleared on tickloop alone: its parent
        // still carries them.
        let mut cleared = table(piped.procs.values().cloned().collect(), writer(45));
        cleared.me = 50;
        if let Some(p) = cleared.procs.get_mut(&50) {
            p.agent = Ok(None);
        }
        assert!(from_host(&cleared).is_err());
        // A socket pair the agent's own script made.
        let own = table(
            vec![
                proc(51, 46, "tickloop", Some(AgentHost::Gemini)),
                proc(46, 30, "python3", Some(AgentHost::Gemini)),
                proc(30, 20, "node", None),
            ],
            End::Socket { peer: Some(46) },
        );
        assert!(from_host(&own).is_err());
        // A file, or a socket whose peer did not start it.
        let file = table(
            vec![proc(52, 31, "tickloop", None), proc(31, 20, "codex", None)],
            End::Other("/tmp/forged.json".into()),
        );
        assert!(from_host(&file).is_err());
        let stranger = table(
            vec![proc(53, 31, "tickloop", None), proc(31, 20, "codex", None)],
            End::Socket { peer: Some(99) },
        );
        assert!(from_host(&stranger).is_err());
    }
}
