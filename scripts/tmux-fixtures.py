#!/usr/bin/env python3
"""Regenerate the tmux fidelity fixtures in launcher/tests/fidelity/tmux/.

Usage:
    python3 scripts/tmux-fixtures.py                 # every case in cases.json
    python3 scripts/tmux-fixtures.py NAME [NAME...]  # only these cases
    python3 scripts/tmux-fixtures.py --random-hex SEED COUNT
                                                     # print the deterministic
                                                     # "random" bytes used by the
                                                     # random_bytes case
Environment: TMUX_BIN (default "tmux"). The fixtures are meant to come from
tmux 3.3a; any other version is refused unless --allow-any-version is given.
Python 3 standard library only. Cases run one after another, each well under a
second.

How one case is produced
------------------------
* A private server: `tmux -L tickloop-fixtures-<pid>-<n> -f /dev/null`, started
  with the command list
      start-server ; set -g history-limit H ; set -g status off ;
      new-session -d -s fixture -x C -y R FEEDER ; set -g window-size manual
  so history-limit is set before the pane (and its grid) exists, the status
  line does not take a row, and `resize-window -x -y` works. (window-size is
  set after new-session because tmux 3.3a's server dies when window-size is
  set while it has no session; the pane is C x R either way, which is
  checked.) Nothing else is configured. The user's default server is never
  touched: every tmux call carries -L with the private name, and `kill-server`
  on that name ends it.
  TMUX/TMUX_PANE are removed from the environment, SHELL=/bin/sh (tmux runs the
  pane command with `$SHELL -c`), and LC_ALL=LANG=C.UTF-8 so that the server
  uses UTF-8 and glibc's wcwidth() (tmux 3.3a here is not built with utf8proc,
  so character widths come from the C library's Unicode tables).
* The pane runs this script with `--feeder DIR`. The feeder redirects its
  stderr to DIR/feeder.log (so nothing of it reaches the screen), puts its tty
  in raw mode (tty.setraw: no OPOST, so "\n" stays a bare LF; no ECHO; no
  ICANON/ISIG/IXON), and connects to the driver over a Unix socket DIR/ctl.sock.
  For every feed step the driver sends the step index; the feeder writes the
  step's bytes exactly, then (only if the case has "sync_reset": true) the
  bytes ESC \\ ESC \\ CAN, then the query ESC [ 6 n, and waits until the cursor
  position report arrives on its stdin. tmux answers DSR itself while parsing,
  in order, so the report proves everything written before it is parsed; the
  query changes nothing on screen and the report is never echoed (raw mode).
  Only then does the feeder acknowledge. If the step's bytes themselves contain
  DSR 6 queries (CSI [digits] n with 6), the feeder waits for that many extra
  reports; in sync_reset cases it also keeps draining replies until 50 ms of
  quiet, so a stray report caused by random bytes cannot cut the wait short.
  Why ESC \\ twice and CAN: in tmux 3.3a CAN (0x18) returns to ground from
  every state except DCS passthrough ("dcs_handler"/"dcs_escape", which have no
  "anywhere" transitions); only ESC \\ ends those. The first ESC \\ ends a DCS
  (or is a harmless ST elsewhere), the second covers a feed that stopped right
  after an ESC inside a DCS, and CAN then aborts anything else (OSC, APC, CSI,
  a half escape). Without sync_reset, a feed that leaves the parser inside a
  string swallows the query and the step fails after a timeout.
* A resize step runs `resize-window -t fixture -x C -y R` and polls
  `display -p '#{pane_width} #{pane_height}'` until it shows the new size
  (tmux resizes and reflows the pane's screen synchronously).
* After the last step the driver reads
  `#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{alternate_on}
  #{history_size}` and captures, then kills the private server.

Capture flags and what they print (tmux 3.3a, checked in grid.c and by runs)
---------------------------------------------------------------------------
Every line is captured ON ITS OWN, with one capture-pane per line, all in a
single tmux command list:
    visible row y (0..R-1):         capture-pane -p -e -N -t fixture -S y -E y
    history line k above the top:   capture-pane -p -e -N -t fixture -S -k -E -k
(k = history_size .. 1, so "history" is oldest first). That is exactly what
`capture-pane -p -e -N` / `capture-pane -p -e -N -S - -E -1` print, cut into
lines, with one difference that matters: inside ONE capture-pane, tmux encodes
attributes relative to the last cell it printed, across line ends (a line that
continues the previous line's bold prints no SGR at all). Capturing each line
separately makes every line self-contained: its escapes are relative to the
default cell. (`-S - -E -1` is also unusable when the history is empty: tmux
clamps it to screen line 0; "history" is then [].)
  -p  print to stdout;  -e  keep colours/attributes as escape sequences;
  -N  keep trailing spaces (otherwise tmux trims every trailing ' ').
  Not used: -J (would join wrapped lines), -C (would octal-escape C0 bytes),
  -a (the saved normal screen while the alternate screen is active).
What the lines contain:
  * Only cells up to tmux's per-line "used" width (grid_line.cellused: it
    grows when a character is written or ICH/DCH shift cells there; erasing
    never grows it, erasing a whole line resets it) are printed. Cells past it
    are absent, so a line may be shorter than C columns even with -N, and
    whether erased trailing cells appear as ' ' depends on that history. Inside
    the used width every cell is printed, blank ones as ' ' with their colours
    (EL with a blue background inside the written part shows as ESC[44m and
    spaces). Past it tmux says nothing: the cells are blank, but an erase with
    a coloured background (EL/ED/ECH/DCH with bce) may have given them that
    background, which capture-pane never prints. Compare absent cells and
    trailing spaces as "blank"; ignore the colours of absent cells.
  * No reset is printed at the end of a line and none at its start: a line
    ends in whatever SGR state its last cell had. Feed each line into a fresh
    row with SGR reset first (ESC [ 0 m, SI).
  * SGR is printed as tmux stores it: attributes as "ESC [ a;b;...m" using 1 2
    3 4 5 7 8 9 and 4:2 4:3 4:4 4:5 for double/curly/dotted/dashed underline
    (SGR 21 and 4:2 are both stored and printed as 4:2; 4:1 as 4; 6 as 5).
    OVERLINE IS PRINTED AS "5:3" (a tmux 3.3a bug: every code >= 10 in that
    list is printed as tens:units, meant for 4:2..4:5, so 53 becomes 5:3). A
    reader must map the parameter "5:3" to overline, not to blink. Whenever
    an attribute goes away tmux prints 0 first and then every attribute and
    colour again (so "ESC[0m ESC[39m ESC[49m" sequences are common). Colours as separate
    sequences: 30-37/90-97, 40-47/100-107, 39/49, "38;5;N", "48;5;N",
    "38;2;R;G;B", "48;2;R;G;B", underline colour "58;5;N" / "58;2;R;G;B"
    (semicolons, never colons). Underline colour returning to default is
    printed only as a 0 reset.
  * DEC special graphics cells are stored as the ASCII byte with a "charset"
    attribute and printed as SO (0x0E) ... SI (0x0F) around the ASCII bytes
    (e.g. "\x0elqqk\x0f"), whichever of G0/G1 the program used. To read them,
    designate G1 as DEC special graphics (ESC ) 0) before feeding a line.
  * A wide character is printed once; its padding cell prints nothing. A
    combining mark is printed right after its base character (same cell).
    tmux 3.3a bug: writing onto the right half of a wide character that sits
    in column 0 leaves the wide character in place (e.g. "漢\bX" keeps 漢 in
    column 0 and X in column 1); no capture can express that, so cases avoid
    it (elsewhere the other half becomes a space, as expected).
  * The visible lines of the alternate screen are captured when it is active;
    "history" is then still the normal screen's history.
cursor: #{cursor_x} #{cursor_y}, 0-based on the visible screen. In the
pending-wrap state (the last column was just written with autowrap on)
tmux 3.3a reports cursor_x == cols (one past the last column).
"""

import json
import os
import re
import select
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIDELITY = os.path.join(ROOT, "launcher", "tests", "fidelity")
CASES_FILE = os.path.join(FIDELITY, "cases.json")
OUT_DIR = os.path.join(FIDELITY, "tmux")
TMUX = os.environ.get("TMUX_BIN", "tmux")
SESSION = "fixture"
EXPECTED_VERSION = "3.3a"

STEP_TIMEOUT = 5.0       # seconds to wait for one step's DSR round trip
START_TIMEOUT = 10.0     # seconds to wait for the feeder to connect
QUIET_DRAIN = 0.05       # sync_reset cases: drain replies until this quiet
SYNC_RESET_BYTES = b"\x1b\\\x1b\\\x18"
DSR = b"\x1b[6n"
CPR_RE = re.compile(rb"\x1b\[(\d+);(\d+)R")
# DSR queries inside fed data that make tmux send a CPR (CSI <params> n whose
# first parameter is 6).
INNER_DSR_RE = re.compile(rb"\x1b\[6(?:;[0-9;]*)?n")


# --------------------------------------------------------------------------
# deterministic pseudo-random bytes (splitmix64), for the random_bytes case


def random_bytes(seed, count):
    """Bytes from splitmix64 seeded with `seed`, low byte of each output.

    Independent of Python's `random` module so the bytes never change."""
    out = bytearray()
    state = seed & 0xFFFFFFFFFFFFFFFF
    mask = 0xFFFFFFFFFFFFFFFF
    while len(out) < count:
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z = z ^ (z >> 31)
        out.append(z & 0xFF)
    return bytes(out)


# --------------------------------------------------------------------------
# feeder (runs inside the tmux pane)


def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def feeder(workdir):
    import termios
    import tty

    log = open(os.path.join(workdir, "feeder.log"), "w", buffering=1)
    os.dup2(log.fileno(), 2)
    sys.stderr = log
    try:
        with open(os.path.join(workdir, "steps.json")) as f:
            plan = json.load(f)
        feeds = [bytes.fromhex(h) if h is not None else None for h in plan["feeds"]]
        sync_reset = plan["sync_reset"]

        tty.setraw(0, termios.TCSANOW)

        ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ctl.connect(os.path.join(workdir, "ctl.sock"))
        rfile = ctl.makefile("rb")

        def drain(timeout):
            got = b""
            while True:
                r, _, _ = select.select([0], [], [], timeout)
                if not r:
                    return got
                chunk = os.read(0, 4096)
                if not chunk:
                    return got
                got += chunk

        for line in rfile:
            index = int(line.strip())
            data = feeds[index]
            stale = drain(0)
            if stale:
                print("step %d: discarded stale input %r" % (index, stale), file=log)
            payload = data + (SYNC_RESET_BYTES if sync_reset else b"") + DSR
            want = 1 + len(INNER_DSR_RE.findall(data))
            write_all(1, payload)
            buf = b""
            deadline = time.monotonic() + STEP_TIMEOUT
            while len(CPR_RE.findall(buf)) < want:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                r, _, _ = select.select([0], [], [], left)
                if r:
                    chunk = os.read(0, 4096)
                    if not chunk:
                        break
                    buf += chunk
            reports = CPR_RE.findall(buf)
            if len(reports) < want:
                msg = (
                    "timeout waiting for cursor report (got %r); does the feed "
                    "leave the parser inside a string? see sync_reset" % buf
                )
                print("step %d: %s" % (index, msg), file=log)
                ctl.sendall(b"err " + msg.encode("ascii", "backslashreplace") + b"\n")
                continue
            if sync_reset:
                extra = drain(QUIET_DRAIN)
                while extra:
                    buf += extra
                    extra = drain(QUIET_DRAIN)
            row, col = CPR_RE.findall(buf)[-1]
            ctl.sendall(b"ok %s;%s\n" % (row, col))
        # Driver closed the socket: stay alive until the server is killed (the
        # tty hangs up), so the pane and its screen never go away on their own.
        while True:
            r, _, _ = select.select([0], [], [], 60)
            if r:
                try:
                    if not os.read(0, 4096):
                        return
                except OSError:
                    return
    except Exception:
        import traceback

        traceback.print_exc(file=log)
        log.flush()
        time.sleep(60)


# --------------------------------------------------------------------------
# driver


class CaseError(Exception):
    pass


def tmux_env():
    env = dict(os.environ)
    for key in ("TMUX", "TMUX_PANE"):
        env.pop(key, None)
    for key in list(env):
        if key.startswith("LC_"):
            env.pop(key)
    env["LANG"] = "C.UTF-8"
    env["LC_ALL"] = "C.UTF-8"
    env["SHELL"] = "/bin/sh"
    return env


def tmux_version():
    out = subprocess.run([TMUX, "-V"], capture_output=True, text=True, check=True)
    return out.stdout.strip().split()[-1]


def load_cases():
    with open(CASES_FILE, encoding="utf-8") as f:
        cases = json.load(f)
    seen = set()
    for case in cases:
        name = case["name"]
        if not re.fullmatch(r"[a-z0-9_]+", name):
            raise SystemExit("bad case name %r" % name)
        if name in seen:
            raise SystemExit("duplicate case name %r" % name)
        seen.add(name)
        for step in case["steps"]:
            if len([k for k in ("feed", "feed_hex", "resize") if k in step]) != 1:
                raise SystemExit("%s: bad step %r" % (name, step))
    return cases


class Server:
    def __init__(self, name, env):
        self.name = name
        self.env = env

    def run(self, *args, check=True):
        proc = subprocess.run(
            [TMUX, "-L", self.name, "-f", "/dev/null"] + list(args),
            capture_output=True,
            env=self.env,
            timeout=STEP_TIMEOUT * 2,
        )
        if check and proc.returncode != 0:
            raise CaseError(
                "tmux %s failed (%d): %s"
                % (" ".join(args[:3]), proc.returncode, proc.stderr.decode(errors="replace"))
            )
        return proc.stdout

    def display(self, fmt):
        return self.run("display-message", "-p", "-t", SESSION, fmt).decode().strip()

    def kill(self):
        try:
            self.run("kill-server", check=False)
        except Exception:
            pass
        # kill-server removes the socket; a crashed server leaves it behind.
        path = os.path.join(
            os.environ.get("TMUX_TMPDIR") or "/tmp", "tmux-%d" % os.getuid(), self.name
        )
        try:
            os.unlink(path)
        except OSError:
            pass


def capture_lines(server, rows, hsize):
    """One capture-pane per line, in one command list; returns (lines, history)."""
    args = []
    ranges = [(-k, -k) for k in range(hsize, 0, -1)] + [(y, y) for y in range(rows)]
    for i, (start, end) in enumerate(ranges):
        if i:
            args.append(";")
        args += ["capture-pane", "-p", "-e", "-N", "-t", SESSION, "-S", str(start), "-E", str(end)]
    out = server.run(*args)
    text = out.decode("utf-8", errors="surrogateescape")
    if not text.endswith("\n"):
        raise CaseError("capture output does not end in a newline")
    got = text[:-1].split("\n")
    if len(got) != len(ranges):
        raise CaseError("expected %d captured lines, got %d" % (len(ranges), len(got)))
    for line in got:
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            raise CaseError("capture is not valid UTF-8: %r" % line)
    return got[hsize:], got[:hsize]


def run_case(case, index, version):
    name = case["name"]
    cols, rows = case["cols"], case["rows"]
    history = case.get("history", 2000)
    sync_reset = bool(case.get("sync_reset", False))
    feeds = []
    for step in case["steps"]:
        if "feed" in step:
            feeds.append(step["feed"].encode("utf-8").hex())
        elif "feed_hex" in step:
            feeds.append(bytes.fromhex(step["feed_hex"]).hex())
        else:
            feeds.append(None)

    workdir = tempfile.mkdtemp(prefix="tickloop-fixtures-")
    server = Server("tickloop-fixtures-%d-%d" % (os.getpid(), index), tmux_env())
    listener = None
    conn = None
    try:
        with open(os.path.join(workdir, "steps.json"), "w") as f:
            json.dump({"feeds": feeds, "sync_reset": sync_reset}, f)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(os.path.join(workdir, "ctl.sock"))
        listener.listen(1)
        listener.settimeout(START_TIMEOUT)

        feeder_cmd = "exec %s %s --feeder %s" % (
            shlex.quote(sys.executable),
            shlex.quote(os.path.abspath(__file__)),
            shlex.quote(workdir),
        )
        server.run(
            "start-server", ";",
            "set-option", "-g", "history-limit", str(history), ";",
            "set-option", "-g", "status", "off", ";",
            "new-session", "-d", "-s", SESSION, "-x", str(cols), "-y", str(rows), feeder_cmd, ";",
            "set-option", "-g", "window-size", "manual",
        )
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            raise CaseError("feeder did not connect")
        conn.settimeout(STEP_TIMEOUT * 2)
        replies = conn.makefile("rb")

        size = server.display("#{pane_width} #{pane_height}")
        if size != "%d %d" % (cols, rows):
            raise CaseError("pane is %s, wanted %dx%d" % (size, cols, rows))

        for i, step in enumerate(case["steps"]):
            if "resize" in step:
                c, r = step["resize"]
                server.run("resize-window", "-t", SESSION, "-x", str(c), "-y", str(r))
                deadline = time.monotonic() + STEP_TIMEOUT
                while server.display("#{pane_width} #{pane_height}") != "%d %d" % (c, r):
                    if time.monotonic() > deadline:
                        raise CaseError("step %d: resize to %dx%d not seen" % (i, c, r))
                    time.sleep(0.005)
                continue
            conn.sendall(b"%d\n" % i)
            try:
                reply = replies.readline()
            except socket.timeout:
                reply = b""
            if not reply.startswith(b"ok "):
                raise CaseError("step %d: feeder said %r" % (i, reply))

        info = server.display(
            "#{pane_width} #{pane_height} #{cursor_x} #{cursor_y} #{alternate_on} #{history_size}"
        ).split()
        w, h, cx, cy, alt, hsize = (int(v) for v in info)
        lines, hist = capture_lines(server, h, hsize)
        return {
            "tmux": version,
            "cols": w,
            "rows": h,
            "cursor": [cx, cy],
            "alt_screen": alt == 1,
            "lines": lines,
            "history": hist,
        }
    except CaseError as e:
        log = os.path.join(workdir, "feeder.log")
        if os.path.exists(log):
            with open(log) as f:
                extra = f.read().strip()
            if extra:
                raise CaseError("%s\nfeeder.log:\n%s" % (e, extra))
        raise
    finally:
        if conn is not None:
            conn.close()
        server.kill()
        if listener is not None:
            listener.close()
        shutil.rmtree(workdir, ignore_errors=True)


def dump_fixture(fx):
    def s(v):
        return json.dumps(v, ensure_ascii=False)

    def arr(items):
        if not items:
            return "[]"
        return "[\n" + ",\n".join("    " + s(x) for x in items) + "\n  ]"

    return (
        "{\n"
        '  "tmux": %s,\n  "cols": %d,\n  "rows": %d,\n  "cursor": [%d, %d],\n'
        '  "alt_screen": %s,\n  "lines": %s,\n  "history": %s\n}\n'
    ) % (
        s(fx["tmux"]), fx["cols"], fx["rows"], fx["cursor"][0], fx["cursor"][1],
        "true" if fx["alt_screen"] else "false", arr(fx["lines"]), arr(fx["history"]),
    )


def main(argv):
    if len(argv) >= 2 and argv[0] == "--feeder":
        feeder(argv[1])
        return 0
    if len(argv) == 3 and argv[0] == "--random-hex":
        print(random_bytes(int(argv[1], 0), int(argv[2])).hex())
        return 0
    allow_any = "--allow-any-version" in argv
    names = [a for a in argv if a != "--allow-any-version"]
    if any(a.startswith("-") for a in names):
        print(__doc__.split("\n\n")[0], file=sys.stderr)
        return 2

    version = tmux_version()
    if version != EXPECTED_VERSION and not allow_any:
        print("tmux is %s, fixtures come from %s (use --allow-any-version)"
              % (version, EXPECTED_VERSION), file=sys.stderr)
        return 1
    cases = load_cases()
    if names:
        known = {c["name"] for c in cases}
        unknown = [n for n in names if n not in known]
        if unknown:
            print("unknown case(s): %s" % ", ".join(unknown), file=sys.stderr)
            return 2
        cases = [c for c in cases if c["name"] in names]

    os.makedirs(OUT_DIR, exist_ok=True)
    failed = []
    for index, case in enumerate(cases):
        started = time.monotonic()
        try:
            fx = run_case(case, index, version)
        except Exception as e:  # report and go on with the next case
            failed.append(case["name"])
            print("FAIL %s: %s" % (case["name"], e), file=sys.stderr)
            continue
        path = os.path.join(OUT_DIR, case["name"] + ".json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(dump_fixture(fx))
        print("ok   %-36s %.2fs" % (case["name"], time.monotonic() - started))
    if failed:
        print("%d case(s) failed: %s" % (len(failed), " ".join(failed)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
