#!/bin/bash
# usage: launcher_malloc_stats.sh BIN : glibc's malloc_stats() of an idle bash's launcher (called in it by gdb), from its log
BIN=$1
RT=$(mktemp -d /tmp/tl-mem-rt.XXXX); H=$(mktemp -d /tmp/tl-mem-home.XXXX)
export TICKLOOP_RUNTIME_DIR=$RT HOME=$H XDG_CONFIG_HOME=$H/.config XDG_DATA_HOME=$H/.local/share
$BIN open --shell --id idle -- bash >/dev/null 2>&1 || { echo open failed; exit 1; }
sleep 2
LP=$(pgrep -f "$(basename $BIN) __launcher" | head -1)
gdb -p $LP -batch -ex 'call (void)malloc_stats()' >/dev/null 2>&1
sleep 0.5
find $RT -name '*.log' | xargs tail -n 20 | grep -v "^$" | tail -14
$BIN shutdown >/dev/null 2>&1; pkill -f "$(basename $BIN) __launcher"; rm -rf $RT $H
