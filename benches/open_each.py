#!/usr/bin/env python3
"""Opens one after another, timed one by one, beside tmux's new-window
(issue 51, open): for each system, a warm-up open (tickhost's start, tmux's
server) that is not counted, then N opens of `sleep`, each a fresh CLI
process; prints the median and the mean in ms. Systems alternate, ROUNDS
times, so that the machine's drift falls on all of them alike.

Run: python3 benches/open_each.py [--rounds 3] [--n 30] tmux BIN [BIN...]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def tickloop(binary, n):
    runtime = tempfile.mkdtemp(prefix="open-each-")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)
    try:
        subprocess.run([binary, "open", "--shell", "--id", "w", "--", "sleep", "100000"],
                       env=env, capture_output=True, check=True)
        times = []
        for i in range(n):
            start = time.perf_counter()
            p = subprocess.run([binary, "open", "--shell", "--id", f"s{i}", "--", "sleep", "100000"],
                               env=env, capture_output=True, text=True)
            times.append((time.perf_counter() - start) * 1000)
            if p.returncode != 0:
                raise SystemExit(f"open failed: {p.stderr.strip()[:200]}")
        return times
    finally:
        subprocess.run([binary, "shutdown"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(runtime, ignore_errors=True)


def tmux(n):
    folder = tempfile.mkdtemp(prefix="open-each-tmux-")
    tm = ["tmux", "-S", os.path.join(folder, "s"), "-f", "/dev/null"]
    try:
        subprocess.run(tm + ["new-session", "-d", "-x", "120", "-y", "30", "sleep 100000"], check=True)
        times = []
        for _ in range(n):
            start = time.perf_counter()
            subprocess.run(tm + ["new-window", "-d", "sleep 100000"], check=True)
            times.append((time.perf_counter() - start) * 1000)
        return times
    finally:
        subprocess.run(tm + ["kill-server"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("systems", nargs="+", help="`tmux` or a tickloop binary")
    args = ap.parse_args()
    print(f"{'round':<6} {'system':<40} {'median ms':>10} {'mean ms':>9}")
    for r in range(1, args.rounds + 1):
        for system in args.systems:
            times = tmux(args.n) if system == "tmux" else tickloop(system, args.n)
            print(f"{r:<6} {system:<40} {statistics.median(times):>10.2f} {statistics.mean(times):>9.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
