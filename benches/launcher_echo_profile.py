#!/usr/bin/env python3
"""Where a launcher's CPU goes per keystroke echo: a shell instance runs
the echo program (every byte read echoed as `<b>\r\n`, raw mode),
`tickloop attach` runs in a PTY of this script's, and after the note
after attaching is gone, `perf record -e cpu-clock -g` samples the
launcher and the view while N bytes are typed, each after the echo of the
one before. Read the result with
`perf report -i OUT --no-children --pid LAUNCHER --sort sym -g none`.

Run: python3 benches/launcher_echo_profile.py BIN N OUT
"""
import os, pty, sys, subprocess, tempfile, time, select, fcntl, termios, struct, glob
if len(sys.argv) != 4:
    sys.exit(__doc__)
BIN=sys.argv[1]; N=int(sys.argv[2]); OUT=sys.argv[3]
runtime = tempfile.mkdtemp(prefix="echoprof")
env = dict(os.environ, TICKLOOP_RUNTIME_DIR=runtime, TERM="xterm-256color")
ECHO = "import sys,tty;tty.setraw(0);sys.stdout.write('READY\\r\\n');sys.stdout.flush()\nwhile True:\n b=sys.stdin.read(1)\n sys.stdout.write('<'+b+'>\\r\\n');sys.stdout.flush()"
subprocess.run([BIN, "open", "--shell", "--id", "echo", "--", "python3", "-c", ECHO], env=env, capture_output=True, check=True)
pid, fd = pty.fork()
if pid == 0:
    os.execvpe(BIN, [BIN, "attach", "shell:echo"], env)
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
def wait_for(marker, timeout=5.0):
    buf, end = b"", time.monotonic() + timeout
    while time.monotonic() < end:
        if select.select([fd], [], [], 0.2)[0]:
            buf += os.read(fd, 65536)
            if marker in buf: return True
    return False
wait_for(b"READY"); time.sleep(3.5)
# the launcher with a python child
launcher=None
for p in os.listdir("/proc"):
    if p.isdigit():
        try:
            if open(f"/proc/{p}/cmdline","rb").read().split(b"\0")[1:2]==[b"__launcher"] and open(f"/proc/{p}/environ","rb").read().find(runtime.encode())>=0:
                kids=open(f"/proc/{p}/task/{p}/children").read().split()
                if kids: launcher=p
        except Exception: pass
perf = subprocess.Popen(["perf","record","-q","-e","cpu-clock","-F","25000","-g","-o",OUT,"-p",f"{launcher},{pid}"], stderr=subprocess.DEVNULL)
time.sleep(1)
ts=[]
for i in range(N):
    b=b"abcdefghijklmnopqrstuvwxyz"[i%26:i%26+1]
    t0=time.perf_counter(); os.write(fd,b)
    if not wait_for(b"<"+b+b">"): print("lost"); break
    ts.append(time.perf_counter()-t0); time.sleep(0.002)
perf.send_signal(2); perf.wait()
ts.sort(); print("p50 ms", round(ts[len(ts)//2]*1000,3), "launcher", launcher, "view", pid)
os.write(fd,b"\x1cd"); time.sleep(0.3)
subprocess.run([BIN,"shutdown"],env=env,capture_output=True)
