#!/usr/bin/env python3
"""Counter: a small Tick (Tick protocol 3) with a live TUI, Python standard library only.

One integer shared by the person at the terminal (keys `+`, `-`, `r`) and the
agent (tools `increment`, `reset`; `history` is the recover_with query).
Protocol messages go to stdout, one line each, under a lock; the interface is
drawn on /dev/tty from its own thread; every change emits a complete
tick/update. Exits on stdin EOF (after answering what was asked) or SIGTERM.
"""
import json
import os
import select
import signal
import sys
import termios
import threading
import time
import tty

REVISION = "1"
HISTORY_LEN = 256
RECENT_IN_STATE = 10

OUT_LOCK = threading.Lock()
STATE_LOCK = threading.RLock()
value = 0
seq = 0
history = []  # {"seq", "value", "by", "at"}, newest last


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


TOOLS = [
    {"name": "increment", "mutates": True,
     "description": "Add `amount` (default 1, may be negative) to the counter; answers the new value.",
     "input_schema": {"type": "object", "properties": {"amount": {"type": "integer"}},
                      "additionalProperties": False}},
    {"name": "reset", "mutates": True,
     "description": "Set the counter back to 0; answers the new value.",
     "input_schema": {"type": "object", "additionalProperties": False}},
    {"name": "history", "mutates": False,
     "description": "The last 256 changes (seq, value, by whom, when), oldest first.",
     "input_schema": {"type": "object", "additionalProperties": False}},
]


def descriptor():
    return {"protocol": 3, "kind": "tickloop.counter", "title": "Counter",
            "description": "One integer that the person (keys + - r) and the agent (increment, reset) share.",
            "revision": REVISION, "tools": TOOLS, "recover_with": "history",
            "state": {"series": [{"path": "/recent", "newest": "last"}]}}


def state_data():
    return {"value": value, "changes": len(history),
            "recent": [{"seq": h["seq"], "value": h["value"], "by": h["by"]}
                       for h in history[-RECENT_IN_STATE:]]}


def change(new_value, by):
    """Set the value, record it and emit the update; returns the new value."""
    global value, seq
    with STATE_LOCK:
        value = new_value
        seq += 1
        history.append({"seq": seq, "value": value, "by": by, "at": now()})
        del history[:-HISTORY_LEN]
        send({"method": "tick/update", "params": {"seq": seq, "data": state_data(), "at": now()}})
        result = value
    tui.redraw()
    return result


def call(params):
    if not isinstance(params, dict):
        raise RpcError(-32602, "params must be an object")
    if params.get("revision") != REVISION:
        raise RpcError(-32004, "the tool catalog changed; describe the Tick and prepare the call again")
    tool, args = params.get("tool"), params.get("args", {})
    if not isinstance(args, dict):
        raise RpcError(-32602, "args must be an object")
    if tool == "increment":
        amount = args.get("amount", 1)
        if not isinstance(amount, int) or isinstance(amount, bool) or set(args) - {"amount"}:
            raise RpcError(-32602, "increment takes an optional integer `amount`")
        with STATE_LOCK:
            return {"value": change(value + amount, "agent")}
    if tool == "reset":
        if args:
            raise RpcError(-32602, "reset takes no arguments")
        return {"value": change(0, "agent")}
    if tool == "history":
        if args:
            raise RpcError(-32602, "history takes no arguments")
        with STATE_LOCK:
            return {"changes": list(history)}
    raise RpcError(-32602, f"unknown tool {tool!r}")


def handle(method, params):
    if method == "tick/describe":
        return descriptor()
    if method == "tick/read":
        with STATE_LOCK:
            return {"seq": seq, "data": state_data(), "at": now()}
    if method == "tick/call":
        return call(params)
    raise RpcError(-32601, f"unknown method {method}")


class Tui:
    """Draws on /dev/tty; other threads and SIGWINCH only poke a pipe."""

    def __init__(self):
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
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
        with STATE_LOCK:
            v, s, recent = value, seq, history[-max(rows - 9, 0):]
        width = max(min(cols, 60) - 2, 20)
        out = ["\x1b[?25l\x1b[H\x1b[2J",
               "\x1b[1m Counter \x1b[0m" + f"  seq {s}".rjust(width - 8) + "\r\n",
               "\u250c" + "\u2500" * width + "\u2510\r\n",
               "\u2502" + f"\x1b[1m{v:^{width}}\x1b[0m" + "\u2502\r\n",
               "\u2514" + "\u2500" * width + "\u2518\r\n",
               " keys: + add 1   - subtract 1   r reset\r\n", "\r\n"]
        for h in reversed(recent):
            out.append(f"  #{h['seq']:<5} {h['value']:>8}   by {h['by']:<6} {h['at']}"[:cols] + "\r\n")
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
                for k in keys.decode(errors="ignore"):
                    with STATE_LOCK:
                        if k == "+":
                            change(value + 1, "person")
                        elif k == "-":
                            change(value - 1, "person")
                        elif k in "rR":
                            change(0, "person")

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
    threading.Thread(target=tui.run, daemon=True).start()
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue  # unparseable: discard without replying
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            continue
        try:
            send({"id": request["id"], "result": handle(request.get("method"), request.get("params", {}))})
        except RpcError as error:
            send({"id": request["id"], "error": {"code": error.code, "message": str(error)}})
        except Exception as error:  # noqa: BLE001 - a bug after starting: "executed"
            send({"id": request["id"], "error": {"code": -32000, "message": f"internal error: {error}"}})
    tui.restore()


if __name__ == "__main__":
    main()
