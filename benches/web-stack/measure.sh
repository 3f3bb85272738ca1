#!/usr/bin/env bash
# Builds the smallest server of each stack with the workspace's release
# profile and prints the size of each executable, stripped and not, and
# what each adds to the baseline (tokio alone).
set -euo pipefail
cd "$(dirname "$0")"
for f in baseline hyper axum "hyper,tls" "axum,tls"; do
  cargo build --release --quiet --features "$f"
  cp target/release/web-stack-size "target/size-${f/,/-}"
  strip -o "target/size-${f/,/-}.stripped" "target/size-${f/,/-}"
done
base=$(stat -c %s target/size-baseline.stripped)
printf '%-12s %12s %12s %12s\n' stack bytes stripped added
for f in baseline hyper axum hyper-tls axum-tls; do
  s=$(stat -c %s "target/size-$f.stripped")
  printf '%-12s %12s %12s %12s\n' "$f" "$(stat -c %s "target/size-$f")" "$s" "$((s - base))"
done
