#!/usr/bin/env bash
# The linter and formatter check (Biome, configured in biome.json), run by `npm test` and so in
# CI. The registry here serves Biome's linux-x64 binary package only, so that one is a
# devDependency; elsewhere install the one for your platform (npm i -D @biomejs/biome).
# `bash scripts/lint.sh --write` formats the tree in place.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="node_modules/@biomejs/cli-$(node -p 'process.platform + "-" + process.arch')/biome"
[ -x "$bin" ] || bin="node_modules/.bin/biome"
if [ ! -x "$bin" ]; then
  echo "lint: Biome for $(node -p 'process.platform + "-" + process.arch') is not installed (npm i -D @biomejs/biome): refusing to skip the check" >&2
  exit 1
fi
exec "$bin" check --error-on-warnings "$@"
