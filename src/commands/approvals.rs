//! A person's side of approvals: `approvals [--watch | --log ID]` (the calls
//! waiting, or an instance's decisions), `approve`, `refuse` and
//! `approve-policy`.

use super::answer_as;
use crate::output::{exit_0_at_interrupt, print_json, print_line};
use crate::target::Target;
use crate::text;
use anyhow::Result;
use tickloop_proto::wire::{ApprovalPolicy, ClientRequest, ConsentChange};

/// One item printed: a JSON line, or on a terminal the text `human`
/// makes of it; `false` once stdout is gone.
fn emit(value: &serde_json::Value, json: bool, human: fn(&serde_json::Value) -> String) -> bool {
    if json {
        print_json(value)
    } else {
        print_line(human(value).trim_end())
    }
}

/// `approvals`: the waiting actions as JSON lines (text on a terminal);
/// `--watch`: and every one that starts waiting later (each once) until
/// interrupted; `--log ID`: the instance's decisions.
pub fn list(target: &Target, watch: bool, log: Option<String>, json: bool) -> Result<i32> {
    if let Some(id) = log {
        let entries = target.simple(ClientRequest::ApprovalLog { instance: id })?;
        for entry in entries.as_array().into_iter().flatten() {
            if !emit(entry, json, text::consent_entry) {
                return Ok(0);
            }
        }
        return Ok(0);
    }
    if watch {
        exit_0_at_interrupt();
    }
    let mut shown = std::collections::HashSet::new();
    loop {
        let waiting = target.simple(ClientRequest::Approvals)?;
        for held in waiting.as_array().into_iter().flatten() {
            let key = format!("{}/{}", held["instance"], held["call"]);
            if shown.insert(key) && !emit(held, json, text::held) {
                return Ok(0);
            }
        }
        if !watch {
            if shown.is_empty() && !json {
                print_line("nothing waits for approval");
            }
            return Ok(0);
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// `approve ID CALL` (`approve: true`) or `refuse ID CALL [--reason R]`.
pub fn decide(
    target: &Target,
    id: String,
    call: String,
    approve: bool,
    reason: Option<String>,
    json: bool,
) -> Result<i32> {
    let request = ClientRequest::Decide {
        instance: id,
        call,
        approve,
        reason,
        by: "cli".into(),
        host: None,
    };
    answer_as(target, request, json, text::decided)
}

/// `approve-policy ID [POLICY] [--input P] [--close P]`: `policies` are
/// the calls', the typing's and the closing's, each when given.
pub fn set_policy(
    target: &Target,
    id: String,
    policies: [Option<String>; 3],
    json: bool,
) -> Result<i32> {
    let [policy, input, close] = policies.map(|p| p.as_deref().and_then(ApprovalPolicy::parse));
    let request = ClientRequest::SetApproval {
        instance: id,
        change: ConsentChange {
            policy,
            input,
            close,
        },
    };
    answer_as(target, request, json, text::policies)
}
