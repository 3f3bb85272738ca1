#!/usr/bin/env python3
"""What `tickloop attach` runs before its first frame (issue 51), under
callgrind, so free of the machine's load: the view attaches in a 120x30 PTY
of this script's to an instance whose program draws a full screen as
termbench's attach measurement does (every row of text, a coloured piece in
each, a marker on the last row), then detaches. callgrind dumps after each
`TtyOut::render`: the first dump is the process up to its terminal cleared
(the executable's start, the command line, the terminal's setup, the
connection and the launcher's first snapshot), the second its first frame;
the rest is what follows (the first key's parser, the detach, the exit).
With `--blank-last-row`, the last row is left blank, so the view's note
shows over it on the first frame.

Run: cargo build --release && python3 benches/attach_instructions.py [--bin target/release/tickloop]
Standard library and valgrind only.
"""
import argparse
import fcntl
import glob
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

# termbench's attach screen, 120x30: rows of text with a coloured piece.
SCREEN = r"""
import sys, time
FILL = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor "
rows, cols, marker = 30, 120, sys.argv[1]
out = ["\x1b[0m\x1b[H\x1b[2J"]
for r in range(1, rows + (0 if marker == "-" else 1)):
    width = cols if r < rows else max(0, cols - 1 - len(marker))
    k = (r * 11) % len(FILL)
    text = ("%02d " % r + (FILL[k:] + FILL * (cols // len(FILL) + 2)))[:width]
    a = (r * 7) % max(1, width - 20) if width > 24 else 0
    b = min(width, a + 16)
    line = text[:a] + "\x1b[38;5;%dm" % (16 + (r * 13) % 216) + text[a:b] + "\x1b[0m" + text[b:]
    out.append("\x1b[%d;1H" % r + line)
if marker != "-":
    out.append(marker)
sys.stdout.write("".join(out)); sys.stdout.flush(); time.sleep(600)
"""


def totals(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"^(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise SystemExit(f"no totals in {path}")


def run(binary, blank_last_row):
    runtime = tempfile.mkdtemp(prefix="tlattinstr")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TERM="xterm-256color")
    marker = "-" if blank_last_row else "ATTMARK"
    subprocess.run([binary, "open", "--shell", "--id", "s", "--", "python3", "-c", SCREEN, marker],
                   env=env, capture_output=True, check=True)
    subprocess.run([binary, "wait", "shell:s", "--text", "lorem", "--screen", "--timeout", "20"],
                   env=env, capture_output=True, check=True)
    out = os.path.join(runtime, "callgrind.attach")
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe("valgrind", ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                "--dump-after=*TtyOut*render*", binary, "attach", "shell:s"], env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    buf, end = b"", time.monotonic() + 60
    want = b"keys" if blank_last_row else marker.encode()
    try:
        while want not in buf and time.monotonic() < end:
            if select.select([fd], [], [], 0.5)[0]:
                buf += os.read(fd, 65536)
        if want not in buf:
            raise SystemExit("the first frame never came")
        time.sleep(0.5)
        os.write(fd, b"\x1cd")
    finally:
        os.waitpid(pid, 0)
        subprocess.run([binary, "shutdown"], env=env, capture_output=True)
    parts = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    if len(parts) < 2:
        raise SystemExit(f"expected a dump after the clear and after the first frame: {parts}")
    return {"to_clear": totals(parts[0]), "first_frame": totals(parts[1]),
            "after": sum(totals(p) for p in parts[2:]) + totals(out)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--blank-last-row", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    got = run(binary, a.blank_last_row)
    print(f"{binary}: to the terminal cleared {got['to_clear']:,}, the first frame "
          f"{got['first_frame']:,}, before it in all {got['to_clear'] + got['first_frame']:,}; "
          f"after it {got['after']:,} instructions")
    print(json.dumps({"bin": binary, "blank_last_row": a.blank_last_row, **got}))


if __name__ == "__main__":
    main()
