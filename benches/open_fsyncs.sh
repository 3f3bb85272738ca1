#!/bin/bash
# usage: open_fsyncs.sh BIN : syscalls fsync/fdatasync/rename during 5 opens (tickhost warm), whole process tree
BIN=$1
RT=$(mktemp -d /tmp/tl-mem-rt.XXXX); export TICKLOOP_RUNTIME_DIR=$RT
$BIN open --shell --id warm -- sleep 100000 >/dev/null 2>&1
HP=$(head -1 $RT/tickhost.pid)
strace -f -qq -c -w -e trace=fsync,fdatasync,rename,renameat,renameat2 -p $HP -o $RT.strace &
SP=$!; sleep 1
for i in 1 2 3 4 5; do $BIN open --shell --id s$i -- sleep 100000 >/dev/null 2>&1; done
sleep 1; kill -INT $SP; wait $SP 2>/dev/null
cat $RT.strace
$BIN shutdown >/dev/null 2>&1; rm -rf $RT $RT.strace
