#!/usr/bin/env python3
"""Bad Tick: `bad.py MODE [--log FILE]` breaks exactly one rule of Tick protocol 3.

Standard library only. At start it writes the banner `bad tick MODE` to its
terminal (stderr is the PTY), so failed-open reports can show the screen's
start. `--log FILE` appends every received request line to FILE.

The descriptor is a valid one (tools `break`, mutating, and `echo`, a query)
except in the initialization modes, where exactly one thing is wrong:

  wrong_version               protocol 2
  blank_kind                  kind "   "
  blank_title                 title " \t "
  empty_revision              revision ""
  blank_tool_name             a tool named "  "
  duplicate_tool_names        two tools named "echo"
  schema_not_object           input_schema `true` (a JSON Schema, but not an object)
  schema_invalid              input_schema {"type":"object","properties":{"a":{"type":12}}}
  recover_with_unknown        recover_with "nope" (no such tool)
  recover_with_mutating       recover_with "break" (mutates: true)
  series_no_slash             state.series path "recent"
  series_duplicate            state.series path "/recent" twice
  descriptor_too_big          a description of 600 KiB (encoded result > 512 KiB)
  describe_never_answers      reads requests and never answers any
  debug_print_before_describe prints "DEBUG starting up" on stdout, then behaves

After a normal initialization, calling the tool `break` triggers the
violation, and the call itself is never answered (its outcome is unknown):

  invalid_json_line           writes the line `this is not json {`
  jsonrpc_1_0                 answers the call with "jsonrpc":"1.0"
  null_id_response            writes an error response with "id": null
  string_id_response          answers the call with the id as a string
  no_trailing_newline_then_exit  writes a response without its newline, exits 0
  line_over_8mib              writes a 9 MiB tick/update line
  update_null_data            tick/update with "data": null
  update_seq_not_increasing   tick/update seq 5, then another with seq 3
  update_bad_at               tick/update with "at": "yesterday at noon"
  update_over_512kib          tick/update whose data is 600 KiB
  exit_mid_call               (not a violation) logs the call, exits 3 unanswered

Behaviour modes (valid Ticks):

  inflight_recorder   every request is served on its own thread; each `break`
                      (or `echo`) call sleeps 200 ms; the most requests ever in
                      flight at once is answered by the tool `max_in_flight`
                      ({"max": N}) and kept in state as /max_in_flight
  ignores_sigterm     ignores SIGTERM (and SIGHUP) and starts a child that
                      ignores both too, so only SIGKILL ends them;
                      state data is {"pid": P, "child_pid": C}
  stderr_and_size     writes `stderr hello from bad tick` and
                      `stty size: ROWS COLS` (from /dev/tty) to stderr at start
  update_on_resize    sends a tick/update (seq raised, data unchanged) on
                      every SIGWINCH: the update a repaint must not cause
  echo_input          puts /dev/tty in cbreak mode and shows every printable
                      character it receives on one line: `input: TEXT`
"""
import json
import os
import signal
import subprocess
import sys
import termios
import threading
import time
import tty

MODE = sys.argv[1] if len(sys.argv) > 1 else "none"
LOG = None
if "--log" in sys.argv:
    i = sys.argv.index("--log")
    if i + 1 < len(sys.argv):
        LOG = sys.argv[i + 1]

OUT_LOCK = threading.Lock()
STATE_LOCK = threading.Lock()
state = {"mode": MODE}
seq = 0


def log_line(line):
    if LOG is not None:
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(line.rstrip("\n") + "\n")
            f.flush()


def raw(text):
    """Write TEXT to stdout as is (no newline added)."""
    with OUT_LOCK:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            os._exit(0)


def send(frame):
    raw(json.dumps({"jsonrpc": "2.0", **frame}, separators=(",", ":")) + "\n")


def screen(text):
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except OSError:
        pass


OBJ = {"type": "object"}


def descriptor():
    tools = [
        {"name": "break", "description": "Break the rule of this mode.",
         "input_schema": OBJ, "mutates": True},
        {"name": "echo", "description": "Answer the args.", "input_schema": OBJ,
         "mutates": False},
    ]
    if MODE == "inflight_recorder":
        tools.append({"name": "max_in_flight", "description": "Most requests in flight.",
                      "input_schema": OBJ, "mutates": False})
    d = {"protocol": 3, "kind": "test.bad", "title": f"Bad {MODE}",
         "description": "A Tick that breaks one rule.", "revision": "1",
         "tools": tools, "recover_with": "echo",
         "state": {"series": [{"path": "/recent", "newest": "last"}]}}
    if MODE == "wrong_version":
        d["protocol"] = 2
    elif MODE == "blank_kind":
        d["kind"] = "   "
    elif MODE == "blank_title":
        d["title"] = " \t "
    elif MODE == "empty_revision":
        d["revision"] = ""
    elif MODE == "blank_tool_name":
        tools.append({"name": "  ", "description": "Blank.", "input_schema": OBJ,
                      "mutates": False})
    elif MODE == "duplicate_tool_names":
        tools.append({"name": "echo", "description": "Again.", "input_schema": OBJ,
                      "mutates": False})
    elif MODE == "schema_not_object":
        tools[1]["input_schema"] = True
    elif MODE == "schema_invalid":
        tools[1]["input_schema"] = {"type": "object", "properties": {"a": {"type": 12}}}
    elif MODE == "recover_with_unknown":
        d["recover_with"] = "nope"
    elif MODE == "recover_with_mutating":
        d["recover_with"] = "break"
    elif MODE == "series_no_slash":
        d["state"]["series"][0]["path"] = "recent"
    elif MODE == "series_duplicate":
        d["state"]["series"].append({"path": "/recent", "newest": "first"})
    elif MODE == "descriptor_too_big":
        d["description"] = "x" * (600 * 1024)
    return d


in_flight = 0
max_in_flight = 0


def do_break(rid):
    """Trigger this mode's post-init violation; never answers RID."""
    if MODE == "invalid_json_line":
        raw("this is not json {\n")
    elif MODE == "jsonrpc_1_0":
        raw(json.dumps({"jsonrpc": "1.0", "id": rid, "result": {}}) + "\n")
    elif MODE == "null_id_response":
        raw(json.dumps({"jsonrpc": "2.0", "id": None,
                        "error": {"code": -32700, "message": "parse error"}}) + "\n")
    elif MODE == "string_id_response":
        raw(json.dumps({"jsonrpc": "2.0", "id": str(rid), "result": {}}) + "\n")
    elif MODE == "no_trailing_newline_then_exit":
        raw(json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}))
        os._exit(0)
    elif MODE == "line_over_8mib":
        head = '{"jsonrpc":"2.0","method":"tick/update","params":{"seq":1,"data":{"x":"'
        with OUT_LOCK:
            try:
                sys.stdout.write(head)
                chunk = "a" * (1024 * 1024)
                for _ in range(9):
                    sys.stdout.write(chunk)
                sys.stdout.write('"}}}\n')
                sys.stdout.flush()
            except (BrokenPipeError, OSError):
                os._exit(0)
    elif MODE == "update_null_data":
        send({"method": "tick/update", "params": {"seq": 1, "data": None}})
    elif MODE == "update_seq_not_increasing":
        send({"method": "tick/update", "params": {"seq": 5, "data": {"n": 1}}})
        send({"method": "tick/update", "params": {"seq": 3, "data": {"n": 2}}})
    elif MODE == "update_bad_at":
        send({"method": "tick/update",
              "params": {"seq": 1, "data": {"n": 1}, "at": "yesterday at noon"}})
    elif MODE == "update_over_512kib":
        send({"method": "tick/update",
              "params": {"seq": 1, "data": {"blob": "y" * (600 * 1024)}}})
    elif MODE == "exit_mid_call":
        os._exit(3)  # the request line was already logged by the reader
    else:
        send({"id": rid, "result": {"broke": False}})


def handle(request):
    """Serves one request; in inflight_recorder mode, also leaves the in-flight count."""
    rid = request.get("id")
    method = request.get("method")
    params = request.get("params") or {}
    if method == "tick/describe":
        if MODE == "describe_never_answers":
            return
        reply({"id": rid, "result": descriptor()})
    elif method == "tick/read":
        with STATE_LOCK:
            data = dict(state)
            if MODE == "inflight_recorder":
                data["max_in_flight"] = max_in_flight
        reply({"id": rid, "result": {"seq": seq, "data": data}})
    elif method == "tick/call":
        if params.get("revision") != "1":
            reply({"id": rid, "error": {"code": -32004, "message": "catalog changed"}})
            return
        tool = params.get("tool")
        if tool == "max_in_flight" and MODE == "inflight_recorder":
            with STATE_LOCK:
                m = max_in_flight
            reply({"id": rid, "result": {"max": m}})
        elif tool in ("break", "echo") and MODE == "inflight_recorder":
            time.sleep(0.2)
            reply({"id": rid, "result": {"args": params.get("args")}})
        elif tool == "break":
            do_break(rid)
        elif tool == "echo":
            reply({"id": rid, "result": {"args": params.get("args")}})
        else:
            reply({"id": rid, "error": {"code": -32602, "message": "unknown tool"}})
    else:
        reply({"id": rid, "error": {"code": -32601, "message": "unknown method"}})


def arrived():
    """A request was read: it is in flight until its response is written."""
    global in_flight, max_in_flight
    if MODE == "inflight_recorder":
        with STATE_LOCK:
            in_flight += 1
            max_in_flight = max(max_in_flight, in_flight)


def reply(frame):
    """Writes a response. The request leaves the in-flight count BEFORE the
    write: once the host reads the response it may send the next request."""
    global in_flight
    if MODE == "inflight_recorder":
        with STATE_LOCK:
            in_flight -= 1
    send(frame)


def update_unchanged():
    """A tick/update whose data did not change (seq raised)."""
    global seq
    with STATE_LOCK:
        seq += 1
        frame = {"method": "tick/update", "params": {"seq": seq, "data": dict(state)}}
    send(frame)


def echo_input_loop():
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
        tty.setcbreak(fd)
    except (OSError, termios.error):
        return
    got = ""
    os.write(fd, b"\x1b[H\x1b[2Jbad tick echo_input\r\ninput: ")
    while True:
        try:
            data = os.read(fd, 1024)
        except OSError:
            return
        if not data:
            return
        text = "".join(ch for ch in data.decode("utf-8", "replace") if ch.isprintable())
        got += text
        os.write(fd, ("\r\x1b[Kinput: " + got).encode())


def start():
    global state
    screen(f"bad tick {MODE}\r\n")
    if MODE == "debug_print_before_describe":
        raw("DEBUG starting up\n")
    elif MODE == "ignores_sigterm":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        child = subprocess.Popen(
            [sys.executable, "-c",
             "import signal, time\n"
             "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
             "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
             "while True: time.sleep(1)\n"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        state = {"mode": MODE, "pid": os.getpid(), "child_pid": child.pid}
    elif MODE == "stderr_and_size":
        screen("stderr hello from bad tick\r\n")
        try:
            size = subprocess.run(["stty", "size"], stdin=open("/dev/tty"),
                                  capture_output=True, text=True).stdout.strip()
        except OSError as error:
            size = f"error {error}"
        screen(f"stty size: {size}\r\n")
    elif MODE == "echo_input":
        threading.Thread(target=echo_input_loop, daemon=True).start()
    elif MODE == "update_on_resize":
        def on_winch(_signum, _frame):
            # Sent from a thread: the handler may interrupt a write holding OUT_LOCK.
            threading.Thread(target=update_unchanged, daemon=True).start()
        signal.signal(signal.SIGWINCH, on_winch)


def main():
    start()
    threads = []
    for line in sys.stdin:
        log_line(line)
        try:
            request = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict) or not isinstance(request.get("id"), int):
            continue
        arrived()
        if MODE == "inflight_recorder":
            t = threading.Thread(target=handle, args=(request,), daemon=True)
            t.start()
            threads.append(t)
        else:
            handle(request)
    for t in threads:
        t.join()
    if MODE in ("ignores_sigterm", "describe_never_answers"):
        while True:  # stays until killed
            time.sleep(1)


if __name__ == "__main__":
    main()
