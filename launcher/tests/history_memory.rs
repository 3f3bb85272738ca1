//! What the screen keeper costs on the heap (issue 40), counted by a global
//! allocator in this test binary: the alternate screen, allocated when a
//! program first uses it; the first line that scrolls off; a full history
//! of log lines. alacritty alone allocated the alternate screen up front
//! (86 kB at 120x30), took 2.88 MB for the first scrolled-off line (1000
//! rows of 120 cells of 24 bytes, allocated at once) and 5.8 MB for 2,000
//! lines of history at 120 columns.

use launcher::emulator::Emulator;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is passed to the system allocator unchanged; only the
// count of live bytes is kept beside it.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: same layout, as the caller promised it.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as for `realloc` itself.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// Every case in one test: the count is process-wide, and the test harness
/// runs tests on threads of their own.
#[test]
fn the_alternate_screen_the_first_scroll_and_a_full_history_cost_little() {
    let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
    // A resize before any use leaves the alternate screen unallocated.
    emu.resize(30, 100);
    emu.resize(30, 120);
    let before = live();
    emu.feed(b"\x1b[?1049h");
    let alt = live() - before;
    assert!(
        alt >= 30 * 120 * 24,
        "entering the alternate screen allocated only {alt} bytes: was it there already?"
    );
    emu.feed(b"\x1b[?1049l");
    for i in 0..29 {
        emu.feed(format!("line {i}\r\n").as_bytes());
    }
    emu.snapshot();
    let before = live();
    // The first lines scroll off.
    emu.feed(b"line 29\r\nline 30\r\n");
    let first = live() - before;
    assert_eq!(emu.history_len(), 2);
    assert!(
        first < 256 * 1024,
        "the first line of history took {first} bytes of heap"
    );

    // 5,000 coloured log lines of 80 to 100 characters: 2,000 kept.
    for i in 0..5000 {
        let line = format!(
            "\x1b[3{}m2026-12-03T10:{:02}:{:02}Z\x1b[0m worker-{} handled request {i} in {} ms: {}\r\n",
            i % 8,
            i / 60 % 60,
            i % 60,
            i % 7,
            i % 97,
            "ok ".repeat(10 + i % 7)
        );
        emu.feed(line.as_bytes());
    }
    assert_eq!(emu.history_len(), 2000);
    emu.release_spare_rows();
    let full = live() - before;
    // alacritty's cells for 2,000 lines at 120 columns: 5.76 MB.
    assert!(
        full < 1024 * 1024,
        "2,000 lines of history took {full} bytes of heap"
    );
    eprintln!("first line of history: {first} B; 2,000 lines: {full} B");
}
