#!/usr/bin/env python3
"""Forgetting (issue 39): how long `tickloop close ID` of an instance that
has ended (which forgets it) takes, beside `tickloop list` (the cost of a
CLI process that asks tickhost one thing) in the same run.

Three cases, N times each, every time a whole `tickloop` process:

  list        `tickloop list` (the baseline)
  forget      `close` of a `--shell` program that ended during its start
  forget-kept `close` of one that ended after it was up (its last screen
              and activity kept in its folder, which goes)
  at-the-end  `close` the instant its program exits (`sleep 0.0X` just
              elapsed): tickhost may still be hearing of the end

Prints p50/p90/p99 in ms and the ratios to `list`, the loadavg, then one
JSON line. Standard library only.

Run: cargo build --release && python3 benches/forget.py [--bin target/release/tickloop] [-n 100]
"""
import argparse
import json
import os
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(len(xs) * p))], 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("-n", type=int, default=100)
    args = ap.parse_args()
    runtime = tempfile.mkdtemp(prefix="tl-forget-", dir="/tmp")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)

    def run(*argv):
        t = time.perf_counter()
        out = subprocess.run([args.bin, *argv], env=env, capture_output=True, text=True)
        ms = (time.perf_counter() - t) * 1000
        if out.returncode != 0:
            raise SystemExit(f"{argv}: exit {out.returncode}: {out.stderr}")
        return ms, out.stdout

    run("list")
    times = {"list": [], "forget": [], "forget-kept": [], "at-the-end": []}
    for i in range(args.n):
        times["list"].append(run("list")[0])
        run("open", "--shell", "--id", f"a{i}", "--", "true")
        times["forget"].append(run("close", f"shell:a{i}")[0])
        run("open", "--shell", "--id", f"b{i}", "--", "sh", "-c", "echo kept; sleep 0.05")
        time.sleep(0.3)
        times["forget-kept"].append(run("close", f"shell:b{i}")[0])
        run("open", "--shell", "--id", f"c{i}", "--", "sleep", "0.05")
        time.sleep(0.05)
        ms, out = run("close", f"shell:c{i}")
        if not json.loads(out).get("forgotten"):
            ms2, _ = run("close", f"shell:c{i}")  # it was still running: closed, then forgotten
            ms += ms2
        times["at-the-end"].append(ms)
    run("shutdown")
    base = pct(times["list"], 0.5)
    result = {}
    for name, xs in times.items():
        result[name] = {"p50": pct(xs, 0.5), "p90": pct(xs, 0.9), "p99": pct(xs, 0.99),
                        "ratio_p50_to_list": round(pct(xs, 0.5) / base, 2)}
        print(f"{name:12} p50 {result[name]['p50']:7.1f} ms  p90 {result[name]['p90']:7.1f}  "
              f"p99 {result[name]['p99']:7.1f}  ({result[name]['ratio_p50_to_list']} x list)")
    load = os.getloadavg()
    print(f"loadavg {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, n={args.n}, bin={args.bin}")
    print(json.dumps({"n": args.n, "loadavg": load[0], "times_ms": result}))


if __name__ == "__main__":
    main()
