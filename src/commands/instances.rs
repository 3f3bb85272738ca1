//! The commands on instances that send one request and print its answer
//! (`list`, `describe`, `read`, `screen`, `input`, `close`, `reload`),
//! `watch` (a stream of deliveries) and `shutdown`.

use crate::output::{self, exit_0_at_interrupt, print_json, show, CliError};
use crate::target::Target;
use anyhow::{Context, Result};
use serde_json::json;
use tickloop_client::WatchItem;
use tickloop_proto::wire::{ClientReply, ClientRequest, ImageData, WatchEvent};

/// `list`: a table on a terminal.
pub fn list(target: &Target, json: bool) -> Result<i32> {
    let value = target.simple(ClientRequest::List)?;
    show(&value, json, output::list_table);
    Ok(0)
}

/// `screen ID [--history N]`: text also when stdout is not a terminal; JSON
/// only when asked.
pub fn screen(target: &Target, id: String, history: usize, forced_json: bool) -> Result<i32> {
    let value = target.simple(ClientRequest::Screen {
        instance: id.clone(),
        history,
        image: None,
    })?;
    if forced_json {
        print_json(&value);
    } else {
        print!("{}", output::screen_text(&value));
    }
    if let Some(images) = value["images"].as_array().filter(|i| !i.is_empty()) {
        // On stderr too: stdout is the screen.
        let n = images.len();
        eprintln!(
            "tickloop: {n} image{} on this screen (`--json` lists them; `tickloop screen {id} --image N > image.png` writes one)",
            if n == 1 { "" } else { "s" }
        );
    }
    if value["ended"] == true {
        // On stderr: stdout is the screen, as the contract has it.
        eprintln!(
            "tickloop: {id} has ended; this is its last screen (`tickloop close {id}` forgets it)"
        );
    }
    Ok(0)
}

/// `screen ID --image N`: the kept image as PNG on stdout (not a
/// terminal); with `--json`, its data as the launcher keeps it.
pub fn screen_image(target: &Target, id: String, index: u32, forced_json: bool) -> Result<i32> {
    use std::io::{IsTerminal, Write};
    if !forced_json && std::io::stdout().is_terminal() {
        return Err(CliError::new("bad_request", format!(
            "`--image` writes a PNG file to stdout, not to a terminal: redirect it (`tickloop screen {id} --image {index} > image.png`), or add `--json` for its data"
        ), 2)
        .into());
    }
    let value = target.simple(ClientRequest::Screen {
        instance: id.clone(),
        history: 0,
        image: Some(index),
    })?;
    if forced_json {
        print_json(&value);
        return Ok(0);
    }
    let data: ImageData = serde_json::from_value(value)
        .with_context(|| format!("tickhost's answer for image {index} of {id} is not an image"))?;
    let (png, width, height) = tickloop_images::to_png(&data)
        .with_context(|| format!("image {index} of {id} cannot be written as PNG"))?;
    let mut out = std::io::stdout().lock();
    out.write_all(&png)
        .and_then(|()| out.flush())
        .context("cannot write the PNG to stdout")?;
    eprintln!(
        "tickloop: image {index} of {id}: {width}x{height} pixels, {} bytes of PNG",
        png.len()
    );
    Ok(0)
}

/// `read ID`: a fresh read; an ended Tick's last state, said so on stderr.
pub fn read(target: &Target, id: String, json: bool) -> Result<i32> {
    let value = target.simple(ClientRequest::Read {
        instance: id.clone(),
    })?;
    show(&value, json, crate::text::read);
    if value["ended"] == true {
        eprintln!(
            "tickloop: {id} has ended; this is its last state (`tickloop close {id}` forgets it)"
        );
    }
    Ok(0)
}

/// `close ID`: how it ended (or that it is forgotten); what could not be
/// kept at its end (a full disk) is said on stderr, and so is an agent's
/// close that waits for the person ([`super::held`]).
pub fn close(target: &Target, id: String, json: bool) -> Result<i32> {
    let reply = target
        .connect()?
        .request_with_progress(
            ClientRequest::Close { instance: id },
            super::held::tell_once(target),
        )
        .map_err(|e| target.lost(e))?;
    let value = crate::target::value_of(reply)?;
    show(&value, json, crate::text::close);
    if value["forgotten"] != true {
        for not_saved in value["ended"]["not_saved"].as_array().into_iter().flatten() {
            eprintln!(
                "tickloop: warning: {}",
                not_saved.as_str().unwrap_or_default()
            );
        }
    }
    Ok(0)
}

/// `watch ID...`: prints each event as one JSON line (a line of text on a
/// terminal) until every instance ended.
pub fn watch(target: &Target, ids: Vec<String>, interval: u64, json: bool) -> Result<i32> {
    let mut client = target.connect()?;
    exit_0_at_interrupt();
    client.watch(ids, interval).map_err(|e| target.lost(e))?;
    let mut words = crate::text::WatchText::default();
    loop {
        match client.next_watch_item().map_err(|e| target.lost(e))? {
            WatchItem::Event(event) => {
                let value = match &event {
                    WatchEvent::Delivery(d) => serde_json::to_value(d),
                    WatchEvent::Ended(e) => serde_json::to_value(e),
                }
                .context("cannot encode a watch event")?;
                let printed = if json {
                    print_json(&value)
                } else {
                    output::print_line(&words.line(&value))
                };
                if !printed {
                    // Whoever read our output is gone.
                    return Ok(0);
                }
            }
            WatchItem::Done(ClientReply::Error(e)) => return Err(CliError::from_reply(e).into()),
            WatchItem::Done(_) => return Ok(0),
        }
    }
}

/// `shutdown`: not running is not an error, and starts nothing; launchers
/// of this runtime directory that no tickhost runs for end all the same
/// (counted in `closed`).
pub fn shutdown(target: &Target, json: bool) -> Result<i32> {
    target.kind()?;
    let mut client = match target.connect_running() {
        Ok(client) => client,
        Err(e) if e.is_not_running() => {
            let closed = match target.host {
                Some(_) => 0,
                None => tickloop_client::runtime_procs::end_launchers(
                    &target.runtime,
                    &[],
                    tickloop_client::runtime_procs::LAUNCHER_GRACE,
                )
                .len(),
            };
            show(
                &json!({"shutdown": true, "closed": closed, "was_running": false}),
                json,
                crate::text::shutdown,
            );
            return Ok(0);
        }
        Err(e) => return Err(target.connect_error(e)),
    };
    match client
        .request(ClientRequest::Shutdown)
        .map_err(|e| target.lost(e))?
    {
        ClientReply::Ok(value) => {
            show(&value, json, crate::text::shutdown);
            Ok(0)
        }
        ClientReply::Error(e) => Err(CliError::from_reply(e).into()),
        ClientReply::Call(_) => {
            Err(CliError::new("internal", "unexpected answer to shutdown", 1).into())
        }
    }
}
