#!/usr/bin/env python3
"""Flood Tick for Tickloop's host benchmark: after its first tick/read it emits
tick/update notifications as fast as it can for SECONDS (argv[1], default 10),
each a complete small state, then idles answering requests. Standard library
only; no terminal interface (its screen stays blank)."""
import json
import sys
import threading
import time

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 10.0
lock = threading.Lock()
state = {"seq": 0, "value": 0}
out = sys.stdout


def send(frame):
    line = json.dumps({"jsonrpc": "2.0", **frame}) + "\n"
    with lock:
        out.write(line)
        out.flush()


def flood():
    deadline = time.monotonic() + seconds
    recent = []
    while time.monotonic() < deadline:
        for _ in range(100):
            state["seq"] += 1
            state["value"] += 1
            recent.append(state["value"])
            del recent[:-20]
            line = json.dumps({"jsonrpc": "2.0", "method": "tick/update",
                               "params": {"seq": state["seq"],
                                          "data": {"value": state["value"], "recent": recent}}})
            with lock:
                out.write(line + "\n")
        with lock:
            out.flush()


started = False
for raw in sys.stdin:
    request = json.loads(raw)
    method = request.get("method")
    if method == "tick/describe":
        result = {"protocol": 3, "kind": "bench.flood", "title": "Flood",
                  "description": "Emits updates as fast as it can.", "revision": "1",
                  "tools": [], "state": {"series": [{"path": "/recent", "newest": "last"}]}}
    elif method == "tick/read":
        with lock:
            result = {"seq": state["seq"], "data": {"value": state["value"]}}
    else:
        send({"id": request["id"], "error": {"code": -32601, "message": "no such method"}})
        continue
    send({"id": request["id"], "result": result})
    if method == "tick/read" and not started:
        started = True
        threading.Thread(target=flood, daemon=True).start()
