//! The dispatch driven in memory (no socket, no launcher): requests are
//! written as lines to a [`Connection::memory`] served by the same
//! `serve_requests` as a real connection, with instances put straight into
//! the registry, and the answers read back.

use crate::daemon::connection::Connection;
use crate::daemon::registry::{end_info, CatalogFacts, Instance, Shared};
use crate::daemon::serve::serve_requests;
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use tickloop_client::kept::Kept;
use tickloop_client::paths::{InstanceKind, RuntimeDir};
use tickloop_proto::core::limits::Limits;
use tickloop_proto::wire::{
    AgentHost, ClientKind, ClientReply, ClientRequest, EndClass, Envelope, ErrorKind,
    LauncherStatus, OpenRequest, Owner, ProgramSpec, ServerMessage,
};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

const CLAUDE: Option<ClientKind> = Some(ClientKind::AgentCli(AgentHost::ClaudeCode));
const PERSON: Option<ClientKind> = Some(ClientKind::Cli);

/// A daemon's state in a temporary runtime directory, keeping forgotten
/// records in a temporary data directory.
struct Daemon {
    shared: Arc<Shared>,
    _dirs: tempfile::TempDir,
}

impl Daemon {
    fn new() -> Daemon {
        let dirs = tempfile::tempdir().expect("a temporary directory");
        let runtime = dirs.path().join("run");
        std::fs::create_dir(&runtime).expect("the runtime directory");
        let kept = Kept::under(&dirs.path().join("kept"), &runtime);
        let shared = Shared::keeping(
            RuntimeDir::at(&runtime),
            PathBuf::from("tickloop"),
            Limits::default(),
            Some(kept),
        );
        Daemon {
            shared,
            _dirs: dirs,
        }
    }

    /// Puts instance `kind:name` of `owner` into the registry, ended or
    /// running (with no launcher), its folder holding an approval log and
    /// an activity record.
    fn instance(&self, kind: InstanceKind, name: &str, owner: Owner, ended: bool) -> Arc<Instance> {
        let id = kind.id(name);
        let files = self.shared.dir.instance_files(kind, name).expect("files");
        files.create_folder().expect("its folder");
        let logged = json!({"at": "2026-12-01T00:00:00Z", "action": "input", "call": "%1",
            "instance": id, "tool": "input", "args": {"text": "ls"}, "revision": "",
            "decision": "refused", "by": "cli", "client": {"agent_cli": "claude-code"}});
        std::fs::write(&files.approvals, format!("{logged}\n")).expect("an approval log");
        let activity = json!({"instance": id, "entries": [], "last": 7});
        std::fs::write(&files.activity, activity.to_string()).expect("an activity record");
        let status = LauncherStatus {
            instance: id.clone(),
            owner: Some(owner),
            ended: ended.then(|| end_info(EndClass::Exited, "exited with status 0".into())),
            ..LauncherStatus::default()
        };
        let instance = Instance::new(id.clone(), files, None, status, CatalogFacts::default());
        self.shared
            .registry()
            .instances
            .insert(id, instance.clone());
        instance
    }

    /// A client connection of kind `client`, served in memory.
    fn connect(&self, client: Option<ClientKind>) -> Peer {
        let (conn, theirs) = Connection::memory(client);
        let shared = self.shared.clone();
        tokio::spawn(async move { serve_requests(&shared, conn).await });
        let (read, write) = tokio::io::split(theirs);
        Peer {
            lines: BufReader::new(read),
            write,
            next_id: 1,
        }
    }
}

/// The client's end of a connection in memory.
struct Peer {
    lines: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
    next_id: u64,
}

impl Peer {
    /// Sends `request`; its id.
    async fn send(&mut self, request: ClientRequest) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let mut line = serde_json::to_vec(&Envelope::new(id, request)).expect("encodes");
        line.push(b'\n');
        self.write.write_all(&line).await.expect("written");
        id
    }

    /// The next line from tickhost.
    async fn next(&mut self) -> ServerMessage {
        let mut line = String::new();
        let n = self.lines.read_line(&mut line).await.expect("read");
        assert!(n > 0, "tickhost hung up");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}: {e}"))
    }

    /// The reply to request `id` (progress before it is skipped).
    async fn reply_to(&mut self, id: u64) -> ClientReply {
        loop {
            if let ServerMessage::Reply { id: to, reply } = self.next().await {
                assert_eq!(to, id, "replies come in order");
                return reply;
            }
        }
    }

    /// Sends `request` and returns its reply.
    async fn ask(&mut self, request: ClientRequest) -> ClientReply {
        let id = self.send(request).await;
        self.reply_to(id).await
    }
}

fn ok(reply: ClientReply) -> Value {
    match reply {
        ClientReply::Ok(value) => value,
        other => panic!("expected success, got {other:?}"),
    }
}

/// The error `reply` is, asserting its kind; its message.
fn failed(reply: ClientReply, kind: ErrorKind) -> String {
    match reply {
        ClientReply::Error(e) => {
            assert_eq!(e.kind, kind, "{}", e.message);
            e.message
        }
        other => panic!("expected a {kind:?} error, got {other:?}"),
    }
}

fn refused(reply: ClientReply) -> String {
    match reply {
        ClientReply::Error(e) if e.kind == ErrorKind::Refused => {
            assert_eq!(
                e.data.as_ref().map(|d| d["code"].clone()),
                Some(json!(-32010))
            );
            e.message
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn close(id: &str) -> ClientRequest {
    ClientRequest::Close {
        instance: id.into(),
    }
}

fn approval_log(id: &str) -> ClientRequest {
    ClientRequest::ApprovalLog {
        instance: id.into(),
    }
}

#[tokio::test]
async fn an_agent_never_forgets_the_persons_ended_instance_and_its_record_outlives_the_persons_forget(
) {
    let daemon = Daemon::new();
    let mine = daemon.instance(InstanceKind::Shell, "mine", Owner::Person, true);
    let mut agent = daemon.connect(CLAUDE);

    let message = refused(agent.ask(close("shell:mine")).await);
    assert!(
        message.contains("Claude Code (its shell tool) may not forget shell:mine"),
        "{message}"
    );
    let open_over = ClientRequest::Open(OpenRequest {
        name: Some("mine".into()),
        program: ProgramSpec {
            shell: true,
            argv: vec!["bash".into()],
            cwd: PathBuf::from("/"),
            ..ProgramSpec::default()
        },
    });
    let message = refused(agent.ask(open_over).await);
    assert!(message.contains("may not open shell:mine"), "{message}");
    let message = refused(agent.ask(ClientRequest::Shutdown).await);
    assert!(
        message.contains("forget the person's ended shell:mine"),
        "{message}"
    );
    // Nothing was forgotten: listed, its folder there, its log readable
    // (by the agent too: a read).
    assert!(daemon.shared.resolve("shell:mine").is_ok());
    assert!(mine.files.approvals.is_file());
    let log = ok(agent.ask(approval_log("shell:mine")).await);
    assert_eq!(log[0]["decision"], "refused", "{log}");

    // The person forgets it: gone from the runtime directory, its record
    // kept and read as before, by id or by name.
    let mut person = daemon.connect(PERSON);
    let forgotten = ok(person.ask(close("shell:mine")).await);
    assert_eq!(forgotten["forgotten"], true);
    assert!(daemon.shared.resolve("shell:mine").is_err());
    assert!(!mine.files.folder.exists());
    assert_eq!(ok(agent.ask(approval_log("shell:mine")).await), log);
    assert_eq!(ok(person.ask(approval_log("mine")).await), log);
    let activity = ClientRequest::Activity {
        instance: "shell:mine".into(),
        after: None,
    };
    assert_eq!(ok(person.ask(activity).await)["last"], 7);
    // An instance whose closing the person left to agents (`agent_close
    // auto`) the agent may forget; its record is kept all the same.
    let delegated = daemon.instance(InstanceKind::Shell, "delegated", Owner::Person, true);
    let mut status = (*delegated.status()).clone();
    status.agent_close = Some(tickloop_proto::wire::ApprovalPolicy::Auto);
    delegated.set_status(status);
    assert_eq!(
        ok(agent.ask(close("shell:delegated")).await)["forgotten"],
        true
    );
    let kept = ok(agent.ask(approval_log("shell:delegated")).await);
    assert_eq!(kept[0]["instance"], "shell:delegated", "{kept}");
    // An id never seen is still no such instance.
    failed(
        person.ask(approval_log("shell:other")).await,
        ErrorKind::NoSuchInstance,
    );
}

#[tokio::test]
async fn what_only_the_person_may_do_is_refused_to_every_kind_of_agent() {
    let daemon = Daemon::new();
    daemon.instance(InstanceKind::Shell, "mine", Owner::Person, false);
    daemon.instance(InstanceKind::Shell, "theirs", Owner::Agent, false);
    let decide = |by: &str| ClientRequest::Decide {
        instance: "shell:mine".into(),
        call: "%1".into(),
        approve: true,
        reason: None,
        by: by.into(),
        host: None,
    };
    for agent in [CLAUDE, Some(ClientKind::Mcp), Some(ClientKind::Loop)] {
        let mut agent = daemon.connect(agent);
        let message = refused(agent.ask(decide("cli")).await);
        assert!(
            message.contains("may not answer for the person"),
            "{message}"
        );
        let loosen = ClientRequest::SetApproval {
            instance: "shell:mine".into(),
            change: tickloop_proto::wire::ConsentChange {
                input: Some(tickloop_proto::wire::ApprovalPolicy::Auto),
                ..Default::default()
            },
        };
        let message = refused(agent.ask(loosen).await);
        assert!(
            message.contains("may not change what the person allows"),
            "{message}"
        );
        let message = refused(agent.ask(ClientRequest::Shutdown).await);
        assert!(
            message.contains("close the person's shell:mine"),
            "{message}"
        );
    }
    // The bridge relaying the person's answer in the agent host passes the
    // table (nothing waits here, so the decision finds nothing held).
    let mut bridge = daemon.connect(Some(ClientKind::Mcp));
    failed(bridge.ask(decide("mcp-host")).await, ErrorKind::BadRequest);
    // On the agent's own instance, its policies are its own.
    let mut agent = daemon.connect(CLAUDE);
    let own = ClientRequest::SetApproval {
        instance: "shell:theirs".into(),
        change: Default::default(),
    };
    // Admitted: it reaches the launcher, which this test has none of.
    failed(agent.ask(own).await, ErrorKind::Unresponsive);
}

/// A held action in memory: an agent's `reload` and `record` of the
/// person's running instance wait (the caller hears it, with what waits),
/// and the person's refusal reaches the agent; on the agent's own nothing
/// waits.
#[tokio::test]
async fn an_agents_reload_and_record_of_the_persons_instance_wait_for_the_person() {
    let daemon = Daemon::new();
    daemon.instance(InstanceKind::Artifact, "board", Owner::Person, false);
    daemon.instance(InstanceKind::Shell, "mine", Owner::Person, false);
    daemon.instance(InstanceKind::Shell, "theirs", Owner::Agent, false);
    let mut agent = daemon.connect(CLAUDE);
    let mut person = daemon.connect(PERSON);
    for (request, action) in [
        (
            ClientRequest::Reload {
                instance: "artifact:board".into(),
            },
            "reload",
        ),
        (
            ClientRequest::Record {
                instance: "shell:mine".into(),
            },
            "record",
        ),
    ] {
        let id = agent.send(request).await;
        let ServerMessage::Progress { id: of, held } = agent.next().await else {
            panic!("expected to hear that it waits");
        };
        assert_eq!(
            (of, held.action.as_str(), held.tool.as_str()),
            (id, action, action)
        );
        let waiting = ok(person.ask(ClientRequest::Approvals).await);
        assert_eq!(waiting[0]["action"], action, "{waiting}");
        let refuse = ClientRequest::Decide {
            instance: held.instance.clone(),
            call: held.call.clone(),
            approve: false,
            reason: Some("not now".into()),
            by: "cli".into(),
            host: None,
        };
        ok(person.ask(refuse).await);
        let message = refused(agent.reply_to(id).await);
        assert!(message.contains("not now"), "{message}");
    }
    // The person's own, and the agent's on its own instance: at once.
    let own = ClientRequest::Record {
        instance: "shell:theirs".into(),
    };
    assert_eq!(ok(agent.ask(own).await)["record"], true);
    let persons = ClientRequest::Record {
        instance: "shell:mine".into(),
    };
    assert_eq!(ok(person.ask(persons).await)["record"], true);
    // A reload of what is no artifact asks nobody.
    let wrong = ClientRequest::Reload {
        instance: "shell:mine".into(),
    };
    failed(agent.ask(wrong).await, ErrorKind::BadRequest);
}

#[tokio::test]
async fn a_request_over_the_line_limit_is_refused_by_its_own_id_and_the_connection_goes_on() {
    let daemon = Daemon::new();
    let mut agent = daemon.connect(Some(ClientKind::Mcp));
    let mut line = br#"{"id":42,"request":{"op":"input","instance":"shell:mine","text":""#.to_vec();
    line.resize(
        line.len() + super::super::request_line::MAX_CLIENT_LINE,
        b'a',
    );
    line.extend_from_slice(b"\"}}\n");
    agent.write.write_all(&line).await.expect("written");
    let ServerMessage::Reply { id, reply } = agent.next().await else {
        panic!("expected a reply");
    };
    assert_eq!(id, 42, "answered by its own id, not 0");
    let message = failed(reply, ErrorKind::BadRequest);
    assert!(message.contains("request (input) is over"), "{message}");
    agent.next_id = 43;
    assert_eq!(ok(agent.ask(ClientRequest::List).await), json!([]));
}
