//! `tickloop check -- PROGRAM [ARGS]`: a conformance run of one Tick as the
//! host sees it (issue 18, part 1; issue 32: every tool called, shutdown as
//! spec 4.5 states it).
//!
//! It starts a private tickhost in a fresh temporary runtime directory (so
//! nothing touches the user's instances), opens PROGRAM there exactly as
//! `tickloop open` does (PTY, pipes, the caller's environment), drives it
//! through [`tickloop_client::Client`] — describe, read, call, list — plus
//! a view connection of its own on the launcher's socket (the attach
//! protocol) to resize the PTY, and shuts that tickhost down (also when
//! interrupted). Tools are called with arguments made from their
//! `input_schema` by a seeded generator ([`args`]; the seed is printed and
//! `--seed` replays it). The shutdown rules start PROGRAM again on runs of
//! their own ([`termination`]). Each rule gives PASS, FAIL (the spec
//! section, what was seen, a one-line fix) or NOT CHECKED (why). Calls to
//! `mutates: true` tools are made only with `--allow-mutating`; calls the
//! host refuses before writing them to the Tick (unknown tool, bad args, a
//! stale revision) are made on non-mutating tools unless it is given.
//!
//! Timing thresholds (read promptness 2 s, the 2 s SIGTERM grace, 10 s for
//! an exit after stdin EOF, a 1 s window around the resize, 5 s for an
//! ended session to be listed) are the rules' own and generous; tests
//! assert verdicts, never durations.

mod args;
mod finding;
mod probe;
mod rule;
mod rules;
mod termination;
mod tool_calls;

use anyhow::{Context, Result};
use finding::{Finding, Verdict};
use probe::Probe;
use rules::{REPORTED, RULES};
use std::path::{Path, PathBuf};
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientRequest};

/// What `tickloop check` was asked.
pub struct Options {
    pub json: bool,
    pub allow_mutating: bool,
    /// The argument generator's seed (`None`: a new one, printed).
    pub seed: Option<u64>,
    pub argv: Vec<String>,
}

/// The private tickhost: shut down and its directory removed on drop.
struct PrivateHost {
    dir: PathBuf,
}

impl Drop for PrivateHost {
    fn drop(&mut self) {
        if let Ok(mut client) = Client::connect(&self.dir, ClientKind::Cli) {
            let _ = client.request(ClientRequest::Shutdown);
        }
        // A launcher still starting when tickhost shut down outlives it (as
        // launchers do); SIGTERM makes it end its Tick and exit.
        terminate_private_processes(&self.dir);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// SIGTERMs every process of this user whose environment names `dir` as
/// its `TICKLOOP_RUNTIME_DIR`: only the private tickhost and its launchers
/// (Ticks do not get `TICKLOOP_` variables), since `dir` is unique.
fn terminate_private_processes(dir: &Path) {
    let wanted = format!("TICKLOOP_RUNTIME_DIR={}", dir.display()).into_bytes();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if pid == std::process::id() as libc::pid_t {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == wanted.as_slice())
        {
            // SAFETY: kill(2) of a process of this check's own private runtime.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
        }
    }
}

/// The write end of the pipe the interrupt handler writes to (-1: none).
static INTERRUPT_PIPE: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);

/// On SIGINT, SIGTERM or SIGHUP, shuts the private tickhost down (closing
/// the Tick) and removes its directory before exiting 130, so an
/// interrupted check leaves nothing behind. The handler only writes a byte
/// to a pipe; a thread does the rest.
fn clean_up_on_interrupt(dir: PathBuf) {
    use std::io::Read;
    use std::os::fd::FromRawFd;
    extern "C" fn on_signal(_: libc::c_int) {
        let fd = INTERRUPT_PIPE.load(std::sync::atomic::Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: write is async-signal-safe; the buffer is a static byte.
            unsafe {
                libc::write(fd, b"x".as_ptr().cast(), 1);
            }
        }
    }
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe fills the two-element array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    INTERRUPT_PIPE.store(fds[1], std::sync::atomic::Ordering::SeqCst);
    // SAFETY: fds[0] is the read end just created, owned by this File alone.
    let mut read_end = unsafe { std::fs::File::from_raw_fd(fds[0]) };
    std::thread::spawn(move || {
        let mut byte = [0u8; 1];
        if read_end.read_exact(&mut byte).is_ok() {
            termination::kill_running();
            drop(PrivateHost { dir });
            eprintln!("tickloop: check interrupted; its private tickhost was shut down");
            std::process::exit(130);
        }
    });
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: installs a handler that only calls an async-signal-safe function.
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

/// Runs the check; the exit code is 1 when a rule failed.
pub fn run(exe: &Path, options: Options) -> Result<i32> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    // Short and in /tmp: socket paths must stay under 108 bytes.
    let dir = PathBuf::from("/tmp").join(format!("tlcheck-{}-{nanos:x}", std::process::id()));
    tickloop_client::paths::RuntimeDir::ensure(&dir)
        .with_context(|| format!("cannot make the private runtime {}", dir.display()))?;
    let host = PrivateHost { dir };
    clean_up_on_interrupt(host.dir.clone());
    let seed = options
        .seed
        .unwrap_or(u64::from(nanos) ^ u64::from(std::process::id()) << 32);
    if options.json {
        eprintln!("tickloop check: seed {seed} (replay with --seed {seed})");
    } else {
        println!("seed {seed} (replay with --seed {seed})");
    }
    let findings = run_rules(exe, &host.dir, &options, seed)?;
    drop(host);
    let mut failed = false;
    for finding in &findings {
        failed |= finding.result == Verdict::Fail;
        if options.json {
            let line = serde_json::to_string(finding).context("cannot encode a finding")?;
            println!("{line}");
        } else {
            println!("{}", text_line(finding));
        }
    }
    if !options.json {
        let count = |v| findings.iter().filter(|f| f.result == v).count();
        println!(
            "{} passed, {} failed, {} not checked",
            count(Verdict::Pass),
            count(Verdict::Fail),
            count(Verdict::NotChecked)
        );
    }
    Ok(if failed { 1 } else { 0 })
}

fn text_line(f: &Finding) -> String {
    let verdict = match f.result {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::NotChecked => "NOT CHECKED",
    };
    let mut line = format!(
        "{verdict:<12}{:<20}(spec {}) {}",
        f.rule, f.section, f.detail
    );
    if let Some(fix) = &f.fix {
        line.push_str(&format!("\n{:32}fix: {fix}", ""));
    }
    line
}

/// Opens the Tick in the private tickhost of `dir` and runs every rule on
/// it; the findings in the order they are reported.
fn run_rules(exe: &Path, dir: &Path, options: &Options, seed: u64) -> Result<Vec<Finding>> {
    let mut found = match Probe::open(exe, dir, &options.argv, options.allow_mutating, seed)? {
        Ok(mut probe) => RULES
            .iter()
            .map(|rule| (rule.check)(rule, &mut probe))
            .collect::<Result<Vec<_>>>()?,
        Err(failed) => std::iter::once(failed)
            .chain(
                RULES[1..]
                    .iter()
                    .map(|rule| rule.not_checked("the Tick did not initialize")),
            )
            .collect(),
    };
    found.sort_by_key(|f| REPORTED.iter().position(|rule| *rule == f.rule));
    Ok(found)
}
