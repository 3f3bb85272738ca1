//! `tickloop loop run`: the command line of the Loop's harness interface,
//! which drives one agent session's Loop over JSON lines on stdin/stdout
//! (`tickloop_loop::run`; README, "Driving the Loop").

use clap::{Args, Subcommand};
use std::path::PathBuf;
use tickloop_loop::run::{self, RunError, RunOptions};

#[derive(Subcommand)]
pub enum LoopCommand {
    /// Drive one agent session's Loop: transcript, commands and turn ends as
    /// JSON lines on stdin; time steps and replies as JSON lines on stdout.
    Run(RunArgs),
}

#[derive(Args)]
pub struct RunArgs {
    /// The agent session's id (names its audit ledger file).
    #[arg(long)]
    session: String,
    /// Milliseconds between a completed turn and the next time step.
    #[arg(long, default_value_t = run::DEFAULT_DELAY_MS)]
    delay_ms: u64,
    /// Audit ledger directory (default: .pulse-tick-audit in the current directory).
    #[arg(long)]
    audit_dir: Option<PathBuf>,
    /// Milliseconds between deliveries of subscribed Ticks.
    #[arg(long, default_value_t = run::DEFAULT_INTERVAL_MS)]
    interval_ms: u64,
    /// Policy configuration file (default: the user's config dir, tickloop/loop.json).
    #[arg(long)]
    config: Option<PathBuf>,
}

/// Runs the command; its errors go to stderr only (stdout is the harness's
/// JSON-lines channel). Returns the exit code: 0 at end of input, 2 for a
/// usage error, 1 otherwise.
pub fn run(command: LoopCommand) -> i32 {
    let LoopCommand::Run(args) = command;
    let options = RunOptions {
        session: args.session,
        delay_ms: args.delay_ms,
        audit_dir: args.audit_dir,
        interval_ms: args.interval_ms,
        config: args.config,
    };
    match run::run_on(options, crate::remote_cli::host().cloned()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("tickloop loop run: {e}");
            match e {
                RunError::Usage(_) => 2,
                _ => 1,
            }
        }
    }
}
