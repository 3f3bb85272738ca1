//! `tickloop`: the CLI of docs/cli.md, dispatching into the libraries. The
//! same executable is the daemon (`__tickhost`) and each instance's launcher
//! (`__launcher`), so they are always one build.
//!
//! The command line is [`cli`]; [`run`] only dispatches each command to its
//! module under [`commands`] (or [`loop_cli`], [`herdr_cli`]).

/// `print!` for the whole CLI (a macro defined before the modules is the
/// one they use): stdout through [`output::out`], so a reader that went
/// away (`tickloop completions bash | head`) ends the command quietly
/// rather than with std's panic and exit 101.
macro_rules! print {
    ($($arg:tt)*) => { $crate::output::out(&format!($($arg)*)) };
}

/// `println!` for the whole CLI, as [`print!`] above.
macro_rules! println {
    () => { $crate::output::out("\n") };
    ($($arg:tt)*) => { $crate::output::out(&format!("{}\n", format_args!($($arg)*))) };
}

/// `eprintln!` for the whole CLI, as [`print!`] above: a diagnostic that
/// cannot be written (stderr closed, its reader gone) is dropped, never a
/// panic.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod actor;
mod check;
mod cli;
mod commands;
mod completions;
mod doctor;
mod herdr_cli;
mod libm_shims;
mod loop_cli;
mod man_page;
mod new;
mod output;
mod recording;
mod remote_cli;
mod target;
mod text;
mod version;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches};
use cli::{Cli, Command};
use commands::{about, activity, approvals, author, call, instances, internal, open, packages};
use output::CliError;
use std::io::IsTerminal;
use target::Target;
use tickloop_client::paths::RuntimeDir;
use tickloop_proto::wire::ClientRequest;

fn main() {
    // tickhost starts a launcher for every instance, a hundred of them at a
    // time: it skips building the whole command line (clap's builder is
    // most of a launcher's start and of its main thread's stack).
    if is_launcher(std::env::args_os()) {
        std::process::exit(finish(internal::launcher(), true));
    }
    let mut command = Cli::command();
    if version::asked() {
        command = command.version(&*Box::leak(version::line().into_boxed_str()));
    }
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    tickloop_client::ssh::set_build(version::line());
    let json = cli.json || !std::io::stdout().is_terminal();
    let forced_json = cli.json;
    std::process::exit(finish(run(cli, json, forced_json), json));
}

/// Whether this command line is tickhost's `tickloop __launcher`, exactly.
fn is_launcher(mut args: std::env::ArgsOs) -> bool {
    args.len() == 2 && args.nth(1).is_some_and(|a| a == "__launcher")
}

/// The exit code of a command's result, its error reported.
fn finish(result: Result<i32>, json: bool) -> i32 {
    match result {
        Ok(code) => code,
        Err(error) => {
            let cli_error = match error.downcast::<CliError>() {
                Ok(e) => e,
                Err(other) => CliError::new("internal", format!("{other:#}"), 1),
            };
            cli_error.report(json);
            cli_error.exit
        }
    }
}

/// Runs one command line; the exit code, or the error to report.
fn run(mut cli: Cli, json: bool, forced_json: bool) -> Result<i32> {
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let runtime = RuntimeDir::locate();
    remote_cli::take_host_ids(&mut cli.command, &mut cli.host)?;
    let hosts = remote_cli::choose(&cli.command, &cli.host, remote_cli::host_flag_given())?;
    let target = Target {
        runtime,
        exe,
        host: hosts.host.clone(),
        actor: actor::client_kind(),
    };
    let t = &target;
    match cli.command {
        Command::Tickhost => internal::tickhost(target.runtime, target.exe),
        Command::Launcher => internal::launcher(),
        Command::Relay(args) => internal::relay(target.runtime, target.exe, args),
        Command::Mcp {
            interval,
            max_protocol,
            tasks,
            ask_in_host,
        } => commands::mcp::run(
            target.runtime,
            target.exe,
            hosts,
            commands::mcp::Flags {
                interval,
                max_protocol,
                tasks,
                ask_in_host,
            },
        ),
        Command::Loop(command) => Ok(loop_cli::run(
            command,
            target.runtime,
            target.exe,
            target.host,
        )),
        Command::Herdr(command) => {
            let kind = target.kind()?;
            let ctx = view_herdr::Ctx {
                runtime: target.runtime,
                exe: target.exe,
            };
            herdr_cli::run(command, ctx, kind, json)
        }
        Command::Open(args) => open::run(t, args, json),
        Command::Check(args) => author::check(&t.exe, args, json),
        Command::New(args) => author::new(args, json),
        Command::Record { id, output } => commands::recordings::record(t, &id, output, json),
        Command::Replay(args) => commands::recordings::replay(args, json),
        Command::List => instances::list(t, json),
        Command::Describe { id } => {
            let human = |v: &serde_json::Value| text::describe(&id, v);
            let request = ClientRequest::Describe {
                instance: id.clone(),
            };
            commands::answer_as(t, request, json, human)
        }
        Command::Read { id } => instances::read(t, id, json),
        Command::Call(args) => call::run(t, args, json),
        Command::Watch { ids, interval } => instances::watch(t, ids, interval, json),
        Command::Screen {
            id,
            history: _,
            image: Some(index),
        } => instances::screen_image(t, id, index, forced_json),
        Command::Screen { id, history, .. } => instances::screen(t, id, history, forced_json),
        Command::Input { id, text } => {
            let human = |v: &serde_json::Value| text::input(&id, v);
            let request = ClientRequest::Input {
                instance: id.clone(),
                text,
            };
            commands::answer_as(t, request, json, human)
        }
        Command::Keys { id, keys } => commands::terminal::keys(t, id, keys, json),
        Command::Wait(args) => commands::terminal::wait(t, args, json),
        Command::Run(args) => commands::terminal::run(t, args, json),
        Command::Attach { id, detach_key } => {
            commands::views::attach(t, &id, detach_key.as_deref())
        }
        Command::Monitor(args) => commands::views::monitor(t, hosts.monitor_sources(), args),
        Command::Web(args) => commands::web::run(t, args, json),
        Command::Approvals { watch, log } => approvals::list(t, watch, log, json),
        Command::Approve { id, call } => approvals::decide(t, id, call, true, None, json),
        Command::Refuse { id, call, reason } => approvals::decide(t, id, call, false, reason, json),
        Command::ApprovePolicy {
            id,
            policy,
            input,
            close,
        } => approvals::set_policy(t, id, [policy, input, close], json),
        Command::Activity {
            id,
            follow,
            since,
            agent,
        } => {
            let only = activity::Only::parse(since.as_deref(), agent.as_deref())?;
            match id {
                Some(id) => activity::run(t, id, follow, &only, json),
                None => commands::timeline::run(t, follow, &only, json),
            }
        }
        Command::Close { id } => instances::close(t, id, json),
        Command::Reload { id } => commands::answer_as(
            t,
            ClientRequest::Reload { instance: id },
            json,
            text::reload,
        ),
        Command::Shutdown => instances::shutdown(t, json),
        Command::Packages { path: Some(name) } => packages::path(&name, forced_json),
        Command::Packages { path: None } => packages::list(t, json),
        Command::Doctor => about::doctor(&t.runtime, json),
        Command::Version => about::version(json),
        Command::Completions { shell } => about::completions(shell),
        Command::Man => about::man(),
        Command::CompleteIds => completions::complete_ids(&t.runtime),
    }
}

#[cfg(test)]
mod tests {
    /// A panic unwinds and is caught through the unwinder `build.rs` links
    /// in (gcc's `libgcc_eh.a`): the launcher catches its emulator's panics
    /// this way (`launcher::terminal::keeper`).
    #[test]
    fn a_panic_unwinds_through_the_linked_in_unwinder() {
        let caught = std::panic::catch_unwind(|| -> u32 { panic!("unwound") });
        assert!(caught.is_err());
    }
}
