//! Several instances per launcher process, measured (issue 40): what N idle
//! shell instances cost when one process runs all their launchers (the
//! launcher's own code, `launcher::run`, N times on one runtime, as tests
//! run it in-process) beside N launcher processes (`tickloop open` through
//! tickhost, as Tickloop runs them). Both run `sleep`, wait for the spare
//! history rows to be given back, then sum PSS and private dirty memory
//! from `/proc/PID/smaps_rollup`.
//!
//! This measures the alternative before building it: a process per
//! instance is what isolates a Tick's crash, a stuck runtime or a leak to
//! that Tick (`benches/results/cost-2026-12-03.md` says which is chosen and why).
//!
//! Run: `cargo bench --bench multi_instance` (options after `--`: `-n N`,
//! default 100). The last line of stdout is one JSON object.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tickloop_proto::wire::{LaunchReport, LaunchSpec, ProgramSpec};

const TICKLOOP: &str = env!("CARGO_BIN_EXE_tickloop");

fn rollup(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("Pss:"), field("Private_Dirty:"))
}

/// The pids whose parent is `parent`.
fn children(parent: u32) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = stat.rsplit_once(')')?.1.to_string();
                    rest.split_whitespace().nth(1)?.parse::<u32>().ok()
                })
                == Some(parent)
        })
        .collect()
}

fn spec(dir: &Path, i: usize) -> LaunchSpec {
    LaunchSpec {
        instance: format!("shell:idle{i}"),
        program: ProgramSpec {
            shell: true,
            argv: vec!["sleep".into(), "100000".into()],
            cwd: dir.to_path_buf(),
            env: vec![(
                "PATH".into(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            )],
            ..ProgramSpec::default()
        },
        socket: dir.join("l").join(format!("shell-idle{i}.sock")),
        init_timeout_ms: None,
        call_timeout_ms: None,
    }
}

/// N launchers in this process: returns (PSS, private dirty) of the whole
/// process in kB once all are up and settled, and of the process before.
fn in_one_process(n: usize, dir: &Path) -> ((u64, u64), (u64, u64)) {
    let before = rollup(std::process::id());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<bool>();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let specs: Vec<LaunchSpec> = (0..n).map(|i| spec(dir, i)).collect();
    let handle = std::thread::spawn(move || {
        runtime.block_on(async move {
            let mut tasks = Vec::new();
            for spec in specs {
                let tx = ready_tx.clone();
                tasks.push(tokio::spawn(Box::pin(launcher::run(
                    spec,
                    Box::new(move |report: &LaunchReport| {
                        let _ = tx.send(matches!(report, LaunchReport::Ready { .. }));
                    }),
                ))));
            }
            for task in tasks {
                let _ = task.await;
            }
        });
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut ready = 0;
    while ready < n && Instant::now() < deadline {
        if let Ok(true) = ready_rx.recv_timeout(Duration::from_secs(5)) {
            ready += 1;
        }
    }
    assert_eq!(ready, n, "every in-process launcher came up");
    std::thread::sleep(Duration::from_secs(6));
    let after = rollup(std::process::id());
    drop(handle);
    (before, after)
}

/// N launcher processes under one tickhost: summed (PSS, private dirty) kB.
fn as_processes(n: usize, runtime: &Path) -> (u64, u64) {
    let run = |args: &[&str]| {
        let out = Command::new(TICKLOOP)
            .args(args)
            .env("TICKLOOP_RUNTIME_DIR", runtime)
            .output()
            .expect("tickloop runs");
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    for i in 0..n {
        run(&[
            "open",
            "--shell",
            "--id",
            &format!("idle{i}"),
            "--",
            "sleep",
            "100000",
        ]);
    }
    std::thread::sleep(Duration::from_secs(6));
    let list: serde_json::Value = serde_json::from_slice(&run(&["list"])).expect("list JSON");
    let mut total = (0, 0);
    for item in list.as_array().into_iter().flatten() {
        if let Some(pid) = item["launcher_pid"].as_u64() {
            let (pss, dirty) = rollup(pid as u32);
            total = (total.0 + pss, total.1 + dirty);
        }
    }
    run(&["shutdown"]);
    total
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = args
        .iter()
        .position(|a| a == "-n")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(100usize);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let procs_dir: PathBuf = dir.path().join("procs");
    std::fs::create_dir_all(&procs_dir).expect("a runtime directory");
    let processes = as_processes(n, &procs_dir);
    let one_dir = dir.path().join("one");
    std::fs::create_dir_all(&one_dir).expect("a directory");
    let (before, after) = in_one_process(n, &one_dir);
    let one = (
        after.0.saturating_sub(before.0),
        after.1.saturating_sub(before.1),
    );
    println!("{n} idle shell instances (sleep), memory of their launchers, kB");
    println!("                            PSS    private dirty   PSS an instance");
    println!(
        "  a process each        {:>8} {:>16} {:>17}",
        processes.0,
        processes.1,
        processes.0 / n as u64
    );
    println!(
        "  all in one process    {:>8} {:>16} {:>17}   (the process: {} kB before, {} kB after)",
        one.0,
        one.1,
        one.0 / n as u64,
        before.0,
        after.0
    );
    println!(
        "{}",
        serde_json::json!({
            "instances": n,
            "process_each": {"pss_kib": processes.0, "private_dirty_kib": processes.1},
            "one_process": {"pss_kib": one.0, "private_dirty_kib": one.1,
                            "process_before_pss_kib": before.0, "process_after_pss_kib": after.0},
        })
    );
    // The in-process launchers' programs (this process's children): ended
    // by their pids, then this process, which ends the launchers with it.
    for pid in children(std::process::id()) {
        // SAFETY: a signal to a child of this process, by its pid.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    std::process::exit(0);
}
