#!/usr/bin/env python3
"""What a keystroke's echo costs each process (issue 51): the CPU time the
view (`tickloop attach`, `tmux attach`) and the keeper (the launcher, tmux's
server) spend per echo, all their threads counted (`/proc/PID/task/*/
schedstat`, nanoseconds, kernel time included), their context switches per
echo, and the echo's median time, for tmux and each Tickloop executable
given, one after the other in one run.

A program in raw mode echoes every byte it reads as `<b>\\r\\n`; the view
runs in a 120x30 PTY of this script's; N bytes are typed one at a time,
each after the echo of the one before, 4 ms apart. Tickloop's view shows
its note (the keys, on the last row) for 3 s after attaching: `--note`
types while it shows, else typing starts after it is gone. termbench's
echo runs mostly while it shows.

Run: python3 benches/echo_cpu.py [--note] [-n 300] BIN [BIN...]
Standard library and tmux only.
"""
import argparse
import fcntl
import os
import pty
import select
import shutil
import struct
import subprocess
import tempfile
import termios
import time

from echo_program import ECHO  # noqa: E402 (beside this script)


def cpu_ns(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass
    return total


def switches(pid):
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if "ctxt_switches" in line:
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


def launcher_with_child(env):
    """The launcher that runs the program (the spare has no child)."""
    out = subprocess.run(["pgrep", "-f", "__launcher"], capture_output=True, text=True).stdout
    for pid in out.split():
        if subprocess.run(["pgrep", "-P", pid], capture_output=True).stdout.strip():
            return pid
    raise SystemExit("no launcher runs the echo program")


def one(kind, binary, n, note):
    runtime = tempfile.mkdtemp(prefix="echocpu")
    env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TMUX_TMPDIR=runtime, TERM="xterm-256color")
    env.pop("TMUX", None)
    if kind == "tmux":
        subprocess.run(["tmux", "-f", "/dev/null", "new-session", "-d", "-s", "echo", "-x", "120",
                        "-y", "30", "python3", "-c", ECHO], env=env, check=True)
        argv = ["tmux", "attach", "-t", "echo"]
    else:
        subprocess.run([binary, "open", "--shell", "--id", "echo", "--", "python3", "-c", ECHO],
                       env=env, capture_output=True, check=True)
        argv = [binary, "attach", "shell:echo"]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvpe(argv[0], argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))

    def wait_for(marker, timeout=10.0):
        buf, end = b"", time.monotonic() + timeout
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.2)[0]:
                buf += os.read(fd, 65536)
                if marker in buf:
                    return True
        return False

    if not wait_for(b"READY", 30):
        raise SystemExit(f"{kind}: the echo program never drew")
    time.sleep(0.2 if note else 3.5)
    if kind == "tmux":
        keeper = subprocess.run(["tmux", "display", "-p", "#{pid}"], env=env, capture_output=True,
                                text=True).stdout.strip()
    else:
        keeper = launcher_with_child(env)
    pids = {"view": pid, "keeper": keeper}
    cpu0 = {k: cpu_ns(p) for k, p in pids.items()}
    sw0 = {k: switches(p) for k, p in pids.items()}
    times = []
    for i in range(n):
        byte = b"abcdefghijklmnopqrstuvwxyz"[i % 26:i % 26 + 1]
        t0 = time.perf_counter()
        os.write(fd, byte)
        if not wait_for(b"<" + byte + b">"):
            raise SystemExit(f"{kind}: echo {i} never came")
        times.append(time.perf_counter() - t0)
        time.sleep(0.004)
    cpu1 = {k: cpu_ns(p) for k, p in pids.items()}
    sw1 = {k: switches(p) for k, p in pids.items()}
    if kind == "tmux":
        subprocess.run(["tmux", "kill-server"], env=env)
    else:
        os.write(fd, b"\x1cd")
        time.sleep(0.3)
        subprocess.run([binary, "shutdown"], env=env, capture_output=True)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    times.sort()
    return {
        "echo_p50_ms": round(times[n // 2] * 1000, 3),
        **{f"{k}_us": round((cpu1[k] - cpu0[k]) / n / 1000, 1) for k in pids},
        **{f"{k}_switches": round((sw1[k] - sw0[k]) / n, 1) for k in pids},
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bins", nargs="+")
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--note", action="store_true", help="type while the note after attaching shows")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        raise SystemExit("echo_cpu needs tmux")
    print(f"per echo, {a.n} echoes, {'while' if a.note else 'after'} Tickloop's note shows; load {os.getloadavg()[0]:.2f}")
    print(f"{'system':40} {'echo p50 ms':>11} {'view us':>8} {'keeper us':>9} {'view sw':>8} {'keeper sw':>9}")
    for kind, binary in [("tmux", None)] + [("tickloop", b) for b in a.bins]:
        r = one(kind, binary, a.n, a.note)
        name = "tmux" if kind == "tmux" else binary
        print(f"{name:40} {r['echo_p50_ms']:>11} {r['view_us']:>8} {r['keeper_us']:>9} "
              f"{r['view_switches']:>8} {r['keeper_switches']:>9}")


if __name__ == "__main__":
    main()
