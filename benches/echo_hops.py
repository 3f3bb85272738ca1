#!/usr/bin/env python3
"""The way of a keystroke's echo, hop by hop (issue 40): which threads of
`tickloop attach` and of the launcher a typed byte and its echo cross, and
how long each hop takes, read from `strace -f -ttt` of both processes.

A shell instance runs a program that echoes every byte it reads as
`<b>\\r\\n` (raw mode); `tickloop attach` runs in a PTY of this script's; the
script types N bytes, one at a time, each after the echo of the one before.
For each it finds, in the two traces:

  key in     the view reads the byte from its terminal
  key out    the view writes the key event to the launcher's socket
  key at L   the launcher reads the event from the view's socket
  to PTY     the launcher writes the byte to the PTY master
  echo at L  the launcher reads the echo from the PTY master
  frame out  the launcher writes the frame to the view's socket
  frame in   the view reads the frame from its socket
  drawn      the view writes the echo to its terminal

or, when the view lent its terminal and the launcher drew the echo there
itself (`launcher/src/terminal/direct.rs`), after `echo at L`:

  drawn by L the launcher writes the echo to the view's terminal

or, when the view lent its keys too (`launcher/src/terminal/keys.rs`), the
launcher reads the byte itself, and the view is not on the way at all:

  read by L  the launcher reads the byte from the view's terminal
  to PTY ... echo at L ... drawn by L

and prints, for each hop, the thread that did it (named) and the median
time from the hop before; then the count of thread changes on the way.
strace slows every system call, so read the times as shares, not as the
echo's latency (termbench measures that). Standard library and strace only.

Run: cargo build --release && python3 benches/echo_hops.py [--bin target/release/tickloop] [-n 30]
"""
import argparse
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from echo_program import ECHO  # noqa: E402 (beside this script)

HOPS = ["key in", "key out", "key at L", "to PTY", "echo at L", "frame out", "frame in", "drawn"]
# The launcher draws the echo on the view's terminal itself.
HOPS_LENT = HOPS[:5] + ["drawn by L"]
# The launcher reads the key from the view's terminal too.
HOPS_KEYS = ["read by L", "to PTY", "echo at L", "drawn by L"]
ALL_HOPS = ["read by L"] + HOPS + ["drawn by L"]

LINE = re.compile(r"^(?:\[pid\s+(\d+)\]\s+|(\d+)\s+)?(\d+\.\d+)\s+(.*)$")
CALL = re.compile(r"^(\w+)\((\d+),\s*(.*)$")
RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>\s*(.*)$")


def parse(path, default_tid):
    """(tid, time it was made, call, fd, rest, time it returned) of every
    traced call that returned (strace -ttt stamps a call when it is made; a
    call strace split in two, `<unfinished ...>` then `<... resumed>`, is
    put back together, and stamped again when it returned)."""
    out = []
    pending = {}
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line.rstrip("\n"))
            if not m:
                continue
            tid = int(m.group(1) or m.group(2) or default_tid)
            when, body = float(m.group(3)), m.group(4)
            resumed = RESUMED.match(body)
            if resumed:
                start = pending.pop(tid, None)
                if start and start[0] == resumed.group(1):
                    out.append((tid, start[3], start[0], start[1], start[2] + resumed.group(2), when))
                continue
            call = CALL.match(body)
            if not call:
                continue
            name, fd, rest = call.group(1), int(call.group(2)), call.group(3)
            if rest.endswith("<unfinished ...>"):
                pending[tid] = (name, fd, rest[: -len("<unfinished ...>")], when)
                continue
            out.append((tid, when, name, fd, rest, when))
    out.sort(key=lambda e: e[1])
    return out


def thread_names(pid):
    names = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names[int(tid)] = f.read().strip()
        except OSError:
            pass
    return names


def fds_to(pid, target):
    """The descriptors of `pid` that point at `target` (a path or socket)."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if target(os.readlink(f"/proc/{pid}/fd/{fd}")):
                found.add(int(fd))
        except OSError:
            pass
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/tickloop"))
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--keep", action="store_true", help="keep the traces (printed)")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    if not shutil.which("strace"):
        sys.exit("echo_hops needs strace")
    runtime = tempfile.mkdtemp(prefix="tlhops")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TERM="xterm-256color")

    def run(*args):
        return subprocess.run([a.bin, *args], env=env, capture_output=True, text=True, check=True)

    run("open", "--shell", "--id", "echo", "--", sys.executable, "-c", ECHO)
    launcher = next(i["launcher_pid"] for i in json.loads(run("list").stdout) if i["id"] == "shell:echo")
    pid, master = pty.fork()
    if pid == 0:
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        os.execve(a.bin, [a.bin, "attach", "shell:echo"], env)
    seen = b""

    def read_until(marker, timeout=30):
        nonlocal seen
        end = time.time() + timeout
        while marker not in seen:
            left = end - time.time()
            if left <= 0:
                raise SystemExit(f"no {marker!r} from the view: {seen[-300:]!r}")
            if select.select([master], [], [], left)[0]:
                seen += os.read(master, 65536)

    read_until(b"READY")
    time.sleep(0.5)
    traces = {}
    tracers = []
    for name, p in (("view", pid), ("launcher", launcher)):
        path = os.path.join(runtime, f"{name}.strace")
        traces[name] = (path, p)
        tracers.append(subprocess.Popen(
            ["strace", "-f", "-ttt", "-s", "256", "-e",
             "trace=read,write,recvfrom,sendto,readv,writev,recvmsg,sendmsg", "-p", str(p), "-o", path],
            stderr=subprocess.DEVNULL))
    time.sleep(1.0)
    names = {**{t: f"view {n}" for t, n in thread_names(pid).items()},
             **{t: f"launcher {n}" for t, n in thread_names(launcher).items()}}
    view_tty = fds_to(pid, lambda t: t.startswith("/dev/pts") or t == "/dev/tty")
    launcher_ptmx = fds_to(launcher, lambda t: t == "/dev/ptmx" or t.startswith("/dev/pts/ptmx"))
    view_terminal = os.readlink(f"/proc/{pid}/fd/0")
    # The view's terminal as the launcher opened it (lent), if it did.
    launcher_lent = fds_to(launcher, lambda t: t == view_terminal)
    letters = b"abcdefghijklmnopqrstuvwxyz0123456789"
    typed = []
    for i in range(a.n):
        ch = letters[i % len(letters):][:1]
        seen = b""
        os.write(master, ch)
        typed.append(ch)
        read_until(b"<" + ch + b">")
        time.sleep(0.05)
    # The keys' descriptor is opened once the view lends them (after the
    # first key ends its note): looked at again now.
    launcher_lent = launcher_lent | fds_to(launcher, lambda t: t == view_terminal)
    time.sleep(0.5)
    for t in tracers:
        t.send_signal(signal.SIGINT)
        t.wait(timeout=10)
    os.kill(pid, signal.SIGTERM)
    run("shutdown")

    if a.keep:
        print("traces:", traces["view"][0], traces["launcher"][0], view_tty, launcher_ptmx)
    view = parse(traces["view"][0], pid)
    lau = parse(traces["launcher"][0], launcher)
    per_hop = {h: [] for h in ALL_HOPS}
    threads = {h: {} for h in ALL_HOPS}
    changes = []
    totals = []
    missed = {}
    lent_keys = 0
    read_by_launcher = 0
    for ch in typed:
        c = ch.decode()
        # strace shows the JSON's quotes escaped.
        key = f'\\"{c}\\"'
        echo = f"<{c}>"
        steps = []

        def first(events, after, pred):
            """The first call matching `pred` made after `after`, or (a
            blocking read) made before and returned after; stamped then."""
            for e in sorted(events, key=lambda e: e[5]):
                if e[5] >= after and pred(e):
                    return e if e[1] >= after else (e[0], e[5], *e[2:])
            return None

        t0 = 0.0
        found = [
            (view, lambda e: e[2] == "read" and e[3] in view_tty and f'"{c}"' in e[4] and "= 1" in e[4].rsplit(")", 1)[-1]),
            (view, lambda e: e[2] in ("write", "sendto", "sendmsg") and "key" in e[4] and key in e[4]),
            (lau, lambda e: e[2] in ("read", "recvfrom", "recvmsg") and "key" in e[4] and key in e[4]),
            (lau, lambda e: e[2] in ("write", "writev") and e[3] in launcher_ptmx and f'"{c}"' in e[4]),
            (lau, lambda e: e[2] == "read" and e[3] in launcher_ptmx and echo in e[4]),
            (lau, lambda e: e[2] in ("write", "sendto", "writev", "sendmsg") and e[3] not in launcher_ptmx and echo in e[4]),
            (view, lambda e: e[2] in ("read", "recvfrom", "recvmsg") and e[3] not in view_tty and echo in e[4]),
            (view, lambda e: e[2] in ("write", "writev") and echo in e[4] and e[3] not in fds_to(pid, lambda t: t.startswith("socket:"))),
        ]
        lent = found[:5] + [
            (lau, lambda e: e[2] in ("write", "writev") and e[3] in launcher_lent and echo in e[4]),
        ]
        keys = [(lau, lambda e: e[2] == "read" and e[3] in launcher_lent and f'"{c}"' in e[4])] + lent[3:]
        # The launcher drew it, if its first write of the echo went to the
        # view's terminal; else the view did. It read the key itself if it
        # read it from the view's terminal.
        hops, path = HOPS, found
        if launcher_lent and first(lau, 0.0, keys[0][1]) is not None:
            hops, path = HOPS_KEYS, keys
        elif launcher_lent:
            after_echo = [first(lau, 0.0, p) for p in (found[5][1], lent[5][1])]
            if after_echo[1] is not None and (after_echo[0] is None or after_echo[1][1] <= after_echo[0][1]):
                hops, path = HOPS_LENT, lent
        ok = True
        for hop, (events, pred) in zip(hops, path):
            e = first(events, t0, pred)
            if e is None:
                ok = False
                missed[hop] = missed.get(hop, 0) + 1
                break
            steps.append(e)
            t0 = e[1]
        if not ok:
            continue
        lent_keys += hops is not HOPS
        read_by_launcher += hops is HOPS_KEYS
        totals.append((steps[-1][1] - steps[0][1]) * 1000)
        for h, e, prev in zip(hops, steps, [None] + steps[:-1]):
            if prev is not None:
                per_hop[h].append((e[1] - prev[1]) * 1000)
            name = names.get(e[0], str(e[0]))
            threads[h][name] = threads[h].get(name, 0) + 1
        tids = [e[0] for e in steps]
        changes.append(sum(1 for x, y in zip(tids, tids[1:]) if x != y))

    def med(xs):
        xs = sorted(xs)
        return round(xs[len(xs) // 2], 3) if xs else None

    print(f"a keystroke's echo through `tickloop attach`, under strace ({len(changes)} of {a.n} keys traced whole;"
          f" {lent_keys} drawn by the launcher on the view's terminal, {read_by_launcher} read by it there)")
    print(f"{'hop':<10} {'thread (of the view, or the launcher)':<40} {'ms from the hop before, median':>30}")
    for h in ALL_HOPS:
        who = ", ".join(f"{n} x{k}" for n, k in sorted(threads[h].items(), key=lambda kv: -kv[1]))
        print(f"{h:<10} {who:<40} {str(med(per_hop[h])) if per_hop[h] else '':>30}")
    total = totals
    if missed:
        print(f"keys not found whole, by the hop not found: {missed}")
    print(f"thread changes on the way (median): {med(changes)}; the key read -> drawn, median {med(total)} ms")
    print(json.dumps({"keys": a.n, "traced": len(changes), "drawn_by_launcher": lent_keys,
                      "read_by_launcher": read_by_launcher,
                      "thread_changes_p50": med(changes),
                      "hops_ms_p50": {h: med(per_hop[h]) for h in ALL_HOPS if h not in ("read by L", "key in")},
                      "threads": threads, "total_ms_p50": med(total), "loadavg": os.getloadavg()}))
    if not a.keep:
        shutil.rmtree(runtime, ignore_errors=True)


if __name__ == "__main__":
    main()
