//! The approval prompt: a call an agent made that waits for a person, drawn
//! as a box at the bottom of the screen (over the Monitor's list or its
//! overlay, over a view's activity overlay) with what the person needs to
//! judge it: first what will happen, in plain words (the tool's own
//! description with the arguments put in, the text to type with its keys
//! named), then who asks, how long it has waited and until when, then the
//! arguments pretty-printed, and last the tool and its catalog revision.
//! Everything from the agent or the Tick is escaped
//! ([`tickloop_proto::escape`], the escapes in reverse video), and what
//! will happen is wrapped, never cut. `y` approves, `n` refuses, `v` shows
//! the arguments whole (a page at a time when they take more than the
//! screen).
//!
//! Pure: [`draw`] paints a [`HeldCall`] on a surface; [`decide`] sends the
//! answer to tickhost.

use crate::cells::{at, draw_box, last_row_note, shown_text, truncate, wrap};
use termwiz::cell::{CellAttributes, Intensity};
use termwiz::color::AnsiColor;
use termwiz::surface::{Change, Surface};
use tickloop_proto::escape::escaped;
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

/// What the prompt asks, without the keys that answer it, escaped
/// ([`tickloop_proto::escape`]): what will happen, in plain words and
/// whole; who asks, how long it has waited and until when; the arguments
/// (the first `max_args` lines of them unless `whole`); last the jargon
/// (the tool and its catalog revision). Every surface that asks the
/// person shows these lines (the Monitor, the attach view's overlay,
/// `tickloop web`).
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
    lines.extend(args.iter().take(shown).map(|l| format!("  {}", escaped(l))));
    if args.len() > shown {
        lines.push(format!(
            "  … {} more lines (v shows them)",
            args.len() - shown
        ));
    }
    if held.action == HeldAction::Call {
        lines.push(format!(
            "tool {} · catalog revision {}",
            escaped(&held.tool),
            escaped(&held.revision)
        ));
    }
    lines
}

/// A prompt's rows: the question wrapped to the box, each row with
/// whether it is bold (what will happen).
fn rows_of(question: &[String], width: usize) -> Vec<(String, bool)> {
    question
        .iter()
        .enumerate()
        .flat_map(|(i, line)| wrap(line, width).into_iter().map(move |row| (row, i == 0)))
        .collect()
}

/// Paints the prompt for `held` at the bottom of `screen` (`more`: calls
/// waiting after it). What will happen is wrapped, never cut. Usually the
/// box takes two thirds of the screen (more when what will happen needs
/// it) with the first lines of the arguments; `step` counts the `v`s
/// pressed since the prompt showed: the next shows the arguments whole on
/// the whole screen, a page at a time when it takes more than one, and
/// after the last page the usual box again. On a screen too small for a
/// box, the last row asks in short and says how much it hides. `answers`:
/// whether this view may answer (an agent's read-only Monitor may not: its
/// key line says who does).
pub fn draw(screen: &mut Surface, held: &HeldCall, more: usize, step: usize, answers: bool) {
    let yn = if answers {
        "y approve · n refuse"
    } else {
        "read-only: only the person answers"
    };
    let (cols, rows) = screen.dimensions();
    if cols == 0 || rows == 0 {
        return;
    }
    if cols < 30 || rows < 8 {
        let question = held.plainly_within(cols.saturating_sub(4));
        let keys = if answers { "y/n" } else { "(read-only)" };
        last_row_note(screen, &format!("{question} {keys}"));
        return;
    }
    // The border and a space each side.
    let width = cols - 4;
    // The border and the key line.
    let room_whole = rows - 3;
    let whole = rows_of(&question(held, more, true, usize::MAX), width);
    let pages = whole.len().div_ceil(room_whole).max(1);
    let page = step % (pages + 1);
    let (body, keys, title_page) = if page == 0 {
        let usual = (rows * 2 / 3).max(6);
        let max_args = usual.saturating_sub(7).clamp(1, 6);
        let mut body = rows_of(&question(held, more, false, max_args), width);
        let what = body.iter().filter(|(_, bold)| *bold).count();
        let room = usual.max(what + 4).min(rows) - 3;
        if body.len() > room {
            let keep = room.saturating_sub(1);
            let hidden = body.len() - keep;
            body.truncate(keep);
            body.push((format!("… {hidden} more lines (v shows them)"), false));
        }
        let keys = format!("{yn} · v whole arguments");
        (body, keys, String::new())
    } else {
        let from = (page - 1) * room_whole;
        let body: Vec<(String, bool)> = whole.into_iter().skip(from).take(room_whole).collect();
        let keys = if page < pages {
            format!("{yn} · v next page ({}/{pages})", page + 1)
        } else {
            format!("{yn} · v fewer arguments")
        };
        let title_page = if pages > 1 {
            format!(" · page {page}/{pages}")
        } else {
            String::new()
        };
        (body, keys, title_page)
    };
    let height = body.len() + 3;
    let top = rows - height;
    draw_box(
        screen,
        top,
        &format!(
            " approve? {} · call {}{title_page} ",
            escaped(&held.instance),
            escaped(&held.call)
        ),
        AnsiColor::Yellow,
    );
    let mut bold = CellAttributes::default();
    bold.set_intensity(Intensity::Bold);
    let plain = CellAttributes::default();
    let mut changes = Vec::new();
    for (i, (row, is_bold)) in body.iter().enumerate() {
        changes.push(at(2, top + 1 + i));
        changes.extend(shown_text(row, if *is_bold { &bold } else { &plain }));
    }
    changes.push(at(2, top + 1 + body.len()));
    changes.extend(shown_text(&truncate(&keys, width), &bold));
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

    fn drawn(held: &HeldCall, cols: usize, rows: usize, step: usize) -> String {
        let mut screen = Surface::new(cols, rows);
        draw(&mut screen, held, 0, step, true);
        screen.screen_chars_to_string()
    }

    #[test]
    fn a_long_command_is_wrapped_whole_and_its_escapes_shown() {
        let command = format!("ls{};touch FILE \u{202e}x", " ".repeat(150));
        let run = held(HeldAction::Input, "run", json!({"command": command}));
        for (cols, rows) in [(80, 24), (40, 12), (200, 10)] {
            let shown = drawn(&run, cols, rows, 0);
            assert!(shown.contains("Run `ls"), "{cols}x{rows}:\n{shown}");
            assert!(
                shown.contains(";touch FILE \\u{202E}x`"),
                "{cols}x{rows}:\n{shown}"
            );
            assert!(
                shown.contains("at the prompt of"),
                "{cols}x{rows}:\n{shown}"
            );
            assert!(!shown.contains('\u{202e}'), "{shown}");
        }
    }

    #[test]
    fn v_pages_through_arguments_longer_than_the_screen_and_back() {
        let args: serde_json::Map<String, serde_json::Value> =
            (0..60).map(|i| (format!("k{i:02}"), json!(i))).collect();
        let call = held(
            HeldAction::Call,
            "increment",
            serde_json::Value::Object(args),
        );
        let usual = drawn(&call, 80, 24, 0);
        assert!(usual.contains("more lines (v shows them)"), "{usual}");
        let first = drawn(&call, 80, 24, 1);
        assert!(
            first.contains("page 1/") && first.contains("\"k00\": 0"),
            "{first}"
        );
        assert!(first.contains("v next page (2/"), "{first}");
        let pages: usize = (1..10)
            .take_while(|&step| drawn(&call, 80, 24, step).contains("page "))
            .count();
        let last = drawn(&call, 80, 24, pages);
        assert!(
            last.contains("\"k59\": 59") && last.contains("v fewer"),
            "{last}"
        );
        assert_eq!(drawn(&call, 80, 24, pages + 1), usual);
    }
}
