#!/usr/bin/env python3
"""Writes the seed corpus of every border (fuzz/corpus/BORDER/seed-*), from
which proptest's mutations and libFuzzer start: well-formed inputs that
reach deep (an initialized Tick session answering reads and calls, a
screen with every kind of escape sequence, a full config file, MCP's
initialize and tools/call, Herdr's answers). Run again after changing it;
the files are committed. Standard library only.

Run: python3 fuzz/seeds.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def put(border, name, data):
    folder = os.path.join(HERE, "corpus", border)
    os.makedirs(folder, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(folder, f"seed-{name}"), "wb") as f:
        f.write(data)


def line(value):
    return json.dumps(value, separators=(",", ":")) + "\n"


COUNTER = {
    "protocol": 3, "kind": "example.counter", "title": "Counter",
    "description": "Keyboard and tool calls share one value.", "revision": "1",
    "tools": [
        {"name": "increment", "description": "Add an integer to the counter.",
         "input_schema": {"type": "object", "properties": {"amount": {"type": "integer"}},
                          "required": ["amount"], "additionalProperties": False},
         "mutates": True},
        {"name": "history", "description": "Read the last 256 changes.",
         "input_schema": {"type": "object", "additionalProperties": False}, "mutates": False},
    ],
    "recover_with": "history",
    "state": {"series": [{"path": "/recent", "newest": "last"}]},
}


def tick_stdout():
    init = line({"jsonrpc": "2.0", "id": 1, "result": COUNTER}) + line(
        {"jsonrpc": "2.0", "id": 2, "result": {"seq": 0, "data": {"value": 0, "recent": []}}})
    update = line({"jsonrpc": "2.0", "method": "tick/update",
                   "params": {"seq": 1, "data": {"value": 1, "recent": [{"seq": 1, "value": 1}]},
                              "at": "2026-01-01T00:00:00Z"}})
    answers = line({"jsonrpc": "2.0", "id": 3, "result": {"seq": 1, "data": {"value": 1}}}) + line(
        {"jsonrpc": "2.0", "id": 4, "result": {"value": 2}}) + line(
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -32000, "message": "failed", "data": {"executed": True}}})
    # [chunk size - 1, request plan] + stdout
    put("tick_stdout", "init", bytes([255, 0]) + init.encode())
    put("tick_stdout", "init-update-answers", bytes([63, 0b0000_0110]) + (init + update + answers).encode())
    put("tick_stdout", "small-chunks", bytes([6, 0b1111_1111]) + (init + update + answers).encode())
    put("tick_stdout", "violation", bytes([255, 2]) + (init + "this is not json {\n").encode())
    put("tick_stdout", "bad-descriptor", bytes([255, 0]) + line(
        {"jsonrpc": "2.0", "id": 1, "result": dict(COUNTER, protocol=2)}).encode())
    put("tick_stdout", "stray", bytes([31, 1]) + (
        init + line({"jsonrpc": "2.0", "id": 99, "result": 1}) + line({"jsonrpc": "2.0", "method": "tick/other"})
        + line({"jsonrpc": "2.0", "id": "3", "result": {}})).encode())


def attach_lines():
    snapshot = {"type": "snapshot", "cols": 4, "rows": 2,
                "cursor": {"x": 0, "y": 1, "visible": True},
                "alt_screen": False, "modes": {"bracketed_paste": True}, "title": "t",
                "lines": [{"runs": [{"text": "hi", "fg": 1, "bold": True}]}, {"runs": []}]}
    rows = {"type": "rows", "rows": [[1, {"runs": [{"text": "a", "bg": "#12abff"}]}]],
            "cursor": {"x": 1, "y": 1, "visible": True}, "alt_screen": False,
            "modes": {"bracketed_paste": True}, "title": "new"}
    outside = dict(rows, rows=[[7, {"runs": []}]])
    to_view = [snapshot, rows, outside, {"type": "resized", "cols": 120, "rows": 40},
               {"type": "ended", "reason": "exited"}, {"type": "bell"},
               {"type": "clipboard", "selection": True, "text": "copied"}]
    events = [
        {"event": "key", "key": {"char": "a"}},
        {"event": "key", "key": "page_up", "mods": {"shift": True}},
        {"event": "key", "key": {"f": 5}, "mods": {"ctrl": True, "super": True}},
        {"event": "paste", "text": "two\nlines"},
        {"event": "mouse", "x": 3, "y": 4, "kind": "press", "button": "wheel_up"},
        {"event": "focus", "focused": False},
        {"event": "resize", "cols": 120, "rows": 40},
        {"event": "scroll", "offset": 10},
        {"event": "colors", "fg": "#101010", "bg": "#ffffff", "palette": [[0, "#000000"], [1, "#cd0000"]]},
    ]
    put("attach_lines", "to-view", "".join(line(m) for m in to_view))
    put("attach_lines", "view-events", "".join(line(e) for e in events))
    put("attach_lines", "both", "".join(line(m) for m in to_view[:2]) + "".join(line(e) for e in events[:4]))


def pty_bytes():
    def chunks(data):
        out = b""
        while data:
            out += bytes([min(len(data), 127)]) + data[:127]
            data = data[127:]
        return out
    fragments = [
        b"\x1bPq#0;2;0;0;0#1~~@@vv@@~~$-\x1b\\", b"\x1b_Gf=24,s=1,v=1;AAAA\x1b\\",
        b"\x1b]1337;File=inline=1:AAAA\x07", b"\x1b]8;;http://example.invalid\x1b\\link\x1b]8;;\x1b\\",
        b"\x1b[?1049h", b"\x1b[?1049l", b"\x1b[2;5r", b"\x1b[r", b"\x1b[99;99H",
        b"\x1b[4:3m\x1b[58;2;1;2;3m", "漢字👍🏽❤️e\u0301".encode(), b"\x1b[?2026h", b"\x1b[?2026l",
        b"\x1b[5@\x1b[3P\x1b[2L\x1b[2M\x1b[10b", b"\x1b#8", b"\r\n", b"\x1b]0;title\x07",
        b"\x1b[6n\x1b[c\x1b]11;?\x07\x1b[14t",
    ]
    put("pty_bytes", "fragments", bytes([78, 23]) + chunks(b"".join(fragments)))
    put("pty_bytes", "lines-and-resize", bytes([38, 10]) + chunks(b"line\r\n" * 40)
        + bytes([0x80, 20, 5]) + chunks("wide 漢字 at the margin\r\n".encode() * 5))
    put("pty_bytes", "long-osc", bytes([78, 23]) + chunks(b"\x1b]52;c;" + b"QUFB" * 200 + b"\x07"))


def config_toml():
    put("config_toml", "full", """detach_key = "ctrl+a"
history = 5000
clipboard = false
approval_timeout_secs = 300
notify = true

[approval]
ask_in_host = false
agent_input = "ask"
agent_close = "deny"

[agents]
open = "packages"
""")
    put("config_toml", "empty", "")
    put("config_toml", "unknown-key", "detach = 'x'\n")


def mcp_lines():
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "fuzz", "version": "1"}}}
    put("mcp_lines", "session", line(initialize)
        + line({"jsonrpc": "2.0", "method": "notifications/initialized"})
        + line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        + line({"jsonrpc": "2.0", "id": "c", "method": "tools/call",
                "params": {"name": "TickRead", "arguments": {"instance": "counter"}}}))
    put("mcp_lines", "bad-lines", "not json\n[1,2]\n{\"jsonrpc\":\"1.0\",\"id\":3}\n"
        "{\"jsonrpc\":\"2.0\",\"id\":2.5,\"method\":\"x\"}\n\ufeff{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{}}\r\n"
        "   \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/nope\",\"params\":7}\n")


def herdr_answer():
    put("herdr_answer", "opened", line({"id": "cli:plugin", "result": {"type": "plugin_pane_opened", "plugin_pane": {
        "plugin_id": "tickloop", "entrypoint": "view",
        "pane": {"pane_id": "w1:p4", "workspace_id": "w1", "tab_id": "w1:t2"}}}}))
    put("herdr_answer", "pane-info", line({"id": "x", "result": {"pane": {
        "pane_id": "w1:p2", "workspace_id": "w1", "tab_id": "w1:t1", "focused": True}}}))
    put("herdr_answer", "error", line({"id": "cli:plugin", "error": {
        "code": "plugin_not_found", "message": "no plugin tickloop"}}))
    put("herdr_answer", "ok", line({"result": {"type": "ok"}}))


for make in (tick_stdout, attach_lines, pty_bytes, config_toml, mcp_lines, herdr_answer):
    make()
