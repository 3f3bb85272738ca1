#!/usr/bin/env python3
"""A scripted stand-in for the Anthropic Messages API, for Tickloop's tests
of the real Claude Code CLI (tests/claude_code.rs). Loopback only.

Claude Code makes `HEAD /` and streaming `POST /v1/messages` requests. This
server answers each POST with the next scripted reply, streamed as the
Messages API's server-sent events, and records every request body, one JSON
line each, so a test can assert what the model saw.

    fake_messages_api.py --script SCRIPT.json --log REQUESTS.jsonl --port-file PORT

SCRIPT.json is {"replies": [REPLY, ...], "default": REPLY}. A REPLY is one of
  {"text": "..."}                              an assistant text turn
  {"tool_use": {"name": "...", "input": {}}}   one tool call (stop_reason tool_use)
  {"error": 500}                               an HTTP error answer (overloaded_error)
  {"hang": true}                               start the stream and never finish it
Any reply may carry "after_file": PATH: it is sent once that file exists.
Replies are served in order to requests that carry tools (the agent's main
turns); other requests (titles, summaries) and requests after the script is
used up get "default" (a short text). The script file is read again for each
request, so a test may append replies while the CLI runs.

The log has one line per request, HEAD and GET included: {"n", "method",
"path", "served", "body"}, written before the reply is sent.
"""

import argparse
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATE = {"next": 0, "n": 0}


def load_script(path):
    with open(path, encoding="utf-8") as f:
        script = json.load(f)
    return script.get("replies", []), script.get("default", {"text": "ok"})


def sse(event, data):
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-messages-api/1"

    def log_message(self, fmt, *args):  # keep stderr for real problems
        pass

    def record(self, entry):
        with LOCK:
            STATE["n"] += 1
            entry["n"] = STATE["n"]
            with open(self.server.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")

    def do_HEAD(self):
        self.record({"method": "HEAD", "path": self.path, "served": None, "body": None})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        self.record({"method": "GET", "path": self.path, "served": None, "body": None})
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        main_turn = bool(body.get("tools")) if isinstance(body, dict) else False
        replies, default = load_script(self.server.script)
        with LOCK:
            STATE["n"] += 1
            n = STATE["n"]
            if main_turn and STATE["next"] < len(replies):
                reply = replies[STATE["next"]]
                served = STATE["next"]
                STATE["next"] += 1
            else:
                reply = default
                served = None
            with open(self.server.log, "a", encoding="utf-8") as log:
                log.write(json.dumps({"n": n, "method": "POST", "path": self.path, "served": served, "body": body}) + "\n")
        gate = reply.get("after_file")
        while gate and not os.path.exists(gate):
            time.sleep(0.02)
        if "error" in reply:
            self.error(int(reply["error"]))
            return
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            payload = json.dumps({"input_tokens": 10}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        self.stream(body, reply, n)

    def error(self, code):
        payload = json.dumps({"type": "error", "error": {"type": "overloaded_error", "message": "scripted error"}}).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("x-should-retry", "false")
        self.end_headers()
        self.wfile.write(payload)

    def stream(self, body, reply, n):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        model = body.get("model", "claude-scripted") if isinstance(body, dict) else "claude-scripted"
        msg_id = f"msg_scripted_{n}"
        out = [sse("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}})]
        if reply.get("hang"):
            out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "text", "text": ""}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "text_delta", "text": "working"}}))
            self.wfile.write(b"".join(out))
            self.wfile.flush()
            while True:  # until the client goes away
                time.sleep(0.2)
                try:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                except OSError:
                    return
        if "tool_use" in reply:
            tool = reply["tool_use"]
            out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "tool_use", "id": f"toolu_scripted_{n}",
                                                                      "name": tool["name"], "input": {}}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "input_json_delta",
                                                              "partial_json": json.dumps(tool.get("input", {}))}}))
            stop_reason = "tool_use"
        else:
            out.append(sse("content_block_start", {"type": "content_block_start", "index": 0,
                                                    "content_block": {"type": "text", "text": ""}}))
            out.append(sse("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                    "delta": {"type": "text_delta", "text": reply.get("text", "ok")}}))
            stop_reason = "end_turn"
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
        out.append(sse("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                          "usage": {"output_tokens": 5}}))
        out.append(sse("message_stop", {"type": "message_stop"}))
        self.wfile.write(b"".join(out))
        self.wfile.flush()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.script = args.script
    server.log = args.log
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    sys.exit(0)


if __name__ == "__main__":
    main()
