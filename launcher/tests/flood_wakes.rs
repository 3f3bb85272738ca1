//! A flood of output must not wake the instance's event loop for every
//! chunk the terminal thread applies (issue 51): each wake took a core
//! from the program and the keeper on a two-core machine. The loop hears of
//! output at most about once a second (the status it publishes for
//! output); what it publishes then carries the time of the last output.
//!
//! Counted as the voluntary context switches of the launcher's one runtime
//! thread, run as the `tickloop __launcher` process runs it, in a test
//! binary of its own (nothing else runs on that thread). The program waits
//! on a FIFO before its flood and says it is over through another, so the
//! count covers the flood alone, and nothing polls the launcher meanwhile.

mod common;

use common::*;
use std::ffi::CString;
use std::path::Path;

const RUNTIME_THREAD: &str = "flood-launcher";
/// The flood: 16 MiB, which the PTY hands over in chunks of at most 4 KiB.
const FLOOD_BYTES: usize = 16 << 20;
const CHUNKS_AT_LEAST: u64 = (FLOOD_BYTES / 4096) as u64;

/// The voluntary context switches of this process's thread named `name`.
fn voluntary_switches(name: &str) -> u64 {
    let mut found = None;
    for task in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
        let task = task.expect("a task").path();
        let Ok(comm) = std::fs::read_to_string(task.join("comm")) else {
            continue;
        };
        if comm.trim_end() != name {
            continue;
        }
        let status = std::fs::read_to_string(task.join("status")).expect("the thread's status");
        let switches = status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("voluntary_ctxt_switches");
        assert!(found.is_none(), "two threads named {name}");
        found = Some(switches);
    }
    found.unwrap_or_else(|| panic!("no thread named {name}"))
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.to_str().expect("utf-8 path")).expect("no NUL");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o600) },
        0,
        "mkfifo {path:?}"
    );
}

#[test]
fn a_flood_wakes_the_event_loop_about_once_a_second_not_for_every_chunk() {
    let fifos = tempfile::tempdir().expect("fifos");
    let (go, over) = (fifos.path().join("go"), fifos.path().join("over"));
    mkfifo(&go);
    mkfifo(&over);
    let script = format!(
        "read x < '{}'; head -c {FLOOD_BYTES} /dev/zero | tr '\\0' x; echo > '{}'; exec sleep 600",
        go.display(),
        over.display()
    );
    let (dir, spec) = spec("shell:flood", true, &["sh", "-c", &script]);
    let launched = launch_on_one_thread(dir, spec, RUNTIME_THREAD);
    if let tickloop_proto::wire::LaunchReport::Failed { reason, screen } = &launched.report {
        panic!("the launch failed: {reason}; screen: {screen}");
    }
    let mut host = Host::connect(&launched.socket);
    let before = voluntary_switches(RUNTIME_THREAD);
    let started = now_millis();
    // Opening a FIFO blocks until the other side opens it: these two are
    // the start of the flood and its end.
    std::fs::write(&go, "go\n").expect("start the flood");
    std::fs::read(&over).expect("the flood's end");
    let wakes = voluntary_switches(RUNTIME_THREAD) - before;
    eprintln!(
        "the launcher's runtime thread woke {wakes} times for {CHUNKS_AT_LEAST} chunks or more"
    );
    assert!(
        wakes < CHUNKS_AT_LEAST / 16,
        "the launcher's runtime thread woke {wakes} times during a flood of {CHUNKS_AT_LEAST} \
         chunks or more: is something woken for every chunk?"
    );
    // The changes it did not hear of are published all the same, with the
    // time of the flood's output.
    host.wait_status(|s| {
        s.last_output_at
            .as_deref()
            .and_then(tickloop_client::clock::unix_millis)
            .is_some_and(|at| at >= started)
    });
}

fn now_millis() -> i128 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970");
    i128::try_from(since.as_millis()).expect("in range")
}
