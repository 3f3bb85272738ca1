//! Lets go of the code and constants a process ran once and no longer
//! runs. A page of a mapped file, once touched, stays in the process's
//! page tables for its life, and the kernel maps 16 neighbouring pages
//! with each one it faults in: tickhost and a launcher keep some 2.5 MB of
//! `tickloop`'s code and constants mapped after their start, though an idle
//! one runs a few kilobytes of it (issue 51). The pages stay in the page
//! cache, where the kernel can reclaim them; a page run again comes back
//! with a minor fault, as it came the first time.

use std::io;

/// What [`release_mapped_code`] let go of.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Released {
    /// Mappings given back.
    pub mappings: usize,
    /// Their resident size before, in KiB (`Rss` in `/proc/self/smaps`).
    pub resident_kib: u64,
    /// Mappings kept whole: some of their pages were written, and the
    /// pagemap that tells which could not be read.
    pub kept_whole: usize,
}

/// Drops this process's page-table entries for the pages of the files it
/// maps read-only that it has never written: the executable's code,
/// constants and vtables, and the shared libraries'. A page that was
/// written (a relocated pointer, a debugger's breakpoint: the kernel made
/// it the process's own, anonymous, copy) stays, since dropping it would
/// bring back the file's bytes in place of the written ones; so does
/// anything writable, shared, locked or not a file.
pub fn release_mapped_code() -> io::Result<Released> {
    // Read a line at a time: the whole file is some 60 KiB, which the heap
    // would keep dirty after it is freed.
    let mut smaps = io::BufReader::with_capacity(4096, std::fs::File::open("/proc/self/smaps")?);
    let mut scanner = Scanner::default();
    let mut line = String::new();
    while {
        line.clear();
        io::BufRead::read_line(&mut smaps, &mut line)? > 0
    } {
        scanner.line(line.trim_end());
    }
    let mut mappings = scanner.finish();
    // The code running now goes last, so that little of it runs (and comes
    // back) after.
    let here = release_mapped_code as *const () as usize;
    mappings.sort_by_key(|m| m.start <= here && here < m.end);
    let mut pagemap: Option<io::Result<std::fs::File>> = None;
    let mut released = Released::default();
    for mapping in mappings {
        let ranges = if mapping.anonymous_kib == 0 {
            vec![(mapping.start, mapping.end)]
        } else {
            // Some pages were written: only the others, page by page, as
            // far as the pagemap tells them apart (a kernel without it,
            // or that refuses it, keeps such a mapping whole).
            let file = pagemap.get_or_insert_with(|| std::fs::File::open("/proc/self/pagemap"));
            match file
                .as_ref()
                .ok()
                .map(|file| unwritten_ranges(file, mapping.start, mapping.end))
            {
                Some(Ok(ranges)) => ranges,
                Some(Err(_)) | None => {
                    released.kept_whole += 1;
                    continue;
                }
            }
        };
        for (start, end) in ranges {
            drop_pages(start, end)?;
        }
        released.mappings += 1;
        released.resident_kib += mapping.resident_kib;
    }
    Ok(released)
}

/// MADV_DONTNEED on pages of a private file mapping none of which was
/// written. A locked range refuses (EINVAL) and stays.
fn drop_pages(start: usize, end: usize) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: [start, end) lies in a private, read-only mapping of a
        // file, and holds no page this process wrote (`Anonymous: 0` or,
        // page by page, the pagemap's file bit): MADV_DONTNEED only drops
        // the page-table entries, and each page reads back from the file
        // (the page cache) unchanged when touched again.
        let done =
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_DONTNEED) };
        if done != 0 {
            let error = io::Error::last_os_error();
            if error.raw_os_error() != Some(libc::EINVAL) {
                return Err(error);
            }
        }
    }
    Ok(())
}

/// The runs of pages in [start, end) that are resident and still the
/// file's own (`/proc/self/pagemap`: present, bit 63, and a file page,
/// bit 61; a written page of a private mapping is anonymous).
fn unwritten_ranges(
    pagemap: &std::fs::File,
    start: usize,
    end: usize,
) -> io::Result<Vec<(usize, usize)>> {
    use std::os::unix::fs::FileExt;
    const PAGE: usize = 4096;
    const PRESENT: u64 = 1 << 63;
    const FILE: u64 = 1 << 61;
    let pages = (end - start) / PAGE;
    let mut entries = vec![0u8; pages * 8];
    pagemap.read_exact_at(&mut entries, (start / PAGE * 8) as u64)?;
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    for (index, entry) in entries.chunks_exact(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(entry);
        let entry = u64::from_le_bytes(bytes);
        if entry & PRESENT == 0 || entry & FILE == 0 {
            continue;
        }
        let page = start + index * PAGE;
        match ranges.last_mut() {
            Some(last) if last.1 == page => last.1 = page + PAGE,
            _ => ranges.push((page, page + PAGE)),
        }
    }
    Ok(ranges)
}

/// A mapping [`release_mapped_code`] may drop.
#[derive(Debug, PartialEq, Eq)]
struct Mapping {
    start: usize,
    end: usize,
    resident_kib: u64,
    /// Its written pages.
    anonymous_kib: u64,
}

/// The mappings of `smaps` that are private, not writable, backed by a
/// file, not locked and resident in part.
#[cfg(test)]
fn read_only_file_mappings(smaps: &str) -> Vec<Mapping> {
    let mut scanner = Scanner::default();
    smaps.lines().for_each(|line| scanner.line(line));
    scanner.finish()
}

/// Reads `/proc/self/smaps` a line at a time into the mappings
/// [`release_mapped_code`] may drop: private, not writable, backed by a
/// file, not locked and resident in part.
#[derive(Default)]
struct Scanner {
    found: Vec<Mapping>,
    open: Option<OpenMapping>,
}

/// The mapping whose fields [`Scanner`] is reading.
struct OpenMapping {
    start: usize,
    end: usize,
    eligible: bool,
    resident_kib: u64,
    anonymous_kib: Option<u64>,
}

impl Scanner {
    fn line(&mut self, line: &str) {
        if let Some((start, end, eligible)) = mapping_header(line) {
            self.close();
            self.open = Some(OpenMapping {
                start,
                end,
                eligible,
                resident_kib: 0,
                anonymous_kib: None,
            });
            return;
        }
        let Some(m) = self.open.as_mut() else { return };
        if let Some(kib) = field_kib(line, "Rss:") {
            m.resident_kib = kib;
        } else if let Some(kib) = field_kib(line, "Anonymous:") {
            m.anonymous_kib = Some(kib);
        } else if let Some(flags) = line.strip_prefix("VmFlags:") {
            // Locked pages stay, and so does device memory.
            if flags.split_whitespace().any(|f| f == "lo" || f == "io") {
                m.eligible = false;
            }
        }
    }

    fn close(&mut self) {
        if let Some(m) = self.open.take() {
            if let (true, Some(anonymous_kib)) = (m.eligible && m.resident_kib > 0, m.anonymous_kib)
            {
                self.found.push(Mapping {
                    start: m.start,
                    end: m.end,
                    resident_kib: m.resident_kib,
                    anonymous_kib,
                });
            }
        }
    }

    fn finish(mut self) -> Vec<Mapping> {
        self.close();
        self.found
    }
}

/// `start-end perms offset dev inode path` → (start, end, eligible), where
/// eligible means private, not writable, and a file (inode not 0, path not
/// a `[special]` one).
fn mapping_header(line: &str) -> Option<(usize, usize, bool)> {
    let mut fields = line.split_whitespace();
    let (start, end) = fields.next()?.split_once('-')?;
    let start = usize::from_str_radix(start, 16).ok()?;
    let end = usize::from_str_radix(end, 16).ok()?;
    let perms = fields.next()?.as_bytes();
    if perms.len() != 4 {
        return None;
    }
    let _offset = fields.next()?;
    let device = fields.next()?;
    if !device.contains(':') {
        return None;
    }
    let inode: u64 = fields.next()?.parse().ok()?;
    let path = fields.next().unwrap_or("");
    let eligible = perms[0] == b'r'
        && perms[1] == b'-'
        && perms[3] == b'p'
        && inode != 0
        && path.starts_with('/');
    Some((start, end, eligible))
}

fn field_kib(line: &str, name: &str) -> Option<u64> {
    line.strip_prefix(name)?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMAPS: &str = "\
00400000-00600000 r--p 00000000 fd:01 1234 /usr/bin/tickloop
Rss:                 980 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
00600000-00800000 r-xp 00200000 fd:01 1234 /usr/bin/tickloop
Rss:                2400 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me sd
00800000-00810000 r--p 00400000 fd:01 1234 /usr/bin/tickloop
Rss:                  64 kB
Anonymous:             8 kB
VmFlags: rd mr mw me ac sd
00810000-00812000 rw-p 00410000 fd:01 1234 /usr/bin/tickloop
Rss:                   8 kB
Anonymous:             8 kB
VmFlags: rd wr mr mw me ac sd
00900000-00a00000 rw-p 00000000 00:00 0 [heap]
Rss:                 256 kB
Anonymous:           256 kB
VmFlags: rd wr mr mw me ac sd
7f0000000000-7f0000100000 r-xp 00028000 fd:01 99 /usr/lib/libc.so.6
Rss:                1000 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me lo sd
7f0000200000-7f0000300000 r--s 00000000 fd:01 77 /tmp/shared-file
Rss:                  12 kB
Anonymous:             0 kB
VmFlags: rd mr me ms sd
7f0000300000-7f0000301000 r--p 00000000 fd:01 78 /tmp/never-touched
Rss:                   0 kB
Anonymous:             0 kB
VmFlags: rd mr mw me sd
7ffff7fc1000-7ffff7fc3000 r-xp 00000000 00:00 0 [vdso]
Rss:                   4 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me de sd
";

    #[test]
    fn only_read_only_private_file_mappings_are_candidates() {
        let found = read_only_file_mappings(SMAPS);
        let mapping = |start, end, resident_kib, anonymous_kib| Mapping {
            start,
            end,
            resident_kib,
            anonymous_kib,
        };
        assert_eq!(
            found,
            vec![
                mapping(0x0040_0000, 0x0060_0000, 980, 0),
                mapping(0x0060_0000, 0x0080_0000, 2400, 0),
                // Relocated: only its unwritten pages go, one by one.
                mapping(0x0080_0000, 0x0081_0000, 64, 8),
            ],
            "kept: the writable data, the heap, a locked library, a shared file, \
             an untouched file, the vdso"
        );
    }

    /// Held by each test that lets go of this process's pages: the others'
    /// would let go of what one has just read.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// (resident, written) of the page at `address`, from the pagemap.
    fn page_state(address: usize) -> (bool, bool) {
        use std::os::unix::fs::FileExt;
        let pagemap = std::fs::File::open("/proc/self/pagemap").expect("pagemap");
        let mut entry = [0u8; 8];
        pagemap
            .read_exact_at(&mut entry, (address / 4096 * 8) as u64)
            .expect("entry");
        let entry = u64::from_le_bytes(entry);
        let present = entry >> 63 & 1 == 1;
        (present, present && entry >> 61 & 1 == 0)
    }

    #[test]
    fn a_written_page_keeps_what_was_written_and_the_others_go() {
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let dir = std::env::temp_dir().join(format!("idle-code-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("pages");
        std::fs::write(&path, vec![b'f'; 4 * 4096]).expect("file");
        let file = std::fs::File::open(&path).expect("open");
        use std::os::fd::AsRawFd;
        // SAFETY: a new private read-only mapping of a 4-page file; only
        // this test touches it, through the pointer mmap returns.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4 * 4096,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(base, libc::MAP_FAILED);
        let base = base as *mut u8;
        let at = |page: usize| base as usize + page * 4096;
        // SAFETY: all four pages lie inside the mapping; page 1 is made
        // writable for one write (a relocation, as ld.so does for
        // RELRO), then read-only again.
        unsafe {
            for page in 0..4 {
                std::ptr::read_volatile(base.add(page * 4096));
            }
            assert_eq!(
                libc::mprotect(
                    base.add(4096) as _,
                    4096,
                    libc::PROT_READ | libc::PROT_WRITE
                ),
                0
            );
            std::ptr::write_volatile(base.add(4096), b'w');
            assert_eq!(
                libc::mprotect(base.add(4096) as _, 4096, libc::PROT_READ),
                0
            );
        }
        assert_eq!(page_state(at(0)), (true, false));
        assert_eq!(page_state(at(1)), (true, true));

        release_mapped_code().expect("released");

        assert_eq!(page_state(at(0)), (false, false), "a read page goes");
        assert_eq!(page_state(at(3)), (false, false), "a read page goes");
        assert_eq!(page_state(at(1)), (true, true), "the written page stays");
        // SAFETY: inside the mapping, as above.
        let (written, read) = unsafe { (*base.add(4096), *base.add(3 * 4096)) };
        assert_eq!((written, read), (b'w', b'f'));
        // SAFETY: the mapping made above, unmapped once.
        unsafe { libc::munmap(base as _, 4 * 4096) };
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Constants of this executable, 256 KiB of them: the kernel maps the
    /// 64 KiB around each page it faults in, and the middle of the table
    /// has only the table around it.
    static TABLE: [u8; 256 * 1024] = {
        let mut table = [0u8; 256 * 1024];
        let mut i = 0;
        while i < table.len() {
            table[i] = (i % 251) as u8 + 1;
            i += 1;
        }
        table
    };

    #[test]
    fn the_executable_s_constants_are_let_go_of_and_read_again() {
        let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let table = std::hint::black_box(&TABLE);
        let middle = table.as_ptr() as usize + 128 * 1024;
        let sum: u64 = table.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(page_state(middle), (true, false), "read, so resident");

        let released = release_mapped_code().expect("madvise");

        assert!(released.mappings >= 1, "{released:?}");
        assert_eq!(page_state(middle), (false, false), "let go of");
        let again: u64 = table.iter().map(|&b| u64::from(b)).sum();
        assert_eq!(again, sum, "read back from the file unchanged");
        assert_eq!(page_state(middle), (true, false));
    }
}
