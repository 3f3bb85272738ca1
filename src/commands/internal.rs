//! The hidden commands one build runs as its other processes: the daemon
//! (`__tickhost`, started by the CLI), an instance's launcher
//! (`__launcher`, started by tickhost) and the far side of `--host`
//! (`__relay`, run by ssh).

use crate::cli::RelayArgs;
use crate::output::CliError;
use anyhow::{Context, Result};
use serde_json::Value;
use std::path::PathBuf;

/// `__tickhost`: the daemon of `runtime`, until it shuts down.
pub fn tickhost(runtime: PathBuf, exe: PathBuf) -> Result<i32> {
    tickhost::daemon::run(tickhost::daemon::DaemonOptions {
        runtime_dir: runtime,
        exe,
    })
    .context("tickhost")?;
    Ok(0)
}

/// `__launcher`: one instance's launcher, its options on stdin.
pub fn launcher() -> Result<i32> {
    launcher::main_from_stdin().context("launcher")?;
    Ok(0)
}

/// `__relay`: pipes ssh's stdio to tickhost, or to one launcher's attach
/// socket, or answers with this machine's packages.
pub fn relay(runtime: PathBuf, exe: PathBuf, args: RelayArgs) -> Result<i32> {
    let to = tickloop_client::ssh::RelayTo::parse(&args.to)
        .map_err(|e| CliError::new("bad_request", e, 2))?;
    let packages = || {
        let (found, _) = tickloop_packages::discover();
        Value::Array(found.iter().map(|p| p.to_json()).collect())
    };
    Ok(tickhost::relay::relay(
        &runtime,
        &exe,
        &to,
        args.wire.as_deref(),
        args.env,
        &packages,
    ))
}
