//! Chaos soak (issue 10): instances under random reads, calls, screens,
//! inputs, lists and watches from several clients at once, while tickhost is
//! killed with SIGKILL, launchers are stopped and continued, and watchers and
//! CLI processes are killed mid-request. Issue 42 adds two faults: a caller
//! killed while its call is held for approval (then approved), and a
//! launcher stopped while a large input is being written to it (the request
//! times out mid-line; the launcher is continued). Issue 39 adds three:
//! tickhost's socket or the whole runtime directory is removed, and the
//! disk under it (a 2 MB tmpfs, where this machine lets the test mount one)
//! is filled for a moment. After the run:
//!
//! Views are real: `tickloop attach` in a PTY (`script`), killed mid-frame.
//!
//! - no command hung (each one is bounded by the harness, and the CLI's own
//!   waits are bounded);
//! - no instance was lost (every one is listed running at the end);
//! - every call was received by its Tick at most once, exactly once when the
//!   CLI said it ran, never when it said it did not, and an unknown outcome
//!   is only ever "at most once" (the Ticks log every request they get);
//! - no held call ran after its caller went away: its approval answered
//!   that it was withdrawn, and its Tick never received it.
//!
//! Where no tmpfs can be mounted (mounting needs root), the full-disk fault
//! is left out and the run says so (`WARNING`) in its output.
//!
//! The short form runs in `cargo test` (5 instances, 120 operations). The
//! long form is the same test with more: `TICKLOOP_SOAK_INSTANCES=20
//! TICKLOOP_SOAK_OPS=3000 cargo test --release --test soak -- --nocapture`
//! (it prints its counts); `TICKLOOP_SOAK_SEED` replays a run.

mod common;

use common::tmpfs::{fill, Tmpfs};
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tickloop_client::Client;
use tickloop_proto::wire::{ClientKind, ClientRequest};

/// A small deterministic generator (xorshift), seeded per thread.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Instances of the short form (`TICKLOOP_SOAK_INSTANCES` sets it).
const INSTANCES: usize = 5;
const DRIVERS: usize = 3;

struct Call {
    instance: usize,
    amount: u64,
    code: i32,
}

#[test]
#[allow(clippy::too_many_lines)] // one scripted scenario, read top to bottom
fn chaos_soak_loses_no_instance_and_runs_no_call_twice() {
    let ops: usize = std::env::var("TICKLOOP_SOAK_OPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(120);
    let seed: u64 = std::env::var("TICKLOOP_SOAK_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1
        });
    let instances: usize = std::env::var("TICKLOOP_SOAK_INSTANCES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(INSTANCES);
    println!(
        "soak: {instances} instances, {ops} operations, seed {seed} (TICKLOOP_SOAK_SEED replays it)"
    );
    let host = Host::new();
    let tmpfs = Tmpfs::mount(host.runtime(), "2m");
    if let Err(why) = &tmpfs {
        println!("soak: WARNING: no full-disk fault in this run: {why}");
    }
    let full_disk = tmpfs.is_ok();
    // Short bounds, so a stopped launcher costs a request 1.5 s, not 10.
    host.start_tickhost_with(&[("TICKLOOP_LAUNCHER_TIMEOUT_MS", "1500")]);
    let ids: Vec<String> = (0..instances)
        .map(|i| {
            host.open_counter(&format!("s{i}"));
            format!("hosted:s{i}")
        })
        .collect();
    // The calls of this one wait for a person: the held calls' instance.
    host.open_asking_counter("held");
    let launchers: Vec<i32> = ids
        .iter()
        .map(|id| {
            host.entry(id).expect("listed")["launcher_pid"]
                .as_i64()
                .unwrap_or(0) as i32
        })
        .collect();

    let next_amount = AtomicU64::new(1_000_000);
    let calls = Mutex::new(Vec::<Call>::new());
    let killed_calls = Mutex::new(Vec::<(usize, u64)>::new());
    // Held calls whose caller was killed: (amount, exit code of the approve).
    let abandoned = Mutex::new(Vec::<(u64, Option<i32>)>::new());
    let requests = AtomicU64::new(0);
    let faults = Mutex::new(BTreeMap::<&'static str, u64>::new());
    let done = AtomicBool::new(false);
    let fault = |name: &'static str| {
        *faults.lock().expect("faults").entry(name).or_default() += 1;
    };

    std::thread::scope(|scope| {
        for d in 0..DRIVERS {
            let (host, ids, calls, next_amount, requests) =
                (&host, &ids, &calls, &next_amount, &requests);
            scope.spawn(move || {
                let mut rng = Rng(seed.wrapping_add(d as u64 * 7919) | 1);
                for _ in 0..ops / DRIVERS {
                    let i = rng.below(instances as u64) as usize;
                    let id = ids[i].as_str();
                    requests.fetch_add(1, Ordering::Relaxed);
                    match rng.below(6) {
                        0 | 1 => {
                            let amount = next_amount.fetch_add(1, Ordering::SeqCst);
                            let args = format!("{{\"amount\":{amount}}}");
                            // `run` is bounded (a hang fails the test).
                            let code = host
                                .run(&["call", id, "increment", &args, "--revision", "1"])
                                .code;
                            calls.lock().expect("calls").push(Call {
                                instance: i,
                                amount,
                                code,
                            });
                        }
                        2 => {
                            host.run(&["read", id]);
                        }
                        3 => {
                            host.run(&["screen", id]);
                        }
                        4 => {
                            host.run(&["input", id, "+"]);
                        }
                        _ => {
                            host.run(&["list"]);
                        }
                    }
                }
            });
        }
        // The faults, until the drivers are done.
        let (host, ids, launchers, killed_calls, next_amount, done, abandoned) = (
            &host,
            &ids,
            &launchers,
            &killed_calls,
            &next_amount,
            &done,
            &abandoned,
        );
        let faulter = scope.spawn(move || {
            let mut rng = Rng(seed ^ 0x9e37_79b9_7f4a_7c15);
            while !done.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(50 + rng.below(250)));
                match rng.below(10) {
                    7 => {
                        let _ = std::fs::remove_file(host.runtime().join("tickhost.sock"));
                        fault("tickhost.sock removed");
                    }
                    8 => {
                        remove_contents(host.runtime());
                        fault("runtime directory emptied");
                    }
                    9 if full_disk => {
                        let (filler, _) = fill(host.runtime());
                        std::thread::sleep(Duration::from_millis(100 + rng.below(400)));
                        let _ = std::fs::remove_file(filler);
                        fault("disk full for a moment");
                    }
                    9 => {}
                    0 => {
                        if let Some(pid) = host.tickhost_pid() {
                            // SAFETY: kill(2) on the tickhost of this test.
                            unsafe { libc::kill(pid, libc::SIGKILL) };
                            fault("tickhost SIGKILL");
                        }
                    }
                    1 => {
                        let pid = launchers[rng.below(instances as u64) as usize];
                        // SAFETY: kill(2) on a launcher of this test.
                        unsafe { libc::kill(pid, libc::SIGSTOP) };
                        std::thread::sleep(Duration::from_millis(100 + rng.below(400)));
                        // SAFETY: as above.
                        unsafe { libc::kill(pid, libc::SIGCONT) };
                        fault("launcher SIGSTOP/SIGCONT");
                    }
                    2 => {
                        let id = &ids[rng.below(instances as u64) as usize];
                        let mut watch = host.command(&["watch", id]).spawn().expect("watch");
                        std::thread::sleep(Duration::from_millis(rng.below(300)));
                        let _ = watch.kill();
                        let _ = watch.wait();
                        fault("watcher killed");
                    }
                    3 => {
                        // A view in a real terminal (`script` gives it a PTY).
                        let id = &ids[rng.below(instances as u64) as usize];
                        let attach = format!("{} attach {id}", tickloop_bin());
                        let mut view = std::process::Command::new("script");
                        view.args(["-qfc", &attach, "/dev/null"])
                            .envs(
                                host.command(&[])
                                    .get_envs()
                                    .filter_map(|(k, v)| Some((k, v?))),
                            )
                            .stdin(std::process::Stdio::piped())
                            .stdout(std::process::Stdio::null())
                            .stderr(std::process::Stdio::null());
                        let mut view = view.spawn().expect("script");
                        std::thread::sleep(Duration::from_millis(50 + rng.below(300)));
                        let _ = view.kill();
                        let _ = view.wait();
                        fault("view killed");
                    }
                    5 => {
                        let amount = next_amount.fetch_add(1, Ordering::SeqCst);
                        let approved = caller_killed_while_held(host, amount);
                        abandoned
                            .lock()
                            .expect("abandoned")
                            .push((amount, approved));
                        fault("caller killed while held");
                    }
                    6 => {
                        let i = rng.below(instances as u64) as usize;
                        launcher_stopped_mid_write(host, &ids[i], launchers[i]);
                        fault("launcher stopped mid-write");
                    }
                    _ => {
                        let i = rng.below(instances as u64) as usize;
                        let amount = next_amount.fetch_add(1, Ordering::SeqCst);
                        let args = format!("{{\"amount\":{amount}}}");
                        let mut call = host
                            .command(&["call", &ids[i], "increment", &args, "--revision", "1"])
                            .spawn()
                            .expect("call");
                        std::thread::sleep(Duration::from_millis(rng.below(200)));
                        let _ = call.kill();
                        let _ = call.wait();
                        killed_calls.lock().expect("killed").push((i, amount));
                        fault("CLI killed mid-call");
                    }
                }
            }
        });
        // Wait for the drivers (every thread but the faulter), then stop it.
        while scope_drivers_running(&requests, ops) {
            std::thread::sleep(Duration::from_millis(20));
        }
        done.store(true, Ordering::SeqCst);
        let _ = faulter.join();
    });

    // Every launcher runs (none left stopped), and no instance was lost.
    for &pid in &launchers {
        // SAFETY: kill(2) on a launcher of this test.
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }
    let list = wait_for("every instance listed running again", || {
        let list = host.list();
        (list.len() == instances + 1 && list.iter().all(|e| e["state"] == "running"))
            .then_some(list)
    });
    assert_eq!(list.len(), instances + 1);
    // Never a second tickhost. One a CLI started in the last moments (its
    // predecessor SIGKILLed) may still be losing its start, waiting on the
    // lock or for the winner's answer, and then exits: wait for that end,
    // and fail if two go on running.
    let find_tickhosts = || {
        tickloop_client::runtime_procs::find(
            host.runtime(),
            tickloop_client::runtime_procs::Role::Tickhost,
        )
    };
    let settled = wait_for_within(
        Duration::from_secs(60),
        "one tickhost left (a second one starting must give up)",
        || {
            let tickhosts = find_tickhosts();
            (tickhosts.len() <= 1).then_some(tickhosts)
        },
    );
    assert_eq!(settled.len(), 1, "tickhosts running: {settled:?}");

    // What each Tick received, by amount.
    let mut received = BTreeMap::<u64, usize>::new();
    let logs = (0..instances)
        .map(|i| format!("s{i}"))
        .chain(["held".to_string()]);
    for name in logs {
        let log = std::fs::read_to_string(host.log_path(&name)).unwrap_or_default();
        for line in log.lines() {
            let Ok(request) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if request["method"] == "tick/call" {
                if let Some(amount) = request["params"]["args"]["amount"].as_u64() {
                    *received.entry(amount).or_default() += 1;
                }
            }
        }
    }
    let mut violations = Vec::new();
    let calls = calls.into_inner().expect("calls");
    let mut by_code = BTreeMap::<i32, u64>::new();
    for call in &calls {
        *by_code.entry(call.code).or_default() += 1;
        let got = received.get(&call.amount).copied().unwrap_or(0);
        let ok = match call.code {
            0 | 4 => got == 1,
            3 => got == 0,
            5 => got <= 1,
            // Refused before anything was sent (tickhost unreachable, the
            // launcher unresponsive): never received.
            1 => got == 0,
            _ => false,
        };
        if !ok {
            violations.push(format!(
                "s{}: call amount {} exited {} and was received {got} times",
                call.instance, call.amount, call.code
            ));
        }
    }
    for (i, amount) in killed_calls.into_inner().expect("killed") {
        let got = received.get(&amount).copied().unwrap_or(0);
        if got > 1 {
            violations.push(format!(
                "s{i}: killed call amount {amount} was received {got} times"
            ));
        }
    }
    for (amount, approve) in abandoned.into_inner().expect("abandoned") {
        let got = received.get(&amount).copied().unwrap_or(0);
        if got > 0 || approve == Some(0) {
            violations.push(format!(
                "held call amount {amount}, its caller killed, was approved with exit {approve:?} and received {got} times"
            ));
        }
    }
    let faults = faults.into_inner().expect("faults");
    println!(
        "soak: {} requests, {} calls (by exit code {by_code:?}), faults {faults:?}, violations {}",
        requests.load(Ordering::SeqCst),
        calls.len(),
        violations.len()
    );
    assert!(violations.is_empty(), "{violations:#?}");
    // Ended before the tmpfs under the runtime directory goes.
    host.ok(&["shutdown"]);
    drop(tmpfs);
}

/// Removes everything in `dir` (a mount point, which itself stays), as a
/// logout's `rm -rf` of the runtime directory does.
fn remove_contents(dir: &std::path::Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
    }
}

/// A `call` held for approval whose CLI is killed (SIGKILL, and reaped:
/// its connection is closed), then approved: the approve's exit code (3,
/// withdrawn), or `None` when the call was never seen held (tickhost was
/// killed meanwhile). Its Tick must never receive it.
fn caller_killed_while_held(host: &Host, amount: u64) -> Option<i32> {
    let args = format!("{{\"amount\":{amount}}}");
    let mut call = host
        .command(&["call", "hosted:held", "increment", &args, "--revision", "1"])
        .spawn()
        .expect("call");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let held = loop {
        let listed = host.run(&["approvals"]);
        let found = listed.stdout.lines().find_map(|line| {
            let held: Value = serde_json::from_str(line).ok()?;
            (held["args"]["amount"].as_u64() == Some(amount))
                .then(|| held["call"].as_str().map(str::to_string))
                .flatten()
        });
        if found.is_some() || std::time::Instant::now() >= deadline {
            break found;
        }
        std::thread::sleep(POLL);
    };
    let _ = call.kill();
    let _ = call.wait();
    let call_id = held?;
    Some(host.run(&["approve", "hosted:held", &call_id]).code)
}

/// A launcher stopped while a 1 MB input is written to it: tickhost stops
/// waiting for the answer (its bound) with the line half written; the
/// launcher is then continued. The link must stay whole.
fn launcher_stopped_mid_write(host: &Host, id: &str, launcher: i32) {
    // SAFETY: kill(2) on a launcher of this test.
    unsafe { libc::kill(launcher, libc::SIGSTOP) };
    if let Ok(mut client) = Client::connect(host.runtime(), ClientKind::Cli) {
        let _ = client.request(ClientRequest::Input {
            instance: id.to_string(),
            text: "x".repeat(1 << 20),
        });
    }
    // SAFETY: as above.
    unsafe { libc::kill(launcher, libc::SIGCONT) };
}

/// Whether the drivers still have operations to do.
fn scope_drivers_running(requests: &AtomicU64, ops: usize) -> bool {
    (requests.load(Ordering::SeqCst) as usize) < (ops / DRIVERS) * DRIVERS
}
