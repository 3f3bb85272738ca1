#!/usr/bin/env python3
"""Writes link/hot-functions.txt: the functions of `tickloop` that one session
runs (tickhost, the launcher, and the CLI commands a person and an agent use
most: open, wait, run, screen, list, input, attach, close), the launcher's
first, then tickhost's others, then the CLI's, each in the order they first
ran. build.rs hands the file to the linker (lld's
--symbol-ordering-file), which lays those functions out together at the
start of the code, so each process keeps ~2 MB of code resident instead of
~5 (benches/results/link-order-2026-12-06.md).

The names carry Rust's symbol hashes, which change with the compiler, the
Cargo.lock, the release profile and the features: the file's first line
records a fingerprint of those, and build.rs warns when a release build's
differs. Regenerate then: a stale list costs memory, never correctness
(names the executable no longer has are ignored).

How: a release build of `tickloop` (built WITHOUT this file's effect does
not matter: the names are the same) runs under valgrind's callgrind with
--trace-children, through one session of a real bash; every function
callgrind saw run, in any of those processes, is listed.

Run: cargo build --release && python3 benches/hot_functions.py [--bin target/release/tickloop]
"""
import argparse
import fcntl
import glob
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "link"))
from fingerprint import fingerprint  # noqa: E402

FLOOD = "seq 1 100000; head -c 3000000 /dev/zero | tr '\\0' x | fold -w 100; ls --color=always -la /usr/lib | head -500"


def attach(argv, env):
    """`tickloop attach` in a 120x30 PTY: waits for the screen, types a
    command, then detaches with the prefix key (ctrl+\\ d), so the process
    ends normally and callgrind writes its profile."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    buf, step, at = b"", 0, time.time()
    deadline = time.time() + 300
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                d = os.read(fd, 65536)
            except OSError:
                break
            if not d:
                break
            buf += d
        if step == 0 and b"MARK" in buf:
            os.write(fd, b"echo typed\r")
            step, at = 1, time.time()
        elif step == 1 and b"typed" in buf[-4000:] and time.time() - at > 2:
            os.write(fd, b"\x1cd")
            step = 2
    os.waitpid(pid, 0)
    if step < 2:
        raise SystemExit(f"attach never showed the screen: {buf[-300:]!r}")


def session(binary, out):
    tmp = tempfile.mkdtemp(prefix="tlhot")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=os.path.join(tmp, "run"), HOME=tmp,
               XDG_CONFIG_HOME=os.path.join(tmp, "config"), XDG_DATA_HOME=os.path.join(tmp, "data"))
    for k in ("CLAUDECODE", "CODEX_THREAD_ID", "GEMINI_CLI", "OPENCODE", "AI_AGENT", "TICKLOOP_AGENT", "TICKLOOP_ACTOR"):
        env.pop(k, None)
    vg = ["valgrind", "--tool=callgrind", "--demangle=no", "--trace-children=yes",
          f"--callgrind-out-file={out}/cg.%p"]

    def cli(*args):
        subprocess.run(vg + [binary, *args], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600)

    host = subprocess.Popen(vg + [binary, "__tickhost"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    sock = os.path.join(tmp, "run", "tickhost.sock")
    for _ in range(600):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    cli("open", "--shell", "--name", "s", "--", "bash")
    cli("wait", "--prompt", "shell:s")
    cli("run", "shell:s", FLOOD)
    cli("screen", "shell:s")
    cli("list")
    subprocess.run([binary, "input", "shell:s", "clear; echo MA''RK\n"], env=env,
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    attach(vg + [binary, "attach", "shell:s"], env)
    cli("input", "shell:s", "echo hi\n")
    cli("close", "shell:s")
    cli("shutdown")
    host.wait(timeout=600)
    shutil.rmtree(tmp, ignore_errors=True)


def role(path):
    """0 for a launcher, 1 for tickhost, 2 for a CLI command (its `cmd:` line)."""
    with open(path, errors="replace") as fh:
        for line in fh:
            if line.startswith("cmd:"):
                return 0 if "__launcher" in line else 1 if "__tickhost" in line else 2
    return 2


def functions(out):
    """The launcher's functions first, then tickhost's others, then the CLI's:
    each process then keeps its own stretch of code resident, and the
    stretches they share lie at the start."""
    groups = [[], [], []]
    seen = set()
    files = sorted(glob.glob(os.path.join(out, "cg.*")), key=lambda p: int(p.rsplit(".", 1)[1]))
    for f in sorted(files, key=role):
        group = groups[role(f)]
        with open(f, errors="replace") as fh:
            for line in fh:
                m = re.match(r"^c?fn=\(\d+\) (\S+)", line)
                if m and m.group(1).startswith(("_ZN", "_R")) and m.group(1) not in seen:
                    seen.add(m.group(1))
                    group.append(m.group(1))
    return groups[0] + groups[1] + groups[2], [len(g) for g in groups]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--out", default=os.path.join(ROOT, "link/hot-functions.txt"))
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is needed (apt-get install -y valgrind)")
    out = tempfile.mkdtemp(prefix="tlhotcg")
    session(binary, out)
    names, sizes = functions(out)
    present = set(subprocess.run(["nm", binary], capture_output=True, text=True).stdout.split())
    names = [n for n in names if n in present]
    with open(a.out, "w") as f:
        f.write(f"# fingerprint {fingerprint(ROOT)}\n")
        f.write("# Made by benches/hot_functions.py; the functions one session runs, for lld's\n")
        f.write("# --symbol-ordering-file (build.rs). Regenerate when build.rs warns.\n")
        f.write("\n".join(names) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    print(f"{a.out}: {len(names)} functions (launcher {sizes[0]}, tickhost's others {sizes[1]}, "
          f"the CLI's others {sizes[2]})")


if __name__ == "__main__":
    main()
