#!/usr/bin/env bash
# Runs the built tests (dist/test) with node:test, one file at a time, with TXGATE_CHECK_REASONS=1
# (a stage answering with a reason it does not declare fails the request). Build first
# (`npm run build`); `npm test` and `npm run test:<tier>` do.
#   bash scripts/test.sh                      every tier
#   bash scripts/test.sh e2e chain            the tiers named (unit, property, e2e, chain, store)
#   bash scripts/test.sh test/unit/fast-log-line.test.ts   one file (or several)
# Every test file lives in a tier folder (docs/architecture.md "Tests"): one anywhere else
# would run in no tier, so it fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
TIERS=(unit property e2e chain store)
stray=$(find test -name '*.test.ts' | grep -vE "^test/($(IFS='|'; echo "${TIERS[*]}"))/" || true)
if [ -n "$stray" ]; then
  echo "test: in no tier folder (test/unit, property, e2e, chain or store):" $stray >&2
  exit 1
fi
[ $# -gt 0 ] || set -- "${TIERS[@]}"
files=()
for arg in "$@"; do
  if [[ " ${TIERS[*]} " == *" $arg "* ]]; then
    mapfile -t found < <(find "dist/test/$arg" -name '*.test.js' 2>/dev/null | sort)
    [ ${#found[@]} -gt 0 ] || { echo "test: no built tests in dist/test/$arg (run npm run build)" >&2; exit 1; }
    files+=("${found[@]}")
  else
    f=$arg
    [[ $f == dist/* ]] || f="dist/${f%.ts}.js"
    [ -f "$f" ] || { echo "test: $arg is neither a tier (${TIERS[*]}) nor a built test file ($f)" >&2; exit 1; }
    files+=("$f")
  fi
done
TXGATE_CHECK_REASONS=1 exec node --test --test-concurrency=1 "${files[@]}"
