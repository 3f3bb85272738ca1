#!/usr/bin/env python3
"""The attach view's instructions per keystroke echo (issue 51), under
callgrind, so free of the machine's load: `tickloop attach` runs under
valgrind in a 120x30 PTY of this script's, against an instance whose
program echoes every byte it reads as `<b>\\r\\n` (raw mode); N bytes are
typed one at a time, each after the echo of the one before. It runs three
times: with no byte typed (what attaching and detaching cost), with N typed
while the view's note shows on its last row (the first 3 seconds after
attaching: termbench's echo mostly runs then), and with N typed after it
is gone; the difference to the first, divided by N, is an echo's share.

Run: cargo build --release && python3 benches/view_instructions.py [--bin target/release/tickloop] [-n 200]
Standard library and valgrind only.
"""
import argparse
import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import tempfile
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from echo_program import ECHO  # noqa: E402 (beside this script)


def run(binary, n, wait_s):
    """The view's instructions for `n` echoes typed `wait_s` after attaching."""
    runtime = tempfile.mkdtemp(prefix="tlviewinstr")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TERM="xterm-256color")
    subprocess.run([binary, "open", "--shell", "--id", "echo", "--", "python3", "-c", ECHO],
                   env=env, capture_output=True, check=True)
    out = os.path.join(runtime, "callgrind.view")
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("valgrind", ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                binary, "attach", "shell:echo"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))

    def wait_for(marker, timeout):
        buf, end = b"", time.monotonic() + timeout
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.2)[0]:
                try:
                    buf += os.read(fd, 65536)
                except OSError:
                    return False
                if marker in buf:
                    return True
        return False

    try:
        if not wait_for(b"READY", 60):
            raise SystemExit("the echo program never showed through the view")
        time.sleep(wait_s)
        for i in range(n):
            byte = b"abcdefghij"[i % 10:i % 10 + 1]
            os.write(fd, byte)
            if not wait_for(b"<" + byte + b">", 20):
                raise SystemExit(f"echo {i} never came")
        time.sleep(0.5)
        os.write(fd, b"\x1cd")
        wait_for(b"\x00never", 10)
    finally:
        os.waitpid(pid, 0)
        subprocess.run([binary, "shutdown"], env=env, capture_output=True)
    with open(out) as f:
        for line in f:
            m = re.match(r"^(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise SystemExit(f"no totals in {out}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("-n", type=int, default=200)
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    none = run(binary, 0, 0.5)
    # Typed at once: the note shows for 3 s after attaching, and under
    # valgrind 200 echoes take longer than that only with the note's cost.
    with_note = run(binary, a.n, 0.0)
    after = run(binary, a.n, 4.0)
    per_note = (with_note - none) / a.n
    per_after = (after - none) / a.n
    print(f"{binary}: attach and detach alone {none:,} instructions")
    print(f"  an echo while the note shows: {per_note / 1000:,.0f} K (some echoes may fall after it)")
    print(f"  an echo after it: {per_after / 1000:,.0f} K")
    print(json.dumps({"bin": binary, "n": a.n, "attach_detach": none,
                      "per_echo_note": round(per_note), "per_echo": round(per_after)}))


if __name__ == "__main__":
    main()
