//! The `tickloop` executable's build script:
//!
//! * Links it as a position-dependent (non-PIE) program. Every launcher is
//!   its own process of this executable; in a PIE build the loader rewrites
//!   about 500 KiB of relocated read-only data (`.data.rel.ro`: vtables,
//!   string pointers) in each of them, which turns those pages private.
//!   Without PIE they stay clean pages of the file, shared by every
//!   launcher: about 0.5 MiB less per instance (figures in
//!   `benches/scale-*.txt`). The code itself is still compiled position
//!   independent; only the executable's load address is fixed.
//! * Records the build's git commit as `TICKLOOP_GIT_COMMIT` (for
//!   `tickloop --version`): `git rev-parse --short=12 HEAD`, or `unknown`
//!   outside a git checkout (a source tarball, a registry). Uncommitted
//!   changes are not marked: this script reruns when HEAD moves, not when
//!   any file changes.
use std::process::Command;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        // Release builds keep line tables (backtraces name file and line)
        // but compressed: std's symbolizer reads zlib sections, and the
        // installed executable is a third of the size
        // (benches/results/cost-2026-12-02.md).
        if std::env::var("PROFILE").as_deref() == Ok("release") {
            println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=TICKLOOP_GIT_COMMIT={}", git_commit());
}

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn git_commit() -> String {
    let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) else {
        return "unknown".to_string();
    };
    // Rebuilt when HEAD moves: HEAD itself, the branch it points to, and
    // the packed refs (only files that exist: a missing one would rerun
    // this script on every build).
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watched.push(branch);
    }
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
    commit
}
