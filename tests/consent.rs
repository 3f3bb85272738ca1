//! Consent (issue 27): the person is sovereign over what they opened. An
//! agent (a client that says it is `mcp` or `loop`) typing into a person's
//! instance or closing it waits for the person, as a mutating call does;
//! the person's own typing and closing never wait; an agent's own instance
//! asks nobody; each policy changes per instance and in the config file;
//! what agents may open follows the config file; every action names its
//! actor in the activity record and in end reasons; and only this user
//! gets into the sockets.
//!
//! The agent here is a real client on tickhost's socket, saying hello as
//! `mcp`, exactly as `tickloop mcp` does; the person is the real `tickloop`
//! CLI. Nothing is faked: the shell is a real bash in a real PTY.

mod common;

use common::*;
use serde_json::{json, Value};
use std::sync::mpsc;
use std::thread;
use tickloop_client::Client;
use tickloop_proto::wire::{
    ClientKind, ClientReply, ClientRequest, ErrorKind, HeldCall, OpenRequest, ProgramSpec,
};

/// An agent's request on its own connection, in the background; the reply
/// arrives on the returned channel, and each "it waits" on `held`.
fn agent_asks(
    host: &Host,
    request: ClientRequest,
) -> (mpsc::Receiver<ClientReply>, mpsc::Receiver<HeldCall>) {
    let (reply_tx, reply_rx) = mpsc::channel();
    let (held_tx, held_rx) = mpsc::channel();
    let runtime = host.runtime().to_path_buf();
    thread::spawn(move || {
        let mut agent = Client::connect(&runtime, ClientKind::Mcp).expect("the agent connects");
        let reply = agent
            .request_with_progress(request, |held| {
                let _ = held_tx.send(held.clone());
            })
            .expect("tickhost answers the agent");
        let _ = reply_tx.send(reply);
    });
    (reply_rx, held_rx)
}

/// The agent's request, answered at once (nobody asked).
fn agent_now(host: &Host, request: ClientRequest) -> ClientReply {
    let mut agent = Client::connect(host.runtime(), ClientKind::Mcp).expect("the agent connects");
    agent.request(request).expect("tickhost answers the agent")
}

fn input(id: &str, text: &str) -> ClientRequest {
    ClientRequest::Input {
        instance: id.to_string(),
        text: text.to_string(),
    }
}

fn close(id: &str) -> ClientRequest {
    ClientRequest::Close {
        instance: id.to_string(),
    }
}

/// A bash with no rc files, opened by the person; its id.
fn persons_shell(host: &Host, name: &str, extra: &[&str]) -> String {
    if extra.is_empty() {
        return host.open_bash(name);
    }
    let mut args = vec!["open", "--shell", "--id", name];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "bash", "--norc", "--noprofile"]);
    host.ok(&args);
    format!("shell:{name}")
}

/// The one action waiting now (from `tickloop approvals`).
fn the_waiting_one(host: &Host) -> Value {
    host.the_waiting_one(WAIT)
}

/// The consent entries of `id`'s activity record: (decision, by).
fn consent_entries(host: &Host, id: &str) -> Vec<(String, String, String)> {
    let record = host.ok(&["activity", id]);
    record["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["type"] == "consent")
        .map(|e| {
            (
                e["tool"].as_str().unwrap_or("").to_string(),
                e["decision"].as_str().unwrap_or("").to_string(),
                e["by"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn refusal(reply: ClientReply) -> (ErrorKind, String, Value) {
    match reply {
        ClientReply::Error(e) => (e.kind, e.message, e.data.unwrap_or(Value::Null)),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn an_agents_typing_into_the_persons_shell_waits_until_the_person_approves() {
    let host = Host::new();
    let id = persons_shell(&host, "mine", &[]);
    let entry = host.entry(&id).expect("listed");
    assert_eq!(entry["owner"], "person");
    assert_eq!(entry["agent_input"], "ask");
    assert_eq!(entry["agent_close"], "ask");

    let (reply, held) = agent_asks(&host, input(&id, "echo typed-$((6*7))\r"));
    let held = held.recv().expect("the agent hears that it waits");
    assert_eq!(held.tool, "input");
    let waiting = the_waiting_one(&host);
    assert_eq!(waiting["action"], "input");
    assert_eq!(waiting["client"], "mcp");
    assert_eq!(waiting["args"]["text"], "echo typed-$((6*7))\r");
    let call = waiting["call"].as_str().expect("an id").to_string();
    assert!(
        call.starts_with('%'),
        "call ids cannot be instance names: {call}"
    );
    // Nothing was typed while it waits: the shell printed no `typed-42`.
    assert!(!host.screen(&id).contains("typed-42"));
    assert_eq!(host.entry(&id).expect("listed")["approvals_waiting"], 1);

    host.ok(&["approve", &id, &call]);
    assert!(matches!(reply.recv().expect("a reply"), ClientReply::Ok(_)));
    host.wait_screen(&id, "typed-42");
    assert_eq!(
        consent_entries(&host, &id),
        [
            ("input".into(), "held".into(), "tickhost".into()),
            ("input".into(), "approved".into(), "cli".into())
        ]
    );
}

#[test]
fn a_refused_typing_or_closing_changes_nothing_and_names_who_refused() {
    let host = Host::new();
    let id = persons_shell(&host, "kept", &[]);
    let (reply, _held) = agent_asks(&host, input(&id, "echo never-$((6*7))\r"));
    let call = the_waiting_one(&host)["call"].as_str().unwrap().to_string();
    host.ok(&["refuse", &id, &call, "--reason", "not now"]);
    let (kind, message, data) = refusal(reply.recv().expect("a reply"));
    assert_eq!(kind, ErrorKind::Refused);
    assert!(
        message.contains("refused by the person (cli): not now"),
        "{message}"
    );
    assert_eq!(data["code"], -32010);
    assert_eq!(data["executed"], false);

    let (reply, _held) = agent_asks(&host, close(&id));
    let waiting = the_waiting_one(&host);
    assert_eq!(waiting["action"], "close");
    host.ok(&["refuse", &id, waiting["call"].as_str().unwrap()]);
    let (kind, _, _) = refusal(reply.recv().expect("a reply"));
    assert_eq!(kind, ErrorKind::Refused);
    // Still running, and nothing was typed.
    assert!(host.entry(&id).expect("listed")["ended"].is_null());
    host.ok(&["input", &id, "echo alive-$((6*7))\r"]);
    let screen = host.wait_screen(&id, "alive-42");
    assert!(!screen.contains("never-42"), "{screen}");
    // The refusals are in the activity record, as the overlay shows them.
    let decisions = consent_entries(&host, &id);
    assert!(decisions.contains(&("input".into(), "refused".into(), "cli".into())));
    assert!(decisions.contains(&("close".into(), "refused".into(), "cli".into())));
}

#[test]
fn the_persons_own_typing_and_closing_never_wait_and_ends_name_the_actor() {
    let host = Host::new();
    let id = persons_shell(&host, "own", &[]);
    host.ok(&["input", &id, "echo own-$((6*7))\r"]);
    host.wait_screen(&id, "own-42");
    host.ok(&["close", &id]);
    let ended = host.wait_ended(&id);
    assert_eq!(ended["reason"], "closed by the person (cli)");

    // An agent's close, approved: the end names the agent.
    let other = persons_shell(&host, "theirs", &[]);
    let (reply, _held) = agent_asks(&host, close(&other));
    let call = the_waiting_one(&host)["call"].as_str().unwrap().to_string();
    host.ok(&["approve", &other, &call]);
    assert!(matches!(reply.recv().expect("a reply"), ClientReply::Ok(_)));
    let ended = host.wait_ended(&other);
    assert_eq!(ended["reason"], "closed by an agent (mcp)");
}

#[test]
fn on_an_agents_own_instance_nothing_waits() {
    let host = Host::new();
    host.ok(&["list"]);
    let here = host.scratch().to_path_buf();
    let opened = agent_now(
        &host,
        ClientRequest::Open(OpenRequest {
            name: Some("agents".into()),
            program: ProgramSpec {
                shell: true,
                argv: vec!["bash".into(), "--norc".into(), "--noprofile".into()],
                cwd: here,
                env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
                ..Default::default()
            },
        }),
    );
    assert!(matches!(opened, ClientReply::Ok(_)), "{opened:?}");
    let id = "shell:agents";
    let entry = host.entry(id).expect("listed");
    assert_eq!(entry["owner"], "agent");
    assert_eq!(entry["agent_input"], "auto");
    let typed = agent_now(&host, input(id, "echo agent-$((6*7))\r"));
    assert!(matches!(typed, ClientReply::Ok(_)), "{typed:?}");
    host.wait_screen(id, "agent-42");
    let closed = agent_now(&host, close(id));
    assert!(matches!(closed, ClientReply::Ok(_)), "{closed:?}");
    assert_eq!(host.wait_ended(id)["reason"], "closed by an agent (mcp)");
}

#[test]
fn each_policy_changes_per_instance_at_open_and_at_run_time() {
    let host = Host::new();
    let id = persons_shell(&host, "lax", &["--agent-input", "auto"]);
    assert_eq!(host.entry(&id).expect("listed")["agent_input"], "auto");
    let typed = agent_now(&host, input(&id, "echo lax-$((6*7))\r"));
    assert!(matches!(typed, ClientReply::Ok(_)), "{typed:?}");
    host.wait_screen(&id, "lax-42");

    let changed = host.ok(&["approve-policy", &id, "--input", "deny", "--close", "deny"]);
    assert_eq!(changed["agent_input"], "deny");
    let (kind, message, data) = refusal(agent_now(&host, input(&id, "echo no\r")));
    assert_eq!(kind, ErrorKind::Refused);
    assert!(
        message.contains("--input ask"),
        "says how to allow it: {message}"
    );
    assert_eq!(data["data"]["approval"], "denied");
    let (kind, _, _) = refusal(agent_now(&host, close(&id)));
    assert_eq!(kind, ErrorKind::Refused);
    let decisions = consent_entries(&host, &id);
    assert_eq!(
        decisions,
        [
            ("input".into(), "denied".into(), "tickhost".into()),
            ("close".into(), "denied".into(), "tickhost".into())
        ]
    );
    // A bad policy is refused by the CLI, and nothing changes.
    let out = host.run(&["approve-policy", &id, "--input", "maybe"]);
    assert_ne!(out.code, 0);
    assert_eq!(host.entry(&id).expect("listed")["agent_input"], "deny");
}

/// A host whose commands (and so its tickhost) read `config` as
/// `~/.config/tickloop/config.toml`.
fn host_with_config(config: &str) -> Host {
    let dir = tempfile::tempdir().expect("a config dir").keep();
    std::fs::create_dir_all(dir.join("tickloop")).expect("mkdir");
    std::fs::write(dir.join("tickloop/config.toml"), config).expect("write config");
    Host::new().with_env(vec![(
        "XDG_CONFIG_HOME".to_string(),
        dir.to_string_lossy().into_owned(),
    )])
}

#[test]
fn the_config_file_sets_the_defaults_and_what_agents_may_open() {
    let host = host_with_config("[approval]\nagent_close = \"deny\"\n[agents]\nopen = \"none\"\n");
    let id = persons_shell(&host, "cfg", &[]);
    let entry = host.entry(&id).expect("listed");
    assert_eq!(entry["agent_close"], "deny");
    assert_eq!(entry["agent_input"], "ask");
    let (kind, _, _) = refusal(agent_now(&host, close(&id)));
    assert_eq!(kind, ErrorKind::Refused);

    let open = ClientRequest::Open(OpenRequest {
        name: Some("sneaky".into()),
        program: ProgramSpec {
            shell: true,
            argv: vec!["true".into()],
            cwd: host.scratch().to_path_buf(),
            ..Default::default()
        },
    });
    let (kind, message, data) = refusal(agent_now(&host, open.clone()));
    assert_eq!(kind, ErrorKind::Refused);
    assert!(message.contains("[agents] open = \"none\""), "{message}");
    assert!(
        message.contains("open = \"any\""),
        "says how to allow it: {message}"
    );
    assert_eq!(data["executed"], false);
    assert!(host.entry("shell:sneaky").is_none());
    // The person may open what they like.
    host.ok(&["open", "--shell", "--id", "fine", "--", "true"]);

    let host = host_with_config("[agents]\nopen = \"packages\"\n");
    host.ok(&["list"]);
    let (kind, message, _) = refusal(agent_now(&host, open));
    assert_eq!(kind, ErrorKind::Refused);
    assert!(message.contains("only packages"), "{message}");
    let mut package = ProgramSpec {
        argv: vec![tick("counter.py")],
        cwd: host.scratch().to_path_buf(),
        package: Some("counter".into()),
        ..Default::default()
    };
    package.env = vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())];
    let opened = agent_now(
        &host,
        ClientRequest::Open(OpenRequest {
            name: Some("pkg".into()),
            program: package,
        }),
    );
    assert!(matches!(opened, ClientReply::Ok(_)), "{opened:?}");
}

/// A peer of another uid is refused on every socket even when the file
/// modes would let it in, and tickhost logs it. (Needs root, to run the
/// peer as `nobody`; CI runs as root. Elsewhere it says so and checks only
/// that this user gets in.)
#[test]
fn only_this_user_gets_in() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let host = Host::new();
    let id = persons_shell(&host, "door", &[]);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("only_this_user_gets_in: not root, so no other uid can be tried here; this user's access is checked by every other test");
        return;
    }
    let runtime = host.runtime();
    let socket = runtime.join("tickhost.sock");
    let folder = runtime
        .join("i")
        .join(format!("shell-{}", id.trim_start_matches("shell:")));
    let launcher_socket = folder.join("sock");
    assert!(launcher_socket.exists(), "{}", launcher_socket.display());
    // Open every mode, as a careless chmod would.
    for path in [
        runtime.to_path_buf(),
        runtime.join("i"),
        folder.clone(),
        socket.clone(),
        launcher_socket.clone(),
    ] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    let hello =
        json!({"hello": {"version": tickloop_proto::wire::wire_version(), "role": "client"}});
    for path in [&socket, &launcher_socket] {
        let out = std::process::Command::new("python3")
            .args([
                "-c",
                // Connecting works (the modes allow it); the peer is then
                // hung up on without a word (EOF, or EPIPE on its hello).
                "import socket,sys\ns=socket.socket(socket.AF_UNIX)\ns.connect(sys.argv[1])\ntry:\n    s.sendall(sys.argv[2].encode()+b'\\n')\n    got=s.recv(4096)\nexcept OSError:\n    got=b''\nprint(repr(got))",
                &path.to_string_lossy(),
                &hello.to_string(),
            ])
            .uid(65534)
            .gid(65534)
            .output()
            .expect("python3 runs as nobody");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{out:?}");
        assert_eq!(
            stdout.trim(),
            "b''",
            "nobody got an answer on {}",
            path.display()
        );
    }
    let log = std::fs::read_to_string(runtime.join("tickhost.log")).expect("tickhost's log");
    assert!(
        log.contains("refused a connection: a process of uid 65534"),
        "{log}"
    );
    // This user still gets in.
    assert!(host.entry(&id).is_some());
}
