//! `tickloop`: the CLI of docs/cli.md, dispatching into the libraries. The
//! same executable is the daemon (`__tickhost`) and each instance's launcher
//! (`__launcher`), so they are always one build.

mod check;
mod completions;
mod doctor;
mod herdr_cli;
mod loop_cli;
mod new;
mod output;
mod recording;
mod remote_cli;
mod version;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use output::{print_json, print_pretty, CliError};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use tickloop_client::paths::RuntimeDir;
use tickloop_client::{Client, ClientError as ConnectError, WatchItem};
use tickloop_proto::wire::{
    ActivityRecord, ApprovalPolicy, CallOutcome, ClientKind, ClientReply, ClientRequest,
    OpenRequest, WatchEvent,
};

#[derive(Parser)]
#[command(
    name = "tickloop",
    version,
    about = "Host Ticks: terminal programs used by a person on screen and by an agent through the Tick protocol"
)]
struct Cli {
    /// Print JSON even when stdout is a terminal.
    #[arg(long, global = true)]
    json: bool,
    /// The machine whose Ticks to use, over ssh: [ssh://][USER@]HOST[:PORT]
    /// (README: "Ticks on other machines"; TICKLOOP_SSH is the ssh command).
    #[arg(
        long = "host",
        global = true,
        env = "TICKLOOP_HOST",
        value_name = "[USER@]HOST[:PORT]"
    )]
    host: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Start PROGRAM as a Tick (or, with --shell, a plain terminal program).
    Open {
        /// The instance NAME (1-64 of A-Z a-z 0-9 . _ -); default: the program's name.
        #[arg(long = "id")]
        name: Option<String>,
        /// Working directory of the program (default: the current directory).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// Host a plain terminal program, with no protocol (`shell:NAME`).
        #[arg(long)]
        shell: bool,
        /// Run the file PATH as the Tick `artifact:NAME` (NAME: --id, else the
        /// file's stem), by its shebang (`python3` for a `.py` with none), in
        /// PATH's directory; each save of PATH starts its new version on the
        /// same terminal.
        #[arg(long, value_name = "PATH", conflicts_with_all = ["shell", "package", "cwd"])]
        artifact: Option<PathBuf>,
        /// With --artifact: another file whose saves start a new version, a
        /// glob relative to PATH's directory (`*.json`, `lib/**/*.py`); repeatable.
        #[arg(long = "watch", value_name = "GLOB", requires = "artifact")]
        watch: Vec<String>,
        /// Launch the Tick package NAME (`tickloop packages`); ARGs after `--` are appended.
        #[arg(long, value_name = "NAME")]
        package: Option<String>,
        /// Lines of history its screen keeps (0 keeps none; default 2000, or
        /// `history` in ~/.config/tickloop/config.toml).
        #[arg(long, value_name = "LINES")]
        history: Option<usize>,
        /// Who approves its mutating calls: auto (nobody), ask (a person, in the
        /// Monitor or with `tickloop approve`), deny (refused). Default: the
        /// package's `approve`, else auto.
        #[arg(long, value_name = "POLICY", value_parser = ["auto", "ask", "deny"])]
        approve: Option<String>,
        /// Record the session from its start into the new file FILE
        /// (asciicast v2, with the protocol traffic as markers).
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Show the new instance at once: `herdr` (a Herdr pane; inside Herdr).
        #[arg(long, value_enum, value_name = "VIEW")]
        view: Option<herdr_cli::OpenView>,
        /// PROGRAM [ARG...], after `--`.
        #[arg(
            required_unless_present_any = ["package", "artifact"],
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "PROGRAM"
        )]
        argv: Vec<String>,
    },
    /// Conformance run of PROGRAM as a Tick, in a private tickhost: PASS,
    /// FAIL or NOT CHECKED per rule (exit 1 on any FAIL).
    Check {
        /// Also call tools with `mutates: true` (never otherwise).
        #[arg(long)]
        allow_mutating: bool,
        /// Check the Tick package NAME (`tickloop packages`); ARGs after `--` are appended.
        #[arg(long, value_name = "NAME")]
        package: Option<String>,
        /// PROGRAM [ARG...], after `--`.
        #[arg(
            required_unless_present = "package",
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "PROGRAM"
        )]
        argv: Vec<String>,
    },
    /// Make a new Tick package, folder NAME (SKILL.md and a program that
    /// passes `check` as made).
    New {
        /// The package's name and folder (1-64 of A-Z a-z 0-9 - _, from a letter).
        name: String,
        /// Python (standard library only) or Rust (on the tickloop-tick crate).
        #[arg(long, value_enum, default_value = "python")]
        lang: new::Lang,
        /// With --lang rust: depend on the tickloop-tick crate in this folder
        /// (a Tickloop checkout's tick/); default: the checkout tickloop was
        /// built from while it exists, else the crates.io release.
        #[arg(long, value_name = "DIR")]
        tick_path: Option<PathBuf>,
    },
    /// Record instance ID's terminal and protocol traffic into FILE
    /// (asciicast v2) until it ends or Ctrl-C.
    Record {
        id: String,
        /// The new file (default: NAME-UNIXTIME.cast here).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Play a recording in this terminal, or print its protocol timeline.
    Replay {
        file: PathBuf,
        /// Print the protocol messages (and resizes) with their times instead.
        #[arg(long)]
        protocol: bool,
        /// Play this many times faster (pauses are cut to 2 s first).
        #[arg(long, default_value_t = 1.0)]
        speed: f64,
    },
    /// Every instance, running or ended.
    List,
    /// The validated descriptor, as the Tick sent it.
    Describe { id: String },
    /// A fresh `tick/read`.
    Read { id: String },
    /// Call TOOL with ARGS_JSON (default `{}`); exit 0/3/4/5 by outcome.
    Call {
        id: String,
        tool: String,
        /// The arguments, a JSON object.
        #[arg(value_name = "ARGS_JSON")]
        args: Option<String>,
        /// The catalog revision the call was made against.
        #[arg(long)]
        revision: String,
    },
    /// One JSON line per delivery until every watched instance has ended.
    Watch {
        #[arg(required = true)]
        ids: Vec<String>,
        /// Milliseconds between deliveries.
        #[arg(long, default_value_t = 1000)]
        interval: u64,
    },
    /// The Tick's current terminal screen as text (`--json`: rows, cols, cursor, lines, history).
    Screen {
        id: String,
        /// Print up to N lines of history before the visible screen.
        #[arg(long, value_name = "N", default_value_t = 0)]
        history: usize,
    },
    /// Type TEXT into the Tick's terminal.
    Input {
        id: String,
        #[arg(allow_hyphen_values = true)]
        text: String,
    },
    /// Show the Tick's screen in this terminal and type into it; ctrl+\ then d detaches.
    Attach {
        id: String,
        /// The prefix key (default ctrl+\; also TICKLOOP_DETACH_KEY or
        /// `detach_key` in ~/.config/tickloop/config.toml): then d detaches,
        /// the key again sends it, m the Monitor, ? the keys.
        #[arg(long, value_name = "ctrl+X")]
        detach_key: Option<String>,
    },
    /// Every instance, live, full screen; Enter shows one over the list (ctrl+\ then d closes it), q quits.
    Monitor {
        /// The instance selected at start (Herdr passes the Tick in focus).
        #[arg(long, env = "TICKLOOP_INSTANCE")]
        select: Option<String>,
        /// The prefix key of the overlay (as for attach).
        #[arg(long, value_name = "ctrl+X")]
        detach_key: Option<String>,
        /// Open on the selected instance's activity (what agents did with it).
        #[arg(long, env = "TICKLOOP_ACTIVITY", value_parser = clap::builder::BoolishValueParser::new())]
        activity: bool,
    },
    /// Calls waiting for a person's approval, one JSON line each.
    Approvals {
        /// Keep printing calls as they start waiting (each once).
        #[arg(long)]
        watch: bool,
        /// Instead: the approval log of ID (every decision, who made it).
        #[arg(long, value_name = "ID", conflicts_with = "watch")]
        log: Option<String>,
    },
    /// Approve call CALL of instance ID (`tickloop approvals` lists them).
    Approve { id: String, call: String },
    /// Refuse call CALL of instance ID: not executed, with your reason.
    Refuse {
        id: String,
        call: String,
        #[arg(long)]
        reason: Option<String>,
    },
    /// Set who approves ID's mutating calls: auto, ask or deny.
    ApprovePolicy {
        id: String,
        #[arg(value_parser = ["auto", "ask", "deny"])]
        policy: String,
    },
    /// What agents did with the instance: requests and their outcomes, updates, views, subscriptions.
    Activity {
        id: String,
        /// Keep printing new entries as they come, until the instance ends.
        #[arg(long)]
        follow: bool,
    },
    /// End the session (or forget an ended instance).
    Close { id: String },
    /// Start an artifact's newest version now, as a save of its file would
    /// (answers once it is up or has failed).
    Reload { id: String },
    /// Close every instance and end tickhost.
    Shutdown,
    /// The daemon (started by the CLI).
    #[command(name = "__tickhost", hide = true)]
    Tickhost,
    /// One instance's launcher (started by tickhost).
    #[command(name = "__launcher", hide = true)]
    Launcher,
    /// The far side of `--host` (run by ssh): pipes ssh's stdio to tickhost
    /// or to one launcher's attach socket.
    #[command(name = "__relay", hide = true)]
    Relay {
        /// `tickhost`, `view:KIND:NAME` or `packages`.
        #[arg(long)]
        to: String,
        /// The wire version of the side that started ssh.
        #[arg(long)]
        wire: Option<String>,
        /// Also send this side's environment (for `open`).
        #[arg(long)]
        env: bool,
    },
    /// Serve the agent tools over MCP on stdin/stdout (README: "Tickloop for MCP-capable agents").
    Mcp {
        /// Milliseconds between deliveries (state notifications, instance polling); at least 100.
        #[arg(long, default_value_t = 1000)]
        interval: u64,
    },
    /// The Tick packages `open --package` takes: which one is used (user,
    /// TICKLOOP_PACKAGES_PATH or shipped), what it shadows, what it misses.
    Packages {
        /// Print only the folder of package NAME (to read its SKILL.md).
        #[arg(long, value_name = "NAME")]
        path: Option<String>,
    },
    /// Check the runtime directory, tickhost, launchers, packages, Herdr,
    /// ssh and the terminal, and say what to do about each problem (exit 1
    /// when something is broken; warnings do not count).
    Doctor,
    /// The version, wire version, commit and protocol versions of this build.
    Version,
    /// Print the completion script for SHELL (README: "Install").
    Completions {
        #[arg(value_enum)]
        shell: completions::Shell,
    },
    /// Print the man page (roff): `tickloop man > ~/.local/share/man/man1/tickloop.1`.
    Man,
    /// Instance ids for the shell completions (never starts tickhost).
    #[command(name = "__complete-ids", hide = true)]
    CompleteIds,
    /// The Loop: bounded time-step runs for an agent session (README: "Driving the Loop").
    #[command(subcommand)]
    Loop(loop_cli::LoopCommand),
    /// Tickloop in Herdr: its plugin, Ticks in Herdr panes, the Monitor overlay (README: "Tickloop in Herdr").
    #[command(subcommand)]
    Herdr(herdr_cli::HerdrCommand),
}

fn main() {
    let mut command = Cli::command();
    if version::asked() {
        command = command.version(&*Box::leak(version::line().into_boxed_str()));
    }
    let cli = Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit());
    tickloop_client::ssh::set_build(version::line());
    let json = cli.json || !std::io::stdout().is_terminal();
    let forced_json = cli.json;
    let code = match run(cli, json, forced_json) {
        Ok(code) => code,
        Err(error) => {
            let cli_error = match error.downcast::<CliError>() {
                Ok(e) => e,
                Err(other) => CliError::new("internal", format!("{other:#}"), 1),
            };
            cli_error.report(json);
            cli_error.exit
        }
    };
    std::process::exit(code);
}

fn run(mut cli: Cli, json: bool, forced_json: bool) -> Result<i32> {
    let exe = std::env::current_exe().context("cannot find this executable's path")?;
    let runtime = RuntimeDir::locate();
    remote_cli::take_host_ids(&mut cli.command, &mut cli.host)?;
    remote_cli::choose(&cli.command, &cli.host, remote_cli::host_flag_given())?;
    // Who asks, for the activity records of the instances.
    match &cli.command {
        Command::Mcp { .. } => tickloop_client::identify_as(ClientKind::Mcp),
        Command::Loop(_) => tickloop_client::identify_as(ClientKind::Loop),
        Command::Herdr(_) => tickloop_client::identify_as(ClientKind::Herdr),
        Command::Monitor { .. } | Command::Attach { .. } => {
            tickloop_client::identify_as(ClientKind::Monitor)
        }
        _ => {}
    }
    match cli.command {
        Command::Tickhost => {
            tickhost::daemon::run(tickhost::daemon::DaemonOptions {
                runtime_dir: runtime,
                exe,
            })
            .context("tickhost")?;
            Ok(0)
        }
        Command::Launcher => {
            launcher::main_from_stdin().context("launcher")?;
            Ok(0)
        }
        Command::Relay { to, wire, env } => {
            let to = tickloop_client::ssh::RelayTo::parse(&to)
                .map_err(|e| CliError::new("bad_request", e, 2))?;
            let packages = || {
                let (found, _) = tickloop_packages::discover();
                Value::Array(found.iter().map(|p| p.to_json()).collect())
            };
            Ok(tickhost::relay::relay(
                &runtime,
                &exe,
                &to,
                wire.as_deref(),
                env,
                &packages,
            ))
        }
        Command::Shutdown => shutdown(&runtime, json),
        Command::Loop(command) => Ok(loop_cli::run(command, runtime, exe)),
        Command::Herdr(command) => herdr_cli::run(command, view_herdr::Ctx { runtime, exe }, json),
        Command::Mcp { interval } => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            // tickloop_mcp raises it to its floor (MIN_INTERVAL).
            let interval = std::time::Duration::from_millis(interval);
            let options = tickloop_mcp::Options {
                runtime_dir: runtime,
                exe,
                interval,
                cwd,
                host: remote_cli::host().cloned(),
                hosts: remote_cli::mcp_hosts(),
            };
            tickloop_mcp::run(options).context("mcp")?;
            Ok(0)
        }
        Command::Packages { path: Some(name) } => {
            let package = tickloop_packages::find(&name)
                .map_err(|e| CliError::new("bad_request", e.to_string(), 1))?;
            // Text also on a pipe (`cd "$(tickloop packages --path NAME)"`).
            if forced_json {
                print_json(&json!({"name": package.name, "dir": package.dir}));
            } else {
                println!("{}", package.dir.display());
            }
            Ok(0)
        }
        Command::Packages { path: None } if remote_cli::host().is_some() => {
            let host = remote_cli::host().context("no host")?;
            let list = tickloop_client::ssh::packages(host)
                .map_err(|e| remote_cli::connect_error(e.into()))?;
            show(&list, json, output::remote_packages_text);
            Ok(0)
        }
        Command::Packages { path: None } => {
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
        Command::Doctor => {
            let checks = doctor::run(&runtime);
            if json {
                print_json(&doctor::to_json(&checks));
            } else {
                print!("{}", doctor::text(&checks));
            }
            Ok(if doctor::broken(&checks) { 1 } else { 0 })
        }
        Command::Version => {
            if json {
                print_json(&version::to_json());
            } else {
                print!("{}", version::text());
            }
            Ok(0)
        }
        Command::Completions { shell } => {
            print!("{}", completions::script(shell, &mut Cli::command())?);
            Ok(0)
        }
        Command::Man => {
            use std::io::Write;
            let page = completions::man_page(
                Cli::command().version(&*Box::leak(version::line().into_boxed_str())),
            )?;
            std::io::stdout()
                .write_all(&page)
                .context("cannot write the man page")?;
            Ok(0)
        }
        Command::CompleteIds => completions::complete_ids(&runtime),
        Command::Watch { ids, interval } => watch(&runtime, &exe, ids, interval),
        Command::Call {
            id,
            tool,
            args,
            revision,
        } => {
            let args: Value = match args {
                None => json!({}),
                Some(text) => serde_json::from_str(&text).map_err(|e| {
                    CliError::new(
                        "bad_request",
                        format!(
                            "ARGS_JSON is not JSON ({e}); pass an object like '{{\"amount\":1}}'"
                        ),
                        2,
                    )
                })?,
            };
            let request = ClientRequest::Call {
                instance: id,
                call: tickloop_proto::wire::CallRequest {
                    tool,
                    args,
                    revision,
                },
            };
            let mut client = connect(&runtime, &exe)?;
            let mut told = false;
            let waiting = |held: &tickloop_proto::wire::HeldCall| {
                if !std::mem::replace(&mut told, true) {
                    eprintln!(
                        "tickloop: waiting for approval of {} (call {}): a person approves it in the Monitor, or with `tickloop approve {} {}`",
                        held.tool, held.call, held.instance, held.call
                    );
                }
            };
            let reply = match client.request_with_progress(request, waiting) {
                Ok(reply) => reply,
                // Sent, and then tickhost went away or stopped answering:
                // the call may or may not have run. Never guessed, never
                // retried.
                Err(e) => ClientReply::Call(CallOutcome::Unknown {
                    reason: match remote_cli::host() {
                        Some(host) => format!("the ssh connection to {host} was lost: {e}"),
                        None => format!("tickhost: {e}"),
                    },
                }),
            };
            call_outcome(reply, json)
        }
        Command::Open {
            name,
            cwd,
            shell,
            artifact,
            watch,
            package,
            history,
            approve,
            record,
            view,
            argv,
        } => {
            let history = match history {
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
            herdr_cli::check_open_view(view)?;
            // With the program taken as trailing arguments, an option clap
            // does not know lands here: refuse it rather than run it.
            if let Some(option) = argv.first().filter(|a| a.starts_with('-')) {
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
            let mut approve = approve.as_deref().and_then(ApprovalPolicy::parse);
            if let Some(host) = remote_cli::host() {
                let request = RemoteOpen {
                    name,
                    shell,
                    argv,
                    cwd,
                    history,
                    approve,
                };
                if artifact.is_some() || package.is_some() || view.is_some() || record.is_some() {
                    return Err(CliError::new(
                        "bad_request",
                        "--artifact, --package, --view and --record do not work with --host yet; run that open on the other machine",
                        2,
                    )
                    .into());
                }
                let value = open_remote(host, request)?;
                show(&value, json, output::open_text);
                return Ok(0);
            }
            let record = record.as_deref().map(recording::new_file).transpose()?;
            let argv = match package {
                None => argv,
                Some(package) => tickloop_packages::find(&package)
                    .and_then(|p| {
                        approve = approve.or(p.approve);
                        p.launch_argv(&argv)
                    })
                    .map_err(|e| {
                        let kind = match e {
                            tickloop_packages::PackageError::NotFound { .. } => "bad_request",
                            _ => "open_failed",
                        };
                        CliError::new(kind, e.to_string(), 1)
                    })?,
            };
            let here = std::env::current_dir().context("cannot read the current directory")?;
            let artifact = match artifact {
                None => None,
                Some(path) => {
                    if !argv.is_empty() {
                        return Err(CliError::new(
                            "bad_request",
                            "--artifact PATH runs the file by its shebang; give no PROGRAM after it".to_string(),
                            2,
                        )
                        .into());
                    }
                    let path = std::path::absolute(here.join(&path))
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
                    if let Err(e) = launcher::artifact::compile_globs(&watch) {
                        return Err(CliError::new("bad_request", e, 2).into());
                    }
                    Some(path)
                }
            };
            let cwd = match (cwd, &artifact) {
                (_, Some(path)) => path
                    .parent()
                    .map(std::path::Path::to_path_buf)
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
            let env = tickloop_client::caller_env();
            let request = ClientRequest::Open(OpenRequest {
                name,
                program: tickloop_proto::wire::ProgramSpec {
                    shell,
                    artifact,
                    watch,
                    argv,
                    cwd,
                    env,
                    history: Some(history),
                    approve,
                    record,
                },
            });
            let mut value = simple(&runtime, &exe, request)?;
            let ctx = view_herdr::Ctx { runtime, exe };
            herdr_cli::show_opened(view, &ctx, &mut value)?;
            show(&value, json, output::open_text);
            Ok(0)
        }
        Command::Check {
            allow_mutating,
            package,
            argv,
        } => {
            let argv = match package {
                None => argv,
                Some(name) => tickloop_packages::find(&name)
                    .and_then(|p| p.launch_argv(&argv))
                    .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?,
            };
            check::run(
                &exe,
                check::Options {
                    json,
                    allow_mutating,
                    argv,
                },
            )
        }
        Command::New {
            name,
            lang,
            tick_path,
        } => {
            if tick_path.is_some() && lang != new::Lang::Rust {
                return Err(CliError::new(
                    "bad_request",
                    "--tick-path is for --lang rust".to_string(),
                    2,
                )
                .into());
            }
            let parent = std::env::current_dir().context("cannot read the current directory")?;
            let value = new::run(new::Options {
                name,
                lang,
                parent,
                tick_path,
            })?;
            show(&value, json, new::text);
            Ok(0)
        }
        Command::Record { id, output } => {
            let list = simple(&runtime, &exe, ClientRequest::List)?;
            let value = recording::record(&runtime, &id, &list, output)?;
            show(&value, json, recording::record_text);
            Ok(0)
        }
        Command::Replay {
            file,
            protocol,
            speed,
        } => {
            if !(speed > 0.0 && speed.is_finite()) {
                return Err(CliError::new(
                    "bad_request",
                    format!("--speed {speed} must be a positive number"),
                    2,
                )
                .into());
            }
            let cast = recording::load(&file)?;
            if protocol {
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
        Command::List => {
            let value = simple(&runtime, &exe, ClientRequest::List)?;
            show(&value, json, output::list_table);
            Ok(0)
        }
        Command::Describe { id } => {
            let value = simple(&runtime, &exe, ClientRequest::Describe { instance: id })?;
            show_pretty(&value, json);
            Ok(0)
        }
        Command::Read { id } => {
            let value = simple(&runtime, &exe, ClientRequest::Read { instance: id })?;
            show_pretty(&value, json);
            Ok(0)
        }
        Command::Screen { id, history } => {
            let value = simple(
                &runtime,
                &exe,
                ClientRequest::Screen {
                    instance: id,
                    history,
                },
            )?;
            // Text also when stdout is not a terminal; JSON only when asked.
            if forced_json {
                print_json(&value);
            } else {
                print!("{}", output::screen_text(&value));
            }
            Ok(0)
        }
        Command::Input { id, text } => {
            let value = simple(&runtime, &exe, ClientRequest::Input { instance: id, text })?;
            show_pretty(&value, json);
            Ok(0)
        }
        Command::Attach { id, detach_key } => {
            // A bad key is refused before anything is looked up.
            view_monitor::prefix::PrefixKey::choose(detach_key.as_deref())
                .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?;
            let list = simple(&runtime, &exe, ClientRequest::List)?;
            view_monitor::attach_view::attach_cli(
                &runtime,
                &id,
                &list,
                detach_key.as_deref(),
                remote_cli::host(),
            )
            .map_err(|e| match (&e, remote_cli::host()) {
                (view_monitor::attach_view::AttachError::Lost(_), Some(host)) => CliError::new(
                    "connection_lost",
                    format!("the ssh connection to {host} was lost while attached ({e}); {id} is untouched there: attach again"),
                    remote_cli::CONNECTION_LOST,
                ),
                _ => CliError::new(e.kind(), e.to_string(), 1),
            })?;
            Ok(0)
        }
        Command::Monitor {
            select,
            detach_key,
            activity,
        } => {
            let prefix = view_monitor::prefix::PrefixKey::choose(detach_key.as_deref())
                .map_err(|e| CliError::new("bad_request", e.to_string(), 2))?;
            let machines = remote_cli::monitor_sources();
            let several = machines.len() > 1;
            let mut sources = Vec::new();
            for machine in machines {
                let endpoint = match &machine {
                    Some(host) => tickloop_client::Endpoint::Remote(host.clone()),
                    None => tickloop_client::Endpoint::Local {
                        runtime: runtime.clone(),
                        exe: exe.clone(),
                    },
                };
                // One machine: not reaching it is the command's failure.
                // Several: the Monitor shows which one it cannot reach.
                let client = match endpoint.connect() {
                    Ok(client) => Some(client),
                    Err(e) if !several => return Err(remote_cli::connect_error(e)),
                    Err(_) => None,
                };
                let prefix = machine.as_ref().filter(|_| several).map(|h| h.label());
                sources.push((view_monitor::monitor::Source { prefix, endpoint }, client));
            }
            view_monitor::monitor::run(&runtime, sources, select, prefix, activity)
                .map_err(|e| CliError::new(e.kind(), e.to_string(), 1))?;
            Ok(0)
        }
        Command::Activity { id, follow } => activity(&runtime, &exe, id, follow, json),
        Command::Approvals { watch, log } => approvals(&runtime, &exe, watch, log),
        Command::Approve { id, call } => {
            let request = ClientRequest::Decide {
                instance: id,
                call,
                approve: true,
                reason: None,
                by: "cli".into(),
            };
            show_pretty(&simple(&runtime, &exe, request)?, json);
            Ok(0)
        }
        Command::Refuse { id, call, reason } => {
            let request = ClientRequest::Decide {
                instance: id,
                call,
                approve: false,
                reason,
                by: "cli".into(),
            };
            show_pretty(&simple(&runtime, &exe, request)?, json);
            Ok(0)
        }
        Command::ApprovePolicy { id, policy } => {
            let policy = ApprovalPolicy::parse(&policy).unwrap_or_default();
            let request = ClientRequest::SetApproval {
                instance: id,
                policy,
            };
            show_pretty(&simple(&runtime, &exe, request)?, json);
            Ok(0)
        }
        Command::Close { id } => {
            let value = simple(&runtime, &exe, ClientRequest::Close { instance: id })?;
            show_pretty(&value, json);
            Ok(0)
        }
        Command::Reload { id } => {
            let value = simple(&runtime, &exe, ClientRequest::Reload { instance: id })?;
            show_pretty(&value, json);
            Ok(0)
        }
    }
}

/// Prints `value` as JSON, or as `human` text on a terminal.
fn show(value: &Value, json: bool, human: fn(&Value) -> String) {
    if json {
        print_json(value);
    } else {
        print!("{}", human(value));
    }
}

fn show_pretty(value: &Value, json: bool) {
    if json {
        print_json(value);
    } else {
        print_pretty(value);
    }
}

/// Connects to tickhost (this machine's, or `--host`'s over ssh), starting
/// it when needed.
fn connect(runtime: &Path, exe: &Path) -> Result<Client> {
    match remote_cli::host() {
        Some(host) => Client::connect_remote(host, false),
        None => Client::connect_or_start(runtime, exe),
    }
    .map_err(remote_cli::connect_error)
}

fn lost(e: ConnectError) -> anyhow::Error {
    remote_cli::lost(e)
}

/// Sends a request whose success is a JSON value to print.
fn simple(runtime: &Path, exe: &Path, request: ClientRequest) -> Result<Value> {
    value_of(connect(runtime, exe)?.request(request).map_err(lost)?)
}

/// The value of a reply that is not a call's outcome (an error reply is
/// the contract's error).
fn value_of(reply: ClientReply) -> Result<Value> {
    match reply {
        ClientReply::Ok(value) => Ok(value),
        ClientReply::Error(e) => Err(CliError::from_reply(e).into()),
        ClientReply::Call(outcome) => Err(CliError::new(
            "internal",
            format!("tickhost answered with a call outcome: {outcome:?}"),
            1,
        )
        .into()),
    }
}

/// What `open --host` sends.
struct RemoteOpen {
    name: Option<String>,
    shell: bool,
    argv: Vec<String>,
    cwd: Option<PathBuf>,
    history: usize,
    approve: Option<ApprovalPolicy>,
}

/// `open --host`: the Tick runs on the other machine, in `--cwd` (a path
/// there, so absolute) or that user's home, with the environment of the
/// relay there (what a Tick opened there by hand would inherit).
fn open_remote(host: &tickloop_client::ssh::SshHost, open: RemoteOpen) -> Result<Value> {
    if let Some(cwd) = open.cwd.as_ref().filter(|c| !c.is_absolute()) {
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
    let mut client = Client::connect_remote(host, true).map_err(remote_cli::connect_error)?;
    let greeting = client.greeting().cloned();
    let cwd = match (open.cwd, greeting.as_ref().and_then(|g| g.home.clone())) {
        (Some(cwd), _) => cwd,
        (None, Some(home)) => PathBuf::from(home),
        (None, None) => PathBuf::from("/"),
    };
    let request = ClientRequest::Open(OpenRequest {
        name: open.name,
        program: tickloop_proto::wire::ProgramSpec {
            shell: open.shell,
            artifact: None,
            watch: Vec::new(),
            argv: open.argv,
            cwd,
            env: greeting.map(|g| g.env).unwrap_or_default(),
            history: Some(open.history),
            approve: open.approve,
            record: None,
        },
    });
    value_of(client.request(request).map_err(lost)?)
}

/// Prints a call's outcome; the exit code is the outcome's.
fn call_outcome(reply: ClientReply, json: bool) -> Result<i32> {
    let outcome = match reply {
        ClientReply::Call(outcome) => outcome,
        ClientReply::Error(e) => return Err(CliError::from_reply(e).into()),
        ClientReply::Ok(result) => CallOutcome::Result { result },
    };
    let code = outcome.exit_code();
    let value = match &outcome {
        CallOutcome::Result { result } => json!({ "result": result }),
        CallOutcome::NotExecuted { error } => json!({ "error": error, "executed": false }),
        CallOutcome::Executed { error } => json!({ "error": error, "executed": true }),
        CallOutcome::Unknown { reason } => json!({ "unknown": { "reason": reason } }),
    };
    match &outcome {
        CallOutcome::NotExecuted { error } => {
            eprintln!(
                "tickloop: call not executed: {} (code {})",
                error.message, error.code
            )
        }
        CallOutcome::Executed { error } => eprintln!(
            "tickloop: call executed with an error (it may have had effects): {} (code {})",
            error.message, error.code
        ),
        CallOutcome::Unknown { reason } => eprintln!(
            "tickloop: call outcome unknown (it may or may not have run; not retried): {reason}"
        ),
        CallOutcome::Result { .. } => {}
    }
    show_pretty(&value, json);
    Ok(code)
}

/// `watch`: prints each event as one JSON line until every instance ended.
fn watch(runtime: &Path, exe: &Path, ids: Vec<String>, interval: u64) -> Result<i32> {
    let mut client = connect(runtime, exe)?;
    exit_0_at_interrupt();
    client.watch(ids, interval).map_err(lost)?;
    loop {
        match client.next_watch_item().map_err(lost)? {
            WatchItem::Event(event) => {
                let value = match &event {
                    WatchEvent::Delivery(d) => serde_json::to_value(d),
                    WatchEvent::Ended(e) => serde_json::to_value(e),
                }
                .context("cannot encode a watch event")?;
                if !print_json(&value) {
                    // Whoever read our output is gone.
                    return Ok(0);
                }
            }
            WatchItem::Done(ClientReply::Error(e)) => return Err(CliError::from_reply(e).into()),
            WatchItem::Done(_) => return Ok(0),
        }
    }
}

/// `activity ID [--follow]`: the record (JSON: the whole record; text: a
/// line an entry, oldest first); with `--follow`, new entries as they come
/// (JSON: one entry a line), until the instance ends.
fn activity(runtime: &Path, exe: &Path, id: String, follow: bool, json: bool) -> Result<i32> {
    let mut client = connect(runtime, exe)?;
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
            Some(full) => simple(runtime, exe, ClientRequest::List)?
                .as_array()
                .is_some_and(|all| {
                    all.iter()
                        .any(|e| e["id"] == full.as_str() && e["state"] == "ended")
                }),
            None => false,
        };
        let request = ClientRequest::Activity {
            instance: id.clone(),
            after,
        };
        let record: ActivityRecord = match client.request(request).map_err(lost)? {
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

/// `approvals`: the waiting calls as JSON lines; `--watch`: and every call
/// that starts waiting later (each once) until interrupted; `--log ID`: the
/// instance's decisions.
fn approvals(runtime: &Path, exe: &Path, watch: bool, log: Option<String>) -> Result<i32> {
    if let Some(id) = log {
        let entries = simple(runtime, exe, ClientRequest::ApprovalLog { instance: id })?;
        for entry in entries.as_array().into_iter().flatten() {
            if !print_json(entry) {
                return Ok(0);
            }
        }
        return Ok(0);
    }
    if watch {
        exit_0_at_interrupt();
    }
    let mut shown = std::collections::HashSet::new();
    loop {
        let waiting = simple(runtime, exe, ClientRequest::Approvals)?;
        for held in waiting.as_array().into_iter().flatten() {
            let key = format!("{}/{}", held["instance"], held["call"]);
            if shown.insert(key) && !print_json(held) {
                return Ok(0);
            }
        }
        if !watch {
            return Ok(0);
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// Prints one line; `false` when stdout is gone.
fn print_line(line: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// An interrupt ends `watch` with exit 0 (each line is flushed as printed,
/// so nothing is lost).
fn exit_0_at_interrupt() {
    extern "C" fn on_interrupt(_: libc::c_int) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(0) }
    }
    // SAFETY: installs a handler that only calls an async-signal-safe function.
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_interrupt as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// `shutdown`: not running is not an error, and starts nothing.
fn shutdown(runtime: &Path, json: bool) -> Result<i32> {
    let connected = match remote_cli::host() {
        Some(host) => Client::connect_remote_no_start(host),
        None => Client::connect(runtime),
    };
    let mut client = match connected {
        Ok(client) => client,
        Err(e) if e.is_not_running() => {
            show_pretty(
                &json!({"shutdown": true, "closed": 0, "was_running": false}),
                json,
            );
            return Ok(0);
        }
        Err(e) => return Err(remote_cli::connect_error(e)),
    };
    match client.request(ClientRequest::Shutdown).map_err(lost)? {
        ClientReply::Ok(value) => {
            show_pretty(&value, json);
            Ok(0)
        }
        ClientReply::Error(e) => Err(CliError::from_reply(e).into()),
        ClientReply::Call(_) => {
            Err(CliError::new("internal", "unexpected answer to shutdown", 1).into())
        }
    }
}

/// The long option of `open` closest to `typed` (`--aproove` -> none known
/// yet, `--shel` -> `shell`), when one is close enough to be a typo.
fn closest_open_option(typed: &str) -> Option<String> {
    use clap::CommandFactory;
    let typed = typed.trim_start_matches('-');
    let typed = typed.split('=').next().unwrap_or(typed);
    let command = Cli::command();
    let open = command.find_subcommand("open")?;
    open.get_arguments()
        .filter_map(|a| a.get_long())
        .map(|long| (strsim::jaro_winkler(typed, long), long))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, long)| long.to_string())
}
