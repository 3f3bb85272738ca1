//! The cost of keeping images (issue 52), in the keeper alone (no PTY, no
//! process: the terminal thread's work on each chunk it reads):
//!
//! 1. plain output (a log, a fifth of its lines coloured) fed to the
//!    emulator directly and through the image filter: what the filter
//!    costs output that has no images;
//! 2. a sixel animation (frames of a 200x120 sixel drawn at the same place,
//!    `ESC [ H` before each) through the filter and the emulator: frames
//!    and MB a second, and what is kept after;
//! 3. memory per image: the bytes kept for one image beside its sequence.
//!
//! tmux cannot be the baseline here: Debian's tmux 3.3a is built without
//! sixel (`strings /usr/bin/tmux | grep -ci sixel` is 0), and tmux keeps no
//! kitty images at all.
//!
//! Run: `cargo bench -p launcher --bench images_keep` (the last line is
//! JSON). Read the figures as ratios: the machine is shared.

use launcher::emulator::Emulator;
use launcher::images::Images;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::Instant;

/// The heap in use, counted by the bench's allocator.
static HEAP: AtomicIsize = AtomicIsize::new(0);

struct Counting;

// SAFETY: every call is passed to the system allocator as it came.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        HEAP.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's layout, as GlobalAlloc::alloc requires.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        HEAP.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        HEAP.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: as GlobalAlloc::realloc requires, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A log like benches/keeper_instructions.py's: `lines` lines of 60-110
/// characters, every fifth coloured.
fn log(lines: usize) -> Vec<u8> {
    let words = [
        "request",
        "handled",
        "worker",
        "cache",
        "GET",
        "/api/v1/items",
        "200",
        "ms",
    ];
    let mut out = Vec::new();
    let mut seed = 20_261_203u64;
    let mut next = || {
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (seed >> 33) as usize
    };
    for i in 0..lines {
        let mut line = format!("2026-12-06T10:{:02}:{:02}Z [{i:06}]", i / 60 % 60, i % 60);
        while line.len() < 60 + next() % 50 {
            line.push(' ');
            line.push_str(words[next() % words.len()]);
        }
        if i % 5 == 0 {
            out.extend_from_slice(format!("\x1b[3{}m{line}\x1b[0m\n", 1 + i % 6).as_bytes());
        } else {
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// A `width` x `height` sixel of 16 colours (stripes that move with
/// `frame`), encoded as img2sixel does: a colour per pass, runs with `!`.
fn sixel(width: usize, height: usize, frame: usize) -> Vec<u8> {
    let mut out = format!("\x1bP0;1;0q\"1;1;{width};{height}").into_bytes();
    for c in 0..16 {
        out.extend_from_slice(format!("#{c};2;{};{};{}", c * 6, 100 - c * 6, c * 3).as_bytes());
    }
    let colour = |x: usize, y: usize| (x / 7 + y / 5 + frame) % 16;
    for band in 0..height.div_ceil(6) {
        for c in 0..16 {
            out.extend_from_slice(format!("#{c}").as_bytes());
            let mut run: Option<(u8, usize)> = None;
            let flush = |run: Option<(u8, usize)>, out: &mut Vec<u8>| {
                if let Some((ch, n)) = run {
                    if n > 3 {
                        out.extend_from_slice(format!("!{n}").as_bytes());
                        out.push(ch);
                    } else {
                        out.extend(std::iter::repeat_n(ch, n));
                    }
                }
            };
            for x in 0..width {
                let mut bits = 0u8;
                for bit in 0..6 {
                    let y = band * 6 + bit;
                    if y < height && colour(x, y) == c {
                        bits |= 1 << bit;
                    }
                }
                let ch = 0x3f + bits;
                run = match run {
                    Some((prev, n)) if prev == ch => Some((prev, n + 1)),
                    other => {
                        flush(other, &mut out);
                        Some((ch, 1))
                    }
                };
            }
            flush(run, &mut out);
            out.push(b'$');
        }
        out.push(b'-');
    }
    out.extend_from_slice(b"\x1b\\");
    out
}

/// Feeds `bytes` in 4 KiB chunks (as the PTY hands them over), `rounds`
/// times; seconds taken.
fn time_feed(rounds: usize, bytes: &[u8], mut feed: impl FnMut(&[u8])) -> f64 {
    let started = Instant::now();
    for _ in 0..rounds {
        for chunk in bytes.chunks(4096) {
            feed(chunk);
        }
    }
    started.elapsed().as_secs_f64()
}

fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

fn main() {
    let text = log(40_000);
    let mb = text.len() as f64 / 1e6;
    // `images_keep direct` or `images_keep filtered`: one pass of the log
    // only, for callgrind (the difference of the two counts is the filter's
    // cost, whatever the machine's load): benches/results/images-2026-12-06.md.
    if let Some(mode) = std::env::args()
        .nth(1)
        .filter(|a| a == "direct" || a == "filtered")
    {
        let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
        let mut images = Images::new(32 << 20);
        let mut answers = std::io::sink();
        time_feed(1, &text, |c| {
            if mode == "direct" {
                emu.feed(c);
            } else {
                images.feed(c, &mut emu, &mut answers);
            }
        });
        return;
    }
    // 1. Plain output: the emulator alone, and through the filter.
    let mut direct = Vec::new();
    let mut filtered = Vec::new();
    for _ in 0..5 {
        let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
        direct.push(time_feed(1, &text, |c| emu.feed(c)));
        let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
        let mut images = Images::new(32 << 20);
        let mut answers = std::io::sink();
        filtered.push(time_feed(1, &text, |c| {
            images.feed(c, &mut emu, &mut answers)
        }));
    }
    let (direct, filtered) = (median(direct), median(filtered));
    println!(
        "plain log {:.1} MB: emulator alone {:.1} MB/s, through the image filter {:.1} MB/s ({:+.1} %)",
        mb,
        mb / direct,
        mb / filtered,
        (filtered / direct - 1.0) * 100.0
    );

    // 2. A sixel animation: 200 frames of 200x120 at the top left.
    let frames: Vec<Vec<u8>> = (0..16)
        .map(|f| {
            let mut frame = b"\x1b[H".to_vec();
            frame.extend(sixel(200, 120, f));
            frame
        })
        .collect();
    let animation: Vec<u8> = (0..200).flat_map(|i| frames[i % 16].clone()).collect();
    let frame_bytes = frames[0].len();
    let mut runs = Vec::new();
    let mut kept = 0;
    let mut listed = 0;
    for _ in 0..5 {
        let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
        let mut images = Images::new(32 << 20);
        let mut answers = std::io::sink();
        runs.push(time_feed(1, &animation, |c| {
            images.feed(c, &mut emu, &mut answers)
        }));
        images.kept.refresh(&emu, false);
        listed = images.kept.placements(false).len();
        kept = images.kept.bytes();
    }
    let animation_secs = median(runs);
    let animation_mb = animation.len() as f64 / 1e6;
    println!(
        "sixel animation: 200 frames of 200x120 ({frame_bytes} bytes each): {:.0} frames/s, {:.1} MB/s; after it {listed} image kept on the screen, {kept} bytes held until the next screen read drops the covered ones",
        200.0 / animation_secs,
        animation_mb / animation_secs
    );
    // The same bytes with the sixels as unknown DCS strings (what the
    // emulator did before: it dropped them).
    let mut plain_dcs = Vec::new();
    for _ in 0..5 {
        let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
        plain_dcs.push(time_feed(1, &animation, |c| emu.feed(c)));
    }
    let dropped_secs = median(plain_dcs);
    println!(
        "the same animation to the emulator alone (images dropped, as before issue 52): {:.0} frames/s, {:.1} MB/s",
        200.0 / dropped_secs,
        animation_mb / dropped_secs
    );

    // 3. Memory per image: the heap 100 images add (each scrolled into the
    // history by a line of text), beside the same 100 lines without them.
    let heap_for = |with_images: bool| -> (isize, u64) {
        let mut emu = Emulator::new(30, 120, 2000, Box::new(std::io::sink()));
        let mut images = Images::new(32 << 20);
        let mut answers = std::io::sink();
        let image = sixel(40, 40, 0);
        let before = HEAP.load(Ordering::Relaxed);
        for i in 0..100 {
            if with_images {
                images.feed(&image, &mut emu, &mut answers);
            }
            images.feed(format!("line {i}\r\n").as_bytes(), &mut emu, &mut answers);
        }
        emu.release_spare_rows();
        images.kept.refresh(&emu, false);
        let grown = HEAP.load(Ordering::Relaxed) - before;
        let kept = images.kept.bytes();
        drop((emu, images));
        (grown, kept)
    };
    let (with, kept) = heap_for(true);
    let (without, _) = heap_for(false);
    let per_image = (with - without) as f64 / 100.0;
    let sequence = kept as f64 / 100.0;
    println!(
        "memory per image (40x40 sixel, 100 of them in the history): {per_image:.0} bytes of heap each, of which {sequence:.0} are its sequence as sent and {:.0} the placement, its marked cells in the screen and history, and bookkeeping",
        per_image - sequence
    );
    println!(
        "{{\"plain_mb_s_direct\":{:.1},\"plain_mb_s_filtered\":{:.1},\"animation_frames_s\":{:.0},\"animation_mb_s\":{:.1},\"animation_dropped_frames_s\":{:.0},\"frame_bytes\":{frame_bytes},\"heap_per_image\":{per_image:.0},\"sequence_per_image\":{sequence:.0}}}",
        mb / direct,
        mb / filtered,
        200.0 / animation_secs,
        animation_mb / animation_secs,
        200.0 / dropped_secs
    );
}
