//! What an idle launcher keeps on the heap (issue 51: a hundred idle shells
//! multiply it), counted by a global allocator in this test binary: a real
//! launcher, in-process, running a real bash with Tickloop's shell
//! integration on a real PTY, after its prompt is drawn and nothing more
//! happens. The count covers every thread of the launcher (its runtime,
//! the terminal thread, the PTY's reader and writer) and the harness's one
//! connection (and the harness's runtime, built for the launch).
//!
//! Reserved room of a megabyte or more is counted apart: glibc's malloc
//! maps it fresh, and none of its pages is resident until written. The one
//! there is vte's buffer for synchronized updates (2 MiB, allocated by its
//! parser's constructor, written only while a program holds an update).

mod common;

use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use tickloop_proto::wire::LaunchReport;

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The live bytes of allocations of [`RESERVED`] bytes or more.
static LIVE_RESERVED: AtomicIsize = AtomicIsize::new(0);
/// An allocation this large is mapped fresh by malloc (its mmap threshold
/// starts at 128 KiB): untouched, it costs no resident page.
const RESERVED: usize = 1 << 20;

fn count(size: usize, sign: isize) {
    LIVE.fetch_add(sign * size as isize, Ordering::Relaxed);
    if size >= RESERVED {
        LIVE_RESERVED.fetch_add(sign * size as isize, Ordering::Relaxed);
    }
}

// SAFETY: every call is passed to the system allocator unchanged; only the
// count of live bytes is kept beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size(), 1);
        // SAFETY: same layout, as the caller promised it.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(layout.size(), -1);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(layout.size(), -1);
        count(new_size, 1);
        // SAFETY: as for `realloc` itself.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Live bytes on the heap, and those of them in reserved room.
fn live() -> (isize, isize) {
    (
        LIVE.load(Ordering::Relaxed),
        LIVE_RESERVED.load(Ordering::Relaxed),
    )
}

/// The most an idle shell's launcher may keep on the heap, reserved room
/// apart: 258 kB measured (benches/results/cost-2026-12-06-mem.md), 236 kB
/// since the runtime's event list and two channels' blocks shrank
/// (cost-2026-12-07.md), 197 kB since the connection's buffers, the PTY's
/// read buffer and the input queue's slots are held only while used, 190 kB
/// without tokio's registry of every signal (cost-2026-12-07c.md; under
/// `cargo test --workspace` the tests' own tokio has it again, through the
/// root's dev-dependencies), 87 kB since a quiet screen's 120x30 cells of
/// 24 bytes (86 kB) are parked as compact rows (cost-2026-12-07d.md; 107 kB
/// under `cargo test --workspace`, with that registry).
const IDLE_HEAP_BOUND: isize = 120 * 1024;
/// The most reserved room it may keep: vte's 2 MiB.
const IDLE_RESERVED_BOUND: isize = 2 << 20;

/// One test: the count is process-wide.
#[test]
fn an_idle_shell_s_launcher_keeps_little_on_the_heap() {
    let (_home, dir, spec) = bash_spec("idle-prompt> ");
    let before = live();
    let launched = launch(dir, spec);
    if let LaunchReport::Failed { reason, screen } = &launched.report {
        panic!("the launch failed: {reason}; screen: {screen}");
    }
    let mut host = Host::connect(&launched.socket);
    host.wait_screen("idle-prompt>");
    // What the screen's quiet times give back (the PTY's read buffer a
    // quarter second after the prompt, the screen's cells 2 s after it):
    // waited for, up to WAIT.
    let deadline = std::time::Instant::now() + WAIT;
    let (idle, reserved) = loop {
        let now = live();
        let reserved = now.1 - before.1;
        let idle = now.0 - before.0 - reserved;
        if idle < IDLE_HEAP_BOUND || std::time::Instant::now() >= deadline {
            break (idle, reserved);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    eprintln!("an idle bash's launcher keeps {idle} bytes on the heap, and {reserved} reserved");
    assert!(
        idle < IDLE_HEAP_BOUND,
        "an idle bash's launcher keeps {idle} bytes on the heap (bound {IDLE_HEAP_BOUND})"
    );
    assert!(
        reserved <= IDLE_RESERVED_BOUND,
        "an idle bash's launcher reserves {reserved} bytes in allocations of 1 MiB or more \
         (bound {IDLE_RESERVED_BOUND}): are they written?"
    );
}
