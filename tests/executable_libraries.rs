//! The shared libraries every Tickloop process loads: only glibc's own
//! (`libc.so.6` and the loader). gcc's unwinder is linked in (`build.rs`)
//! and the C maths functions are defined in the executable
//! (`src/libm_shims.rs`), so neither `libgcc_s.so.1` nor `libm.so.6` is
//! mapped, written and loaded by each launcher. Asked of the real loader:
//! `LD_TRACE_LOADED_OBJECTS=1` makes glibc's `ld.so` list what it loaded
//! and exit before the program runs (what `ldd` does).

use std::process::Command;

#[test]
fn the_executable_loads_glibc_and_nothing_else() {
    let out = Command::new(env!("CARGO_BIN_EXE_tickloop"))
        .arg("--version")
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .output()
        .expect("run the executable");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed.contains("libc.so.6"),
        "the loader listed no libc (not glibc's loader?): {listed}"
    );
    let others: Vec<&str> = listed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .filter(|l| {
            !["libc.so.6", "ld-linux", "linux-vdso"]
                .iter()
                .any(|k| l.contains(k))
        })
        .collect();
    assert!(
        others.is_empty(),
        "libraries loaded besides glibc: {others:?} (libgcc_s: build.rs's static unwinder \
         was not linked; libm: a maths function src/libm_shims.rs does not define is called, \
         see `nm -D --undefined-only` on the executable)"
    );
}
