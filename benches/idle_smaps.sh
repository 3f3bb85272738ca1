#!/bin/bash
# usage: idle_smaps.sh BIN : one idle `open --shell -- bash`, smaps by mapping of launcher and tickhost
BIN=$1
RT=$(mktemp -d /tmp/tl-mem-rt.XXXX); H=$(mktemp -d /tmp/tl-mem-home.XXXX)
export TICKLOOP_RUNTIME_DIR=$RT HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share
$BIN open --shell --id idle -- bash >/dev/null 2>&1 || { echo open failed; exit 1; }
sleep 5
LP=$($BIN list --json | python3 -c 'import json,sys; d=json.load(sys.stdin); d=d if isinstance(d,list) else d["instances"]; print(d[0]["launcher_pid"])')
HP=$(head -1 $RT/tickhost.pid)
# `list` woke both processes: a second for their quiet time (250 ms) to
# give back what it used.
sleep 1
echo "== launcher $LP"; python3 "$(dirname "$0")/smaps_by_mapping.py" $LP; grep -E "^(Rss|Pss|Private_Dirty|Private_Clean)" /proc/$LP/smaps_rollup | tr '\n' ' '; echo
echo "== tickhost $HP"; python3 "$(dirname "$0")/smaps_by_mapping.py" $HP; grep -E "^(Rss|Pss|Private_Dirty|Private_Clean)" /proc/$HP/smaps_rollup | tr '\n' ' '; echo
$BIN shutdown >/dev/null 2>&1
rm -rf $RT $H
