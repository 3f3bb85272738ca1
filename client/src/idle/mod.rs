//! What a process gives back when it goes quiet: the allocator's free
//! pages, the stack a thread went deep on once, and the code and constants
//! it ran once. Each stays the process's memory for its life otherwise, and
//! an idle instance is mostly what its start and its last burst left
//! (issue 51). The launcher calls [`give_back`] when its screen goes
//! quiet, tickhost when its requests do.

pub mod code;
pub mod stack;

use std::io;

/// Gives back, in this order, the allocator's free pages, the calling
/// thread's stack below the caller ([`stack::release_below_here`]) and
/// the code this process no longer runs ([`code::release_mapped_code`]):
/// the code last, so that little runs (and is mapped again) after it. Each
/// is done even when another fails; the first failure is returned, saying
/// which.
#[inline(never)]
pub fn give_back() -> io::Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks and trims the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
    let stack = stack::release_below_here()
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), format!("the stack it no longer uses: {e}")));
    let code = code::release_mapped_code()
        .map(|_| ())
        .map_err(|e| io::Error::new(e.kind(), format!("the code it no longer runs: {e}")));
    stack.and(code)
}
