#!/usr/bin/env python3
"""tickloop web (issue 41): keystroke echo through the page, next to
`tickloop attach`, tmux and the raw PTY, in one run; and what open pages
cost tickhost.

Echo: a `cat` running in a PTY echoes each key the moment it is typed.
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

Memory: tickhost's resident set (VmRSS) with no page open, then with 20
pages open, each showing the list and the counter's live terminal, state and
activity (the pages are logged in with one session).

Run (Playwright from PyPI; the browser tests make this environment):
  cargo build --release && cargo test --test web   # makes target/tmp/python-playwright-*
  target/tmp/python-playwright-1.65.2/bin/python benches/web_echo.py \
      --bin target/release/tickloop [-n 200] [--pages 20]
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


def pty_echo(argv, env, n, ready):
    """The ms from writing each key to CMD's pty until it shows."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.clear()
        os.environ.update(env)
        os.execvp(argv[0], argv)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    try:
        if ready:
            read_until(fd, ready, 20)
        else:
            time.sleep(0.3)
        samples = []
        for i in range(n):
            key = KEYS[i % len(KEYS)].encode()
            if i % 40 == 39:
                os.write(fd, b"\r")
                time.sleep(0.1)
                while select.select([fd], [], [], 0.05)[0]:
                    os.read(fd, 65536)
            t = time.perf_counter()
            os.write(fd, key)
            read_until(fd, lambda b: key in ESCAPES.sub(b"", b))
            samples.append((time.perf_counter() - t) * 1000)
            time.sleep(0.01)
        return samples
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


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
      if (typeof e.data !== 'string' && window.__expectKey) {
        if (new TextDecoder().decode(e.data).includes(window.__expectKey)) {
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


def page_echo(page, n):
    page.evaluate(MEASURE_JS)
    page.focus(".xterm-helper-textarea")
    typed = ""
    for i in range(n):
        if i % 40 == 39:
            page.keyboard.press("Enter")
            typed = ""
            page.wait_for_timeout(50)
        key = KEYS[i % len(KEYS)]
        typed += key
        page.evaluate(f"() => {{ window.__expect = {json.dumps(typed[-6:])}; window.__expectKey = {json.dumps(key)}; }}")
        page.keyboard.press(key)
        page.wait_for_function(f"() => window.__samples.length === {i + 1}", polling="raf", timeout=10000)
        page.wait_for_timeout(10)
    return page.evaluate("() => window.__samples"), page.evaluate("() => window.__wsSamples")


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
    ap.add_argument("-n", type=int, default=200)
    ap.add_argument("--pages", type=int, default=20)
    a = ap.parse_args()
    tickloop = os.path.abspath(a.bin)
    runtime = tempfile.mkdtemp(prefix="tlwb", dir="/tmp")
    env = {**os.environ, "TICKLOOP_RUNTIME_DIR": runtime, "TERM": "xterm-256color"}
    tmux_sock = f"tlwb-{os.getpid()}"
    web = None
    try:
        run = lambda *args: subprocess.run([tickloop, *args], env=env, check=True, capture_output=True, text=True)
        run("open", "--shell", "--id", "cat", "--", "cat")
        run("open", "--package", "counter", "--id", "counter")
        web = subprocess.Popen([tickloop, "web"], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        started = json.loads(web.stdout.readline())
        results = []

        results.append(stats("raw PTY (cat)", pty_echo(["cat"], env, a.n, None)))
        subprocess.run(["tmux", "-L", tmux_sock, "-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "30", "cat"], env=env, check=True)
        results.append(stats("tmux attach (cat)", pty_echo(
            ["tmux", "-L", tmux_sock, "attach"], env, a.n, lambda b: len(b) > 0)))
        results.append(stats("tickloop attach (shell:cat)", pty_echo(
            [tickloop, "attach", "shell:cat"], env, a.n, lambda b: len(b) > 100)))

        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1200, "height": 800})
            context.add_init_script(WS_TAP_JS)
            page = context.new_page()
            page.goto(started["login_url"])
            page.wait_for_selector("#list tbody tr")
            page.evaluate("() => { location.hash = 'shell:cat'; }")
            page.wait_for_selector(".xterm-rows")
            page.wait_for_timeout(500)
            glyph, bytes_in = page_echo(page, a.n)
            results.append(stats("tickloop web page, bytes (shell:cat)", bytes_in))
            results.append(stats("tickloop web page (shell:cat)", glyph))
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
        print(f"{'path':34} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8}")
        for r in results:
            print(f"{r['name']:34} {r['p50']:8.2f} {r['p90']:8.2f} {r['p99']:8.2f}")
        by = {r["name"].split(" (")[0]: r for r in results}
        page_r, attach_r = by["tickloop web page"], by["tickloop attach"]
        bytes_r = by["tickloop web page, bytes"]
        print(f"page (glyph) / attach p50: {page_r['p50'] / attach_r['p50']:.2f}   "
              f"page (bytes) / attach p50: {bytes_r['p50'] / attach_r['p50']:.2f}   "
              f"page (glyph) / tmux p50: {page_r['p50'] / by['tmux attach']['p50']:.2f}")
        print(f"tickhost VmRSS: {before} KiB with no page, {after} KiB with {a.pages} pages open "
              f"(+{after - before} KiB); tickloop web itself: {web_rss} KiB")
    finally:
        subprocess.run(["tmux", "-L", tmux_sock, "kill-server"], capture_output=True)
        if web:
            web.kill()
        subprocess.run([tickloop, "shutdown"], env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)


main()
