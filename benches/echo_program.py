"""The program the echo benchmarks run in an instance (`echo_hops.py`,
`echo_cpu.py`, `view_instructions.py`): in raw mode, it prints `READY`,
then echoes every byte it reads as `<b>\\r\\n`, as termbench's echo does.
Run it as `python3 -c ECHO`."""

ECHO = r"""
import os, sys, termios, tty
fd = sys.stdin.fileno()
tty.setraw(fd)
os.write(1, b"READY\r\n")
while True:
    b = os.read(fd, 1)
    if not b:
        break
    os.write(1, b"<" + b + b">\r\n")
"""

if __name__ == "__main__":
    # Run as a program (tests/echo_frames.rs): the echo itself.
    exec(ECHO)
