//! The Loop: explicitly armed, bounded runs of time-step messages that keep an
//! agent working turn after turn, with frozen policies, an audit ledger, and
//! Loop subscriptions that carry Tick deliveries to the agent between turns
//! (`../shared/seeds/002_7da39760181f7e59.txt`).
//!
//! * [`command`] — the `/tick` control-command grammar and its refusals.
//! * [`policy`] — compiled policies and the `loop.json` configuration.
//! * [`machine`] — the run state machine, sans I/O (time is an input).
//! * [`envelope`] — the time-step message and its subscription data parts.
//! * [`audit`] — ledger records, the append-only writer and a tolerant reader.
//! * [`run`] — the `tickloop loop run` driver: JSON lines on stdin/stdout.
//! * [`claude_code`] — the same Loop inside Claude Code, Codex and Gemini CLI:
//!   their hooks as short processes with the session's core saved on disk,
//!   and their install; [`agent`] says what differs between the three.
//! * [`codex`], [`gemini`], [`opencode`] — install and uninstall for Codex,
//!   Gemini CLI and opencode (its in-process plugin); [`installer`] picks one.
//! * [`install_kit`] — the file edits those installs share, undone byte for
//!   byte.
//! * [`hook_origin`] — whether a hook call came from the agent host itself
//!   (an agent's shell tool running the hook command is refused).
//! * [`ids`] — the session and instance ids the Loop takes.

pub mod agent;
pub mod audit;
pub mod claude_code;
pub mod codex;
pub mod command;
pub mod envelope;
pub mod gemini;
pub mod hook_origin;
pub mod ids;
pub mod install_kit;
pub mod installer;
pub mod machine;
pub mod opencode;
pub mod policy;
pub mod run;

pub use agent::Agent;
pub use machine::{
    Effect, Input, LoopCore, LoopSettings, RunPhase, Source, TranscriptMessage, TurnStatus,
};
pub use policy::{CompiledPolicy, PolicySet};
