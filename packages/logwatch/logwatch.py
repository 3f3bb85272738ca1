#!/usr/bin/env python3
"""Logwatch: a Tick (Tick protocol 3) that follows one log file, Python standard library only.

    logwatch.py FILE [--error-pattern REGEX] [--warn-pattern REGEX] [--poll SECONDS]

State is a summary of the file (lines, error and warning counts, the last
error line, lines per minute, recent problems); the query tool `lines`
returns detail (a range, the tail, or the lines matching a pattern) and is the
recover_with tool. The terminal shows a live view: the summary and the newest
lines, errors in red and warnings in yellow; keys `e` (only problems),
`a` (all lines). The file is polled, so rotation (a new inode) and truncation
are followed: counting restarts with the new file and `rotations` grows.
"""
import json
import os
import re
import select
import signal
import sys
import termios
import threading
import time
import tty
from collections import deque

REVISION = "1"
MAX_KEPT = 100_000           # lines kept in memory for `lines`
MAX_LINE = 4096              # characters kept of one line
RECENT_PROBLEMS = 5          # error/warning lines in the state
MAX_COUNT = 1000             # most lines `lines` answers at once

OUT_LOCK = threading.Lock()
LOCK = threading.RLock()


def usage(message):
    sys.stderr.write(f"logwatch: {message}\r\n"
                     "usage: logwatch.py FILE [--error-pattern REGEX] [--warn-pattern REGEX] [--poll SECONDS]\r\n")
    sys.stderr.flush()
    time.sleep(0.5)  # leave the message on the screen for the host's report
    sys.exit(2)


def parse_args(argv):
    opts = {"file": None, "error": r"\b(error|err|fatal|critical|panic|exception)\b",
            "warn": r"\b(warn|warning)\b", "poll": 0.5}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--error-pattern", "--warn-pattern", "--poll") and i + 1 < len(argv):
            key = {"--error-pattern": "error", "--warn-pattern": "warn", "--poll": "poll"}[a]
            opts[key] = argv[i + 1]
            i += 2
        elif a.startswith("--"):
            usage(f"unknown option {a}")
        elif opts["file"] is None:
            opts["file"] = a
            i += 1
        else:
            usage(f"one FILE only (got {a!r} too)")
    if opts["file"] is None:
        usage("which log file? give its path")
    try:
        opts["poll"] = max(float(opts["poll"]), 0.05)
        opts["error_re"] = re.compile(opts["error"], re.IGNORECASE)
        opts["warn_re"] = re.compile(opts["warn"], re.IGNORECASE)
    except (ValueError, re.error) as e:
        usage(str(e))
    opts["file"] = os.path.abspath(opts["file"])
    return opts


OPTS = parse_args(sys.argv[1:])


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def send(frame):
    line = json.dumps({"jsonrpc": "2.0", **frame}, separators=(",", ":")) + "\n"
    with OUT_LOCK:
        try:
            sys.stdout.write(line)
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(0)


class Log:
    """What has been read of the file so far; guarded by LOCK."""

    def __init__(self):
        self.kept = deque(maxlen=MAX_KEPT)   # (number, level, text)
        self.total = 0
        self.errors = 0
        self.warnings = 0
        self.last_error = None               # {"line", "text", "at"}
        self.problems = deque(maxlen=RECENT_PROBLEMS)
        self.arrivals = deque()              # monotonic times of lines in the last minute
        self.exists = False
        self.size = 0
        self.rotations = 0
        self.seq = 0
        self.partial = ""

    def level(self, text):
        if OPTS["error_re"].search(text):
            return "error"
        if OPTS["warn_re"].search(text):
            return "warning"
        return "info"

    def add(self, text):
        text = text[:MAX_LINE]
        self.total += 1
        level = self.level(text)
        self.kept.append((self.total, level, text))
        self.arrivals.append(time.monotonic())
        if level == "error":
            self.errors += 1
            self.last_error = {"line": self.total, "text": text, "at": now()}
        elif level == "warning":
            self.warnings += 1
        if level != "info":
            self.problems.append({"line": self.total, "level": level, "text": text[:200]})

    def restart(self):
        self.kept.clear()
        self.total = self.errors = self.warnings = 0
        self.last_error = None
        self.problems.clear()
        self.partial = ""
        self.rotations += 1

    def rate(self):
        cutoff = time.monotonic() - 60
        while self.arrivals and self.arrivals[0] < cutoff:
            self.arrivals.popleft()
        return len(self.arrivals)

    def summary(self):
        return {"file": OPTS["file"], "exists": self.exists, "size": self.size,
                "lines": self.total, "errors": self.errors, "warnings": self.warnings,
                "last_error": self.last_error, "lines_per_minute": self.rate(),
                "rotations": self.rotations, "recent_problems": list(self.problems),
                "detail": "call `lines` for the text: {from, count, grep}"}


log = Log()


def emit():
    """Emit the current summary as a tick/update (caller holds LOCK)."""
    log.seq += 1
    send({"method": "tick/update", "params": {"seq": log.seq, "data": log.summary(), "at": now()}})


def follow():
    """Poll the file; read what was appended; follow rotation and truncation."""
    handle, inode, offset = None, None, 0
    while True:
        changed = False
        try:
            st = os.stat(OPTS["file"])
        except OSError:
            st = None
        with LOCK:
            if st is None:
                if log.exists:
                    log.exists, changed = False, True
                if handle is not None:
                    handle.close()
                    handle = None
            else:
                if handle is None or st.st_ino != inode or st.st_size < offset:
                    if handle is not None:
                        handle.close()
                        log.restart()
                    try:
                        handle = open(OPTS["file"], "rb")
                        inode, offset = st.st_ino, 0
                    except OSError:
                        handle = None
                    if not log.exists:
                        log.exists, changed = True, True
                if handle is not None:
                    handle.seek(offset)
                    chunk = handle.read(1 << 20)
                    offset += len(chunk)
                    if chunk:
                        text = log.partial + chunk.decode("utf-8", errors="replace")
                        parts = text.split("\n")
                        log.partial = parts.pop()
                        for part in parts:
                            log.add(part.rstrip("\r"))
                        changed = changed or bool(parts)
                    if log.size != st.st_size:
                        log.size = st.st_size
            if changed:
                emit()
        if changed:
            tui.redraw()
        time.sleep(OPTS["poll"] if not changed else 0.05)


TOOLS = [
    {"name": "lines", "mutates": False,
     "description": ("Lines of the log with their numbers (1 = first line since the file was opened or rotated). "
                     "Without `from`: the newest `count` lines (or matches of `grep`). With `from`: up to `count` "
                     "lines (or matches) starting at line `from`. `grep` is a case-insensitive regular expression. "
                     "`count` defaults to 50, at most 1000. Only the newest 100000 lines are kept."),
     "input_schema": {"type": "object", "properties": {
         "from": {"type": "integer", "minimum": 1},
         "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},
         "grep": {"type": "string"}}, "additionalProperties": False}},
]


def lines_tool(args):
    count = args.get("count", 50)
    start = args.get("from")
    pattern = args.get("grep")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
        raise RpcError(-32602, f"count must be an integer from 1 to {MAX_COUNT}")
    if start is not None and (not isinstance(start, int) or isinstance(start, bool) or start < 1):
        raise RpcError(-32602, "from must be an integer of at least 1")
    matcher = None
    if pattern is not None:
        if not isinstance(pattern, str):
            raise RpcError(-32602, "grep must be a string")
        try:
            matcher = re.compile(pattern, re.IGNORECASE)
        except re.error as e:
            raise RpcError(-32602, f"grep is not a valid regular expression: {e}")
    with LOCK:
        kept = list(log.kept)
        total = log.total
    oldest = kept[0][0] if kept else None
    if matcher is not None:
        kept = [k for k in kept if matcher.search(k[2])]
    if start is not None:
        chosen = [k for k in kept if k[0] >= start][:count]
    else:
        chosen = kept[-count:]
    return {"lines": [{"n": n, "level": level, "text": text} for n, level, text in chosen],
            "total_lines": total, "oldest_kept": oldest,
            "matched": len(kept) if matcher is not None else None}


def descriptor():
    return {"protocol": 3, "kind": "tickloop.logwatch", "title": f"Log {os.path.basename(OPTS['file'])}",
            "description": ("Follows one log file: the state summarizes it (lines, errors, warnings, the last "
                            "error, lines per minute); `lines` returns the text."),
            "revision": REVISION, "tools": TOOLS, "recover_with": "lines",
            "state": {"series": [{"path": "/recent_problems", "newest": "last"}]}}


def handle_request(method, params):
    if method == "tick/describe":
        return descriptor()
    if method == "tick/read":
        with LOCK:
            return {"seq": log.seq, "data": log.summary(), "at": now()}
    if method == "tick/call":
        if not isinstance(params, dict):
            raise RpcError(-32602, "params must be an object")
        if params.get("revision") != REVISION:
            raise RpcError(-32004, "the tool catalog changed; describe the Tick and prepare the call again")
        args = params.get("args", {})
        if not isinstance(args, dict):
            raise RpcError(-32602, "args must be an object")
        if params.get("tool") == "lines":
            unknown = set(args) - {"from", "count", "grep"}
            if unknown:
                raise RpcError(-32602, f"unknown argument(s): {', '.join(sorted(unknown))}")
            return lines_tool(args)
        raise RpcError(-32602, f"unknown tool {params.get('tool')!r}")
    raise RpcError(-32601, f"unknown method {method}")


class Tui:
    """The live view on /dev/tty, drawn from one thread."""

    def __init__(self):
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.only_problems = False
        self.saved = None
        try:
            self.fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            self.fd = None
            return
        try:
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        except termios.error:
            pass

    def redraw(self):
        try:
            os.write(self.wake_w, b".")
        except OSError:
            pass

    def draw(self):
        try:
            size = os.get_terminal_size(self.fd)
            cols, rows = size.columns, size.lines
        except OSError:
            cols, rows = 80, 24
        with LOCK:
            s = log.summary()
            body_rows = max(rows - 6, 1)
            if self.only_problems:
                shown = [k for k in log.kept if k[1] != "info"][-body_rows:]
            else:
                shown = list(log.kept)[-body_rows:]
        state = "" if s["exists"] else "  \x1b[31m(file missing)\x1b[0m"
        last = s["last_error"]["text"] if s["last_error"] else "-"
        head = [f"\x1b[1m logwatch \x1b[0m {s['file']}{state}",
                f" lines {s['lines']}   \x1b[31merrors {s['errors']}\x1b[0m   "
                f"\x1b[33mwarnings {s['warnings']}\x1b[0m   {s['lines_per_minute']}/min   rotations {s['rotations']}",
                f" last error: {last}"[:cols],
                " keys: e only problems   a all lines" + ("   [only problems]" if self.only_problems else ""),
                "\u2500" * cols]
        out = ["\x1b[?25l\x1b[H\x1b[2J"] + [h + "\x1b[0m\r\n" for h in head]
        colour = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": ""}
        for n, level, text in shown:
            out.append(f"{colour[level]}{f'{n:>6} {text}'[:cols]}\x1b[0m\r\n")
        try:
            os.write(self.fd, "".join(out).encode())
        except OSError:
            pass

    def run(self):
        if self.fd is None:
            return
        self.draw()
        while True:
            try:
                ready, _, _ = select.select([self.fd, self.wake_r], [], [], 5.0)
            except InterruptedError:
                continue
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            if self.fd in ready:
                try:
                    keys = os.read(self.fd, 1024)
                except OSError:
                    return
                if not keys:
                    return
                for k in keys.decode(errors="ignore"):
                    if k in "eE":
                        self.only_problems = True
                    elif k in "aA":
                        self.only_problems = False
            self.draw()  # also every 5 s, so lines/minute decays on screen

    def restore(self):
        if self.fd is not None and self.saved is not None:
            try:
                os.write(self.fd, b"\x1b[?25h")
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.saved)
            except (OSError, termios.error):
                pass


tui = Tui()


def main():
    signal.signal(signal.SIGWINCH, lambda *_: tui.redraw())
    signal.signal(signal.SIGTERM, lambda *_: (tui.restore(), os._exit(0)))
    threading.Thread(target=follow, daemon=True).start()
    threading.Thread(target=tui.run, daemon=True).start()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue  # unparseable: discard without replying
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            continue
        try:
            send({"id": request["id"], "result": handle_request(request.get("method"), request.get("params", {}))})
        except RpcError as error:
            send({"id": request["id"], "error": {"code": error.code, "message": str(error)}})
        except Exception as error:  # noqa: BLE001 - a bug; `lines` changes nothing, so not executed
            send({"id": request["id"], "error": {"code": -32603, "message": f"internal error: {error}"}})
    tui.restore()


if __name__ == "__main__":
    main()
