//! Links the `tickloop` executable as a position-dependent (non-PIE)
//! program. Every launcher is its own process of this executable; in a PIE
//! build the loader rewrites about 500 KiB of relocated read-only data
//! (`.data.rel.ro`: vtables, string pointers) in each of them, which turns
//! those pages private. Without PIE they stay clean pages of the file,
//! shared by every launcher: about 0.5 MiB less per instance (figures in
//! `benches/scale-*.txt`). The code itself is still compiled position
//! independent; only the executable's load address is fixed.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
