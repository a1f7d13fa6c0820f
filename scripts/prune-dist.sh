#!/usr/bin/env bash
# Compiled files whose source is gone (a file moved or removed) would still be loaded, and a
# stale test file would still run under `npm test`: remove them after each build.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d dist ] || exit 0
find dist -name '*.js' -print0 | while IFS= read -r -d '' f; do
  src=${f#dist/}
  [ -f "${src%.js}.ts" ] || rm -f "$f" "${f%.js}.d.ts" "$f.map"
done
# Folders a move left empty (a test tier renamed, a module moved) go too.
find dist -mindepth 1 -type d -empty -delete
