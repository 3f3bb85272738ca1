#!/bin/bash
# usage: host_per_session.sh BIN [N] : tickhost's private dirty memory with 1 and with N idle sessions (sleep)
BIN=$1; N=${2:-50}
RT=$(mktemp -d /tmp/tl-mem-rt.XXXX); H=$(mktemp -d /tmp/tl-mem-home.XXXX)
export TICKLOOP_RUNTIME_DIR=$RT HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share
$BIN open --shell --id s0 -- sleep 100000 >/dev/null 2>&1
HP=$(head -1 $RT/tickhost.pid); sleep 2
a=$(grep -E '^Private_Dirty' /proc/$HP/smaps_rollup | awk '{print $2}')
for i in $(seq 1 $((N-1))); do $BIN open --shell --id s$i -- sleep 100000 >/dev/null 2>&1; done
sleep 3
b=$(grep -E '^Private_Dirty' /proc/$HP/smaps_rollup | awk '{print $2}')
echo "tickhost private dirty: 1 session $a KiB, $N sessions $b KiB: $(( (b-a)*1024/(N-1) )) bytes per further session"
$BIN shutdown >/dev/null 2>&1; pkill -f "$(basename $BIN) __launcher"; rm -rf $RT $H
