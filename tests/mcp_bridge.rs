//! `tickloop mcp` driven by the real rmcp client over stdio: initialization,
//! tool annotations from `mutates`, per-instance and generic calls with their
//! outcomes, stale revisions refused after `list_changed`, state resources
//! with `resources/updated`, and an unknown outcome when the Tick dies
//! mid-call. Each test has its own tickhost (runtime directory) and Ticks.

mod common;

use common::{tick, tickloop_bin, Host, MARK_VAR};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a notification may take.
const EVENT_WAIT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, PartialEq)]
enum Event {
    ToolsChanged,
    ResourcesChanged,
    Updated(String),
}

/// The client side: records the notifications it receives.
struct Recorder {
    events: mpsc::UnboundedSender<Event>,
}

impl ClientHandler for Recorder {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.events.send(Event::ToolsChanged);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.events.send(Event::ResourcesChanged);
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(Event::Updated(params.uri));
    }
}

/// One `tickloop mcp` process and its client.
struct Mcp {
    client: RunningService<RoleClient, Recorder>,
    events: mpsc::UnboundedReceiver<Event>,
}

fn packages_dir() -> String {
    format!("{}/packages", env!("CARGO_MANIFEST_DIR"))
}

impl Mcp {
    async fn start(host: &Host) -> Mcp {
        let mut command = tokio::process::Command::new(tickloop_bin());
        command
            .args(["mcp", "--interval", "200"])
            .env("TICKLOOP_RUNTIME_DIR", host.runtime())
            .env(MARK_VAR, host.runtime())
            .env("TICKLOOP_PACKAGES_PATH", packages_dir())
            .current_dir(host.scratch());
        let transport = TokioChildProcess::new(command).expect("start tickloop mcp");
        let (tx, events) = mpsc::unbounded_channel();
        let client = tokio::time::timeout(EVENT_WAIT, Recorder { events: tx }.serve(transport))
            .await
            .expect("initialize within the deadline")
            .expect("initialize");
        Mcp { client, events }
    }

    async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    async fn tool(&self, name: &str) -> Tool {
        self.tools()
            .await
            .into_iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    }

    /// Calls `name` with `args`; returns the first text block and the result.
    async fn call(&self, name: &str, args: Value) -> (String, CallToolResult) {
        let Value::Object(map) = args else {
            panic!("args must be an object")
        };
        let result = self
            .client
            .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
            .await
            .unwrap_or_else(|e| panic!("tools/call {name}: {e}"));
        (text(&result), result)
    }

    /// Forgets the notifications received so far.
    fn drain(&mut self) {
        while self.events.try_recv().is_ok() {}
    }

    /// Waits for a notification equal to `want`.
    async fn expect(&mut self, want: Event) {
        let deadline = tokio::time::Instant::now() + EVENT_WAIT;
        loop {
            match tokio::time::timeout_at(deadline, self.events.recv()).await {
                Ok(Some(event)) if event == want => return,
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the MCP session ended while waiting for {want:?}"),
                Err(_) => panic!("no {want:?} within {EVENT_WAIT:?}"),
            }
        }
    }

    async fn stop(self) {
        let _ = self.client.cancel().await;
    }
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
async fn initialize_list_tools_with_annotations_and_call_query_and_mutating_tools() {
    let host = Host::new();
    host.open_counter("counter");
    let mcp = Mcp::start(&host).await;

    let info = mcp.client.peer_info().expect("server info");
    assert_eq!(
        info.server_info.as_ref().map(|s| s.name.as_str()),
        Some("tickloop")
    );
    let caps = &info.capabilities;
    assert_eq!(caps.tools.as_ref().and_then(|t| t.list_changed), Some(true));
    let resources = caps.resources.as_ref().expect("resources capability");
    assert_eq!(resources.subscribe, Some(true));

    let tools = mcp.tools().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    for generic in ["TickManage", "TickDescribe", "TickRead", "TickCall"] {
        assert!(names.contains(&generic), "{generic} missing from {names:?}");
    }
    for t in &tools {
        assert!(
            !t.name.is_empty()
                && t.name.len() <= 64
                && t.name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "invalid MCP tool name {}",
            t.name
        );
    }
    let increment = mcp.tool("counter__increment").await;
    let a = increment.annotations.clone().expect("annotations");
    assert_eq!(a.read_only_hint, Some(false));
    assert_eq!(a.destructive_hint, Some(true));
    let history = mcp.tool("counter__history").await;
    let a = history.annotations.clone().expect("annotations");
    assert_eq!(a.read_only_hint, Some(true));
    assert_eq!(a.destructive_hint, Some(false));
    assert_eq!(
        increment.input_schema.get("required"),
        Some(&json!(["amount"])),
        "the Tick's input_schema is the tool's"
    );

    // A query.
    let (text, result) = mcp.call("counter__history", json!({})).await;
    assert!(text.starts_with("RESULT"), "{text}");
    assert_eq!(result.is_error, Some(false));
    assert_eq!(structured(&result)["result"]["changes"], json!([]));

    // A mutating call; the Tick's state shows it.
    let (text, result) = mcp.call("counter__increment", json!({"amount": 2})).await;
    assert!(text.starts_with("RESULT"), "{text}");
    assert_eq!(structured(&result)["result"]["value"], 2);
    host.wait_value("counter", 2);

    // Args failing the schema: refused by the host, not executed.
    let (text, result) = mcp
        .call("counter__increment", json!({"amount": "two"}))
        .await;
    assert!(
        text.starts_with("NOT EXECUTED (safe to fix and retry)"),
        "{text}"
    );
    assert_eq!(result.is_error, Some(true));

    // The generic tools.
    let (text, _) = mcp.call("TickRead", json!({"instance": "counter"})).await;
    assert!(text.contains("\"value\": 2"), "{text}");
    let (_, result) = mcp
        .call("TickDescribe", json!({"instance": "hosted:counter"}))
        .await;
    assert_eq!(structured(&result)["revision"], "1");
    let (text, result) = mcp
        .call(
            "TickCall",
            json!({"instance": "counter", "tool": "fail", "args": {}, "revision": "1"}),
        )
        .await;
    assert!(
        text.starts_with("EXECUTED WITH ERROR (may have had effects)"),
        "{text}"
    );
    assert_eq!(structured(&result)["outcome"], "executed");
    let (_, result) = mcp.call("TickManage", json!({"action": "list"})).await;
    let listed = structured(&result);
    assert_eq!(listed["value"][0]["id"], "hosted:counter", "{listed}");
    mcp.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_revision_is_refused_after_a_catalog_change_with_list_changed() {
    let host = Host::new();
    host.open_counter("counter");
    let mut mcp = Mcp::start(&host).await;
    mcp.tools().await;
    mcp.drain();

    let (text, _) = mcp
        .call("counter__set_revision", json!({"revision": "2"}))
        .await;
    assert!(text.starts_with("RESULT"), "{text}");
    mcp.expect(Event::ToolsChanged).await;

    // Prepared against the listing of revision 1: refused, nothing sent.
    let (text, result) = mcp.call("counter__increment", json!({"amount": 5})).await;
    assert!(
        text.starts_with("NOT EXECUTED (safe to fix and retry)"),
        "{text}"
    );
    assert!(
        text.contains("revision 1 when tools were listed, 2 now"),
        "{text}"
    );
    assert_eq!(structured(&result)["error"]["code"], -32004);
    let log = std::fs::read_to_string(host.log_path("counter")).unwrap_or_default();
    assert!(
        !log.contains("\"increment\""),
        "the stale call reached the Tick: {log}"
    );
    assert_eq!(host.read("counter")["data"]["value"], 0);

    // The generic form with the old revision: refused too.
    let (text, _) = mcp
        .call(
            "TickCall",
            json!({"instance": "counter", "tool": "increment", "args": {"amount": 5}, "revision": "1"}),
        )
        .await;
    assert!(text.starts_with("NOT EXECUTED"), "{text}");
    assert_eq!(host.read("counter")["data"]["value"], 0);

    // Listed again: the new revision is the approved one.
    let increment = mcp.tool("counter__increment").await;
    assert!(
        increment
            .description
            .as_deref()
            .is_some_and(|d| d.contains("revision 2")),
        "{increment:?}"
    );
    let (text, _) = mcp.call("counter__increment", json!({"amount": 5})).await;
    assert!(text.starts_with("RESULT"), "{text}");
    host.wait_value("counter", 5);
    mcp.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manage_opens_and_closes_with_list_changed_and_uses_the_terminal() {
    let host = Host::new();
    let mut mcp = Mcp::start(&host).await;
    assert!(!mcp.tools().await.iter().any(|t| t.name.starts_with("c2__")));
    mcp.drain();

    let (text, result) = mcp
        .call(
            "TickManage",
            json!({"action": "open", "command": [tick("counter.py")], "name": "c2"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{text}");
    assert_eq!(structured(&result)["id"], "hosted:c2");
    mcp.expect(Event::ToolsChanged).await;
    assert!(mcp.tools().await.iter().any(|t| t.name == "c2__increment"));

    // The person's side: type `+` into its terminal, see it on screen and in state.
    let (_, result) = mcp
        .call(
            "TickManage",
            json!({"action": "input", "instance": "c2", "text": "+"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false));
    host.wait_value("c2", 1);
    let deadline = tokio::time::Instant::now() + EVENT_WAIT;
    loop {
        let (text, _) = mcp
            .call("TickManage", json!({"action": "screen", "instance": "c2"}))
            .await;
        if text.contains("value: 1") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the screen never showed value 1:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // With history: the lines before the screen, and what is kept.
    let (text, result) = mcp
        .call(
            "TickManage",
            json!({"action": "screen", "instance": "c2", "history": 5}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{text}");
    let screen = structured(&result);
    assert!(screen["history"].is_array(), "{screen}");
    assert_eq!(screen["history_limit"], 2000, "{screen}");

    // Not available from MCP: says where to go.
    let (text, result) = mcp
        .call("TickManage", json!({"action": "show", "instance": "c2"}))
        .await;
    assert_eq!(result.is_error, Some(true));
    assert!(text.contains("tickloop attach"), "{text}");

    mcp.drain();
    let (text, result) = mcp
        .call("TickManage", json!({"action": "close", "instance": "c2"}))
        .await;
    assert_eq!(result.is_error, Some(false), "{text}");
    mcp.expect(Event::ToolsChanged).await;
    assert!(!mcp.tools().await.iter().any(|t| t.name.starts_with("c2__")));
    let (text, _) = mcp.call("c2__increment", json!({"amount": 1})).await;
    assert!(text.starts_with("NOT EXECUTED"), "{text}");

    // Missing fields are refused plainly.
    let (text, result) = mcp.call("TickManage", json!({"action": "open"})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text.contains("command"), "{text}");
    mcp.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribed_state_resource_is_updated_after_a_call() {
    let host = Host::new();
    host.open_counter("counter");
    let mut mcp = Mcp::start(&host).await;

    let resources = mcp
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let uri = "tick://counter/state";
    assert!(
        resources.iter().any(|r| r.uri == uri),
        "{resources:?} lacks {uri}"
    );
    #[allow(deprecated)]
    mcp.client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    mcp.tools().await;
    mcp.drain();

    let (text, _) = mcp.call("counter__increment", json!({"amount": 3})).await;
    assert!(text.starts_with("RESULT"), "{text}");
    mcp.expect(Event::Updated(uri.to_string())).await;

    let read = mcp
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .expect("resources/read");
    let body = match read.contents.first() {
        Some(ResourceContents::TextResourceContents { text, .. }) => text.clone(),
        other => panic!("no text contents: {other:?}"),
    };
    let delivery: Value = serde_json::from_str(&body).expect("JSON contents");
    assert_eq!(delivery["instance"], "hosted:counter");
    assert_eq!(delivery["data"]["value"], 3, "{delivery}");
    assert!(delivery["updates"].as_u64().is_some_and(|n| n >= 1));
    assert!(delivery["merged"].is_u64());
    assert_eq!(delivery["recover_with"], "history");

    // A resource that is not a Tick's state.
    assert!(mcp
        .client
        .read_resource(ReadResourceRequestParams::new("tick://nope/state"))
        .await
        .is_err());
    mcp.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tick_dying_mid_call_is_an_unknown_outcome() {
    let host = Host::new();
    host.open_bad("bad", "exit_mid_call");
    let mcp = Mcp::start(&host).await;
    let breaker = mcp.tool("bad__break").await;
    assert_eq!(
        breaker.annotations.and_then(|a| a.read_only_hint),
        Some(false)
    );
    let (text, result) = mcp.call("bad__break", json!({})).await;
    assert!(
        text.starts_with("UNKNOWN OUTCOME (do not retry blindly; read the state first)"),
        "{text}"
    );
    assert_eq!(result.is_error, Some(true));
    assert_eq!(structured(&result)["outcome"], "unknown");
    host.wait_ended("hosted:bad");
    mcp.stop().await;
}
