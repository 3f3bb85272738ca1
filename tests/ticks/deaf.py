#!/usr/bin/env python3
# Deaf Tick: answers its initialization (tick/describe, tick/read) and its
# first tick/call, then never reads its stdin again (it sleeps until
# killed), as a Tick wedged in a loop would. Its one tool, `note`, takes a
# text of any length and does not mutate. Used by the tests of the
# launcher's bounded queue to a Tick's stdin (issue 42) and by
# benches/deaf_tick.py.
import json, sys, time

TOOLS = [{"name": "note", "description": "Takes a note (any length).", "mutates": False,
          "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                           "additionalProperties": False}}]

def send(frame):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", **frame}) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    request = json.loads(line)
    method = request["method"]
    if method == "tick/describe":
        send({"id": request["id"], "result": {"protocol": 3, "kind": "test.deaf", "title": "Deaf",
                                              "revision": "1", "tools": TOOLS}})
    elif method == "tick/read":
        send({"id": request["id"], "result": {"seq": 0, "data": {}}})
    elif method == "tick/call":
        send({"id": request["id"], "result": {"noted": True, "deaf": True}})
        break
    else:
        send({"id": request["id"], "error": {"code": -32601, "message": "unknown method"}})

while True:
    time.sleep(3600)
