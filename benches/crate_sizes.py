#!/usr/bin/env python3
"""Text+data symbol bytes by crate (first path segment of the demangled name; generic
impls `<a::B as c::D>` counted under the type's crate)."""
import subprocess, sys, re, collections
out = subprocess.run(["nm", "-S", "--size-sort", "-C", sys.argv[1]], capture_output=True, text=True).stdout
by = collections.Counter(); total = 0
for line in out.splitlines():
    parts = line.split(None, 3)
    if len(parts) < 4: continue
    size = int(parts[1], 16); kind = parts[2].lower(); name = parts[3]
    if kind not in "tdrb": continue
    if kind == "b": continue
    n = name.lstrip("<&*( ").replace("dyn ", "").replace("mut ", "")
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)::", n)
    crate = m.group(1) if m else ("(C/asm) " if not "::" in n else "(other)")
    by[crate] += size; total += size
for c, s in by.most_common(25):
    print(f"{s/1024:10.0f} KiB  {c}")
print(f"{total/1024:10.0f} KiB  total in symbols")
