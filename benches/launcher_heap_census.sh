#!/bin/bash
# usage: launcher_heap_census.sh BIN OUTDIR : what an idle bash's launcher
# holds on the heap, by the allocating call site (valgrind's massif over
# `open --shell -- bash`, tickhost and the launcher traced; a detailed
# snapshot of the launcher once it is quiet, through vgdb). Prints the
# live bytes by the first four frames, largest first; the raw snapshot
# stays in OUTDIR/launcher-idle.massif. Needs valgrind (massif, vgdb).
BIN=$1; OUT=$2; mkdir -p "$OUT"
RT=$(mktemp -d /tmp/tl-ms-rt.XXXX); H=$(mktemp -d /tmp/tl-ms-home.XXXX)
export TICKLOOP_RUNTIME_DIR=$RT HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share
valgrind --tool=massif --threshold=0.005 --trace-children=yes \
  --massif-out-file="$OUT/massif.%p" --vgdb=yes "$BIN" open --shell --id idle -- bash \
  > "$OUT/open.txt" 2>&1
# Under valgrind the start is slow: time for the prompt and the quiet time.
sleep 15
LP=$("$BIN" list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d["instances"]; print(d[0]["launcher_pid"])')
sleep 5
vgdb --pid="$LP" detailed_snapshot "$OUT/launcher-idle.massif" > "$OUT/vgdb.txt" 2>&1
"$BIN" shutdown >/dev/null 2>&1
rm -rf "$RT" "$H"
python3 - "$OUT/launcher-idle.massif" <<'PY'
import collections, re, sys
lines = open(sys.argv[1]).read().splitlines()
stack, by_site, total = [], collections.Counter(), 0
for line in lines:
    m = re.match(r'^(\s*)n(\d+): (\d+) (.*)', line)
    if not m:
        continue
    depth, kids, size, desc = len(m[1]), int(m[2]), int(m[3]), m[4]
    stack = stack[:depth] + [desc]
    # Leaves only; an allocation of a megabyte or more is mapped fresh and
    # mostly untouched (vte's 2 MiB buffer for synchronized updates).
    if kids == 0 and depth > 0 and size < 1 << 20:
        frames = []
        for d in stack[1:]:
            f = re.search(r'0x[0-9A-F]+: (.*?) \((.*?)\)$', d)
            if f:
                frames.append(f[1][:70] + ' @' + f[2].split('/')[-1])
        by_site[' <- '.join(frames[:4]) or stack[1][:100]] += size
        total += size
print(f"{total} bytes live below 1 MiB")
for site, size in by_site.most_common(40):
    print(f"{size:7} {site}")
PY
