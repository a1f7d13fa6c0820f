#!/usr/bin/env bash
# Builds the profiler's stage probes (native/stage-probe.c) into build/stage-probe.node, or OUT:
# a C compiler and Node's headers, nothing else. Used by bench:profile and its tests (built when
# missing or older than its source); never by the service unless TXGATE_STAGE_PROBES names it.
# Usage: bash scripts/build-probe.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build/stage-probe.node}
inc=$(node -p "require('node:path').join(process.execPath, '..', '..', 'include', 'node')")
[ -f "$inc/node_api.h" ] || { echo "build-probe: Node's headers are not in $inc" >&2; exit 1; }
command -v cc >/dev/null || { echo "build-probe: no C compiler (Debian: apt-get install -y gcc)" >&2; exit 1; }
mkdir -p "$(dirname "$out")"
cc -O2 -Wall -Wextra -shared -fPIC -I"$inc" native/stage-probe.c -o "$out.tmp"
mv "$out.tmp" "$out"
node -e "const a = require(process.argv[1]); if (a.slots.length !== a.count || typeof a.calib !== 'function') process.exit(1)" "$(realpath "$out")"
