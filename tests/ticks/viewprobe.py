#!/usr/bin/env python3
"""View probe: a plain terminal program (open it with --shell) for the view tests.

Standard library only. Usage: viewprobe.py LOG [--flood]

* Puts its terminal in raw mode, turns bracketed paste on (CSI ?2004h) and
  draws a fixed screen: row 1 has colours (16, 256, truecolor), bold and
  underline, wide and combining characters; row 2 says `size COLSxROWS`,
  redrawn on SIGWINCH; row 3 says `ready`.
* Every read from its terminal is appended to LOG as `in HEX`, every size it
  draws as `size COLSxROWS`; row 4 shows the last read as `last HEX`.
* With --flood, a thread rewrites row 6 with a counter continuously.
"""
import os
import signal
import sys
import threading
import time
import tty

LOG = sys.argv[1]
FLOOD = "--flood" in sys.argv[2:]
FD = sys.stdin.fileno()
OUT = threading.Lock()


def write(text):
    data = text.encode()
    with OUT:
        while data:
            n = os.write(1, data)
            data = data[n:]


def log(line):
    with open(LOG, "a") as f:
        f.write(line + "\n")


def size():
    s = os.get_terminal_size(FD)
    return s.columns, s.lines


def draw_size():
    cols, rows = size()
    write(f"\x1b[2;1H\x1b[Ksize {cols}x{rows}")
    log(f"size {cols}x{rows}")


def draw():
    write("\x1b[?2004h\x1b[H\x1b[2J")
    write(
        "\x1b[1;1H\x1b[31mred\x1b[0m \x1b[38;5;208mindexed\x1b[0m "
        "\x1b[38;2;10;200;30mtrue\x1b[0m \x1b[1;4mbold\x1b[0m "
        "\u65e5\u672c e\u0301!"
    )
    draw_size()
    write("\x1b[3;1Hready")


def flood():
    n = 0
    while True:
        n += 1
        write(f"\x1b[6;1Hflood {n}\x1b[K")
        if n % 50 == 0:
            time.sleep(0.001)  # continuous, but leaves the shared CPU breathing


def main():
    tty.setraw(FD)
    signal.signal(signal.SIGWINCH, lambda *_: draw_size())
    draw()
    if FLOOD:
        threading.Thread(target=flood, daemon=True).start()
    while True:
        data = os.read(FD, 65536)
        if not data:
            return
        log("in " + data.hex())
        write(f"\x1b[4;1H\x1b[Klast {data.hex()[:100]}")


if __name__ == "__main__":
    main()
