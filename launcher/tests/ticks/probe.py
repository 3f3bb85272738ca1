#!/usr/bin/env python3
# A Tick that reports what its launcher gave it: open descriptors, the
# environment, the terminal size (`stty size`), the answer of the terminal to
# a cursor-position query (CSI 6n on /dev/tty), and the lines typed into its
# terminal (echoed on stderr). With --ignore-term it ignores SIGTERM; its
# `spawn_child` tool starts a child that ignores SIGTERM too.
import json, os, select, signal, subprocess, sys, termios, threading, tty

# First, before this script opens anything: listdir opens one descriptor for
# the listing itself, which shows as the highest number.
FDS = sorted(int(fd) for fd in os.listdir("/proc/self/fd"))
FDS = FDS[:-1]

if "--ignore-term" in sys.argv:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

with open("/dev/tty") as tty_in:
    STTY = subprocess.run(["stty", "size"], stdin=tty_in, capture_output=True,
                          text=True).stdout.strip()
sys.stderr.write(f"probe: stty size {STTY}\n")
sys.stderr.flush()


def cursor_position_report():
    fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    try:
        saved = termios.tcgetattr(fd)
        tty.setraw(fd)
        try:
            os.write(fd, b"\x1b[6n")
            reply = b""
            while not reply.endswith(b"R"):
                ready, _, _ = select.select([fd], [], [], 10)
                if not ready:
                    break
                reply += os.read(fd, 64)
            return reply.decode("latin-1")
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, saved)
    finally:
        os.close(fd)


CPR = cursor_position_report()
sys.stderr.write(f"probe: cpr {CPR!r}\n")
sys.stderr.flush()


def keyboard():
    with open("/dev/tty") as typed:
        for line in typed:
            sys.stderr.write(f"probe: typed {line.strip()}\n")
            sys.stderr.flush()


threading.Thread(target=keyboard, daemon=True).start()

TOOLS = [
    {"name": "info", "description": "What the launcher gave this Tick.", "mutates": False,
     "input_schema": {"type": "object", "additionalProperties": False}},
    {"name": "spawn_child", "description": "Start a child that ignores SIGTERM.",
     "mutates": True, "input_schema": {"type": "object", "additionalProperties": False}},
]


def send(frame):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **frame}) + "\n")
    sys.stdout.flush()


def handle(method, params):
    if method == "tick/describe":
        return {"protocol": 3, "kind": "test.probe", "title": "Probe",
                "description": "Reports its environment.", "revision": "1", "tools": TOOLS}
    if method == "tick/read":
        return {"seq": 0, "data": {"pid": os.getpid()}}
    if method == "tick/call":
        tool = params.get("tool")
        if tool == "info":
            return {"fds": FDS, "instance": os.environ.get("TICKLOOP_INSTANCE_ID"),
                    "term": os.environ.get("TERM"), "stty": STTY, "cpr": CPR,
                    "env": dict(os.environ), "pid": os.getpid(),
                    "pgid": os.getpgid(0), "sid": os.getsid(0)}
        if tool == "spawn_child":
            child = subprocess.Popen(
                [sys.executable, "-c",
                 "import signal, time\n"
                 "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                 "time.sleep(1000)\n"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            return {"pid": child.pid}
        return None
    return None


for line in sys.stdin:
    request = json.loads(line)
    send({"id": request["id"], "result": handle(request["method"], request.get("params", {}))})

if "--ignore-term" in sys.argv:
    # Stubborn: not even stdin's EOF ends it; only SIGKILL does.
    threading.Event().wait()
