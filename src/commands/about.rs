//! What this build and machine are: `doctor`, `version`, `completions`,
//! `man`, and the hidden `__complete-ids` the completions call.

use crate::cli::Cli;
use crate::output::print_json;
use crate::{completions, doctor, version};
use anyhow::{Context, Result};
use clap::CommandFactory;
use std::path::Path;

/// `doctor`: exit 1 when something is broken (warnings do not count).
pub fn doctor(runtime: &Path, json: bool) -> Result<i32> {
    let checks = doctor::run(runtime);
    if json {
        print_json(&doctor::to_json(&checks));
    } else {
        print!("{}", doctor::text(&checks));
    }
    Ok(if doctor::broken(&checks) { 1 } else { 0 })
}

/// `version`.
pub fn version(json: bool) -> Result<i32> {
    if json {
        print_json(&version::to_json());
    } else {
        print!("{}", version::text());
    }
    Ok(0)
}

/// `completions SHELL`.
pub fn completions(shell: completions::Shell) -> Result<i32> {
    print!("{}", completions::script(shell, &mut Cli::command())?);
    Ok(0)
}

/// `man`: the man page (roff) on stdout.
pub fn man() -> Result<i32> {
    let page = crate::man_page::render(
        Cli::command().version(&*Box::leak(version::line().into_boxed_str())),
    )?;
    crate::output::write_stdout(&page).context("cannot write the man page")?;
    Ok(0)
}
