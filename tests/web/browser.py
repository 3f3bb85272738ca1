#!/usr/bin/env python3
# A real Chromium (Debian's, /usr/bin/chromium) driven by Playwright (PyPI
# `playwright`, which cannot download its own browsers here), for
# tests/web.rs. It reads one JSON command a line on stdin and answers one
# JSON line on stdout: {"ok": true, "value": ...} or {"ok": false, "error"}.
#
#   {"op": "goto", "url": U}                  the page's status and URL
#   {"op": "wait", "js": "() => ...", "ms": N} until the function is truthy; its value
#   {"op": "eval", "js": "() => ..."}         the function's value (may be async)
#   {"op": "click", "selector": S}
#   {"op": "press", "key": K}                 a key press in the focused element
#   {"op": "focus", "selector": S}
#   {"op": "cookies"}                         the browser's cookies
#   {"op": "serve", "html": H}                serves H at http://127.0.0.1:PORT/ (another site)
#   {"op": "frames"}                          the URLs of the page's frames
#   {"op": "console"}                         what the page logged
#   {"op": "quit"}
#
# Usage: browser.py CHROMIUM [--ignore-certificate-errors]
import http.server
import json
import sys
import threading

from playwright.sync_api import sync_playwright

CHROMIUM = sys.argv[1]
EXTRA = sys.argv[2:]
# As the machine's notes say: without the background-networking flags
# Chromium tries the closed network many times at start.
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
] + EXTRA


def serve(html):
    body = html.encode()

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def main():
    logged = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1200, "height": 800})
        page = context.new_page()
        page.on("console", lambda m: logged.append(m.text))
        page.on("dialog", lambda d: d.accept())
        for line in sys.stdin:
            if not line.strip():
                continue
            c = json.loads(line)
            op = c["op"]
            try:
                if op == "goto":
                    r = page.goto(c["url"])
                    value = {"status": r.status if r else None, "url": page.url}
                elif op == "wait":
                    value = page.wait_for_function(c["js"], timeout=c.get("ms", 20000)).json_value()
                elif op == "eval":
                    value = page.evaluate(c["js"])
                elif op == "click":
                    page.click(c["selector"])
                    value = None
                elif op == "focus":
                    page.focus(c["selector"])
                    value = None
                elif op == "press":
                    page.keyboard.press(c["key"])
                    value = None
                elif op == "cookies":
                    value = context.cookies()
                elif op == "serve":
                    value = serve(c["html"])
                elif op == "frames":
                    value = [f.url for f in page.frames]
                elif op == "console":
                    value = logged
                elif op == "quit":
                    print(json.dumps({"ok": True, "value": None}), flush=True)
                    break
                else:
                    raise ValueError(f"unknown op {op}")
                print(json.dumps({"ok": True, "value": value}), flush=True)
            except Exception as e:  # the test reads the reason
                print(json.dumps({"ok": False, "error": f"{type(e).__name__}: {e}"}), flush=True)
        browser.close()


main()
