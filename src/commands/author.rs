//! The Tick author's commands: `check` (the conformance run, [`crate::check`])
//! and `new` (a new package folder, [`crate::new`]).

use crate::cli::{CheckArgs, NewArgs};
use crate::output::{show, CliError};
use crate::{check, new};
use anyhow::{Context, Result};
use std::path::Path;

/// `check [--package NAME] [-- PROGRAM ARG...]`: exit 1 on any FAIL.
pub fn check(exe: &Path, args: CheckArgs, json: bool) -> Result<i32> {
    let argv = match args.package {
        None => args.argv,
        Some(name) => tickloop_packages::find(&name)
            .and_then(|p| p.launch_argv(&args.argv))
            .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?,
    };
    check::run(
        exe,
        check::Options {
            json,
            allow_mutating: args.allow_mutating,
            seed: args.seed,
            argv,
        },
    )
}

/// `new NAME [--lang L] [--tick-path DIR]`: the folder NAME here.
pub fn new(args: NewArgs, json: bool) -> Result<i32> {
    if args.tick_path.is_some() && args.lang != new::Lang::Rust {
        return Err(CliError::new(
            "bad_request",
            "--tick-path is for --lang rust".to_string(),
            2,
        )
        .into());
    }
    let parent = std::env::current_dir().context("cannot read the current directory")?;
    let value = new::run(new::Options {
        name: args.name,
        lang: args.lang,
        parent,
        tick_path: args.tick_path,
    })?;
    show(&value, json, new::text);
    Ok(0)
}
