#!/bin/bash
# usage: flood_resident.sh BIN
# One bash session floods 64 MiB of base64 headless while `screen` is polled
# every 20 ms (as termbench's headless catch-up does); 0.5 s after the last
# line, which sections of the executable tickhost, the launcher and the
# spare keep mapped (benches/resident_sections.py), and each one's memory.
B=$1
RT=$(mktemp -d /tmp/tl-flood-rt.XXXX); H=$(mktemp -d /tmp/tl-flood-home.XXXX)
export TICKLOOP_RUNTIME_DIR=$RT HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share
FLOOD=$RT/flood.txt
head -c 50331648 /dev/urandom | base64 -w 100 > $FLOOD
$B open --shell --id f -- bash >/dev/null || { echo open failed; exit 1; }
sleep 3
$B input f $'cat '"$FLOOD"$'; echo DONE-MARK\r' >/dev/null
for i in $(seq 1 3000); do $B screen f 2>/dev/null | grep -q "^DONE-MARK" && break; sleep 0.02; done
sleep 0.5
HP=$(head -1 $RT/tickhost.pid)
LP=$(pgrep -f -- "$B __launcher" | tr '\n' ' ')
python3 "$(dirname "$0")/resident_sections.py" $HP $LP
for p in $HP $LP; do echo "$p $(tr '\0' ' ' < /proc/$p/cmdline | cut -c1-60): $(grep -E '^(Rss|Pss|Private_Dirty)' /proc/$p/smaps_rollup | tr -s ' \n' ' ')"; done
$B shutdown >/dev/null 2>&1
rm -rf $RT $H
