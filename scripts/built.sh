#!/usr/bin/env bash
# Runs a built entry point (dist/<path>.js), compiling first only when a TypeScript source is
# newer than the last build: a built checkout starts at once.
# Usage: bash scripts/built.sh scripts/accounts [args…]
set -euo pipefail
cd "$(dirname "$0")/.."
entry="$1"
shift
if [ ! -f dist/.tsbuildinfo ] || [ ! -f "dist/$entry.js" ] || [ ! -f packages/client/dist/index.js ] || [ -n "$(find src scripts bench test packages/client/src tsconfig.json -newer dist/.tsbuildinfo \( -name '*.ts' -o -name '*.json' \) -print -quit)" ]; then
  # The client package first: the tests and the demo import it by name.
  node node_modules/typescript/bin/tsc -p packages/client/tsconfig.json
  node node_modules/typescript/bin/tsc -p tsconfig.json
  bash scripts/prune-dist.sh
fi
exec node "dist/$entry.js" "$@"
