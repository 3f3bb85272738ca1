//! `tickloop open`: start a program as a Tick (or a plain terminal program,
//! an artifact file, a package), here or on `--host`'s machine, and show it
//! in Herdr with `--view herdr`.

use crate::cli::{Cli, OpenArgs};
use crate::output::{self, show, CliError};
use crate::target::{value_of, Target};
use crate::{herdr_cli, recording};
use anyhow::{Context, Result};
use clap::CommandFactory;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tickloop_client::ssh::SshHost;
use tickloop_client::Client;
use tickloop_proto::wire::{ApprovalPolicy, ClientRequest, OpenRequest};

/// Checks the options, opens, prints the new instance.
pub fn run(target: &Target, args: OpenArgs, json: bool) -> Result<i32> {
    let history = history(args.history)?;
    herdr_cli::check_open_view(args.view, target.kind()?)?;
    // With the program taken as trailing arguments, an option clap does not
    // know lands here: refuse it rather than run it.
    if let Some(option) = args.argv.first().filter(|a| a.starts_with('-')) {
        let hint = closest_open_option(option)
            .map(|known| format!(" (did you mean --{known}?)"))
            .unwrap_or_default();
        return Err(CliError::new(
            "bad_request",
            format!(
                "unknown option {option} for open{hint}; `tickloop open --help` lists them, and the program goes after --: tickloop open [OPTIONS] -- PROGRAM [ARG...]"
            ),
            2,
        )
        .into());
    }
    let approve = args.approve.as_deref().and_then(ApprovalPolicy::parse);
    let consent = Consent {
        approve,
        agent_input: args.agent_input.as_deref().and_then(ApprovalPolicy::parse),
        agent_close: args.agent_close.as_deref().and_then(ApprovalPolicy::parse),
    };
    let (value, approve) = match &target.host {
        Some(host) => (open_remote(target, host, args, history, consent)?, approve),
        None => open_here(target, args, history, consent)?,
    };
    show(&value, json, output::open_text);
    if !json {
        if let Some(line) = approval_line(approve, &value) {
            output::out(&line);
        }
    }
    Ok(0)
}

/// Who approves what agents do to the new instance, as the flags say
/// (each absent: the package's or the default).
struct Consent {
    approve: Option<ApprovalPolicy>,
    agent_input: Option<ApprovalPolicy>,
    agent_close: Option<ApprovalPolicy>,
}

/// For a person: who approves the new instance's mutating calls, when not
/// everyone (`--approve ask|deny`, or the package's policy).
fn approval_line(approve: Option<ApprovalPolicy>, opened: &Value) -> Option<String> {
    let id = opened["id"].as_str().unwrap_or("it");
    match approve? {
        ApprovalPolicy::Auto => None,
        ApprovalPolicy::Ask => Some(format!(
            "approve ask: each mutating call waits for a person, in the Monitor or with \
             `tickloop approve {id} CALL` (`tickloop approvals` lists them)\n"
        )),
        ApprovalPolicy::Deny => Some(format!(
            "approve deny: mutating calls are refused; `tickloop approve-policy {id} ask` \
             lets a person decide instead\n"
        )),
    }
}

/// A failed open of the package `package` (`args`: the ARGs given after
/// `--`): the launcher's advice to use `--shell` does not fit a package,
/// which is a Tick; without ARGs, how its SKILL.md opens it does.
fn package_failure(
    error: anyhow::Error,
    package: &tickloop_packages::Package,
    args: &[String],
) -> anyhow::Error {
    let mut failure = match error.downcast::<CliError>() {
        Ok(failure) => failure,
        Err(other) => return other,
    };
    if failure.kind != "open_failed" {
        return failure.into();
    }
    if let Some(cut) = launcher::instance::not_a_tick::hint_start(&failure.message) {
        failure.message.truncate(cut);
    }
    if args.is_empty() {
        let shown = format!("tickloop open --package {}", package.name);
        let example = package
            .body
            .split('`')
            .find(|quoted| quoted.starts_with(&format!("{shown} ")))
            .map_or_else(|| format!("{shown} -- ARG..."), str::to_string);
        failure.message.push_str(&format!(
            "; the package {} may need arguments after `--`: its SKILL.md opens it as `{example}`",
            package.name
        ));
    }
    failure.into()
}

/// The lines of history: `--history`, else the settings file's, else the
/// default; never more than the most.
fn history(given: Option<usize>) -> Result<usize> {
    let history = match given {
        Some(lines) => lines,
        None => tickloop_client::config::load()
            .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?
            .history
            .unwrap_or(launcher::emulator::DEFAULT_HISTORY),
    };
    if history > launcher::emulator::MAX_HISTORY {
        return Err(CliError::new(
            "bad_request",
            format!(
                "--history {history} is more than {} lines; ask for fewer",
                launcher::emulator::MAX_HISTORY
            ),
            2,
        )
        .into());
    }
    Ok(history)
}

/// `Some(false)` when the shell integration is turned off: by
/// `--no-integration`, or `[shell] integration = false` in the settings.
fn shell_integration(off: bool) -> Option<bool> {
    if off {
        return Some(false);
    }
    tickloop_client::config::shell_integration()
}

/// Opens on this machine: the package's or artifact's program, in the
/// right directory, with the caller's environment; then shows it in Herdr
/// when asked.
fn open_here(
    target: &Target,
    args: OpenArgs,
    history: usize,
    consent: Consent,
) -> Result<(Value, Option<ApprovalPolicy>)> {
    let mut approve = consent.approve;
    let record = args
        .record
        .as_deref()
        .map(recording::new_file)
        .transpose()?;
    let package_error = |e: tickloop_packages::PackageError| {
        let kind = match e {
            tickloop_packages::PackageError::NotFound { .. } => "bad_request",
            _ => "open_failed",
        };
        CliError::new(kind, e.to_string(), 1)
    };
    let package = args
        .package
        .as_deref()
        .map(tickloop_packages::find)
        .transpose()
        .map_err(package_error)?;
    let package_args = args.argv.clone();
    let argv = match &package {
        None => args.argv,
        Some(p) => {
            approve = approve.or(p.approve);
            p.launch_argv(&args.argv).map_err(package_error)?
        }
    };
    let here = std::env::current_dir().context("cannot read the current directory")?;
    let artifact = match args.artifact {
        None => None,
        Some(path) => Some(artifact_path(&here, &path, &argv, &args.watch)?),
    };
    let cwd = match (args.cwd, &artifact) {
        (_, Some(path)) => path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| here.clone()),
        (Some(dir), None) => {
            std::path::absolute(here.join(dir)).context("cannot make --cwd absolute")?
        }
        (None, None) => here,
    };
    if !cwd.is_dir() {
        return Err(CliError::new(
            "bad_request",
            format!("--cwd {} is not a directory", cwd.display()),
            1,
        )
        .into());
    }
    let request = ClientRequest::Open(OpenRequest {
        name: args.name,
        program: tickloop_proto::wire::ProgramSpec {
            shell: args.shell,
            artifact,
            watch: args.watch,
            argv,
            cwd,
            env: tickloop_client::caller_env(),
            history: Some(history),
            approve,
            package: args.package.clone(),
            owner: None,
            agent_input: consent.agent_input,
            agent_close: consent.agent_close,
            shell_integration: shell_integration(args.no_integration),
            record,
        },
    });
    let mut value = target.simple(request).map_err(|e| match &package {
        Some(p) => package_failure(e, p, &package_args),
        None => e,
    })?;
    let ctx = view_herdr::Ctx {
        runtime: target.runtime.clone(),
        exe: target.exe.clone(),
    };
    herdr_cli::show_opened(args.view, &ctx, &mut value)?;
    Ok((value, approve))
}

/// `--artifact PATH` made absolute, when it is a file, no PROGRAM is given
/// and the `--watch` globs compile.
fn artifact_path(here: &Path, path: &Path, argv: &[String], watch: &[String]) -> Result<PathBuf> {
    if !argv.is_empty() {
        return Err(CliError::new(
            "bad_request",
            "--artifact PATH runs the file by its shebang; give no PROGRAM after it".to_string(),
            2,
        )
        .into());
    }
    let path = std::path::absolute(here.join(path))
        .with_context(|| format!("cannot make {} absolute", path.display()))?;
    if !path.is_file() {
        return Err(CliError::new(
            "bad_request",
            format!(
                "--artifact {} is not a file; write it first",
                path.display()
            ),
            1,
        )
        .into());
    }
    if let Err(e) = launcher::artifact::compile_globs(watch) {
        return Err(CliError::new("bad_request", e, 2).into());
    }
    Ok(path)
}

/// `open --host`: the Tick runs on the other machine, in `--cwd` (a path
/// there, so absolute) or that user's home, with the environment of the
/// relay there (what a Tick opened there by hand would inherit).
fn open_remote(
    target: &Target,
    host: &SshHost,
    args: OpenArgs,
    history: usize,
    consent: Consent,
) -> Result<Value> {
    if args.artifact.is_some()
        || args.package.is_some()
        || args.view.is_some()
        || args.record.is_some()
    {
        return Err(CliError::new(
            "bad_request",
            "--artifact, --package, --view and --record do not work with --host yet; run that open on the other machine",
            2,
        )
        .into());
    }
    if let Some(cwd) = args.cwd.as_ref().filter(|c| !c.is_absolute()) {
        return Err(CliError::new(
            "bad_request",
            format!(
                "--cwd {} with --host must be an absolute path on {host}",
                cwd.display()
            ),
            2,
        )
        .into());
    }
    let mut client =
        Client::connect_remote(host, true, target.kind()?).map_err(|e| target.connect_error(e))?;
    let greeting = client.greeting().cloned();
    let cwd = match (args.cwd, greeting.as_ref().and_then(|g| g.home.clone())) {
        (Some(cwd), _) => cwd,
        (None, Some(home)) => PathBuf::from(home),
        (None, None) => PathBuf::from("/"),
    };
    let request = ClientRequest::Open(OpenRequest {
        name: args.name,
        program: tickloop_proto::wire::ProgramSpec {
            shell: args.shell,
            artifact: None,
            watch: Vec::new(),
            argv: args.argv,
            cwd,
            env: greeting.map(|g| g.env).unwrap_or_default(),
            history: Some(history),
            approve: consent.approve,
            package: None,
            owner: None,
            agent_input: consent.agent_input,
            agent_close: consent.agent_close,
            shell_integration: shell_integration(args.no_integration),
            record: None,
        },
    });
    value_of(client.request(request).map_err(|e| target.lost(e))?)
}

/// The long option of `open` closest to `typed` (`--aproove` -> none known
/// yet, `--shel` -> `shell`), when one is close enough to be a typo.
fn closest_open_option(typed: &str) -> Option<String> {
    let typed = typed.trim_start_matches('-');
    let typed = typed.split('=').next().unwrap_or(typed);
    let mut command = Cli::command();
    // The commands' arguments are built on demand (`defer`).
    command.build();
    let open = command.find_subcommand("open")?;
    open.get_arguments()
        .filter_map(|a| a.get_long())
        .map(|long| (strsim::jaro_winkler(typed, long), long))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, long)| long.to_string())
}
