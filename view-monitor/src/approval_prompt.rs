//! The approval prompt: a call an agent made that waits for a person, drawn
//! as a box at the bottom of the screen (over the Monitor's list or its
//! overlay, over a view's activity overlay) with what the person needs to
//! judge it: first what will happen, in plain words (the tool's own
//! description with the arguments put in, the text to type with its keys
//! named), then who asks, how long it has waited and until when, then the
//! arguments pretty-printed, and last the tool and its catalog revision.
//! `y` approves, `n` refuses, `v` shows the arguments whole.
//!
//! Pure: [`draw`] paints a [`HeldCall`] on a surface; [`decide`] sends the
//! answer to tickhost.

use crate::cells::{at, draw_box, last_row_note, truncate};
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::color::{AnsiColor, ColorAttribute};
use termwiz::surface::{Change, Surface};
use tickloop_proto::wire::{ClientReply, ClientRequest, HeldAction, HeldCall};

/// `90s` → `1m30s`: how long, for people.
fn duration(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The prompt's lines (without the border): what, why, arguments, keys.
pub fn lines(held: &HeldCall, more: usize, whole: bool, max_args: usize) -> Vec<String> {
    let mut lines = question(held, more, whole, max_args);
    lines.push(format!(
        "y approve · n refuse · v {} arguments",
        if whole { "fewer" } else { "whole" }
    ));
    lines
}

/// What the prompt asks, without the keys that answer it: what will
/// happen, in plain words; who asks, how long it has waited and until
/// when; the arguments; last the jargon (the tool and its catalog
/// revision). Every surface that asks the person shows these lines (the
/// Monitor, `tickloop web`).
pub fn question(held: &HeldCall, more: usize, whole: bool, max_args: usize) -> Vec<String> {
    let who = held
        .client
        .map_or_else(|| "an agent".to_string(), |c| c.actor());
    let first = match held.action {
        // A tool's description rarely names the instance.
        HeldAction::Call => format!("{} · {}", held.plainly(), held.instance),
        _ => held.plainly(),
    };
    let until = held.deadline().map_or_else(
        || "its timeout".to_string(),
        |at| format!("{:02}:{:02}:{:02} UTC", at.hour(), at.minute(), at.second()),
    );
    let mut lines = vec![
        first,
        format!(
            "asked by {who} · waiting {} of {} (until {until}){}",
            duration(held.waited_ms),
            duration(held.timeout_ms),
            if more > 0 {
                format!(" · {more} more waiting after it")
            } else {
                String::new()
            }
        ),
    ];
    let pretty = serde_json::to_string_pretty(&held.args).unwrap_or_default();
    let args: Vec<&str> = pretty.lines().collect();
    let shown = if whole { args.len() } else { max_args };
    lines.push("arguments:".to_string());
    lines.extend(args.iter().take(shown).map(|l| format!("  {l}")));
    if args.len() > shown {
        lines.push(format!(
            "  … {} more lines (v shows them)",
            args.len() - shown
        ));
    }
    if held.action == HeldAction::Call {
        lines.push(format!(
            "tool {} · catalog revision {}",
            held.tool, held.revision
        ));
    }
    lines
}

/// Paints the prompt for `held` at the bottom of `screen` (`more`: calls
/// waiting after it). It takes at most two thirds of the screen; on a
/// screen too small for a box, the last row says what to press.
pub fn draw(screen: &mut Surface, held: &HeldCall, more: usize, whole: bool) {
    let (cols, rows) = screen.dimensions();
    if cols == 0 || rows == 0 {
        return;
    }
    let mut warn = CellAttributes::default();
    warn.set_foreground(ColorAttribute::PaletteIndex(AnsiColor::Yellow as u8));
    if cols < 30 || rows < 8 {
        last_row_note(screen, &format!("{} y/n", held.plainly()));
        return;
    }
    let inner = cols - 2;
    let max_height = (rows * 2 / 3).max(6);
    // The box's border, the lines around the arguments, the tool's line.
    let max_args = max_height.saturating_sub(7).clamp(1, 6);
    let mut body = lines(held, more, whole, max_args);
    if body.len() + 2 > max_height {
        // Keep the key line.
        let keys = body.pop().unwrap_or_default();
        body.truncate(max_height.saturating_sub(3));
        body.push(keys);
    }
    let height = body.len() + 2;
    let top = rows - height;
    draw_box(
        screen,
        top,
        &format!(" approve? {} · call {} ", held.instance, held.call),
        AnsiColor::Yellow,
    );
    let last = body.len() - 1;
    let mut changes = Vec::new();
    for (i, line) in body.iter().enumerate() {
        let mut attrs = CellAttributes::default();
        if i == 0 || i == last {
            attrs.set_intensity(Intensity::Bold);
        }
        changes.push(at(2, top + 1 + i));
        changes.push(Change::AllAttributes(attrs));
        changes.push(Change::Text(truncate(line, inner.saturating_sub(2))));
    }
    changes.push(Change::AllAttributes(CellAttributes::default()));
    screen.add_changes(changes);
}

/// Sends a person's answer on `held` to the tickhost of `endpoint`; the
/// message to show.
pub fn decide(
    endpoint: &tickloop_client::Endpoint,
    held: &HeldCall,
    approve: bool,
    by: &str,
) -> String {
    let request = ClientRequest::Decide {
        instance: held.instance.clone(),
        call: held.call.clone(),
        approve,
        // `by` says where it was refused; a reason would only repeat it.
        reason: None,
        by: by.to_string(),
        host: None,
    };
    let verb = if approve { "approved" } else { "refused" };
    match endpoint
        .connect_running()
        .and_then(|mut c| c.request(request))
    {
        Ok(ClientReply::Ok(_)) => {
            format!("{verb} {} {} on {}", held.call, held.tool, held.instance)
        }
        Ok(ClientReply::Error(e)) => e.message,
        Ok(other) => format!("unexpected answer: {other:?}"),
        Err(e) => format!("cannot reach tickhost: {e}"),
    }
}

/// Fetches the waiting calls from `client`, when the `list` answer says
/// some wait (no request otherwise).
pub fn fetch_waiting(
    client: &mut tickloop_client::Client,
    list: &serde_json::Value,
) -> Vec<HeldCall> {
    let any = tickloop_proto::wire::ListEntry::all(list)
        .is_some_and(|all| all.iter().any(|e| e.approvals_waiting > 0));
    if !any {
        return Vec::new();
    }
    match client.request(ClientRequest::Approvals) {
        Ok(ClientReply::Ok(value)) => serde_json::from_value(value).unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tickloop_proto::wire::{AgentHost, ClientKind};

    fn held(action: HeldAction, tool: &str, args: serde_json::Value) -> HeldCall {
        HeldCall {
            action,
            call: "%3".into(),
            instance: "hosted:counter".into(),
            tool: tool.into(),
            description: "Add `amount` to the counter; it may be negative.".into(),
            args,
            echo_off: None,
            revision: if action == HeldAction::Call {
                "7".into()
            } else {
                String::new()
            },
            client: Some(ClientKind::AgentCli(AgentHost::ClaudeCode)),
            since: "2026-12-03T10:32:05Z".into(),
            waited_ms: 3_000,
            timeout_ms: 600_000,
        }
    }

    #[test]
    fn what_happens_first_then_who_and_until_when_then_the_jargon() {
        let call = question(
            &held(HeldAction::Call, "increment", json!({"amount": 3})),
            1,
            false,
            6,
        );
        assert_eq!(call[0], "Add 3 to the counter? · hosted:counter");
        assert_eq!(
            call[1],
            "asked by an agent (claude-code, shell tool) · waiting 3s of 10m00s (until 10:42:05 UTC) · 1 more waiting after it"
        );
        assert_eq!(call[2], "arguments:");
        assert_eq!(
            call.last().map(String::as_str),
            Some("tool increment · catalog revision 7")
        );
        let typing = question(
            &held(HeldAction::Input, "input", json!({"text": "make test\r"})),
            0,
            false,
            6,
        );
        assert_eq!(typing[0], "Type `make test` ⏎ into hosted:counter?");
        assert!(
            !typing.iter().any(|l| l.contains("revision")),
            "no catalog for typing: {typing:?}"
        );
    }
}
