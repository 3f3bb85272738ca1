#!/usr/bin/env python3
"""usage: faults_per_key.py BIN PAUSE_S N

The launcher's minor page faults for each of N keystrokes typed through a
real `tickloop attach` into bash, PAUSE_S seconds apart: what a keystroke
after a quiet spell costs once the launcher has let go of its code
(tickloop_client::idle), beside keystrokes typed close together."""
import os, pty, sys, time, subprocess, tempfile, select, struct, fcntl, termios
b, pause, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
env = dict(os.environ, TICKLOOP_RUNTIME_DIR=tempfile.mkdtemp(), HOME=tempfile.mkdtemp(), TERM="xterm-256color")
subprocess.run([b, "open", "--shell", "--id", "k", "--", "bash", "--norc", "-i"], env=env, capture_output=True, check=True)
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(b, [b, "attach", "k"], env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
def drain(t):
    end = time.time() + t
    while time.time() < end:
        r, _, _ = select.select([fd], [], [], max(0, end - time.time()))
        if r:
            try: os.read(fd, 65536)
            except OSError: return
drain(2.5)
import json
listed = json.loads(subprocess.run([b, "list", "--json"], env=env, capture_output=True, text=True).stdout)
listed = listed if isinstance(listed, list) else listed["instances"]
lp = int(listed[0]["launcher_pid"])
def minflt(p): return int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[7])
deltas = []
for i in range(n):
    a = minflt(lp); os.write(fd, b"x"); drain(0.05); deltas.append(minflt(lp) - a); drain(pause)
os.write(fd, b"\x1c"); os.write(fd, b"d"); drain(0.3)
subprocess.run([b, "shutdown"], env=env, capture_output=True)
print(b, "pause", pause, "faults per key", sorted(deltas))
