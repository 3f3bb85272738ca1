#!/usr/bin/env python3
"""Isolation (issue 30): how much slower a quiet Tick's `read` gets while
another Tick floods updates to W `tickloop watch` clients.

Two counter Ticks under one tickhost: `quiet` never changes; `flood` emits
updates as fast as it can (its `flood` tool, called again and again) with a
64 KiB descriptor, watched by W watchers. The quiet Tick's `read` is timed N
times with nothing else running, then N times during the flood, two ways:

  process   a whole `tickloop read hosted:quiet` process (what the issue's
            figure is: start, connect, hello, read, exit)
  socket    one `read` request on a connection to tickhost.sock kept open
            (tickhost and the launcher only: no process start)

Prints p50/p99 of each and the flood/idle ratios, the loadavg, then one JSON
line. Standard library only.

Run: cargo build --release && python3 benches/isolation.py [--bin target/release/tickloop]
     [--samples 200] [--watchers 10]
"""
import argparse
import json
import os
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_busy():
    """(busy, total) jiffies of all CPUs, from /proc/stat."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def busy_share(before, after):
    return round((after[0] - before[0]) / max(1, after[1] - before[1]), 3)


def cpu_ticks(pid):
    """utime + stime of `pid`, in clock ticks (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])
    except (OSError, IndexError, ValueError):
        return 0


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(len(xs) * p))], 3)


class Connection:
    """One client connection to tickhost.sock, requests answered in order."""

    def __init__(self, path, version):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rwb", buffering=0)
        self.send({"hello": {"version": version, "role": "client"}})
        reply = json.loads(self.file.readline())
        if "refused" in json.dumps(reply):
            raise SystemExit(f"tickhost refused the hello: {reply}")
        self.next_id = 1

    def send(self, value):
        self.file.write((json.dumps(value) + "\n").encode())

    def request(self, request):
        self.next_id += 1
        self.send({"id": self.next_id, "request": request})
        while True:
            reply = json.loads(self.file.readline())
            if reply.get("id") == self.next_id or "reply" in reply or "error" in reply:
                return reply


def sample(a, env, conn):
    proc, sock = [], []
    for _ in range(a.samples):
        t = time.perf_counter()
        subprocess.run([a.bin, "read", "hosted:quiet"], env=env, capture_output=True, check=True)
        proc.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        conn.request({"op": "read", "instance": "hosted:quiet"})
        sock.append((time.perf_counter() - t) * 1000)
    return proc, sock


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--watchers", type=int, default=10)
    ap.add_argument("--describe-bytes", type=int, default=65536)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    runtime = tempfile.mkdtemp(prefix="tliso")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)

    def run(*args):
        return subprocess.run([a.bin, *args], env=env, capture_output=True, text=True, check=True)

    counter = os.path.join(ROOT, "tests/ticks/counter.py")
    run("open", "--id", "quiet", "--", counter)
    run("open", "--id", "flood", "--", counter, "--describe-bytes", str(a.describe_bytes))
    version = json.loads(run("version", "--json").stdout)["wire_version"]
    conn = Connection(os.path.join(runtime, "tickhost.sock"), version)
    load0 = os.getloadavg()
    cpu0 = cpu_busy()
    idle_proc, idle_sock = sample(a, env, conn)
    cpu1 = cpu_busy()

    watchers = [subprocess.Popen([a.bin, "watch", "hosted:flood", "--interval", "10"], env=env,
                                 stdout=subprocess.DEVNULL) for _ in range(a.watchers)]
    stop = threading.Event()
    floods = [0]

    def flood():
        while not stop.is_set():
            p = subprocess.run([a.bin, "call", "hosted:flood", "flood", json.dumps({"count": 2000}),
                                "--revision", "1"], env=env, capture_output=True, text=True)
            if p.returncode == 0:
                floods[0] += 1

    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    time.sleep(1.0)
    load1 = os.getloadavg()
    listed = {i["id"]: i for i in json.loads(run("list").stdout)}
    with open(os.path.join(runtime, "tickhost.pid")) as f:
        tickhost_pid = int(f.read().split()[0])
    groups = {
        "tickhost": [tickhost_pid],
        "quiet launcher": [listed["hosted:quiet"]["launcher_pid"]],
        "flood launcher": [listed["hosted:flood"]["launcher_pid"]],
        "flood Tick": [listed["hosted:flood"]["pid"]],
        "watchers": [w.pid for w in watchers],
    }
    ticks0 = {g: sum(cpu_ticks(p) for p in pids) for g, pids in groups.items()}
    cpu2 = cpu_busy()
    flood_proc, flood_sock = sample(a, env, conn)
    cpu3 = cpu_busy()
    ticks1 = {g: sum(cpu_ticks(p) for p in pids) for g, pids in groups.items()}
    load2 = os.getloadavg()
    stop.set()
    flooder.join(timeout=30)
    for w in watchers:
        w.kill()
    subprocess.run([a.bin, "shutdown"], env=env, capture_output=True)

    res = {"samples": a.samples, "watchers": a.watchers, "flood_calls": floods[0],
           "loadavg": {"start": load0, "flood_start": load1, "end": load2},
           "cpu_busy_share": {"idle": busy_share(cpu0, cpu1), "flood": busy_share(cpu2, cpu3)}}
    # Each group's share of all CPUs' time during the flood's samples.
    all_ticks = max(1, cpu3[1] - cpu2[1])
    res["flood_cpu_share"] = {g: round((ticks1[g] - ticks0[g]) / all_ticks, 3) for g in groups}
    for name, idle, busy in (("process", idle_proc, flood_proc), ("socket", idle_sock, flood_sock)):
        res[name] = {"idle_p50": pct(idle, 0.5), "idle_p99": pct(idle, 0.99),
                     "flood_p50": pct(busy, 0.5), "flood_p99": pct(busy, 0.99)}
        res[name]["ratio_p50"] = round(res[name]["flood_p50"] / res[name]["idle_p50"], 2)
    print(f"quiet Tick's read, ms ({a.samples} samples; {a.watchers} watchers on the flood; "
          f"{floods[0]} flood calls of 2000 updates)")
    print("             idle p50  idle p99  flood p50  flood p99  p50 ratio")
    for name in ("process", "socket"):
        r = res[name]
        print(f"  {name:8}  {r['idle_p50']:>9} {r['idle_p99']:>9} {r['flood_p50']:>10} "
              f"{r['flood_p99']:>10} {r['ratio_p50']:>10}")
    print(f"  loadavg: start {load0[0]:.2f}, flood {load1[0]:.2f}, end {load2[0]:.2f}; "
          f"CPUs busy: {res['cpu_busy_share']['idle']:.0%} while idle, "
          f"{res['cpu_busy_share']['flood']:.0%} during the flood")
    print("  share of both CPUs during the flood: " + ", ".join(
        f"{g} {v:.0%}" for g, v in res["flood_cpu_share"].items()) +
        " (the rest: the `call` and `read` processes, the rest of the machine)")
    print(json.dumps(res))


if __name__ == "__main__":
    main()
