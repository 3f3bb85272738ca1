//! The gate against an instance it sees through [`ConsentTarget`]: every
//! way a held action is decided, the races between deciders driven exactly
//! with paused time, and a property test of the decision's uniqueness under
//! any interleaving of deciders.

use super::*;
use std::sync::{Arc, Mutex};
use tickloop_proto::wire::AgentHost;
use tokio::sync::mpsc;

/// An instance as the gate sees it, with one mutating tool `set` and one
/// that does not mutate, `get`; everything it shows can change.
struct Fake {
    policy: Mutex<ApprovalPolicy>,
    /// Tickhost's copy's revision.
    copy: Mutex<Option<String>>,
    /// What the Tick says when described (`None`: it does not answer).
    current: Mutex<Option<String>>,
    ended: Mutex<Option<EndInfo>>,
    describes: Mutex<usize>,
    log: std::path::PathBuf,
    noted: Mutex<Vec<String>>,
    /// Whether its terminal echoes typing (false: a password prompt).
    echo_off: Mutex<bool>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn descriptor(revision: &str) -> Value {
    json!({"revision": revision, "tools": [
        {"name": "set", "description": "sets", "mutates": true},
        {"name": "get", "description": "gets", "mutates": false},
    ]})
}

impl Fake {
    fn new(policy: ApprovalPolicy, log: std::path::PathBuf) -> Fake {
        Fake {
            policy: Mutex::new(policy),
            copy: Mutex::new(Some("1".into())),
            current: Mutex::new(Some("1".into())),
            ended: Mutex::default(),
            describes: Mutex::default(),
            log,
            noted: Mutex::default(),
            echo_off: Mutex::default(),
        }
    }

    fn noted(&self) -> Vec<String> {
        lock(&self.noted).clone()
    }
}

impl ConsentTarget for Fake {
    fn id(&self) -> &str {
        "hosted:fake"
    }
    fn policy(&self, _action: HeldAction) -> ApprovalPolicy {
        *lock(&self.policy)
    }
    fn revision(&self) -> Option<String> {
        lock(&self.copy).clone()
    }
    fn tool(&self, name: &str) -> Option<(bool, String)> {
        tool_in(&descriptor("1"), name)
    }
    fn describe(&self) -> impl std::future::Future<Output = Option<Catalog>> + Send {
        *lock(&self.describes) += 1;
        let current = lock(&self.current).clone();
        if let Some(revision) = &current {
            *lock(&self.copy) = Some(revision.clone());
        }
        std::future::ready(current.map(|revision| Catalog {
            descriptor: Some(descriptor(&revision)),
            revision: Some(revision),
        }))
    }
    fn echo_off(&self) -> impl std::future::Future<Output = bool> + Send {
        std::future::ready(*lock(&self.echo_off))
    }
    fn ended(&self) -> Option<EndInfo> {
        lock(&self.ended).clone()
    }
    fn approval_log(&self) -> &std::path::Path {
        &self.log
    }
    fn note(&self, decision: ConsentDecision) {
        lock(&self.noted).push(decision.decision);
    }
}

/// A directory for one test's logs, removed at the end.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("tickhost-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        Scratch(dir)
    }

    fn fake(&self, policy: ApprovalPolicy, name: &str) -> Fake {
        Fake::new(policy, self.0.join(name))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn call(tool: &str, revision: &str) -> CallRequest {
    CallRequest {
        tool: tool.into(),
        args: Value::Null,
        revision: revision.into(),
    }
}

fn refusal(gate: &Gate) -> Option<&RpcError> {
    match gate {
        Gate::Refused(CallOutcome::NotExecuted { error }) => Some(error),
        _ => None,
    }
}

/// The decision a gate's answer carries: `approved`, or its refusal's
/// `data.approval`.
fn word(gate: &Gate) -> String {
    match gate {
        Gate::Proceed => "proceed".into(),
        Gate::Approved(_) => "approved".into(),
        Gate::Refused(_) => refusal(gate)
            .and_then(|e| e.data.as_ref())
            .and_then(|d| d["approval"].as_str())
            .unwrap_or("?")
            .to_string(),
    }
}

fn decisions(fake: &Fake) -> Vec<String> {
    log::read(&fake.log)
        .0
        .into_iter()
        .map(|e| e.decision.decision)
        .collect()
}

fn person(approve: bool) -> Decision {
    if approve {
        Decision::Approved {
            by: "cli".into(),
            host: None,
        }
    } else {
        Decision::Refused {
            by: "cli".into(),
            reason: None,
            host: None,
        }
    }
}

/// Runs `waits` until it holds its action (its first progress); panics if
/// it ends first.
async fn until_held<F: std::future::Future<Output = Gate> + Unpin>(
    waits: &mut F,
    waiting: &mut mpsc::Receiver<HeldCall>,
) -> HeldCall {
    tokio::select! {
        gate = waits => panic!("the gate answered {} without holding", word(&gate)),
        held = waiting.recv() => held.expect("a held action"),
    }
}

#[tokio::test]
async fn a_caller_gone_withdraws_its_action_and_a_late_approve_hears_so() {
    let scratch = Scratch::new("gone");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    let (progress, mut waiting) = mpsc::channel(1);
    let set = call("set", "1");
    let mut waits = Box::pin(gate(
        &approvals,
        &target,
        Asked::Call(&set),
        Some(ClientKind::Mcp),
        progress,
    ));
    let held = until_held(&mut waits, &mut waiting).await;
    assert_eq!(held.tool, "set");
    assert_eq!(approvals.tools_for("hosted:fake"), vec!["set".to_string()]);
    drop(waiting);
    let answered = waits.await;
    assert_eq!(word(&answered), "withdrawn");
    assert!(refusal(&answered).is_some_and(|e| e.message.contains("the agent stopped waiting")));
    assert!(approvals.list().is_empty());
    assert_eq!(decisions(&target), ["held", "withdrawn"]);
    assert_eq!(target.noted(), ["held", "withdrawn"]);
    // A late approve is told what became of it, and changes nothing.
    let late = approvals
        .decide("hosted:fake", &held.call, person(true))
        .await;
    match late {
        Err(Undecided::Already(settled)) => {
            assert_eq!(settled.decision, "withdrawn");
            assert_eq!(settled.reason.as_deref(), Some("the agent stopped waiting"));
        }
        other => panic!("a late approve answered {other:?}"),
    }
    assert_eq!(decisions(&target), ["held", "withdrawn"]);

    let deny = scratch.fake(ApprovalPolicy::Deny, "denied.jsonl");
    let (progress, _waiting) = mpsc::channel(1);
    let answered = gate(&approvals, &deny, Asked::Call(&set), None, progress).await;
    assert_eq!(word(&answered), "denied");
}

#[tokio::test]
async fn an_explicit_withdrawal_is_one_decision_like_the_others() {
    let scratch = Scratch::new("withdraw");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    let (progress, mut waiting) = mpsc::channel(1);
    let mut waits = Box::pin(gate(
        &approvals,
        &target,
        Asked::Input("rm -rf build\r"),
        Some(ClientKind::Mcp),
        progress,
    ));
    let held = until_held(&mut waits, &mut waiting).await;
    let withdrawn = Decision::Withdrawn {
        reason: "the agent stopped waiting: cancelled by its host".into(),
    };
    let (told, answered) = tokio::join!(
        approvals.decide("hosted:fake", &held.call, withdrawn),
        &mut waits
    );
    let told = told.expect("it waited");
    assert_eq!(told.decision, "withdrawn");
    assert_eq!(told.by, "caller");
    assert_eq!(word(&answered), "withdrawn");
    let refuse = approvals
        .decide("hosted:fake", &held.call, person(false))
        .await;
    assert!(
        matches!(&refuse, Err(Undecided::Already(s)) if s.decision == "withdrawn"),
        "{refuse:?}"
    );
    assert_eq!(decisions(&target), ["held", "withdrawn"]);
}

/// The caller's connection closed, and its hang-up not read yet when a
/// person approves: the action is withdrawn, never run, and the person is
/// told so.
#[tokio::test]
async fn an_approval_after_the_callers_connection_closed_withdraws_it() {
    let scratch = Scratch::new("closed-conn");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    let (progress, mut waiting) = mpsc::channel(1);
    let connected = std::sync::atomic::AtomicBool::new(true);
    let still = || connected.load(std::sync::atomic::Ordering::SeqCst);
    let set = call("set", "1");
    let mut waits = Box::pin(gate_for(
        &approvals,
        &target,
        Asked::Call(&set),
        Some(ClientKind::Mcp),
        progress,
        &still,
    ));
    let held = until_held(&mut waits, &mut waiting).await;
    connected.store(false, std::sync::atomic::Ordering::SeqCst);
    let (told, answered) = tokio::join!(
        approvals.decide("hosted:fake", &held.call, person(true)),
        &mut waits
    );
    assert_eq!(told.map(|s| s.decision).ok().as_deref(), Some("withdrawn"));
    assert_eq!(word(&answered), "withdrawn");
    assert_eq!(decisions(&target), ["held", "withdrawn"]);
}

#[tokio::test]
async fn the_persons_own_typing_and_closing_never_wait_an_agents_do() {
    let scratch = Scratch::new("consent");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    for person in [None, Some(ClientKind::Cli), Some(ClientKind::Monitor)] {
        for asked in [Asked::Input("ls\r"), Asked::Close] {
            let (progress, _waiting) = mpsc::channel(1);
            let gate = gate(&approvals, &target, asked, person, progress).await;
            assert!(matches!(gate, Gate::Proceed), "{person:?} {asked:?}");
        }
    }
    for agent in [ClientKind::Mcp, ClientKind::Loop] {
        let (progress, mut waiting) = mpsc::channel(1);
        let mut waits = Box::pin(gate(
            &approvals,
            &target,
            Asked::Input("ls\r"),
            Some(agent),
            progress,
        ));
        let held = until_held(&mut waits, &mut waiting).await;
        assert_eq!(held.action, HeldAction::Input);
        assert_eq!(held.args["text"], "ls\r");
        assert!(held.call.starts_with('%'), "{}", held.call);
        // `3` finds `%3` too.
        let bare = held.call.trim_start_matches('%').to_string();
        let refused = Decision::Refused {
            by: "monitor".into(),
            reason: None,
            host: None,
        };
        let (told, answered) =
            tokio::join!(approvals.decide("hosted:fake", &bare, refused), &mut waits);
        assert_eq!(told.map(|s| s.decision).ok().as_deref(), Some("refused"));
        let error = refusal(&answered).expect("refused");
        assert_eq!(error.code, APPROVAL_REFUSED);
        assert!(error.message.contains("refused by the person (monitor)"));
    }
}

/// An agent's typing at a prompt with echo off (a password) is held, asked,
/// logged and noted as how much it types, never what; the same text with
/// echo on is shown whole.
#[tokio::test]
async fn typing_at_a_prompt_with_echo_off_is_held_as_how_much_never_what() {
    let scratch = Scratch::new("echo-off");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    *lock(&target.echo_off) = true;
    let approvals = Approvals::new(Duration::from_secs(600), false);
    let keys = ["Enter".to_string()];
    for asked in [
        Asked::Input("Hunter2Secret!"),
        Asked::Keys(Some("Hunter2Secret!"), &keys),
    ] {
        let (progress, mut waiting) = mpsc::channel(1);
        let mut waits = Box::pin(gate(
            &approvals,
            &target,
            asked,
            Some(ClientKind::AgentCli(AgentHost::ClaudeCode)),
            progress,
        ));
        let held = until_held(&mut waits, &mut waiting).await;
        assert_eq!(held.args, json!({}), "{asked:?}");
        let typing = held.echo_off.expect("kept as how much");
        assert_eq!(typing.characters, 14);
        assert!(held.plainly().starts_with("Type 14 characters"));
        assert!(held
            .plainly()
            .contains("at a prompt with echo off (a password?)"));
        let (_, answered) = tokio::join!(
            approvals.decide("hosted:fake", &held.call, person(true)),
            &mut waits
        );
        assert_eq!(word(&answered), "approved");
    }
    let log = std::fs::read_to_string(&target.log).expect("the approval log");
    assert!(!log.contains("Hunter2"), "{log}");
    assert!(log.contains("\"echo_off\":{\"characters\":14"), "{log}");

    *lock(&target.echo_off) = false;
    let (progress, mut waiting) = mpsc::channel(1);
    let mut waits = Box::pin(gate(
        &approvals,
        &target,
        Asked::Input("ls\r"),
        Some(ClientKind::Mcp),
        progress,
    ));
    let held = until_held(&mut waits, &mut waiting).await;
    assert_eq!(
        (held.args["text"].as_str(), held.echo_off),
        (Some("ls\r"), None)
    );
    let _ = tokio::join!(
        approvals.decide("hosted:fake", &held.call, person(false)),
        &mut waits
    );
}

/// A person's approval at the very instant the deadline passes: both are
/// ready when the hold next runs. One of them decides, and the person is
/// told the decision the caller gets.
#[tokio::test(start_paused = true)]
async fn an_approval_at_the_deadline_is_told_what_happened() {
    let scratch = Scratch::new("deadline");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(10), false);
    for _ in 0..32 {
        let (progress, mut waiting) = mpsc::channel(1);
        let set = call("set", "1");
        let mut waits = Box::pin(gate(
            &approvals,
            &target,
            Asked::Call(&set),
            Some(ClientKind::Mcp),
            progress,
        ));
        let held = until_held(&mut waits, &mut waiting).await;
        // The deadline passes while the hold is not running.
        tokio::time::advance(Duration::from_secs(11)).await;
        let (told, answered) = tokio::join!(
            approvals.decide("hosted:fake", &held.call, person(true)),
            &mut waits
        );
        let told = told.expect("the approval was first");
        assert_eq!(told.decision, word(&answered), "told {told:?}");
        assert_eq!(told.decision, "approved");
        let last = decisions(&target).last().cloned();
        assert_eq!(last.as_deref(), Some("approved"));
    }
}

/// A refusal at the instant the policy is switched to `auto`: the refusal
/// was claimed first, so it stands; the look that would approve "by
/// policy" finds the action decided.
#[tokio::test(start_paused = true)]
async fn a_refusal_during_a_switch_to_auto_stands() {
    let scratch = Scratch::new("switch");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    for _ in 0..32 {
        *lock(&target.policy) = ApprovalPolicy::Ask;
        let (progress, mut waiting) = mpsc::channel(1);
        let set = call("set", "1");
        let mut waits = Box::pin(gate(
            &approvals,
            &target,
            Asked::Call(&set),
            Some(ClientKind::Mcp),
            progress,
        ));
        let held = until_held(&mut waits, &mut waiting).await;
        *lock(&target.policy) = ApprovalPolicy::Auto;
        // The hold's next look is due.
        tokio::time::advance(LOOK_EVERY * 2).await;
        let (told, answered) = tokio::join!(
            approvals.decide("hosted:fake", &held.call, person(false)),
            &mut waits
        );
        assert_eq!(told.map(|s| s.decision).ok().as_deref(), Some("refused"));
        assert_eq!(word(&answered), "refused");
        assert_eq!(
            decisions(&target).last().map(String::as_str),
            Some("refused")
        );
    }
}

/// An approval when the Tick's catalog has just changed: the person hears
/// that the call was dropped for it, never "approved".
#[tokio::test]
async fn an_approval_after_a_catalog_change_is_told_it_was_dropped() {
    let scratch = Scratch::new("revision");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    let (progress, mut waiting) = mpsc::channel(1);
    let set = call("set", "1");
    let mut waits = Box::pin(gate(
        &approvals,
        &target,
        Asked::Call(&set),
        Some(ClientKind::Mcp),
        progress,
    ));
    let held = until_held(&mut waits, &mut waiting).await;
    // The Tick changed; tickhost's copy has not heard yet.
    *lock(&target.current) = Some("2".into());
    let (told, answered) = tokio::join!(
        approvals.decide("hosted:fake", &held.call, person(true)),
        &mut waits
    );
    let told = told.expect("the approval was first");
    assert_eq!(told.decision, "revision_changed");
    assert!(
        told.reason
            .as_deref()
            .is_some_and(|r| r.contains("approved by cli")),
        "{told:?}"
    );
    assert_eq!(word(&answered), "revision_changed");
    assert_eq!(refusal(&answered).map(|e| e.code), Some(STALE_REVISION));
    // One decision in the log after `held`.
    assert_eq!(decisions(&target), ["held", "revision_changed"]);
}

/// Fail closed: a call that tickhost's copy of the catalog cannot judge
/// (another revision, a tool it does not list) is judged on the catalog
/// described again, never passed through unasked.
#[tokio::test]
async fn a_call_the_copy_cannot_judge_is_described_again_never_passed() {
    let scratch = Scratch::new("closed");
    let target = scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl");
    let approvals = Approvals::new(Duration::from_secs(600), false);
    // The copy is stale (revision 1); the Tick is at 2, and the agent
    // calls with 2.
    *lock(&target.current) = Some("2".into());
    let (progress, mut waiting) = mpsc::channel(1);
    let set = call("set", "2");
    let mut waits = Box::pin(gate(
        &approvals,
        &target,
        Asked::Call(&set),
        Some(ClientKind::Mcp),
        progress,
    ));
    let held = until_held(&mut waits, &mut waiting).await;
    assert_eq!(held.revision, "2");
    assert_eq!(*lock(&target.describes), 1);
    drop(waiting);
    assert_eq!(word(&waits.await), "withdrawn");

    // A revision the Tick is not at: refused as its host would.
    let (progress, _waiting) = mpsc::channel(1);
    let old = call("set", "7");
    let answered = gate(&approvals, &target, Asked::Call(&old), None, progress).await;
    assert_eq!(refusal(&answered).map(|e| e.code), Some(STALE_REVISION));
    // A tool it does not have.
    let (progress, _waiting) = mpsc::channel(1);
    let unknown = call("reset", "2");
    let answered = gate(&approvals, &target, Asked::Call(&unknown), None, progress).await;
    assert_eq!(refusal(&answered).map(|e| e.code), Some(INVALID_PARAMS));
    // A Tick that cannot be described: nobody can be asked, refused.
    *lock(&target.current) = None;
    *lock(&target.copy) = None;
    let (progress, _waiting) = mpsc::channel(1);
    let answered = gate(&approvals, &target, Asked::Call(&set), None, progress).await;
    assert_eq!(word(&answered), "unconfirmed");
    // A tool that does not mutate, on a copy that knows it: no describe.
    *lock(&target.copy) = Some("1".into());
    let before = *lock(&target.describes);
    let (progress, _waiting) = mpsc::channel(1);
    let get = call("get", "1");
    let answered = gate(&approvals, &target, Asked::Call(&get), None, progress).await;
    assert!(matches!(answered, Gate::Proceed));
    assert_eq!(*lock(&target.describes), before);
}

mod model {
    //! Any interleaving of the deciders of one held call: a person (approve
    //! or refuse, any number of times), the caller (hanging up, or
    //! withdrawing), the deadline, the instance's end, a catalog change
    //! and the policy switched to `auto`. Exactly one decision follows
    //! `held` in the log and the activity; the caller's answer is that
    //! decision; every decider that was told a decision was told that one;
    //! the action is off the list, and later deciders hear it.

    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone, Copy)]
    enum Step {
        Approve,
        Refuse,
        Withdraw,
        HangUp,
        Deadline,
        End,
        CatalogChange,
        PolicyAuto,
        /// Lets every task run (the hold takes what is ready).
        Run,
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            Just(Step::Approve),
            Just(Step::Refuse),
            Just(Step::Withdraw),
            Just(Step::HangUp),
            Just(Step::Deadline),
            Just(Step::End),
            Just(Step::CatalogChange),
            Just(Step::PolicyAuto),
            Just(Step::Run),
        ]
    }

    type Told = Rc<RefCell<Vec<Result<Settled, Undecided>>>>;
    use std::cell::RefCell;
    use std::rc::Rc;

    async fn run(steps: Vec<Step>) -> Result<(), TestCaseError> {
        let scratch = Scratch::new(&format!("model-{:?}", std::thread::current().id()));
        let target = Arc::new(scratch.fake(ApprovalPolicy::Ask, "approvals.jsonl"));
        let approvals = Arc::new(Approvals::new(Duration::from_secs(600), false));
        let (progress, mut waiting) = mpsc::channel(1);
        let answered: Rc<RefCell<Option<String>>> = Rc::default();
        {
            let (approvals, target, answered) =
                (approvals.clone(), target.clone(), answered.clone());
            tokio::task::spawn_local(async move {
                let set = call("set", "1");
                let gate = gate(
                    &approvals,
                    &*target,
                    Asked::Call(&set),
                    Some(ClientKind::Mcp),
                    progress,
                )
                .await;
                *answered.borrow_mut() = Some(word(&gate));
            });
        }
        let held = waiting.recv().await.expect("held");
        let mut waiting = Some(waiting);
        let told: Told = Rc::default();
        let decide = |decision: Decision| {
            let (approvals, told, call) = (approvals.clone(), told.clone(), held.call.clone());
            tokio::task::spawn_local(async move {
                let result = approvals.decide("hosted:fake", &call, decision).await;
                told.borrow_mut().push(result);
            });
        };
        for step in steps {
            match step {
                Step::Approve => decide(person(true)),
                Step::Refuse => decide(person(false)),
                Step::Withdraw => decide(Decision::Withdrawn {
                    reason: "withdrawn".into(),
                }),
                Step::HangUp => waiting = None,
                Step::Deadline => tokio::time::advance(Duration::from_secs(601)).await,
                Step::End => {
                    *lock(&target.ended) = Some(EndInfo {
                        reason: "exited".into(),
                        kind: tickloop_proto::wire::EndClass::Exited,
                        offending: None,
                        at: String::new(),
                        not_saved: Vec::new(),
                    });
                }
                Step::CatalogChange => {
                    *lock(&target.copy) = Some("2".into());
                    *lock(&target.current) = Some("2".into());
                }
                Step::PolicyAuto => *lock(&target.policy) = ApprovalPolicy::Auto,
                Step::Run => tokio::task::yield_now().await,
            }
        }
        // Whatever is left: the deadline decides at the latest.
        tokio::time::advance(Duration::from_secs(601)).await;
        for _ in 0..16 {
            tokio::task::yield_now().await;
        }
        drop(waiting);
        let answered = answered.borrow().clone();
        let answered = answered.ok_or_else(|| TestCaseError::fail("the gate never answered"))?;
        let logged = decisions(&target);
        prop_assert_eq!(logged.len(), 2, "{:?}", logged);
        prop_assert_eq!(&logged[0], "held");
        prop_assert_eq!(&logged[1], &answered);
        prop_assert_eq!(target.noted(), logged.clone());
        prop_assert!(approvals.list().is_empty());
        let settled = approvals.settled("hosted:fake", &held.call);
        prop_assert_eq!(
            settled.as_ref().map(|s| s.decision.as_str()),
            Some(answered.as_str())
        );
        for result in told.borrow().iter() {
            match result {
                Ok(settled) | Err(Undecided::Already(settled)) => {
                    prop_assert_eq!(&settled.decision, &answered)
                }
                other => prop_assert!(false, "a decider heard {:?}", other),
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        #[test]
        fn one_decision_whatever_the_interleaving(steps in proptest::collection::vec(step(), 0..12)) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let local = tokio::task::LocalSet::new();
            local.block_on(&runtime, run(steps))?;
        }
    }
}
