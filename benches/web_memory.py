#!/usr/bin/env python3
"""tickloop web's memory over time with one page open on a Tick that prints
without pause (a shell looping `echo`): its resident set every 5 s for 30 s.
The page's terminal is a view like attach (benches/view_memory.sh): what the
server holds for it must not grow with what it drew.

  target/tmp/python-playwright-1.65.2/bin/python benches/web_memory.py target/release/tickloop
Needs /usr/bin/chromium and Playwright (the browser tests make the environment).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

LOOP = 'i=0; while :; do i=$((i+1)); echo "line $i the quick brown fox jumps over the lazy dog $i $i $i"; done'


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def main():
    tickloop = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/tickloop")
    runtime = tempfile.mkdtemp(prefix="tlwm", dir="/tmp")
    env = {**os.environ, "TICKLOOP_RUNTIME_DIR": runtime, "TERM": "xterm-256color"}
    web = None
    try:
        subprocess.run([tickloop, "open", "--shell", "--id", "busy", "--", "sh", "-c", LOOP],
                       env=env, check=True, capture_output=True)
        web = subprocess.Popen([tickloop, "web"], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True)
        started = json.loads(web.stdout.readline())
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.goto(started["login_url"])
            page.wait_for_selector("#list tbody tr")
            page.evaluate("() => { location.hash = 'shell:busy'; }")
            page.wait_for_selector(".xterm-rows")
            print(f"tickloop web with a page on a busy Tick, {time.strftime('%Y-%m-%d %H:%M')}, "
                  f"load {os.getloadavg()[0]:.2f}")
            print(f"{'seconds':>7} {'tickloop web, KiB':>18}")
            for seconds in range(0, 31, 5):
                print(f"{seconds:>7} {rss_kib(web.pid):>18}")
                if seconds < 30:
                    time.sleep(5)
            browser.close()
    finally:
        if web:
            web.kill()
        subprocess.run([tickloop, "shutdown"], env=env, capture_output=True)
        shutil.rmtree(runtime, ignore_errors=True)


main()
