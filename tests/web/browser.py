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
#   {"op": "type", "text": T}                 T typed, key by key, in the focused element
#   {"op": "viewport", "width": W, "height": H}  the page's size, changed
#   {"op": "context", "width": W, "height": H, "scale": S}
#                                             a new page of that size and pixel density, with
#                                             this one's cookies, at this one's URL
#   {"op": "screenshot", "path": P}           the page as the person sees it, saved as PNG
#   {"op": "ink", "clip": {x, y, width, height}}
#                                             of the pixels drawn in that part of the page,
#                                             how many stand out from its background:
#                                             {"ink": N, "pixels": M}
#   {"op": "quit"}
#
# Usage: browser.py CHROMIUM [--ignore-certificate-errors]
import http.server
import json
import struct
import sys
import threading
import zlib

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


def png_pixels(data):
    """The RGB pixels of a PNG as Chromium writes it (8-bit RGB or RGBA,
    not interlaced), a list of rows."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height, bpp = 8, b"", 0, 0, 0
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + size]
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or color not in (2, 6) or interlace != 0:
                raise ValueError(f"a PNG of depth {depth}, colour type {color}, interlace {interlace}")
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + size
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev, at = [], bytearray(stride), 0
    for _ in range(height):
        kind, line = raw[at], bytearray(raw[at + 1:at + 1 + stride])
        at += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return rows


def ink(png):
    """How many pixels differ from the most common one (the background) by
    more than a quarter of the range in some channel, and how many there are."""
    pixels = [p for row in png_pixels(png) for p in row]
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    background = max(counts, key=counts.get)
    drawn = sum(1 for p in pixels if max(abs(a - b) for a, b in zip(p, background)) > 64)
    return {"ink": drawn, "pixels": len(pixels)}


def main():
    logged = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        def new_page(context):
            page = context.new_page()
            page.on("console", lambda m: logged.append(m.text))
            page.on("dialog", lambda d: d.accept())
            return page

        context = browser.new_context(viewport={"width": 1200, "height": 800})
        page = new_page(context)
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
                elif op == "type":
                    page.keyboard.type(c["text"])
                    value = None
                elif op == "viewport":
                    page.set_viewport_size({"width": c["width"], "height": c["height"]})
                    value = None
                elif op == "context":
                    url, state = page.url, context.storage_state()
                    context.close()
                    context = browser.new_context(
                        viewport={"width": c["width"], "height": c["height"]},
                        device_scale_factor=c["scale"],
                        storage_state=state,
                    )
                    page = new_page(context)
                    r = page.goto(url)
                    value = {"status": r.status if r else None, "url": page.url}
                elif op == "screenshot":
                    page.screenshot(path=c["path"])
                    value = c["path"]
                elif op == "ink":
                    value = ink(page.screenshot(clip=c["clip"]))
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
