#!/usr/bin/env python3
"""usage: resident_sections.py PID...

Which sections of its executable each process has in its page tables
(/proc/PID/pagemap, the present bit; the first process's executable), in
KiB, and their union: the pages the processes' PSS is shared out of. A page
that spans two sections counts under the first."""
import os, sys, struct, subprocess, collections
def sections(exe):
    out = subprocess.run(["readelf", "-SW", exe], capture_output=True, text=True).stdout
    secs = []
    for line in out.splitlines():
        line = line.replace("[ ", "[")
        parts = line.split()
        if len(parts) > 6 and parts[0].startswith("[") and parts[0] != "[Nr]":
            name, addr, size = parts[1], int(parts[3], 16), int(parts[5], 16)
            if addr: secs.append((addr, addr + size, name))
    return sorted(secs)
def present_pages(pid, exe):
    pages = set()
    with open(f"/proc/{pid}/maps") as m, open(f"/proc/{pid}/pagemap", "rb") as pm:
        for line in m:
            f = line.split()
            if len(f) >= 6 and os.path.realpath(f[5]) == exe:
                lo, hi = (int(x, 16) for x in f[0].split("-"))
                pm.seek(lo // 4096 * 8)
                data = pm.read((hi - lo) // 4096 * 8)
                for i in range(len(data) // 8):
                    (e,) = struct.unpack_from("<Q", data, i * 8)
                    if e >> 63 & 1: pages.add(lo // 4096 + i)
    return pages
pids = [int(p) for p in sys.argv[1:]]
exe = os.path.realpath(f"/proc/{pids[0]}/exe")
secs = sections(exe)
def by_section(pages):
    c = collections.Counter()
    for p in pages:
        a = p * 4096
        name = next((n for lo, hi, n in secs if lo <= a + 4095 and a < hi), "?")
        # a page can span sections; count it once under the first overlapping
        c[name] += 4
    return c
allp = set(); rows = {}
for pid in pids:
    pg = present_pages(pid, exe); allp |= pg; rows[pid] = by_section(pg)
u = by_section(allp)
names = sorted(u, key=lambda n: -u[n])
print(f"{'section':24}" + "".join(f"{pid:>10}" for pid in pids) + f"{'union':>10}")
for n in names:
    print(f"{n:24}" + "".join(f"{rows[p][n]:>10}" for p in pids) + f"{u[n]:>10}")
print(f"{'total':24}" + "".join(f"{sum(rows[p].values()):>10}" for p in pids) + f"{sum(u.values()):>10}")
