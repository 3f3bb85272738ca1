//! The trials each agent host runs (its test file lists those that apply,
//! for its [`AgentCli`]): the Tick tools reach the model, and consent holds
//! on every path the agent takes — its shell tool running `tickloop input`
//! and `tickloop close` on the person's shell, and MCP calls the host
//! cancels or the person approves in time.

use super::project::{AgentCli, Project};
use crate::common::{wait_for_within, Host, COMMAND_DEADLINE};
use serde_json::{json, Value};

/// The `tickloop` under test, as a shell tool's command names it (by its
/// path: a host's shell tool may run a login shell, whose `PATH` is the
/// person's profile's).
pub fn tickloop_in_shell() -> String {
    format!("'{}'", crate::common::tickloop_bin().replace('\'', r"'\''"))
}

/// What a shell tool runs to type `echo NAME-$((6*7))` and Enter into
/// `id` (the shell prints `NAME-42` once it runs). Bash's `$'...'` makes
/// the Enter (Gemini CLI refuses a command with `$(...)` in it).
pub fn typing(id: &str, name: &str) -> String {
    format!(
        "{} input {id} $'echo {name}-$((6*7))\\r'; echo tickloop-exit=$? agent=$TICKLOOP_AGENT",
        tickloop_in_shell()
    )
}

/// The one action waiting now (from `tickloop approvals`); an agent host
/// may take a while to start.
pub fn the_waiting_one(host: &Host) -> Value {
    host.the_waiting_one(COMMAND_DEADLINE)
}

/// `id`'s consent entries: (tool, decision, client, by).
pub fn consents(host: &Host, id: &str) -> Vec<(String, String, Value, String)> {
    host.consent_entries(id)
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("").to_string();
            (
                text("tool"),
                text("decision"),
                e["client"].clone(),
                text("by"),
            )
        })
        .collect()
}

/// Trial: the model calls TickRead on an open counter; the tool's result in
/// the next request carries the counter's state.
pub fn tick_read_reaches_the_model(agent: &'static dyn AgentCli) {
    let p = Project::new(agent, |_| {
        json!([
            agent.mcp_call("TickRead", json!({"instance": "hosted:counter"})),
            {"text": "read it"}
        ])
    });
    p.host.open_counter("counter");
    for _ in 0..4 {
        super::increment(&p.host);
    }
    p.say(false, "What does the counter say?").expect(0);
    let results = p.tool_results();
    assert_eq!(results.len(), 1, "one tool result: {results:#?}");
    assert!(
        results[0].contains(r#"\"value\":4"#) || results[0].contains(r#"\\\"value\\\":4"#),
        "the counter's state after four calls: {}",
        results[0]
    );
}

/// Trial: a natural turn, `/tick subscribe hosted:counter`, `/tick 2`,
/// then exactly two time steps (after the session's next turn, where the
/// host starts none for a command), each carrying the counter's delivery;
/// no `/tick` text reaches the model; the ledger in order.
pub fn bounded_run_with_deliveries(agent: &'static dyn AgentCli) {
    let after_next_turn = agent.first_step_after_next_turn();
    let p = Project::new(agent, |scratch| {
        let mut replies = vec![json!({"text": "hello, person"})];
        if after_next_turn {
            replies.push(json!({"text": "going on"}));
        }
        replies.push(json!({"text": "step one seen", "after_file": scratch.join("step1-gate")}));
        replies.push(json!({"text": "step two seen"}));
        json!(replies)
    });
    let natural = if after_next_turn { 2 } else { 1 };
    let gate = p.host.scratch().join("step1-gate");
    p.host.open_counter("counter");
    p.say(false, "Please watch the counter.").expect(0);
    assert_eq!(p.api.turns().len(), 1);
    let out = p.say(true, "/tick subscribe hosted:counter");
    agent.shows_reply(&p, &out, "subscribed: hosted:counter");
    super::increment(&p.host);
    super::increment(&p.host);
    let out = p.say(true, "/tick 2");
    agent.shows_reply(&p, &out, "armed run");
    assert_eq!(p.api.turns().len(), 1, "a command reaches no model");
    // While step one's model call waits, the counter changes again.
    let next = after_next_turn.then(|| p.start(true, "Go on."));
    wait_for_within(COMMAND_DEADLINE, "step one's request", || {
        (p.api.turns().len() == natural + 1).then_some(())
    });
    super::increment(&p.host);
    std::fs::write(&gate, "").expect("open the gate");
    wait_for_within(COMMAND_DEADLINE, "the run to complete", || {
        super::ledger_types(&p.dir)
            .contains(&"loop_complete".to_string())
            .then_some(())
    });
    if let Some(turn) = next {
        turn.finish().expect(0);
    }
    let turns = p.api.turns();
    assert_eq!(
        turns.len(),
        natural + 2,
        "the natural turns and two steps: {turns:#?}"
    );
    let step1 = agent.last_user_text(&turns[natural]);
    let step2 = agent.last_user_text(&turns[natural + 1]);
    for (n, step) in [(1, &step1), (2, &step2)] {
        assert!(
            step.starts_with(agent.step_opening()) && step.contains("tick\n\n{"),
            "step {n} is the time step: {step}"
        );
        assert!(
            step.contains(r#""instance":"hosted:counter""#),
            "step {n} carries the delivery: {step}"
        );
    }
    assert!(
        step1.contains(r#""value":2"#),
        "two calls before step one: {step1}"
    );
    assert!(
        step2.contains(r#""value":3"#) && step2.contains(r#""updates":1"#),
        "step two carries the one change since step one: {step2}"
    );
    super::assert_no_tick_text(&p.api.requests());
    assert_eq!(
        super::ledger_types(&p.dir),
        super::TWO_STEP_RUN,
        "{:#?}",
        super::ledger(&p.dir)
    );
}

/// Trial: uninstall, install, a session, uninstall: the project's files as
/// they were (but the Loop's ledger, and what the host writes itself).
pub fn uninstall_after_a_session(agent: &'static dyn AgentCli) {
    let p = Project::new(agent, |_| json!([{"text": "fine"}]));
    let uninstall = ["loop", agent.name(), "uninstall", "--project"];
    let install = ["loop", agent.name(), "install", "--project"];
    let out = p.tickloop(&uninstall, Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    let theirs = |path: &std::path::Path| {
        path.starts_with(p.dir.join(".pulse-tick-audit"))
            || agent
                .own_dirs()
                .iter()
                .any(|d| path.starts_with(p.dir.join(d)))
    };
    let files = || -> Vec<_> {
        super::snapshot(&p.dir)
            .into_iter()
            .filter(|(path, _)| !theirs(path))
            .collect()
    };
    let before = files();
    let out = p.tickloop(&install, Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    p.say(false, "Hello.").expect(0);
    let out = p.tickloop(&uninstall, Some(&p.dir));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(files(), before, "the project's files as they were");
}

/// Trial: the model's shell tool types into the person's shell with
/// `tickloop input`: tickhost holds it as the host's agent (client kind
/// `agent_cli`), the shell shows nothing until the person approves with
/// `tickloop approve`, then shows the text once; meanwhile the person's own
/// `tickloop input` (none of the markers) goes through at once. Then
/// `tickloop close` through the shell tool is held too; refused, it exits
/// 3, the shell still runs, and the activity names the host.
pub fn shell_tool_waits_for_the_person(agent: &'static dyn AgentCli) {
    let id = "shell:mine";
    let p = Project::new(agent, |_| {
        json!([
            agent.shell_call(&typing(id, "typed")),
            {"text": "typed it"},
            agent.shell_call(&format!(
                "{} close {id}; echo tickloop-exit=$?",
                tickloop_in_shell()
            )),
            {"text": "tried to close it"}
        ])
    });
    p.host.open_bash("mine");
    let turn = p.start(false, "Type into my shell.");
    let waiting = the_waiting_one(&p.host);
    assert_eq!(waiting["action"], "input", "{waiting}");
    assert_eq!(waiting["client"]["agent_cli"], agent.name(), "{waiting}");
    assert!(
        !p.host.screen(id).contains("typed-42"),
        "nothing is typed while it waits"
    );
    // The person's own typing, from a plain shell: at once.
    p.host.ok(&["input", id, "echo own-$((6*7))\r"]);
    p.host.wait_screen(id, "own-42");
    let call = waiting["call"].as_str().expect("an id").to_string();
    p.host.ok(&["approve", id, &call]);
    turn.finish().expect(0);
    let screen = p.host.wait_screen(id, "typed-42");
    assert_eq!(
        screen.matches("typed-42").count(),
        1,
        "typed once: {screen}"
    );
    let results = p.tool_results().join("\n");
    assert!(
        results.contains("tickloop-exit=0"),
        "the model hears how it ended: {results}"
    );
    if agent.install_names_the_agent() {
        assert!(
            results.contains(&format!("agent={}", agent.name())),
            "install's TICKLOOP_AGENT reaches the shell tool: {results}"
        );
    }

    let turn = p.start(true, "Close my shell.");
    let waiting = the_waiting_one(&p.host);
    assert_eq!(waiting["action"], "close", "{waiting}");
    let call = waiting["call"].as_str().expect("an id").to_string();
    p.host.ok(&["refuse", id, &call, "--reason", "not now"]);
    turn.finish().expect(0);
    assert!(
        p.host.entry(id).expect("listed")["ended"].is_null(),
        "the shell still runs"
    );
    let results = p.tool_results().join("\n");
    assert!(
        results.contains("tickloop-exit=3") && results.contains("not now"),
        "the model hears it was refused, and why: {results}"
    );
    let by_agent = json!({"agent_cli": agent.name()});
    assert_eq!(
        consents(&p.host, id),
        [
            (
                "input".into(),
                "held".into(),
                by_agent.clone(),
                "tickhost".into()
            ),
            (
                "input".into(),
                "approved".into(),
                by_agent.clone(),
                "cli".into()
            ),
            (
                "close".into(),
                "held".into(),
                by_agent.clone(),
                "tickhost".into()
            ),
            ("close".into(), "refused".into(), by_agent, "cli".into()),
        ]
    );
}

/// The model's TickManage `input` into `id`, typing `echo NAME-$((6*7))`.
fn mcp_typing(agent: &dyn AgentCli, id: &str, name: &str) -> Value {
    agent.mcp_call(
        "TickManage",
        json!({"action": "input", "instance": id, "text": format!("echo {name}-$((6*7))\r")}),
    )
}

/// Trial (hosts with an MCP timeout of their own): the host gives up on a
/// held MCP `input` (its timeout, set short here) and cancels it; the input
/// is withdrawn at once (while the host still runs: its next model call
/// waits on a gate), never typed, and a later `approve` answers
/// `withdrawn`.
pub fn a_cancelled_held_input_never_runs(
    agent: &'static dyn AgentCli,
    short_timeout: fn(&Project, u64),
) {
    let id = "shell:mine";
    let p = Project::with_setup(
        agent,
        60_000,
        |scratch| {
            json!([
                mcp_typing(agent, id, "late"),
                {"text": "gave up", "after_file": scratch.join("gate")}
            ])
        },
        |p| short_timeout(p, 3_000),
    );
    p.host.open_bash("mine");
    let turn = p.start(false, "Type into my shell.");
    let waiting = the_waiting_one(&p.host);
    let call = waiting["call"].as_str().expect("an id").to_string();
    wait_for_within(
        COMMAND_DEADLINE,
        "the host to cancel the held input",
        || {
            let out = p.host.run(&["approvals"]);
            out.stdout.trim().is_empty().then_some(())
        },
    );
    std::fs::write(p.host.scratch().join("gate"), "").expect("open the gate");
    turn.finish();
    let out = p.host.run(&["approve", id, &call]);
    let error = out.expect_error(3, "withdrawn");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("withdrawn")),
        "{error}"
    );
    // A moment for anything that would type: the shell runs `echo` at once.
    p.host.ok(&["input", id, "echo after-$((6*7))\r"]);
    let screen = p.host.wait_screen(id, "after-42");
    assert!(!screen.contains("late-42"), "never typed: {screen}");
    let decisions: Vec<(String, String)> = consents(&p.host, id)
        .into_iter()
        .map(|(_, decision, _, by)| (decision, by))
        .collect();
    assert_eq!(
        decisions,
        [
            ("held".into(), "tickhost".into()),
            ("withdrawn".into(), "caller".into())
        ]
    );
}

/// Trial: a held MCP `input` approved within the approval timeout (which
/// the host's MCP timeout, as install writes it, covers) runs once, and the
/// agent gets its result.
pub fn a_held_input_approved_in_time_runs_once(agent: &'static dyn AgentCli) {
    let id = "shell:mine";
    let p = Project::new(
        agent,
        |_| json!([mcp_typing(agent, id, "approved"), {"text": "typed"}]),
    );
    p.host.open_bash("mine");
    let turn = p.start(false, "Type into my shell.");
    let waiting = the_waiting_one(&p.host);
    assert_eq!(waiting["client"], "mcp", "{waiting}");
    p.host
        .ok(&["approve", id, waiting["call"].as_str().expect("an id")]);
    turn.finish();
    let screen = p.host.wait_screen(id, "approved-42");
    assert_eq!(screen.matches("approved-42").count(), 1, "{screen}");
    let results = p.tool_results().join("\n");
    assert!(
        results.contains("bytes") && !results.to_lowercase().contains("timed out"),
        "the agent gets the input's result: {results}"
    );
}
