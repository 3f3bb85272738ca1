//! `tickloop mcp` driven by the real rmcp client over stdio: initialization,
//! tool annotations from `mutates`, per-instance and generic calls with their
//! outcomes, stale revisions refused after `list_changed`, state resources
//! with `resources/updated`, and an unknown outcome when the Tick dies
//! mid-call. Issue 14's defects, one test each: input schemas strict hosts
//! accept (1), a state resource that follows its id across close, forget and
//! reopen (2), tool names that do not move between Ticks (3), JSON-RPC error
//! replies, spoken raw on the server's stdin/stdout (4), `--interval 0`
//! raised to a floor that subscriptions work with (5), and result text that
//! is the same JSON as `structuredContent` (6). Each test has its own tickhost
//! (runtime directory) and Ticks.

mod common;

use common::{tick, tickloop_bin, wait_for, Host, MARK_VAR};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ErrorData, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
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
    /// A progress notification's message.
    Progress(String),
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

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self
            .events
            .send(Event::Progress(params.message.unwrap_or_default()));
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
        Mcp::start_with(host, "200").await
    }

    /// `tickloop mcp --interval INTERVAL`.
    async fn start_with(host: &Host, interval: &str) -> Mcp {
        let mut command = tokio::process::Command::new(tickloop_bin());
        command
            .args(["mcp", "--interval", interval])
            .env("TICKLOOP_RUNTIME_DIR", host.runtime())
            .env(MARK_VAR, host.runtime())
            // The data directory (kept records): the host's own.
            .env("XDG_DATA_HOME", host.scratch().join("data"))
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

    /// Calls `name`, expecting a JSON-RPC error rather than a result.
    async fn call_error(&self, name: &str, args: Value) -> ErrorData {
        let Value::Object(map) = args else {
            panic!("args must be an object")
        };
        match self
            .client
            .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
            .await
        {
            Err(ServiceError::McpError(e)) => e,
            other => panic!("tools/call {name}: expected a JSON-RPC error, got {other:?}"),
        }
    }

    /// The text of `uri`'s contents, parsed.
    async fn read_json(&self, uri: &str) -> Value {
        let read = self
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
        match read.contents.first() {
            Some(ResourceContents::TextResourceContents { text, .. }) => {
                serde_json::from_str(text).expect("JSON contents")
            }
            other => panic!("no text contents: {other:?}"),
        }
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
    let (_, result) = mcp.call("TickRead", json!({"instance": "counter"})).await;
    assert_eq!(structured(&result)["data"]["value"], 2, "{result:?}");
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
    // Still in the client's last listing: refused, not executed.
    let (text, _) = mcp.call("c2__increment", json!({"amount": 1})).await;
    assert!(text.starts_with("NOT EXECUTED"), "{text}");
    // Listed again, it is an unknown tool: a protocol error (-32602).
    assert!(!mcp.tools().await.iter().any(|t| t.name.starts_with("c2__")));
    let error = mcp.call_error("c2__increment", json!({"amount": 1})).await;
    assert_eq!(error.code.0, -32602, "{error:?}");
    assert!(error.message.contains("list"), "{error:?}");

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

/// The JSON text block of a result: the last text block, which must be the
/// same JSON as `structuredContent`.
fn json_block(result: &CallToolResult) -> Value {
    let last = result
        .content
        .iter()
        .rev()
        .find_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .expect("a text block");
    serde_json::from_str(&last)
        .unwrap_or_else(|e| panic!("the last text block is not JSON ({e}): {last}"))
}

/// What every strict host demands of a tool's `inputSchema`.
fn assert_strict(tool: &Tool) {
    let schema = &tool.input_schema;
    assert_eq!(
        schema.get("type"),
        Some(&json!("object")),
        "{}: inputSchema type is not \"object\": {schema:?}",
        tool.name
    );
    for key in ["oneOf", "anyOf", "allOf", "not", "enum"] {
        assert!(
            !schema.contains_key(key),
            "{}: {key} at the top of its inputSchema",
            tool.name
        );
    }
}

/// Defect 1: a Tick's schemas cannot break the tool list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_listed_input_schema_is_a_strict_object_schema_whatever_the_tick_declares() {
    let host = Host::new();
    host.open("schemas", &tick("schemas.py"), &[]);
    host.open_counter("counter");
    let mcp = Mcp::start(&host).await;
    let tools = mcp.tools().await;
    for t in &tools {
        assert_strict(t);
    }
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    // As is, narrowed to "object", wrapped; `shout` ({"type":"string"}) left out.
    for name in [
        "schemas__echo",
        "schemas__maybe",
        "schemas__pick",
        "counter__increment",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(!names.iter().any(|n| n.contains("shout")), "{names:?}");
    let pick = mcp.tool("schemas__pick").await;
    assert_eq!(pick.input_schema["required"], json!(["args"]));
    assert!(pick.input_schema["properties"]["args"]["oneOf"].is_array());
    assert!(
        pick.description
            .as_deref()
            .is_some_and(|d| d.contains("under `args`")),
        "{pick:?}"
    );

    // A wrapped tool: the args go under `args` and reach the Tick unwrapped.
    let (text, result) = mcp.call("schemas__pick", json!({"args": {"a": 7}})).await;
    assert!(text.starts_with("RESULT"), "{text}");
    assert_eq!(structured(&result)["result"]["args"], json!({"a": 7}));
    let (text, _) = mcp.call("schemas__pick", json!({"a": 7})).await;
    assert!(text.starts_with("NOT EXECUTED"), "{text}");
    assert!(text.contains("under `args`"), "{text}");
    let (text, result) = mcp.call("schemas__maybe", json!({"n": 1})).await;
    assert!(text.starts_with("RESULT"), "{text}");
    assert_eq!(structured(&result)["result"]["args"], json!({"n": 1}));

    // TickDescribe says how each tool is offered, and why.
    let (_, result) = mcp
        .call("TickDescribe", json!({"instance": "schemas"}))
        .await;
    let offered = structured(&result)["mcp_tools"].clone();
    let entry = |tool: &str| {
        offered
            .as_array()
            .and_then(|a| a.iter().find(|e| e["tool"] == tool))
            .cloned()
            .unwrap_or_else(|| panic!("no {tool} in {offered}"))
    };
    assert_eq!(entry("echo")["offered"], "as_is");
    assert_eq!(entry("echo")["name"], "schemas__echo");
    assert_eq!(entry("pick")["offered"], "wrapped");
    assert_eq!(entry("shout")["offered"], "left_out");
    assert_eq!(entry("shout")["reach_with"], "TickCall");
    assert!(
        entry("shout")["why"]
            .as_str()
            .is_some_and(|w| w.contains("\"string\"")),
        "{offered}"
    );
    // TickCall still reaches a left-out tool (whose schema the host then
    // holds every object args against: not executed).
    let (text, result) = mcp
        .call(
            "TickCall",
            json!({"instance": "schemas", "tool": "shout", "args": {}, "revision": "1"}),
        )
        .await;
    assert!(text.starts_with("NOT EXECUTED"), "{text}");
    assert!(text.contains("input_schema"), "{text}");
    assert_eq!(structured(&result)["outcome"], "not_executed");
    let (text, _) = mcp
        .call(
            "TickCall",
            json!({"instance": "schemas", "tool": "pick", "args": {"b": "x"}, "revision": "1"}),
        )
        .await;
    assert!(text.starts_with("RESULT"), "{text}");
    mcp.stop().await;
}

/// Defect 2: the resource of an id follows it to the next instance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_state_resource_follows_its_id_across_close_forget_and_reopen() {
    let host = Host::new();
    host.open_counter("counter");
    let mut mcp = Mcp::start(&host).await;
    let uri = "tick://counter/state";
    #[allow(deprecated)]
    mcp.client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    mcp.tools().await;
    mcp.drain();
    mcp.call("counter__increment", json!({"amount": 4})).await;
    mcp.expect(Event::Updated(uri.to_string())).await;
    assert_eq!(mcp.read_json(uri).await["data"]["value"], 4);

    // Closed: subscribers hear of it, and the resource says so.
    mcp.drain();
    host.ok(&["close", "counter"]);
    mcp.expect(Event::Updated(uri.to_string())).await;
    let ended = mcp.read_json(uri).await;
    assert!(ended.get("ended").is_some(), "{ended}");

    // Forgotten and opened again under the same id: subscribers hear of the
    // new instance, and the resource is its state, not the old end.
    host.ok(&["close", "counter"]);
    mcp.drain();
    host.open_counter("counter");
    mcp.expect(Event::Updated(uri.to_string())).await;
    let fresh = mcp.read_json(uri).await;
    assert!(fresh.get("ended").is_none(), "still the old end: {fresh}");
    assert_eq!(fresh["data"]["value"], 0, "{fresh}");

    // And the new instance's changes are announced.
    mcp.tools().await;
    mcp.drain();
    mcp.call("counter__increment", json!({"amount": 2})).await;
    mcp.expect(Event::Updated(uri.to_string())).await;
    assert_eq!(mcp.read_json(uri).await["data"]["value"], 2);
    mcp.stop().await;
}

/// Defect 3: a tool's name depends only on its own instance and tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_names_do_not_move_when_another_tick_opens() {
    let host = Host::new();
    host.open_counter("a_b");
    let mut mcp = Mcp::start(&host).await;
    let before: Vec<String> = mcp
        .tools()
        .await
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(before.contains(&"a_b__increment".to_string()), "{before:?}");
    mcp.drain();

    host.open_counter("a.b");
    mcp.expect(Event::ToolsChanged).await;
    let tools = mcp.tools().await;
    let after: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    for name in &before {
        assert!(after.contains(name), "{name} moved: {after:?}");
    }
    // `a.b` is lossy in MCP's alphabet: its names carry a hash, never `a_b__...`.
    let dotted: Vec<&Tool> = tools
        .iter()
        .filter(|t| {
            t.title
                .as_deref()
                .is_some_and(|x| x.starts_with("hosted:a.b:"))
        })
        .collect();
    assert!(!dotted.is_empty(), "{after:?}");
    for t in &dotted {
        assert!(!before.contains(&t.name.to_string()), "{} reused", t.name);
        assert!(t.name.len() + "mcp__tickloop__".len() <= 64, "{}", t.name);
    }
    // `a_b__increment` still reaches `a_b`.
    mcp.call("a_b__increment", json!({"amount": 3})).await;
    host.wait_value("a_b", 3);
    assert_eq!(host.read("a.b")["data"]["value"], 0);
    mcp.stop().await;
}

/// Defect 5: `--interval 0` is raised to a floor tickhost's watches accept,
/// so subscriptions still deliver (they were refused under 10 ms).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interval_zero_is_raised_to_a_floor_that_subscriptions_work_with() {
    let host = Host::new();
    host.open_counter("counter");
    let mut mcp = Mcp::start_with(&host, "0").await;
    let resources = mcp
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    let described = resources
        .iter()
        .find(|r| r.uri == "tick://counter/state")
        .and_then(|r| r.description.clone())
        .unwrap_or_default();
    assert!(described.contains("every 100 ms"), "{described}");
    let uri = "tick://counter/state";
    #[allow(deprecated)]
    mcp.client
        .subscribe(SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    mcp.tools().await;
    mcp.drain();
    mcp.call("counter__increment", json!({"amount": 1})).await;
    mcp.expect(Event::Updated(uri.to_string())).await;
    mcp.stop().await;
}

/// Defect 6: a result's text is the same JSON as its structured content
/// (after a summary that says it is one), and the screen's text is marked as
/// a summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn result_text_is_the_same_json_as_structured_content() {
    let host = Host::new();
    host.open_counter("counter");
    let mcp = Mcp::start(&host).await;
    mcp.tools().await;
    let calls = [
        ("counter__increment", json!({"amount": 1})),
        ("counter__increment", json!({"amount": "x"})),
        (
            "TickCall",
            json!({"instance": "counter", "tool": "fail", "args": {}, "revision": "1"}),
        ),
        ("TickManage", json!({"action": "list"})),
        ("TickManage", json!({"action": "nope"})),
        ("TickRead", json!({"instance": "counter"})),
        ("TickDescribe", json!({"instance": "counter"})),
    ];
    for (name, args) in calls {
        let (first, result) = mcp.call(name, args.clone()).await;
        let structured = structured(&result);
        assert_eq!(json_block(&result), structured, "{name} {args}");
        if result.content.len() > 1 {
            assert!(
                first.contains("summary") || first.starts_with("ERROR"),
                "{first}"
            );
        }
    }
    let (_, result) = mcp
        .call(
            "TickCall",
            json!({"instance": "counter", "tool": "history", "args": {}, "revision": "1"}),
        )
        .await;
    assert_eq!(json_block(&result)["outcome"], "result");
    let (_, result) = mcp.call("TickManage", json!({"action": "list"})).await;
    assert!(json_block(&result)["value"].is_array());

    let (text, result) = mcp
        .call(
            "TickManage",
            json!({"action": "screen", "instance": "counter"}),
        )
        .await;
    assert_eq!(result.content.len(), 1);
    assert!(text.contains("a summary"), "{text}");
    assert!(
        structured(&result)["rows"].is_array() || structured(&result)["lines"].is_array(),
        "{result:?}"
    );
    mcp.stop().await;
}

/// `tickloop mcp` spoken to raw, line by line, for the error replies no
/// well-behaved client would provoke.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    replies: std::sync::mpsc::Receiver<Value>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Raw {
    fn start(host: &Host) -> Raw {
        use std::io::BufRead;
        let mut child = std::process::Command::new(tickloop_bin())
            .args(["mcp", "--interval", "200"])
            .env("TICKLOOP_RUNTIME_DIR", host.runtime())
            .env(MARK_VAR, host.runtime())
            .env("XDG_DATA_HOME", host.scratch().join("data"))
            .current_dir(host.scratch())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start tickloop mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                    s.push('\n');
                }
            }
        });
        let mut raw = Raw {
            child,
            stdin,
            replies,
            stderr,
        };
        raw.send(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"}}}),
        );
        let init = raw.reply(&json!(1));
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        raw.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        raw
    }

    fn send_line(&mut self, line: &[u8]) {
        use std::io::Write;
        self.stdin.write_all(line).expect("write to tickloop mcp");
        self.stdin.write_all(b"\n").expect("write to tickloop mcp");
        self.stdin.flush().expect("flush");
    }

    fn send(&mut self, message: &Value) {
        self.send_line(message.to_string().as_bytes());
    }

    /// The next reply whose id is `id` (others are dropped).
    fn reply(&mut self, id: &Value) -> Value {
        loop {
            match self.replies.recv_timeout(EVENT_WAIT) {
                Ok(reply) if &reply["id"] == id && reply.get("method").is_none() => return reply,
                Ok(_) => continue,
                Err(e) => panic!("no reply with id {id}: {e}; stderr: {}", self.stderr()),
            }
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Sends a request and returns its error's code and message.
    fn error_of(&mut self, id: i64, method: &str, params: Value) -> (i64, String) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let reply = self.reply(&json!(id));
        let code = reply["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("{method} {params}: no error: {reply}"));
        (
            code,
            reply["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Defect 4: JSON-RPC errors as JSON-RPC 2.0 and the MCP spec say.
#[test]
fn malformed_requests_get_the_json_rpc_errors_the_specs_name() {
    let host = Host::new();
    let mut raw = Raw::start(&host);

    // Malformed params of known methods: -32602 Invalid params, saying what is expected.
    let cases = [
        ("tools/call", json!({})),
        ("tools/call", json!({"name": "TickRead", "arguments": [1]})),
        (
            "tools/call",
            json!({"name": "TickRead", "arguments": "instance=x"}),
        ),
        ("resources/read", json!({})),
        ("resources/subscribe", json!({"uri": 5})),
        ("resources/unsubscribe", json!({"url": "tick://x/state"})),
    ];
    for (i, (method, params)) in cases.iter().enumerate() {
        let (code, message) = raw.error_of(10 + i as i64, method, params.clone());
        assert_eq!(code, -32602, "{method} {params}: {message}");
        assert!(message.contains("expected"), "{method}: {message}");
    }
    // An unknown tool: a protocol error, -32602.
    let (code, message) = raw.error_of(
        20,
        "tools/call",
        json!({"name": "nope__x", "arguments": {}}),
    );
    assert_eq!(code, -32602, "{message}");
    // An unknown method is still -32601.
    let (code, _) = raw.error_of(21, "foo/bar", json!({}));
    assert_eq!(code, -32601);

    // Not JSON: -32700 with a null id.
    raw.send_line(br#"{"jsonrpc":"2.0","id":22,"method":"#);
    let reply = raw.reply(&Value::Null);
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert!(
        reply.as_object().is_some_and(|m| m.contains_key("id")),
        "{reply}"
    );

    // A line over 16 MiB: an error reply with its id, and a line on stderr.
    let big = "x".repeat(16 * 1024 * 1024 + 10);
    let line = json!({"jsonrpc": "2.0", "id": 23, "method": "tools/call",
        "params": {"name": "TickRead", "arguments": {"instance": big}}});
    raw.send(&line);
    let reply = raw.reply(&json!(23));
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("16 MiB")),
        "{reply}"
    );
    common::wait_for("the oversized line's note on stderr", || {
        raw.stderr().contains("16 MiB").then_some(())
    });

    // The session goes on.
    raw.send(&json!({"jsonrpc": "2.0", "id": 24, "method": "ping"}));
    let pong = raw.reply(&json!(24));
    assert!(pong["result"].is_object(), "{pong}");
}

/// Issue 49: an `input` or `run` longer than tickhost reads (8 MiB as one
/// request line) is refused by the bridge before anything is sent, saying
/// the limit and what to do (it waited 90 s and blamed tickhost); nothing
/// is typed, held or recorded, and the session goes on.
#[test]
fn a_request_over_tickhosts_line_limit_is_refused_before_it_is_sent() {
    let host = Host::new();
    host.open_counter("long");
    let mut raw = Raw::start(&host);
    let big = "x".repeat(tickloop_proto::wire::MAX_CLIENT_LINE + 1);
    let cases = [
        (
            30,
            json!({"action": "input", "instance": "long", "text": big}),
            "one `input` each",
        ),
        (
            31,
            json!({"action": "run", "instance": "long", "command": big}),
            "run that file",
        ),
    ];
    for (id, arguments, advice) in cases {
        raw.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "TickManage", "arguments": arguments}}));
        let reply = raw.reply(&json!(id));
        let result = &reply["result"];
        assert_eq!(result["isError"], true, "{reply:.600}");
        let said = result["content"][0]["text"].as_str().unwrap_or_default();
        for part in ["8388608 bytes (8 MiB)", "nothing was sent", advice] {
            assert!(said.contains(part), "{part}: {said:.600}");
        }
        assert!(!said.contains("xxxxxxxx"), "{said:.600}");
    }
    // Nothing reached the instance, nothing waits for the person.
    let record = host.ok(&["activity", "long", "--json"]);
    let entries = record["entries"].as_array().expect("entries");
    assert!(
        !entries
            .iter()
            .any(|e| e["type"] == "consent" || e["method"] == "input" || e["method"] == "run"),
        "{record:.600}"
    );
    let held = host.run(&["approvals"]);
    assert_eq!(held.stdout.trim(), "", "{held:?}");
    raw.send(&json!({"jsonrpc": "2.0", "id": 32, "method": "ping"}));
    assert!(raw.reply(&json!(32))["result"].is_object());
}

/// An MCP client's calls are in the instance's activity as MCP's (issue 20):
/// through TickManage's `activity` action, and in the overlay a person pops
/// over the Tick in `tickloop attach` (a real tmux as the terminal), next to
/// a CLI call.
#[tokio::test(flavor = "multi_thread")]
async fn the_activity_names_mcp_calls_in_tickmanage_and_in_the_overlay() {
    let host = Host::new();
    host.open_counter("counter");
    let mcp = Mcp::start(&host).await;
    mcp.call(
        "TickCall",
        json!({"instance": "counter", "tool": "increment", "args": {"amount": 7}, "revision": "1"}),
    )
    .await;
    host.ok(&[
        "call",
        "counter",
        "increment",
        r#"{"amount":1}"#,
        "--revision",
        "1",
    ]);

    let (text, result) = mcp
        .call(
            "TickManage",
            json!({"action": "activity", "instance": "counter"}),
        )
        .await;
    let record = structured(&result);
    let calls: Vec<&Value> = record["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["method"] == "tick/call")
        .collect();
    assert_eq!(calls.len(), 2, "{record}");
    assert_eq!(calls[0]["client"], "mcp");
    assert_eq!(calls[0]["args"], json!({"amount": 7}));
    assert_eq!(calls[0]["outcome"], "executed");
    assert_eq!(calls[1]["client"], "cli");
    assert!(
        text.contains(r#"MCP tick/call increment {"amount":7} -> executed"#),
        "{text}"
    );
    // `after` leaves out what was seen.
    let last = record["last"].as_u64().expect("last");
    let (_, result) = mcp
        .call(
            "TickManage",
            json!({"action": "activity", "instance": "counter", "after": last}),
        )
        .await;
    let newer = structured(&result);
    assert!(
        newer["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .all(|e| e["n"].as_u64() > Some(last)),
        "{newer}"
    );

    let tmux = common::tmux::Tmux::attach(&host, "hosted:counter", 110, 30);
    tmux.wait_text("value: 8");
    tmux.send_keys(&["C-\\", "m"]);
    let shown = tmux.wait_text(r#"MCP     increment {"amount":7} → executed"#);
    assert!(
        shown.contains(r#"CLI     increment {"amount":1} → executed"#),
        "{shown}"
    );
    tmux.send_keys(&["Escape"]);
    // (An Escape followed at once by another key reads as alt+key.)
    common::wait_for("the overlay to close", || {
        (!tmux.capture().contains("activity ·")).then_some(())
    });
    tmux.send_keys(&["+"]);
    tmux.wait_text("value: 9");
    mcp.stop().await;
}

/// A call held for a person's approval (issue 15) tells an MCP client that
/// gave a progress token: a progress notification saying what it waits for.
/// Approved, it runs.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_waiting_for_approval_sends_progress_and_runs_once_approved() {
    let host = Host::new();
    host.open_asking_counter("gated");
    let mut mcp = Mcp::start(&host).await;
    let Value::Object(args) =
        json!({"instance": "gated", "tool": "increment", "args": {"amount": 3}, "revision": "1"})
    else {
        unreachable!()
    };
    let mut meta = rmcp::model::RequestMetaObject::default();
    meta.set_progress_token(rmcp::model::ProgressToken(
        rmcp::model::NumberOrString::Number(7),
    ));
    let mut params = CallToolRequestParams::new("TickCall").with_arguments(args);
    params.meta = Some(meta);
    let peer = mcp.client.peer().clone();
    let call = tokio::spawn(async move { peer.call_tool(params).await });

    let deadline = tokio::time::Instant::now() + EVENT_WAIT;
    let message = loop {
        match tokio::time::timeout_at(deadline, mcp.events.recv()).await {
            Ok(Some(Event::Progress(message))) => break message,
            Ok(Some(_)) => continue,
            other => panic!("no progress notification: {other:?}"),
        }
    };
    assert!(
        message.contains("waiting for the person to approve increment on hosted:gated")
            && message.contains("not executed if nobody answers by"),
        "{message}"
    );
    assert_eq!(host.logged_calls("gated", "increment"), 0);
    let waiting = host.run(&["approvals"]);
    let held: Value = serde_json::from_str(waiting.stdout.trim()).expect("one waiting call");
    assert_eq!(held["client"], "mcp");
    host.ok(&[
        "approve",
        "gated",
        held["call"].as_str().expect("a call id"),
    ]);
    let result = call.await.expect("the task").expect("tools/call");
    assert_eq!(structured(&result)["outcome"], "result", "{result:?}");
    assert_eq!(structured(&result)["result"]["value"], 3);
    assert_eq!(host.logged_calls("gated", "increment"), 1);
    mcp.stop().await;
}

/// Issue 42: the agent goes away (its MCP bridge killed) while its call
/// waits for approval: the call is withdrawn at once, leaves the
/// approvals, and the log says the agent stopped waiting; it never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_whose_bridge_is_killed_is_withdrawn() {
    let host = Host::new();
    host.open_asking_counter("gated");
    let mcp = Mcp::start(&host).await;
    let Value::Object(args) =
        json!({"instance": "gated", "tool": "increment", "args": {"amount": 3}, "revision": "1"})
    else {
        unreachable!()
    };
    let peer = mcp.client.peer().clone();
    let call = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("TickCall").with_arguments(args))
            .await
    });
    let held = tokio::task::block_in_place(|| {
        wait_for("the call to wait for approval", || {
            let out = host.run(&["approvals"]);
            serde_json::from_str::<Value>(out.stdout.trim()).ok()
        })
    });
    assert_eq!(held["client"], "mcp");
    // The bridge: this test's child running `tickloop mcp` for this host
    // (the tests of this file run in parallel, each with a bridge of its
    // own, all children of this process).
    let me = std::process::id().to_string();
    let ours = format!("TICKLOOP_RUNTIME_DIR={}", host.runtime().display());
    let bridge = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let parent = stat
                .rsplit(')')
                .next()
                .and_then(|f| f.split_whitespace().nth(1));
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            parent == Some(me.as_str())
                && cmdline.split(|b| *b == 0).any(|a| a == b"mcp")
                && environ.split(|b| *b == 0).any(|v| v == ours.as_bytes())
        })
        .expect("the tickloop mcp process");
    // SAFETY: kill sends a signal to a process this test started.
    assert_eq!(unsafe { libc::kill(bridge, libc::SIGKILL) }, 0);
    tokio::task::block_in_place(|| {
        wait_for("the call to leave the approvals", || {
            host.run(&["approvals"])
                .stdout
                .trim()
                .is_empty()
                .then_some(())
        })
    });
    let out = host.run(&["approvals", "--log", "gated"]);
    let last: Value =
        serde_json::from_str(out.stdout.lines().last().unwrap_or_default()).expect("a log line");
    assert_eq!(last["decision"], "withdrawn");
    assert_eq!(last["reason"], "the agent stopped waiting");
    assert_eq!(host.logged_calls("gated", "increment"), 0);
    let _ = call.await;
}

/// A one-tool Tick file for the artifact test: tool `tool`, revision `rev`.
fn artifact_source(tool: &str, rev: &str) -> String {
    format!(
        r#"import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("method") == "tick/describe":
        result = {{"protocol": 3, "kind": "test.a", "title": "A", "revision": {rev:?},
                  "tools": [{{"name": {tool:?}, "description": "x", "mutates": False,
                             "input_schema": {{"type": "object"}}}}]}}
    elif r.get("method") == "tick/read":
        result = {{"seq": 0, "data": {{}}}}
    else:
        result = {{"ok": True}}
    sys.stdout.write(json.dumps({{"jsonrpc": "2.0", "id": r.get("id"), "result": result}}) + "\n")
    sys.stdout.flush()
"#
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manage_opens_and_reloads_an_artifact_with_list_changed() {
    let host = Host::new();
    let path = host.scratch().join("gadget.py");
    std::fs::write(&path, artifact_source("ping", "1")).expect("writing the artifact");
    let mut mcp = Mcp::start(&host).await;
    mcp.drain();
    let (text, result) = mcp
        .call(
            "TickManage",
            json!({"action": "open", "artifact": path.to_string_lossy()}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{text}");
    assert_eq!(structured(&result)["id"], "artifact:gadget");
    assert_eq!(structured(&result)["generation"], 1);
    mcp.expect(Event::ToolsChanged).await;
    assert!(mcp.tools().await.iter().any(|t| t.name == "gadget__ping"));

    // A save with another tool: the catalog the agent sees follows.
    std::fs::write(&path, artifact_source("pong", "2")).expect("rewriting the artifact");
    // (The version starting drops the tool, the new one lists its own.)
    while !mcp.tools().await.iter().any(|t| t.name == "gadget__pong") {
        mcp.expect(Event::ToolsChanged).await;
    }
    assert!(!mcp.tools().await.iter().any(|t| t.name == "gadget__ping"));

    // A subscriber to its state hears of a new version even before the
    // new version sends an update (this one never does).
    let uri = "tick://gadget/state".to_string();
    #[allow(deprecated)]
    mcp.client
        .subscribe(SubscribeRequestParams::new(uri.clone()))
        .await
        .expect("resources/subscribe");
    mcp.drain();
    let (text, result) = mcp
        .call(
            "TickManage",
            json!({"action": "reload", "instance": "gadget"}),
        )
        .await;
    assert_eq!(result.is_error, Some(false), "{text}");
    assert_eq!(structured(&result)["generation"], 3, "{text}");
    mcp.expect(Event::Updated(uri)).await;
    mcp.stop().await;
}

/// Issue 27: an MCP agent's `TickManage input` into a shell the person
/// opened waits for the person; nothing is typed until they approve, and a
/// refused close leaves the shell running, with a not-executed answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_typing_into_the_persons_shell_waits_for_the_person() {
    let host = Host::new();
    host.open_bash("mine");
    let mcp = Mcp::start(&host).await;
    let Value::Object(args) =
        json!({"action": "input", "instance": "shell:mine", "text": "echo typed-$((6*7))\r"})
    else {
        unreachable!()
    };
    let peer = mcp.client.peer().clone();
    let typing = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("TickManage").with_arguments(args))
            .await
    });
    // (The waits below block this worker thread; the client's I/O runs on
    // the runtime's others.)
    let held = common::wait_for("the agent's typing to wait", || {
        let out = host.run(&["approvals"]);
        serde_json::from_str::<Value>(out.stdout.trim()).ok()
    });
    assert_eq!(held["action"], "input");
    assert_eq!(held["client"], "mcp");
    assert!(!host.screen("shell:mine").contains("typed-42"));
    host.ok(&[
        "approve",
        "shell:mine",
        held["call"].as_str().expect("a call id"),
    ]);
    let result = typing.await.expect("the task").expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    host.wait_screen("shell:mine", "typed-42");

    // A close the person refuses: not executed, and the shell goes on.
    let (message, result) = {
        let Value::Object(args) = json!({"action": "close", "instance": "shell:mine"}) else {
            unreachable!()
        };
        let peer = mcp.client.peer().clone();
        let closing = tokio::spawn(async move {
            peer.call_tool(CallToolRequestParams::new("TickManage").with_arguments(args))
                .await
        });
        let held = common::wait_for("the agent's close to wait", || {
            let out = host.run(&["approvals"]);
            serde_json::from_str::<Value>(out.stdout.trim()).ok()
        });
        host.ok(&[
            "refuse",
            "shell:mine",
            held["call"].as_str().expect("an id"),
        ]);
        let result = closing.await.expect("the task").expect("tools/call");
        (text(&result), result)
    };
    assert_eq!(result.is_error, Some(true), "{message}");
    assert!(message.contains("refused by the person (cli)"), "{message}");
    assert!(host.entry("shell:mine").expect("listed")["ended"].is_null());
    mcp.stop().await;
}

/// Issue 49: an MCP agent's `TickManage reload` of the person's artifact
/// waits for the person as its close does (nothing restarts meanwhile);
/// approved, it reloads, and the activity names the agent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agents_reload_of_the_persons_artifact_waits_for_the_person() {
    let host = Host::new();
    let path = host.scratch().join("gadget.py");
    std::fs::write(&path, artifact_source("ping", "1")).expect("writing the artifact");
    host.ok(&["open", "--artifact", &path.to_string_lossy()]);
    let mcp = Mcp::start(&host).await;
    let Value::Object(args) = json!({"action": "reload", "instance": "artifact:gadget"}) else {
        unreachable!()
    };
    let peer = mcp.client.peer().clone();
    let reloading = tokio::spawn(async move {
        peer.call_tool(CallToolRequestParams::new("TickManage").with_arguments(args))
            .await
    });
    let held = common::wait_for("the agent's reload to wait", || {
        let out = host.run(&["approvals"]);
        serde_json::from_str::<Value>(out.stdout.trim()).ok()
    });
    assert_eq!(
        (&held["action"], &held["client"]),
        (&json!("reload"), &json!("mcp"))
    );
    let entry = host.entry("artifact:gadget").expect("listed");
    assert_eq!(entry["generation"], 1, "not reloaded while it waits");
    let call = held["call"].as_str().expect("a call id");
    host.ok(&["approve", "artifact:gadget", call]);
    let result = reloading.await.expect("the task").expect("tools/call");
    assert_ne!(result.is_error, Some(true), "{result:?}");
    assert_eq!(structured(&result)["generation"], 2, "{result:?}");
    let record = host.ok(&["activity", "artifact:gadget"]);
    let reloads: Vec<&Value> = record["entries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|e| e["type"] == "reload")
        .map(|e| &e["client"])
        .collect();
    assert_eq!(reloads, [&json!("mcp")], "{record}");
    mcp.stop().await;
}
