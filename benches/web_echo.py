#!/usr/bin/env python3
"""tickloop web (issue 41): keystroke echo through the page, next to
`tickloop attach`, tmux and the raw PTY, in one run; and what open pages
cost tickhost.

Echo: a `cat` running in a PTY echoes each key the moment it is typed. The
paths take turns, 20 keys at a time, so that each sees the machine as the
others do (a run on a shared machine drifts).
  * raw PTY      cat on a pty of this script: write a key, read it back;
  * tmux         `tmux attach` (on a pty of this script) of a session running
                 cat: write a key, read it back from the attach client;
  * attach       `tickloop attach shell:cat` on a pty of this script;
  * page         tickloop web's page in Debian's Chromium (Playwright): the
                 time from the key's `keydown` event to the glyph in the
                 terminal's DOM (xterm.js's DOM renderer, a MutationObserver
                 on its rows), measured inside the page with
                 performance.now(); Playwright only presses the keys;
  * page, bytes  the same keys, to the moment the terminal's bytes carrying
                 the key reach the page (its WebSocket's message event),
                 before xterm.js draws them on the next animation frame: the
                 measure that compares with attach's (bytes on its pty).
  * attach in tmux  `tickloop attach shell:cat` inside a tmux session, timed
                 on the pty of a `tmux attach` client: the key goes through
                 tmux to attach and back, and shows once tmux has drawn it
                 for its client (the issue's "attach in tmux").
  * browser floor  the raw limit of a page: the same Chromium and the same
                 xterm.js, on a page whose WebSocket goes to a server that
                 only echoes (benches/web-stack, hyper + tungstenite, the
                 stack tickloop web is built on); bytes and glyph measured
                 as for the page. What the page costs beyond it is
                 tickloop's; the rest is the browser's.

Memory: tickhost's resident set (VmRSS) with no page open, then with 20
pages open, each showing the list and the counter's live terminal, state and
activity (the pages are logged in with one session).

Run (Playwright from PyPI; the browser tests make this environment):
  cargo build --release && cargo test --test web   # makes target/tmp/python-playwright-*
  cargo build --release --features hyper --manifest-path benches/web-stack/Cargo.toml
  target/tmp/python-playwright-1.65.2/bin/python benches/web_echo.py \
      --bin target/release/tickloop [-n 400] [--pages 20]
Needs tmux and /usr/bin/chromium.
"""
import argparse
import fcntl
import json
import os
import pty
import re
import select
import shutil
import statistics
import struct
import subprocess
import tempfile
import termios
import time

from playwright.sync_api import sync_playwright

ESCAPES = re.compile(rb"\x1b\[[0-9;?<>= ]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78MDEc]")
KEYS = "abcdefghijklmnopqrstuvwxyz"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def read_until(fd, pred, limit=10.0):
    buf = b""
    deadline = time.time() + limit
    while time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            buf += chunk
            if pred(buf):
                return buf
    raise TimeoutError(f"never saw it: {buf[-200:]!r}")


class PtyTypist:
    """CMD on a pty of this script: each key written, timed until it shows."""

    def __init__(self, argv, env, ready):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.environ.clear()
            os.environ.update(env)
            os.execvp(argv[0], argv)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
        if ready:
            read_until(self.fd, ready, 20)
        else:
            time.sleep(0.3)
        self.typed = 0
        self.samples = []

    def drain(self):
        while select.select([self.fd], [], [], 0.05)[0]:
            os.read(self.fd, 65536)

    def block(self, n):
        self.drain()
        for _ in range(n):
            i = self.typed
            self.typed += 1
            key = KEYS[i % len(KEYS)].encode()
            if i % 40 == 39:
                os.write(self.fd, b"\r")
                time.sleep(0.1)
                self.drain()
            t = time.perf_counter()
            os.write(self.fd, key)
            read_until(self.fd, lambda b: key in ESCAPES.sub(b"", b))
            self.samples.append((time.perf_counter() - t) * 1000)
            time.sleep(0.01)

    def close(self):
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)


# Before the page's own scripts: every WebSocket of the page also notes
# when a binary message (the terminal's bytes) carrying the awaited key
# arrives, before xterm.js draws it.
WS_TAP_JS = """
(() => {
  const Orig = window.WebSocket;
  window.__wsSamples = [];
  window.WebSocket = function (url, protocols) {
    const ws = new Orig(url, protocols);
    ws.addEventListener('message', (e) => {
      // The page's terminal bytes are binary; the floor's echo is text.
      const text = typeof e.data === 'string' ? (window.__tapText ? e.data : null)
                                              : new TextDecoder().decode(e.data);
      if (text !== null && window.__expectKey) {
        if (text.includes(window.__expectKey)) {
          window.__wsSamples.push(performance.now() - window.__t0);
          window.__expectKey = null;
        }
      }
    });
    return ws;
  };
  window.WebSocket.prototype = Orig.prototype;
  for (const k of ['CONNECTING', 'OPEN', 'CLOSING', 'CLOSED']) window.WebSocket[k] = Orig[k];
})();
"""

MEASURE_JS = """
() => {
  window.__samples = [];
  window.__expect = null;
  const rows = document.querySelector('.xterm-rows');
  document.addEventListener('keydown', () => { window.__t0 = performance.now(); }, true);
  new MutationObserver(() => {
    if (window.__expect && rows.innerText.includes(window.__expect)) {
      window.__samples.push(performance.now() - window.__t0);
      window.__expect = null;
    }
  }).observe(rows, {childList: true, subtree: true, characterData: true});
}
"""


# The browser floor's page: xterm.js (the vendored release tickloop web
# embeds) typing into a WebSocket that a bare server echoes, the echo
# written back into the terminal as the page writes the launcher's bytes.
FLOOR_JS = """
() => new Promise((ready) => {
  const term = new Terminal({scrollback: 0, cursorBlink: false});
  term.open(document.getElementById('terminal'));
  window.__tapText = true;
  const ws = new WebSocket('ws://' + location.host + '/');
  ws.binaryType = 'arraybuffer';
  term.onData((data) => ws.send(JSON.stringify({type: 'input', data})));
  // Enter comes back as a new line, as a tty's echo makes it.
  ws.onmessage = (e) => term.write(new TextEncoder().encode(JSON.parse(e.data).data.replace(/\\r/g, '\\r\\n')));
  ws.onopen = () => { term.focus(); ready(); };
})
"""
VENDOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "web", "vendor", "xterm")


def floor_page(context, addr):
    """The browser floor's page, on the echo server at ADDR."""
    page = context.new_page()
    page.goto(f"http://{addr}/")
    page.set_content("<div id=terminal style='width:1100px;height:600px'></div>")
    page.add_style_tag(path=os.path.join(VENDOR, "xterm.css"))
    page.add_script_tag(path=os.path.join(VENDOR, "xterm.js"))
    page.evaluate(FLOOR_JS)
    page.wait_for_timeout(500)
    return page


class PageTypist:
    """A page's terminal: each key pressed (Playwright), timed in the page
    to its glyph in the DOM and to its bytes on the WebSocket."""

    def __init__(self, page):
        self.page = page
        page.evaluate(MEASURE_JS)
        self.typed = 0
        self.line = ""

    def block(self, n):
        page = self.page
        page.bring_to_front()
        page.focus(".xterm-helper-textarea")
        for _ in range(n):
            i = self.typed
            self.typed += 1
            if i % 40 == 39:
                page.keyboard.press("Enter")
                self.line = ""
                page.wait_for_timeout(50)
            key = KEYS[i % len(KEYS)]
            self.line += key
            page.evaluate(f"() => {{ window.__expect = {json.dumps(self.line[-6:])}; window.__expectKey = {json.dumps(key)}; }}")
            page.keyboard.press(key)
            page.wait_for_function(f"() => window.__samples.length === {i + 1}", polling="raf", timeout=10000)
            page.wait_for_timeout(10)

    def samples(self):
        """(glyph, bytes) samples, ms."""
        return self.page.evaluate("() => window.__samples"), self.page.evaluate("() => window.__wsSamples")


def interleave(typists, n, block=20):
    """N keys on each typist, BLOCK at a time in turn, so that each path
    sees the machine as the others do."""
    for start in range(0, n, block):
        for typist in typists:
            typist.block(min(block, n - start))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def stats(name, samples):
    s = sorted(samples)
    p = lambda q: s[min(len(s) - 1, int(q * len(s)))]
    return {"name": name, "n": len(s), "p50": statistics.median(s), "p90": p(0.9), "p99": p(0.99)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release/tickloop")
    ap.add_argument("-n", type=int, default=400)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--floor-server", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "web-stack", "target", "release", "web-stack-size"),
        help="benches/web-stack built with --features hyper: a server that only echoes")
    a = ap.parse_args()
    tickloop = os.path.abspath(a.bin)
    if not os.access(a.floor_server, os.X_OK):
        raise SystemExit(f"no echo server at {a.floor_server} for the browser floor: build it with "
                         "`cargo build --release --features hyper --manifest-path benches/web-stack/Cargo.toml`")
    runtime = tempfile.mkdtemp(prefix="tlwb", dir="/tmp")
    env = {**os.environ, "TICKLOOP_RUNTIME_DIR": runtime, "TERM": "xterm-256color"}
    tmux_sock = f"tlwb-{os.getpid()}"
    web = None
    floor = None
    try:
        run = lambda *args: subprocess.run([tickloop, *args], env=env, check=True, capture_output=True, text=True)
        # A cat of its own for each tickloop path, so no view resizes
        # another's and no echo shows in another's screen.
        for name in ("cat", "cat-tmux", "cat-page"):
            run("open", "--shell", "--id", name, "--", "cat")
        run("open", "--package", "counter", "--id", "counter")
        web = subprocess.Popen([tickloop, "web"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        started = json.loads(web.stdout.readline())
        floor = subprocess.Popen([a.floor_server], stdout=subprocess.PIPE, text=True)
        floor_addr = floor.stdout.readline().strip()
        tmux = ["tmux", "-L", tmux_sock, "-f", "/dev/null"]
        subprocess.run([*tmux, "new-session", "-d", "-s", "cat", "-x", "120", "-y", "30", "cat"], env=env, check=True)
        subprocess.run([*tmux, "new-session", "-d", "-s", "attach", "-x", "120", "-y", "30",
                        tickloop, "attach", "shell:cat-tmux"], env=env, check=True)

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1200, "height": 800})
            context.add_init_script(WS_TAP_JS)
            page = context.new_page()
            page.goto(started["login_url"])
            page.wait_for_selector("#list tbody tr")
            page.evaluate("() => { location.hash = 'shell:cat-page'; }")
            page.wait_for_selector(".xterm-rows")
            page.wait_for_timeout(500)
            typists = {
                "raw PTY (cat)": PtyTypist(["cat"], env, None),
                "tmux attach (cat)": PtyTypist([*tmux, "attach", "-t", "cat"], env, lambda b: len(b) > 0),
                "tickloop attach (shell:cat)": PtyTypist(
                    [tickloop, "attach", "shell:cat"], env, lambda b: len(b) > 100),
                "tickloop attach in tmux (shell:cat-tmux)": PtyTypist(
                    [*tmux, "attach", "-t", "attach"], env, lambda b: b"shell:cat" in b or len(b) > 400),
                "browser floor (echo server)": PageTypist(floor_page(context, floor_addr)),
                "tickloop web page (shell:cat-page)": PageTypist(page),
            }
            interleave(list(typists.values()), a.n)
            results = []
            for name, typist in typists.items():
                if isinstance(typist, PtyTypist):
                    results.append(stats(name, typist.samples))
                    typist.close()
                else:
                    glyph, bytes_in = typist.samples()
                    kind, _, what = name.partition(" (")
                    results.append(stats(f"{kind}, bytes ({what}", bytes_in))
                    results.append(stats(name, glyph))
            floor.kill()
            page.evaluate("() => { location.hash = ''; }")

            # Memory: tickhost with no page, then with the pages open.
            tickhost = int(open(f"{runtime}/tickhost.pid").read().split()[0])
            page.close()
            time.sleep(3)
            before = rss_kib(tickhost)
            pages = []
            for _ in range(a.pages):
                pg = context.new_page()
                pg.goto(started["url"] + "#hosted:counter")
                pg.wait_for_selector(".xterm-rows")
                pg.wait_for_function("() => document.querySelector('#tab-state').textContent.includes('value')", polling="raf")
                pages.append(pg)
            time.sleep(5)
            after = rss_kib(tickhost)
            web_rss = rss_kib(web.pid)
            browser.close()

        print(f"tickloop web echo bench, n={a.n}, {time.strftime('%Y-%m-%d %H:%M')}, load {os.getloadavg()[0]:.2f}")
        print(f"{'path':42} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
        for r in results:
            print(f"{r['name']:42} {r['p50']:8.2f} {r['p90']:8.2f} {r['p99']:8.2f}")
        by = {r["name"].split(" (")[0]: r for r in results}
        page_r, attach_r = by["tickloop web page"], by["tickloop attach"]
        bytes_r = by["tickloop web page, bytes"]
        print(f"page (glyph) / attach p50: {page_r['p50'] / attach_r['p50']:.2f}   "
              f"page (bytes) / attach p50: {bytes_r['p50'] / attach_r['p50']:.2f}   "
              f"page (glyph) / tmux p50: {page_r['p50'] / by['tmux attach']['p50']:.2f}")
        floor_r, raw_r = by["browser floor"], by["raw PTY"]
        print(f"page (glyph) / attach in tmux p50: {page_r['p50'] / by['tickloop attach in tmux']['p50']:.2f}   "
              f"browser floor (glyph) / attach p50: {floor_r['p50'] / attach_r['p50']:.2f}")
        print(f"beyond the raw limit, p50: page {page_r['p50'] - floor_r['p50']:.2f} ms over the browser floor, "
              f"attach {attach_r['p50'] - raw_r['p50']:.2f} ms over the raw PTY: "
              f"{(page_r['p50'] - floor_r['p50']) / (attach_r['p50'] - raw_r['p50']):.2f}x; "
              f"bytes {bytes_r['p50'] - by['browser floor, bytes']['p50']:.2f} ms over the floor's: "
              f"{(bytes_r['p50'] - by['browser floor, bytes']['p50']) / (attach_r['p50'] - raw_r['p50']):.2f}x")
        print(f"tickhost VmRSS: {before} KiB with no page, {after} KiB with {a.pages} pages open "
              f"(+{after - before} KiB); tickloop web itself: {web_rss} KiB")
    finally:
        subprocess.run(["tmux", "-L", tmux_sock, "kill-server"], capture_output=True)
        if web:
            web.kill()
        if floor:
            floor.kill()
        subprocess.run([tickloop, "shutdown"], env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)


main()
