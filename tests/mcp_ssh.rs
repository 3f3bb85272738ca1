//! `tickloop mcp --host` driven by the real rmcp client: the tools of Ticks
//! on another machine (a real sshd on 127.0.0.1, [`common::sshd`]) served to
//! a local agent: per-instance tools, TickRead, a mutating call, TickManage
//! open and screen there, and a state resource updated after a call.

mod common;

use common::sshd::Sshd;
use common::{tick, tickloop_bin, wait_for, MARK_VAR};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ResourceUpdatedNotificationParam,
    SubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::mpsc;

const EVENT_WAIT: Duration = Duration::from_secs(30);

/// Records `resources/updated` notifications.
struct Recorder {
    updated: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Recorder {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.updated.send(params.uri);
    }
}

async fn call(
    client: &RunningService<RoleClient, Recorder>,
    name: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("args must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"))
}

fn text(result: &CallToolResult) -> String {
    match result.content.first() {
        Some(ContentBlock::Text(t)) => t.text.clone(),
        other => panic!("no text content: {other:?}"),
    }
}

fn structured(result: &CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structured content")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_over_ssh_serves_the_ticks_of_the_other_machine() {
    let sshd = Sshd::start();
    let local = sshd.local();
    local.open_counter("far");

    let mut command = tokio::process::Command::new(tickloop_bin());
    command
        .args(["mcp", "--interval", "200"])
        .env("TICKLOOP_RUNTIME_DIR", local.runtime())
        .env("XDG_DATA_HOME", local.scratch().join("data"))
        .env(MARK_VAR, local.runtime())
        .envs(sshd.client_env())
        .current_dir(local.scratch());
    let transport = TokioChildProcess::new(command).expect("start tickloop mcp --host");
    let (tx, mut updated) = mpsc::unbounded_channel();
    let client = tokio::time::timeout(EVENT_WAIT, Recorder { updated: tx }.serve(transport))
        .await
        .expect("initialize within the deadline")
        .expect("initialize");

    let tools = client.list_all_tools().await.expect("tools/list");
    assert!(
        tools.iter().any(|t| t.name == "far__increment"),
        "the remote Tick's tools are missing: {:?}",
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
    );
    let read = call(&client, "TickRead", json!({"instance": "far"})).await;
    assert_eq!(structured(&read)["data"]["value"], 0, "{read:?}");

    let uri = "tick://far/state";
    // The server speaks the revisions where resources/subscribe is current.
    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    let result = call(&client, "far__increment", json!({"amount": 5})).await;
    assert!(text(&result).starts_with("RESULT"), "{result:?}");
    assert_eq!(structured(&result)["result"]["value"], 5);
    let got = tokio::time::timeout(EVENT_WAIT, async {
        while let Some(u) = updated.recv().await {
            if u == uri {
                return u;
            }
        }
        panic!("the session ended")
    })
    .await
    .expect("resources/updated for the remote Tick");
    assert_eq!(got, uri);
    // On the other machine: its own tickhost has the new value.
    wait_for("the remote value 5", || {
        (sshd.remote.read("far")["data"]["value"] == 5).then_some(())
    });

    // TickManage opens there, in that user's home.
    let opened = call(
        &client,
        "TickManage",
        json!({"action": "open", "command": [tick("counter.py")], "name": "far2"}),
    )
    .await;
    assert_eq!(opened.is_error, Some(false), "{opened:?}");
    let entry = sshd
        .remote
        .entry("hosted:far2")
        .expect("opened on the far side");
    assert_eq!(entry["cwd"].as_str(), std::env::var("HOME").ok().as_deref());
    assert!(
        local.tickhost_pid().is_none(),
        "a local tickhost was started"
    );
    let screen = call(
        &client,
        "TickManage",
        json!({"action": "screen", "instance": "far"}),
    )
    .await;
    assert!(text(&screen).contains("Counter"), "{screen:?}");
    let _ = client.cancel().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mcp_server_serves_several_machines_with_host_prefixed_tool_names() {
    let alpha = Sshd::start_as("alpha");
    let beta = Sshd::start_as("beta");
    // One client config naming both machines.
    let dir = tempfile::tempdir().expect("a config dir");
    let ssh = Sshd::joint_ssh_command(&[&alpha, &beta], dir.path());
    let env = [
        ("TICKLOOP_SSH", ssh.as_str()),
        ("TICKLOOP_REMOTE_TICKLOOP", tickloop_bin()),
    ];
    alpha.remote.open_counter("ca");
    beta.remote.open_counter("cb");

    let local = common::Host::new();
    let mut command = tokio::process::Command::new(tickloop_bin());
    command
        .args([
            "mcp",
            "--interval",
            "200",
            "--host",
            "alpha",
            "--host",
            "beta",
        ])
        .env("TICKLOOP_RUNTIME_DIR", local.runtime())
        .env("XDG_DATA_HOME", local.scratch().join("data"))
        .env(MARK_VAR, local.runtime())
        .envs(env)
        .current_dir(local.scratch());
    let transport = TokioChildProcess::new(command).expect("start tickloop mcp");
    let (tx, mut updated) = mpsc::unbounded_channel();
    let client = tokio::time::timeout(EVENT_WAIT, Recorder { updated: tx }.serve(transport))
        .await
        .expect("initialize within the deadline")
        .expect("initialize");

    // Each machine's tools, named after their host, deterministically.
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    for want in [
        "alpha__ca__increment",
        "beta__cb__increment",
        "beta__cb__history",
    ] {
        assert!(names.iter().any(|n| n == want), "{want} missing: {names:?}");
    }
    let listed = call(&client, "TickManage", json!({"action": "list"})).await;
    let ids: Vec<String> = structured(&listed)["value"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|e| e["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(ids, ["alpha:hosted:ca", "beta:hosted:cb"], "{listed:?}");

    // A call reaches its own machine only.
    let result = call(&client, "beta__cb__increment", json!({"amount": 3})).await;
    assert_eq!(structured(&result)["result"]["value"], 3, "{result:?}");
    assert_eq!(beta.remote.read("cb")["data"]["value"], 3);
    assert_eq!(alpha.remote.read("ca")["data"]["value"], 0);
    let read = call(&client, "TickRead", json!({"instance": "alpha:hosted:ca"})).await;
    assert_eq!(structured(&read)["data"]["value"], 0, "{read:?}");
    let generic = call(
        &client,
        "TickCall",
        json!({"instance": "alpha:hosted:ca", "tool": "increment", "args": {"amount": 2}, "revision": "1"}),
    )
    .await;
    assert_eq!(structured(&generic)["result"]["value"], 2, "{generic:?}");
    assert_eq!(alpha.remote.read("ca")["data"]["value"], 2);
    // An id that names no machine is refused, saying the form.
    let bare = call(&client, "TickRead", json!({"instance": "hosted:ca"})).await;
    assert_eq!(bare.is_error, Some(true), "{bare:?}");
    assert!(text(&bare).contains("HOST:KIND:NAME"), "{bare:?}");

    // Its state resource, per machine.
    let uri = "tick://beta/cb/state";
    #[allow(deprecated)]
    client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    call(&client, "beta__cb__increment", json!({"amount": 1})).await;
    tokio::time::timeout(EVENT_WAIT, async {
        while let Some(u) = updated.recv().await {
            if u == uri {
                return;
            }
        }
        panic!("the session ended")
    })
    .await
    .expect("resources/updated for beta's Tick");
    let contents = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
        .await
        .expect("resources/read");
    let body = match contents.contents.first() {
        Some(rmcp::model::ResourceContents::TextResourceContents { text, .. }) => {
            serde_json::from_str::<Value>(text).expect("JSON")
        }
        other => panic!("no text contents: {other:?}"),
    };
    assert_eq!(body["instance"], "beta:hosted:cb", "{body}");
    assert_eq!(body["data"]["value"], 4, "{body}");

    // TickManage open says where.
    let refused = call(
        &client,
        "TickManage",
        json!({"action": "open", "command": [tick("counter.py")], "name": "new"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let opened = call(
        &client,
        "TickManage",
        json!({"action": "open", "command": [tick("counter.py")], "name": "new", "host": "alpha"}),
    )
    .await;
    assert_eq!(structured(&opened)["id"], "alpha:hosted:new", "{opened:?}");
    assert!(alpha.remote.entry("hosted:new").is_some());
    assert!(beta.remote.entry("hosted:new").is_none());
    let _ = client.cancel().await;
}
