#!/usr/bin/env python3
"""Where the memory of an idle instance goes (issue 30).

Opens two instances under a private tickhost: a shell program (`sleep`) and a
Tick (the counter package, `tests/ticks/counter.py`), waits for them to be
idle, and reads each launcher's /proc/PID/smaps: private dirty memory summed
by kind of mapping (the heap, the main stack, thread stacks, the
executable's own data, shared libraries' data, other anonymous memory), and
the same for tickhost. Then, when heaptrack is installed, runs each launcher
alone under heaptrack (`tickloop __launcher` with the same spec tickhost
would give it), stops it once idle and prints its largest live allocations
at the peak.

Run: cargo build --release && python3 benches/launcher_memory.py [--bin target/release/tickloop]
     [--heaptrack-lines 60]
heaptrack's symbolizer names no function of the current release builds,
with the debug info split off or not (it gives addresses only; the builds
before jsonschema 0.60 + macros were named): benches/launcher-memory-*.txt
keeps a named profile of such a build.
Prints a table, then one JSON line; heaptrack's summaries follow when asked.
Standard library only; Linux.
"""
import argparse
import collections
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COUNTER = os.path.join(ROOT, "tests/ticks/counter.py")


def smaps_by_kind(pid, exe):
    """Private_Dirty kB summed by kind of mapping, and the rollup's totals."""
    kinds = collections.Counter()
    name, size_kb = "", 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                size_kb = (hi - lo) // 1024
                name = head[5] if len(head) > 5 else ""
            elif head[0] == "Private_Dirty:":
                kb = int(head[1])
                if name == "[heap]":
                    kind = "heap"
                elif name == "[stack]":
                    kind = "main stack"
                elif name == exe or os.path.basename(name) == os.path.basename(exe):
                    kind = "executable's data"
                elif name.startswith("/"):
                    kind = "libraries' data"
                elif size_kb in (8192, 2048, 2052, 8196) or size_kb % 1024 == 0 and size_kb <= 8192:
                    # Thread stacks: std's 2 MiB and glibc's 8 MiB default.
                    kind = "thread stacks and large blocks"
                else:
                    kind = "other anonymous"
                kinds[kind] += kb
    rollup = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("Rss:", "Pss:", "Private_Dirty:"):
                rollup[parts[0].rstrip(":")] = int(parts[1])
    threads = len(os.listdir(f"/proc/{pid}/task"))
    return {"by_kind_kib": dict(kinds), "threads": threads, **{k + "_kib": v for k, v in rollup.items()}}


def launchers(a, runtime):
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime)

    def run(*args):
        return subprocess.run([a.bin, *args], env=env, capture_output=True, text=True, check=True)

    run("open", "--shell", "--id", "idle", "--", "sleep", "100000")
    run("open", "--id", "counter", "--", COUNTER)
    time.sleep(a.settle_s)
    out = {}
    for entry in json.loads(run("list", "--json").stdout):
        out[entry["id"]] = smaps_by_kind(entry["launcher_pid"], a.bin)
    with open(os.path.join(runtime, "tickhost.pid")) as f:
        out["tickhost"] = smaps_by_kind(int(f.read().split()[0]), a.bin)
    subprocess.run([a.bin, "shutdown"], env=env, capture_output=True)
    return out


def heaptrack(a, runtime, instance, argv, shell):
    spec = {"instance": instance, "shell": shell, "argv": argv, "cwd": ROOT,
            "env": [["PATH", os.environ.get("PATH", "/usr/bin:/bin")]],
            "socket": os.path.join(runtime, f"{instance.replace(':', '-')}.sock")}
    out = os.path.join(runtime, f"heaptrack-{instance.replace(':', '-')}")
    p = subprocess.Popen(["heaptrack", "-o", out, a.bin, "__launcher"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    p.stdin.write(json.dumps(spec))
    p.stdin.close()
    for line in p.stdout:
        if line.startswith("{"):
            break
    time.sleep(a.settle_s)
    # heaptrack runs the launcher beside its own helpers: stop the launcher only.
    children = subprocess.run(["pgrep", "-P", str(p.pid), "-f", "__launcher"],
                              capture_output=True, text=True).stdout.split()
    for child in children:
        os.kill(int(child), signal.SIGTERM)
    p.wait(timeout=30)
    files = [f for f in os.listdir(runtime) if f.startswith(os.path.basename(out))]
    printed = subprocess.run(["heaptrack_print", "--print-peaks", "1", "--print-allocators", "0",
                              "--print-temporary", "0", "--print-leaks", "0", "--peak-limit", "12",
                              os.path.join(runtime, files[0])], capture_output=True, text=True).stdout
    keep = [ln for ln in printed.splitlines()
            if ln.strip() and not ln.lstrip().startswith(("in /", "at /rustc", "at ./"))]
    return "\n".join(keep[: a.heaptrack_lines])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--settle-s", type=float, default=5.0,
                    help="idle time before reading (the launcher gives back spare history rows 2-4 s after the last output)")
    ap.add_argument("--heaptrack-lines", type=int, default=0,
                    help="print this many lines of each launcher's heaptrack peak summary")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    # A freshly built executable's pages are dirty in the page cache until
    # written back, and smaps counts them as the process's private dirty.
    os.sync()
    runtime = tempfile.mkdtemp(prefix="tlmem")
    res = launchers(a, runtime)
    kinds = sorted({k for r in res.values() for k in r["by_kind_kib"]})
    names = list(res)
    print("private dirty kB by mapping" + "".join(f"{n:>16}" for n in names))
    for k in kinds:
        print(f"  {k:30}" + "".join(f"{res[n]['by_kind_kib'].get(k, 0):>16}" for n in names))
    for k in ("Private_Dirty_kib", "Pss_kib", "Rss_kib", "threads"):
        print(f"  {k:30}" + "".join(f"{res[n][k]:>16}" for n in names))
    print(json.dumps(res))
    if a.heaptrack_lines and shutil.which("heaptrack"):
        for instance, argv, shell in (("shell:idle", ["sleep", "100000"], True),
                                      ("hosted:counter", [COUNTER], False)):
            print(f"\n== heaptrack, {instance}: live allocations at the peak")
            print(heaptrack(a, runtime, instance, argv, shell))
    shutil.rmtree(runtime, ignore_errors=True)


if __name__ == "__main__":
    main()
