//! `keys`, `wait` and `run`: an instance's terminal used by name and by
//! event rather than by typing text and reading the screen. `keys` and
//! `run` wait through a person's approval as `input` does; `wait` exits
//! 124 at its timeout, as timeout(1) does; `run` exits with the command's
//! status, 124 when it still runs at the timeout, and 125 (as `docker
//! exec`) for Tickloop's own failures, when nothing was typed.

use crate::cli::{RunArgs, WaitArgs};
use crate::output::{out, print_json, CliError};
use crate::target::{value_of, Target};
use anyhow::Result;
use serde_json::Value;
use std::time::Duration;
use tickloop_proto::wire::{ClientRequest, RunReply, RunRequest, WaitReply, WaitRequest};

/// The exit of a wait that ran out, and of a `run` whose command still
/// runs (timeout(1)'s).
pub const TIMED_OUT: i32 = 124;
/// The exit of a `run` that Tickloop could not carry out (nothing typed).
pub const RUN_FAILED: i32 = 125;

/// `--timeout SECONDS` in ms, checked (exit 2 when out of range).
fn timeout_ms(seconds: f64) -> Result<u64> {
    let max = tickloop_proto::wire::MAX_WAIT_MS as f64 / 1000.0;
    if !(seconds > 0.0 && seconds <= max) {
        return Err(CliError::new(
            "bad_request",
            format!("--timeout takes seconds above 0 and at most {max} (a day)"),
            2,
        )
        .into());
    }
    Ok((seconds * 1000.0).ceil() as u64)
}

/// `keys ID KEY...`: every name checked here first (exit 2, nothing typed).
pub fn keys(target: &Target, id: String, keys: Vec<String>, json: bool) -> Result<i32> {
    if let Err(e) = tickloop_proto::keys::parse_all(&keys) {
        return Err(CliError::new("bad_request", e.to_string(), 2).into());
    }
    let request = ClientRequest::Keys {
        instance: id.clone(),
        text: None,
        keys,
    };
    let mut client = target.connect()?;
    let reply = client
        .request_with_progress(request, super::held::tell_once(target))
        .map_err(|e| target.lost(e))?;
    let value = value_of(reply)?;
    if json {
        print_json(&value);
    } else {
        let n = value["keys"].as_u64().unwrap_or(0);
        out(&format!(
            "pressed {n} key{} in {id}{}\n",
            if n == 1 { "" } else { "s" },
            crate::text::echo_off_note(&value)
        ));
    }
    Ok(0)
}

/// `wait ID --text RE | --quiet MS | --prompt | --ended [--timeout S]`.
pub fn wait(target: &Target, args: WaitArgs, json: bool) -> Result<i32> {
    let wait = WaitRequest {
        text: args.text,
        screen: args.screen,
        quiet_ms: args.quiet,
        prompt: args.prompt,
        ended: args.ended,
        timeout_ms: timeout_ms(args.timeout)?,
    };
    if let Some(problem) = wait.problem() {
        return Err(CliError::new("bad_request", problem, 2).into());
    }
    if let Some(text) = &wait.text {
        if let Err(e) = regex::Regex::new(text) {
            let message = format!("--text is not a regular expression: {e}");
            return Err(CliError::new("bad_request", message, 2).into());
        }
    }
    let limit = Duration::from_millis(wait.timeout_ms);
    let request = ClientRequest::Wait {
        instance: args.id.clone(),
        wait,
    };
    let mut client = target.connect()?;
    let reply = client
        .request_waiting(request, limit, |_| {})
        .map_err(|e| target.lost(e))?;
    let value = value_of(reply)?;
    let answer: WaitReply = serde_json::from_value(value.clone())
        .map_err(|e| CliError::new("internal", format!("unreadable wait answer: {e}"), 1))?;
    if json {
        print_json(&value);
    } else {
        out(&crate::text::wait_answer(&args.id, &answer, args.screen));
    }
    if answer.timed_out {
        eprintln!(
            "tickloop: timed out after {:.1} s waiting on {} (exit 124)",
            limit.as_secs_f64(),
            args.id
        );
        return Ok(TIMED_OUT);
    }
    Ok(0)
}

/// `run ID -- COMMAND...`: the command's output on stdout and its status as
/// the exit; 124 when it still runs at the timeout; 125 when Tickloop
/// could not run it (nothing typed).
pub fn run(target: &Target, args: RunArgs, json: bool) -> Result<i32> {
    match run_command(target, args, json) {
        Ok(code) => Ok(code),
        Err(e) => match e.downcast::<CliError>() {
            Ok(mut cli) => {
                cli.exit = RUN_FAILED;
                Err(cli.into())
            }
            Err(other) => Err(CliError::new("internal", format!("{other:#}"), RUN_FAILED).into()),
        },
    }
}

fn run_command(target: &Target, args: RunArgs, json: bool) -> Result<i32> {
    let run = RunRequest {
        command: tickloop_proto::shell::command_line(&args.command),
        timeout_ms: timeout_ms(args.timeout)?,
    };
    if let Some(problem) = run.problem() {
        return Err(CliError::new("bad_request", problem, RUN_FAILED).into());
    }
    let limit = Duration::from_millis(run.timeout_ms);
    let request = ClientRequest::Run {
        instance: args.id.clone(),
        run,
    };
    let mut client = target.connect()?;
    let reply = client
        .request_waiting(request, limit, super::held::tell_once(target))
        .map_err(|e| target.lost(e))?;
    let value: Value = value_of(reply)?;
    let ran: RunReply = serde_json::from_value(value.clone())
        .map_err(|e| CliError::new("internal", format!("unreadable run answer: {e}"), 1))?;
    if json {
        print_json(&value);
    } else {
        out(&ran.command.output);
        if let Some(cut) = &ran.command.output_cut {
            eprintln!("tickloop: {}", cut.note.replace("ID", &args.id));
        }
    }
    if ran.timed_out {
        eprintln!(
            "tickloop: `{}` still runs in {} after {:.1} s; it was not stopped: `tickloop wait {} --prompt` waits for its end",
            ran.command.command,
            args.id,
            limit.as_secs_f64(),
            args.id
        );
        if let Some(foreground) = &ran.foreground {
            eprintln!("tickloop: {}", foreground_text(&args.id, foreground));
        }
        return Ok(TIMED_OUT);
    }
    match ran.command.exit {
        Some(code) => Ok(code.clamp(0, 255)),
        None => {
            eprintln!(
                "tickloop: the shell did not say how `{}` ended",
                ran.command.command
            );
            Ok(1)
        }
    }
}

/// What holds the terminal after a `run`'s timeout, with the command that
/// leaves it.
fn foreground_text(id: &str, foreground: &tickloop_proto::wire::Foreground) -> String {
    if foreground.keys.is_empty() {
        format!("{}: `tickloop screen {id}` shows it", foreground.says())
    } else {
        format!(
            "{}: `tickloop keys {id} {}`",
            foreground.says(),
            foreground.keys.join(" ")
        )
    }
}
