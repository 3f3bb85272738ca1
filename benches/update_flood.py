#!/usr/bin/env python3
"""An update flood through tickhost (issue 10): one counter Tick whose
descriptor is padded to 64 KiB floods N updates while W `tickloop watch`
processes watch it; reports updates absorbed per second (until the last
watcher saw the last seq) and the CPU seconds tickhost and the launcher
spent, per 1000 updates.

Run: cargo build --release && python3 benches/update_flood.py [--bin target/release/tickloop]
     [--updates 20000] [--watchers 10] [--describe-bytes 65536]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--updates", type=int, default=20000)
    ap.add_argument("--watchers", type=int, default=10)
    ap.add_argument("--describe-bytes", type=int, default=65536)
    a = ap.parse_args()
    runtime = tempfile.mkdtemp(prefix="tlflood")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)
    run = lambda *args: subprocess.run([a.bin, *args], env=env, capture_output=True, text=True, check=True)
    counter = os.path.join(ROOT, "tests/ticks/counter.py")
    run("open", "--id", "flood", "--", counter, "--describe-bytes", str(a.describe_bytes))
    entry = json.loads(run("list").stdout)[0]
    with open(os.path.join(runtime, "tickhost.pid")) as f:
        tickhost = int(f.read().strip())
    launcher = entry["launcher_pid"]
    watchers = [subprocess.Popen([a.bin, "watch", "hosted:flood", "--interval", "10"], env=env,
                                 stdout=subprocess.PIPE, text=True) for _ in range(a.watchers)]
    time.sleep(0.5)
    cpu0 = (cpu_seconds(tickhost), cpu_seconds(launcher))
    t0 = time.monotonic()
    run("call", "hosted:flood", "flood", json.dumps({"count": a.updates}), "--revision", "1")
    target = a.updates
    for w in watchers:
        for line in w.stdout:
            try:
                seq = json.loads(line).get("seq", 0)
            except ValueError:
                continue
            if seq >= target:
                break
    elapsed = time.monotonic() - t0
    cpu1 = (cpu_seconds(tickhost), cpu_seconds(launcher))
    for w in watchers:
        w.kill()
    run("close", "hosted:flood")
    subprocess.run([a.bin, "shutdown"], env=env, capture_output=True)
    per_k = lambda i: (cpu1[i] - cpu0[i]) * 1000 / a.updates
    print(f"update flood: {a.updates} updates, {a.watchers} watchers, descriptor {a.describe_bytes} B")
    print(f"  absorbed: {a.updates / elapsed:,.0f} updates/s ({elapsed:.2f} s until every watcher saw the last)")
    print(f"  tickhost CPU: {per_k(0) * 1000:.1f} ms per 1000 updates; launcher CPU: {per_k(1) * 1000:.1f} ms per 1000 updates")


if __name__ == "__main__":
    main()
