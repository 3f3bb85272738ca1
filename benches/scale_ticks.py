#!/usr/bin/env python3
"""What N idle Ticks cost next to N idle shells (issue 30's second memory goal).

Opens N instances of each kind under its own private tickhost, waits until
they are idle (the launchers give back spare history rows after 2 s of
quiet), and sums the PSS of Tickloop's processes (tickhost and the
launchers; the programs themselves, `sleep` and the counter Tick's Python,
are not counted, as in ../shared/bench/scalebench.py):

  shell   tickloop open --shell -- sleep 100000
  tick    tickloop open --package counter   (the shipped counter package)

Prints a table with the Tick/shell ratio, then one JSON line.

Run: cargo build --release && python3 benches/scale_ticks.py [--bin target/release/tickloop] [-n 100]
Standard library only; Linux (/proc).
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pss_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def measure(a, kind):
    runtime = tempfile.mkdtemp(prefix=f"tlscale-{kind}-")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)
    try:
        t = time.perf_counter()
        for i in range(a.n):
            if kind == "shell":
                argv = ["open", "--shell", "--id", f"s{i}", "--", "sleep", "100000"]
            else:
                argv = ["open", "--package", "counter", "--id", f"c{i}"]
            p = subprocess.run([a.bin, *argv], env=env, capture_output=True, text=True)
            if p.returncode != 0:
                raise SystemExit(f"tickloop open failed: {p.stderr.strip()[:300]}")
        open_each = (time.perf_counter() - t) * 1000 / a.n
        time.sleep(a.settle_s)
        listed = json.loads(subprocess.run([a.bin, "list", "--json"], env=env,
                                           capture_output=True, text=True).stdout)
        launchers = [i["launcher_pid"] for i in listed if i.get("launcher_pid")]
        with open(os.path.join(runtime, "tickhost.pid")) as f:
            tickhost = int(f.read().split()[0])
        launcher_pss = sum(pss_kib(p) for p in launchers)
        tickhost_pss = pss_kib(tickhost)
        return {"instances": len(listed), "launchers": len(launchers),
                "pss_kib": launcher_pss + tickhost_pss, "launchers_pss_kib": launcher_pss,
                "tickhost_pss_kib": tickhost_pss, "open_each_ms": round(open_each, 2)}
    finally:
        subprocess.run([a.bin, "shutdown"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(runtime, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--settle-s", type=float, default=5.0)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    load = os.getloadavg()
    res = {"n": a.n, "loadavg_start": load, "shell": measure(a, "shell"), "tick": measure(a, "tick")}
    res["tick_vs_shell"] = round(res["tick"]["pss_kib"] / res["shell"]["pss_kib"], 2)
    print(f"{a.n} idle instances      PSS kB   per instance   tickhost kB   open ms")
    for kind in ("shell", "tick"):
        r = res[kind]
        print(f"  {kind:8} {r['pss_kib']:>14} {r['pss_kib'] // max(1, r['instances']):>14} "
              f"{r['tickhost_pss_kib']:>13} {r['open_each_ms']:>9}")
    print(f"  Ticks / shells: {res['tick_vs_shell']}   (loadavg at start {load[0]:.2f})")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
