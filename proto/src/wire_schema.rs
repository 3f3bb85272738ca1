//! The JSON Schema of every message of every Tickloop socket: the wire's
//! types ([`crate::wire`]) and the attach protocol's ([`crate::attach`]),
//! as one type. [`crate::wire::WIRE_VERSION`] names its digest
//! ([`crate::wire::wire_digest`]); `proto/tests/golden/wire-schema.json`
//! keeps it. Apart from both modules, which it reads, so that neither
//! depends on the other through it.

use crate::wire::*;
use schemars::JsonSchema;
use serde_json::Value;

/// Every message of every Tickloop socket, as one type for its schema.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct AllMessages {
    hello: Hello,
    hello_reply: HelloReply,
    client_request: Envelope<ClientRequest>,
    server_message: ServerMessage,
    launcher_request: Envelope<LauncherRequest>,
    launcher_message: LauncherMessage,
    launch_spec: LaunchSpec,
    launch_report: LaunchReport,
    launcher_record: LauncherRecord,
    list_entry: ListEntry,
    open_reply: OpenReply,
    screen_reply: ScreenReply,
    image_data: ImageData,
    wait_reply: WaitReply,
    run_reply: RunReply,
    activity_record: ActivityRecord,
    timeline_reply: TimelineReply,
    approval_log_entry: ApprovalLogEntry,
    web_control: WebControl,
    web_control_reply: WebControlReply,
    view_hello: crate::attach::ViewHello,
    to_view: crate::attach::ToView,
    view_event: crate::attach::ViewEvent,
}

/// The JSON Schema of every message of every Tickloop socket (what
/// [`crate::wire::WIRE_VERSION`] names; `proto/tests/golden/wire-schema.json` keeps it).
pub fn wire_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(AllMessages)).unwrap_or(Value::Null)
}
