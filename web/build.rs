//! Compresses the page's files (`assets/`, `vendor/xterm/`) with gzip
//! into `OUT_DIR`, where `src/assets.rs` embeds them: xterm.js and its
//! image addon are most of them, and a browser takes them compressed, so
//! the executable carries about 160 KB of them instead of 600
//! (benches/results/web-assets-2026-12-06.md).
use std::io::Write;

/// Every file the page loads, as `src/assets.rs` names it.
const FILES: [&str; 9] = [
    "assets/app.js",
    "assets/layout.js",
    "assets/shell.js",
    "assets/app.css",
    "assets/icon.svg",
    "vendor/xterm/xterm.js",
    "vendor/xterm/xterm.css",
    "vendor/xterm/addon-fit.js",
    "vendor/xterm/addon-image.js",
];

fn main() {
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for file in FILES {
        println!("cargo:rerun-if-changed={file}");
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("cannot read web/{file}: {e}"));
        let name = file.rsplit('/').next().unwrap_or(file);
        // No name or time in the header: the same bytes on every build.
        let mut gzip = flate2::GzBuilder::new()
            .mtime(0)
            .write(Vec::new(), flate2::Compression::best());
        gzip.write_all(&bytes)
            .and_then(|()| gzip.finish())
            .and_then(|packed| std::fs::write(out.join(format!("{name}.gz")), packed))
            .unwrap_or_else(|e| panic!("cannot compress web/{file}: {e}"));
    }
    println!("cargo:rerun-if-changed=build.rs");
}
