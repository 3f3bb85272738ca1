#!/usr/bin/env python3
"""{{TITLE}}: a Tick (Tick protocol 3), Python standard library only.

Made by `tickloop new`. It keeps one list of notes that the person (keys:
`n` adds a note, `c` clears them) and the agent (tools `add_note`,
`clear`; `notes` reads them all) share. Protocol lines go to stdout, one
at a time under a lock; the screen is drawn on /dev/tty; every change sends
a complete tick/update, and nothing else does (not a repaint, not a resize).
Check it with `tickloop check -- ./{{NAME}}.py`.
"""
import json
import os
import select
import signal
import sys
import termios
import threading
import tty

REVISION = "1"  # change it whenever TOOLS change
OUT = threading.Lock()
STATE = threading.RLock()
seq = 0
notes = []  # {"text", "by"}


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def send(frame):
    line = json.dumps({"jsonrpc": "2.0", **frame}, separators=(",", ":")) + "\n"
    with OUT:
        try:
            sys.stdout.write(line)
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(0)


TOOLS = [
    {"name": "add_note", "mutates": True,
     "description": "Add a note with `text`; answers how many notes there are.",
     "input_schema": {"type": "object", "properties": {"text": {"type": "string", "minLength": 1}},
                      "required": ["text"], "additionalProperties": False}},
    {"name": "clear", "mutates": True,
     "description": "Remove every note.",
     "input_schema": {"type": "object", "additionalProperties": False}},
    {"name": "notes", "mutates": False,
     "description": "Every note, oldest first, with who added it.",
     "input_schema": {"type": "object", "additionalProperties": False}},
]


def state():
    return {"count": len(notes), "last": notes[-5:]}


def changed():
    """Called with STATE held, after a change: one update, one redraw."""
    global seq
    seq += 1
    send({"method": "tick/update", "params": {"seq": seq, "data": state()}})
    screen.redraw()


def call(params):
    if params.get("revision") != REVISION:
        raise RpcError(-32004, "the tool catalog changed; describe the Tick and prepare the call again")
    tool, args = params.get("tool"), params.get("args", {})
    if not isinstance(args, dict):
        raise RpcError(-32602, "args must be an object")
    if tool == "add_note":
        text = args.get("text")
        if not isinstance(text, str) or not text or set(args) - {"text"}:
            raise RpcError(-32602, "add_note takes a non-empty string `text`")
        with STATE:
            notes.append({"text": text, "by": "agent"})
            changed()
            return {"count": len(notes)}
    if tool == "clear":
        if args:
            raise RpcError(-32602, "clear takes no arguments")
        with STATE:
            notes.clear()
            changed()
            return {"count": 0}
    if tool == "notes":
        if args:
            raise RpcError(-32602, "notes takes no arguments")
        with STATE:
            return {"notes": list(notes)}
    raise RpcError(-32602, f"unknown tool {tool!r}")


def handle(method, params):
    if method == "tick/describe":
        return {"protocol": 3, "kind": "local.{{NAME}}", "title": "{{TITLE}}",
                "description": "Notes shared by the person (keys n, c) and the agent.",
                "revision": REVISION, "tools": TOOLS}
    if method == "tick/read":
        with STATE:
            return {"seq": seq, "data": state()}
    if method == "tick/call":
        return call(params if isinstance(params, dict) else {})
    raise RpcError(-32601, f"unknown method {method}")


class Screen:
    """Draws on /dev/tty from its own thread; others only poke a pipe."""

    def __init__(self):
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        self.saved = None
        try:
            self.fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        except OSError:
            self.fd = None
        except termios.error:
            pass

    def redraw(self):
        try:
            os.write(self.wake_w, b".")
        except OSError:
            pass

    def draw(self):
        with STATE:
            shown = list(notes[-20:])
        out = ["\x1b[?25l\x1b[H\x1b[2J\x1b[1m {{TITLE}} \x1b[0m",
               f"  {len(notes)} notes   keys: n add a note, c clear\r\n\r\n"]
        out += [f"  - {n['text']}  ({n['by']})\r\n" for n in shown]
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
                ready, _, _ = select.select([self.fd, self.wake_r], [], [])
            except InterruptedError:
                continue
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
                self.draw()
            if self.fd in ready:
                try:
                    keys = os.read(self.fd, 1024)
                except OSError:
                    return
                if not keys:
                    return
                with STATE:
                    for key in keys.decode(errors="ignore"):
                        if key == "n":
                            notes.append({"text": f"note {len(notes) + 1}", "by": "person"})
                            changed()
                        elif key == "c":
                            notes.clear()
                            changed()


screen = Screen()


def main():
    signal.signal(signal.SIGWINCH, lambda *_: screen.redraw())  # repaint only, no update
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    threading.Thread(target=screen.run, daemon=True).start()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue  # unparseable: never answered
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            continue
        try:
            send({"id": request["id"], "result": handle(request.get("method"), request.get("params", {}))})
        except RpcError as error:
            send({"id": request["id"], "error": {"code": error.code, "message": str(error)}})
        except Exception as error:  # a bug after starting: "executed"
            send({"id": request["id"], "error": {"code": -32000, "message": f"internal error: {error}"}})
    if screen.fd is not None and screen.saved is not None:
        termios.tcsetattr(screen.fd, termios.TCSADRAIN, screen.saved)


if __name__ == "__main__":
    main()
