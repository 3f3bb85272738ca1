#!/usr/bin/env python3
"""Argful Tick: `argful.py MODE`, a Tick whose tools take arguments, each MODE
breaking one rule that only calls with arguments (or a shutdown on its own)
can show. Standard library only, the protocol written out by hand (not on
tickloop_tick), one request at a time.

Tools: `bump {by?: integer 1..5}` (mutating: adds to the count, one update),
`pick {color: "red"|"green"|"blue", opts?: {size: integer 1..3, shade:
"light"|"dark"}}` (a query) and `count {}` (a query).

  good                  breaks nothing
  seq_back_after_args   `bump` with `by` sends its update with seq 1 (below
                        the last); `bump {}` is right
  enum_crash            `pick` with color "blue" raises, uncaught: the
                        process dies with a traceback
  enum_error            `pick` with color "green" answers -32603 (an
                        internal error), the session goes on
  big_after_args        `bump` with `by` grows the state past 16 KiB
  ignores_sigterm       ignores SIGTERM; exits on stdin EOF as it should
  ignores_eof           keeps running after stdin EOF (SIGTERM ends it)
"""
import json
import signal
import sys
import time

MODE = sys.argv[1] if len(sys.argv) > 1 else "good"
REVISION = "argful-1"
TOOLS = [
    {"name": "bump", "mutates": True, "description": "Add `by` (default 1) to the count.",
     "input_schema": {"type": "object", "properties": {"by": {"type": "integer", "minimum": 1, "maximum": 5}},
                      "additionalProperties": False}},
    {"name": "pick", "mutates": False, "description": "Say which color was picked.",
     "input_schema": {"type": "object", "properties": {
         "color": {"type": "string", "enum": ["red", "green", "blue"]},
         "opts": {"type": "object", "properties": {
             "size": {"type": "integer", "minimum": 1, "maximum": 3},
             "shade": {"type": "string", "enum": ["light", "dark"]}},
             "required": ["size"], "additionalProperties": False}},
         "required": ["color"], "additionalProperties": False}},
    {"name": "count", "mutates": False, "description": "The count.",
     "input_schema": {"type": "object", "additionalProperties": False}},
]
seq, count = 0, 0
padding = ""


def send(frame):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **frame}) + "\n")
    sys.stdout.flush()


def data():
    return {"count": count, "padding": padding} if padding else {"count": count}


def error(code, message):
    return {"error": {"code": code, "message": message}}


def call(params):
    global seq, count, padding
    if params.get("revision") != REVISION:
        return error(-32004, "stale revision")
    tool, args = params.get("tool"), params.get("args", {})
    if tool == "bump":
        by = args.get("by", 1)
        if not isinstance(by, int) or not 1 <= by <= 5 or set(args) - {"by"}:
            return error(-32602, "bump takes an optional `by` from 1 to 5")
        count += by
        seq += 1
        if MODE == "big_after_args" and args:
            padding = "x" * (20 * 1024)
        sent = 1 if MODE == "seq_back_after_args" and args else seq
        send({"method": "tick/update", "params": {"seq": sent, "data": data()}})
        return {"result": {"count": count}}
    if tool == "pick":
        color = args.get("color")
        if color not in ("red", "green", "blue"):
            return error(-32602, "pick takes a color")
        if MODE == "enum_crash" and color == "blue":
            raise RuntimeError("blue was never expected")
        if MODE == "enum_error" and color == "green":
            return error(-32603, "internal error: KeyError('green')")
        return {"result": {"picked": color, "opts": args.get("opts")}}
    if tool == "count":
        return {"result": {"count": count}}
    return error(-32602, f"unknown tool {tool!r}")


def handle(request):
    method, params = request.get("method"), request.get("params") or {}
    if method == "tick/describe":
        return {"result": {"protocol": 3, "kind": "test.argful", "title": f"Argful {MODE}",
                           "description": "Tools with arguments.", "revision": REVISION, "tools": TOOLS}}
    if method == "tick/read":
        return {"result": {"seq": seq, "data": data()}}
    if method == "tick/call":
        return call(params)
    return error(-32601, f"unknown method {method}")


if MODE == "ignores_sigterm":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    try:
        request = json.loads(line)
    except ValueError:
        continue
    if isinstance(request, dict) and isinstance(request.get("id"), int):
        send({"id": request["id"], **handle(request)})
if MODE == "ignores_eof":
    while True:
        time.sleep(3600)
