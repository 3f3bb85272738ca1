#!/usr/bin/env python3
"""Who works during a flood (issue 51): for each Tickloop executable given,
one after the other, a 64 MiB flood of termbench's data (`cat` of a file,
20 % with SGR colour, 11 % UTF-8) through one `shell:` instance, headless
or with `tickloop attach` in a 120x30 PTY of this script's; for each
thread of the launcher (its runtime, `terminal`) and of the view: the CPU
it used (`/proc/.../schedstat`, kernel time included) and how often it
slept (voluntary context switches) or was preempted (involuntary).

The program says the flood is over through a FIFO, so nothing polls the
launcher meanwhile. The time is from the Enter that starts `cat` to its
end, as termbench's throughput is.

Attached, `--view stopped` stops the view (`SIGSTOP`) 30 ms into the
flood, `--view detached` detaches it before the flood, and `--start cli`
types the Enter with `tickloop keys` instead of through the view: what
ruled out the view's drawing, the echo's lending and the view's
registration in the launcher (`results/cost-2026-12-07g.md`).

Run: python3 benches/flood_threads.py [--attached [--view live|stopped|detached]
     [--start view|cli]] [--rounds 3] BIN [BIN...]
Standard library only; termbench.py (../shared/bench, or --termbench)
makes the data.
"""
import argparse
import os
import pty
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import fcntl
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TERMBENCH = os.path.join(HERE, "..", "..", "shared", "bench")


def threads(pid):
    """Per thread of `pid`: (CPU ns, voluntary, involuntary switches)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        base = f"/proc/{pid}/task/{tid}"
        try:
            comm = open(f"{base}/comm").read().strip()
            cpu = int(open(f"{base}/schedstat").read().split()[0])
            status = dict(
                line.split(":\t", 1) for line in open(f"{base}/status").read().splitlines() if ":\t" in line
            )
        except OSError:
            continue
        name = "runtime" if tid == str(pid) else comm
        out[name] = (cpu, int(status["voluntary_ctxt_switches"]), int(status["nonvoluntary_ctxt_switches"]))
    return out


def delta(before, after):
    """What each thread did between the two looks; a thread started since
    (the terminal thread of a launcher whose quiet terminal had none) from
    nothing."""
    return {k: tuple(after[k][i] - before.get(k, (0, 0, 0))[i] for i in range(3)) for k in after}


def launcher_of(sid):
    """The launcher whose program runs the instance `sid` (its command line names it)."""
    for pid in subprocess.run(["pgrep", "-f", "__launcher"], capture_output=True, text=True).stdout.split():
        try:
            children = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split()
            if any(sid in open(f"/proc/{c}/cmdline").read() for c in children):
                return int(pid)
        except OSError:
            continue
    raise SystemExit(f"no launcher found for {sid}")


def one_round(binary, data, attached, n, view_mode="live", start="view"):
    rt = tempfile.mkdtemp(prefix="flood-")
    over = os.path.join(rt, "over")
    os.mkfifo(over)
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=rt, TERM="xterm-256color", LANG="C.UTF-8")
    sid = f"flood{n}"
    script = f"read x; cat {data}; echo > {over}; : {sid}; exec sleep 1000"
    subprocess.run([binary, "open", "--shell", "--id", sid, "--", "bash", "-c", script],
                   env=env, capture_output=True, check=True)
    launcher = launcher_of(sid)
    view = None
    if attached:
        view, fd = pty.fork()
        if view == 0:
            os.execvpe(binary, [binary, "attach", f"shell:{sid}"], env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))

        def drain():
            try:
                while os.read(fd, 1 << 16):
                    pass
            except OSError:
                pass
        threading.Thread(target=drain, daemon=True).start()
        time.sleep(4)  # past the view's note after attaching
    before = {"launcher": threads(launcher), **({"view": threads(view)} if view else {})}
    if view and view_mode == "detached":
        os.write(fd, b"\x1cd")
        os.waitpid(view, 0)
        view = None
        before.pop("view")
    t0 = time.monotonic()
    if view and start == "view":
        os.write(fd, b"\r")
    else:
        subprocess.run([binary, "keys", f"shell:{sid}", "Enter"], env=env, capture_output=True, check=True)
    if view and view_mode == "stopped":
        time.sleep(0.03)
        os.kill(view, signal.SIGSTOP)
    open(over).read()
    seconds = time.monotonic() - t0
    after = {"launcher": threads(launcher), **({"view": threads(view)} if view else {})}
    if view:
        os.kill(view, signal.SIGCONT)
        os.write(fd, b"\x1cd")
        os.waitpid(view, 0)
    subprocess.run([binary, "shutdown"], env=env, capture_output=True)
    return seconds, {who: delta(before[who], after[who]) for who in before}


def flood_data(termbench_dir):
    """The 64 MiB of termbench's data (made once, in the temporary folder)."""
    data = os.path.join(tempfile.gettempdir(), "flood_threads-64MiB.bin")
    if not os.path.exists(data):
        sys.path.insert(0, termbench_dir)
        import termbench  # noqa: E402

        termbench.make_data(data, 64 << 20, 20261129)
    return data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--attached", action="store_true")
    ap.add_argument("--view", choices=["live", "stopped", "detached"], default="live")
    ap.add_argument("--start", choices=["view", "cli"], default="view")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--termbench", default=TERMBENCH)
    ap.add_argument("bins", nargs="+")
    args = ap.parse_args()
    data = flood_data(args.termbench)
    mode = "headless"
    if args.attached:
        mode = "attached" + ("" if args.view == "live" else f", view {args.view}") + (
            "" if args.start == "view" else ", started from the CLI")
    for r in range(args.rounds):
        for binary in args.bins:
            seconds, work = one_round(binary, data, args.attached, r, args.view, args.start)
            print(f"{binary} {mode} round {r + 1}: {seconds:.3f} s, {64 / seconds:.1f} MiB/s")
            for who, per in work.items():
                for name, (cpu, vol, invol) in sorted(per.items()):
                    if cpu < 1_000_000 and vol < 100:
                        continue
                    print(f"  {who:8} {name:16} cpu {cpu / 1e6:7.1f} ms  slept {vol:6}  preempted {invol:5}")


if __name__ == "__main__":
    main()
