//! The tasks extension (`io.modelcontextprotocol/tasks`), offered with
//! `tickloop mcp --tasks` to clients that declare it: a Tick call that has
//! not finished after [`TASK_AFTER`], or that tickhost holds for a person's
//! approval, answers with a task handle instead of blocking the request.
//! The call goes on; `tasks/get` says `working`, `input_required` (the
//! approval question of [`crate::consent::question`], when the client declared
//! elicitation and asking in the host is allowed) or `completed` with the
//! call's result. `tasks/update` with the person's answer decides the held
//! call (`by: "mcp-host"`, as in [`crate::held`]); `tasks/cancel` refuses a
//! held call, but cannot stop a call the Tick is already running, whose
//! outcome then completes the task. rmcp's [`TaskManager`] keeps the tasks.

use crate::held::{self, HostApproval, Running};
use rmcp::model::{
    CallToolResponse, CallToolResult, CreateTaskResult, ElicitResult, ElicitationAction,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use rmcp::{ErrorData, RoleServer};
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tickloop_proto::wire::HeldCall;
use tokio::sync::mpsc;

/// How long a call runs before it becomes a task.
pub const TASK_AFTER: Duration = Duration::from_secs(2);

/// How long a task is kept (longer than any approval waits: tickhost's
/// default is 600 s).
const TASK_TTL_MS: u64 = 3_600_000;

/// How often a client is told to poll `tasks/get`.
const POLL_MS: u64 = 500;

/// The tasks of this connection, when `--tasks` offers them.
pub struct Tasks {
    offered: bool,
    manager: TaskManager,
}

impl Tasks {
    pub fn new(offered: bool) -> Tasks {
        Tasks {
            offered,
            manager: TaskManager::new(),
        }
    }

    /// Whether the server advertises the extension.
    pub fn offered(&self) -> bool {
        self.offered
    }

    pub fn manager(&self) -> &TaskManager {
        &self.manager
    }

    /// Whether this request's call may become a task: offered, and the
    /// client declared the extension.
    pub fn wanted(&self, context: &RequestContext<RoleServer>) -> bool {
        self.offered
            && context
                .client_capabilities()
                .is_some_and(|c| c.supports_tasks())
    }

    /// The answer to a call started with [`HostApproval::on_hold`]: its
    /// outcome if it ends within [`TASK_AFTER`] without being held, else a
    /// task that follows it. `ask`: held calls are asked about through the
    /// task's `input_required`.
    pub async fn start(
        &self,
        mut call: Running,
        mut holds: mpsc::UnboundedReceiver<HeldCall>,
        approval: Arc<HostApproval>,
        ask: bool,
        asker: String,
    ) -> Result<CallToolResponse, ErrorData> {
        let first_hold = tokio::select! {
            done = &mut call => return held::finished(done),
            Some(held) = holds.recv() => Some(held),
            () = tokio::time::sleep(TASK_AFTER) => None,
        };
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(POLL_MS)
            .with_status_message("the Tick call is running");
        let task = self.manager.spawn(options, move |context| {
            Box::pin(follow(
                Followed {
                    context,
                    holds,
                    approval,
                    ask,
                    asker,
                },
                call,
                first_hold,
            ))
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }
}

/// What a task's operation follows besides the call itself.
struct Followed {
    context: TaskContext,
    holds: mpsc::UnboundedReceiver<HeldCall>,
    approval: Arc<HostApproval>,
    ask: bool,
    /// Who asks, as the question names it.
    asker: String,
}

/// A task's operation: waits for the call's outcome, asking about each
/// hold once (when asking), refusing a held call when the task is
/// cancelled.
async fn follow(
    mut f: Followed,
    mut call: Running,
    mut held: Option<HeldCall>,
) -> Result<CallToolResult, TaskExit> {
    let mut asked: HashSet<String> = HashSet::new();
    let mut cancelled = false;
    // The call tickhost held last (a refusal on cancel is for it).
    let mut last_held: Option<HeldCall> = None;
    loop {
        if let Some(h) = held.take() {
            last_held = Some(h.clone());
            f.context.set_status_message(format!(
                "waiting for a person to approve {} on {} (held call {}; `tickloop approve {} {}` or the Monitor)",
                h.tool, h.instance, h.call, h.instance, h.call
            ));
            let input = match crate::consent::input_request(&h, &f.asker) {
                Ok(input) => Some(input),
                Err(why) => {
                    // Asked only where it shows whole.
                    f.context.set_status_message(format!(
                        "waiting for a person to approve {} on {} (held call {}; `tickloop approve {} {}` or the Monitor); not asked here: {why}",
                        h.tool, h.instance, h.call, h.instance, h.call
                    ));
                    None
                }
            };
            if let Some(input) =
                input.filter(|_| f.ask && !cancelled && asked.insert(h.call.clone()))
            {
                tokio::select! {
                    done = &mut call => return outcome(done),
                    answer = f.context.request_input(format!("approval-{}", h.call), input) => {
                        // Err: `tasks/cancel` withdrew the question; the
                        // cancellation below refuses the call.
                        if let Ok(value) = answer {
                            let action = serde_json::from_value::<ElicitResult>(value)
                                .map_or(ElicitationAction::Cancel, |r| r.action);
                            f.approval.decide(&h, &action, None).await;
                            last_held = None;
                        }
                    }
                }
            }
        }
        tokio::select! {
            done = &mut call => return outcome(done),
            Some(h) = f.holds.recv() => {
                if !asked.contains(&h.call) {
                    held = Some(h);
                }
            }
            () = f.context.cancelled(), if !cancelled => {
                cancelled = true;
                // A held call is refused; one the Tick runs cannot be
                // stopped, and its outcome completes the task.
                if let Some(h) = &last_held {
                    f.approval
                        .send_decision(h, false, Some("the agent's host cancelled the task"), None)
                        .await;
                }
            }
        }
    }
}

fn outcome(
    done: Result<Result<CallToolResult, ErrorData>, tokio::task::JoinError>,
) -> Result<CallToolResult, TaskExit> {
    match held::finished(done) {
        Ok(CallToolResponse::Complete(result)) => Ok(result),
        Ok(_) => Err(TaskExit::Error(ErrorData::internal_error(
            "the call did not end with a result",
            None,
        ))),
        Err(e) => Err(TaskExit::Error(e)),
    }
}
