#!/usr/bin/env python3
# Schemas Tick: a Tick whose tools declare input schemas that are valid JSON
# Schema but that strict MCP hosts refuse as a tool's inputSchema: one of type
# "string", one with a top-level oneOf (referring to $defs), one of type
# ["object", "null"], beside a plain object one. Every tool answers with the
# args it got; `pick` also counts in the state. Used by the MCP bridge tests.
import json, sys

REVISION = "1"
TOOLS = [
    {"name": "echo", "description": "Answers with its args.", "mutates": False,
     "input_schema": {"type": "object", "properties": {"text": {"type": "string"}},
                      "required": ["text"], "additionalProperties": False}},
    {"name": "shout", "description": "Takes a bare string (no object can match).", "mutates": False,
     "input_schema": {"type": "string"}},
    {"name": "pick", "description": "Takes either {a: integer} or {b: string}; counts picks.", "mutates": True,
     "input_schema": {"oneOf": [{"$ref": "#/$defs/by_number"},
                                {"type": "object", "properties": {"b": {"type": "string"}},
                                 "required": ["b"], "additionalProperties": False}],
                      "$defs": {"by_number": {"type": "object", "properties": {"a": {"type": "integer"}},
                                              "required": ["a"], "additionalProperties": False}}}},
    {"name": "maybe", "description": "Takes an object or null.", "mutates": False,
     "input_schema": {"type": ["object", "null"], "properties": {"n": {"type": "integer"}}}},
]
seq, picks = 0, 0


class RpcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def send(frame):
    print(json.dumps({"jsonrpc": "2.0", **frame}), flush=True)


def handle(method, params):
    global seq, picks
    if method == "tick/describe":
        return {"protocol": 3, "kind": "test.schemas", "title": "Schemas",
                "description": "Tools with schemas strict hosts refuse.", "revision": REVISION,
                "tools": TOOLS}
    if method == "tick/read":
        return {"seq": seq, "data": {"picks": picks}}
    if method == "tick/call":
        if params.get("revision") != REVISION:
            raise RpcError(-32004, "the tool catalog changed")
        tool = params.get("tool")
        if tool not in [t["name"] for t in TOOLS]:
            raise RpcError(-32602, f"unknown tool {tool}")
        args = params.get("args", {})
        if tool == "pick":
            seq, picks = seq + 1, picks + 1
            send({"method": "tick/update", "params": {"seq": seq, "data": {"picks": picks}}})
        return {"tool": tool, "args": args}
    raise RpcError(-32601, f"unknown method {method}")


for line in sys.stdin:
    request = json.loads(line)
    try:
        send({"id": request["id"], "result": handle(request["method"], request.get("params", {}))})
    except RpcError as error:
        send({"id": request["id"], "error": {"code": error.code, "message": str(error)}})
