#!/usr/bin/env python3
"""A scripted stand-in for three model APIs, for Tickloop's tests of the real
Codex CLI, Gemini CLI and opencode (tests/codex.rs, tests/gemini.rs,
tests/opencode.rs). Loopback only.

    fake_model_api.py --dialect responses|gemini|chat --script SCRIPT.json \
        --log REQUESTS.jsonl --port-file PORT

Dialects:
  responses  OpenAI Responses API, `POST .../responses`, as SSE (Codex)
  gemini     `POST /v1beta/models/M:streamGenerateContent?alt=sse` (Gemini CLI);
             `:generateContent` answered as one JSON, `:countTokens` too
  chat       OpenAI chat completions, `POST .../chat/completions`, as SSE
             (opencode)

SCRIPT.json is {"replies": [REPLY, ...], "default": REPLY}. A REPLY is one of
  {"text": "..."}                              an assistant text turn
  {"call": {"name": "...", "args": {}, "namespace": "..."}}
                                               one tool call (namespace: Responses only)
Any reply may carry "after_file": PATH: it is sent once that file exists.
Replies are served in order to requests that carry tools (the agent's main
turns); other requests (titles, checks) and requests after the script is
used up get "default". The script file is read again for each request.

The log has one line per request: {"n", "method", "path", "served", "body"},
written before the reply is sent.
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
USAGE = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
         "input_tokens_details": {"cached_tokens": 0},
         "output_tokens_details": {"reasoning_tokens": 0}}


def load_script(path):
    with open(path, encoding="utf-8") as f:
        script = json.load(f)
    return script.get("replies", []), script.get("default", {"text": "ok"})


def has_tools(body):
    if not isinstance(body, dict):
        return False
    tools = body.get("tools")
    return bool(tools)


def responses_events(reply, n):
    """The Responses API's SSE events for one reply."""
    out = []

    def ev(kind, data):
        data = dict(data, type=kind)
        out.append(f"event: {kind}\ndata: {json.dumps(data)}\n\n")

    resp = {"id": f"resp_{n}", "object": "response", "status": "in_progress", "output": []}
    ev("response.created", {"response": resp})
    if "call" in reply:
        call = reply["call"]
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                "name": call["name"], "arguments": json.dumps(call.get("args", {})),
                "status": "completed"}
        if call.get("namespace"):
            item["namespace"] = call["namespace"]
        ev("response.output_item.added", {"output_index": 0, "item": dict(item, arguments="", status="in_progress")})
        ev("response.output_item.done", {"output_index": 0, "item": item})
    else:
        text = reply.get("text", "ok")
        mid = f"msg_{n}"
        ev("response.output_item.added", {"output_index": 0, "item": {
            "type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}})
        ev("response.content_part.added", {"item_id": mid, "output_index": 0, "content_index": 0,
                                           "part": {"type": "output_text", "text": "", "annotations": []}})
        ev("response.output_text.delta", {"item_id": mid, "output_index": 0, "content_index": 0, "delta": text})
        ev("response.output_text.done", {"item_id": mid, "output_index": 0, "content_index": 0, "text": text})
        item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}
        ev("response.output_item.done", {"output_index": 0, "item": item})
    ev("response.completed", {"response": dict(resp, status="completed", output=[item], usage=USAGE)})
    return "".join(out).encode()


def gemini_candidate(reply):
    if "call" in reply:
        call = reply["call"]
        part = {"functionCall": {"name": call["name"], "args": call.get("args", {})}}
    else:
        part = {"text": reply.get("text", "ok")}
    return {"candidates": [{"content": {"role": "model", "parts": [part]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}


def chat_events(reply, n, model):
    base = {"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": model}
    out = []

    def chunk(delta, finish=None, usage=None):
        c = dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
        if usage:
            c["usage"] = usage
        out.append(f"data: {json.dumps(c)}\n\n")

    if "call" in reply:
        call = reply["call"]
        chunk({"role": "assistant", "content": None, "tool_calls": [{
            "index": 0, "id": f"call_{n}", "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("args", {}))}}]})
        chunk({}, "tool_calls", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    else:
        chunk({"role": "assistant", "content": reply.get("text", "ok")})
        chunk({}, "stop", {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
    out.append("data: [DONE]\n\n")
    return "".join(out).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-model-api/1"

    def log_message(self, fmt, *args):
        pass

    def record(self, entry):
        with LOCK:
            STATE["n"] += 1
            entry["n"] = STATE["n"]
            with open(self.server.log, "a", encoding="utf-8") as log:
                log.write(json.dumps(entry) + "\n")

    def send_json(self, value, code=200):
        payload = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        self.record({"method": "GET", "path": self.path, "served": None, "body": None})
        self.send_json({"data": [], "models": []})

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        dialect = self.server.dialect
        main_turn = has_tools(body) and not self.path.endswith(":countTokens")
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
                log.write(json.dumps({"n": n, "method": "POST", "path": self.path,
                                      "served": served, "body": body}) + "\n")
        gate = reply.get("after_file")
        while gate and not os.path.exists(gate):
            time.sleep(0.02)
        if dialect == "gemini":
            if ":countTokens" in self.path:
                self.send_json({"totalTokens": 10})
            elif ":streamGenerateContent" in self.path:
                self.stream(f"data: {json.dumps(gemini_candidate(reply))}\n\n".encode())
            else:
                self.send_json(gemini_candidate(reply))
        elif dialect == "responses":
            self.stream(responses_events(reply, n))
        else:
            model = body.get("model", "fake-model") if isinstance(body, dict) else "fake-model"
            self.stream(chat_events(reply, n, model))

    def stream(self, payload):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()
        self.close_connection = True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dialect", required=True, choices=["responses", "gemini", "chat"])
    p.add_argument("--script", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--port-file", required=True)
    args = p.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.dialect = args.dialect
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
