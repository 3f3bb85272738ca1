#!/usr/bin/env python3
"""A launcher's instructions for some output (issue 40): `tickloop
__launcher` run alone under callgrind (a shell instance, its spec on stdin,
as tickhost starts it) for a program that prints a log file and exits, once
with the log and once with an empty file; the difference is what keeping
that output cost (PTY reads, the emulator, the history), free of the load
of the machine. Prints the instructions of both, the difference per MiB,
and one JSON line.

The log is the cost note's: 40,000 lines of 60-110 characters, a fifth of
them coloured (SGR 31-36 and 0), from a fixed seed; 2,000 lines of history
are kept at 120x30, as by default.

Run: cargo build --release && python3 benches/keeper_instructions.py [--bin target/release/tickloop]
     [--lines 40000]
"""
import argparse
import json
import os
import random
import re
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_log(path, lines, seed=20261203):
    rng = random.Random(seed)
    words = ["request", "handled", "worker", "cache", "miss", "hit", "GET", "POST", "/api/v1/items",
             "200", "404", "ms", "user", "session", "started", "finished", "retry", "ok"]
    with open(path, "w") as f:
        for i in range(lines):
            text = " ".join(rng.choice(words) for _ in range(rng.randint(8, 16)))
            line = f"2026-12-03T10:{i // 60 % 60:02}:{i % 60:02}Z [{i:06}] {text}"[: rng.randint(60, 110)]
            if i % 5 == 0:
                line = f"\x1b[3{1 + i % 6}m{line}\x1b[0m"
            f.write(line + "\n")
    return os.path.getsize(path)


def instructions(binary, runtime, name, log):
    spec = {"instance": f"shell:{name}", "shell": True,
            "argv": ["sh", "-c", f"cat {log}"], "cwd": ROOT,
            "env": [["PATH", os.environ.get("PATH", "/usr/bin:/bin")]],
            "socket": os.path.join(runtime, f"shell-{name}.sock")}
    out = os.path.join(runtime, f"callgrind.{name}")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        binary, "__launcher"], input=json.dumps(spec), capture_output=True,
                       text=True, timeout=3600)
    with open(out) as f:
        for line in f:
            m = re.match(r"^(?:summary|totals):\s+(\d+)", line)
            if m:
                return int(m.group(1))
    raise SystemExit(f"no totals in {out}: {p.stderr[-500:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--lines", type=int, default=40000)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    runtime = tempfile.mkdtemp(prefix="tlinstr")
    log = os.path.join(runtime, "log.txt")
    size = make_log(log, a.lines)
    empty = os.path.join(runtime, "empty.txt")
    open(empty, "w").close()
    with_log = instructions(a.bin, runtime, "log", log)
    without = instructions(a.bin, runtime, "empty", empty)
    mib = size / (1024 * 1024)
    per_mib = (with_log - without) / mib
    print(f"{a.bin}: {a.lines} lines, {size} bytes of output")
    print(f"  instructions with the log {with_log:,}, with an empty file {without:,}")
    print(f"  the output's share {with_log - without:,} ({per_mib / 1e6:.1f} M a MiB)")
    print(json.dumps({"bin": a.bin, "lines": a.lines, "bytes": size, "with_log": with_log,
                      "empty": without, "per_mib": round(per_mib)}))


if __name__ == "__main__":
    main()
