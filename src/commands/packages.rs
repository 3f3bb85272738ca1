//! `tickloop packages [--path NAME]`: the Tick packages `open --package`
//! takes (here, or `--host`'s), or the folder of one.

use crate::output::{self, print_json, show, CliError};
use crate::target::Target;
use anyhow::Result;
use serde_json::{json, Value};

/// `packages --path NAME`: the folder of package NAME; text also on a pipe
/// (`cd "$(tickloop packages --path NAME)"`), JSON only when asked.
pub fn path(name: &str, forced_json: bool) -> Result<i32> {
    let package = tickloop_packages::find(name)
        .map_err(|e| CliError::new("bad_request", e.to_string(), 1))?;
    if forced_json {
        print_json(&json!({"name": package.name, "dir": package.dir}));
    } else {
        println!("{}", package.dir.display());
    }
    Ok(0)
}

/// `packages`: every package found, what it shadows and what was skipped.
pub fn list(target: &Target, json: bool) -> Result<i32> {
    if let Some(host) = &target.host {
        let list =
            tickloop_client::ssh::packages(host).map_err(|e| target.connect_error(e.into()))?;
        show(&list, json, output::remote_packages_text);
        return Ok(0);
    }
    let (found, problems) = tickloop_packages::discover();
    for problem in &problems {
        eprintln!("tickloop: package skipped: {problem}");
    }
    let list: Vec<Value> = found.iter().map(|p| p.to_json()).collect();
    show(&Value::Array(list), json, |_| String::new());
    if !json {
        print!("{}", tickloop_packages::listing_text(&found));
    }
    Ok(0)
}
