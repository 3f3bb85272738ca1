//! `tickloop mcp --tasks`: the tasks extension (`io.modelcontextprotocol/
//! tasks`) with the real rmcp client, which declares it (and form
//! elicitation). A call that is still running after two seconds answers
//! with a task that completes with the call's result; a fast one answers
//! as before; a call held for approval becomes a task whose
//! `input_required` holds the approval question, and `tasks/update` with
//! Accept runs it once; `tasks/cancel` of a held call refuses it, so it
//! never runs. A server without `--tasks` answers `tasks/get` with -32601.
//!
//! Task status is read with `tasks/get` at the poll interval the server
//! names: no notification carries it (rmcp routes none on listen streams).

mod common;

use common::{tickloop_bin, Host, MARK_VAR};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    DetailedTask, ElicitationCapability, FormElicitationCapability, GetTaskParams, Implementation,
    TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RunningService, ServiceError};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::time::Duration;

/// How long the server may take to start, and a task to get where the
/// test waits for it.
const WAIT: Duration = Duration::from_secs(30);

/// A client that declares the tasks extension and form elicitation.
struct TaskClient;

impl ClientHandler for TaskClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder().enable_tasks().build();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::default()));
        ClientConfig::new(capabilities, Implementation::new("tasks-test", "0"))
    }
}

async fn start(host: &Host, tasks: bool) -> RunningService<RoleClient, TaskClient> {
    let mut command = tokio::process::Command::new(tickloop_bin());
    command
        .args(["mcp", "--interval", "200"])
        .env("TICKLOOP_RUNTIME_DIR", host.runtime())
        .env("XDG_DATA_HOME", host.scratch().join("data"))
        .env(MARK_VAR, host.runtime())
        .current_dir(host.scratch());
    if tasks {
        command.arg("--tasks");
    }
    let transport = TokioChildProcess::new(command).expect("start tickloop mcp");
    let client = tokio::time::timeout(WAIT, TaskClient.serve(transport))
        .await
        .expect("initialize within the deadline")
        .expect("initialize");
    client.list_all_tools().await.expect("tools/list");
    client
}

async fn call(
    client: &RunningService<RoleClient, TaskClient>,
    name: &str,
    args: Value,
) -> CallToolResponse {
    let Value::Object(args) = args else {
        panic!("args must be an object")
    };
    client
        .call_tool_once(CallToolRequestParams::new(name.to_string()).with_arguments(args))
        .await
        .unwrap_or_else(|e| panic!("tools/call {name}: {e}"))
}

fn task_id(response: CallToolResponse) -> (String, u64) {
    match response {
        CallToolResponse::Task(created) => (
            created.task.task_id.clone(),
            created.task.poll_interval_ms.unwrap_or(500),
        ),
        other => panic!("not a task: {other:?}"),
    }
}

/// `tasks/get` at the server's poll interval until `until` holds.
async fn poll(
    client: &RunningService<RoleClient, TaskClient>,
    (id, every): &(String, u64),
    until: impl Fn(&DetailedTask) -> bool,
) -> DetailedTask {
    let deadline = tokio::time::Instant::now() + WAIT * 2;
    loop {
        let got = client
            .peer()
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .expect("tasks/get");
        if until(&got.task) {
            return got.task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the task never got there: {got:?}"
        );
        tokio::time::sleep(Duration::from_millis(*every)).await;
    }
}

fn completed(task: &DetailedTask) -> Value {
    match &task.payload {
        TaskPayload::Completed { result } => {
            Value::Object(result.clone())["structuredContent"].clone()
        }
        other => panic!("not completed: {other:?}"),
    }
}

fn open_asking(host: &Host) {
    host.open_asking_counter("ask");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_call_becomes_a_task_and_a_fast_one_answers_at_once() {
    let host = Host::new();
    host.open_counter("counter");
    let client = start(&host, true).await;
    match call(&client, "counter__increment", json!({"amount": 1})).await {
        CallToolResponse::Complete(result) => {
            assert_eq!(
                result.structured_content.expect("structured")["outcome"],
                "result"
            );
        }
        other => panic!("a fast call became {other:?}"),
    }
    let task = task_id(call(&client, "counter__sleep", json!({"ms": 6000})).await);
    let done = poll(&client, &task, |t| t.status() != TaskStatus::Working).await;
    let outcome = completed(&done);
    assert_eq!(outcome["outcome"], "result", "{outcome}");
    assert_eq!(outcome["result"]["slept"], 6000, "{outcome}");
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_call_asks_through_its_task_and_runs_once_on_accept_never_when_cancelled() {
    let host = Host::new();
    open_asking(&host);
    let client = start(&host, true).await;

    let task = task_id(call(&client, "ask__increment", json!({"amount": 4})).await);
    let asking = poll(&client, &task, |t| t.status() == TaskStatus::InputRequired).await;
    let TaskPayload::InputRequired { input_requests } = &asking.payload else {
        panic!("no input requests: {asking:?}")
    };
    let (key, question) = input_requests.iter().next().expect("one question");
    let question = serde_json::to_value(question).expect("JSON");
    assert_eq!(question["method"], "elicitation/create", "{question}");
    let message = question["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("hosted:ask") && message.contains("Answer by "),
        "{message}"
    );
    assert_eq!(host.logged_calls("ask", "increment"), 0);
    let mut answers = rmcp::model::InputResponses::new();
    answers.insert(key.clone(), json!({"action": "accept", "content": {}}));
    client
        .peer()
        .update_task(UpdateTaskParams::new(task.0.clone(), answers))
        .await
        .expect("tasks/update");
    let done = poll(&client, &task, |t| t.status().is_terminal()).await;
    assert_eq!(completed(&done)["outcome"], "result", "{done:?}");
    assert_eq!(host.logged_calls("ask", "increment"), 1);

    let task = task_id(call(&client, "ask__increment", json!({"amount": 9})).await);
    poll(&client, &task, |t| t.status() == TaskStatus::InputRequired).await;
    client
        .peer()
        .cancel_task(CancelTaskParams::new(task.0.clone()))
        .await
        .expect("tasks/cancel");
    let done = poll(&client, &task, |t| t.status().is_terminal()).await;
    let outcome = completed(&done);
    assert_eq!(outcome["outcome"], "not_executed", "{outcome}");
    assert_eq!(outcome["error"]["data"]["by"], "mcp-host", "{outcome}");
    assert_eq!(host.logged_calls("ask", "increment"), 1);
    assert_eq!(host.read("ask")["data"]["value"], 4);
    client.cancel().await.expect("close");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_tasks_offered_tasks_get_is_method_not_found_and_calls_block_as_before() {
    let host = Host::new();
    host.open_counter("counter");
    let client = start(&host, false).await;
    match call(&client, "counter__sleep", json!({"ms": 2500})).await {
        CallToolResponse::Complete(result) => {
            assert_eq!(
                result.structured_content.expect("structured")["outcome"],
                "result"
            );
        }
        other => panic!("became {other:?}"),
    }
    match client.peer().get_task(GetTaskParams::new("t1")).await {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code.0, -32601, "{e:?}"),
        other => panic!("tasks/get answered {other:?}"),
    }
    client.cancel().await.expect("close");
}
