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
//! * Links gcc's unwinder in (`libgcc_eh.a`) on Linux, so no process loads
//!   `libgcc_s.so.1` (with `src/libm_shims.rs`, glibc is all each process
//!   loads: `link/README.md`).
//! * In a release build for x86_64 Linux (linked by lld, Rust's default
//!   there), hands lld `link/hot-functions.txt`, the functions one session
//!   runs, so they lie together at the start of the code: each process
//!   keeps about 2 MB of code resident instead of about 5 (`link/README.md`).
//!   Warns when the list was made for another compiler, `Cargo.lock` or
//!   `Cargo.toml` (the symbol names carry hashes of them). Off with
//!   `TICKLOOP_LINK_ORDER=0`, or when RUSTFLAGS choose another linker.
//! * Records the build's git commit as `TICKLOOP_GIT_COMMIT` (for
//!   `tickloop --version`): `git rev-parse --short=12 HEAD`, or `unknown`
//!   outside a git checkout (a source tarball, a registry). Uncommitted
//!   changes are not marked: this script reruns when HEAD moves, not when
//!   any file changes.
use std::process::Command;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-no-pie");
        static_unwinder();
        // Release builds keep line tables (backtraces name file and line)
        // but compressed: std's symbolizer reads zlib sections, and the
        // installed executable is a third of the size
        // (benches/results/cost-2026-12-02.md).
        if std::env::var("PROFILE").as_deref() == Ok("release") {
            println!("cargo:rustc-link-arg-bins=-Wl,--compress-debug-sections=zlib");
            link_order();
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=TICKLOOP_GIT_COMMIT={}", git_commit());
}

/// The unwinder linked in (gcc's `libgcc_eh.a`, the static form of
/// `libgcc_s.so.1`): its definitions win over the shared library's, which
/// `--as-needed` then leaves out, so no process maps it (two pages of it
/// written in each, and its loading at every start). Left to the shared
/// library when the C compiler does not know the archive.
fn static_unwinder() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let Ok(out) = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || !std::path::Path::new(&path).is_absolute() {
        return;
    }
    println!("cargo:rustc-link-arg-bins=-Wl,--push-state,--whole-archive,{path},--pop-state");
}

/// The hot functions first: see `link/README.md`.
fn link_order() {
    println!("cargo:rerun-if-env-changed=TICKLOOP_LINK_ORDER");
    println!("cargo:rerun-if-changed=link/hot-functions.txt");
    println!("cargo:rerun-if-changed=Cargo.lock");
    println!("cargo:rerun-if-changed=Cargo.toml");
    let env = |k: &str| std::env::var(k).unwrap_or_default();
    let flags = env("CARGO_ENCODED_RUSTFLAGS");
    let other_linker = ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f))
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some();
    if env("TARGET") != "x86_64-unknown-linux-gnu"
        || other_linker
        || env("TICKLOOP_LINK_ORDER") == "0"
    {
        return;
    }
    let root = std::path::PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let list = root.join("link/hot-functions.txt");
    let Ok(text) = std::fs::read_to_string(&list) else {
        return;
    };
    // lld links x86_64 Linux programs by default from Rust 1.90 on; GNU ld
    // before it has no --symbol-ordering-file.
    let version = rustc_version(&env("RUSTC"));
    let minor = version
        .strip_prefix("rustc 1.")
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse::<u32>().ok());
    if !matches!(minor, Some(m) if m >= 90) {
        return;
    }
    let made_for = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("# fingerprint "))
        .unwrap_or("");
    if let Some(now) = fingerprint(&root, &version) {
        if now != made_for {
            println!(
                "cargo:warning=link/hot-functions.txt was made for another compiler, Cargo.lock or \
                 Cargo.toml (fingerprint {made_for}, now {now}): the executable keeps more code \
                 resident until `python3 benches/hot_functions.py` makes it again"
            );
        }
    }
    println!(
        "cargo:rustc-link-arg-bin=tickloop=-Wl,--symbol-ordering-file={}",
        list.display()
    );
    println!("cargo:rustc-link-arg-bin=tickloop=-Wl,--no-warn-symbol-ordering");
    // lld folds functions whose code and data are byte for byte the same
    // (generic code instantiated for types of one layout, mostly): the
    // executable loses some of its code and stays within 25 MB
    // (benches/results/cost-2026-12-07d.md). A backtrace through a folded
    // function names one of the functions it stands for.
    println!("cargo:rustc-link-arg-bin=tickloop=-Wl,--icf=all");
}

/// `rustc -V`'s line, or "" when it cannot run.
fn rustc_version(rustc: &str) -> String {
    let rustc = if rustc.is_empty() { "rustc" } else { rustc };
    Command::new(rustc)
        .arg("-V")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default()
}

/// `link/fingerprint.py`'s FNV-1a over `rustc -V`, Cargo.lock, Cargo.toml.
fn fingerprint(root: &std::path::Path, version: &str) -> Option<String> {
    let mut bytes = format!("{version}\n").into_bytes();
    for name in ["Cargo.lock", "Cargo.toml"] {
        bytes.extend(std::fs::read(root.join(name)).ok()?);
    }
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    Some(format!("{hash:016x}"))
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
