//! Tick tool calls: TickCall and the per-Tick `NAME__TOOL` tools. A
//! per-Tick call is bound to the catalog the client was shown: it carries
//! the revision of the client's last `tools/list` and is refused (not
//! executed) when the Tick's catalog has moved on since. Every result
//! states its outcome ([`crate::outcome`]); while tickhost holds a call for a
//! person's approval, the client hears progress notifications, and the
//! person is asked in the agent host too ([`crate::consent`]).

use crate::catalog::Catalog;
use crate::hosts::{error_kind, HostError, Hosts};
use crate::outcome::{self, CallSite};
use crate::schema;
use crate::tool_list::ToolList;
use rmcp::model::{CallToolResult, ProgressToken};
use rmcp::{ErrorData, Peer, RoleServer};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;
use tickloop_proto::wire::{CallOutcome, ClientReply, ClientRequest, HeldCall};
use tokio_util::sync::CancellationToken;

/// The agent request an action belongs to: the client that asked (the
/// agent host, which may be asked too), and the progress token it gave.
#[derive(Clone)]
pub struct Caller {
    pub peer: Peer<RoleServer>,
    pub progress: Option<ProgressToken>,
    /// In 2026-07-28, where each word of a hold goes for the host's
    /// question: the input-required round trip ([`crate::held`]) or a
    /// task's ([`crate::tasks`]). (The 2025 revisions ask with a request
    /// of their own, [`crate::consent`].)
    pub ask: Option<tokio::sync::mpsc::UnboundedSender<HeldCall>>,
    /// Cancelled when the client cancels the request
    /// (`notifications/cancelled`: its own timeout, or the person stopped
    /// it): an action tickhost holds for it is then withdrawn, so it never
    /// runs, whatever the person answers later.
    pub cancelled: CancellationToken,
    /// Why the agent host is not asked about what tickhost holds
    /// ([`crate::host_asks`]); `None`: it is, when it can be.
    pub not_asked: Option<String>,
    /// Who asks, as the question names it
    /// ([`crate::host_asks::HostFacts::asker`]).
    pub asker: String,
    /// The agent session the request came from, for TickManage `subscribe`
    /// ([`crate::manage::loop_session`]), or why there is none.
    pub loop_session: Result<(tickloop_loop::agent::Agent, String), String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CallArgs {
    instance: String,
    tool: String,
    #[serde(default)]
    args: Option<Value>,
    revision: String,
}

/// Makes the calls of TickCall and of the per-Tick tools.
pub struct Calls {
    hosts: Hosts,
    catalog: Arc<Catalog>,
    tools: Arc<ToolList>,
}

impl Calls {
    pub fn new(hosts: Hosts, catalog: Arc<Catalog>, tools: Arc<ToolList>) -> Calls {
        Calls {
            hosts,
            catalog,
            tools,
        }
    }

    /// TickCall: `instance`, `tool`, `args` and `revision` given.
    pub async fn generic(&self, args: Value, caller: &Caller) -> CallToolResult {
        let args: CallArgs = match serde_json::from_value(args) {
            Ok(a) => a,
            Err(e) => {
                return outcome::refused(
                    &CallSite {
                        instance: "?",
                        tool: "?",
                        revision: "?",
                    },
                    -32602,
                    format!("TickCall arguments: {e}"),
                )
            }
        };
        let call_args = args.args.unwrap_or_else(|| json!({}));
        self.call(
            &args.instance,
            &args.tool,
            call_args,
            &args.revision,
            caller,
        )
        .await
    }

    /// A per-Tick tool's call. A name the client's last `tools/list` did not
    /// hold is an unknown tool: a JSON-RPC error (-32602), as the MCP spec's
    /// error handling says, not a tool result.
    pub async fn listed(
        &self,
        name: &str,
        args: Value,
        caller: &Caller,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(listed) = self.tools.listed(name) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "Unknown tool: {name:?} is not in the last tools/list (its Tick may have closed, or tools were never listed). List tools again, or use TickCall."
                ),
                Some(json!({"tool": name})),
            ));
        };
        let site = CallSite {
            instance: &listed.instance,
            tool: &listed.tool,
            revision: &listed.revision,
        };
        match self.catalog.revision(&listed.instance) {
            None => {
                return Ok(outcome::refused(
                    &site,
                    -32600,
                    format!(
                        "{} is not running any more (closed or ended; TickManage list shows how); list tools again",
                        listed.instance
                    ),
                ))
            }
            Some(rev) if rev != listed.revision => {
                return Ok(outcome::refused(
                    &site,
                    tickloop_proto::core::codes::STALE_REVISION,
                    format!(
                        "the tool catalog of {} changed (revision {} when tools were listed, {} now); this call was prepared against the old catalog",
                        listed.instance, listed.revision, rev
                    ),
                ))
            }
            Some(_) => {}
        }
        let args = if listed.wrapped {
            match unwrap_args(args) {
                Ok(args) => args,
                Err(message) => return Ok(outcome::refused(&site, -32602, message)),
            }
        } else {
            args
        };
        Ok(self
            .call(
                &listed.instance,
                &listed.tool,
                args,
                &listed.revision,
                caller,
            )
            .await)
    }

    /// Sends a call and states its outcome. After a mutating call (or a
    /// stale-revision refusal) the instance is described again.
    async fn call(
        &self,
        instance: &str,
        tool: &str,
        args: Value,
        revision: &str,
        caller: &Caller,
    ) -> CallToolResult {
        let site = CallSite {
            instance,
            tool,
            revision,
        };
        if !args.is_object() {
            return outcome::refused(&site, -32602, "args must be a JSON object".into());
        }
        let mutating = self.catalog.mutates(instance, tool);
        let request = ClientRequest::Call {
            instance: instance.to_string(),
            call: tickloop_proto::wire::CallRequest {
                tool: tool.to_string(),
                args,
                revision: revision.to_string(),
            },
        };
        let (mut reply, waited) =
            crate::waiting::request_held(&self.hosts, request, instance, caller).await;
        if let (Ok(ClientReply::Call(CallOutcome::NotExecuted { error })), Some(waited)) =
            (&mut reply, &waited)
        {
            // Where it waited: the agent can tell the person where to look.
            error.message = format!("{} {}", error.message, waited.note());
        }
        let result = call_outcome(&site, &reply);
        let stale = matches!(&reply, Ok(ClientReply::Call(CallOutcome::NotExecuted { error })) if error.code == tickloop_proto::core::codes::STALE_REVISION);
        if mutating || stale {
            let id = self
                .catalog
                .resolve(instance)
                .unwrap_or_else(|| instance.to_string());
            self.catalog.touch(&id);
        }
        result
    }
}

/// The tool result of a call's reply.
fn call_outcome(site: &CallSite<'_>, reply: &Result<ClientReply, HostError>) -> CallToolResult {
    match reply {
        Err(HostError::Connect(m)) => outcome::refused(site, -32603, m.clone()),
        Err(HostError::Lost(m)) => outcome::call_result(
            site,
            &CallOutcome::Unknown {
                reason: format!(
                    "the connection to tickhost was lost with the call in flight ({m})"
                ),
            },
        ),
        Ok(ClientReply::Call(o)) => outcome::call_result(site, o),
        Ok(ClientReply::Ok(v)) => {
            outcome::call_result(site, &CallOutcome::Result { result: v.clone() })
        }
        Ok(ClientReply::Error(e)) => outcome::refused(
            site,
            -32600,
            format!("{}: {}", error_kind(e.kind), e.message),
        ),
    }
}

/// A wrapped tool's arguments: `{"args": {...}}` → `{...}`.
fn unwrap_args(args: Value) -> Result<Value, String> {
    let wrapped = schema::WRAPPED_ARG;
    match args {
        Value::Object(mut map) => {
            let inner = map.remove(wrapped);
            if let Some(extra) = map.keys().next() {
                return Err(format!(
                    "this tool takes its arguments under `{wrapped}` only; `{extra}` is not allowed: call it with {{\"{wrapped}\": {{...}}}}"
                ));
            }
            match inner {
                Some(Value::Object(inner)) => Ok(Value::Object(inner)),
                Some(other) => Err(format!(
                    "`{wrapped}` must be a JSON object (the Tick's arguments), not {other}"
                )),
                None => Err(format!(
                    "this tool takes its arguments under `{wrapped}`: call it with {{\"{wrapped}\": {{...}}}}"
                )),
            }
        }
        other => Err(format!("arguments must be a JSON object, not {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_arguments_are_unwrapped_or_refused_saying_how() {
        assert_eq!(unwrap_args(json!({"args": {"a": 1}})), Ok(json!({"a": 1})));
        for bad in [
            json!({"a": 1}),
            json!({"args": 5}),
            json!({"args": {}, "x": 1}),
        ] {
            let why = unwrap_args(bad.clone()).expect_err("refused");
            assert!(why.contains("args"), "{bad}: {why}");
        }
    }
}
