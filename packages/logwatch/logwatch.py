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
The module `tickloop_tick` (beside this file) serves the protocol.
"""
import os
import re
import sys
import threading
import time
from collections import deque

# No __pycache__ beside the package (the build embeds this folder).
sys.dont_write_bytecode = True
import tickloop_tick as tt  # noqa: E402

MAX_KEPT = 100_000           # lines kept in memory for `lines`
MAX_LINE = 4096              # characters kept of one line
RECENT_PROBLEMS = 5          # error/warning lines in the state
MAX_COUNT = 1000             # most lines `lines` answers at once



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


class Log:
    """What has been read of the file so far; guarded by tick.lock."""

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
            self.last_error = {"line": self.total, "text": text, "at": tt.now()}
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


tick = tt.Tick("tickloop.logwatch", f"Log {os.path.basename(OPTS['file'])}",
               "Follows one log file: the state summarizes it (lines, errors, warnings, the last "
               "error, lines per minute); `lines` returns the text.",
               recover_with="lines", series=[("/recent_problems", "last")],
               # Fixed, as documented in SKILL.md: change it with the tools.
               revision="1")
LOCK = tick.lock
log = Log()


@tick.state
def summary():
    return log.summary()


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
                try:
                    tick.update(log.summary())
                except tt.UpdateError:
                    return  # the host is gone
        if changed:
            screen.redraw()
        time.sleep(OPTS["poll"] if not changed else 0.05)


@tick.tool(mutates=False, description=(
    "Lines of the log with their numbers (1 = first line since the file was opened or rotated). "
    "Without `from`: the newest `count` lines (or matches of `grep`). With `from`: up to `count` "
    "lines (or matches) starting at line `from`. `grep` is a case-insensitive regular expression. "
    "`count` defaults to 50, at most 1000. Only the newest 100000 lines are kept."),
    input_schema={"type": "object", "properties": {
        "from": {"type": "integer", "minimum": 1},
        "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT},
        "grep": {"type": "string"}}, "additionalProperties": False})
def lines(args):
    count = args.get("count", 50)
    start = args.get("from")
    matcher = None
    if args.get("grep") is not None:
        try:
            matcher = re.compile(args["grep"], re.IGNORECASE)
        except re.error as e:
            raise tt.ToolError.invalid_args(f"grep is not a valid regular expression: {e}")
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


only_problems = False


def draw(tui):
    cols, rows = tui.size()
    with LOCK:
        s = log.summary()
        body_rows = max(rows - 6, 1)
        if only_problems:
            shown = [k for k in log.kept if k[1] != "info"][-body_rows:]
        else:
            shown = list(log.kept)[-body_rows:]
    state = "" if s["exists"] else "  \x1b[31m(file missing)\x1b[0m"
    last = s["last_error"]["text"] if s["last_error"] else "-"
    head = [f"\x1b[1m logwatch \x1b[0m {s['file']}{state}",
            f" lines {s['lines']}   \x1b[31merrors {s['errors']}\x1b[0m   "
            f"\x1b[33mwarnings {s['warnings']}\x1b[0m   {s['lines_per_minute']}/min   rotations {s['rotations']}",
            f" last error: {last}"[:cols],
            " keys: e only problems   a all lines" + ("   [only problems]" if only_problems else ""),
            "\u2500" * cols]
    out = ["\x1b[?25l\x1b[H\x1b[2J"] + [h + "\x1b[0m\r\n" for h in head]
    colour = {"error": "\x1b[31m", "warning": "\x1b[33m", "info": ""}
    for n, level, text in shown:
        out.append(f"{colour[level]}{f'{n:>6} {text}'[:cols]}\x1b[0m\r\n")
    tui.write("".join(out))


def on_key(key):
    global only_problems
    if key in "eE":
        only_problems = True
    elif key in "aA":
        only_problems = False
    screen.redraw()


# Redrawn every 5 s too, so lines/minute decays on screen.
screen = tt.Tui(draw, on_key, tick, every=5.0)

if __name__ == "__main__":
    screen.start()
    threading.Thread(target=follow, daemon=True).start()
    tick.serve()
