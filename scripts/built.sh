#!/usr/bin/env bash
# Runs a built entry point (dist/<path>.js), compiling first only when a compiler input is newer
# than the last build: a built checkout starts at once.
# The inputs are the TypeScript sources and the two tsconfig.json files, nothing else: data a run
# writes (bench results, .dev/, logs) never triggers a build.
# Usage: bash scripts/built.sh scripts/accounts [args…]
set -euo pipefail
cd "$(dirname "$0")/.."
entry="$1"
shift
stale() {
  [ ! -f dist/.tsbuildinfo ] || [ ! -f "dist/$entry.js" ] || [ ! -f packages/client/dist/index.js ] && return 0
  [ -n "$(find src scripts bench test packages/client/src -name '*.ts' -newer dist/.tsbuildinfo -print -quit)" ] && return 0
  [ -n "$(find tsconfig.json packages/client/tsconfig.json -newer dist/.tsbuildinfo -print -quit)" ]
}
if stale; then
  # Said on stderr before and after: a first start builds for a while, and silence looks like a hang.
  started=$SECONDS
  echo "txgate: building (the sources changed since the last build, or none yet; about 15 s the first time)…" >&2
  # The client package first: the tests and the demo import it by name.
  node node_modules/typescript/bin/tsc -p packages/client/tsconfig.json
  node node_modules/typescript/bin/tsc -p tsconfig.json
  bash scripts/prune-dist.sh
  # tsc leaves its build info untouched when no output changed (a source saved unchanged):
  # stamp the build, or that source would look newer on every start.
  touch dist/.tsbuildinfo
  echo "txgate: built in $((SECONDS - started)) s" >&2
fi
exec node "dist/$entry.js" "$@"
