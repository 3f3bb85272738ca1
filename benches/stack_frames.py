#!/usr/bin/env python3
"""The largest stack frames of an executable's functions (issue 51): a frame
that stays on a thread's stack for the process's life (the launcher's
`serve`, the future that runs an instance) keeps each of its pages dirty in
every launcher; one entered once keeps them until the stack is given back
(`tickloop_client::idle_stack`).

A function's frame is read from its prologue in `objdump -d`: the sum of its
first `sub $N,%rsp` (a frame over a page is probed a page at a time, one
`sub $0x1000` each). x86-64 only.

Run: python3 benches/stack_frames.py BIN [--match REGEX] [--min BYTES]
Standard library only; needs objdump and c++filt (binutils).
"""
import argparse
import re
import subprocess

PROLOGUE_SUBS = 8


def frames(binary):
    """{mangled name: bytes its prologue subtracts from %rsp}."""
    out = {}
    name, total, subs = None, 0, 0
    dump = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary],
                          capture_output=True, text=True, check=True).stdout
    for line in dump.splitlines():
        start = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if start:
            if name is not None:
                out[name] = total
            name, total, subs = start.group(1), 0, 0
            continue
        if subs < PROLOGUE_SUBS:
            sub = re.search(r"sub\s+\$0x([0-9a-f]+),%rsp", line)
            if sub:
                total += int(sub.group(1), 16)
                subs += 1
    if name is not None:
        out[name] = total
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--match", default=r"^(launcher|tickhost|tickloop)",
                    help="regex on the demangled name (default: Tickloop's own crates)")
    ap.add_argument("--min", type=int, default=2048, help="smallest frame shown, bytes")
    a = ap.parse_args()
    found = {k: v for k, v in frames(a.binary).items() if v >= a.min}
    names = list(found)
    demangled = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                               text=True, check=True).stdout.splitlines()
    rows = sorted(((found[m], re.sub(r"::h[0-9a-f]{16}$", "", d)) for m, d in zip(names, demangled)),
                  reverse=True)
    for size, name in rows:
        if re.search(a.match, name):
            print(f"{size:>7}  {name}")


main()
