//! Gives back the stack a thread used once and no longer uses. A page of a
//! stack, once touched, stays the process's private dirty memory for the
//! thread's life: a launcher's main thread goes some 50 KiB deep while it
//! starts its program, then idles a few frames down, and a hundred
//! launchers keep the difference (issue 51). glibc does the same for the
//! stacks of threads that ended (`advise_stack_range`, MADV_DONTNEED).

use std::io;

/// What is kept below the caller's frame: this module's own frames, the
/// call into the kernel and its return address live there (and the 128
/// bytes below the stack pointer that the x86-64 ABI lets a function use
/// without moving it).
const KEPT_BELOW: usize = 4 * 1024;

/// Gives the pages of the calling thread's stack that lie more than
/// [`KEPT_BELOW`] under the caller's frame back to the system; a page
/// touched again comes back zeroed, as a new stack's does. Below the
/// caller's frame nothing is live: the frames that were there returned.
/// Returns how many bytes of the stack's mapping were released (resident
/// or not); 0 where the stack is not found.
#[inline(never)]
pub fn release_below_here() -> io::Result<usize> {
    let marker = 0u8;
    let here = std::hint::black_box(&marker) as *const u8 as usize;
    let Some(start) = mapping_start(here)? else {
        return Ok(0);
    };
    let page = page_size();
    let below = (here.saturating_sub(KEPT_BELOW)) & !(page - 1);
    if below <= start {
        return Ok(0);
    }
    let length = below - start;
    #[cfg(target_os = "linux")]
    {
        // SAFETY: [start, below) is the part of this thread's own stack
        // mapping under its running frames (KEPT_BELOW is left for the
        // frames of this call and the kernel's), so no live value is
        // there; MADV_DONTNEED leaves the mapping, its pages read as zero
        // when touched again.
        let done =
            unsafe { libc::madvise(start as *mut libc::c_void, length, libc::MADV_DONTNEED) };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(length)
}

/// The start of the mapping that holds `address`, from `/proc/self/maps`.
fn mapping_start(address: usize) -> io::Result<Option<usize>> {
    let maps = std::fs::read_to_string("/proc/self/maps")?;
    Ok(maps.lines().find_map(|line| {
        let range = line.split_whitespace().next()?;
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        (start <= address && address < end).then_some(start)
    }))
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|s| s.is_power_of_two())
        .unwrap_or(4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Resident KiB of the mapping that holds `address` (`/proc/self/smaps`).
    fn resident_kib(address: usize) -> usize {
        let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps");
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((start, end)) = range.split_once('-') {
                    if let (Ok(start), Ok(end)) = (
                        usize::from_str_radix(start, 16),
                        usize::from_str_radix(end, 16),
                    ) {
                        inside = start <= address && address < end;
                        continue;
                    }
                }
            }
            if inside {
                if let Some(kib) = line.strip_prefix("Rss:") {
                    return kib
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse()
                        .expect("kB");
                }
            }
        }
        panic!("no mapping holds {address:#x}");
    }

    /// Touches `depth` bytes of stack below the caller, in frames of 4 KiB.
    #[inline(never)]
    fn go_deep(depth: usize) -> u8 {
        let mut frame = [0u8; 4096];
        std::hint::black_box(&mut frame);
        if depth <= frame.len() {
            return frame[7];
        }
        go_deep(depth - frame.len()).wrapping_add(std::hint::black_box(frame[9]))
    }

    #[test]
    fn the_stack_a_thread_no_longer_uses_is_given_back_and_works_again() {
        let thread = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let marker = 0u8;
                let here = std::hint::black_box(&marker) as *const u8 as usize;
                let before = resident_kib(here);
                go_deep(512 * 1024);
                let deep = resident_kib(here);
                let released = release_below_here().expect("madvise");
                let after = resident_kib(here);
                // The stack works as before, as deep as before.
                let again = go_deep(512 * 1024);
                (before, deep, released, after, again)
            })
            .expect("a thread");
        let (before, deep, released, after, again) = thread.join().expect("joined");
        assert!(deep >= before + 500, "touched: {before} KiB → {deep} KiB");
        assert!(released >= 512 * 1024, "released {released} bytes");
        assert!(
            after + 490 <= deep,
            "resident after the release: {after} KiB (deep: {deep} KiB)"
        );
        assert_eq!(again, 0);
    }

    #[test]
    fn the_caller_s_frames_stay_whole() {
        let value = [7u8; 64];
        let released = release_below_here().expect("madvise");
        assert_eq!(std::hint::black_box(value), [7u8; 64]);
        assert!(released < 64 << 20, "released {released} bytes");
    }
}
