//! TickDescribe and TickRead: an instance's descriptor (with `mcp_tools`,
//! how each of its tools is offered over MCP) and its current state, both
//! read fresh from tickhost.

use crate::catalog::Catalog;
use crate::hosts::Hosts;
use crate::outcome;
use crate::tool_list;
use rmcp::model::CallToolResult;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;
use tickloop_proto::wire::ClientRequest;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InstanceArgs {
    instance: String,
}

/// Answers TickDescribe and TickRead.
pub struct Describe {
    hosts: Hosts,
    catalog: Arc<Catalog>,
}

impl Describe {
    pub fn new(hosts: Hosts, catalog: Arc<Catalog>) -> Describe {
        Describe { hosts, catalog }
    }

    /// TickDescribe: the descriptor, with `mcp_tools`; a new revision seen
    /// here updates the catalog (and the tool list).
    pub async fn describe(&self, args: Value) -> CallToolResult {
        let instance = match serde_json::from_value::<InstanceArgs>(args) {
            Ok(a) => a.instance,
            Err(e) => return outcome::failed("bad_request", &format!("TickDescribe: {e}"), None),
        };
        let request = ClientRequest::Describe {
            instance: instance.clone(),
        };
        let mut descriptor = match self.hosts.simple(request).await {
            Ok(descriptor) => descriptor,
            Err(refusal) => return refusal.failed(),
        };
        let mcp_tools = match self.catalog.learn(&instance, &descriptor) {
            Some(id) => tool_list::mcp_tools_of(&self.catalog, &id),
            // Not polled yet: its tools as they will be offered.
            None => {
                let id = if instance.contains(':') {
                    instance.clone()
                } else {
                    format!("hosted:{instance}")
                };
                tool_list::mcp_tools_alone(&id, &descriptor)
            }
        };
        if let Value::Object(map) = &mut descriptor {
            map.insert("mcp_tools".into(), mcp_tools);
        }
        outcome::ok_value(descriptor)
    }

    /// TickRead: the current state.
    pub async fn read(&self, args: Value) -> CallToolResult {
        match serde_json::from_value::<InstanceArgs>(args) {
            Ok(a) => {
                self.hosts
                    .answer(ClientRequest::Read {
                        instance: a.instance,
                    })
                    .await
            }
            Err(e) => outcome::failed("bad_request", &format!("TickRead: {e}"), None),
        }
    }
}
