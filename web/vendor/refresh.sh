#!/usr/bin/env bash
# Refreshes the vendored xterm.js release files from the npm registry at the
# versions below (web/vendor/xterm/README.md says what is kept and why).
# Change a version here, run this, read the diff, and update the README's
# versions and digests (this prints them).
set -euo pipefail
XTERM=6.0.0
FIT=0.11.0
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
npm pack --silent "@xterm/xterm@$XTERM" "@xterm/addon-fit@$FIT" >/dev/null
sha256sum ./*.tgz
mkdir xterm fit
tar xzf "xterm-xterm-$XTERM.tgz" -C xterm
tar xzf "xterm-addon-fit-$FIT.tgz" -C fit
cp xterm/package/lib/xterm.js xterm/package/css/xterm.css "$here/xterm/"
cp xterm/package/LICENSE "$here/xterm/LICENSE"
cp fit/package/lib/addon-fit.js "$here/xterm/"
cp fit/package/LICENSE "$here/xterm/LICENSE.addon-fit"
