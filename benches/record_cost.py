#!/usr/bin/env python3
"""record_cost: what recording costs a Tickloop instance's output throughput.

The same kind of flood as the shared termbench's headless throughput: a
program in a `tickloop open --shell` instance waits for a go file, then
times `cat FILE` into its terminal (the PTY) from inside; throughput is the
file's size over that time. Each round runs it once without a recorder and
once with `open --record` (the launcher then encodes every chunk of output
as an asciicast `o` event and writes it to a file), interleaved so machine
load hits both alike; medians are reported.

Usage: python3 benches/record_cost.py [--bin target/release/tickloop]
         [--mib 32] [--rounds 5]
stdout: a table, then one line of JSON with every figure.
"""

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROG = r'''
import json, os, subprocess, sys, time
d, path = sys.argv[1], sys.argv[2]
open(d + "/ready", "w").close()
while not os.path.exists(d + "/go"):
    time.sleep(0.005)
t0 = time.monotonic()
rc = subprocess.call(["cat", path])
t1 = time.monotonic()
tmp = d + "/result.tmp"
with open(tmp, "w") as f:
    json.dump({"t0": t0, "t1": t1, "rc": rc}, f)
os.replace(tmp, d + "/result")
time.sleep(3600)
'''


def wait_file(path, limit=120):
    deadline = time.monotonic() + limit
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {path}")
        time.sleep(0.01)


def one(binary, base, data, n, record):
    d = os.path.join(base, f"run{n}")
    os.mkdir(d)
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=os.path.join(d, "rt"),
               XDG_DATA_HOME=os.path.join(d, "data"))
    prog = os.path.join(base, "prog.py")
    argv = [binary, "open", "--shell", "--id", f"b{n}"]
    cast = os.path.join(d, "out.cast")
    if record:
        argv += ["--record", cast]
    argv += ["--", sys.executable, prog, d, data]
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit(f"open failed: {p.stderr or p.stdout}")
    try:
        wait_file(os.path.join(d, "ready"))
        open(os.path.join(d, "go"), "w").close()
        wait_file(os.path.join(d, "result"))
        with open(os.path.join(d, "result")) as f:
            r = json.load(f)
        # Closed: the recording's writer has flushed everything.
        subprocess.run([binary, "close", f"shell:b{n}"], env=env, capture_output=True, timeout=60)
        cast_bytes = os.path.getsize(cast) if record else 0
    finally:
        subprocess.run([binary, "shutdown"], env=env, capture_output=True, timeout=60)
    shutil.rmtree(d, ignore_errors=True)
    return r["t1"] - r["t0"], cast_bytes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tickloop")
    ap.add_argument("--mib", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)
    base = tempfile.mkdtemp(prefix="recbench.", dir="/tmp")
    try:
        with open(os.path.join(base, "prog.py"), "w") as f:
            f.write(PROG)
        data = os.path.join(base, "flood.txt")
        rnd = random.Random(7)
        line_chars = "abcdefghijklmnopqrstuvwxyz0123456789 "
        with open(data, "w") as f:
            size = 0
            while size < args.mib << 20:
                # Text with colour, like termbench's fill: printable lines.
                line = "".join(rnd.choice(line_chars) for _ in range(100))
                line = f"\x1b[38;5;{rnd.randrange(16, 232)}m{line[:20]}\x1b[0m{line[20:]}\n"
                f.write(line)
                size += len(line)
        size = os.path.getsize(data)
        off, on, cast_sizes = [], [], []
        n = 0
        for r in range(args.rounds):
            for record in ((False, True) if r % 2 == 0 else (True, False)):
                n += 1
                secs, cast = one(binary, base, data, n, record)
                (on if record else off).append(size / secs / (1 << 20))
                if record:
                    cast_sizes.append(cast)
                print(f"round {r + 1} {'on ' if record else 'off'} {size / secs / (1 << 20):8.1f} MiB/s",
                      file=sys.stderr)
        med_off, med_on = statistics.median(off), statistics.median(on)
        result = {
            "binary": binary,
            "flood_mib": round(size / (1 << 20), 2),
            "rounds": args.rounds,
            "off_mib_s": [round(x, 1) for x in off],
            "on_mib_s": [round(x, 1) for x in on],
            "median_off_mib_s": round(med_off, 1),
            "median_on_mib_s": round(med_on, 1),
            "on_over_off": round(med_on / med_off, 3),
            "cast_mib": round(statistics.median(cast_sizes) / (1 << 20), 2),
            "load_avg": os.getloadavg(),
        }
        print(f"{'recording':<10} {'median MiB/s':>12}   runs")
        print(f"{'off':<10} {med_off:>12.1f}   {', '.join(f'{x:.1f}' for x in off)}")
        print(f"{'on':<10} {med_on:>12.1f}   {', '.join(f'{x:.1f}' for x in on)}")
        print(f"on/off {med_on / med_off:.3f}; the recording of {result['flood_mib']} MiB "
              f"of output is {result['cast_mib']} MiB")
        print(json.dumps(result))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
