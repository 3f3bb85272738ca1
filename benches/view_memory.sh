#!/usr/bin/env bash
# A view's memory over time while its Tick prints without pause: the
# resident set of a `tickloop attach` client (in tmux, 120x40) of a shell
# looping `echo`, sampled every 5 s for 30 s, next to a tmux server running
# the same loop in a session of the same size with a client attached.
# A view holds one screen; what it holds must not grow with what it drew.
#
#   bash benches/view_memory.sh target/release/tickloop
set -euo pipefail
tickloop=$(realpath "$1")
runtime=$(mktemp -d /tmp/tlvm.XXXX)
export TICKLOOP_RUNTIME_DIR=$runtime
sock=tlvm-$$
loop='i=0; while :; do i=$((i+1)); echo "line $i the quick brown fox jumps over the lazy dog $i $i $i"; done'
client=
cleanup() {
  [ -n "$client" ] && kill "$client" 2>/dev/null || true
  tmux -L "$sock" kill-server 2>/dev/null || true
  "$tickloop" shutdown >/dev/null 2>&1 || true
  rm -rf "$runtime"
}
trap cleanup EXIT
rss() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

"$tickloop" open --shell --id busy -- sh -c "$loop" >/dev/null
tmux -L "$sock" -f /dev/null new-session -d -s attach -x 120 -y 40 \
  "exec env TICKLOOP_RUNTIME_DIR=$runtime $tickloop attach shell:busy"
tmux -L "$sock" -f /dev/null new-session -d -s plain -x 120 -y 40 "sh -c '$loop'"
# A tmux client on the plain session, so that tmux draws it as attach is drawn.
script -qfc "tmux -L $sock attach -t plain" /dev/null >/dev/null 2>&1 &
client=$!
sleep 2
attach=$(for p in $(pgrep -f "attach shell:busy"); do
  [ "$(readlink "/proc/$p/exe")" = "$tickloop" ] && echo "$p"; done | head -1)
server=$(tmux -L "$sock" display-message -p '#{pid}')
echo "view memory under a busy Tick, $(date -u '+%Y-%m-%d %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
printf '%6s %22s %20s\n' seconds "tickloop attach, KiB" "tmux server, KiB"
for s in 0 5 10 15 20 25 30; do
  printf '%6s %22s %20s\n' "$s" "$(rss "$attach")" "$(rss "$server")"
  [ "$s" = 30 ] || sleep 5
done
