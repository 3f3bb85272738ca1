//! An activity entry as one line of words, the same in `tickloop
//! activity`, the overlay, the Monitor's "what agents did" and the web
//! page: when, who, what was done and what it came to (`12:04:31 Claude
//! Code (shell) run `make test` → exited 2 (3.1 s)`), with the words of
//! [`tickloop_proto::wire`]'s activity (`RequestActivity::what`,
//! `came_to`), a consent decision said to the person (`refused by you`),
//! and a tone for its colour.

use tickloop_proto::wire::{
    ActivityEntry, ActivityEvent, ActivityOutcome, ClientKind, ReloadCause, TerminalOutcome,
    TimelineEntry,
};
use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// How an entry went, for its colour after the arrow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// It did what was asked (green).
    Done,
    /// Nothing was done, or it waits (olive): refused, not typed, still
    /// running, waiting for the person.
    NotDone,
    /// It failed, or its command did (red).
    Failed,
}

/// The local time's offset from UTC now (UTC when it cannot be read).
pub fn local_offset() -> UtcOffset {
    let now = OffsetDateTime::now_utc().unix_timestamp();
    #[allow(clippy::useless_conversion)]
    let Ok(now) = libc::time_t::try_from(now);
    // SAFETY: tm is plain data filled by localtime_r, which is thread-safe
    // and only reads `now`.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return UtcOffset::UTC;
    }
    i32::try_from(tm.tm_gmtoff)
        .ok()
        .and_then(|s| UtcOffset::from_whole_seconds(s).ok())
        .unwrap_or(UtcOffset::UTC)
}

/// `HH:MM:SS` of an RFC 3339 time, at `offset`.
pub fn clock(at: &str, offset: UtcOffset) -> String {
    match OffsetDateTime::parse(at, &Rfc3339) {
        Ok(t) => {
            let t = t.to_offset(offset);
            format!("{:02}:{:02}:{:02}", t.hour(), t.minute(), t.second())
        }
        Err(_) => "--:--:--".to_string(),
    }
}

/// Bytes as people read them: `512 B`, `1.2 KiB`.
fn size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes} B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// What one entry says, without its time and client: `run `make test` →
/// exited 2 (3.1 s)`, `increment {"amount":2} → executed 3 ms`; with the
/// tone of what it came to. What an agent or a program sent is escaped,
/// and past `args_width` characters cut.
pub fn entry_summary(entry: &ActivityEntry, args_width: usize) -> (String, Option<Tone>) {
    match &entry.event {
        ActivityEvent::Request(r) => {
            let tone = match (r.went_well(), &r.terminal, r.outcome) {
                (Some(true), _, _) => Tone::Done,
                (_, Some(TerminalOutcome::Exited { status: Some(_) }), _) => Tone::Failed,
                // Still running, nothing typed, or a status not said.
                (_, Some(_), _) => Tone::NotDone,
                (_, None, ActivityOutcome::NotExecuted) => Tone::NotDone,
                _ => Tone::Failed,
            };
            (
                format!("{} → {}", r.what(args_width), r.came_to()),
                Some(tone),
            )
        }
        ActivityEvent::Update {
            seq,
            count,
            bytes,
            budget,
        } => {
            let merged = if *count > 1 {
                format!(" (×{count})")
            } else {
                String::new()
            };
            (
                format!(
                    "update seq {seq}{merged} · {} of {}",
                    size(*bytes),
                    size(*budget)
                ),
                None,
            )
        }
        ActivityEvent::View { attached, views } => (
            format!(
                "view {} · {views} attached",
                if *attached { "attached" } else { "detached" }
            ),
            None,
        ),
        ActivityEvent::Subscription { started, .. } => (
            if *started {
                "subscribed to updates".to_string()
            } else {
                "unsubscribed".to_string()
            },
            None,
        ),
        ActivityEvent::Consent(decision) => (
            format!(
                "{} {} → {}",
                decision.call,
                decision.what(args_width),
                decision.verdict_to_you()
            ),
            Some(match decision.went_ahead() {
                Some(true) => Tone::Done,
                Some(false) | None => Tone::NotDone,
            }),
        ),
        ActivityEvent::Reload { cause, .. } => (
            match cause {
                ReloadCause::Asked => "reload: its file's newest version starts".to_string(),
                ReloadCause::FileChanged => {
                    "its file changed: its newest version starts".to_string()
                }
            },
            None,
        ),
        ActivityEvent::Recording {
            client,
            started,
            recordings,
        } => (
            format!(
                "recording {} · {recordings} running",
                match (started, client) {
                    (true, None) => "started (open --record)",
                    (true, Some(_)) => "started",
                    (false, _) => "stopped",
                }
            ),
            None,
        ),
        ActivityEvent::ImagesDropped {
            images,
            bytes,
            too_large,
            limit_mb,
        } => (
            tickloop_proto::wire::images_dropped_words(*images, *bytes, *too_large, *limit_mb),
            None,
        ),
    }
}

/// Who an entry came from: `MCP`, `CLI`, `Claude Code (shell)`, ...; `Tick`
/// for its updates, `view`, `file` for a save.
pub fn entry_client(entry: &ActivityEntry) -> &'static str {
    let label = |client: &Option<ClientKind>| client.map_or("?", |c| c.label());
    match &entry.event {
        ActivityEvent::Request(r) => label(&r.client),
        ActivityEvent::Subscription { client, .. } => label(client),
        ActivityEvent::Update { .. } | ActivityEvent::ImagesDropped { .. } => "Tick",
        ActivityEvent::View { .. } => "view",
        ActivityEvent::Consent(decision) => label(&decision.client),
        ActivityEvent::Reload {
            cause: ReloadCause::FileChanged,
            ..
        } => "file",
        ActivityEvent::Reload { client, .. } | ActivityEvent::Recording { client, .. } => {
            label(client)
        }
    }
}

/// One line of `tickloop activity ID`: `12:04:31 MCP     increment
/// {"amount":2} → executed 3 ms`.
pub fn entry_text(entry: &ActivityEntry, offset: UtcOffset) -> String {
    let (summary, _) = entry_summary(entry, 120);
    format!(
        "{} {:<7} {summary}",
        clock(&entry.at, offset),
        entry_client(entry)
    )
}

/// One line of the timeline across instances (`tickloop activity`): time,
/// instance, who, what and what it came to: `12:04:31 shell:build
/// Claude Code (shell) run `make` → exited 0 (1.2 s)`.
pub fn timeline_text(entry: &TimelineEntry, offset: UtcOffset) -> String {
    let (summary, _) = entry_summary(&entry.entry, 120);
    format!(
        "{} {} {} {summary}",
        clock(&entry.entry.at, offset),
        tickloop_proto::escape::escaped(&entry.instance),
        entry_client(&entry.entry)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tickloop_proto::wire::{AgentHost, EchoOffTyping, NotTypedWhy, RequestActivity};

    fn request(method: &str, args: serde_json::Value, terminal: TerminalOutcome) -> ActivityEntry {
        ActivityEntry {
            n: 3,
            at: "2026-12-02T07:00:00.000Z".into(),
            event: ActivityEvent::Request(RequestActivity {
                client: Some(ClientKind::AgentCli(AgentHost::ClaudeCode)),
                method: method.into(),
                tool: None,
                args: Some(args),
                echo_off: None,
                revision: None,
                outcome: ActivityOutcome::Ok,
                error_code: None,
                error: None,
                result: None,
                duration_ms: 12,
                terminal: Some(terminal),
            }),
        }
    }

    /// Typing at a prompt with echo off is shown as how much was typed.
    #[test]
    fn typing_with_echo_off_shows_how_much() {
        let mut entry = request("input", json!(null), TerminalOutcome::Typed);
        if let ActivityEvent::Request(r) = &mut entry.event {
            r.client = Some(ClientKind::Cli);
            r.args = None;
            r.echo_off = Some(EchoOffTyping::of::<&str>(Some("Hunter2Secret!"), &[]));
        }
        assert_eq!(
            entry_text(&entry, UtcOffset::UTC),
            "07:00:00 CLI     input → typed 14 characters with echo off"
        );
    }

    /// A run's command and how it ended, keys by name, text escaped; a
    /// failed command and a run past its timeout are never `ok`, and their
    /// tone says so.
    #[test]
    fn a_line_names_what_was_done_and_what_it_came_to() {
        let exited = |status| TerminalOutcome::Exited {
            status: Some(status),
        };
        let cases = [
            (
                request("run", json!("make test"), exited(0)),
                "run `make test` → exited 0 (12 ms)",
                Tone::Done,
            ),
            (
                request("run", json!("false"), exited(1)),
                "run `false` → exited 1 (12 ms)",
                Tone::Failed,
            ),
            (
                request(
                    "run",
                    json!("sleep 60"),
                    TerminalOutcome::StillRunning {
                        after_ms: 10_000,
                        foreground: None,
                    },
                ),
                "run `sleep 60` → still running after 10 s",
                Tone::NotDone,
            ),
            (
                request(
                    "run",
                    json!("ls"),
                    TerminalOutcome::NotTyped {
                        why: NotTypedWhy::PromptHadText,
                    },
                ),
                "run `ls` → not typed: the prompt had text",
                Tone::NotDone,
            ),
            (
                request(
                    "keys",
                    json!(["C-c", "Up", "Enter"]),
                    TerminalOutcome::Typed,
                ),
                "keys C-c Up Enter → pressed",
                Tone::Done,
            ),
            (
                request(
                    "input",
                    json!("rm -rf x\u{1b}[31m\r"),
                    TerminalOutcome::Typed,
                ),
                "input `rm -rf x` Esc `[31m` ⏎ → typed",
                Tone::Done,
            ),
        ];
        for (entry, said, tone) in cases {
            let (summary, got) = entry_summary(&entry, 120);
            assert_eq!(summary, said);
            assert_eq!(got, Some(tone), "{said}");
            assert_eq!(
                entry_text(&entry, UtcOffset::UTC),
                format!("07:00:00 Claude Code (shell) {said}")
            );
            let across = TimelineEntry {
                instance: "shell:build".into(),
                entry,
            };
            assert_eq!(
                timeline_text(&across, UtcOffset::UTC),
                format!("07:00:00 shell:build Claude Code (shell) {said}")
            );
        }
    }
}
