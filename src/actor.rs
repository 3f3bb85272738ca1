//! Who is acting when `tickloop` runs: the person, at their own terminal,
//! or an agent, through its host's tool (a shell tool running `tickloop
//! input ...`), which tickhost then treats as that agent (client kind
//! `agent_cli`, named by host): its typing and closing of the person's
//! instances wait for the person, and the activity names it.
//!
//! Decided from the environment by [`tickloop_client::actor`] (the
//! explicit `TICKLOOP_ACTOR`, then install's `TICKLOOP_AGENT`, then the
//! hosts' own markers).
//!
//! With none of them, it is the person's CLI, which never waits for
//! itself. The person's own views refuse an agent's CLI
//! ([`persons_view`]). This guards a well-meaning agent against acting unasked; a
//! hostile process of the same user can unset a variable (tickhost admits
//! any process of this user, and can tell no more).

use crate::output::CliError;
use tickloop_proto::wire::ClientKind;

/// This process's client kind, from its environment
/// ([`tickloop_client::actor::from_env`]); an error says what is wrong with
/// `TICKLOOP_ACTOR`.
pub fn client_kind() -> Result<ClientKind, String> {
    tickloop_client::actor::from_env(|name| std::env::var(name).ok())
}

/// The refusal (`refused`, exit 3, nothing started) of one of the person's
/// own views or their keys (`web`, `web --login`, `attach`, Herdr's panes)
/// when `kind` is an agent's CLI; `Ok` for the person. `what` completes
/// "may not ...", `instead` says what the agent can do.
pub fn persons_view(kind: ClientKind, what: &str, instead: &str) -> Result<(), CliError> {
    let ClientKind::AgentCli(host) = kind else {
        return Ok(());
    };
    let mut refused = CliError::new(
        "refused",
        format!(
            "not started: {} (its shell tool) may not {what}: a view is the person's own, where \
             they type as themselves and answer what waits for them; {instead}",
            host.title()
        ),
        3,
    );
    refused.data = Some(serde_json::json!({
        "executed": false,
        "client": kind,
    }));
    Err(refused)
}
