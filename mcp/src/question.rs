//! The question a person is asked in the agent's host about a held call
//! (a `mutates: true` call of an instance whose approval policy is `ask`):
//! its wording and its form, one place for every revision. In 2026-07-28
//! it travels inside an input-required result ([`crate::held`]); in the
//! revisions before, as an `elicitation/create` request.
//!
//! The wording names everything a [`HeldCall`] carries that a person needs
//! to judge the call: the instance, the tool and its description, the
//! arguments, the catalog revision the call is bound to, that it changes
//! the Tick (`mutates`), and its id for `tickloop approve` / `refuse`.
//! Everything from the Tick or the agent is quoted as data.

use rmcp::model::{ElicitRequest, InputRequest};
use serde_json::{json, Value};
use tickloop_proto::wire::HeldCall;

/// The longest argument text quoted in the question; longer is cut (the
/// CLI's `tickloop approvals` shows it whole).
const ARGS_SHOWN: usize = 600;

/// The message and the form's schema (an empty form: the answer is the
/// host's Accept or Decline).
pub fn approval_question(held: &HeldCall) -> (String, Value) {
    let mut args = serde_json::to_string(&held.args).unwrap_or_else(|_| "{}".into());
    if args.len() > ARGS_SHOWN {
        let mut cut = ARGS_SHOWN;
        while !args.is_char_boundary(cut) {
            cut -= 1;
        }
        args.truncate(cut);
        args.push_str("… (cut; `tickloop approvals` shows it whole)");
    }
    let description = if held.description.is_empty() {
        String::new()
    } else {
        format!("\nWhat the Tick says the tool does: {:?}", held.description)
    };
    let message = format!(
        "An agent asks to call the tool {tool:?} of the Tick {instance:?}. The call changes the Tick (mutates: true), so it waits for your approval.\n\
         Arguments: {args}\n\
         Catalog revision: {revision} (the call is refused if the Tick's tools change first){description}\n\
         Accept runs the call once; Decline refuses it and nothing runs. \
         (Held call {call}: `tickloop approve {instance} {call}` or `tickloop refuse {instance} {call}` answer it too.)",
        tool = held.tool,
        instance = held.instance,
        revision = held.revision,
        call = held.call,
    );
    let schema = json!({"type": "object", "properties": {}});
    (message, schema)
}

/// The question as an `elicitation/create` request in form mode.
pub fn approval_request(held: &HeldCall) -> Result<ElicitRequest, serde_json::Error> {
    let (message, schema) = approval_question(held);
    serde_json::from_value(json!({
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": schema},
    }))
}

/// The question as one of an input-required result's `inputRequests`.
pub fn approval_input(held: &HeldCall) -> Result<InputRequest, serde_json::Error> {
    approval_request(held).map(InputRequest::Elicitation)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(args: Value) -> HeldCall {
        HeldCall {
            call: "c1".into(),
            instance: "hosted:counter".into(),
            tool: "increment".into(),
            description: "Add to the value".into(),
            args,
            revision: "3".into(),
            client: None,
            since: "2026-12-02T06:00:00Z".into(),
            waited_ms: 0,
            timeout_ms: 600_000,
        }
    }

    #[test]
    fn the_question_names_the_call_and_is_a_form_request() {
        let (message, schema) = approval_question(&held(json!({"amount": 2})));
        for part in [
            "\"increment\"",
            "\"hosted:counter\"",
            "{\"amount\":2}",
            "revision: 3",
            "mutates: true",
            "c1",
            "Add to the value",
        ] {
            assert!(message.contains(part), "{part} missing: {message}");
        }
        assert_eq!(schema["type"], "object");
        let request = serde_json::to_value(approval_input(&held(json!({}))).expect("a request"))
            .expect("JSON");
        assert_eq!(request["method"], "elicitation/create");
        assert_eq!(request["params"]["mode"], "form");
        let long = approval_question(&held(json!({"text": "é".repeat(2000)}))).0;
        assert!(long.contains("cut"), "{long}");
    }
}
