//! `record` (an instance's terminal and protocol traffic into an asciicast
//! file) and `replay` (playing one, or its protocol timeline); the work is
//! [`crate::recording`]'s.

use crate::cli::ReplayArgs;
use crate::output::{print_json, show, CliError};
use crate::recording;
use crate::target::Target;
use anyhow::Result;
use std::path::PathBuf;
use tickloop_proto::wire::ClientRequest;

/// `record ID [-o FILE]`: until the instance ends or Ctrl-C. tickhost is
/// asked first (an agent's recording of the person's instance waits for
/// the person, saying so on stderr, and a refusal is exit 3 with nothing
/// written); the launcher then names who records in its activity.
pub fn record(target: &Target, id: &str, output: Option<PathBuf>, json: bool) -> Result<i32> {
    let client = target.kind()?;
    let list = target.simple(ClientRequest::List)?;
    let prepared = recording::prepare(&target.runtime, id, &list, output)?;
    let request = ClientRequest::Record {
        instance: prepared.instance.clone(),
    };
    let reply = target
        .connect()?
        .request_with_progress(request, super::held::tell_once(target))
        .map_err(|e| target.lost(e))?;
    crate::target::value_of(reply)?;
    let value = recording::record(prepared, client)?;
    show(&value, json, recording::record_text);
    Ok(0)
}

/// `replay FILE [--protocol] [--speed X]`.
pub fn replay(args: ReplayArgs, json: bool) -> Result<i32> {
    let speed = args.speed;
    if !(speed > 0.0 && speed.is_finite()) {
        return Err(CliError::new(
            "bad_request",
            format!("--speed {speed} must be a positive number"),
            2,
        )
        .into());
    }
    let cast = recording::load(&args.file)?;
    if args.protocol {
        for entry in recording::timeline(&cast) {
            if json {
                print_json(&entry);
            } else {
                println!("{}", recording::timeline_text(&entry));
            }
        }
    } else {
        recording::play(&cast, speed)?;
    }
    Ok(0)
}
