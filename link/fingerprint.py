"""The fingerprint of what Rust's symbol names depend on: the compiler's
version, Cargo.lock and the root Cargo.toml (its profiles). build.rs computes
the same (FNV-1a, 64 bits, over `rustc -V`'s line, a newline, then the two
files' bytes) and compares it with link/hot-functions.txt's first line."""
import os
import subprocess


def fnv1a(data: bytes, h: int = 0xCBF29CE484222325) -> int:
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def fingerprint(root: str) -> str:
    rustc = os.environ.get("RUSTC", "rustc")
    version = subprocess.run([rustc, "-V"], capture_output=True, text=True, check=True, cwd=root).stdout.strip()
    h = fnv1a(version.encode() + b"\n")
    for name in ("Cargo.lock", "Cargo.toml"):
        with open(os.path.join(root, name), "rb") as f:
            h = fnv1a(f.read(), h)
    return f"{h:016x}"
