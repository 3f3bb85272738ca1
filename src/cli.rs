//! The command line of docs/cli.md as clap types: [`Cli`] (the options
//! every command takes) and [`Command`], one variant per command; the
//! arguments of the larger commands are their own `...Args` structs.

use crate::{completions, herdr_cli, loop_cli, new};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "tickloop",
    version,
    about = "Host Ticks: terminal programs used by a person on screen and by an agent through the Tick protocol"
)]
pub struct Cli {
    /// Print JSON even when stdout is a terminal.
    #[arg(long, global = true)]
    pub json: bool,
    /// The machine whose Ticks to use, over ssh: [ssh://][USER@]HOST[:PORT]
    /// (docs/remote.md; TICKLOOP_SSH is the ssh command).
    #[arg(
        long = "host",
        global = true,
        env = "TICKLOOP_HOST",
        value_name = "[USER@]HOST[:PORT]"
    )]
    pub host: Vec<String>,
    #[command(subcommand)]
    pub command: Command,
}

// Each command's arguments are built only when it is the one run (or for
// help, completions and the manual page, which build them all): building
// every command's was most of what `tickloop attach` did before its first
// frame, the frame aside.
#[derive(Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Start PROGRAM as a Tick (or, with --shell, a plain terminal program).
    Open(OpenArgs),
    /// Conformance run of PROGRAM as a Tick, in a private tickhost: PASS,
    /// FAIL or NOT CHECKED per rule (exit 1 on any FAIL).
    Check(CheckArgs),
    /// Make a new Tick package, folder NAME (SKILL.md and a program that
    /// passes `check` as made).
    New(NewArgs),
    /// Record instance ID's terminal and protocol traffic into FILE
    /// (asciicast v2) until it ends or Ctrl-C.
    Record {
        id: String,
        /// The new file (default: NAME-UNIXTIME.cast here).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Play a recording in this terminal, or print its protocol timeline.
    Replay(ReplayArgs),
    /// Every instance, running or ended.
    List,
    /// The validated descriptor, as the Tick sent it.
    Describe { id: String },
    /// A fresh `tick/read`.
    Read { id: String },
    /// Call TOOL with ARGS_JSON (default `{}`); exit 0/3/4/5 by outcome.
    Call(CallArgs),
    /// One JSON line per delivery until every watched instance has ended.
    Watch {
        #[arg(required = true)]
        ids: Vec<String>,
        /// Milliseconds between deliveries.
        #[arg(long, default_value_t = 1000)]
        interval: u64,
    },
    /// The Tick's current terminal screen as text (`--json`: rows, cols, cursor, lines, history, images).
    Screen {
        id: String,
        /// Print up to N lines of history before the visible screen.
        #[arg(long, value_name = "N", default_value_t = 0)]
        history: usize,
        /// Write the kept image N (an `index` of `--json`'s `images`) as
        /// PNG to stdout, which must not be a terminal (`> file.png`);
        /// with `--json`, its bytes as the program sent them.
        #[arg(long, value_name = "N")]
        image: Option<u32>,
    },
    /// Type TEXT into the Tick's terminal.
    Input {
        id: String,
        #[arg(allow_hyphen_values = true)]
        text: String,
    },
    /// Press keys by name, as tmux's send-keys names them (Enter, Escape,
    /// Tab, BTab, BSpace, Space, Up, Down, Left, Right, Home, End, PageUp,
    /// PageDown, IC, DC, F1-F12, KP0-KP9, one character; C-, M-, S- before
    /// one), each encoded for the program's current modes.
    Keys {
        id: String,
        #[arg(required = true, allow_hyphen_values = true, value_name = "KEY")]
        keys: Vec<String>,
    },
    /// Wait for text in the output, quiet, the shell's prompt or the end;
    /// print what happened with the screen (exit 124 at the timeout).
    Wait(WaitArgs),
    /// Type COMMAND at a shell's prompt, wait for its end, print its output
    /// and exit with its status (124: still running at the timeout; 125:
    /// Tickloop could not run it, nothing typed).
    Run(RunArgs),
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
    Monitor(MonitorArgs),
    /// Your Ticks in a browser: prints a one-time login URL, serves on
    /// 127.0.0.1 until interrupted (docs/web.md).
    Web(WebArgs),
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
    /// Set who approves what agents do to ID: its mutating calls (POLICY),
    /// their typing into it (--input), their closing it (--close); each
    /// auto, ask or deny.
    #[command(arg_required_else_help = true)]
    ApprovePolicy {
        id: String,
        /// Mutating calls (anyone's).
        #[arg(value_parser = ["auto", "ask", "deny"], required_unless_present_any = ["input", "close"])]
        policy: Option<String>,
        /// An agent typing into it.
        #[arg(long, value_name = "POLICY", value_parser = ["auto", "ask", "deny"])]
        input: Option<String>,
        /// An agent closing it.
        #[arg(long, value_name = "POLICY", value_parser = ["auto", "ask", "deny"])]
        close: Option<String>,
    },
    /// What agents did: with one instance (its requests and their outcomes, updates, views,
    /// subscriptions), or, with no ID, on every instance, newest last.
    Activity {
        /// The instance; none: every instance (running, ended, and forgotten ones whose record is kept).
        id: Option<String>,
        /// Keep printing new entries as they come (with an ID, until the instance ends).
        #[arg(long)]
        follow: bool,
        /// Only entries from then on: a time (RFC 3339, a date, or HH:MM[:SS] today) or a
        /// duration back from now (90s, 10m, 2h, 1d, 1h30m).
        #[arg(long, value_name = "WHEN")]
        since: Option<String>,
        /// Only this agent's actions: claude-code, codex, gemini, opencode, other (an agent
        /// host's shell tool), mcp, loop.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
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
    Relay(RelayArgs),
    /// Serve the agent tools over MCP on stdin/stdout (docs/mcp.md).
    Mcp {
        /// Milliseconds between deliveries (state notifications, instance polling); at least 100.
        #[arg(long, default_value_t = 1000)]
        interval: u64,
        /// Offer MCP revisions up to VERSION only (e.g. 2025-11-25: hosts
        /// that speak 2026-07-28 fall back to `initialize`); default: all,
        /// but up to 2025-11-25 for interactive Claude Code that may be
        /// asked (there a question answered elsewhere leaves its dialog).
        #[arg(long, value_name = "VERSION")]
        max_protocol: Option<String>,
        /// Offer the MCP tasks extension: a Tick call still running after
        /// 2 s, or held for approval, answers a client that declares tasks
        /// with a task handle.
        #[arg(long)]
        tasks: bool,
        /// Which agent hosts are asked about an action held for the person:
        /// auto (those that show the person the question: interactive
        /// Claude Code, Codex in a turn where it asked the person; any other
        /// host that declares elicitation), always (every host that declares
        /// it), never (docs/approval.md).
        #[arg(long, value_name = "WHICH", default_value = "auto")]
        ask_in_host: String,
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
    /// The Loop: bounded time-step runs for an agent session (docs/loop.md).
    #[command(subcommand)]
    Loop(loop_cli::LoopCommand),
    /// Tickloop in Herdr: its plugin, Ticks in Herdr panes, the Monitor overlay (docs/herdr.md).
    #[command(subcommand)]
    Herdr(herdr_cli::HerdrCommand),
}

#[derive(Args)]
#[command(group(clap::ArgGroup::new("until").required(true).args(["text", "quiet", "prompt", "ended"])))]
pub struct WaitArgs {
    pub id: String,
    /// A line of output that arrives from now on matches REGEX (ANSI
    /// sequences taken out; Rust regex syntax).
    #[arg(long, value_name = "REGEX")]
    pub text: Option<String>,
    /// With --text: a match already on the screen counts too.
    #[arg(long, requires = "text")]
    pub screen: bool,
    /// No output for MS milliseconds.
    #[arg(long, value_name = "MS")]
    pub quiet: Option<u64>,
    /// The shell is at its prompt (needs shell integration); right after
    /// an Enter was typed, at the prompt after the line it took.
    #[arg(long)]
    pub prompt: bool,
    /// The program has ended.
    #[arg(long)]
    pub ended: bool,
    /// Seconds to wait before giving up with exit 124.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
}

#[derive(Args)]
pub struct RunArgs {
    pub id: String,
    /// Seconds to wait for its end; then exit 124, and the command keeps running.
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0)]
    pub timeout: f64,
    /// COMMAND, after `--`: one argument is typed as it is (a command line);
    /// several are quoted where the shell would split them.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

#[derive(Args)]
pub struct OpenArgs {
    /// The instance NAME (1-64 of A-Z a-z 0-9 . _ -); default: the
    /// program's name. (`--id` is the same, its older spelling.)
    #[arg(long = "name", visible_alias = "id", value_name = "NAME")]
    pub name: Option<String>,
    /// Working directory of the program (default: the current directory).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Host a plain terminal program, with no protocol (`shell:NAME`).
    #[arg(long)]
    pub shell: bool,
    /// With --shell: start bash, zsh or fish without Tickloop's shell
    /// integration (no `run`, `wait --prompt`, shell state); also
    /// `[shell] integration = false` in ~/.config/tickloop/config.toml.
    #[arg(long, requires = "shell")]
    pub no_integration: bool,
    /// Run the file PATH as the Tick `artifact:NAME` (NAME: --id, else the
    /// file's stem), by its shebang (`python3` for a `.py` with none), in
    /// PATH's directory; each save of PATH starts its new version on the
    /// same terminal.
    #[arg(long, value_name = "PATH", conflicts_with_all = ["shell", "package", "cwd"])]
    pub artifact: Option<PathBuf>,
    /// With --artifact: another file whose saves start a new version, a
    /// glob relative to PATH's directory (`*.json`, `lib/**/*.py`); repeatable.
    #[arg(long = "watch", value_name = "GLOB", requires = "artifact")]
    pub watch: Vec<String>,
    /// Launch the Tick package NAME (`tickloop packages`); ARGs after `--` are appended.
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// Lines of history its screen keeps (0 keeps none; default 2000, or
    /// `history` in ~/.config/tickloop/config.toml).
    #[arg(long, value_name = "LINES")]
    pub history: Option<usize>,
    /// Who approves its mutating calls: auto (nobody), ask (a person, in the
    /// Monitor or with `tickloop approve`), deny (refused). Default: the
    /// package's `approve`, else auto.
    #[arg(long, value_name = "POLICY", value_parser = ["auto", "ask", "deny"])]
    pub approve: Option<String>,
    /// Whether an agent's typing into it waits for you: auto, ask, deny.
    /// Default: ask (`[approval] agent_input` in ~/.config/tickloop/config.toml).
    #[arg(long, value_name = "POLICY", value_parser = ["auto", "ask", "deny"])]
    pub agent_input: Option<String>,
    /// Whether an agent's closing it waits for you: auto, ask, deny.
    /// Default: ask (`[approval] agent_close` in the config file).
    #[arg(long, value_name = "POLICY", value_parser = ["auto", "ask", "deny"])]
    pub agent_close: Option<String>,
    /// Record the session from its start into the new file FILE
    /// (asciicast v2, with the protocol traffic as markers).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Show the new instance at once: `herdr` (a Herdr pane; inside Herdr).
    #[arg(long, value_enum, value_name = "VIEW")]
    pub view: Option<herdr_cli::OpenView>,
    /// PROGRAM [ARG...], after `--`.
    #[arg(
        required_unless_present_any = ["package", "artifact"],
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    pub argv: Vec<String>,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Also call tools with `mutates: true` (never otherwise).
    #[arg(long)]
    pub allow_mutating: bool,
    /// Seed of the generator of tool arguments (default: a new one, printed),
    /// to replay a run.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Check the Tick package NAME (`tickloop packages`); ARGs after `--` are appended.
    #[arg(long, value_name = "NAME")]
    pub package: Option<String>,
    /// PROGRAM [ARG...], after `--`.
    #[arg(
        required_unless_present = "package",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PROGRAM"
    )]
    pub argv: Vec<String>,
}

#[derive(Args)]
pub struct NewArgs {
    /// The package's name and folder (1-64 of A-Z a-z 0-9 - _, from a letter).
    pub name: String,
    /// Python (standard library only) or Rust (on the tickloop-tick crate).
    #[arg(long, value_enum, default_value = "python")]
    pub lang: new::Lang,
    /// With --lang rust: depend on the tickloop-tick crate in this folder
    /// (a Tickloop checkout's tick/); default: the checkout tickloop was
    /// built from while it exists, else the crates.io release.
    #[arg(long, value_name = "DIR")]
    pub tick_path: Option<PathBuf>,
}

#[derive(Args)]
pub struct CallArgs {
    pub id: String,
    pub tool: String,
    /// The arguments, a JSON object.
    #[arg(value_name = "ARGS_JSON")]
    pub args: Option<String>,
    /// The catalog revision the call was made against (`tickloop describe
    /// ID` shows it); a call without one is refused, naming the current.
    #[arg(long)]
    pub revision: Option<String>,
}

#[derive(Args)]
pub struct MonitorArgs {
    /// The instance selected at start (Herdr passes the Tick in focus).
    #[arg(long, env = "TICKLOOP_INSTANCE")]
    pub select: Option<String>,
    /// The prefix key of the overlay (as for attach).
    #[arg(long, value_name = "ctrl+X")]
    pub detach_key: Option<String>,
    /// Open on the selected instance's activity (what agents did with it).
    #[arg(long, env = "TICKLOOP_ACTIVITY", value_parser = clap::builder::BoolishValueParser::new())]
    pub activity: bool,
}

#[derive(Args)]
pub struct WebArgs {
    /// Where to listen (ADDRESS:PORT; port 0 picks a free one). Anything
    /// but loopback needs --tls-cert and --tls-key, or --insecure-listen.
    #[arg(long, value_name = "ADDR:PORT", default_value = tickloop_web::listen::DEFAULT_LISTEN)]
    pub listen: String,
    /// Show everything, change nothing: no typing, resizing, approving,
    /// refusing or closing from the browser.
    #[arg(long)]
    pub read_only: bool,
    /// The TLS certificate chain (PEM) to serve HTTPS with.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Listen beyond loopback WITHOUT TLS: anyone on the network can read
    /// the login, the cookie and every keystroke.
    #[arg(long)]
    pub insecure_listen: bool,
    /// Let this origin in too (`https://ticks.example.com`: a reverse
    /// proxy's public address); may be repeated.
    #[arg(long, value_name = "ORIGIN")]
    pub allow_origin: Vec<String>,
    /// Instead of serving: log every browser of the running server out and
    /// void its unused login URLs.
    #[arg(long, conflicts_with_all = ["login", "listen", "read_only", "tls_cert", "insecure_listen", "allow_origin"])]
    pub revoke: bool,
    /// Instead of serving: print a new one-time login URL of the running
    /// server.
    #[arg(long, conflicts_with_all = ["listen", "read_only", "tls_cert", "insecure_listen", "allow_origin"])]
    pub login: bool,
}

#[derive(Args)]
pub struct ReplayArgs {
    pub file: PathBuf,
    /// Print the protocol messages (and resizes) with their times instead.
    #[arg(long)]
    pub protocol: bool,
    /// Play this many times faster (pauses are cut to 2 s first).
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
}

#[derive(Args)]
pub struct RelayArgs {
    /// `tickhost`, `view:KIND:NAME` or `packages`.
    #[arg(long)]
    pub to: String,
    /// The wire version of the side that started ssh.
    #[arg(long)]
    pub wire: Option<String>,
    /// Also send this side's environment (for `open`).
    #[arg(long)]
    pub env: bool,
}
