//! Who started this bridge: the agent host itself, as its MCP server, or a
//! process of the agent's own (its shell tool running a client that starts
//! `tickloop mcp`, declares elicitation and would accept its own question).
//! Only a bridge the host started asks the person in the host; any other
//! leaves every held action to the Monitor, the Tick's view, Herdr and
//! `tickloop approvals`, and says so to the agent. It is also the only one
//! that adds to an agent session's Loop (TickManage `subscribe`).
//!
//! What the four real CLIs showed (tests/agents/origin.rs; the runs kept in
//! `benches/results/host-origin-2026-12-06/`): each starts its MCP servers as its
//! own children, in its own session, talking over a pipe (Codex) or a
//! socket pair (Claude Code, Gemini CLI, opencode) that it holds itself,
//! from a process whose own environment carries no agent marker. Each runs
//! its shell tool's commands in a session of their own (`setsid`), with the
//! markers set (`CLAUDECODE`, `CODEX_THREAD_ID`, `GEMINI_CLI`, `OPENCODE`,
//! and install's `TICKLOOP_AGENT`). Claude Code, Gemini CLI and opencode
//! give their MCP servers markers too, so the bridge's own environment
//! tells nothing; its MCP client's does. So the bridge is the host's when:
//!
//! 1. the process reading its stdout (the socket's peer, or the pipe's
//!    reader) is one of its ancestors: its MCP client;
//! 2. the bridge runs in that client's session, or leads a session of its
//!    own as that client's child (the official Python SDK starts its
//!    servers so);
//! 3. the client's own environment can be read and names no agent;
//! 4. whatever writes its stdin runs in the client's session.
//!
//! An agent's client fails 3 (it runs in its tool's environment); a bridge
//! run by a shell tool with its stdout on the host's own pipe fails 2 or 4
//! (its stdin is the tool's `/dev/null`, or written by the agent's process
//! in the tool's session). A process that clears its own environment
//! first is beyond this, as it is beyond `src/actor.rs`: same user, same
//! rights.

use tickloop_client::process::{End, Proc, Processes};

/// How far up the bridge looks for its MCP client.
const ANCESTORS: usize = 32;

/// Who started the bridge, decided once when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// The agent host, whose process (`COMM (pid N)`) reads its answers.
    Host(String),
    /// Something else: why, for the agent.
    Other(String),
}

impl Launch {
    /// The bridge's launch, from `/proc`.
    pub fn of_this_process() -> Launch {
        Launch::judge(&tickloop_client::process::Live)
    }

    /// The launch `processes` show.
    pub fn judge(processes: &dyn Processes) -> Launch {
        match client(processes) {
            Ok(client) => Launch::Host(client.named()),
            Err(why) => Launch::Other(format!(
                "this `tickloop mcp` was not started by the agent host itself ({why}); a bridge started any other way never asks in a host"
            )),
        }
    }

    /// Why it may not ask in the host (`None`: it may).
    pub fn not_asked(&self) -> Option<String> {
        match self {
            Launch::Host(_) => None,
            Launch::Other(why) => Some(why.clone()),
        }
    }
}

/// The MCP client that started this process, when it is the host.
fn client(processes: &dyn Processes) -> Result<Proc, String> {
    let me = processes
        .proc(processes.this())
        .ok_or("its own process cannot be read")?;
    let readers: Vec<u32> = match processes.end(1) {
        End::Socket { peer: Some(pid) } => vec![pid],
        End::Socket { peer: None } => return Err("its stdout's peer is unknown".into()),
        End::Pipe { holders } => holders.iter().filter(|h| h.reads).map(|h| h.pid).collect(),
        End::Other(what) => return Err(format!("its stdout is {what}, not a pipe or socket")),
    };
    let ancestors = processes.ancestors(me.pid, ANCESTORS);
    let client = ancestors
        .into_iter()
        .find(|a| readers.contains(&a.pid))
        .ok_or("the process reading its answers did not start it")?;
    let leads_own = me.sid == me.pid && me.ppid == client.pid;
    if client.sid != me.sid && !leads_own {
        return Err(format!(
            "it runs in a session apart from its MCP client {}, as an agent's shell tool runs its commands",
            client.named()
        ));
    }
    match &client.agent {
        Ok(None) => {}
        Ok(Some(host)) => {
            return Err(format!(
                "its MCP client {} runs in {}'s tool environment: an agent's own client",
                client.named(),
                host.title()
            ))
        }
        Err(why) => return Err(format!("its MCP client {}: {why}", client.named())),
    }
    stdin_in_session(processes, client.sid)?;
    Ok(client)
}

/// Whether what writes this process's stdin runs in session `sid`.
fn stdin_in_session(processes: &dyn Processes, sid: u32) -> Result<(), String> {
    let writers: Vec<u32> = match processes.end(0) {
        End::Socket { peer: Some(pid) } => vec![pid],
        End::Socket { peer: None } => return Err("its stdin's peer is unknown".into()),
        End::Pipe { holders } => holders.iter().filter(|h| h.writes).map(|h| h.pid).collect(),
        End::Other(what) => return Err(format!("its stdin is {what}, not a pipe or socket")),
    };
    let writers: Vec<Proc> = writers
        .into_iter()
        .filter_map(|pid| processes.proc(pid))
        .collect();
    if writers.is_empty() {
        return Err("nothing writes its stdin".into());
    }
    match writers.iter().find(|w| w.sid != sid) {
        Some(w) => Err(format!(
            "its input comes from {}, outside its MCP client's session",
            w.named()
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tickloop_client::process::{Holder, Table};
    use tickloop_proto::wire::AgentHost;

    fn proc(pid: u32, ppid: u32, sid: u32, comm: &str, agent: Option<AgentHost>) -> Proc {
        Proc {
            pid,
            ppid,
            sid,
            comm: comm.into(),
            agent: Ok(agent),
        }
    }

    fn pipe(pid: u32, reads: bool) -> End {
        End::Pipe {
            holders: vec![Holder {
                pid,
                reads,
                writes: !reads,
            }],
        }
    }

    fn table(procs: Vec<Proc>, stdin: End, stdout: End) -> Table {
        Table::new(procs, stdin, stdout)
    }

    const CLAUDE: Option<AgentHost> = Some(AgentHost::ClaudeCode);

    #[test]
    fn the_hosts_own_launch_asks() {
        // Claude Code: a socket pair it made; the bridge carries its markers.
        let sock = |pid| End::Socket { peer: Some(pid) };
        let claude = table(
            vec![
                proc(40, 30, 10, "tickloop", CLAUDE),
                proc(30, 20, 10, "claude", None),
                proc(20, 1, 10, "bash", None),
            ],
            sock(30),
            sock(30),
        );
        assert_eq!(
            Launch::judge(&claude),
            Launch::Host("claude (pid 30)".into())
        );
        // Codex: pipes it holds.
        let codex = table(
            vec![
                proc(41, 31, 10, "tickloop", None),
                proc(31, 20, 10, "codex", None),
            ],
            pipe(31, false),
            pipe(31, true),
        );
        assert!(Launch::judge(&codex).not_asked().is_none());
        // A person's wrapper between (`sh -c "tee | exec tickloop mcp"`):
        // the host reads the answers, tee writes the questions, all in the
        // host's session.
        let wrapped = table(
            vec![
                proc(42, 35, 10, "tickloop", CLAUDE),
                proc(35, 30, 10, "sh", CLAUDE),
                proc(36, 35, 10, "tee", CLAUDE),
                proc(30, 20, 10, "claude", None),
            ],
            pipe(36, false),
            sock(30),
        );
        assert!(Launch::judge(&wrapped).not_asked().is_none());
        // The Python SDK's client: its child, in a session of its own.
        let sdk = table(
            vec![
                proc(43, 37, 43, "tickloop", None),
                proc(37, 20, 10, "python3", None),
            ],
            pipe(37, false),
            pipe(37, true),
        );
        assert!(Launch::judge(&sdk).not_asked().is_none());
    }

    #[test]
    fn an_agents_own_client_or_a_shell_tool_s_pipes_never_ask() {
        // The agent's client, in its shell tool's session and environment.
        let own = table(
            vec![
                proc(50, 45, 44, "tickloop", CLAUDE),
                proc(45, 44, 44, "python3", CLAUDE),
                proc(44, 30, 44, "bash", CLAUDE),
                proc(30, 20, 10, "claude", None),
            ],
            pipe(45, false),
            pipe(45, true),
        );
        let why = Launch::judge(&own).not_asked().expect("not asked");
        assert!(
            why.contains("python3 (pid 45)") && why.contains("Claude Code"),
            "{why}"
        );
        // `exec tickloop mcp` in the shell tool, answering to the host's
        // own socket: a session apart.
        let exec = table(
            vec![
                proc(51, 30, 51, "tickloop", Some(AgentHost::Gemini)),
                proc(30, 20, 10, "node", None),
            ],
            End::Other("/dev/null".into()),
            End::Socket { peer: Some(30) },
        );
        let why = Launch::judge(&exec).not_asked().expect("not asked");
        assert!(why.contains("/dev/null"), "{why}");
        // The same, not exec'd (the tool's bash between): a session apart.
        let nested = table(
            vec![
                proc(55, 44, 44, "tickloop", Some(AgentHost::Codex)),
                proc(44, 30, 44, "bash", Some(AgentHost::Codex)),
                proc(30, 20, 10, "codex", None),
            ],
            End::Other("/dev/null".into()),
            pipe(30, true),
        );
        let why = Launch::judge(&nested).not_asked().expect("not asked");
        assert!(why.contains("session apart"), "{why}");
        // Exec'd with its stdin on a fifo the agent's background process
        // writes, in the tool's session.
        let fifo_exec = table(
            vec![
                proc(56, 30, 56, "tickloop", Some(AgentHost::Codex)),
                proc(30, 20, 10, "codex", None),
                proc(57, 56, 56, "python3", Some(AgentHost::Codex)),
            ],
            pipe(57, false),
            pipe(30, true),
        );
        let why = Launch::judge(&fifo_exec).not_asked().expect("not asked");
        assert!(why.contains("outside its MCP client's session"), "{why}");
        // A client that cleaned its environment, fed from a fifo another
        // of the agent's processes writes: the writer's session tells.
        let fifo = table(
            vec![
                proc(52, 30, 10, "tickloop", None),
                proc(30, 20, 10, "opencode", None),
                proc(60, 59, 59, "python3", Some(AgentHost::Opencode)),
            ],
            pipe(60, false),
            End::Socket { peer: Some(30) },
        );
        let why = Launch::judge(&fifo).not_asked().expect("not asked");
        assert!(why.contains("outside its MCP client's session"), "{why}");
        // A client that is not an ancestor, and one whose environment
        // cannot be read.
        let stranger = table(
            vec![
                proc(53, 30, 10, "tickloop", None),
                proc(30, 20, 10, "x", None),
            ],
            pipe(70, false),
            pipe(70, true),
        );
        assert!(Launch::judge(&stranger).not_asked().is_some());
        let mut hidden = table(
            vec![
                proc(54, 30, 10, "tickloop", None),
                proc(30, 20, 10, "x", None),
            ],
            pipe(30, false),
            pipe(30, true),
        );
        if let Some(p) = hidden.procs.get_mut(&30) {
            p.agent = Err("its environment cannot be read (denied)".into());
        }
        assert!(Launch::judge(&hidden).not_asked().is_some());
    }
}
