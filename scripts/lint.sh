#!/usr/bin/env bash
# The linter (Biome, configured in biome.json), run by `npm test` and so in CI.
# The registry here serves Biome's linux-x64 binary package only, so that one is a
# devDependency; elsewhere install the one for your platform (npm i -D @biomejs/biome).
set -euo pipefail
cd "$(dirname "$0")/.."
bin="node_modules/@biomejs/cli-$(node -p 'process.platform + "-" + process.arch')/biome"
[ -x "$bin" ] || bin="node_modules/.bin/biome"
if [ ! -x "$bin" ]; then
  if [ "${CI:-}" = "true" ]; then echo "lint: Biome is not installed" >&2; exit 1; fi
  echo "lint: Biome for $(node -p 'process.platform + "-" + process.arch') is not installed; skipping (npm i -D @biomejs/biome)" >&2
  exit 0
fi
exec "$bin" lint --error-on-warnings "$@"
