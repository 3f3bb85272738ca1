//! A launcher whose screen goes quiet lets go of the read-only pages of
//! its executable it ran or read once (issue 51, `tickloop_client::idle`):
//! a real launcher, in-process, running a real bash on a real PTY. This
//! test binary is the executable: a table of its constants, read once
//! before the launch and never again, is mapped after the read and
//! unmapped once the screen has been quiet; the launcher works on after.

mod common;

use common::*;
use std::os::unix::fs::FileExt;
use tickloop_proto::wire::{LaunchReport, LauncherRequest};

/// 256 KiB of this executable's constants (not zero, so not `.bss`): the
/// kernel maps the 64 KiB around each page it faults in, and the middle
/// of the table has only the table around it.
static TABLE: [u8; 256 * 1024] = [7; 256 * 1024];

/// Whether the page at `address` is in this process's page tables.
fn mapped(address: usize) -> bool {
    let pagemap = std::fs::File::open("/proc/self/pagemap").expect("pagemap");
    let mut entry = [0u8; 8];
    pagemap
        .read_exact_at(&mut entry, (address / 4096 * 8) as u64)
        .expect("pagemap entry");
    u64::from_le_bytes(entry) >> 63 & 1 == 1
}

#[test]
fn a_quiet_launcher_lets_go_of_the_pages_it_read_once_and_works_on() {
    let table = std::hint::black_box(&TABLE);
    let middle = table.as_ptr() as usize + 128 * 1024;
    let sum: u64 = table.iter().map(|&b| u64::from(b)).sum();
    assert!(mapped(middle), "read, so mapped");

    let (_home, dir, spec) = bash_spec("quiet-prompt> ");
    let launched = launch(dir, spec);
    if let LaunchReport::Failed { reason, screen } = &launched.report {
        panic!("the launch failed: {reason}; screen: {screen}");
    }
    let mut host = Host::connect(&launched.socket);
    host.wait_screen("quiet-prompt>");

    // The screen goes quiet a quarter second after the prompt.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while mapped(middle) {
        assert!(
            std::time::Instant::now() < deadline,
            "the launcher's screen went quiet, and the table read once is still mapped"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // What was let go of comes back as it is used.
    host.ok(LauncherRequest::Input {
        text: "echo after-the-$((6*7))-quiet\r".into(),
    });
    host.wait_screen("after-the-42-quiet");
    let again: u64 = table.iter().map(|&b| u64::from(b)).sum();
    assert_eq!(again, sum, "read back from the file unchanged");
}
