//! `tickloop activity ID [--follow]`: what agents did with an instance.

use crate::output::{exit_0_at_interrupt, print_json, print_line, CliError};
use crate::target::Target;
use anyhow::{Context, Result};
use tickloop_proto::wire::{ActivityRecord, ClientReply, ClientRequest};

/// The record (JSON: the whole record; text: a line an entry, oldest
/// first); with `follow`, new entries as they come (JSON: one entry a
/// line), until the instance ends.
pub fn run(target: &Target, id: String, follow: bool, json: bool) -> Result<i32> {
    let mut client = target.connect()?;
    let offset = view_monitor::activity::local_offset();
    let mut after = None;
    let mut full_id: Option<String> = None;
    if follow {
        exit_0_at_interrupt();
    }
    loop {
        // Looked at before fetching, so what it recorded up to its end is
        // in the fetch after which this stops.
        let ended = match &full_id {
            Some(full) => has_ended(target, full)?,
            None => false,
        };
        let request = ClientRequest::Activity {
            instance: id.clone(),
            after,
        };
        let record: ActivityRecord = match client.request(request).map_err(|e| target.lost(e))? {
            ClientReply::Ok(value) => {
                serde_json::from_value(value).context("tickhost sent an unreadable record")?
            }
            ClientReply::Error(e) => return Err(CliError::from_reply(e).into()),
            ClientReply::Call(_) => anyhow::bail!("tickhost answered activity with a call outcome"),
        };
        if json && !follow {
            print_json(&serde_json::to_value(&record).context("cannot encode the record")?);
            return Ok(0);
        }
        for entry in &record.entries {
            let printed = if json {
                print_json(&serde_json::to_value(entry).context("cannot encode an entry")?)
            } else {
                print_line(&view_monitor::activity::entry_text(entry, offset))
            };
            if !printed {
                return Ok(0);
            }
        }
        if !follow {
            if record.entries.is_empty() {
                eprintln!("tickloop: nothing recorded for {id} yet");
            }
            return Ok(0);
        }
        after = Some(record.last);
        full_id = Some(record.instance);
        // An ended instance records nothing more.
        if ended {
            return Ok(0);
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// Whether the instance `full_id` is listed as ended.
fn has_ended(target: &Target, full_id: &str) -> Result<bool> {
    let list = target.simple(ClientRequest::List)?;
    Ok(list.as_array().is_some_and(|all| {
        all.iter()
            .any(|e| e["id"] == full_id && e["state"] == "ended")
    }))
}
