#!/usr/bin/env python3
"""A Tick that stops reading its stdin, under a thousand calls (issue 42).

Opens `tests/ticks/deaf.py` under a private tickhost (it answers its first
call, then never reads its stdin again), lets its launcher settle, and reads
its memory (/proc/PID/smaps_rollup: private dirty, RSS; the peak RSS is
reset through /proc/PID/clear_refs). Then sends CALLS calls of BYTES of
arguments each, all at once, one connection each, through tickhost, waits
until every one is answered, and reads the launcher's memory again: the
peak RSS while they ran, right after, and after SETTLE seconds of quiet (the
launcher gives free pages back to the system after 2-4 s of quiet). Calls time out after
TICKLOOP_CALL_TIMEOUT_MS (200 ms here), so their slots free up and more is
written to the Tick: the case where a queue without a bound grows.

Run: cargo build --release && python3 benches/deaf_tick.py [--bin target/release/tickloop]
     [--calls 1000] [--bytes 16384]
Run it against an older build (--bin) for the before figure.
Prints a table, then one JSON line. Standard library only; Linux.
"""
import argparse
import collections
import json
import os
import socket
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEAF = os.path.join(ROOT, "tests/ticks/deaf.py")


def memory(pid):
    """Private dirty, RSS and peak RSS of `pid`, in kB."""
    out = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts[0] in ("Rss:", "Private_Dirty:"):
                out[parts[0].rstrip(":").lower() + "_kib"] = int(parts[1])
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                out["peak_rss_kib"] = int(line.split()[1])
    return out


def one_call(path, wire, text, outcomes, lock):
    """One `call` on its own connection; its outcome, classified."""
    kind = "error"
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        f = s.makefile("rwb")
        f.write((json.dumps({"hello": {"version": wire, "role": "client", "client": "mcp"}}) + "\n").encode())
        f.flush()
        f.readline()
        call = {"op": "call", "instance": "hosted:deaf", "tool": "note",
                "args": {"text": text}, "revision": "1"}
        f.write((json.dumps({"id": 1, "request": call}) + "\n").encode())
        f.flush()
        while True:
            msg = json.loads(f.readline())
            if "reply" in msg:
                break
        reply = msg["reply"]["reply"]
        outcome = reply.get("call", {})
        if outcome.get("outcome") == "not_executed":
            message = outcome["error"]["message"]
            kind = ("refused: not reading its stdin" if "not reading" in message
                    else "refused: busy" if "already waiting" in message
                    else "refused: other")
        elif outcome:
            kind = outcome.get("outcome", "?")
        else:
            kind = "error: " + str(reply)[:80]
        s.close()
    except OSError as e:
        kind = f"error: {e}"
    with lock:
        outcomes[kind] += 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--bytes", type=int, default=16 * 1024, help="bytes of arguments per call")
    ap.add_argument("--settle-s", type=float, default=5.0,
                    help="idle time before the first reading (spare history rows go back 2-4 s after output)")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    os.sync()
    runtime = tempfile.mkdtemp(prefix="tldeaf")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TICKLOOP_CALL_TIMEOUT_MS="200")

    def run(*args):
        return subprocess.run([a.bin, *args], env=env, capture_output=True, text=True)

    wire = json.loads(run("version", "--json").stdout)["wire_version"]
    opened = json.loads(run("open", "--id", "deaf", "--", "python3", DEAF).stdout)
    pid = opened["launcher_pid"]
    first = run("call", "deaf", "note", '{"text":"first"}', "--revision", "1")
    assert first.returncode == 0, first
    time.sleep(a.settle_s)
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")  # resets the peak RSS
    idle = memory(pid)

    outcomes, lock = collections.Counter(), threading.Lock()
    text = "n" * a.bytes
    path = os.path.join(runtime, "tickhost.sock")
    started = time.monotonic()
    threads = [threading.Thread(target=one_call, args=(path, wire, text, outcomes, lock))
               for _ in range(a.calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - started
    after = memory(pid)
    time.sleep(a.settle_s)
    settled = memory(pid)
    alive = run("list", "--json")
    state = next(e["state"] for e in json.loads(alive.stdout) if e["id"] == "hosted:deaf")
    run("shutdown")

    print(f"{a.calls} calls of {a.bytes} bytes to a Tick that does not read ({a.bin}), answered in {took:.1f} s")
    for kind, n in sorted(outcomes.items()):
        print(f"  {kind:34}{n:>6}")
    print(f"  {'launcher kB':34}{'idle':>10}{'after':>10}{'ratio':>8}{'settled':>10}{'ratio':>8}")
    for key, label in (("private_dirty_kib", "private dirty"), ("rss_kib", "RSS")):
        print(f"  {label:34}{idle[key]:>10}{after[key]:>10}{after[key] / idle[key]:>8.2f}"
              f"{settled[key]:>10}{settled[key] / idle[key]:>8.2f}")
    print(f"  {'peak RSS while they ran':34}{idle['rss_kib']:>10}{after['peak_rss_kib']:>10}"
          f"{after['peak_rss_kib'] / idle['rss_kib']:>8.2f}")
    print(f"  instance state after: {state}")
    print(json.dumps({"calls": a.calls, "bytes": a.bytes, "outcomes": dict(outcomes), "idle": idle,
                      "after": after, "settled": settled, "peak_over_idle_rss": after["peak_rss_kib"] / idle["rss_kib"],
                      "seconds": took, "state": state}))


if __name__ == "__main__":
    main()
