#!/usr/bin/env python3
"""A screen read while the program floods its terminal (issue 51): for
each Tickloop executable given, alternating, ROUNDS times: a bash
instance `cat`s 128 MiB of termbench's data (20 % with SGR colour, 11 %
UTF-8) headless while this script runs `tickloop screen` on it one call
after another; prints each call's time (median, 90th percentile, most)
and the flood's speed with the reads going on.

Run: python3 benches/screen_in_flood.py [--rounds 3] BIN [BIN...]
Standard library only; termbench.py (../shared/bench, or --termbench)
makes the data.
"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

from flood_threads import flood_data

HERE = os.path.dirname(os.path.abspath(__file__))
TERMBENCH = os.path.join(HERE, "..", "..", "shared", "bench")


def one_round(binary, data):
    runtime = tempfile.mkdtemp(prefix="screen-flood-")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TERM="xterm-256color", LANG="C.UTF-8")

    def run(*args):
        return subprocess.run([binary, *args], env=env, capture_output=True, text=True)

    try:
        run("open", "--shell", "--id", "f", "--", "bash", "--norc", "--noprofile")
        run("wait", "shell:f", "--text", "$", "--timeout", "20")
        start = time.monotonic()
        run("input", "shell:f", f"cat {data} {data}; echo FLOOD''DONE\r")
        calls = []
        while True:
            t = time.monotonic()
            out = run("screen", "shell:f").stdout
            calls.append((time.monotonic() - t) * 1000)
            if "FLOODDONE" in out:
                break
            if time.monotonic() - start > 120:
                raise SystemExit("the flood did not end within 120 s")
        seconds = time.monotonic() - start
        return calls, seconds
    finally:
        run("shutdown")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--termbench", default=TERMBENCH)
    ap.add_argument("bins", nargs="+")
    args = ap.parse_args()
    data = flood_data(args.termbench)
    print(f"{'round':5} {'executable':40} {'screens':>7} {'median ms':>9} {'p90 ms':>7} {'most ms':>7} {'flood MiB/s':>11}")
    for r in range(args.rounds):
        for binary in args.bins:
            calls, seconds = one_round(binary, data)
            calls.sort()
            p90 = calls[min(len(calls) - 1, int(len(calls) * 0.9))]
            print(f"{r + 1:<5} {binary:40} {len(calls):7} {statistics.median(calls):9.1f} "
                  f"{p90:7.1f} {calls[-1]:7.1f} {128 / seconds:11.1f}")


if __name__ == "__main__":
    main()
