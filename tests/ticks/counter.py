#!/usr/bin/env python3
"""Counter Tick: the Tick protocol 3 spec's Appendix A counter, for Tickloop's tests.

Standard library only. Differences from the appendix, all additive:

* Requests are processed CONCURRENTLY (one thread per request); every stdout
  write happens under one lock, and each update is written under the state
  lock so sequence numbers leave in order.
* A small TUI is drawn on /dev/tty (cbreak mode): title, value, hints, and the
  line `size COLSxROWS`, redrawn on SIGWINCH. Typing `+` / `-` changes the
  value and emits a tick/update.
* Extra tools for tests:
    sleep{ms}                 mutates; sleeps, then answers {"slept": ms}
    fail{}                    mutates; answers error -32000 (executed)
    set_revision{revision}    mutates; changes the catalog revision
    flood{count}              mutates; emits COUNT updates as fast as it can,
                              each one value+1 with seq+1
    big_state{bytes}          mutates; emits one update whose /recent series
                              is long enough for the encoded data to exceed BYTES
* SIGUSR1 changes the catalog revision to "R-usr1" without telling anyone
  (no update), as a Tick whose tools changed under the host would.
* Options: `--log FILE` appends every received request line to FILE (flushed
  at once), so tests can count what reached the Tick; `--revision R` sets the
  initial revision (default "1"); `--describe-bytes N` pads the descriptor's
  description to about N bytes (benches/update_flood.py); `--exit-after MS`
  exits (status 0) MS milliseconds after answering its first `tick/read`
  (the end of its initialization), for the races at the end.
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

RECENT_IN_STATE = 20
HISTORY_LEN = 256


def parse_args(argv):
    opts = {"log": None, "revision": "1"}
    i = 0
    while i < len(argv):
        if argv[i] == "--log" and i + 1 < len(argv):
            opts["log"] = argv[i + 1]
            i += 2
        elif argv[i] == "--revision" and i + 1 < len(argv):
            opts["revision"] = argv[i + 1]
            i += 2
        elif argv[i] == "--describe-bytes" and i + 1 < len(argv):
            opts["describe_bytes"] = int(argv[i + 1])
            i += 2
        elif argv[i] == "--exit-after" and i + 1 < len(argv):
            opts["exit_after"] = int(argv[i + 1])
            i += 2
        else:
            i += 1
    return opts


OPTS = parse_args(sys.argv[1:])
OUT_LOCK = threading.Lock()  # one complete line at a time on stdout
STATE_LOCK = threading.RLock()  # value, seq, history, revision
LOG_LOCK = threading.Lock()

revision = OPTS["revision"]
value = 0
seq = 0
history = []  # [{"seq", "value"}], newest last
recent = []  # the /recent series in state, newest last


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def log_line(line):
    if OPTS["log"] is None:
        return
    with LOG_LOCK:
        with open(OPTS["log"], "a", encoding="utf-8") as f:
            f.write(line.rstrip("\n") + "\n")
            f.flush()


def send(frame):
    text = json.dumps({"jsonrpc": "2.0", **frame}, separators=(",", ":")) + "\n"
    with OUT_LOCK:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(0)


def tools():
    obj = {"type": "object", "additionalProperties": False}
    return [
        {"name": "increment", "description": "Add an integer to the counter.",
         "input_schema": {"type": "object", "properties": {"amount": {"type": "integer"}},
                          "required": ["amount"], "additionalProperties": False},
         "mutates": True},
        {"name": "history", "description": "Read the last 256 changes.",
         "input_schema": obj, "mutates": False},
        {"name": "sleep", "description": "Sleep MS milliseconds, then answer.",
         "input_schema": {"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0}},
                          "required": ["ms"], "additionalProperties": False},
         "mutates": True},
        {"name": "fail", "description": "Start, then fail (error -32000).",
         "input_schema": obj, "mutates": True},
        {"name": "set_revision", "description": "Change the catalog revision.",
         "input_schema": {"type": "object", "properties": {"revision": {"type": "string"}},
                          "required": ["revision"], "additionalProperties": False},
         "mutates": True},
        {"name": "flood", "description": "Emit COUNT updates quickly, each adding 1.",
         "input_schema": {"type": "object", "properties": {"count": {"type": "integer", "minimum": 0}},
                          "required": ["count"], "additionalProperties": False},
         "mutates": True},
        {"name": "big_state", "description": "Make the state about BYTES large (a long /recent).",
         "input_schema": {"type": "object", "properties": {"bytes": {"type": "integer", "minimum": 0}},
                          "required": ["bytes"], "additionalProperties": False},
         "mutates": True},
    ]


def descriptor():
    with STATE_LOCK:
        rev = revision
    about = "Keyboard and tool calls share one value."
    pad = OPTS.get("describe_bytes", 0) - len(about)
    if pad > 0:
        about += " " + "x" * pad
    return {"protocol": 3, "kind": "example.counter", "title": "Counter",
            "description": about,
            "revision": rev, "tools": tools(), "recover_with": "history",
            "state": {"series": [{"path": "/recent", "newest": "last"}]}}


def state_data():
    return {"value": value, "recent": list(recent)}


def change(delta):
    """Apply DELTA and emit the update; the caller may hold STATE_LOCK."""
    global value, seq
    with STATE_LOCK:
        value += delta
        seq += 1
        entry = {"seq": seq, "value": value}
        history.append(entry)
        del history[:-HISTORY_LEN]
        recent.append(entry)
        del recent[:-RECENT_IN_STATE]
        send({"method": "tick/update", "params": {"seq": seq, "data": state_data()}})
        v = value
    tui.request_redraw()
    return v


def big_state(nbytes):
    global seq, recent
    with STATE_LOCK:
        seq += 1
        series = []
        size = 0
        i = 0
        while size <= nbytes:
            entry = {"seq": seq, "value": value, "i": i, "pad": "x" * 24}
            series.append(entry)
            size += len(json.dumps(entry, separators=(",", ":"))) + 1
            i += 1
        recent = series
        send({"method": "tick/update", "params": {"seq": seq, "data": state_data()}})
        return {"seq": seq, "entries": len(series)}


def call(params):
    global revision
    if not isinstance(params, dict):
        raise RpcError(-32602, "params must be an object")
    with STATE_LOCK:
        current = revision
    if params.get("revision") != current:
        raise RpcError(-32004, "the Tick Tool catalog changed; describe the Tick "
                               "and prepare the call again")
    tool = params.get("tool")
    args = params.get("args", {})
    if not isinstance(args, dict):
        raise RpcError(-32602, "args must be an object")

    def int_arg(name):
        v = args.get(name)
        if not isinstance(v, int) or isinstance(v, bool):
            raise RpcError(-32602, f"{tool} takes an integer {name}")
        return v

    if tool == "increment":
        amount = int_arg("amount")
        return {"value": change(amount)}
    if tool == "history":
        with STATE_LOCK:
            return {"changes": list(history)}
    if tool == "sleep":
        ms = int_arg("ms")
        time.sleep(ms / 1000.0)
        return {"slept": ms}
    if tool == "fail":
        raise RpcError(-32000, "the tool failed after starting")
    if tool == "set_revision":
        new = args.get("revision")
        if not isinstance(new, str) or new == "":
            raise RpcError(-32602, "set_revision takes a nonempty revision string")
        with STATE_LOCK:
            revision = new
        tui.request_redraw()
        return {"revision": new}
    if tool == "flood":
        count = int_arg("count")
        for _ in range(count):
            change(1)
        with STATE_LOCK:
            return {"emitted": count, "seq": seq, "value": value}
    if tool == "big_state":
        return big_state(int_arg("bytes"))
    raise RpcError(-32602, f"unknown tool {tool!r}")


def handle(method, params):
    if method == "tick/describe":
        return descriptor()
    if method == "tick/read":
        with STATE_LOCK:
            return {"seq": seq, "data": state_data()}
    if method == "tick/call":
        return call(params)
    raise RpcError(-32601, f"unknown method {method}")


EXIT_TIMER = []


def exit_later():
    """With --exit-after MS: exit MS ms after the first tick/read."""
    ms = OPTS.get("exit_after")
    if ms is None or EXIT_TIMER:
        return
    timer = threading.Timer(ms / 1000.0, lambda: os._exit(0))
    timer.daemon = True
    EXIT_TIMER.append(timer)
    timer.start()


def serve(request):
    rid = request.get("id")
    try:
        result = handle(request.get("method"), request.get("params", {}))
        send({"id": rid, "result": result})
        if request.get("method") == "tick/read":
            exit_later()
    except RpcError as error:
        send({"id": rid, "error": {"code": error.code, "message": str(error)}})
    except Exception as error:  # noqa: BLE001 - a bug here is an "executed" failure
        send({"id": rid, "error": {"code": -32603, "message": f"internal error: {error}"}})


class Tui:
    """Draws on /dev/tty from one thread; other threads and SIGWINCH only poke a pipe."""

    def __init__(self):
        self.fd = None
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        try:
            self.fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        except OSError:
            self.fd = None
            return
        try:
            self.saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        except termios.error:
            self.saved = None

    def request_redraw(self):
        try:
            os.write(self.wake_w, b"r")
        except (BlockingIOError, OSError):
            pass

    def size(self):
        try:
            s = os.get_terminal_size(self.fd)
            return s.columns, s.lines
        except OSError:
            return 0, 0

    def draw(self):
        cols, rows = self.size()
        with STATE_LOCK:
            v, s, rev = value, seq, revision
        inst = os.environ.get("TICKLOOP_INSTANCE_ID", "-")
        lines = [
            "Counter  (example.counter)",
            "",
            f"value: {v}",
            f"seq: {s}  revision: {rev}",
            "",
            "keys: + increment   - decrement",
            f"size {cols}x{rows}",
            f"instance: {inst}",
        ]
        out = "\x1b[H\x1b[2J" + "\r\n".join(lines) + "\r\n"
        try:
            os.write(self.fd, out.encode())
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
                try:
                    os.read(self.wake_r, 4096)
                except OSError:
                    pass
                self.draw()
            if self.fd in ready:
                try:
                    data = os.read(self.fd, 1024)
                except OSError:
                    return
                if not data:
                    return
                for b in data:
                    if b == ord("+"):
                        change(1)
                    elif b == ord("-"):
                        change(-1)


tui = Tui()


def on_winch(_signum, _frame):
    tui.request_redraw()


def on_usr1(_signum, _frame):
    global revision
    with STATE_LOCK:
        revision = f"{revision}-usr1"
    tui.request_redraw()


def main():
    signal.signal(signal.SIGWINCH, on_winch)
    signal.signal(signal.SIGUSR1, on_usr1)
    threading.Thread(target=tui.run, daemon=True).start()
    workers = []
    for line in sys.stdin:
        log_line(line)
        try:
            request = json.loads(line)
        except ValueError:
            continue  # unparseable: discard without replying (spec 3.2)
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            continue
        t = threading.Thread(target=serve, args=(request,), daemon=True)
        t.start()
        workers.append(t)
        workers = [w for w in workers if w.is_alive()]
    for w in workers:  # stdin EOF: finish in-flight calls, then exit
        w.join()
    if tui.fd is not None and tui.saved is not None:
        try:
            termios.tcsetattr(tui.fd, termios.TCSADRAIN, tui.saved)
        except termios.error:
            pass


if __name__ == "__main__":
    main()
