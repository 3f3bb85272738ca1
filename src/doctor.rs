//! `tickloop doctor`: checks what a person needs for Tickloop to work and
//! says what to do about each problem. It starts nothing (tickhost is asked
//! only when it runs). A check is `ok`, a `warning` (something optional, or
//! that fixes itself) or an `error` (something is broken: exit 1).

use serde_json::{json, Value};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use tickloop_client::paths::RuntimeDir;
use tickloop_client::{Client, ClientError};
use tickloop_proto::wire::{ClientKind, LauncherRecord};

/// How a check came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Ok,
    Warning,
    Error,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Error => "error",
        }
    }
}

/// One check: what was looked at, what was found, what to do.
#[derive(Clone, Debug)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &str, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
        }
    }

    fn problem(
        name: &str,
        status: Status,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            status,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "check": self.name,
            "status": self.status.as_str(),
            "detail": self.detail,
            "fix": self.fix,
        })
    }
}

/// Every check, in the order printed.
pub fn run(runtime: &Path) -> Vec<Check> {
    let mut checks = vec![this_executable()];
    checks.push(runtime_dir(runtime));
    checks.push(tickhost(runtime));
    checks.extend(launchers(runtime));
    checks.extend(packages());
    checks.push(herdr());
    checks.push(ssh());
    checks.push(terminal());
    checks
}

/// Whether any check says something is broken.
pub fn broken(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == Status::Error)
}

/// The JSON report: `{"ok", "errors", "warnings", "checks": [...]}`.
pub fn to_json(checks: &[Check]) -> Value {
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    json!({
        "ok": !broken(checks),
        "errors": count(Status::Error),
        "warnings": count(Status::Warning),
        "checks": checks.iter().map(Check::to_json).collect::<Vec<_>>(),
    })
}

/// The report on a terminal: a line a check, the fix under it.
pub fn text(checks: &[Check]) -> String {
    let mut out = String::new();
    for c in checks {
        let mark = match c.status {
            Status::Ok => "ok     ",
            Status::Warning => "warning",
            Status::Error => "ERROR  ",
        };
        out.push_str(&format!("{mark}  {}: {}\n", c.name, c.detail));
        if let Some(fix) = &c.fix {
            out.push_str(&format!("         -> {fix}\n"));
        }
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    out.push_str(&match (count(Status::Error), count(Status::Warning)) {
        (0, 0) => "Everything looks fine.\n".to_string(),
        (0, w) => format!("Nothing broken; {w} warning(s).\n"),
        (e, w) => format!("{e} problem(s) to fix, {w} warning(s).\n"),
    });
    out
}

/// The `tickloop` on PATH (what MCP clients and Herdr run) is this one.
fn this_executable() -> Check {
    let name = "tickloop on PATH";
    let me = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
    match tickloop_packages::find_command("tickloop") {
        None => Check::problem(
            name,
            Status::Warning,
            "no `tickloop` on PATH (MCP clients, Herdr and the completions run it by name)",
            "add the folder of this executable to PATH (`cargo install` puts it in ~/.cargo/bin)",
        ),
        Some(found) => {
            let found_real = found.canonicalize().unwrap_or_else(|_| found.clone());
            if me.as_deref().is_some_and(|me| me != found_real) {
                Check::problem(
                    name,
                    Status::Warning,
                    format!(
                        "`tickloop` on PATH is {}, not this executable ({})",
                        found.display(),
                        me.map(|m| m.display().to_string()).unwrap_or_default()
                    ),
                    "install this build (`cargo install --path .`) or put its folder first on PATH",
                )
            } else {
                Check::ok(name, found.display().to_string())
            }
        }
    }
}

/// The runtime directory: ours, 0700, and short enough for socket paths.
fn runtime_dir(runtime: &Path) -> Check {
    let name = "runtime directory";
    let meta = match std::fs::symlink_metadata(runtime) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Check::ok(
                name,
                format!(
                    "{} (not created yet; the first command creates it, mode 0700)",
                    runtime.display()
                ),
            )
        }
        Err(e) => {
            return Check::problem(
                name,
                Status::Error,
                format!("cannot read {}: {e}", runtime.display()),
                "set TICKLOOP_RUNTIME_DIR to a private directory of yours",
            )
        }
    };
    if !meta.is_dir() {
        return Check::problem(
            name,
            Status::Error,
            format!("{} is not a directory", runtime.display()),
            "remove it, or set TICKLOOP_RUNTIME_DIR elsewhere",
        );
    }
    let uid = tickloop_client::paths::current_uid();
    if meta.uid() != uid {
        return Check::problem(
            name,
            Status::Error,
            format!(
                "{} belongs to uid {}, not you (uid {uid})",
                runtime.display(),
                meta.uid()
            ),
            "remove it (as its owner), or set TICKLOOP_RUNTIME_DIR to a directory of yours",
        );
    }
    if let Err(e) = RuntimeDir::at(runtime).check_socket_path(&RuntimeDir::at(runtime).socket()) {
        return Check::problem(
            name,
            Status::Error,
            e.to_string(),
            "set TICKLOOP_RUNTIME_DIR to a shorter path",
        );
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode != 0o700 {
        return Check::problem(
            name,
            Status::Warning,
            format!("{} has mode {mode:03o}, not 0700", runtime.display()),
            format!(
                "chmod 700 {} (tickhost also tightens it when it starts)",
                runtime.display()
            ),
        );
    }
    Check::ok(name, format!("{} (yours, mode 0700)", runtime.display()))
}

/// tickhost: running (and of this build) or not; never started here.
fn tickhost(runtime: &Path) -> Check {
    let name = "tickhost";
    if std::env::var_os("TICKLOOP_CLIENT_TIMEOUT_MS").is_none() {
        // Single-threaded here: a stopped tickhost must not hold doctor long.
        std::env::set_var("TICKLOOP_CLIENT_TIMEOUT_MS", "3000");
    }
    let pid_file = RuntimeDir::at(runtime).pid_file();
    match Client::connect(runtime, ClientKind::Cli) {
        Ok(client) => Check::ok(
            name,
            format!("running, wire version {}", client.server_version()),
        ),
        Err(ClientError::NotRunning { .. }) => Check::ok(
            name,
            "not running (the next command that needs it starts it)",
        ),
        Err(ClientError::Refused(why)) => Check::problem(
            name,
            Status::Error,
            format!("a tickhost of another build runs: {why}"),
            format!(
                "close its instances with that build's `tickloop shutdown`, or kill the pid in {}",
                pid_file.display()
            ),
        ),
        Err(ClientError::Timeout(_)) => Check::problem(
            name,
            Status::Error,
            "tickhost does not answer (stopped or wedged)",
            format!(
                "`kill -CONT` the pid in {}, or kill it; the next command starts a new one",
                pid_file.display()
            ),
        ),
        Err(e) => Check::problem(
            name,
            Status::Error,
            e.to_string(),
            format!("see {}", RuntimeDir::at(runtime).log_file().display()),
        ),
    }
}

/// Instance folders whose launcher process is gone without an end, and
/// folders kept for no recorded instance.
fn launchers(runtime: &Path) -> Vec<Check> {
    let name = "launchers";
    let folders = RuntimeDir::at(runtime).instance_folders();
    if folders.is_empty() {
        return vec![Check::ok(name, "none recorded")];
    }
    let mut checks = Vec::new();
    let mut live = 0;
    for (id, files) in folders {
        let text = match std::fs::read_to_string(&files.record) {
            Ok(text) => text,
            // An open in progress has its log and no record yet; a folder
            // with a last screen or activity and no record is a leftover.
            Err(_) if !files.screen.exists() && !files.activity.exists() => continue,
            Err(_) => {
                checks.push(Check::problem(
                    name,
                    Status::Warning,
                    format!(
                        "{} was kept for {id}, no longer recorded ({} is gone)",
                        files.folder.display(),
                        files.record.display()
                    ),
                    format!("remove {}", files.folder.display()),
                ));
                continue;
            }
        };
        let record: LauncherRecord = match serde_json::from_str(&text) {
            Ok(record) => record,
            Err(e) => {
                checks.push(Check::problem(
                    name,
                    Status::Warning,
                    format!("unreadable launcher record {}: {e}", files.record.display()),
                    format!(
                        "`tickloop close {id}` forgets it (or remove {})",
                        files.folder.display()
                    ),
                ));
                continue;
            }
        };
        if record.status.ended.is_some() || view_herdr::state::pid_alive(record.launcher_pid) {
            live += 1;
            continue;
        }
        checks.push(Check::problem(
            name,
            Status::Warning,
            format!(
                "{}: its launcher (pid {}) is gone without recording an end",
                record.instance, record.launcher_pid
            ),
            format!(
                "`tickloop close {}` forgets it (or remove {})",
                record.instance,
                files.folder.display()
            ),
        ));
    }
    if checks.is_empty() {
        checks.push(Check::ok(name, format!("{live} recorded, none lost")));
    }
    checks
}

/// Each package's prerequisites, and packages that could not be read.
fn packages() -> Vec<Check> {
    let (found, problems) = tickloop_packages::discover();
    let mut checks: Vec<Check> = problems
        .iter()
        .map(|p| {
            Check::problem(
                "packages",
                Status::Error,
                p.to_string(),
                "fix or remove that package folder (`tickloop packages` lists what was found)",
            )
        })
        .collect();
    if found.is_empty() && problems.is_empty() {
        checks.push(Check::problem(
            "packages",
            Status::Warning,
            "no packages found",
            "`tickloop packages` shows where it looked",
        ));
    }
    for p in &found {
        let name = format!("package {}", p.name);
        let missing = p.missing();
        if missing.is_empty() {
            checks.push(Check::ok(
                &name,
                format!(
                    "ready ({} package in {})",
                    p.source.as_str(),
                    p.dir.display()
                ),
            ));
        } else {
            let mut fix: Vec<String> = missing
                .commands
                .iter()
                .map(|c| format!("install `{c}`"))
                .collect();
            fix.extend(missing.env.iter().map(|e| format!("set {e}")));
            if let Some(login) = &p.login {
                fix.push(login.clone());
            }
            checks.push(Check::problem(
                &name,
                Status::Warning,
                format!("cannot open: {missing}"),
                fix.join("; "),
            ));
        }
    }
    checks
}

/// Herdr on PATH, and the Tickloop plugin linked and enabled in it.
fn herdr() -> Check {
    let name = "herdr";
    let env = view_herdr::herdr::HerdrEnv::from_env();
    let Ok(bin) = view_herdr::herdr::resolve_bin(&env.bin) else {
        return Check::ok(name, "Herdr not found on PATH (optional: docs/herdr.md)");
    };
    match view_herdr::commands::linked_plugin(&env) {
        Ok(Some(plugin)) if plugin.enabled => Check::ok(
            name,
            format!(
                "{}; plugin linked from {}",
                bin.display(),
                plugin.root.display()
            ),
        ),
        Ok(Some(_)) => Check::problem(
            name,
            Status::Warning,
            "the Tickloop plugin is linked but disabled",
            "`herdr plugin enable tickloop`",
        ),
        Ok(None) => Check::problem(
            name,
            Status::Warning,
            format!("{} has no Tickloop plugin linked", bin.display()),
            "`tickloop herdr install`",
        ),
        Err(e) => Check::problem(
            name,
            Status::Warning,
            format!("cannot ask Herdr for its plugins: {}", e.user_message()),
            "check that `herdr plugin list --json` works",
        ),
    }
}

/// `ssh`, for Ticks on other machines.
fn ssh() -> Check {
    match tickloop_packages::find_command("ssh") {
        Some(path) => Check::ok("ssh", path.display().to_string()),
        None => Check::problem(
            "ssh",
            Status::Warning,
            "`ssh` not found on PATH (needed only to run Ticks on other machines)",
            "install an OpenSSH client (Debian: `apt-get install openssh-client`)",
        ),
    }
}

/// TERM and colour support, for attach and the Monitor.
fn terminal() -> Check {
    let name = "terminal";
    let term = std::env::var("TERM").unwrap_or_default();
    let colorterm = std::env::var("COLORTERM").unwrap_or_default();
    if term.is_empty() || term == "dumb" {
        return Check::problem(
            name,
            Status::Warning,
            format!(
                "TERM is {}: attach and the Monitor need a real terminal",
                if term.is_empty() { "unset" } else { "dumb" }
            ),
            "run them in a terminal emulator that sets TERM (e.g. xterm-256color)",
        );
    }
    let colours = if matches!(colorterm.as_str(), "truecolor" | "24bit") {
        "24-bit colour (COLORTERM)"
    } else if term.contains("256color") {
        "256 colours"
    } else {
        "basic colours (set COLORTERM=truecolor if your terminal has 24-bit colour)"
    };
    Check::ok(name, format!("TERM={term}, {colours}"))
}
