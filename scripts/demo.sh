#!/usr/bin/env bash
# Tickloop's demo: build, open the counter Tick headless, and drive it as an
# agent would (describe, read, call, watch, screen), then close it.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet
tickloop=target/release/tickloop
export TICKLOOP_RUNTIME_DIR="${TICKLOOP_RUNTIME_DIR:-$(mktemp -d /tmp/tickloop-demo.XXXXXX)}"
trap '"$tickloop" shutdown >/dev/null 2>&1 || true' EXIT

step() { printf '\n\033[1m$ tickloop %s\033[0m\n' "$*"; "$tickloop" "$@"; }

step open --package counter
step describe hosted:counter
step read hosted:counter
revision=$("$tickloop" describe hosted:counter | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')
step call hosted:counter increment '{"amount":2}' --revision "$revision"
echo "(exit $?: 0 = result)"
set +e
step call hosted:counter increment '{"amount":"two"}' --revision "$revision"
echo "(exit $?: 3 = not executed, the host refused the arguments before sending)"
step call hosted:counter increment '{"amount":1}' --revision stale
echo "(exit $?: 3 = not executed, the catalog revision is not current)"
set -e
step input hosted:counter +
step read hosted:counter
step screen hosted:counter
step list
step close hosted:counter
