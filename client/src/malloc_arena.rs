//! One malloc arena for a long-lived process of Tickloop's (a launcher,
//! tickhost): glibc gives each thread that allocates an arena of its own
//! (a launcher's terminal thread and a recording's writer; tickhost's
//! blocking threads for files, `notify`'s watcher), each keeping some 100-200
//! KiB of dirty pages for the process's life. Their threads allocate little
//! and rarely at once, and there may be a hundred launchers: one arena keeps
//! each process small (`benches/results/cost-2026-12-06-mem.md`).

/// Limits the process to one malloc arena; call it before starting threads.
pub fn limit_to_one() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
